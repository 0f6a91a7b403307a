//! User profiles: personal details, portal preferences and emergency contacts.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::record::ServerFields;
use super::serde_util::null_as_default;
use super::validation::{ValidationErrors, Validator};

pub const SPEED_UNITS: [&str; 3] = ["kmh", "mph", "knots"];
pub const DISTANCE_UNITS: [&str; 2] = ["m", "ft"];
pub const POSITION_FORMATS: [&str; 3] = ["Decimal", "DegreeMinute", "Utm"];

/// One per user. `Username` and `Timestamp` are read-only.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct UserProfile {
    #[schema(read_only)]
    pub username: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub date_of_birth: Option<Timestamp>,
    pub citizenship: Option<String>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub country: Option<String>,
    pub postal_code: Option<String>,
    /// Starts with + and a country code.
    #[schema(example = "+44 20 7946 0958")]
    pub daytime_phone: Option<String>,
    pub evening_phone: Option<String>,
    pub cell_phone: Option<String>,
    /// IANA or Windows time zone id.
    pub time_zone_id: Option<String>,
    pub culture_name: Option<String>,
    pub ui_language: Option<String>,
    /// kmh, mph or knots.
    #[schema(pattern = "^(kmh|mph|knots)$")]
    pub speed_units: Option<String>,
    /// m or ft.
    #[schema(pattern = "^(m|ft)$")]
    pub distance_units: Option<String>,
    /// Decimal, DegreeMinute or Utm.
    #[schema(pattern = "^(Decimal|DegreeMinute|Utm)$")]
    pub position_format: Option<String>,
    pub emergency_contact_name: Option<String>,
    pub emergency_contact_address: Option<String>,
    pub emergency_contact_telephone_number: Option<String>,
    pub emergency_contact_name2: Option<String>,
    pub emergency_contact_address2: Option<String>,
    pub emergency_contact_telephone_number2: Option<String>,
    pub emergency_information: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    /// The profile's version: the `ETag` header only (the contract shows no such field).
    #[serde(skip)]
    pub etag: Option<String>,
}

impl UserProfile {
    /// Checks every rule; returns the profile as stored.
    pub fn validated(self) -> Result<UserProfile, ValidationErrors> {
        let mut v = Validator::new();
        for (field, value) in [
            ("DaytimePhone", &self.daytime_phone),
            ("EveningPhone", &self.evening_phone),
            ("CellPhone", &self.cell_phone),
            (
                "EmergencyContactTelephoneNumber",
                &self.emergency_contact_telephone_number,
            ),
            (
                "EmergencyContactTelephoneNumber2",
                &self.emergency_contact_telephone_number2,
            ),
        ] {
            v.phone(field, value.as_deref());
        }
        v.one_of("SpeedUnits", self.speed_units.as_deref(), &SPEED_UNITS);
        v.one_of(
            "DistanceUnits",
            self.distance_units.as_deref(),
            &DISTANCE_UNITS,
        );
        v.one_of(
            "PositionFormat",
            self.position_format.as_deref(),
            &POSITION_FORMATS,
        );
        v.time_zone("TimeZoneId", self.time_zone_id.as_deref());
        v.culture("CultureName", self.culture_name.as_deref());
        v.culture("UiLanguage", self.ui_language.as_deref());
        if let Some(dob) = self.date_of_birth
            && dob > Timestamp::now()
        {
            v.add("DateOfBirth", "must not be in the future");
        }
        v.finish()?;
        Ok(self.without_read_only())
    }
}

impl ServerFields for UserProfile {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["Username", "Timestamp"];

    fn without_read_only(mut self) -> Self {
        self.username = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerations_and_phones() {
        let ok = UserProfile {
            cell_phone: Some("+447700900123".into()),
            speed_units: Some("mph".into()),
            distance_units: Some("ft".into()),
            position_format: Some("Utm".into()),
            ..Default::default()
        };
        assert!(ok.validated().is_ok());
        let bad = UserProfile {
            cell_phone: Some("07700900123".into()),
            speed_units: Some("furlongs".into()),
            distance_units: Some("km".into()),
            position_format: Some("DMS".into()),
            ..Default::default()
        };
        assert_eq!(bad.validated().unwrap_err().0.len(), 4);
    }
}
