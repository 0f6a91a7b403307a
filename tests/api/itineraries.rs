//! Itineraries themselves: CRUD, bad bodies, ids in paths, times in the caller's zone,
//! ETags, XML, OpenAPI. Roles and tenant scope are in `itinerary_access.rs`, listings and
//! their filters in `itinerary_listings.rs`, sub-resources in `itinerary_parts.rs`, risk
//! regions in `risk_regions.rs`. The helpers here are shared by those files.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    create_get_put_delete,
    bad_bodies_are_refused_and_nothing_stored,
    ids_in_paths,
    times_in_the_callers_time_zone,
    etag_and_if_match,
    xml_round_trip,
    openapi_describes_every_itinerary_route,
);

/// POSTs an itinerary that must be accepted; returns its id.
pub async fn create_itinerary(client: &Client, tenant: &str, body: &Value) -> String {
    let response = client
        .post(&format!("/V2/{tenant}/itineraries"), body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create itinerary {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let id = location.rsplit('/').next().unwrap().to_string();
    assert_eq!(location, format!("/V2/{tenant}/itineraries/{id}"));
    assert!(id.parse::<i32>().is_ok(), "int32 id {id}");
    assert!(response.text().await.unwrap().is_empty(), "no body");
    id
}

/// A flight between two UTC times (no zones, no positions).
pub fn flight(departure: &str, arrival: &str) -> Value {
    json!({"FlightNumber": "BA117", "Origin": "LHR", "Destination": "JFK",
           "DepartureTime": departure, "ArrivalTime": arrival})
}

/// POSTs a sub-resource that must be accepted; returns its id.
pub async fn add(client: &Client, path: &str, body: &Value) -> String {
    let response = client.post(path, body).await;
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(
        status,
        StatusCode::OK,
        "POST {path} {body}: {}",
        response.text().await.unwrap()
    );
    let location = location.expect("Location");
    assert!(location.starts_with(path), "{location}");
    location.rsplit('/').next().unwrap().to_string()
}

/// The ids of a listing, in order.
pub async fn ids(client: &Client, path: &str) -> Vec<i64> {
    let list = client.get_json(path).await;
    list.as_array()
        .unwrap_or_else(|| panic!("array from {path}: {list}"))
        .iter()
        .map(|i| i["Id"].as_i64().unwrap())
        .collect()
}

pub fn id_list(ids: &[&String]) -> Vec<i64> {
    ids.iter().map(|i| i.parse().unwrap()).collect()
}

/// Creates an itinerary with one flight between two UTC times; returns its id.
pub async fn with_flight(client: &Client, tenant: &str, departure: &str, arrival: &str) -> String {
    let id = create_itinerary(client, tenant, &json!({})).await;
    add(
        client,
        &format!("/V2/{tenant}/itineraries/{id}/flights"),
        &flight(departure, arrival),
    )
    .await;
    id
}

async fn create_get_put_delete(app: TestApp) {
    let id = create_itinerary(
        &app.admin,
        "1000",
        &json!({"PnrNumber": "x7k2qp", "Notes": "Conference", "Id": 999, "OverallRisk": 5,
                "Start": "2020-01-01T00:00:00Z", "Flights": [flight("2026-07-01T08:00:00Z", "2026-07-01T16:00:00Z")]}),
    )
    .await;
    assert_ne!(id, "999", "Id is assigned by the server");
    let path = format!("/V2/1000/itineraries/{id}");
    let response = app.admin.get(&path).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().contains_key("etag"));
    let got: Value = response.json().await.unwrap();
    assert_eq!(got["Id"], id.parse::<i64>().unwrap());
    assert_eq!(got["TenantCode"], "1000");
    assert_eq!(got["PnrNumber"], "x7k2qp");
    assert_eq!(got["Notes"], "Conference");
    assert_eq!(got["ApprovalState"], "NoDecision");
    assert_eq!(got["OverallRisk"], 0);
    assert_eq!(got["UserTimeZoneId"], "UTC");
    for derived in [
        "Start",
        "End",
        "StartUserTimeZone",
        "EndUserTimeZone",
        "Summary",
    ] {
        assert!(got[derived].is_null(), "{derived} in {got}");
    }
    for part in ["Travelers", "Hotels", "Flights", "Journeys", "Regions"] {
        assert_eq!(got[part], json!([]), "{part}: segments are sub-resources");
    }

    let put = app
        .admin
        .put(
            &path,
            &json!({"ApprovalState": 1, "PnrNumber": "AB-12", "Summary": "Trip", "ExternalId": "E1"}),
        )
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    let got = app.admin.get_json(&path).await;
    assert_eq!(got["ApprovalState"], "Approved");
    assert_eq!(got["PnrNumber"], "AB-12");
    assert!(got["Notes"].is_null(), "PUT replaces: Notes cleared");
    assert_eq!(got["Summary"], "Trip");
    assert_eq!(got["ExternalId"], "E1");
    app.admin
        .put(&path, &json!({"ApprovalState": "declined"}))
        .await;
    assert_eq!(app.admin.get_json(&path).await["ApprovalState"], "Declined");
    // Null keeps the decision; sending a read itinerary back is accepted.
    let mut read = app.admin.get_json(&path).await;
    read["ApprovalState"] = Value::Null;
    read["Notes"] = json!("Back");
    assert_eq!(app.admin.put(&path, &read).await.status(), StatusCode::OK);
    let got = app.admin.get_json(&path).await;
    assert_eq!(got["ApprovalState"], "Declined");
    assert_eq!(got["Notes"], "Back");

    // DELETE takes the sub-resources with it.
    let flight_id = add(
        &app.admin,
        &format!("{path}/flights"),
        &flight("2026-07-01T08:00:00Z", "2026-07-01T16:00:00Z"),
    )
    .await;
    add(
        &app.admin,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "t@example.com"}),
    )
    .await;
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
    assert_not_found(app.admin.get(&format!("{path}/flights/{flight_id}")).await).await;
    assert_not_found(app.admin.get(&format!("{path}/travelers")).await).await;
    assert_not_found(app.admin.delete(&path).await).await;
    assert!(ids(&app.admin, "/V2/1000/itineraries").await.is_empty());
}

async fn bad_bodies_are_refused_and_nothing_stored(app: TestApp) {
    let cases: Vec<(Value, &str)> = vec![
        (json!({"PnrNumber": "X".repeat(21)}), "PnrNumber"),
        (json!({"PnrNumber": "has space"}), "PnrNumber"),
        (json!({"PnrNumber": 123456}), "PnrNumber"),
        (json!({"Notes": "n".repeat(4001)}), "Notes"),
        (json!({"Notes": ["a"]}), "Notes"),
        (json!({"Summary": "s".repeat(1001)}), "Summary"),
        (json!({"ExternalId": "e".repeat(201)}), "ExternalId"),
        (json!({"ApprovalState": "Maybe"}), "ApprovalState"),
        (json!({"ApprovalState": 3}), "ApprovalState"),
        (json!({"ApprovalState": -1}), "ApprovalState"),
        (json!({"ApprovalState": 1.5}), "ApprovalState"),
        (json!({"ApprovalState": true}), "ApprovalState"),
    ];
    for (body, field) in &cases {
        let response = app.admin.post("/V2/1000/itineraries", body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [*field], "{body}");
    }
    let malformed = app
        .admin
        .request(Method::POST, "/V2/1000/itineraries")
        .header("content-type", "application/json")
        .body("{\"PnrNumber\": ")
        .send()
        .await
        .unwrap();
    assert_problem(malformed, 400, "malformed_json").await;
    let empty = app
        .admin
        .request(Method::POST, "/V2/1000/itineraries")
        .send()
        .await
        .unwrap();
    assert_problem(empty, 400, "missing_body").await;
    assert!(ids(&app.admin, "/V2/1000/itineraries").await.is_empty());

    // The same bodies change nothing on PUT.
    let id = create_itinerary(&app.admin, "1000", &json!({"PnrNumber": "KEEP1"})).await;
    let path = format!("/V2/1000/itineraries/{id}");
    let before = app.admin.get(&path).await;
    let etag = before.headers()["etag"].clone();
    let before: Value = before.json().await.unwrap();
    for (body, field) in &cases {
        let problem =
            assert_problem(app.admin.put(&path, body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [*field], "{body}");
    }
    let after = app.admin.get(&path).await;
    assert_eq!(after.headers()["etag"], etag, "no write happened");
    assert_eq!(after.json::<Value>().await.unwrap(), before);
}

async fn ids_in_paths(app: TestApp) {
    let id = create_itinerary(&app.admin, "1000", &json!({})).await;
    for bad in ["abc", "2147483648", "1.5", "-2147483649", "1e3"] {
        for path in [
            format!("/V2/1000/itineraries/{bad}"),
            format!("/V2/1000/itineraries/{bad}/flights"),
            format!("/V2/1000/itineraries/{bad}/travelers/1"),
            format!("/V2/1000/itineraries/{bad}/regions"),
        ] {
            let problem =
                assert_problem(app.admin.get(&path).await, 400, "validation_failed").await;
            assert_eq!(problem_fields(&problem), ["itineraryId"], "{path}");
        }
        let problem = assert_problem(
            app.admin
                .put(&format!("/V2/1000/itineraries/{bad}"), &json!({}))
                .await,
            400,
            "validation_failed",
        )
        .await;
        assert_eq!(problem_fields(&problem), ["itineraryId"]);
        for (kind, parameter) in [
            ("flights", "flightId"),
            ("journeys", "journeyId"),
            ("hotels", "hotelId"),
            ("travelers", "travelerId"),
        ] {
            let path = format!("/V2/1000/itineraries/{id}/{kind}/{bad}");
            let problem =
                assert_problem(app.admin.get(&path).await, 400, "validation_failed").await;
            assert_eq!(problem_fields(&problem), [parameter], "{path}");
            let problem =
                assert_problem(app.admin.delete(&path).await, 400, "validation_failed").await;
            assert_eq!(problem_fields(&problem), [parameter], "{path}");
        }
    }
    for unknown in ["0", "-1", "2147483647", "99999"] {
        assert_not_found(
            app.admin
                .get(&format!("/V2/1000/itineraries/{unknown}"))
                .await,
        )
        .await;
        assert_not_found(
            app.admin
                .delete(&format!("/V2/1000/itineraries/{unknown}"))
                .await,
        )
        .await;
        for kind in ["flights", "journeys", "hotels", "travelers"] {
            assert_not_found(
                app.admin
                    .get(&format!("/V2/1000/itineraries/{id}/{kind}/{unknown}"))
                    .await,
            )
            .await;
        }
    }
    // Travelers have no PUT.
    let response = app
        .admin
        .put(
            &format!("/V2/1000/itineraries/{id}/travelers/1"),
            &json!({"EmailAddress": "a@example.com"}),
        )
        .await;
    assert_problem(response, 405, "method_not_allowed").await;
}

async fn times_in_the_callers_time_zone(app: TestApp) {
    let (alice_id, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let id = create_itinerary(&alice, "1000", &json!({})).await;
    let path = format!("/V2/1000/itineraries/{id}");
    add(
        &alice,
        &format!("{path}/flights"),
        &flight("2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z"),
    )
    .await;
    let got = alice.get_json(&path).await;
    assert_eq!(got["Start"], "2026-03-29T00:30:00Z");
    assert_eq!(got["End"], "2026-03-29T01:30:00Z");
    assert_eq!(got["UserTimeZoneId"], "UTC");
    assert_eq!(got["StartUserTimeZone"], "2026-03-29T00:30:00");

    // Across the spring change in the caller's own zone (a Windows name works too).
    for (zone, start, end) in [
        (
            "Europe/London",
            "2026-03-29T00:30:00",
            "2026-03-29T02:30:00",
        ),
        (
            "GMT Standard Time",
            "2026-03-29T00:30:00",
            "2026-03-29T02:30:00",
        ),
        (
            "America/New_York",
            "2026-03-28T20:30:00",
            "2026-03-28T21:30:00",
        ),
    ] {
        let put = alice
            .put(
                &format!("/V2/1000/userprofile/{alice_id}"),
                &json!({"TimeZoneId": zone}),
            )
            .await;
        assert_eq!(put.status(), StatusCode::OK);
        let got = alice.get_json(&path).await;
        assert_eq!(got["UserTimeZoneId"], zone);
        assert_eq!(got["StartUserTimeZone"], start, "{zone}");
        assert_eq!(got["EndUserTimeZone"], end, "{zone}");
        let listed = alice.get_json("/V2/1000/itineraries").await;
        assert_eq!(listed[0]["EndUserTimeZone"], end);
    }
    // Another reader sees the same itinerary in their own zone.
    let admin = app.admin.get_json(&path).await;
    assert_eq!(admin["UserTimeZoneId"], "UTC");
    assert_eq!(admin["EndUserTimeZone"], "2026-03-29T01:30:00");
}

async fn etag_and_if_match(app: TestApp) {
    let id = create_itinerary(&app.admin, "1000", &json!({})).await;
    let path = format!("/V2/1000/itineraries/{id}");
    let etag = app.admin.get(&path).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_string();
    let cached = app
        .admin
        .request(Method::GET, &path)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(cached.status(), StatusCode::NOT_MODIFIED);
    let stale = app
        .admin
        .request(Method::PUT, &path)
        .header("if-match", "\"stale\"")
        .json(&json!({"Notes": "x"}))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert!(app.admin.get_json(&path).await["Notes"].is_null());
    // A sub-resource change makes a new version of the itinerary.
    add(
        &app.admin,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "t@example.com"}),
    )
    .await;
    let newer = app.admin.get(&path).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_string();
    assert_ne!(newer, etag);
    let old = app
        .admin
        .request(Method::DELETE, &path)
        .header("if-match", &etag)
        .send()
        .await
        .unwrap();
    assert_problem(old, 412, "precondition_failed").await;
    let ok = app
        .admin
        .request(Method::PUT, &path)
        .header("if-match", &newer)
        .json(&json!({"Notes": "y"}))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(app.admin.get_json(&path).await["Notes"], "y");
}

async fn xml_round_trip(app: TestApp) {
    let response = app
        .admin
        .request(Method::POST, "/V2/1000/itineraries")
        .header("content-type", "application/xml")
        .body("<Itinerary><PnrNumber>XML123</PnrNumber><Notes>From XML</Notes></Itinerary>")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let flight_xml = "<Flight><FlightNumber>AF1381</FlightNumber><Origin>LHR</Origin>\
        <OriginLatitude>51.47</OriginLatitude><OriginLongitude>-0.4543</OriginLongitude>\
        <OriginCountryCode>gb</OriginCountryCode><DepartureTimeZoneId>Europe/London</DepartureTimeZoneId>\
        <DepartureTimeLocal>2026-07-01T09:15:00</DepartureTimeLocal>\
        <ArrivalTimeZoneId>Romance Standard Time</ArrivalTimeZoneId>\
        <ArrivalTimeLocal>2026-07-01T11:30:00</ArrivalTimeLocal></Flight>";
    let response = app
        .admin
        .request(Method::POST, &format!("{location}/flights"))
        .header("content-type", "application/xml")
        .body(flight_xml)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let put = app
        .admin
        .request(Method::PUT, &location)
        .header("content-type", "application/xml")
        .body(
            "<Itinerary><ApprovalState>1</ApprovalState><PnrNumber>XML123</PnrNumber></Itinerary>",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::OK);
    let got = app.admin.get_json(&location).await;
    assert_eq!(got["ApprovalState"], "Approved");
    assert_eq!(got["Flights"][0]["OriginCountryCode"], "GB");
    assert_eq!(got["Flights"][0]["DepartureTime"], "2026-07-01T08:15:00Z");
    assert_eq!(got["Flights"][0]["ArrivalTime"], "2026-07-01T09:30:00Z");
    let xml = app
        .admin
        .request(Method::GET, "/V2/1000/itineraries")
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(xml.contains("<ArrayOfItinerary>"), "{xml}");
    assert!(xml.contains("<FlightNumber>AF1381</FlightNumber>"), "{xml}");
    let csv = app
        .admin
        .request(Method::GET, "/V2/1000/itineraries")
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), StatusCode::OK);
}

async fn openapi_describes_every_itinerary_route(app: TestApp) {
    let doc: Value = app
        .anonymous()
        .get("/openapi.json")
        .await
        .json()
        .await
        .unwrap();
    let base = "/V2/{tenantVarCode}/itineraries/{itineraryId}";
    for (path, methods, tag) in [
        (
            "/V2/{tenantVarCode}/itineraries".to_string(),
            &["get", "post"][..],
            "Itineraries",
        ),
        (
            "/V2/{tenantVarCode}/itinerariesList".to_string(),
            &["get"],
            "Itineraries",
        ),
        (base.to_string(), &["get", "put", "delete"], "Itineraries"),
        (format!("{base}/flights"), &["get", "post"], "Itineraries"),
        (
            format!("{base}/flights/{{flightId}}"),
            &["get", "put", "delete"],
            "Itineraries",
        ),
        (format!("{base}/journeys"), &["get", "post"], "Itineraries"),
        (
            format!("{base}/journeys/{{journeyId}}"),
            &["get", "put", "delete"],
            "Itineraries",
        ),
        (format!("{base}/hotels"), &["get", "post"], "Itineraries"),
        (
            format!("{base}/hotels/{{hotelId}}"),
            &["get", "put", "delete"],
            "Itineraries",
        ),
        (format!("{base}/travelers"), &["get", "post"], "Itineraries"),
        (
            format!("{base}/travelers/{{travelerId}}"),
            &["get", "delete"],
            "Itineraries",
        ),
        (format!("{base}/regions"), &["get"], "Itineraries"),
        (
            format!("{base}/regions/{{geometryId}}"),
            &["post", "delete"],
            "Itineraries",
        ),
        (
            "/V2/{tenantVarCode}/riskregions".to_string(),
            &["get", "post"],
            "Risk regions",
        ),
        (
            "/V2/{tenantVarCode}/riskregions/{geometryId}".to_string(),
            &["get", "put", "delete"],
            "Risk regions",
        ),
    ] {
        let operations = doc["paths"][&path]
            .as_object()
            .unwrap_or_else(|| panic!("{path} is documented"));
        let mut documented: Vec<&str> = operations
            .keys()
            .map(String::as_str)
            .filter(|m| ["get", "put", "post", "delete", "patch"].contains(m))
            .collect();
        documented.sort();
        let mut expected = methods.to_vec();
        expected.sort();
        assert_eq!(documented, expected, "{path}");
        for method in methods {
            assert_eq!(operations[*method]["tags"], json!([tag]), "{method} {path}");
            assert!(
                operations[*method]["summary"].is_string(),
                "{method} {path}"
            );
        }
    }
    let tags: Vec<&str> = doc["tags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tags.contains(&"Itineraries") && tags.contains(&"Risk regions"));
}
