//! The user profile record as clients send it.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::profile::{DistanceUnits, PositionFormat, SpeedUnits, UserProfile};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::null_as_default;
use crate::domain::validation::{ValidationErrors, Validator};

/// One per user. `Username` and `Timestamp` are read-only.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename = "UserProfile", rename_all = "PascalCase")]
#[schema(as = UserProfile)]
pub struct UserProfileRecord {
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

impl UserProfileRecord {
    /// Checks every rule; returns the profile as stored (without what the server owns).
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
        v.one_of("SpeedUnits", self.speed_units.as_deref(), SpeedUnits::NAMES);
        v.one_of(
            "DistanceUnits",
            self.distance_units.as_deref(),
            DistanceUnits::NAMES,
        );
        v.one_of(
            "PositionFormat",
            self.position_format.as_deref(),
            PositionFormat::NAMES,
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
        Ok(self.without_read_only().into_profile())
    }

    /// The record as stored, its closed sets parsed (`validated` checked them).
    fn into_profile(self) -> UserProfile {
        UserProfile {
            username: None,
            date_of_birth: self.date_of_birth,
            citizenship: self.citizenship,
            address: self.address,
            city: self.city,
            state: self.state,
            country: self.country,
            postal_code: self.postal_code,
            daytime_phone: self.daytime_phone,
            evening_phone: self.evening_phone,
            cell_phone: self.cell_phone,
            time_zone_id: self.time_zone_id,
            culture_name: self.culture_name,
            ui_language: self.ui_language,
            speed_units: self.speed_units.as_deref().and_then(|u| u.parse().ok()),
            distance_units: self.distance_units.as_deref().and_then(|u| u.parse().ok()),
            position_format: self.position_format.as_deref().and_then(|f| f.parse().ok()),
            emergency_contact_name: self.emergency_contact_name,
            emergency_contact_address: self.emergency_contact_address,
            emergency_contact_telephone_number: self.emergency_contact_telephone_number,
            emergency_contact_name2: self.emergency_contact_name2,
            emergency_contact_address2: self.emergency_contact_address2,
            emergency_contact_telephone_number2: self.emergency_contact_telephone_number2,
            emergency_information: self.emergency_information,
            timestamp: None,
            properties: self.properties,
            etag: None,
        }
    }
}

impl ServerFields for UserProfileRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["Username", "Timestamp"];

    fn without_read_only(mut self) -> Self {
        self.username = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

impl From<&UserProfile> for UserProfileRecord {
    fn from(p: &UserProfile) -> Self {
        UserProfileRecord {
            username: p.username.clone(),
            date_of_birth: p.date_of_birth,
            citizenship: p.citizenship.clone(),
            address: p.address.clone(),
            city: p.city.clone(),
            state: p.state.clone(),
            country: p.country.clone(),
            postal_code: p.postal_code.clone(),
            daytime_phone: p.daytime_phone.clone(),
            evening_phone: p.evening_phone.clone(),
            cell_phone: p.cell_phone.clone(),
            time_zone_id: p.time_zone_id.clone(),
            culture_name: p.culture_name.clone(),
            ui_language: p.ui_language.clone(),
            speed_units: p.speed_units.map(|u| u.to_string()),
            distance_units: p.distance_units.map(|u| u.to_string()),
            position_format: p.position_format.map(|f| f.to_string()),
            emergency_contact_name: p.emergency_contact_name.clone(),
            emergency_contact_address: p.emergency_contact_address.clone(),
            emergency_contact_telephone_number: p.emergency_contact_telephone_number.clone(),
            emergency_contact_name2: p.emergency_contact_name2.clone(),
            emergency_contact_address2: p.emergency_contact_address2.clone(),
            emergency_contact_telephone_number2: p.emergency_contact_telephone_number2.clone(),
            emergency_information: p.emergency_information.clone(),
            timestamp: p.timestamp,
            properties: p.properties.clone(),
            etag: p.etag.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerations_and_phones() {
        let ok = UserProfileRecord {
            cell_phone: Some("+447700900123".into()),
            speed_units: Some("mph".into()),
            distance_units: Some("ft".into()),
            position_format: Some("Utm".into()),
            ..Default::default()
        };
        let profile = ok.validated().unwrap();
        assert_eq!(profile.speed_units, Some(SpeedUnits::Mph));
        assert_eq!(profile.distance_units, Some(DistanceUnits::Feet));
        assert_eq!(profile.position_format, Some(PositionFormat::Utm));
        let bad = UserProfileRecord {
            cell_phone: Some("07700900123".into()),
            speed_units: Some("furlongs".into()),
            distance_units: Some("km".into()),
            position_format: Some("DMS".into()),
            ..Default::default()
        };
        assert_eq!(bad.validated().unwrap_err().0.len(), 4);
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let at: Timestamp = "2024-05-01T12:00:00Z".parse().unwrap();
        let text = |s: &str| Some(s.to_string());
        let profile = UserProfile {
            username: text("jane@example.com"),
            date_of_birth: Some(at),
            citizenship: text("GB"),
            address: text("1 High St"),
            city: text("London"),
            state: text("LDN"),
            country: text("UK"),
            postal_code: text("SW1A 1AA"),
            daytime_phone: text("+442079460958"),
            evening_phone: text("+442079460959"),
            cell_phone: text("+447700900123"),
            time_zone_id: text("Europe/London"),
            culture_name: text("en-GB"),
            ui_language: text("en"),
            speed_units: Some(SpeedUnits::Knots),
            distance_units: Some(DistanceUnits::Metres),
            position_format: Some(PositionFormat::DegreeMinute),
            emergency_contact_name: text("John"),
            emergency_contact_address: text("2 High St"),
            emergency_contact_telephone_number: text("+447700900124"),
            emergency_contact_name2: text("Ann"),
            emergency_contact_address2: text("3 High St"),
            emergency_contact_telephone_number2: text("+447700900125"),
            emergency_information: text("none"),
            timestamp: Some(at),
            properties: BTreeMap::from([("k".into(), "v".into())]),
            etag: None,
        };
        let domain = serde_json::to_string(&profile).unwrap();
        let record: UserProfileRecord = serde_json::from_str(&domain).unwrap();
        assert_eq!(serde_json::to_string(&record).unwrap(), domain);
        assert_eq!(
            serde_json::to_string(&UserProfileRecord::from(&profile)).unwrap(),
            domain
        );
    }
}
