//! Travelers of an itinerary and the risk regions attached to it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ids::GeometryId;
use crate::domain::profile::UserProfile;

/// A person travelling on the itinerary, as stored and read (the wire record:
/// `http::records::itinerary::TravelerRecord`). When `EmailAddress` is the username of
/// a platform user within the reader's scope, the profile fields are filled from that
/// user's profile whenever the traveler is read; they are never stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Traveler {
    /// Assigned by the store; `None` until the traveler is stored (the stored document
    /// holds null, the row's id is the truth).
    pub id: Option<i32>,
    pub email_address: String,
    pub firstname: Option<String>,
    pub lastname: Option<String>,
    pub date_of_birth: Option<Timestamp>,
    pub phone_number: Option<String>,
    pub citizenship: Option<String>,
    pub address: Option<String>,
    pub city_state_postal_code: Option<String>,
    pub country: Option<String>,
    pub phone_numbers_all: Option<String>,
    pub emergency_contact1: Option<String>,
    pub emergency_contact2: Option<String>,
    /// The itinerary's version, sent as the `ETag` header (not a field of the contract).
    #[serde(skip)]
    pub etag: Option<String>,
}

impl Traveler {
    /// The record without the fields copied from a user's profile.
    pub fn without_profile(self) -> Traveler {
        Traveler {
            citizenship: None,
            address: None,
            city_state_postal_code: None,
            country: None,
            phone_numbers_all: None,
            emergency_contact1: None,
            emergency_contact2: None,
            ..self
        }
    }

    /// Fills the read-only fields from the matching user's profile.
    pub fn with_profile(self, profile: &UserProfile) -> Traveler {
        Traveler {
            citizenship: non_blank(&profile.citizenship),
            address: non_blank(&profile.address),
            city_state_postal_code: joined(
                [&profile.city, &profile.state, &profile.postal_code],
                ", ",
            ),
            country: non_blank(&profile.country),
            phone_numbers_all: joined(
                [
                    &profile.daytime_phone,
                    &profile.evening_phone,
                    &profile.cell_phone,
                ],
                "; ",
            ),
            emergency_contact1: joined(
                [
                    &profile.emergency_contact_name,
                    &profile.emergency_contact_address,
                    &profile.emergency_contact_telephone_number,
                ],
                ", ",
            ),
            emergency_contact2: joined(
                [
                    &profile.emergency_contact_name2,
                    &profile.emergency_contact_address2,
                    &profile.emergency_contact_telephone_number2,
                ],
                ", ",
            ),
            ..self
        }
    }
}

fn non_blank(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn joined<const N: usize>(parts: [&Option<String>; N], separator: &str) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().filter_map(non_blank).collect();
    (!parts.is_empty()).then(|| parts.join(separator))
}

/// A risk region attached to an itinerary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Region {
    /// The risk region's name.
    #[schema(example = "Northern border area")]
    pub name: Option<String>,
    /// The risk region's id (case-sensitive).
    #[schema(value_type = Option<String>, example = "border-north")]
    pub geometry_id: Option<GeometryId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_fields_are_joined() {
        let profile = UserProfile {
            city: Some("London".into()),
            postal_code: Some("SW1A 1AA".into()),
            daytime_phone: Some("+442079460958".into()),
            cell_phone: Some("+447700900123".into()),
            emergency_contact_name: Some("John".into()),
            emergency_contact_telephone_number: Some("+447700900124".into()),
            ..Default::default()
        };
        let t = Traveler::default().with_profile(&profile);
        assert_eq!(
            t.city_state_postal_code.as_deref(),
            Some("London, SW1A 1AA")
        );
        assert_eq!(
            t.phone_numbers_all.as_deref(),
            Some("+442079460958; +447700900123")
        );
        assert_eq!(t.emergency_contact1.as_deref(), Some("John, +447700900124"));
        assert!(t.emergency_contact2.is_none() && t.country.is_none());
    }
}
