//! Segment times: the local/UTC rule, London's daylight-saving gap and overlap, zone names.

use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_problem, problem_fields};
use crate::itineraries::{add, flight};
use crate::itinerary_parts::{etag, itinerary};

backend_tests!(
    local_utc_rule_refusals_store_nothing,
    london_daylight_saving_gap_and_overlap,
    windows_and_unknown_zone_names,
);

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
