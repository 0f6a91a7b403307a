//! The timed parts of an itinerary: flights, journeys (ground legs) and hotel stays.
//! Validation normalises a record (trimmed text, upper-case country codes, both times
//! of each local/UTC pair) and yields what the store keeps in columns: the segment's
//! start and end instants and its positions.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::country::is_country_code;
use super::read_only_id;
use super::times::{PairNames, Zone, blank_to_none, read_zone, resolve_pair};
use crate::domain::validation::{ValidationErrors, Validator};

/// Longest name, address or description (characters).
pub const NAME_MAX_CHARS: usize = 200;
pub const ADDRESS_MAX_CHARS: usize = 500;
pub const DESCRIPTION_MAX_CHARS: usize = 4000;
pub const FLIGHT_NUMBER_MAX_CHARS: usize = 20;

/// The ground transport a journey uses. The contract names only `Walk`.
pub const JOURNEY_TYPES: [&str; 9] = [
    "Walk",
    "Car",
    "Taxi",
    "Bus",
    "Train",
    "Ferry",
    "Bicycle",
    "Motorcycle",
    "Other",
];

/// Which segment table a record lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentKind {
    Flight,
    Journey,
    Hotel,
}

impl SegmentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SegmentKind::Flight => "flight",
            SegmentKind::Journey => "journey",
            SegmentKind::Hotel => "hotel",
        }
    }
}

/// What the store keeps beside a segment's document: its time span (UTC) and positions
/// (latitude, longitude), which decide the itinerary's Start/End and OverallRisk.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentSpan {
    pub start: Timestamp,
    pub end: Timestamp,
    pub points: Positions,
}

/// A segment's positions (latitude, longitude): a route's two ends, a hotel's one.
pub type Positions = [Option<(f64, f64)>; 2];

/// A segment record type (flight, journey, hotel).
pub trait Segment: Sized {
    const KIND: SegmentKind;
    /// Checks every rule; returns the record as stored (id cleared) and its span.
    fn validated(self) -> Result<(Self, SegmentSpan), ValidationErrors>;
    fn with_id(self, id: i32) -> Self;
    /// The record carrying its itinerary's version.
    fn with_etag(self, etag: String) -> Self;
}

/// A flight. Of each pair (`DepartureTimeLocal`/`DepartureTime`,
/// `ArrivalTimeLocal`/`ArrivalTime`) at least one is required; the other is computed
/// with `DepartureTimeZoneId`/`ArrivalTimeZoneId`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Flight {
    /// Assigned by the server (int32).
    #[serde(default, deserialize_with = "read_only_id")]
    #[schema(read_only, example = 7)]
    pub id: Option<i32>,
    /// A tail number or an ident (airline code and number): up to 20 letters, digits,
    /// spaces or hyphens.
    #[schema(example = "BA117")]
    pub flight_number: Option<String>,
    /// Departure airport.
    #[schema(example = "LHR")]
    pub origin: Option<String>,
    /// Arrival airport.
    #[schema(example = "JFK")]
    pub destination: Option<String>,
    /// -90 to 90; given together with `OriginLongitude`.
    #[schema(example = 51.47)]
    pub origin_latitude: Option<f64>,
    /// -180 to 180.
    #[schema(example = -0.4543)]
    pub origin_longitude: Option<f64>,
    pub origin_country_name: Option<String>,
    /// ISO 3166-1 alpha-2 (any case; stored in upper case).
    #[schema(example = "GB")]
    pub origin_country_code: Option<String>,
    /// IANA (`Europe/London`) or Windows (`GMT Standard Time`) name.
    #[schema(example = "Europe/London")]
    pub departure_time_zone_id: Option<String>,
    /// Local time without offset.
    #[schema(value_type = Option<String>, example = "2026-07-01T09:15:00")]
    pub departure_time_local: Option<String>,
    /// UTC.
    #[schema(value_type = Option<String>, format = DateTime, example = "2026-07-01T08:15:00Z")]
    pub departure_time: Option<String>,
    #[schema(example = 40.64)]
    pub destination_latitude: Option<f64>,
    #[schema(example = -73.78)]
    pub destination_longitude: Option<f64>,
    pub destination_country_name: Option<String>,
    #[schema(example = "US")]
    pub destination_country_code: Option<String>,
    #[schema(example = "America/New_York")]
    pub arrival_time_zone_id: Option<String>,
    #[schema(value_type = Option<String>, example = "2026-07-01T12:05:00")]
    pub arrival_time_local: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime, example = "2026-07-01T16:05:00Z")]
    pub arrival_time: Option<String>,
    /// The itinerary's version, sent as the `ETag` header (not a field of the contract).
    #[serde(skip)]
    pub etag: Option<String>,
}

/// A ground journey. `JourneyType` is required: `Walk`, `Car`, `Taxi`, `Bus`, `Train`,
/// `Ferry`, `Bicycle`, `Motorcycle` or `Other` (any case). Times follow the flight rule.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Journey {
    #[serde(default, deserialize_with = "read_only_id")]
    #[schema(read_only, example = 8)]
    pub id: Option<i32>,
    #[schema(required = true, example = "Train")]
    pub journey_type: Option<String>,
    #[schema(example = "Eurostar to Paris")]
    pub name: Option<String>,
    pub description: Option<String>,
    pub origin_address: Option<String>,
    pub origin_latitude: Option<f64>,
    pub origin_longitude: Option<f64>,
    pub origin_country_name: Option<String>,
    pub origin_country_code: Option<String>,
    pub departure_time_zone_id: Option<String>,
    #[schema(value_type = Option<String>, example = "2026-07-03T08:01:00")]
    pub departure_time_local: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub departure_time: Option<String>,
    pub destination_address: Option<String>,
    pub destination_latitude: Option<f64>,
    pub destination_longitude: Option<f64>,
    pub destination_country_name: Option<String>,
    pub destination_country_code: Option<String>,
    pub arrival_time_zone_id: Option<String>,
    #[schema(value_type = Option<String>, example = "2026-07-03T11:20:00")]
    pub arrival_time_local: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub arrival_time: Option<String>,
    /// The itinerary's version, sent as the `ETag` header (not a field of the contract).
    #[serde(skip)]
    pub etag: Option<String>,
}

/// A hotel stay. Of each pair (`CheckInTimeLocal`/`CheckInTime`,
/// `CheckOutTimeLocal`/`CheckOutTime`) at least one is required; `TimeZoneId` relates
/// them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Hotel {
    #[serde(default, deserialize_with = "read_only_id")]
    #[schema(read_only, example = 9)]
    pub id: Option<i32>,
    #[schema(example = "Hotel du Louvre")]
    pub name: Option<String>,
    pub address: Option<String>,
    #[schema(example = 48.8625)]
    pub latitude: Option<f64>,
    #[schema(example = 2.3358)]
    pub longitude: Option<f64>,
    pub country_name: Option<String>,
    #[schema(example = "FR")]
    pub country_code: Option<String>,
    #[schema(example = "Europe/Paris")]
    pub time_zone_id: Option<String>,
    #[schema(value_type = Option<String>, example = "2026-07-03T15:00:00")]
    pub check_in_time_local: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub check_in_time: Option<String>,
    #[schema(value_type = Option<String>, example = "2026-07-05T11:00:00")]
    pub check_out_time_local: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub check_out_time: Option<String>,
    /// The itinerary's version, sent as the `ETag` header (not a field of the contract).
    #[serde(skip)]
    pub etag: Option<String>,
}

const DEPARTURE: PairNames = PairNames {
    local: "DepartureTimeLocal",
    utc: "DepartureTime",
    zone: "DepartureTimeZoneId",
};
const ARRIVAL: PairNames = PairNames {
    local: "ArrivalTimeLocal",
    utc: "ArrivalTime",
    zone: "ArrivalTimeZoneId",
};
const CHECK_IN: PairNames = PairNames {
    local: "CheckInTimeLocal",
    utc: "CheckInTime",
    zone: "TimeZoneId",
};
const CHECK_OUT: PairNames = PairNames {
    local: "CheckOutTimeLocal",
    utc: "CheckOutTime",
    zone: "TimeZoneId",
};

/// The two ends of a flight or journey, resolved. `later` names the second pair.
fn span(
    v: &mut Validator,
    (first_names, first_zone, first_local, first_utc): (
        PairNames,
        &Zone,
        &mut Option<String>,
        &mut Option<String>,
    ),
    (later_names, later_zone, later_local, later_utc): (
        PairNames,
        &Zone,
        &mut Option<String>,
        &mut Option<String>,
    ),
    order_message: &str,
) -> Option<(Timestamp, Timestamp)> {
    let start = resolve_pair(v, first_names, first_zone, first_local, first_utc);
    let later_given_utc = later_utc.as_deref().is_some_and(|s| !s.trim().is_empty());
    let end = resolve_pair(v, later_names, later_zone, later_local, later_utc);
    let (start, end) = (start?, end?);
    if end < start {
        let field = if later_given_utc {
            later_names.utc
        } else {
            later_names.local
        };
        v.add(field, order_message);
        return None;
    }
    Some((start, end))
}

/// One end of a flight or journey, borrowed from the record: where and when.
struct RouteEnd<'a> {
    latitude: Option<f64>,
    longitude: Option<f64>,
    country_name: &'a mut Option<String>,
    country_code: &'a mut Option<String>,
    zone_id: &'a mut Option<String>,
    time_local: &'a mut Option<String>,
    time: &'a mut Option<String>,
}

/// The origin and destination of a flight or journey.
type RouteEnds<'a> = (RouteEnd<'a>, RouteEnd<'a>);

/// The rules flights and journeys share, over both ends (errors in this order): positions,
/// country names, country codes, time zones, then the departure and arrival times.
fn route(
    v: &mut Validator,
    (origin, destination): RouteEnds<'_>,
) -> (Positions, Option<(Timestamp, Timestamp)>) {
    let points = [
        point(v, "Origin", origin.latitude, origin.longitude),
        point(
            v,
            "Destination",
            destination.latitude,
            destination.longitude,
        ),
    ];
    text(v, "OriginCountryName", origin.country_name, NAME_MAX_CHARS);
    text(
        v,
        "DestinationCountryName",
        destination.country_name,
        NAME_MAX_CHARS,
    );
    country_code(v, "OriginCountryCode", origin.country_code);
    country_code(v, "DestinationCountryCode", destination.country_code);
    let departure_zone = read_zone(v, DEPARTURE.zone, origin.zone_id);
    let arrival_zone = read_zone(v, ARRIVAL.zone, destination.zone_id);
    let times = span(
        v,
        (DEPARTURE, &departure_zone, origin.time_local, origin.time),
        (
            ARRIVAL,
            &arrival_zone,
            destination.time_local,
            destination.time,
        ),
        "the arrival is before the departure",
    );
    (points, times)
}

impl Flight {
    /// The origin (departure) and destination (arrival), for `route`.
    fn ends(&mut self) -> RouteEnds<'_> {
        (
            RouteEnd {
                latitude: self.origin_latitude,
                longitude: self.origin_longitude,
                country_name: &mut self.origin_country_name,
                country_code: &mut self.origin_country_code,
                zone_id: &mut self.departure_time_zone_id,
                time_local: &mut self.departure_time_local,
                time: &mut self.departure_time,
            },
            RouteEnd {
                latitude: self.destination_latitude,
                longitude: self.destination_longitude,
                country_name: &mut self.destination_country_name,
                country_code: &mut self.destination_country_code,
                zone_id: &mut self.arrival_time_zone_id,
                time_local: &mut self.arrival_time_local,
                time: &mut self.arrival_time,
            },
        )
    }
}

impl Journey {
    /// The origin (departure) and destination (arrival), for `route`.
    fn ends(&mut self) -> RouteEnds<'_> {
        (
            RouteEnd {
                latitude: self.origin_latitude,
                longitude: self.origin_longitude,
                country_name: &mut self.origin_country_name,
                country_code: &mut self.origin_country_code,
                zone_id: &mut self.departure_time_zone_id,
                time_local: &mut self.departure_time_local,
                time: &mut self.departure_time,
            },
            RouteEnd {
                latitude: self.destination_latitude,
                longitude: self.destination_longitude,
                country_name: &mut self.destination_country_name,
                country_code: &mut self.destination_country_code,
                zone_id: &mut self.arrival_time_zone_id,
                time_local: &mut self.arrival_time_local,
                time: &mut self.arrival_time,
            },
        )
    }
}

/// Optional: up to `FLIGHT_NUMBER_MAX_CHARS` letters, digits, spaces or hyphens.
fn flight_number(v: &mut Validator, value: &mut Option<String>) {
    let Some(number) = blank_to_none(value) else {
        return;
    };
    let valid = number.chars().count() <= FLIGHT_NUMBER_MAX_CHARS
        && number
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-');
    if !valid {
        v.add(
            "FlightNumber",
            format!("must be at most {FLIGHT_NUMBER_MAX_CHARS} letters, digits, spaces or hyphens"),
        );
    }
}

/// Required, one of `JOURNEY_TYPES` in any case; stored as spelled there.
fn journey_type(v: &mut Validator, value: &mut Option<String>) {
    match blank_to_none(value) {
        Some(kind) => match JOURNEY_TYPES.iter().find(|t| t.eq_ignore_ascii_case(&kind)) {
            Some(canonical) => *value = Some(canonical.to_string()),
            None => v.add(
                "JourneyType",
                format!("must be one of {}", JOURNEY_TYPES.join(", ")),
            ),
        },
        None => v.add(
            "JourneyType",
            format!("is required: one of {}", JOURNEY_TYPES.join(", ")),
        ),
    }
}

impl Segment for Flight {
    const KIND: SegmentKind = SegmentKind::Flight;

    fn validated(mut self) -> Result<(Self, SegmentSpan), ValidationErrors> {
        let mut v = Validator::new();
        self.id = None;
        flight_number(&mut v, &mut self.flight_number);
        text(&mut v, "Origin", &mut self.origin, NAME_MAX_CHARS);
        text(&mut v, "Destination", &mut self.destination, NAME_MAX_CHARS);
        let (points, times) = route(&mut v, self.ends());
        finish(v, self, times, points)
    }

    fn with_id(self, id: i32) -> Self {
        Flight {
            id: Some(id),
            ..self
        }
    }

    fn with_etag(self, etag: String) -> Self {
        Self {
            etag: Some(etag),
            ..self
        }
    }
}

impl Segment for Journey {
    const KIND: SegmentKind = SegmentKind::Journey;

    fn validated(mut self) -> Result<(Self, SegmentSpan), ValidationErrors> {
        let mut v = Validator::new();
        self.id = None;
        journey_type(&mut v, &mut self.journey_type);
        text(&mut v, "Name", &mut self.name, NAME_MAX_CHARS);
        text(
            &mut v,
            "Description",
            &mut self.description,
            DESCRIPTION_MAX_CHARS,
        );
        text(
            &mut v,
            "OriginAddress",
            &mut self.origin_address,
            ADDRESS_MAX_CHARS,
        );
        text(
            &mut v,
            "DestinationAddress",
            &mut self.destination_address,
            ADDRESS_MAX_CHARS,
        );
        let (points, times) = route(&mut v, self.ends());
        finish(v, self, times, points)
    }

    fn with_id(self, id: i32) -> Self {
        Journey {
            id: Some(id),
            ..self
        }
    }

    fn with_etag(self, etag: String) -> Self {
        Self {
            etag: Some(etag),
            ..self
        }
    }
}

impl Segment for Hotel {
    const KIND: SegmentKind = SegmentKind::Hotel;

    fn validated(mut self) -> Result<(Self, SegmentSpan), ValidationErrors> {
        let mut v = Validator::new();
        self.id = None;
        text(&mut v, "Name", &mut self.name, NAME_MAX_CHARS);
        text(&mut v, "Address", &mut self.address, ADDRESS_MAX_CHARS);
        let location = point(&mut v, "", self.latitude, self.longitude);
        text(
            &mut v,
            "CountryName",
            &mut self.country_name,
            NAME_MAX_CHARS,
        );
        country_code(&mut v, "CountryCode", &mut self.country_code);
        let zone = read_zone(&mut v, CHECK_IN.zone, &mut self.time_zone_id);
        let times = span(
            &mut v,
            (
                CHECK_IN,
                &zone,
                &mut self.check_in_time_local,
                &mut self.check_in_time,
            ),
            (
                CHECK_OUT,
                &zone,
                &mut self.check_out_time_local,
                &mut self.check_out_time,
            ),
            "the check-out is before the check-in",
        );
        finish(v, self, times, [location, None])
    }

    fn with_id(self, id: i32) -> Self {
        Hotel {
            id: Some(id),
            ..self
        }
    }

    fn with_etag(self, etag: String) -> Self {
        Self {
            etag: Some(etag),
            ..self
        }
    }
}

fn finish<T>(
    v: Validator,
    record: T,
    times: Option<(Timestamp, Timestamp)>,
    points: Positions,
) -> Result<(T, SegmentSpan), ValidationErrors> {
    v.finish()?;
    // Every time problem was reported above, so a complete span is certain here.
    let (start, end) = times.ok_or_else(|| {
        ValidationErrors::single("body", "the segment's times could not be resolved")
    })?;
    Ok((record, SegmentSpan { start, end, points }))
}

/// Optional free text: trimmed, blank is null, at most `max` characters.
pub fn text(v: &mut Validator, field: &str, value: &mut Option<String>, max: usize) {
    if let Some(t) = blank_to_none(value) {
        v.length(field, Some(&t), 1, max);
    }
}

/// A position from `{prefix}Latitude` and `{prefix}Longitude`: both or neither, in range.
fn point(
    v: &mut Validator,
    prefix: &str,
    latitude: Option<f64>,
    longitude: Option<f64>,
) -> Option<(f64, f64)> {
    let lat_field = format!("{prefix}Latitude");
    let lon_field = format!("{prefix}Longitude");
    match (latitude, longitude) {
        (None, None) => None,
        (Some(_), None) => {
            v.add(lon_field, format!("is required with {lat_field}"));
            None
        }
        (None, Some(_)) => {
            v.add(lat_field, format!("is required with {lon_field}"));
            None
        }
        (Some(lat), Some(lon)) => {
            let mut ok = true;
            if !(-90.0..=90.0).contains(&lat) {
                v.add(lat_field, "must be between -90 and 90");
                ok = false;
            }
            if !(-180.0..=180.0).contains(&lon) {
                v.add(lon_field, "must be between -180 and 180");
                ok = false;
            }
            ok.then_some((lat, lon))
        }
    }
}

/// ISO 3166-1 alpha-2, any case in, upper case stored.
fn country_code(v: &mut Validator, field: &str, value: &mut Option<String>) {
    let Some(code) = blank_to_none(value) else {
        return;
    };
    let upper = code.to_ascii_uppercase();
    if is_country_code(&upper) {
        *value = Some(upper);
    } else {
        v.add(
            field,
            format!("'{code}' is not an ISO 3166-1 alpha-2 country code (two letters, e.g. GB)"),
        );
    }
}

#[cfg(test)]
#[path = "segments_tests.rs"]
mod tests;
