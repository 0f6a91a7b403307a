//! Itineraries themselves: CRUD, roles, listings and their filters, paging, tenant
//! scope. Sub-resources are in `itinerary_parts.rs`, risk regions in `risk_regions.rs`.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    create_get_put_delete,
    bad_bodies_are_refused_and_nothing_stored,
    ids_in_paths,
    user_role_sees_and_changes_only_its_own,
    only_managers_decide_approval,
    read_only_reads_its_own_and_changes_nothing,
    travelers_see_their_itineraries_and_by_traveler_only,
    window_and_approval_filters,
    bad_query_parameters_are_named,
    pnr_number_ignores_every_other_parameter,
    paged_list,
    tenant_scope,
    times_in_the_callers_time_zone,
    etag_and_if_match,
    deleting_the_owner_or_the_tenant,
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

async fn user_role_sees_and_changes_only_its_own(app: TestApp) {
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let (_, bob) = app.create_user("1000", "bob@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    let mine = create_itinerary(&alice, "1000", &json!({"Notes": "Alice's"})).await;
    let bobs = create_itinerary(&bob, "1000", &json!({"Notes": "Bob's"})).await;
    let admins = create_itinerary(&app.admin, "1000", &json!({})).await;

    assert_eq!(ids(&alice, "/V2/1000/itineraries").await, id_list(&[&mine]));
    assert_eq!(
        ids(&alice, "/V2/1000/itinerariesList").await,
        id_list(&[&mine])
    );
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries").await,
        id_list(&[&mine, &bobs, &admins])
    );
    let bobs_path = format!("/V2/1000/itineraries/{bobs}");
    assert_not_found(alice.get(&bobs_path).await).await;
    assert_not_found(alice.put(&bobs_path, &json!({"Notes": "mine now"})).await).await;
    assert_not_found(alice.delete(&bobs_path).await).await;
    assert_not_found(
        alice
            .post(
                &format!("{bobs_path}/flights"),
                &flight("2026-07-01T08:00:00Z", "2026-07-01T09:00:00Z"),
            )
            .await,
    )
    .await;
    assert_not_found(alice.get(&format!("{bobs_path}/travelers")).await).await;
    assert_eq!(manager.get_json(&bobs_path).await["Notes"], "Bob's");

    let mine_path = format!("/V2/1000/itineraries/{mine}");
    assert_eq!(
        alice
            .put(&mine_path, &json!({"Notes": "Changed"}))
            .await
            .status(),
        StatusCode::OK
    );
    add(
        &alice,
        &format!("{mine_path}/flights"),
        &flight("2026-07-01T08:00:00Z", "2026-07-01T09:00:00Z"),
    )
    .await;
    // A manager changes anyone's itinerary in scope.
    assert_eq!(
        manager
            .put(&mine_path, &json!({"Notes": "By manager"}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(alice.get_json(&mine_path).await["Notes"], "By manager");
    assert_eq!(alice.delete(&mine_path).await.status(), StatusCode::OK);
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries").await,
        id_list(&[&bobs, &admins])
    );
}

async fn only_managers_decide_approval(app: TestApp) {
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    // A User may not create an itinerary already decided.
    for state in [json!("Approved"), json!(2)] {
        let response = alice
            .post("/V2/1000/itineraries", &json!({"ApprovalState": state}))
            .await;
        assert_problem(response, 403, "forbidden").await;
    }
    assert!(ids(&manager, "/V2/1000/itineraries").await.is_empty());
    let id = create_itinerary(&alice, "1000", &json!({"ApprovalState": "NoDecision"})).await;
    let path = format!("/V2/1000/itineraries/{id}");
    for state in [json!(1), json!("Approved"), json!("Declined")] {
        let response = alice
            .put(&path, &json!({"ApprovalState": state, "Notes": "x"}))
            .await;
        assert_problem(response, 403, "forbidden").await;
    }
    let got = alice.get_json(&path).await;
    assert_eq!(got["ApprovalState"], "NoDecision");
    assert!(got["Notes"].is_null(), "a refused PUT changes nothing");
    // Sending the current state back is fine.
    assert_eq!(
        alice
            .put(&path, &json!({"ApprovalState": 0, "Notes": "same"}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        manager
            .put(&path, &json!({"ApprovalState": 1, "Notes": "same"}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(alice.get_json(&path).await["ApprovalState"], "Approved");
    let read = alice.get_json(&path).await;
    assert_eq!(alice.put(&path, &read).await.status(), StatusCode::OK);
    assert_problem(
        alice
            .put(&path, &json!({"ApprovalState": "NoDecision"}))
            .await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(alice.get_json(&path).await["ApprovalState"], "Approved");
    // A manager may create one already approved.
    let approved = create_itinerary(&manager, "1000", &json!({"ApprovalState": "Approved"})).await;
    assert_eq!(
        manager
            .get_json(&format!("/V2/1000/itineraries/{approved}"))
            .await["ApprovalState"],
        "Approved"
    );
}

async fn read_only_reads_its_own_and_changes_nothing(app: TestApp) {
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    assert_problem(
        reader.post("/V2/1000/itineraries", &json!({})).await,
        403,
        "forbidden",
    )
    .await;
    let other = create_itinerary(&app.admin, "1000", &json!({})).await;
    let named = create_itinerary(&app.admin, "1000", &json!({"Notes": "named"})).await;
    add(
        &app.admin,
        &format!("/V2/1000/itineraries/{named}/travelers"),
        &json!({"EmailAddress": "READER@example.com"}),
    )
    .await;
    assert_eq!(
        ids(&reader, "/V2/1000/itineraries").await,
        id_list(&[&named])
    );
    assert_not_found(reader.get(&format!("/V2/1000/itineraries/{other}")).await).await;
    let path = format!("/V2/1000/itineraries/{named}");
    assert_eq!(reader.get_json(&path).await["Notes"], "named");
    assert_problem(
        reader.put(&path, &json!({"Notes": "no"})).await,
        403,
        "forbidden",
    )
    .await;
    assert_problem(reader.delete(&path).await, 403, "forbidden").await;
    assert_problem(
        reader
            .post(
                &format!("{path}/flights"),
                &flight("2026-07-01T08:00:00Z", "2026-07-01T09:00:00Z"),
            )
            .await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(app.admin.get_json(&path).await["Flights"], json!([]));
}

async fn travelers_see_their_itineraries_and_by_traveler_only(app: TestApp) {
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    let for_alice = create_itinerary(&manager, "1000", &json!({"Notes": "for Alice"})).await;
    add(
        &manager,
        &format!("/V2/1000/itineraries/{for_alice}/travelers"),
        &json!({"EmailAddress": "Alice@Example.com"}),
    )
    .await;
    let managers_own = create_itinerary(&manager, "1000", &json!({})).await;
    let alices_own = create_itinerary(&alice, "1000", &json!({})).await;
    let others = create_itinerary(&app.admin, "1000", &json!({})).await;
    add(
        &app.admin,
        &format!("/V2/1000/itineraries/{others}/travelers"),
        &json!({"EmailAddress": "someone@example.com"}),
    )
    .await;

    // A traveler sees and (as a User) changes the itinerary naming them.
    assert_eq!(
        ids(&alice, "/V2/1000/itineraries").await,
        id_list(&[&for_alice, &alices_own])
    );
    let path = format!("/V2/1000/itineraries/{for_alice}");
    add(
        &alice,
        &format!("{path}/hotels"),
        &json!({"Name": "Inn", "CheckInTime": "2026-07-01T15:00:00Z", "CheckOutTime": "2026-07-02T10:00:00Z"}),
    )
    .await;
    assert_eq!(alice.get_json(&path).await["Hotels"][0]["Name"], "Inn");
    // byTravelerOnly narrows a manager's list to their own.
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries?byTravelerOnly=true").await,
        id_list(&[&for_alice, &managers_own])
    );
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries?byTravelerOnly=false")
            .await
            .len(),
        4
    );
    assert_eq!(
        ids(&alice, "/V2/1000/itineraries?byTravelerOnly=true").await,
        ids(&alice, "/V2/1000/itineraries").await
    );
    assert_eq!(
        ids(&app.admin, "/V2/1000/itinerariesList?byTravelerOnly=true").await,
        id_list(&[&others])
    );
    // Removing Alice as traveler takes the itinerary out of her view.
    let travelers = manager.get_json(&format!("{path}/travelers")).await;
    let traveler = travelers[0]["Id"].as_i64().unwrap();
    assert_eq!(
        manager
            .delete(&format!("{path}/travelers/{traveler}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_not_found(alice.get(&path).await).await;
    assert_eq!(
        ids(&alice, "/V2/1000/itineraries").await,
        id_list(&[&alices_own])
    );
}

/// Creates an itinerary with one flight between two UTC times; returns its id.
async fn with_flight(client: &Client, tenant: &str, departure: &str, arrival: &str) -> String {
    let id = create_itinerary(client, tenant, &json!({})).await;
    add(
        client,
        &format!("/V2/{tenant}/itineraries/{id}/flights"),
        &flight(departure, arrival),
    )
    .await;
    id
}

async fn window_and_approval_filters(app: TestApp) {
    let june = with_flight(
        &app.admin,
        "1000",
        "2026-06-10T08:00:00Z",
        "2026-06-12T08:00:00Z",
    )
    .await;
    let july = with_flight(
        &app.admin,
        "1000",
        "2026-07-01T08:00:00Z",
        "2026-07-05T18:00:00Z",
    )
    .await;
    let spanning = with_flight(
        &app.admin,
        "1000",
        "2026-06-30T22:00:00Z",
        "2026-08-02T06:00:00Z",
    )
    .await;
    let empty = create_itinerary(&app.admin, "1000", &json!({})).await;

    let list = "/V2/1000/itineraries";
    assert_eq!(
        ids(&app.admin, list).await,
        id_list(&[&june, &spanning, &july, &empty]),
        "by Start, then id; without segments last"
    );
    for (query, expected) in [
        (
            "startDate=2026-07-01T00:00:00Z&endDate=2026-07-31T23:59:59Z",
            vec![&spanning, &july],
        ),
        (
            "startDate=2026-06-12T08:00:00Z",
            vec![&june, &spanning, &july],
        ),
        ("startDate=2026-06-12T08:00:01Z", vec![&spanning, &july]),
        ("endDate=2026-06-10T08:00:00Z", vec![&june]),
        ("endDate=2026-06-10T07:59:59Z", vec![]),
        ("startDate=2026-07-06&endDate=2026-07-07", vec![&spanning]),
        (
            "startDate=2026-07-05T20:00:00%2B02:00&endDate=2026-07-05T20:00:00%2B02:00",
            vec![&spanning, &july],
        ),
        ("startDate=2027-01-01", vec![]),
    ] {
        assert_eq!(
            ids(&app.admin, &format!("{list}?{query}")).await,
            id_list(&expected),
            "{query}"
        );
    }
    let path = |id: &str| format!("/V2/1000/itineraries/{id}");
    app.admin
        .put(&path(&july), &json!({"ApprovalState": 1}))
        .await;
    app.admin
        .put(&path(&june), &json!({"ApprovalState": 2}))
        .await;
    for (state, expected) in [
        ("-1", vec![&june, &spanning, &july, &empty]),
        ("0", vec![&spanning, &empty]),
        ("1", vec![&july]),
        ("2", vec![&june]),
    ] {
        assert_eq!(
            ids(&app.admin, &format!("{list}?approvalState={state}")).await,
            id_list(&expected),
            "approvalState={state}"
        );
    }
    assert_eq!(
        ids(
            &app.admin,
            &format!("{list}?approvalState=0&startDate=2026-07-01")
        )
        .await,
        id_list(&[&spanning])
    );
}

async fn bad_query_parameters_are_named(app: TestApp) {
    create_itinerary(&app.admin, "1000", &json!({})).await;
    for list in ["/V2/1000/itineraries", "/V2/1000/itinerariesList"] {
        for (query, fields) in [
            ("startDate=yesterday", vec!["startDate"]),
            ("endDate=2026-13-01", vec!["endDate"]),
            ("startDate=2026-07-02&endDate=2026-07-01", vec!["endDate"]),
            ("approvalState=3", vec!["approvalState"]),
            ("approvalState=-2", vec!["approvalState"]),
            ("approvalState=Approved", vec!["approvalState"]),
            ("subtenants=yes", vec!["subtenants"]),
            ("byTravelerOnly=1", vec!["byTravelerOnly"]),
            (
                "approvalState=9&startDate=x",
                vec!["startDate", "approvalState"],
            ),
        ] {
            let response = app.admin.get(&format!("{list}?{query}")).await;
            let problem = assert_problem(response, 400, "validation_failed").await;
            assert_eq!(problem_fields(&problem), fields, "{list}?{query}");
        }
    }
    for (query, fields) in [
        ("page=0", vec!["page"]),
        ("page=-1", vec!["page"]),
        ("page=x", vec!["page"]),
        ("page=2147483648", vec!["page"]),
        ("pageSize=0", vec!["pageSize"]),
        ("pageSize=1001", vec!["pageSize"]),
        ("pageSize=1.5", vec!["pageSize"]),
        (
            "approvalState=5&pageSize=0",
            vec!["approvalState", "pageSize"],
        ),
    ] {
        let response = app
            .admin
            .get(&format!("/V2/1000/itinerariesList?{query}"))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{query}");
    }
}

async fn pnr_number_ignores_every_other_parameter(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let a = create_itinerary(&app.admin, "1000", &json!({"PnrNumber": "X7K2QP"})).await;
    let b = with_flight(
        &app.admin,
        "1000",
        "2026-07-01T08:00:00Z",
        "2026-07-01T10:00:00Z",
    )
    .await;
    app.admin
        .put(
            &format!("/V2/1000/itineraries/{b}"),
            &json!({"PnrNumber": "x7k2qp", "ApprovalState": 2}),
        )
        .await;
    create_itinerary(&app.admin, "1000", &json!({"PnrNumber": "OTHER1"})).await;
    create_itinerary(&app.admin, &child, &json!({"PnrNumber": "X7K2QP"})).await;
    for query in [
        "pnrNumber=X7K2QP",
        "pnrNumber=x7k2qp&approvalState=1",
        "pnrNumber=X7K2QP&approvalState=banana&startDate=never&subtenants=true",
        "pnrNumber=X7K2QP&startDate=2030-01-01&byTravelerOnly=maybe",
    ] {
        assert_eq!(
            ids(&app.admin, &format!("/V2/1000/itineraries?{query}")).await,
            id_list(&[&b, &a]),
            "{query}"
        );
    }
    assert_eq!(
        ids(
            &app.admin,
            "/V2/1000/itinerariesList?pnrNumber=X7K2QP&approvalState=7&pageSize=1&page=2"
        )
        .await,
        id_list(&[&a]),
        "paging still applies"
    );
    assert!(
        ids(&app.admin, "/V2/1000/itineraries?pnrNumber=NOPE")
            .await
            .is_empty()
    );
    // A blank pnrNumber counts as absent.
    assert_eq!(
        ids(&app.admin, "/V2/1000/itineraries?pnrNumber=")
            .await
            .len(),
        3
    );
    // A User finds only their own by PNR.
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    assert!(
        ids(&alice, "/V2/1000/itineraries?pnrNumber=X7K2QP")
            .await
            .is_empty()
    );
}

async fn paged_list(app: TestApp) {
    let mut all = Vec::new();
    for day in [5, 3, 4, 1, 2] {
        all.push((
            day,
            with_flight(
                &app.admin,
                "1000",
                &format!("2026-07-0{day}T08:00:00Z"),
                &format!("2026-07-0{day}T10:00:00Z"),
            )
            .await,
        ));
    }
    all.sort();
    let ordered: Vec<i64> = all.iter().map(|(_, id)| id.parse().unwrap()).collect();
    let list = "/V2/1000/itinerariesList";
    assert_eq!(
        ids(&app.admin, list).await,
        ordered,
        "default page 1 of 100"
    );
    assert_eq!(
        ids(&app.admin, &format!("{list}?page=1&pageSize=2")).await,
        ordered[0..2]
    );
    assert_eq!(
        ids(&app.admin, &format!("{list}?page=2&pageSize=2")).await,
        ordered[2..4]
    );
    assert_eq!(
        ids(&app.admin, &format!("{list}?page=3&pageSize=2")).await,
        ordered[4..5]
    );
    assert!(
        ids(&app.admin, &format!("{list}?page=4&pageSize=2"))
            .await
            .is_empty()
    );
    assert!(
        ids(&app.admin, &format!("{list}?page=2147483647&pageSize=1000"))
            .await
            .is_empty()
    );
    assert_eq!(
        ids(
            &app.admin,
            &format!("{list}?pageSize=2&startDate=2026-07-02&endDate=2026-07-04")
        )
        .await,
        ordered[1..3]
    );
    let full = app.admin.get_json(&format!("{list}?pageSize=1")).await;
    assert_eq!(
        full[0]["Flights"].as_array().unwrap().len(),
        1,
        "full itineraries"
    );
}

async fn tenant_scope(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let grandchild = app.create_tenant(&a, "A1").await;
    let in_a = with_flight(
        &app.admin,
        &a,
        "2026-07-01T08:00:00Z",
        "2026-07-01T10:00:00Z",
    )
    .await;
    let in_a1 = create_itinerary(&app.admin, &grandchild, &json!({})).await;
    let in_root = create_itinerary(&app.admin, "1000", &json!({})).await;
    let (_, b_admin) = app
        .create_user(&b, "b-admin@example.com", "Administrator")
        .await;
    let (_, a_admin) = app
        .create_user(&a, "a-admin@example.com", "Administrator")
        .await;

    // A sibling sees nothing of A, through either tenant's path.
    for path in [
        format!("/V2/{b}/itineraries/{in_a}"),
        format!("/V2/{a}/itineraries/{in_a}"),
        format!("/V2/{a}/itineraries"),
        format!("/V2/{a}/itinerariesList"),
        format!("/V2/{a}/itineraries/{in_a}/flights"),
        format!("/V2/{b}/itineraries/{in_a}/flights"),
        format!("/V2/{a}/itineraries/{in_a}/regions"),
    ] {
        assert_not_found(b_admin.get(&path).await).await;
    }
    for path in [
        format!("/V2/{b}/itineraries/{in_a}"),
        format!("/V2/{a}/itineraries/{in_a}"),
    ] {
        assert_not_found(b_admin.put(&path, &json!({"Notes": "x"})).await).await;
        assert_not_found(b_admin.delete(&path).await).await;
        assert_not_found(
            b_admin
                .post(
                    &format!("{path}/travelers"),
                    &json!({"EmailAddress": "x@example.com"}),
                )
                .await,
        )
        .await;
    }
    assert!(
        ids(&b_admin, &format!("/V2/{b}/itineraries"))
            .await
            .is_empty()
    );
    assert!(
        ids(&b_admin, &format!("/V2/{b}/itineraries?subtenants=true"))
            .await
            .is_empty()
    );
    // A child cannot reach its parent's itineraries.
    assert_not_found(
        a_admin
            .get(&format!("/V2/1000/itineraries/{in_root}"))
            .await,
    )
    .await;
    assert_not_found(a_admin.get(&format!("/V2/{a}/itineraries/{in_root}")).await).await;

    // An itinerary is addressed under its own tenant only; lists widen on request.
    assert_not_found(app.admin.get(&format!("/V2/1000/itineraries/{in_a}")).await).await;
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/{a}/itineraries/{in_a}"))
            .await["TenantCode"],
        a
    );
    assert_eq!(
        ids(&app.admin, "/V2/1000/itineraries").await,
        id_list(&[&in_root])
    );
    let all = app
        .admin
        .get_json("/V2/1000/itineraries?subtenants=true")
        .await;
    let tenants: Vec<(i64, String)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["Id"].as_i64().unwrap(),
                i["TenantCode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        tenants,
        [
            (in_a.parse().unwrap(), a.clone()),
            (in_a1.parse().unwrap(), grandchild.clone()),
            (in_root.parse().unwrap(), "1000".to_string()),
        ]
    );
    assert_eq!(
        ids(
            &a_admin,
            &format!("/V2/{a}/itinerariesList?subtenants=true")
        )
        .await,
        id_list(&[&in_a, &in_a1])
    );
    assert_eq!(
        ids(&a_admin, &format!("/V2/{grandchild}/itineraries")).await,
        id_list(&[&in_a1])
    );
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

async fn deleting_the_owner_or_the_tenant(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let (alice_id, alice) = app.create_user(&child, "alice@example.com", "User").await;
    let id = with_flight(
        &alice,
        &child,
        "2026-07-01T08:00:00Z",
        "2026-07-01T10:00:00Z",
    )
    .await;
    let path = format!("/V2/{child}/itineraries/{id}");
    add(
        &alice,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "alice@example.com"}),
    )
    .await;
    // The itinerary outlives its creator: travel history stays with the tenant.
    assert_eq!(
        app.admin
            .delete(&format!("/V2/{child}/users/{alice_id}"))
            .await
            .status(),
        StatusCode::OK
    );
    let got = app.admin.get_json(&path).await;
    assert_eq!(got["Flights"].as_array().unwrap().len(), 1);
    assert_eq!(got["Travelers"][0]["EmailAddress"], "alice@example.com");
    // Deleting the tenant removes its itineraries, with a region attached.
    let region = json!({"GeometryId": "zone", "Name": "Zone", "RiskLevel": 2,
        "Polygon": [[{"Lat": 0, "Lon": 0}, {"Lat": 0, "Lon": 1}, {"Lat": 1, "Lon": 1}]]});
    assert_eq!(
        app.admin
            .post(&format!("/V2/{child}/riskregions"), &region)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin
            .post(&format!("{path}/regions/zone"), &json!(null))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.delete(&format!("/V2/{child}")).await.status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&path).await).await;
    assert!(
        ids(&app.admin, "/V2/1000/itineraries?subtenants=true")
            .await
            .is_empty()
    );
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
