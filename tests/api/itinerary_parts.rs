//! Sub-resources of itineraries: flights, journeys, hotels (the local/UTC rule and
//! daylight-saving changes), travelers and their profile fields, derived Start/End.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};
use crate::itineraries::{add, create_itinerary, flight};

backend_tests!(
    flight_crud_with_computed_times,
    local_utc_rule_refusals_store_nothing,
    london_daylight_saving_gap_and_overlap,
    windows_and_unknown_zone_names,
    journeys_and_their_types,
    hotels_and_check_out_order,
    start_and_end_follow_every_segment,
    segments_belong_to_one_itinerary_and_kind,
    if_match_on_sub_resources,
    travelers_and_profile_fields,
    traveler_refusals_store_nothing,
    limits_per_itinerary,
);

/// A fresh itinerary in tenant 1000; returns its path.
async fn itinerary(client: &Client) -> String {
    let id = create_itinerary(client, "1000", &json!({})).await;
    format!("/V2/1000/itineraries/{id}")
}

/// The itinerary's ETag.
async fn etag(client: &Client, path: &str) -> String {
    client.get(path).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_string()
}

fn london_paris() -> Value {
    json!({
        "FlightNumber": "BA 304", "Origin": "LHR", "Destination": "CDG",
        "OriginLatitude": 51.47, "OriginLongitude": -0.4543,
        "OriginCountryName": "United Kingdom", "OriginCountryCode": "gb",
        "DepartureTimeZoneId": "Europe/London", "DepartureTimeLocal": "2026-07-01T09:15:00",
        "DestinationLatitude": 49.0097, "DestinationLongitude": 2.5479,
        "DestinationCountryName": "France", "DestinationCountryCode": "FR",
        "ArrivalTimeZoneId": "Europe/Paris", "ArrivalTime": "2026-07-01T09:30:00Z",
    })
}

async fn flight_crud_with_computed_times(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let mut body = london_paris();
    body["Id"] = json!(77);
    let id = add(&app.admin, &format!("{path}/flights"), &body).await;
    let one = format!("{path}/flights/{id}");
    let response = app.admin.get(&one).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["etag"].to_str().unwrap(),
        etag(&app.admin, &path).await,
        "the itinerary's version"
    );
    let got: Value = response.json().await.unwrap();
    assert_eq!(got["Id"], id.parse::<i64>().unwrap());
    assert_ne!(id, "77");
    assert_eq!(got["OriginCountryCode"], "GB", "upper-cased");
    assert_eq!(got["DepartureTimeLocal"], "2026-07-01T09:15:00");
    assert_eq!(
        got["DepartureTime"], "2026-07-01T08:15:00Z",
        "computed (BST)"
    );
    assert_eq!(got["ArrivalTime"], "2026-07-01T09:30:00Z");
    assert_eq!(
        got["ArrivalTimeLocal"], "2026-07-01T11:30:00",
        "computed (CEST)"
    );
    assert_eq!(got["FlightNumber"], "BA 304");
    assert_eq!(got["DestinationLatitude"], 49.0097);

    let itinerary = app.admin.get_json(&path).await;
    assert_eq!(itinerary["Start"], "2026-07-01T08:15:00Z");
    assert_eq!(itinerary["End"], "2026-07-01T09:30:00Z");
    assert_eq!(itinerary["Flights"][0], got);
    assert_eq!(
        app.admin.get_json(&format!("{path}/flights")).await,
        json!([got])
    );

    // PUT replaces: fields not sent are gone, times recomputed.
    let put = app
        .admin
        .put(
            &one,
            &json!({"FlightNumber": "AF1381", "DepartureTime": "2026-07-02T06:00:00",
                    "ArrivalTimeLocal": "2026-07-02T08:20:00", "ArrivalTimeZoneId": "Europe/Paris"}),
        )
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    let got = app.admin.get_json(&one).await;
    assert_eq!(got["FlightNumber"], "AF1381");
    assert!(got["Origin"].is_null());
    assert!(
        got["DepartureTimeLocal"].is_null(),
        "no zone: local unknown"
    );
    assert_eq!(got["DepartureTime"], "2026-07-02T06:00:00Z");
    assert_eq!(got["ArrivalTime"], "2026-07-02T06:20:00Z");
    let itinerary = app.admin.get_json(&path).await;
    assert_eq!(itinerary["Start"], "2026-07-02T06:00:00Z");
    assert_eq!(itinerary["End"], "2026-07-02T06:20:00Z");

    assert_eq!(app.admin.delete(&one).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&one).await).await;
    assert_not_found(app.admin.delete(&one).await).await;
    assert_not_found(app.admin.put(&one, &london_paris()).await).await;
    let itinerary = app.admin.get_json(&path).await;
    assert!(itinerary["Start"].is_null() && itinerary["End"].is_null());
    assert_eq!(itinerary["Flights"], json!([]));
}

/// Every refusal names its fields; neither POST nor PUT stores anything.
async fn local_utc_rule_refusals_store_nothing(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let base = flight("2026-07-01T08:00:00Z", "2026-07-01T10:00:00Z");
    let with = |changes: Value| {
        let mut body = base.clone();
        for (k, v) in changes.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            with(json!({"DepartureTime": null})),
            vec!["DepartureTimeLocal", "DepartureTime"],
        ),
        (
            with(json!({"DepartureTime": " ", "ArrivalTime": null})),
            vec!["DepartureTime", "ArrivalTimeLocal", "ArrivalTime"],
        ),
        (
            with(json!({"DepartureTime": null, "DepartureTimeLocal": "2026-07-01T09:00:00"})),
            vec!["DepartureTimeZoneId"],
        ),
        (
            with(
                json!({"DepartureTime": null, "DepartureTimeLocal": "2026-07-01T09:00:00+01:00",
                        "DepartureTimeZoneId": "Europe/London"}),
            ),
            vec!["DepartureTimeLocal"],
        ),
        (
            with(
                json!({"DepartureTime": null, "DepartureTimeLocal": "2026-07-01T09:00:00Z",
                        "DepartureTimeZoneId": "Europe/London"}),
            ),
            vec!["DepartureTimeLocal"],
        ),
        (
            with(json!({"DepartureTimeLocal": "2026-07-01T08:00:00",
                        "DepartureTimeZoneId": "Europe/London"})),
            vec!["DepartureTimeLocal"],
        ),
        (
            with(json!({"DepartureTime": "soon"})),
            vec!["DepartureTime"],
        ),
        (
            with(json!({"DepartureTime": "2026-07-01T08:00:00[Europe/London]"})),
            vec!["DepartureTime"],
        ),
        (
            with(json!({"DepartureTime": 1751356800})),
            vec!["DepartureTime"],
        ),
        (
            with(json!({"ArrivalTime": "2026-07-01T07:59:59Z"})),
            vec!["ArrivalTime"],
        ),
        (
            with(
                json!({"ArrivalTime": null, "ArrivalTimeLocal": "2026-07-01T08:30:00",
                        "ArrivalTimeZoneId": "Europe/London"}),
            ),
            vec!["ArrivalTimeLocal"],
        ),
        (
            with(json!({"OriginLatitude": 91, "OriginLongitude": 0})),
            vec!["OriginLatitude"],
        ),
        (
            with(json!({"DestinationLatitude": 0, "DestinationLongitude": -180.5})),
            vec!["DestinationLongitude"],
        ),
        (
            with(json!({"OriginLatitude": 51.5})),
            vec!["OriginLongitude"],
        ),
        (
            with(json!({"DestinationLongitude": 2.5})),
            vec!["DestinationLatitude"],
        ),
        (
            with(json!({"OriginLatitude": "north"})),
            vec!["OriginLatitude"],
        ),
        (
            with(json!({"OriginCountryCode": "XX"})),
            vec!["OriginCountryCode"],
        ),
        (
            with(json!({"OriginCountryCode": "GBR"})),
            vec!["OriginCountryCode"],
        ),
        (
            with(json!({"DestinationCountryCode": "U1"})),
            vec!["DestinationCountryCode"],
        ),
        (
            with(json!({"FlightNumber": "BA/117"})),
            vec!["FlightNumber"],
        ),
        (
            with(json!({"FlightNumber": "B".repeat(21)})),
            vec!["FlightNumber"],
        ),
        (with(json!({"Origin": "O".repeat(201)})), vec!["Origin"]),
        (with(json!({"Origin": 5})), vec!["Origin"]),
    ];
    let before = etag(&app.admin, &path).await;
    for (body, fields) in &cases {
        let response = app.admin.post(&format!("{path}/flights"), body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), *fields, "{body}");
    }
    assert_eq!(
        app.admin.get_json(&format!("{path}/flights")).await,
        json!([])
    );
    assert_eq!(etag(&app.admin, &path).await, before, "no write happened");

    let id = add(&app.admin, &format!("{path}/flights"), &base).await;
    let one = format!("{path}/flights/{id}");
    let stored = app.admin.get_json(&one).await;
    let before = etag(&app.admin, &path).await;
    for (body, fields) in &cases {
        let response = app.admin.put(&one, body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), *fields, "{body}");
    }
    assert_eq!(app.admin.get_json(&one).await, stored);
    assert_eq!(etag(&app.admin, &path).await, before);
    let itinerary = app.admin.get_json(&path).await;
    assert_eq!(itinerary["Start"], "2026-07-01T08:00:00Z");
    assert_eq!(itinerary["End"], "2026-07-01T10:00:00Z");
}

async fn london_daylight_saving_gap_and_overlap(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let london = |local: &str| {
        json!({"DepartureTimeZoneId": "Europe/London", "DepartureTimeLocal": local,
               "ArrivalTime": "2026-12-31T00:00:00Z"})
    };
    // Spring forward: 01:00-02:00 on 29 March 2026 does not exist in London.
    for gap in [
        "2026-03-29T01:00:00",
        "2026-03-29T01:30:00",
        "2026-03-29T01:59:59",
    ] {
        let response = app
            .admin
            .post(&format!("{path}/flights"), &london(gap))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["DepartureTimeLocal"], "{gap}");
        let message = problem["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("does not exist"), "{message}");
    }
    assert_eq!(
        app.admin.get_json(&format!("{path}/flights")).await,
        json!([])
    );
    // Either side of the gap is fine.
    for (local, utc) in [
        ("2026-03-29T00:59:59", "2026-03-29T00:59:59Z"),
        ("2026-03-29T02:00:00", "2026-03-29T01:00:00Z"),
    ] {
        let id = add(&app.admin, &format!("{path}/flights"), &london(local)).await;
        let got = app.admin.get_json(&format!("{path}/flights/{id}")).await;
        assert_eq!(got["DepartureTime"], utc, "{local}");
    }
    // Fall back: 01:00-02:00 on 25 October 2026 happens twice; the earlier (BST) is taken.
    let id = add(
        &app.admin,
        &format!("{path}/flights"),
        &london("2026-10-25T01:30:00"),
    )
    .await;
    let got = app.admin.get_json(&format!("{path}/flights/{id}")).await;
    assert_eq!(got["DepartureTime"], "2026-10-25T00:30:00Z");
    // The later instant, given in UTC, reads back as the same local time.
    let later = json!({"DepartureTimeZoneId": "Europe/London", "DepartureTime": "2026-10-25T01:30:00Z",
                       "ArrivalTime": "2026-12-31T00:00:00Z"});
    let id = add(&app.admin, &format!("{path}/flights"), &later).await;
    let got = app.admin.get_json(&format!("{path}/flights/{id}")).await;
    assert_eq!(got["DepartureTimeLocal"], "2026-10-25T01:30:00");
    // Both given: either instant of the overlap agrees with the local time.
    let mut both = later.clone();
    both["DepartureTimeLocal"] = json!("2026-10-25T01:30:00");
    add(&app.admin, &format!("{path}/flights"), &both).await;
    // UTC to local across the spring change: 00:59 GMT, then 02:00 BST.
    let journey = json!({"JourneyType": "Car",
        "DepartureTimeZoneId": "Europe/London", "DepartureTime": "2026-03-29T00:59:00Z",
        "ArrivalTimeZoneId": "Europe/London", "ArrivalTime": "2026-03-29T01:00:00Z"});
    let id = add(&app.admin, &format!("{path}/journeys"), &journey).await;
    let got = app.admin.get_json(&format!("{path}/journeys/{id}")).await;
    assert_eq!(got["DepartureTimeLocal"], "2026-03-29T00:59:00");
    assert_eq!(got["ArrivalTimeLocal"], "2026-03-29T02:00:00");
    // A one-hour overnight hotel stay across the autumn change, in local times.
    let hotel = json!({"Name": "Night", "TimeZoneId": "Europe/London",
        "CheckInTimeLocal": "2026-10-25T00:30:00", "CheckOutTimeLocal": "2026-10-25T02:30:00"});
    let id = add(&app.admin, &format!("{path}/hotels"), &hotel).await;
    let got = app.admin.get_json(&format!("{path}/hotels/{id}")).await;
    assert_eq!(got["CheckInTime"], "2026-10-24T23:30:00Z");
    assert_eq!(
        got["CheckOutTime"], "2026-10-25T02:30:00Z",
        "three real hours"
    );
}

async fn windows_and_unknown_zone_names(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let body = |departure_zone: &str, arrival_zone: &str| {
        json!({"DepartureTimeZoneId": departure_zone, "DepartureTimeLocal": "2026-01-15T10:00:00",
               "ArrivalTimeZoneId": arrival_zone, "ArrivalTimeLocal": "2026-01-15T13:00:00"})
    };
    let id = add(
        &app.admin,
        &format!("{path}/flights"),
        &body("GMT Standard Time", "Pacific Standard Time"),
    )
    .await;
    let got = app.admin.get_json(&format!("{path}/flights/{id}")).await;
    assert_eq!(got["DepartureTime"], "2026-01-15T10:00:00Z");
    assert_eq!(got["ArrivalTime"], "2026-01-15T21:00:00Z");
    assert_eq!(
        got["DepartureTimeZoneId"], "GMT Standard Time",
        "kept as sent"
    );
    // Windows names follow daylight saving too.
    let summer = json!({"DepartureTimeZoneId": "W. Europe Standard Time",
        "DepartureTimeLocal": "2026-07-15T10:00:00", "ArrivalTime": "2026-07-15T12:00:00Z"});
    let id = add(&app.admin, &format!("{path}/flights"), &summer).await;
    assert_eq!(
        app.admin.get_json(&format!("{path}/flights/{id}")).await["DepartureTime"],
        "2026-07-15T08:00:00Z"
    );
    let count = app
        .admin
        .get_json(&format!("{path}/flights"))
        .await
        .as_array()
        .unwrap()
        .len();
    for (departure, arrival, fields) in [
        ("Mars/Olympus", "UTC", vec!["DepartureTimeZoneId"]),
        ("UTC", "Atlantis Standard Time", vec!["ArrivalTimeZoneId"]),
        (
            "Europe/Lundon",
            "Nowhere",
            vec!["DepartureTimeZoneId", "ArrivalTimeZoneId"],
        ),
    ] {
        let response = app
            .admin
            .post(&format!("{path}/flights"), &body(departure, arrival))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{departure} {arrival}");
    }
    // An unknown zone is refused even when both times are given.
    let response = app
        .admin
        .post(
            &format!("{path}/hotels"),
            &json!({"TimeZoneId": "Mars/Olympus", "CheckInTime": "2026-01-15T10:00:00Z",
                    "CheckOutTime": "2026-01-16T10:00:00Z"}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["TimeZoneId"]);
    assert_eq!(
        app.admin
            .get_json(&format!("{path}/flights"))
            .await
            .as_array()
            .unwrap()
            .len(),
        count
    );
    assert_eq!(
        app.admin.get_json(&format!("{path}/hotels")).await,
        json!([])
    );
}

async fn journeys_and_their_types(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let journey = |kind: Value| {
        json!({"JourneyType": kind, "Name": "Leg", "OriginAddress": "Hotel",
               "DepartureTime": "2026-07-03T08:00:00Z", "ArrivalTime": "2026-07-03T09:00:00Z"})
    };
    for kind in [
        "Walk",
        "Car",
        "Taxi",
        "Bus",
        "Train",
        "Ferry",
        "Bicycle",
        "Motorcycle",
        "Other",
    ] {
        let id = add(
            &app.admin,
            &format!("{path}/journeys"),
            &journey(json!(kind.to_lowercase())),
        )
        .await;
        let got = app.admin.get_json(&format!("{path}/journeys/{id}")).await;
        assert_eq!(got["JourneyType"], kind, "stored in canonical case");
    }
    for (kind, field) in [
        (json!("Rocket"), "JourneyType"),
        (json!(null), "JourneyType"),
        (json!(""), "JourneyType"),
        (json!(1), "JourneyType"),
    ] {
        let response = app
            .admin
            .post(&format!("{path}/journeys"), &journey(kind.clone()))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{kind}");
    }
    let response = app
        .admin
        .post(
            &format!("{path}/journeys"),
            &json!({"JourneyType": "Bus", "Description": "d".repeat(4001),
                    "DepartureTime": "2026-07-03T08:00:00Z", "ArrivalTime": "2026-07-03T07:00:00Z",
                    "OriginCountryCode": "zz"}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["Description", "OriginCountryCode", "ArrivalTime"]
    );
    let list = app.admin.get_json(&format!("{path}/journeys")).await;
    assert_eq!(list.as_array().unwrap().len(), 9);
}

async fn hotels_and_check_out_order(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let hotel = json!({"Name": "Hotel du Louvre", "Address": "Place André Malraux",
        "Latitude": 48.8625, "Longitude": 2.3358, "CountryName": "France", "CountryCode": "fr",
        "TimeZoneId": "Europe/Paris", "CheckInTimeLocal": "2026-07-03T15:00:00",
        "CheckOutTime": "2026-07-05T09:00:00Z"});
    let id = add(&app.admin, &format!("{path}/hotels"), &hotel).await;
    let got = app.admin.get_json(&format!("{path}/hotels/{id}")).await;
    assert_eq!(got["CountryCode"], "FR");
    assert_eq!(got["CheckInTime"], "2026-07-03T13:00:00Z");
    assert_eq!(got["CheckOutTimeLocal"], "2026-07-05T11:00:00");
    for (changes, fields) in [
        (
            json!({"CheckOutTime": "2026-07-03T12:59:59Z"}),
            vec!["CheckOutTime"],
        ),
        (
            json!({"CheckOutTime": null, "CheckOutTimeLocal": "2026-07-03T14:00:00"}),
            vec!["CheckOutTimeLocal"],
        ),
        (
            json!({"CheckInTimeLocal": null}),
            vec!["CheckInTimeLocal", "CheckInTime"],
        ),
        (json!({"TimeZoneId": null}), vec!["TimeZoneId"]),
        (json!({"Latitude": 200}), vec!["Latitude"]),
        (json!({"Longitude": null}), vec!["Longitude"]),
        (json!({"CountryCode": "France"}), vec!["CountryCode"]),
        (json!({"Name": "n".repeat(201)}), vec!["Name"]),
    ] {
        let mut body = hotel.clone();
        for (k, v) in changes.as_object().unwrap() {
            body[k] = v.clone();
        }
        let response = app.admin.put(&format!("{path}/hotels/{id}"), &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{changes}");
    }
    assert_eq!(
        app.admin.get_json(&format!("{path}/hotels/{id}")).await,
        got
    );
    // A stay may end when it starts (an arrival equal to a departure likewise).
    let mut instant = hotel.clone();
    instant["CheckOutTime"] = json!("2026-07-03T13:00:00Z");
    add(&app.admin, &format!("{path}/hotels"), &instant).await;
}

async fn start_and_end_follow_every_segment(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let flight_id = add(
        &app.admin,
        &format!("{path}/flights"),
        &flight("2026-07-01T08:00:00Z", "2026-07-01T10:00:00Z"),
    )
    .await;
    let hotel_id = add(
        &app.admin,
        &format!("{path}/hotels"),
        &json!({"CheckInTime": "2026-07-01T14:00:00Z", "CheckOutTime": "2026-07-04T10:00:00Z"}),
    )
    .await;
    let journey_id = add(
        &app.admin,
        &format!("{path}/journeys"),
        &json!({"JourneyType": "Taxi", "DepartureTime": "2026-06-30T22:00:00Z",
                "ArrivalTime": "2026-07-01T06:00:00Z"}),
    )
    .await;
    let span = |it: &Value| (it["Start"].clone(), it["End"].clone());
    assert_eq!(
        span(&app.admin.get_json(&path).await),
        (json!("2026-06-30T22:00:00Z"), json!("2026-07-04T10:00:00Z"))
    );
    app.admin
        .delete(&format!("{path}/journeys/{journey_id}"))
        .await;
    assert_eq!(
        span(&app.admin.get_json(&path).await),
        (json!("2026-07-01T08:00:00Z"), json!("2026-07-04T10:00:00Z"))
    );
    app.admin
        .put(
            &format!("{path}/flights/{flight_id}"),
            &flight("2026-07-06T08:00:00Z", "2026-07-06T10:00:00Z"),
        )
        .await;
    assert_eq!(
        span(&app.admin.get_json(&path).await),
        (json!("2026-07-01T14:00:00Z"), json!("2026-07-06T10:00:00Z"))
    );
    app.admin.delete(&format!("{path}/hotels/{hotel_id}")).await;
    app.admin
        .delete(&format!("{path}/flights/{flight_id}"))
        .await;
    let it = app.admin.get_json(&path).await;
    assert_eq!(span(&it), (Value::Null, Value::Null));
    assert!(it["StartUserTimeZone"].is_null());
    // Segments are listed in start order.
    let late = add(
        &app.admin,
        &format!("{path}/flights"),
        &flight("2026-09-01T08:00:00Z", "2026-09-01T10:00:00Z"),
    )
    .await;
    let early = add(
        &app.admin,
        &format!("{path}/flights"),
        &flight("2026-08-01T08:00:00Z", "2026-08-01T10:00:00Z"),
    )
    .await;
    let listed: Vec<String> = app
        .admin
        .get_json(&format!("{path}/flights"))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["Id"].to_string())
        .collect();
    assert_eq!(listed, [early, late]);
}

async fn segments_belong_to_one_itinerary_and_kind(app: TestApp) {
    let a = itinerary(&app.admin).await;
    let b = itinerary(&app.admin).await;
    let flight_id = add(
        &app.admin,
        &format!("{a}/flights"),
        &flight("2026-07-01T08:00:00Z", "2026-07-01T10:00:00Z"),
    )
    .await;
    let traveler_id = add(
        &app.admin,
        &format!("{a}/travelers"),
        &json!({"EmailAddress": "t@example.com"}),
    )
    .await;
    for path in [
        format!("{b}/flights/{flight_id}"),
        format!("{a}/journeys/{flight_id}"),
        format!("{a}/hotels/{flight_id}"),
        format!("{b}/travelers/{traveler_id}"),
    ] {
        assert_not_found(app.admin.get(&path).await).await;
        assert_not_found(app.admin.delete(&path).await).await;
    }
    assert_not_found(
        app.admin
            .put(
                &format!("{b}/flights/{flight_id}"),
                &flight("2026-07-01T08:00:00Z", "2026-07-01T10:00:00Z"),
            )
            .await,
    )
    .await;
    assert_eq!(
        app.admin
            .get_json(&format!("{a}/flights/{flight_id}"))
            .await["FlightNumber"],
        "BA117"
    );
    assert_eq!(app.admin.get_json(&b).await["Start"], Value::Null);
    assert_eq!(
        app.admin.get_json(&format!("{a}/travelers")).await[0]["EmailAddress"],
        "t@example.com"
    );
}

async fn if_match_on_sub_resources(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let version = etag(&app.admin, &path).await;
    let stale = app
        .admin
        .request(Method::POST, &format!("{path}/flights"))
        .header("if-match", "\"stale\"")
        .json(&flight("2026-07-01T08:00:00Z", "2026-07-01T10:00:00Z"))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(
        app.admin.get_json(&format!("{path}/flights")).await,
        json!([])
    );
    let ok = app
        .admin
        .request(Method::POST, &format!("{path}/flights"))
        .header("if-match", &version)
        .json(&flight("2026-07-01T08:00:00Z", "2026-07-01T10:00:00Z"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let location = ok.headers()["location"].to_str().unwrap().to_string();
    // The flight's ETag is the itinerary's; a stale one no longer works.
    let current = app.admin.get(&location).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_string();
    assert_ne!(current, version);
    let cached = app
        .admin
        .request(Method::GET, &location)
        .header("if-none-match", &current)
        .send()
        .await
        .unwrap();
    assert_eq!(cached.status(), StatusCode::NOT_MODIFIED);
    let old = app
        .admin
        .request(Method::DELETE, &location)
        .header("if-match", &version)
        .send()
        .await
        .unwrap();
    assert_problem(old, 412, "precondition_failed").await;
    let delete = app
        .admin
        .request(Method::DELETE, &location)
        .header("if-match", &current)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), StatusCode::OK);
}

async fn travelers_and_profile_fields(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    let (jane_id, _) = app.create_user(&child, "jane@acme.example", "User").await;
    let (outsider_id, _) = app
        .create_user(&sibling, "outsider@acme.example", "User")
        .await;
    let profile = json!({"Citizenship": "British", "Address": "1 High Street", "City": "London",
        "State": "Greater London", "PostalCode": "SW1A 1AA", "Country": "United Kingdom",
        "DaytimePhone": "+44 20 7946 0958", "CellPhone": "+447700900123",
        "EmergencyContactName": "John Doe", "EmergencyContactTelephoneNumber": "+447700900124",
        "EmergencyContactName2": "Mary Doe", "EmergencyContactAddress2": "mary@example.com"});
    for (tenant, id) in [(&child, &jane_id), (&sibling, &outsider_id)] {
        let put = app
            .admin
            .put(&format!("/V2/{tenant}/userprofile/{id}"), &profile)
            .await;
        assert_eq!(put.status(), StatusCode::OK);
    }
    let (_, child_manager) = app
        .create_user(&child, "manager@acme.example", "Manager")
        .await;
    let id = create_itinerary(&child_manager, &child, &json!({})).await;
    let path = format!("/V2/{child}/itineraries/{id}");
    let jane = add(
        &child_manager,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": " JANE@acme.example ", "Firstname": "Jane", "Lastname": "Doe",
                "DateOfBirth": "1985-04-12", "PhoneNumber": "+447700900123",
                "Citizenship": "ignored", "Country": "ignored", "Id": 5}),
    )
    .await;
    let outsider = add(
        &child_manager,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "outsider@acme.example"}),
    )
    .await;
    let stranger = add(
        &child_manager,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "nobody@elsewhere.example", "Citizenship": "ignored"}),
    )
    .await;
    let got = child_manager
        .get_json(&format!("{path}/travelers/{jane}"))
        .await;
    assert_eq!(got["EmailAddress"], "JANE@acme.example");
    assert_eq!(got["Firstname"], "Jane");
    assert_eq!(got["DateOfBirth"], "1985-04-12T00:00:00Z");
    assert_eq!(got["Citizenship"], "British");
    assert_eq!(got["Address"], "1 High Street");
    assert_eq!(
        got["CityStatePostalCode"],
        "London, Greater London, SW1A 1AA"
    );
    assert_eq!(got["Country"], "United Kingdom");
    assert_eq!(got["PhoneNumbersAll"], "+44 20 7946 0958; +447700900123");
    assert_eq!(got["EmergencyContact1"], "John Doe, +447700900124");
    assert_eq!(got["EmergencyContact2"], "Mary Doe, mary@example.com");
    // A user outside the caller's scope, and no user at all: nothing copied.
    for other in [&outsider, &stranger] {
        let got = child_manager
            .get_json(&format!("{path}/travelers/{other}"))
            .await;
        for field in [
            "Citizenship",
            "Address",
            "Country",
            "PhoneNumbersAll",
            "EmergencyContact1",
        ] {
            assert!(got[field].is_null(), "{field} of {got}");
        }
    }
    // The root administrator's scope covers the sibling: the outsider is enriched there.
    let listed = app.admin.get_json(&format!("{path}/travelers")).await;
    assert_eq!(listed.as_array().unwrap().len(), 3);
    assert_eq!(listed[1]["Citizenship"], "British");
    // Profile fields are read at read time: a profile change shows at once.
    let mut changed = profile.clone();
    changed["Citizenship"] = json!("Irish");
    app.admin
        .put(&format!("/V2/{child}/userprofile/{jane_id}"), &changed)
        .await;
    let itinerary = child_manager.get_json(&path).await;
    assert_eq!(itinerary["Travelers"][0]["Citizenship"], "Irish");
    assert_eq!(
        itinerary["Travelers"][0]["Id"],
        jane.parse::<i64>().unwrap()
    );

    // Travelers are unique per itinerary (ignoring case); no PUT; DELETE removes.
    let response = child_manager
        .post(
            &format!("{path}/travelers"),
            &json!({"EmailAddress": "jane@ACME.example"}),
        )
        .await;
    assert_problem(response, 409, "conflict").await;
    let response = child_manager
        .put(
            &format!("{path}/travelers/{jane}"),
            &json!({"EmailAddress": "jane@acme.example"}),
        )
        .await;
    assert_problem(response, 405, "method_not_allowed").await;
    assert_eq!(
        child_manager
            .delete(&format!("{path}/travelers/{jane}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_not_found(child_manager.get(&format!("{path}/travelers/{jane}")).await).await;
    assert_eq!(
        child_manager
            .get_json(&format!("{path}/travelers"))
            .await
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn traveler_refusals_store_nothing(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let before = etag(&app.admin, &path).await;
    for (body, fields) in [
        (json!({}), vec!["EmailAddress"]),
        (json!({"EmailAddress": "  "}), vec!["EmailAddress"]),
        (
            json!({"EmailAddress": "not-an-address"}),
            vec!["EmailAddress"],
        ),
        (json!({"EmailAddress": "a@b"}), vec!["EmailAddress"]),
        (json!({"EmailAddress": 7}), vec!["EmailAddress"]),
        (
            json!({"EmailAddress": "a@example.com", "PhoneNumber": "07700 900123"}),
            vec!["PhoneNumber"],
        ),
        (
            json!({"EmailAddress": "a@example.com", "DateOfBirth": "2999-01-01"}),
            vec!["DateOfBirth"],
        ),
        (
            json!({"EmailAddress": "a@example.com", "DateOfBirth": "long ago"}),
            vec!["DateOfBirth"],
        ),
        (
            json!({"EmailAddress": "a@example.com", "Firstname": "f".repeat(201)}),
            vec!["Firstname"],
        ),
    ] {
        let response = app.admin.post(&format!("{path}/travelers"), &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}");
    }
    assert_eq!(
        app.admin.get_json(&format!("{path}/travelers")).await,
        json!([])
    );
    assert_eq!(etag(&app.admin, &path).await, before);
}

async fn limits_per_itinerary(app: TestApp) {
    // 100 travelers at most; the 101st is a conflict and changes nothing.
    let path = itinerary(&app.admin).await;
    for i in 0..100 {
        add(
            &app.admin,
            &format!("{path}/travelers"),
            &json!({"EmailAddress": format!("t{i}@example.com")}),
        )
        .await;
    }
    let before = etag(&app.admin, &path).await;
    let response = app
        .admin
        .post(
            &format!("{path}/travelers"),
            &json!({"EmailAddress": "one-more@example.com"}),
        )
        .await;
    assert_problem(response, 409, "conflict").await;
    assert_eq!(etag(&app.admin, &path).await, before);
}
