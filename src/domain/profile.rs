//! User profiles: personal details, portal preferences and emergency contacts.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::closed_set::closed_set;
use super::serde_util::null_as_default;

closed_set! {
    /// How a user's portal shows speeds (`SpeedUnits`).
    pub enum SpeedUnits {
        Kmh = "kmh",
        Mph = "mph",
        Knots = "knots",
    }
}

closed_set! {
    /// How a user's portal shows distances (`DistanceUnits`).
    pub enum DistanceUnits {
        Metres = "m",
        Feet = "ft",
    }
}

closed_set! {
    /// How a user's portal shows positions (`PositionFormat`).
    pub enum PositionFormat {
        Decimal = "Decimal",
        DegreeMinute = "DegreeMinute",
        Utm = "Utm",
    }
}

/// One per user, as stored (the `profile_doc` document) and sent. `Username` and
/// `Timestamp` come from the user's columns: the document holds them as `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserProfile {
    pub username: Option<String>,
    pub date_of_birth: Option<Timestamp>,
    pub citizenship: Option<String>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub country: Option<String>,
    pub postal_code: Option<String>,
    pub daytime_phone: Option<String>,
    pub evening_phone: Option<String>,
    pub cell_phone: Option<String>,
    pub time_zone_id: Option<String>,
    pub culture_name: Option<String>,
    pub ui_language: Option<String>,
    pub speed_units: Option<SpeedUnits>,
    pub distance_units: Option<DistanceUnits>,
    pub position_format: Option<PositionFormat>,
    pub emergency_contact_name: Option<String>,
    pub emergency_contact_address: Option<String>,
    pub emergency_contact_telephone_number: Option<String>,
    pub emergency_contact_name2: Option<String>,
    pub emergency_contact_address2: Option<String>,
    pub emergency_contact_telephone_number2: Option<String>,
    pub emergency_information: Option<String>,
    pub timestamp: Option<Timestamp>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    /// The profile's version: the `ETag` header only (the contract shows no such field).
    #[serde(skip)]
    pub etag: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_read_with_their_units() {
        let doc = r#"{"Username":null,"SpeedUnits":"mph","DistanceUnits":"ft",
            "PositionFormat":"Utm","Properties":null,"Timestamp":null}"#;
        let profile: UserProfile = serde_json::from_str(doc).expect("a document");
        assert_eq!(profile.speed_units, Some(SpeedUnits::Mph));
        assert_eq!(profile.distance_units, Some(DistanceUnits::Feet));
        assert_eq!(profile.position_format, Some(PositionFormat::Utm));
    }
}
