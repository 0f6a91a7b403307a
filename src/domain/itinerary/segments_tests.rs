use super::*;

fn fields(err: ValidationErrors) -> Vec<String> {
    err.0.into_iter().map(|e| e.field).collect()
}

#[test]
fn flight_span_points_and_normalisation() {
    let (flight, span) = Flight {
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
    assert_eq!(flight.origin_country_code.as_deref(), Some("GB"));
    assert_eq!(
        flight.departure_time.as_deref(),
        Some("2026-07-01T08:15:00Z")
    );
    assert_eq!(flight.arrival_time_local, None, "no arrival zone");
    assert_eq!(span.start.to_string(), "2026-07-01T08:15:00Z");
    assert_eq!(span.end.to_string(), "2026-07-01T09:30:00Z");
    assert_eq!(span.points, [Some((51.47, -0.45)), None]);
}

#[test]
fn every_problem_is_named() {
    let err = Flight {
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
    let journey = |kind: Option<&str>| Journey {
        journey_type: kind.map(str::to_string),
        departure_time: Some("2026-07-01T10:00:00Z".into()),
        arrival_time: Some("2026-07-01T10:00:00Z".into()),
        ..Default::default()
    };
    let (j, _) = journey(Some("motorCYCLE")).validated().unwrap();
    assert_eq!(j.journey_type.as_deref(), Some("Motorcycle"));
    for bad in [None, Some(" "), Some("Rocket")] {
        assert_eq!(
            fields(journey(bad).validated().unwrap_err()),
            ["JourneyType"]
        );
    }
}

#[test]
fn hotel_uses_one_zone_for_both_pairs() {
    let (hotel, span) = Hotel {
        latitude: Some(48.86),
        longitude: Some(2.33),
        time_zone_id: Some("Romance Standard Time".into()),
        check_in_time_local: Some("2026-10-24T15:00:00".into()),
        check_out_time_local: Some("2026-10-26T11:00:00".into()),
        ..Default::default()
    }
    .validated()
    .unwrap();
    assert_eq!(hotel.check_in_time.as_deref(), Some("2026-10-24T13:00:00Z"));
    assert_eq!(
        hotel.check_out_time.as_deref(),
        Some("2026-10-26T10:00:00Z")
    );
    assert_eq!(span.points, [Some((48.86, 2.33)), None]);
    let err = Hotel {
        check_in_time: Some("2026-10-24T13:00:00Z".into()),
        check_out_time_local: Some("2026-10-24T12:00:00".into()),
        ..Default::default()
    }
    .validated()
    .unwrap_err();
    assert_eq!(fields(err), ["TimeZoneId"]);
}
