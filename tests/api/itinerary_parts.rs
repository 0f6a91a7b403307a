//! Sub-resources of itineraries: flights, journeys, hotels, derived Start/End, segment
//! ownership, If-Match. The local/UTC rule and zone names are in `itinerary_time_zones.rs`,
//! travelers in `itinerary_travelers.rs`; both use the helpers here.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};
use crate::itineraries::{add, create_itinerary, flight};

backend_tests!(
    flight_crud_with_computed_times,
    journeys_and_their_types,
    hotels_and_check_out_order,
    start_and_end_follow_every_segment,
    segments_belong_to_one_itinerary_and_kind,
    if_match_on_sub_resources,
);

/// A fresh itinerary in tenant 1000; returns its path.
pub async fn itinerary(client: &Client) -> String {
    let id = create_itinerary(client, "1000", &json!({})).await;
    format!("/V2/1000/itineraries/{id}")
}

/// The itinerary's ETag.
pub async fn etag(client: &Client, path: &str) -> String {
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
