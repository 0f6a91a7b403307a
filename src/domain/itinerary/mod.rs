//! Itineraries: travel plans with travelers, flights, journeys, hotel stays and attached
//! risk regions (docs/api.md, "Itineraries").
//!
//! - `times`: the local/UTC pair rule and its time-zone arithmetic;
//! - `segments`: flights, journeys and hotels (checked by their wire records,
//!   `http::records::itinerary_segments`);
//! - `traveler`: travelers (enriched from matching users' profiles) and regions;
//! - `filter`: the list query parameters;
//! - this file: the itinerary itself, its approval state and derived fields.

pub mod country;
pub mod filter;
pub mod segments;
pub mod times;
pub mod traveler;

use std::fmt;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use utoipa::ToSchema;

use super::ids::TenantCode;
use super::time::resolve_time_zone;
use times::format_local;

pub use segments::{
    Flight, Hotel, Journey, JourneyType, RouteEnd, Segment, SegmentKind, SegmentSpan, SegmentTime,
};
pub use traveler::{Region, Traveler};

pub const PNR_MAX_CHARS: usize = 20;
pub const NOTES_MAX_CHARS: usize = 4000;
pub const SUMMARY_MAX_CHARS: usize = 1000;
pub const EXTERNAL_MAX_CHARS: usize = 200;
/// Most flights, journeys and hotels (together) one itinerary holds.
pub const MAX_SEGMENTS: i64 = 500;
/// Most travelers one itinerary lists.
pub const MAX_TRAVELERS: i64 = 100;
/// Most risk regions attached to one itinerary.
pub const MAX_REGIONS: i64 = 100;

/// The approval decision on an itinerary: by name or by number (0, 1, 2) on input,
/// by name on output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApprovalState {
    #[default]
    NoDecision,
    Approved,
    Declined,
}

/// Documented as it is read: a name, or its numeric code (answers always carry the name).
impl utoipa::PartialSchema for ApprovalState {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, SchemaType, Type};
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(SchemaType::Type(Type::String))
                    .enum_values(Some(["NoDecision", "Approved", "Declined"])),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(SchemaType::Type(Type::Integer))
                    .minimum(Some(0))
                    .maximum(Some(2)),
            )
            .description(Some(
                "NoDecision (0), Approved (1) or Declined (2): by name or number on input, by name on output",
            ))
            .into()
    }
}

impl ToSchema for ApprovalState {}

impl ApprovalState {
    pub const ALL: [ApprovalState; 3] = [
        ApprovalState::NoDecision,
        ApprovalState::Approved,
        ApprovalState::Declined,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::NoDecision => "NoDecision",
            ApprovalState::Approved => "Approved",
            ApprovalState::Declined => "Declined",
        }
    }

    pub fn code(self) -> i64 {
        match self {
            ApprovalState::NoDecision => 0,
            ApprovalState::Approved => 1,
            ApprovalState::Declined => 2,
        }
    }

    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.code() == code)
    }

    /// A name (any case) or a number as text.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if let Ok(code) = text.parse::<i64>() {
            return Self::from_code(code);
        }
        Self::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(text))
    }
}

impl Serialize for ApprovalState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ApprovalState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ApprovalStateVisitor)
    }
}

struct ApprovalStateVisitor;

const APPROVAL_EXPECTED: &str = "NoDecision, Approved or Declined (or 0, 1, 2)";

impl Visitor<'_> for ApprovalStateVisitor {
    type Value = ApprovalState;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(APPROVAL_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ApprovalState, E> {
        ApprovalState::parse(v).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ApprovalState, E> {
        ApprovalState::from_code(v)
            .ok_or_else(|| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ApprovalState, E> {
        i64::try_from(v)
            .ok()
            .and_then(ApprovalState::from_code)
            .ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }
}

/// What the store keeps in an itinerary's document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ItineraryFields {
    pub pnr_number: Option<String>,
    pub notes: Option<String>,
    pub summary: Option<String>,
    pub external_id: Option<String>,
    pub external_status: Option<String>,
}

impl ItineraryFields {
    /// The key `pnrNumber` filters by: upper case.
    pub fn pnr_key(&self) -> Option<String> {
        self.pnr_number.as_deref().map(pnr_key)
    }
}

/// How a PNR is compared: trimmed, upper case.
pub fn pnr_key(pnr: &str) -> String {
    pnr.trim().to_ascii_uppercase()
}

/// Whether a text is a PNR: up to `PNR_MAX_CHARS` letters, digits or hyphens.
pub fn is_pnr(pnr: &str) -> bool {
    pnr.chars().count() <= PNR_MAX_CHARS
        && pnr.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// An itinerary as read. `Start`/`End` span its segments; `OverallRisk` is the highest
/// `RiskLevel` among attached regions and regions containing any segment position.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Itinerary {
    /// Assigned by the server (int32).
    #[schema(example = 12)]
    pub id: i32,
    /// The tenant the itinerary belongs to (extension: lists with `subtenants=true`
    /// mix tenants, and an itinerary is addressed under its own tenant).
    #[schema(value_type = String, example = "1001")]
    pub tenant_code: TenantCode,
    /// Earliest departure or check-in (UTC); null without segments.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub start: Option<Timestamp>,
    /// Latest arrival or check-out (UTC); null without segments.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub end: Option<Timestamp>,
    /// `Start` in the caller's time zone (`UserTimeZoneId`), without offset.
    #[schema(value_type = Option<String>, example = "2026-07-01T09:15:00")]
    pub start_user_time_zone: Option<String>,
    /// `End` in the caller's time zone, without offset.
    #[schema(value_type = Option<String>, example = "2026-07-05T12:00:00")]
    pub end_user_time_zone: Option<String>,
    /// The caller's profile `TimeZoneId`; `UTC` when the profile names none.
    #[schema(example = "Europe/London")]
    pub user_time_zone_id: Option<String>,
    pub summary: Option<String>,
    pub approval_state: ApprovalState,
    /// 0 (no risk region) to 5.
    #[schema(example = 3)]
    pub overall_risk: i32,
    pub external_id: Option<String>,
    pub external_status: Option<String>,
    pub pnr_number: Option<String>,
    pub notes: Option<String>,
    #[schema(schema_with = traveler_list)]
    pub travelers: Vec<Traveler>,
    #[schema(schema_with = hotel_list)]
    pub hotels: Vec<Hotel>,
    #[schema(schema_with = flight_list)]
    pub flights: Vec<Flight>,
    #[schema(schema_with = journey_list)]
    pub journeys: Vec<Journey>,
    pub regions: Vec<Region>,
    /// Record version: the `ETag` header (covers the sub-resources too).
    #[serde(skip)]
    pub etag: Option<String>,
}

/// An array of the schema named `name`, a wire record's (`http::records`).
fn list_of(name: &str) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(utoipa::openapi::Ref::from_schema_name(name))
        .into()
}

/// `[Traveler]` (`http::records::itinerary`).
fn traveler_list() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    list_of("Traveler")
}

/// `[Hotel]` (`http::records::itinerary_segments`, as are the next two).
fn hotel_list() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    list_of("Hotel")
}

fn flight_list() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    list_of("Flight")
}

fn journey_list() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    list_of("Journey")
}

/// The caller's time zone for `StartUserTimeZone`/`EndUserTimeZone`.
#[derive(Debug, Clone)]
pub struct UserZone {
    pub name: String,
    pub tz: TimeZone,
}

impl UserZone {
    /// From a profile's `TimeZoneId`; UTC when it is absent (or no longer resolves).
    pub fn from_profile(time_zone_id: Option<&str>) -> UserZone {
        time_zone_id
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .and_then(|name| {
                resolve_time_zone(name).map(|tz| UserZone {
                    name: name.to_string(),
                    tz,
                })
            })
            .unwrap_or_else(|| UserZone {
                name: "UTC".into(),
                tz: TimeZone::UTC,
            })
    }

    pub fn local(&self, t: Option<Timestamp>) -> Option<String> {
        t.map(|t| format_local(self.tz.to_datetime(t)))
    }
}

/// Read-only fields: whatever the client sends is ignored.
pub(crate) fn read_only<'de, D: Deserializer<'de>, T>(d: D) -> Result<Option<T>, D::Error> {
    IgnoredAny::deserialize(d)?;
    Ok(None)
}

/// A read-only record id: a number (or null) sent is ignored; anything else is the
/// wrong type, refused like any other.
pub(crate) fn read_only_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    Option::<i64>::deserialize(d)?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_state_by_name_or_number() {
        for (input, expected) in [
            (serde_json::json!("Approved"), ApprovalState::Approved),
            (serde_json::json!("declined"), ApprovalState::Declined),
            (serde_json::json!(0), ApprovalState::NoDecision),
            (serde_json::json!("2"), ApprovalState::Declined),
        ] {
            let got: ApprovalState = serde_json::from_value(input).unwrap();
            assert_eq!(got, expected);
        }
        for bad in [
            serde_json::json!(3),
            serde_json::json!(-1),
            serde_json::json!("Maybe"),
            serde_json::json!(1.5),
            serde_json::json!(true),
        ] {
            assert!(serde_json::from_value::<ApprovalState>(bad).is_err());
        }
        assert_eq!(
            serde_json::to_value(ApprovalState::Approved).unwrap(),
            "Approved"
        );
    }

    #[test]
    fn pnr_rule_and_key() {
        assert!(is_pnr("X7K2-QP") && !is_pnr("no spaces") && !is_pnr(&"A".repeat(21)));
        assert_eq!(pnr_key(" x7k2qp "), "X7K2QP");
    }

    #[test]
    fn user_zone_falls_back_to_utc() {
        assert_eq!(UserZone::from_profile(None).name, "UTC");
        assert_eq!(UserZone::from_profile(Some("Mars/Olympus")).name, "UTC");
        let london = UserZone::from_profile(Some("GMT Standard Time"));
        assert_eq!(london.name, "GMT Standard Time");
        let t: Timestamp = "2026-07-01T08:15:00Z".parse().unwrap();
        assert_eq!(london.local(Some(t)).unwrap(), "2026-07-01T09:15:00");
    }
}
