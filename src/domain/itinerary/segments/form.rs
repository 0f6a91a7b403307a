//! The JSON form of flights, journeys and hotel stays: what the API answers and what the
//! store keeps as a segment's document. Its field names and order are the wire records'
//! (`http::records::itinerary_segments`); a local time is written by `format_local`, a
//! UTC time as RFC 3339 with `Z`. Each form is generic over its text: `&str` when a
//! segment is written, `String` when one is read.

use jiff::Timestamp;
use jiff::civil::DateTime;
use serde::{Deserialize, Serialize, Serializer};

use super::{Flight, Hotel, Journey, JourneyType, RouteEnd, SegmentTime};
use crate::domain::itinerary::country::CountryCode;

/// A position from its two fields: both are given or neither (the rule segments are
/// checked by).
fn position(latitude: Option<f64>, longitude: Option<f64>) -> Option<(f64, f64)> {
    latitude.zip(longitude)
}

/// A local time without offset, written as `format_local` writes it.
mod local_time {
    use jiff::civil::DateTime;
    use serde::{Deserialize, Deserializer, Serializer, de};

    use crate::domain::itinerary::times::{format_local, parse_local};

    pub fn serialize<S: Serializer>(value: &Option<DateTime>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(dt) => s.serialize_str(&format_local(*dt)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| parse_local(&text).map_err(de::Error::custom))
            .transpose()
    }
}

/// The form of one end of a flight or journey: its fields' names differ by end.
macro_rules! end_form {
    (
        $(#[$doc:meta])*
        $name:ident {
            $lat:ident, $lon:ident, $country_name:ident, $country_code:ident,
            $zone:ident, $local:ident, $utc:ident $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Serialize, Deserialize)]
        #[serde(rename_all = "PascalCase")]
        pub(super) struct $name<S> {
            $lat: Option<f64>,
            $lon: Option<f64>,
            $country_name: Option<S>,
            $country_code: Option<CountryCode>,
            $zone: Option<S>,
            #[serde(default, with = "local_time")]
            $local: Option<DateTime>,
            $utc: Timestamp,
        }

        impl<'a> From<&'a RouteEnd> for $name<&'a str> {
            fn from(end: &'a RouteEnd) -> Self {
                $name {
                    $lat: end.position.map(|p| p.0),
                    $lon: end.position.map(|p| p.1),
                    $country_name: end.country_name.as_deref(),
                    $country_code: end.country_code,
                    $zone: end.time_zone_id.as_deref(),
                    $local: end.time.local,
                    $utc: end.time.utc,
                }
            }
        }

        impl From<$name<String>> for RouteEnd {
            fn from(form: $name<String>) -> Self {
                RouteEnd {
                    position: position(form.$lat, form.$lon),
                    country_name: form.$country_name,
                    country_code: form.$country_code,
                    time_zone_id: form.$zone,
                    time: SegmentTime {
                        local: form.$local,
                        utc: form.$utc,
                    },
                }
            }
        }
    };
}

end_form! {
    /// The origin and departure of a flight or journey.
    DepartureForm {
        origin_latitude, origin_longitude, origin_country_name, origin_country_code,
        departure_time_zone_id, departure_time_local, departure_time,
    }
}

end_form! {
    /// The destination and arrival of a flight or journey.
    ArrivalForm {
        destination_latitude, destination_longitude, destination_country_name,
        destination_country_code, arrival_time_zone_id, arrival_time_local, arrival_time,
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct FlightForm<S> {
    id: Option<i32>,
    flight_number: Option<S>,
    origin: Option<S>,
    destination: Option<S>,
    #[serde(flatten)]
    departure: DepartureForm<S>,
    #[serde(flatten)]
    arrival: ArrivalForm<S>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct JourneyForm<S> {
    id: Option<i32>,
    journey_type: JourneyType,
    name: Option<S>,
    description: Option<S>,
    origin_address: Option<S>,
    #[serde(flatten)]
    departure: DepartureForm<S>,
    destination_address: Option<S>,
    #[serde(flatten)]
    arrival: ArrivalForm<S>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct HotelForm<S> {
    id: Option<i32>,
    name: Option<S>,
    address: Option<S>,
    latitude: Option<f64>,
    longitude: Option<f64>,
    country_name: Option<S>,
    country_code: Option<CountryCode>,
    time_zone_id: Option<S>,
    #[serde(default, with = "local_time")]
    check_in_time_local: Option<DateTime>,
    check_in_time: Timestamp,
    #[serde(default, with = "local_time")]
    check_out_time_local: Option<DateTime>,
    check_out_time: Timestamp,
}

impl Serialize for Flight {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FlightForm {
            id: self.id,
            flight_number: self.flight_number.as_deref(),
            origin: self.origin.as_deref(),
            destination: self.destination.as_deref(),
            departure: DepartureForm::from(&self.departure),
            arrival: ArrivalForm::from(&self.arrival),
        }
        .serialize(s)
    }
}

impl From<FlightForm<String>> for Flight {
    fn from(form: FlightForm<String>) -> Self {
        Flight {
            id: form.id,
            flight_number: form.flight_number,
            origin: form.origin,
            destination: form.destination,
            departure: form.departure.into(),
            arrival: form.arrival.into(),
            etag: None,
        }
    }
}

impl Serialize for Journey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        JourneyForm {
            id: self.id,
            journey_type: self.journey_type,
            name: self.name.as_deref(),
            description: self.description.as_deref(),
            origin_address: self.origin_address.as_deref(),
            departure: DepartureForm::from(&self.departure),
            destination_address: self.destination_address.as_deref(),
            arrival: ArrivalForm::from(&self.arrival),
        }
        .serialize(s)
    }
}

impl From<JourneyForm<String>> for Journey {
    fn from(form: JourneyForm<String>) -> Self {
        Journey {
            id: form.id,
            journey_type: form.journey_type,
            name: form.name,
            description: form.description,
            origin_address: form.origin_address,
            destination_address: form.destination_address,
            departure: form.departure.into(),
            arrival: form.arrival.into(),
            etag: None,
        }
    }
}

impl Serialize for Hotel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HotelForm {
            id: self.id,
            name: self.name.as_deref(),
            address: self.address.as_deref(),
            latitude: self.position.map(|p| p.0),
            longitude: self.position.map(|p| p.1),
            country_name: self.country_name.as_deref(),
            country_code: self.country_code,
            time_zone_id: self.time_zone_id.as_deref(),
            check_in_time_local: self.check_in.local,
            check_in_time: self.check_in.utc,
            check_out_time_local: self.check_out.local,
            check_out_time: self.check_out.utc,
        }
        .serialize(s)
    }
}

impl From<HotelForm<String>> for Hotel {
    fn from(form: HotelForm<String>) -> Self {
        Hotel {
            id: form.id,
            name: form.name,
            address: form.address,
            position: position(form.latitude, form.longitude),
            country_name: form.country_name,
            country_code: form.country_code,
            time_zone_id: form.time_zone_id,
            check_in: SegmentTime {
                local: form.check_in_time_local,
                utc: form.check_in_time,
            },
            check_out: SegmentTime {
                local: form.check_out_time_local,
                utc: form.check_out_time,
            },
            etag: None,
        }
    }
}
