//! An itinerary's own fields and its travelers as clients send them. Flights, journeys
//! and hotels have theirs in `itinerary_segments.rs`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::itinerary::segments::{NAME_MAX_CHARS, text};
use crate::domain::itinerary::times::{blank_to_none, parse_utc};
use crate::domain::itinerary::{
    ApprovalState, EXTERNAL_MAX_CHARS, ItineraryFields, NOTES_MAX_CHARS, PNR_MAX_CHARS,
    SUMMARY_MAX_CHARS, Traveler, is_pnr, read_only, read_only_id,
};
use crate::domain::record::ServerFields;
use crate::domain::time::now;
use crate::domain::user::User;
use crate::domain::validation::{ValidationErrors, Validator};

/// The body of `POST` and `PUT /itineraries`: the itinerary's own fields. Everything
/// else of a read itinerary (segments, derived fields) is ignored if sent back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "ItineraryWrite", rename_all = "PascalCase")]
#[schema(as = ItineraryWrite)]
pub struct ItineraryWriteRecord {
    /// Only `Manager` and `Administrator` may change it; null keeps the current state
    /// (`NoDecision` for a new itinerary).
    #[schema(value_type = Option<ApprovalState>, example = "Approved")]
    pub approval_state: Option<ApprovalState>,
    /// Passenger name record of the reservation system: up to 20 letters, digits or
    /// hyphens, matched ignoring case.
    #[schema(example = "X7K2QP")]
    pub pnr_number: Option<String>,
    /// Free text, up to 4,000 characters.
    pub notes: Option<String>,
    /// Up to 1,000 characters (extension: the contract shows it on reads only).
    pub summary: Option<String>,
    /// An external system's id (extension), up to 200 characters.
    pub external_id: Option<String>,
    /// An external system's status (extension), up to 200 characters.
    pub external_status: Option<String>,
}

/// Every field is the client's; the server's fields of a read itinerary are not part
/// of this record.
impl ServerFields for ItineraryWriteRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[];

    fn without_read_only(self) -> Self {
        self
    }
}

impl ItineraryWriteRecord {
    /// Checks the fields; returns them as stored and the approval state asked for.
    pub fn validated(
        mut self,
    ) -> Result<(ItineraryFields, Option<ApprovalState>), ValidationErrors> {
        let mut v = Validator::new();
        if let Some(pnr) = blank_to_none(&mut self.pnr_number)
            && !is_pnr(&pnr)
        {
            v.add(
                "PnrNumber",
                format!("must be at most {PNR_MAX_CHARS} letters, digits or hyphens"),
            );
        }
        text(&mut v, "Notes", &mut self.notes, NOTES_MAX_CHARS);
        text(&mut v, "Summary", &mut self.summary, SUMMARY_MAX_CHARS);
        text(
            &mut v,
            "ExternalId",
            &mut self.external_id,
            EXTERNAL_MAX_CHARS,
        );
        text(
            &mut v,
            "ExternalStatus",
            &mut self.external_status,
            EXTERNAL_MAX_CHARS,
        );
        v.finish()?;
        Ok((
            ItineraryFields {
                pnr_number: self.pnr_number,
                notes: self.notes,
                summary: self.summary,
                external_id: self.external_id,
                external_status: self.external_status,
            },
            self.approval_state,
        ))
    }
}

/// A person travelling on the itinerary. `EmailAddress` is required; when it is the
/// username of a platform user within the caller's scope, the read-only fields are
/// filled from that user's profile whenever the traveler is read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Traveler", rename_all = "PascalCase")]
#[schema(as = Traveler)]
pub struct TravelerRecord {
    #[serde(default, deserialize_with = "read_only_id")]
    #[schema(read_only, example = 3)]
    pub id: Option<i32>,
    /// Unique within the itinerary (ignoring case).
    #[schema(required = true, min_length = 1, example = "jane@acme.example")]
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
}

impl ServerFields for TravelerRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[
        "Id",
        "Citizenship",
        "Address",
        "CityStatePostalCode",
        "Country",
        "PhoneNumbersAll",
        "EmergencyContact1",
        "EmergencyContact2",
    ];

    fn without_read_only(self) -> Self {
        TravelerRecord {
            id: None,
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
}

impl From<&Traveler> for TravelerRecord {
    fn from(t: &Traveler) -> Self {
        TravelerRecord {
            id: t.id,
            email_address: Some(t.email_address.clone()),
            firstname: t.firstname.clone(),
            lastname: t.lastname.clone(),
            date_of_birth: t.date_of_birth.map(|ts| ts.to_string()),
            phone_number: t.phone_number.clone(),
            citizenship: t.citizenship.clone(),
            address: t.address.clone(),
            city_state_postal_code: t.city_state_postal_code.clone(),
            country: t.country.clone(),
            phone_numbers_all: t.phone_numbers_all.clone(),
            emergency_contact1: t.emergency_contact1.clone(),
            emergency_contact2: t.emergency_contact2.clone(),
        }
    }
}

impl TravelerRecord {
    /// Checks the writable fields; returns the traveler as stored (read-only fields
    /// dropped) and the key it is matched and deduplicated by (`User::username_key`).
    pub fn validated(self) -> Result<(Traveler, String), ValidationErrors> {
        let mut t = self.without_read_only();
        let mut v = Validator::new();
        let email = blank_to_none(&mut t.email_address);
        match &email {
            Some(e) => v.email("EmailAddress", Some(e)),
            None => v.add("EmailAddress", "is required"),
        }
        text(&mut v, "Firstname", &mut t.firstname, NAME_MAX_CHARS);
        text(&mut v, "Lastname", &mut t.lastname, NAME_MAX_CHARS);
        let mut date_of_birth = None;
        if let Some(dob) = blank_to_none(&mut t.date_of_birth) {
            match parse_utc(&dob) {
                Ok(ts) if ts > now() => v.add("DateOfBirth", "must not be in the future"),
                Ok(ts) => date_of_birth = Some(ts),
                Err(message) => v.add("DateOfBirth", message),
            }
        }
        if let Some(phone) = blank_to_none(&mut t.phone_number) {
            v.phone("PhoneNumber", Some(&phone));
        }
        v.finish()?;
        let email_address =
            email.ok_or_else(|| ValidationErrors::single("EmailAddress", "is required"))?;
        let key = User::username_key(&email_address);
        Ok((
            Traveler {
                email_address,
                firstname: t.firstname,
                lastname: t.lastname,
                date_of_birth,
                phone_number: t.phone_number,
                ..Traveler::default()
            },
            key,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_matches_the_domain_form() {
        let traveler = Traveler {
            id: Some(4),
            email_address: "jane@acme.example".into(),
            firstname: Some("Jane".into()),
            lastname: Some("Doe".into()),
            date_of_birth: Some("1985-04-12T00:00:00Z".parse().unwrap()),
            phone_number: Some("+447700900123".into()),
            citizenship: Some("GB".into()),
            address: Some("1 High Street".into()),
            city_state_postal_code: Some("London, SW1A 1AA".into()),
            country: Some("GB".into()),
            phone_numbers_all: Some("+442079460958; +447700900123".into()),
            emergency_contact1: Some("John, +447700900124".into()),
            emergency_contact2: Some("Joan".into()),
            etag: Some("\"abc\"".into()),
        };
        let domain = serde_json::to_string(&traveler).unwrap();
        // Read-only fields sent are ignored: compare against the record's own form.
        let record = TravelerRecord::from(&traveler);
        assert_eq!(serde_json::to_string(&record).unwrap(), domain);
        let read: TravelerRecord = serde_json::from_str(&domain).unwrap();
        assert_eq!(read, record.clone().without_read_only());

        let itinerary = ItineraryWriteRecord {
            approval_state: Some(ApprovalState::Approved),
            pnr_number: Some("X7K2QP".into()),
            notes: Some("n".into()),
            summary: Some("s".into()),
            external_id: Some("e".into()),
            external_status: Some("x".into()),
        };
        let text = serde_json::to_string(&itinerary).unwrap();
        let read: ItineraryWriteRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(read, itinerary);
    }

    #[test]
    fn itinerary_fields() {
        let (fields, state) = ItineraryWriteRecord {
            pnr_number: Some(" x7k2qp ".into()),
            notes: Some("  ".into()),
            approval_state: Some(ApprovalState::Approved),
            ..Default::default()
        }
        .validated()
        .unwrap();
        assert_eq!(fields.pnr_number.as_deref(), Some("x7k2qp"));
        assert_eq!(fields.pnr_key().as_deref(), Some("X7K2QP"));
        assert!(fields.notes.is_none());
        assert_eq!(state, Some(ApprovalState::Approved));
        let err = ItineraryWriteRecord {
            pnr_number: Some("no spaces please".into()),
            notes: Some("n".repeat(4001)),
            ..Default::default()
        }
        .validated()
        .unwrap_err();
        assert_eq!(err.0.len(), 2);
    }

    #[test]
    fn email_is_required_and_read_only_fields_are_dropped() {
        let err = TravelerRecord::default().validated().unwrap_err();
        assert_eq!(err.0[0].field, "EmailAddress");
        let (t, key) = TravelerRecord {
            email_address: Some(" Jane@Example.com ".into()),
            citizenship: Some("sent by the client".into()),
            date_of_birth: Some("1985-04-12".into()),
            id: Some(4),
            ..Default::default()
        }
        .validated()
        .unwrap();
        assert_eq!(key, "jane@example.com");
        assert_eq!(t.email_address, "Jane@Example.com");
        assert_eq!(
            t.date_of_birth.map(|d| d.to_string()).as_deref(),
            Some("1985-04-12T00:00:00Z")
        );
        assert!(t.citizenship.is_none() && t.id.is_none());
        let bad = TravelerRecord {
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
}
