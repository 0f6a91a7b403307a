use serde::Serialize;
use serde::de::DeserializeOwned;

use super::*;

fn fields(err: ValidationErrors) -> Vec<String> {
    err.0.into_iter().map(|e| e.field).collect()
}

fn text_of<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("serializes")
}

#[test]
fn flight_span_points_and_normalisation() {
    let flight = FlightRecord {
        id: Some(3),
        flight_number: Some(" BA 304 ".into()),
        origin_latitude: Some(51.47),
        origin_longitude: Some(-0.45),
        origin_country_code: Some("gb".into()),
        departure_time_zone_id: Some("Europe/London".into()),
        departure_time_local: Some("2026-07-01T09:15:00".into()),
        arrival_time: Some("2026-07-01T09:30:00Z".into()),
        ..Default::default()
    }
    .validated()
    .unwrap();
    assert_eq!(flight.id, None);
    assert_eq!(flight.flight_number.as_deref(), Some("BA 304"));
    assert_eq!(
        flight.departure.country_code.map(CountryCode::as_str),
        Some("GB")
    );
    assert_eq!(
        flight.departure.time.utc.to_string(),
        "2026-07-01T08:15:00Z"
    );
    assert_eq!(flight.arrival.time.local, None, "no arrival zone");
    let span = flight.span();
    assert_eq!(span.start.to_string(), "2026-07-01T08:15:00Z");
    assert_eq!(span.end.to_string(), "2026-07-01T09:30:00Z");
    assert_eq!(span.points, [Some((51.47, -0.45)), None]);
}

#[test]
fn every_problem_is_named() {
    let err = FlightRecord {
        flight_number: Some("BA/1".into()),
        origin_latitude: Some(95.0),
        origin_longitude: Some(0.0),
        destination_longitude: Some(1.0),
        destination_country_code: Some("ZZ".into()),
        departure_time: Some("2026-07-01T10:00:00Z".into()),
        arrival_time: Some("2026-07-01T09:00:00Z".into()),
        ..Default::default()
    }
    .validated()
    .unwrap_err();
    assert_eq!(
        fields(err),
        [
            "FlightNumber",
            "OriginLatitude",
            "DestinationLatitude",
            "DestinationCountryCode",
            "ArrivalTime"
        ]
    );
}

#[test]
fn journey_type_is_required_and_canonical() {
    let journey = |kind: Option<&str>| JourneyRecord {
        journey_type: kind.map(str::to_string),
        departure_time: Some("2026-07-01T10:00:00Z".into()),
        arrival_time: Some("2026-07-01T10:00:00Z".into()),
        ..Default::default()
    };
    let j = journey(Some("motorCYCLE")).validated().unwrap();
    assert_eq!(j.journey_type, JourneyType::Motorcycle);
    assert_eq!(
        JourneyRecord::from(&j).journey_type.as_deref(),
        Some("Motorcycle")
    );
    for bad in [None, Some(" "), Some("Rocket")] {
        assert_eq!(
            fields(journey(bad).validated().unwrap_err()),
            ["JourneyType"]
        );
    }
    let messages: Vec<String> = [None, Some("Rocket")]
        .into_iter()
        .map(|kind| journey(kind).validated().unwrap_err().0.remove(0).message)
        .collect();
    assert_eq!(
        messages,
        [
            "is required: one of Walk, Car, Taxi, Bus, Train, Ferry, Bicycle, Motorcycle, Other",
            "must be one of Walk, Car, Taxi, Bus, Train, Ferry, Bicycle, Motorcycle, Other"
        ]
    );
}

#[test]
fn hotel_uses_one_zone_for_both_pairs() {
    let hotel = HotelRecord {
        latitude: Some(48.86),
        longitude: Some(2.33),
        time_zone_id: Some(" Romance Standard Time ".into()),
        check_in_time_local: Some("2026-10-24T15:00:00".into()),
        check_out_time_local: Some("2026-10-26T11:00:00".into()),
        ..Default::default()
    }
    .validated()
    .unwrap();
    assert_eq!(hotel.check_in.utc.to_string(), "2026-10-24T13:00:00Z");
    assert_eq!(hotel.check_out.utc.to_string(), "2026-10-26T10:00:00Z");
    assert_eq!(hotel.time_zone_id.as_deref(), Some("Romance Standard Time"));
    assert_eq!(hotel.span().points, [Some((48.86, 2.33)), None]);
    let err = HotelRecord {
        check_in_time: Some("2026-10-24T13:00:00Z".into()),
        check_out_time_local: Some("2026-10-24T12:00:00".into()),
        ..Default::default()
    }
    .validated()
    .unwrap_err();
    assert_eq!(fields(err), ["TimeZoneId"]);
}

#[test]
fn a_local_time_computed_from_utc_is_written_without_offset() {
    let hotel = HotelRecord {
        time_zone_id: Some("Europe/Paris".into()),
        check_in_time: Some("2026-10-24T13:00:00.25+00:00".into()),
        check_out_time_local: Some("2026-10-26T11:00".into()),
        ..Default::default()
    }
    .validated()
    .unwrap();
    let record = HotelRecord::from(&hotel);
    assert_eq!(
        record.check_in_time_local.as_deref(),
        Some("2026-10-24T15:00:00.25")
    );
    assert_eq!(
        record.check_in_time.as_deref(),
        Some("2026-10-24T13:00:00.25Z")
    );
    assert_eq!(
        record.check_out_time_local.as_deref(),
        Some("2026-10-26T11:00:00")
    );
}

/// The domain's JSON reads as the wire record, which writes it back unchanged and is
/// what `From` makes of the domain record; checking that record again gives the domain
/// record back (but for what the server sets).
fn round_trip<R, T>(segment: T)
where
    R: SegmentRecord<Segment = T> + Serialize + PartialEq + std::fmt::Debug + for<'a> From<&'a T>,
    T: Segment + Serialize + DeserializeOwned + PartialEq + Clone + std::fmt::Debug,
{
    let domain = text_of(&segment);
    let record = R::from(&segment);
    assert_eq!(text_of(&record), domain);
    // `Id` is read-only: a client's is dropped.
    let read: R = serde_json::from_str(&domain).unwrap();
    let stored = read
        .validated()
        .expect("the domain record passes the rules");
    let read_back: T = serde_json::from_str(&text_of(&stored)).unwrap();
    assert_eq!(read_back, stored);
    let id = 5;
    assert_eq!(stored.with_id(id), segment.clone().with_id(id));
}

fn end(lat: f64, code: &str, zone: &str, local: &str, utc: &str) -> RouteEnd {
    RouteEnd {
        position: Some((lat, -0.45)),
        country_name: Some(format!("Country {code}")),
        country_code: CountryCode::parse(code),
        time_zone_id: Some(zone.into()),
        time: SegmentTime {
            local: Some(local.parse().unwrap()),
            utc: utc.parse().unwrap(),
        },
    }
}

#[test]
fn wire_form_matches_the_domain_form() {
    let departure = end(
        51.47,
        "GB",
        "Europe/London",
        "2026-07-01T09:15:00",
        "2026-07-01T08:15:00Z",
    );
    let arrival = end(
        40.64,
        "US",
        "America/New_York",
        "2026-07-01T12:05:00.5",
        "2026-07-01T16:05:00.5Z",
    );
    round_trip::<FlightRecord, _>(Flight {
        id: Some(7),
        flight_number: Some("BA117".into()),
        origin: Some("LHR".into()),
        destination: Some("JFK".into()),
        departure: departure.clone(),
        arrival: arrival.clone(),
        etag: None,
    });
    round_trip::<JourneyRecord, _>(Journey {
        id: Some(8),
        journey_type: JourneyType::Train,
        name: Some("Eurostar".into()),
        description: Some("d".into()),
        origin_address: Some("St Pancras".into()),
        destination_address: Some("Gare du Nord".into()),
        departure,
        arrival: RouteEnd {
            position: None,
            country_name: None,
            country_code: None,
            time_zone_id: None,
            time: SegmentTime {
                local: None,
                utc: "2026-07-01T18:00:00Z".parse().unwrap(),
            },
        },
        etag: None,
    });
    round_trip::<HotelRecord, _>(Hotel {
        id: Some(9),
        name: Some("Hotel du Louvre".into()),
        address: Some("Place André Malraux".into()),
        position: Some((48.8625, 2.3358)),
        country_name: Some("France".into()),
        country_code: CountryCode::parse("FR"),
        time_zone_id: Some("Europe/Paris".into()),
        check_in: SegmentTime {
            local: Some("2026-07-03T15:00:00".parse().unwrap()),
            utc: "2026-07-03T13:00:00Z".parse().unwrap(),
        },
        check_out: SegmentTime {
            local: Some("2026-07-05T11:00:00".parse().unwrap()),
            utc: "2026-07-05T09:00:00Z".parse().unwrap(),
        },
        etag: None,
    });
}
