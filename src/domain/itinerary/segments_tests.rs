use serde::Serialize;
use serde::de::DeserializeOwned;

use super::*;

/// A flight's document as the store holds it: every field, `Id` null (the row has it).
const FLIGHT_DOC: &str = r#"{"Id":null,"FlightNumber":"BA 304","Origin":"LHR","Destination":null,"OriginLatitude":51.47,"OriginLongitude":-0.45,"OriginCountryName":null,"OriginCountryCode":"GB","DepartureTimeZoneId":"Europe/London","DepartureTimeLocal":"2026-07-01T09:15:00","DepartureTime":"2026-07-01T08:15:00Z","DestinationLatitude":null,"DestinationLongitude":null,"DestinationCountryName":"France","DestinationCountryCode":null,"ArrivalTimeZoneId":null,"ArrivalTimeLocal":null,"ArrivalTime":"2026-07-01T09:30:00.5Z"}"#;

const JOURNEY_DOC: &str = r#"{"Id":null,"JourneyType":"Motorcycle","Name":"Ride","Description":null,"OriginAddress":"1 Rue","OriginLatitude":null,"OriginLongitude":null,"OriginCountryName":null,"OriginCountryCode":null,"DepartureTimeZoneId":null,"DepartureTimeLocal":null,"DepartureTime":"2026-07-01T10:00:00Z","DestinationAddress":null,"DestinationLatitude":48.86,"DestinationLongitude":2.33,"DestinationCountryName":null,"DestinationCountryCode":"FR","ArrivalTimeZoneId":"Romance Standard Time","ArrivalTimeLocal":"2026-07-01T12:00:00.123456","ArrivalTime":"2026-07-01T10:00:00.123456Z"}"#;

const HOTEL_DOC: &str = r#"{"Id":null,"Name":"Hotel du Louvre","Address":null,"Latitude":48.86,"Longitude":2.33,"CountryName":null,"CountryCode":"FR","TimeZoneId":"Romance Standard Time","CheckInTimeLocal":"2026-10-24T15:00:00","CheckInTime":"2026-10-24T13:00:00Z","CheckOutTimeLocal":"2026-10-26T11:00:00","CheckOutTime":"2026-10-26T10:00:00Z"}"#;

fn reread<T: Serialize + DeserializeOwned>(doc: &str) -> T {
    let read: T = serde_json::from_str(doc).expect("a stored document reads");
    assert_eq!(
        serde_json::to_string(&read).unwrap(),
        doc,
        "written back as read"
    );
    read
}

#[test]
fn stored_documents_read_and_write_back_unchanged() {
    let flight: Flight = reread(FLIGHT_DOC);
    assert_eq!(flight.id, None);
    assert_eq!(
        flight.departure.country_code.map(CountryCode::as_str),
        Some("GB")
    );
    assert_eq!(flight.arrival.time.local, None);
    let span = flight.with_id(4).span();
    assert_eq!(span.start.to_string(), "2026-07-01T08:15:00Z");
    assert_eq!(span.end.to_string(), "2026-07-01T09:30:00.5Z");
    assert_eq!(span.points, [Some((51.47, -0.45)), None]);

    let journey: Journey = reread(JOURNEY_DOC);
    assert_eq!(journey.journey_type, JourneyType::Motorcycle);
    assert_eq!(journey.span().points, [None, Some((48.86, 2.33))]);

    let hotel: Hotel = reread(HOTEL_DOC);
    let span = hotel.span();
    assert_eq!(span.points, [Some((48.86, 2.33)), None]);
    assert_eq!(span.end.to_string(), "2026-10-26T10:00:00Z");
}

#[test]
fn a_read_segment_carries_its_id_and_the_fields_left_out_are_null() {
    let doc = r#"{"JourneyType":"Walk","DepartureTime":"2026-07-01T10:00:00Z",
        "ArrivalTime":"2026-07-01T11:00:00Z"}"#;
    let journey: Journey = serde_json::from_str(doc).expect("reads");
    let answer = serde_json::to_value(journey.with_id(8)).unwrap();
    assert_eq!(answer["Id"], 8);
    assert_eq!(answer["JourneyType"], "Walk");
    assert!(answer["ArrivalTimeLocal"].is_null() && answer["Name"].is_null());
    assert_eq!(answer.as_object().map(|o| o.len()), Some(20));
}

#[test]
fn documents_that_break_a_rule_do_not_read() {
    for (field, bad) in [
        ("JourneyType", "\"Rocket\""),
        ("OriginCountryCode", "\"ZZ\""),
        ("DepartureTimeLocal", "\"tomorrow\""),
        ("DepartureTime", "null"),
    ] {
        let mut doc: serde_json::Value = serde_json::from_str(JOURNEY_DOC).unwrap();
        doc[field] = serde_json::from_str(bad).unwrap();
        assert!(
            serde_json::from_value::<Journey>(doc).is_err(),
            "{field} = {bad}"
        );
    }
}

#[test]
fn journey_types_in_any_case() {
    assert_eq!(
        JourneyType::parse_any_case(" motorCYCLE "),
        Some(JourneyType::Motorcycle)
    );
    assert_eq!(JourneyType::parse_any_case("Rocket"), None);
    assert_eq!(JourneyType::NAMES.len(), 9);
}
