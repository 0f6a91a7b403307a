//! Flights, journeys and hotel stays as clients send them (`POST` and `PUT
//! /V2/{t}/itineraries/{id}/flights|journeys|hotels`). Each `validated()` checks every
//! rule (text trimmed, country codes ISO 3166-1 alpha-2, each local/UTC pair resolved
//! with its time zone, the end not before the start) and returns the domain segment.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::itinerary::country::CountryCode;
use crate::domain::itinerary::read_only_id;
use crate::domain::itinerary::segments::{
    ADDRESS_MAX_CHARS, DESCRIPTION_MAX_CHARS, FLIGHT_NUMBER_MAX_CHARS, NAME_MAX_CHARS, RouteEnd,
    SegmentTime, text,
};
use crate::domain::itinerary::times::{
    PairNames, Zone, blank_to_none, format_local, read_zone, resolve_pair,
};
use crate::domain::itinerary::{Flight, Hotel, Journey, JourneyType, Segment};
use crate::domain::validation::{ValidationErrors, Validator};

/// A segment's wire record: what a client sends, checked into its domain segment.
pub trait SegmentRecord: DeserializeOwned {
    type Segment: Segment;
    /// Checks every rule; returns the segment as stored (no id).
    fn validated(self) -> Result<Self::Segment, ValidationErrors>;
}

/// A flight. Of each pair (`DepartureTimeLocal`/`DepartureTime`,
/// `ArrivalTimeLocal`/`ArrivalTime`) at least one is required; the other is computed
/// with `DepartureTimeZoneId`/`ArrivalTimeZoneId`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Flight", rename_all = "PascalCase")]
#[schema(as = Flight)]
pub struct FlightRecord {
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
}

/// A ground journey. `JourneyType` is required: `Walk`, `Car`, `Taxi`, `Bus`, `Train`,
/// `Ferry`, `Bicycle`, `Motorcycle` or `Other` (any case). Times follow the flight rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Journey", rename_all = "PascalCase")]
#[schema(as = Journey)]
pub struct JourneyRecord {
    #[serde(default, deserialize_with = "read_only_id")]
    #[schema(read_only, example = 8)]
    pub id: Option<i32>,
    #[schema(required = true, min_length = 1, example = "Train")]
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
}

/// A hotel stay. Of each pair (`CheckInTimeLocal`/`CheckInTime`,
/// `CheckOutTimeLocal`/`CheckOutTime`) at least one is required; `TimeZoneId` relates
/// them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Hotel", rename_all = "PascalCase")]
#[schema(as = Hotel)]
pub struct HotelRecord {
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

/// One local/UTC pair as sent, its zone read, and the names it is reported under.
type PairInput<'a> = (PairNames, &'a Zone, Option<&'a str>, Option<&'a str>);

/// The two times of a segment, resolved: the later one not before the first.
fn span(
    v: &mut Validator,
    (first_names, first_zone, first_local, first_utc): PairInput<'_>,
    (later_names, later_zone, later_local, later_utc): PairInput<'_>,
    order_message: &str,
) -> Option<(SegmentTime, SegmentTime)> {
    let start = resolve_pair(v, first_names, first_zone, first_local, first_utc);
    let later_given_utc = later_utc.is_some_and(|s| !s.trim().is_empty());
    let end = resolve_pair(v, later_names, later_zone, later_local, later_utc);
    let (start, end) = (start?, end?);
    if end.utc < start.utc {
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

/// One end of a flight or journey as sent: where and when.
struct EndInput {
    latitude: Option<f64>,
    longitude: Option<f64>,
    country_name: Option<String>,
    country_code: Option<String>,
    zone_id: Option<String>,
    time_local: Option<String>,
    time: Option<String>,
}

/// The rules flights and journeys share, over both ends (errors in this order): positions,
/// country names, country codes, time zones, then the departure and arrival times. The
/// ends when their times resolve (any other problem is reported to `v`).
fn route(
    v: &mut Validator,
    (mut origin, mut destination): (EndInput, EndInput),
) -> Option<(RouteEnd, RouteEnd)> {
    let origin_position = point(v, "Origin", origin.latitude, origin.longitude);
    let destination_position = point(
        v,
        "Destination",
        destination.latitude,
        destination.longitude,
    );
    text(
        v,
        "OriginCountryName",
        &mut origin.country_name,
        NAME_MAX_CHARS,
    );
    text(
        v,
        "DestinationCountryName",
        &mut destination.country_name,
        NAME_MAX_CHARS,
    );
    let origin_code = country_code(v, "OriginCountryCode", origin.country_code.as_deref());
    let destination_code = country_code(
        v,
        "DestinationCountryCode",
        destination.country_code.as_deref(),
    );
    let departure_zone = read_zone(v, DEPARTURE.zone, &mut origin.zone_id);
    let arrival_zone = read_zone(v, ARRIVAL.zone, &mut destination.zone_id);
    let (departure, arrival) = span(
        v,
        (
            DEPARTURE,
            &departure_zone,
            origin.time_local.as_deref(),
            origin.time.as_deref(),
        ),
        (
            ARRIVAL,
            &arrival_zone,
            destination.time_local.as_deref(),
            destination.time.as_deref(),
        ),
        "the arrival is before the departure",
    )?;
    let end = |input: EndInput, position, country_code, time| RouteEnd {
        position,
        country_name: input.country_name,
        country_code,
        time_zone_id: input.zone_id,
        time,
    };
    Some((
        end(origin, origin_position, origin_code, departure),
        end(destination, destination_position, destination_code, arrival),
    ))
}

/// The record's route ends, moved out of it (for `route`).
macro_rules! route_ends {
    ($record:expr) => {
        (
            EndInput {
                latitude: $record.origin_latitude,
                longitude: $record.origin_longitude,
                country_name: $record.origin_country_name.take(),
                country_code: $record.origin_country_code.take(),
                zone_id: $record.departure_time_zone_id.take(),
                time_local: $record.departure_time_local.take(),
                time: $record.departure_time.take(),
            },
            EndInput {
                latitude: $record.destination_latitude,
                longitude: $record.destination_longitude,
                country_name: $record.destination_country_name.take(),
                country_code: $record.destination_country_code.take(),
                zone_id: $record.arrival_time_zone_id.take(),
                time_local: $record.arrival_time_local.take(),
                time: $record.arrival_time.take(),
            },
        )
    };
}

/// A flight's or journey's record: the fields given, and those of both route ends from
/// the domain's (for `From<&Flight>` and `From<&Journey>`).
macro_rules! route_record {
    ($record:ident { $($field:ident: $value:expr),* $(,)? }, $departure:expr, $arrival:expr) => {{
        let (departure, arrival): (&RouteEnd, &RouteEnd) = ($departure, $arrival);
        $record {
            $($field: $value,)*
            origin_latitude: departure.position.map(|p| p.0),
            origin_longitude: departure.position.map(|p| p.1),
            origin_country_name: departure.country_name.clone(),
            origin_country_code: departure.country_code.map(|c| c.as_str().to_string()),
            departure_time_zone_id: departure.time_zone_id.clone(),
            departure_time_local: departure.time.local.map(format_local),
            departure_time: Some(departure.time.utc.to_string()),
            destination_latitude: arrival.position.map(|p| p.0),
            destination_longitude: arrival.position.map(|p| p.1),
            destination_country_name: arrival.country_name.clone(),
            destination_country_code: arrival.country_code.map(|c| c.as_str().to_string()),
            arrival_time_zone_id: arrival.time_zone_id.clone(),
            arrival_time_local: arrival.time.local.map(format_local),
            arrival_time: Some(arrival.time.utc.to_string()),
        }
    }};
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

/// Required, a `JourneyType` in any case.
fn journey_type(v: &mut Validator, value: Option<&str>) -> Option<JourneyType> {
    let names = JourneyType::NAMES.join(", ");
    match value.map(str::trim).filter(|t| !t.is_empty()) {
        Some(kind) => {
            let parsed = JourneyType::parse_any_case(kind);
            if parsed.is_none() {
                v.add("JourneyType", format!("must be one of {names}"));
            }
            parsed
        }
        None => {
            v.add("JourneyType", format!("is required: one of {names}"));
            None
        }
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

/// Optional: ISO 3166-1 alpha-2, any case (blank is absent).
fn country_code(v: &mut Validator, field: &str, value: Option<&str>) -> Option<CountryCode> {
    let code = value.map(str::trim).filter(|t| !t.is_empty())?;
    let parsed = CountryCode::parse(code);
    if parsed.is_none() {
        v.add(
            field,
            format!("'{code}' is not an ISO 3166-1 alpha-2 country code (two letters, e.g. GB)"),
        );
    }
    parsed
}

/// What is left when every rule passed but a segment's times did not resolve: cannot
/// happen, since each time problem is reported.
fn unresolved() -> ValidationErrors {
    ValidationErrors::single("body", "the segment's times could not be resolved")
}

impl SegmentRecord for FlightRecord {
    type Segment = Flight;

    fn validated(mut self) -> Result<Flight, ValidationErrors> {
        let mut v = Validator::new();
        flight_number(&mut v, &mut self.flight_number);
        text(&mut v, "Origin", &mut self.origin, NAME_MAX_CHARS);
        text(&mut v, "Destination", &mut self.destination, NAME_MAX_CHARS);
        let ends = route(&mut v, route_ends!(self));
        v.finish()?;
        let (departure, arrival) = ends.ok_or_else(unresolved)?;
        Ok(Flight {
            id: None,
            flight_number: self.flight_number,
            origin: self.origin,
            destination: self.destination,
            departure,
            arrival,
            etag: None,
        })
    }
}

impl SegmentRecord for JourneyRecord {
    type Segment = Journey;

    fn validated(mut self) -> Result<Journey, ValidationErrors> {
        let mut v = Validator::new();
        let kind = journey_type(&mut v, self.journey_type.as_deref());
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
        let ends = route(&mut v, route_ends!(self));
        v.finish()?;
        let journey_type =
            kind.ok_or_else(|| ValidationErrors::single("JourneyType", "is required"))?;
        let (departure, arrival) = ends.ok_or_else(unresolved)?;
        Ok(Journey {
            id: None,
            journey_type,
            name: self.name,
            description: self.description,
            origin_address: self.origin_address,
            destination_address: self.destination_address,
            departure,
            arrival,
            etag: None,
        })
    }
}

impl SegmentRecord for HotelRecord {
    type Segment = Hotel;

    fn validated(mut self) -> Result<Hotel, ValidationErrors> {
        let mut v = Validator::new();
        text(&mut v, "Name", &mut self.name, NAME_MAX_CHARS);
        text(&mut v, "Address", &mut self.address, ADDRESS_MAX_CHARS);
        let position = point(&mut v, "", self.latitude, self.longitude);
        text(
            &mut v,
            "CountryName",
            &mut self.country_name,
            NAME_MAX_CHARS,
        );
        let code = country_code(&mut v, "CountryCode", self.country_code.as_deref());
        let zone = read_zone(&mut v, CHECK_IN.zone, &mut self.time_zone_id);
        let times = span(
            &mut v,
            (
                CHECK_IN,
                &zone,
                self.check_in_time_local.as_deref(),
                self.check_in_time.as_deref(),
            ),
            (
                CHECK_OUT,
                &zone,
                self.check_out_time_local.as_deref(),
                self.check_out_time.as_deref(),
            ),
            "the check-out is before the check-in",
        );
        v.finish()?;
        let (check_in, check_out) = times.ok_or_else(unresolved)?;
        Ok(Hotel {
            id: None,
            name: self.name,
            address: self.address,
            position,
            country_name: self.country_name,
            country_code: code,
            time_zone_id: self.time_zone_id,
            check_in,
            check_out,
            etag: None,
        })
    }
}

impl From<&Flight> for FlightRecord {
    fn from(flight: &Flight) -> Self {
        route_record!(
            FlightRecord {
                id: flight.id,
                flight_number: flight.flight_number.clone(),
                origin: flight.origin.clone(),
                destination: flight.destination.clone(),
            },
            &flight.departure,
            &flight.arrival
        )
    }
}

impl From<&Journey> for JourneyRecord {
    fn from(journey: &Journey) -> Self {
        route_record!(
            JourneyRecord {
                id: journey.id,
                journey_type: Some(journey.journey_type.as_str().to_string()),
                name: journey.name.clone(),
                description: journey.description.clone(),
                origin_address: journey.origin_address.clone(),
                destination_address: journey.destination_address.clone(),
            },
            &journey.departure,
            &journey.arrival
        )
    }
}

impl From<&Hotel> for HotelRecord {
    fn from(hotel: &Hotel) -> Self {
        HotelRecord {
            id: hotel.id,
            name: hotel.name.clone(),
            address: hotel.address.clone(),
            latitude: hotel.position.map(|p| p.0),
            longitude: hotel.position.map(|p| p.1),
            country_name: hotel.country_name.clone(),
            country_code: hotel.country_code.map(|c| c.as_str().to_string()),
            time_zone_id: hotel.time_zone_id.clone(),
            check_in_time_local: hotel.check_in.local.map(format_local),
            check_in_time: Some(hotel.check_in.utc.to_string()),
            check_out_time_local: hotel.check_out.local.map(format_local),
            check_out_time: Some(hotel.check_out.utc.to_string()),
        }
    }
}

#[cfg(test)]
#[path = "itinerary_segments_tests.rs"]
mod tests;
