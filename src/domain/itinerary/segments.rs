//! The timed parts of an itinerary: flights, journeys (ground legs) and hotel stays, as
//! checked (`http::records::itinerary_segments` reads what clients send). Each end has
//! its UTC instant and, when known, its local time; the store keeps a segment as its
//! JSON document (the API's form, `segments/form.rs`) beside what it keeps in columns:
//! the segment's span and positions (`Segment::span`).

use jiff::Timestamp;
use serde::Deserialize;

use super::country::CountryCode;
use super::times::blank_to_none;
use crate::domain::closed_set::closed_set;
use crate::domain::validation::Validator;

pub use super::times::SegmentTime;

mod form;

/// Longest name, address or description (characters).
pub const NAME_MAX_CHARS: usize = 200;
pub const ADDRESS_MAX_CHARS: usize = 500;
pub const DESCRIPTION_MAX_CHARS: usize = 4000;
pub const FLIGHT_NUMBER_MAX_CHARS: usize = 20;

closed_set! {
    /// The ground transport a journey uses (`JourneyType`). The contract names only
    /// `Walk`.
    pub enum JourneyType {
        Walk = "Walk",
        Car = "Car",
        Taxi = "Taxi",
        Bus = "Bus",
        Train = "Train",
        Ferry = "Ferry",
        Bicycle = "Bicycle",
        Motorcycle = "Motorcycle",
        Other = "Other",
    }
}

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

/// A segment type (flight, journey, hotel), as checked.
pub trait Segment: Sized {
    const KIND: SegmentKind;
    /// Its span and positions, for the store's columns.
    fn span(&self) -> SegmentSpan;
    fn with_id(self, id: i32) -> Self;
    /// The record carrying its itinerary's version.
    fn with_etag(self, etag: String) -> Self;
}

/// One end of a flight or journey: where (origin or destination) and when (departure
/// or arrival).
#[derive(Debug, Clone, PartialEq)]
pub struct RouteEnd {
    /// Latitude, longitude.
    pub position: Option<(f64, f64)>,
    pub country_name: Option<String>,
    pub country_code: Option<CountryCode>,
    /// The time zone's name as given (IANA or Windows).
    pub time_zone_id: Option<String>,
    pub time: SegmentTime,
}

/// A flight. The arrival is not before the departure.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "form::FlightForm<String>")]
pub struct Flight {
    /// Assigned by the store; `None` until stored.
    pub id: Option<i32>,
    pub flight_number: Option<String>,
    pub origin: Option<String>,
    pub destination: Option<String>,
    pub departure: RouteEnd,
    pub arrival: RouteEnd,
    /// The itinerary's version, sent as the `ETag` header (not a field of the contract).
    pub etag: Option<String>,
}

/// A ground journey. The arrival is not before the departure.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "form::JourneyForm<String>")]
pub struct Journey {
    pub id: Option<i32>,
    pub journey_type: JourneyType,
    pub name: Option<String>,
    pub description: Option<String>,
    pub origin_address: Option<String>,
    pub destination_address: Option<String>,
    pub departure: RouteEnd,
    pub arrival: RouteEnd,
    pub etag: Option<String>,
}

/// A hotel stay: one place and one time zone for both times. The check-out is not
/// before the check-in.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "form::HotelForm<String>")]
pub struct Hotel {
    pub id: Option<i32>,
    pub name: Option<String>,
    pub address: Option<String>,
    /// Latitude, longitude.
    pub position: Option<(f64, f64)>,
    pub country_name: Option<String>,
    pub country_code: Option<CountryCode>,
    pub time_zone_id: Option<String>,
    pub check_in: SegmentTime,
    pub check_out: SegmentTime,
    pub etag: Option<String>,
}

impl Segment for Flight {
    const KIND: SegmentKind = SegmentKind::Flight;

    fn span(&self) -> SegmentSpan {
        route_span(&self.departure, &self.arrival)
    }

    fn with_id(self, id: i32) -> Self {
        Self {
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

    fn span(&self) -> SegmentSpan {
        route_span(&self.departure, &self.arrival)
    }

    fn with_id(self, id: i32) -> Self {
        Self {
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

    fn span(&self) -> SegmentSpan {
        SegmentSpan {
            start: self.check_in.utc,
            end: self.check_out.utc,
            points: [self.position, None],
        }
    }

    fn with_id(self, id: i32) -> Self {
        Self {
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

fn route_span(departure: &RouteEnd, arrival: &RouteEnd) -> SegmentSpan {
    SegmentSpan {
        start: departure.time.utc,
        end: arrival.time.utc,
        points: [departure.position, arrival.position],
    }
}

/// Optional free text: trimmed, blank is null, at most `max` characters.
pub fn text(v: &mut Validator, field: &str, value: &mut Option<String>, max: usize) {
    if let Some(t) = blank_to_none(value) {
        v.length(field, Some(&t), 1, max);
    }
}

#[cfg(test)]
#[path = "segments_tests.rs"]
mod tests;
