//! Travelers of an itinerary and the risk regions attached to it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::segments::{NAME_MAX_CHARS, text};
use super::times::{blank_to_none, parse_utc};
use super::{read_only, read_only_id};
use crate::domain::profile::UserProfile;
use crate::domain::time::now;
use crate::domain::user::User;
use crate::domain::validation::{ValidationErrors, Validator};

/// A person travelling on the itinerary. `EmailAddress` is required; when it is the
/// username of a platform user within the caller's scope, the read-only fields are
/// filled from that user's profile whenever the traveler is read.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Traveler {
    #[serde(default, deserialize_with = "read_only_id")]
    #[schema(read_only, example = 3)]
    pub id: Option<i32>,
    /// Unique within the itinerary (ignoring case).
    #[schema(required = true, example = "jane@acme.example")]
    pub email_address: Option<String>,
    #[schema(example = "Jane")]
    pub firstname: Option<String>,
    #[schema(example = "Doe")]
    pub lastname: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime, example = "1985-04-12T00:00:00Z")]
    pub date_of_birth: Option<String>,
    /// Starts with + and a country code.
    #[schema(example = "+447700900123")]
    pub phone_number: Option<String>,
    /// From the matching user's profile.
    #[serde(default, deserialize_with = "read_only")]
    #[schema(read_only)]
    pub citizenship: Option<String>,
    /// From the matching user's profile.
    #[serde(default, deserialize_with = "read_only")]
    #[schema(read_only)]
    pub address: Option<String>,
    /// City, state and postal code of the matching user's profile, comma-separated.
    #[serde(default, deserialize_with = "read_only")]
    #[schema(read_only)]
    pub city_state_postal_code: Option<String>,
    /// Residence country of the matching user's profile.
    #[serde(default, deserialize_with = "read_only")]
    #[schema(read_only)]
    pub country: Option<String>,
    /// Daytime, evening and cell phone of the matching user's profile, `; `-separated.
    #[serde(default, deserialize_with = "read_only")]
    #[schema(read_only)]
    pub phone_numbers_all: Option<String>,
    /// First emergency contact (name, address, telephone) of the matching user's profile.
    #[serde(default, deserialize_with = "read_only")]
    #[schema(read_only)]
    pub emergency_contact1: Option<String>,
    /// Second emergency contact of the matching user's profile.
    #[serde(default, deserialize_with = "read_only")]
    #[schema(read_only)]
    pub emergency_contact2: Option<String>,
    /// The itinerary's version, sent as the `ETag` header (not a field of the contract).
    #[serde(skip)]
    pub etag: Option<String>,
}

impl Traveler {
    /// Checks the writable fields; returns the record as stored (read-only fields
    /// cleared) and the key it is matched and deduplicated by (`User::username_key`).
    pub fn validated(mut self) -> Result<(Traveler, String), ValidationErrors> {
        let mut v = Validator::new();
        let email = blank_to_none(&mut self.email_address);
        match &email {
            Some(e) => v.email("EmailAddress", Some(e)),
            None => v.add("EmailAddress", "is required"),
        }
        text(&mut v, "Firstname", &mut self.firstname, NAME_MAX_CHARS);
        text(&mut v, "Lastname", &mut self.lastname, NAME_MAX_CHARS);
        if let Some(dob) = blank_to_none(&mut self.date_of_birth) {
            match parse_utc(&dob) {
                Ok(ts) if ts > now() => v.add("DateOfBirth", "must not be in the future"),
                Ok(ts) => self.date_of_birth = Some(ts.to_string()),
                Err(message) => v.add("DateOfBirth", message),
            }
        }
        if let Some(phone) = blank_to_none(&mut self.phone_number) {
            v.phone("PhoneNumber", Some(&phone));
        }
        v.finish()?;
        let key = User::username_key(email.as_deref().unwrap_or_default());
        Ok((
            Traveler {
                id: None,
                ..self.without_profile()
            },
            key,
        ))
    }

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
    #[schema(example = "border-north")]
    pub geometry_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_is_required_and_read_only_fields_are_dropped() {
        let err = Traveler::default().validated().unwrap_err();
        assert_eq!(err.0[0].field, "EmailAddress");
        let (t, key) = Traveler {
            email_address: Some(" Jane@Example.com ".into()),
            citizenship: Some("sent by the client".into()),
            id: Some(4),
            ..Default::default()
        }
        .validated()
        .unwrap();
        assert_eq!(key, "jane@example.com");
        assert_eq!(t.email_address.as_deref(), Some("Jane@Example.com"));
        assert!(t.citizenship.is_none() && t.id.is_none());
        let bad = Traveler {
            email_address: Some("nope".into()),
            phone_number: Some("0123".into()),
            date_of_birth: Some("2999-01-01".into()),
            ..Default::default()
        }
        .validated()
        .unwrap_err();
        let fields: Vec<_> = bad.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["EmailAddress", "DateOfBirth", "PhoneNumber"]);
    }

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
