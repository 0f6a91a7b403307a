//! Risk regions: the catalogue, attaching regions to itineraries, and OverallRisk.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};
use crate::itineraries::{add, create_itinerary, flight};

backend_tests!(
    create_get_list_put_delete,
    invalid_regions_are_refused_and_nothing_stored,
    geometry_ids_are_case_sensitive_and_unique_per_tenant,
    roles_and_sharing_with_subtenants,
    etag_and_if_match,
    attach_and_detach,
    attached_regions_cannot_be_deleted_or_unshared,
    overall_risk_follows_segments_and_regions,
    overall_risk_in_subtenants,
    parallel_segment_and_region_writes_stay_consistent,
);

/// A square region from (lat, lon) to (lat + size, lon + size).
fn square(id: &str, level: i64, lat: f64, lon: f64, size: f64) -> Value {
    json!({"GeometryId": id, "Name": format!("Region {id}"), "RiskLevel": level,
        "Polygon": [[{"Lat": lat, "Lon": lon}, {"Lat": lat, "Lon": lon + size},
                     {"Lat": lat + size, "Lon": lon + size}, {"Lat": lat + size, "Lon": lon}]]})
}

/// Around Greater London.
fn london(id: &str, level: i64) -> Value {
    square(id, level, 51.2, -0.6, 0.6)
}

async fn create(client: &Client, tenant: &str, body: &Value) {
    let response = client
        .post(&format!("/V2/{tenant}/riskregions"), body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create region {body}");
    let id = body["GeometryId"].as_str().unwrap();
    assert_eq!(
        response.headers()["location"].to_str().unwrap(),
        format!("/V2/{tenant}/riskregions/{id}")
    );
}

async fn geometry_ids(client: &Client, tenant: &str) -> Vec<String> {
    client
        .get_json(&format!("/V2/{tenant}/riskregions"))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["GeometryId"].as_str().unwrap().to_string())
        .collect()
}

async fn risk(client: &Client, path: &str) -> i64 {
    client.get_json(path).await["OverallRisk"].as_i64().unwrap()
}

/// A hotel stay at a position.
fn hotel_at(lat: f64, lon: f64) -> Value {
    json!({"Name": "Stay", "Latitude": lat, "Longitude": lon,
           "CheckInTime": "2026-07-01T14:00:00Z", "CheckOutTime": "2026-07-03T10:00:00Z"})
}

async fn create_get_list_put_delete(app: TestApp) {
    let mut body = london("london", 3);
    body["Timestamp"] = json!("2000-01-01T00:00:00Z");
    create(&app.admin, "1000", &body).await;
    let path = "/V2/1000/riskregions/london";
    let response = app.admin.get(path).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().contains_key("etag"));
    let got: Value = response.json().await.unwrap();
    assert_eq!(got["GeometryId"], "london");
    assert_eq!(got["Name"], "Region london");
    assert_eq!(got["RiskLevel"], 3);
    assert_eq!(got["AppliesToSubtenants"], false);
    assert_ne!(got["Timestamp"], "2000-01-01T00:00:00Z", "read-only");
    let ring = got["Polygon"][0].as_array().unwrap();
    assert_eq!(ring.len(), 5, "closed by the server");
    assert_eq!(ring[0], ring[4]);
    assert_eq!(geometry_ids(&app.admin, "1000").await, ["london"]);

    let mut changed = square("ignored-in-body", 5, 10.0, 10.0, 1.0);
    changed["Name"] = json!("  Renamed ");
    assert_eq!(app.admin.put(path, &changed).await.status(), StatusCode::OK);
    let got = app.admin.get_json(path).await;
    assert_eq!(got["GeometryId"], "london", "the path's id");
    assert_eq!(got["Name"], "Renamed");
    assert_eq!(got["RiskLevel"], 5);
    assert_eq!(got["Polygon"][0][0], json!({"Lat": 10.0, "Lon": 10.0}));
    assert_not_found(app.admin.get("/V2/1000/riskregions/ignored-in-body").await).await;

    assert_eq!(app.admin.delete(path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(path).await).await;
    assert_not_found(app.admin.delete(path).await).await;
    assert_not_found(app.admin.put(path, &london("london", 1)).await).await;
    assert!(geometry_ids(&app.admin, "1000").await.is_empty());
    for bad in ["has space", "x".repeat(65).as_str(), "ünï"] {
        assert_not_found(app.admin.get(&format!("/V2/1000/riskregions/{bad}")).await).await;
    }
}

async fn invalid_regions_are_refused_and_nothing_stored(app: TestApp) {
    let with = |changes: Value| {
        let mut body = london("r1", 2);
        for (k, v) in changes.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let bow_tie = json!([[{"Lat": 0, "Lon": 0}, {"Lat": 1, "Lon": 1}, {"Lat": 1, "Lon": 0}, {"Lat": 0, "Lon": 1}]]);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (with(json!({"RiskLevel": 0})), vec!["RiskLevel"]),
        (with(json!({"RiskLevel": 6})), vec!["RiskLevel"]),
        (with(json!({"RiskLevel": -1})), vec!["RiskLevel"]),
        (with(json!({"RiskLevel": null})), vec!["RiskLevel"]),
        (with(json!({"RiskLevel": 2.5})), vec!["RiskLevel"]),
        (with(json!({"RiskLevel": "high"})), vec!["RiskLevel"]),
        (
            with(json!({"RiskLevel": 4294967297_i64})),
            vec!["RiskLevel"],
        ),
        (with(json!({"Name": null})), vec!["Name"]),
        (with(json!({"Name": " "})), vec!["Name"]),
        (with(json!({"Name": "n".repeat(201)})), vec!["Name"]),
        (with(json!({"GeometryId": null})), vec!["GeometryId"]),
        (with(json!({"GeometryId": "a b"})), vec!["GeometryId"]),
        (with(json!({"GeometryId": ""})), vec!["GeometryId"]),
        (
            with(json!({"GeometryId": "g".repeat(65)})),
            vec!["GeometryId"],
        ),
        (with(json!({"GeometryId": "a/b"})), vec!["GeometryId"]),
        (with(json!({"Polygon": null})), vec!["Polygon"]),
        (with(json!({"Polygon": []})), vec!["Polygon"]),
        (with(json!({"Polygon": bow_tie})), vec!["Polygon[0]"]),
        (
            with(json!({"Polygon": [[{"Lat": 0, "Lon": 0}, {"Lat": 1, "Lon": 1}]]})),
            vec!["Polygon[0]"],
        ),
        (
            with(
                json!({"Polygon": [[{"Lat": 0, "Lon": 0}, {"Lat": 91, "Lon": 1}, {"Lat": 1, "Lon": 0}]]}),
            ),
            vec!["Polygon[0][1].Lat"],
        ),
        (
            with(
                json!({"Polygon": [[{"Lat": 0, "Lon": 0}, {"Lat": 0, "Lon": 1}, {"Lat": 0, "Lon": 2}]]}),
            ),
            vec!["Polygon[0]"],
        ),
        (
            with(json!({"Polygon": [[[0, 0], [0, 1], [1, 1]]]})),
            vec!["Polygon[0][0]"],
        ),
        (with(json!({"Polygon": "square"})), vec!["Polygon"]),
        (
            with(json!({"AppliesToSubtenants": "yes"})),
            vec!["AppliesToSubtenants"],
        ),
        (
            json!({"Polygon": london("x", 1)["Polygon"]}),
            vec!["GeometryId", "Name", "RiskLevel"],
        ),
    ];
    for (body, fields) in &cases {
        let response = app.admin.post("/V2/1000/riskregions", body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), *fields, "{body}");
    }
    assert!(geometry_ids(&app.admin, "1000").await.is_empty());

    // PUT: the same refusals leave the stored region as it was.
    create(&app.admin, "1000", &london("r1", 2)).await;
    let before = app.admin.get_json("/V2/1000/riskregions/r1").await;
    for (body, fields) in cases.iter().filter(|(_, f)| f[0] != "GeometryId") {
        let response = app.admin.put("/V2/1000/riskregions/r1", body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), *fields, "{body}");
    }
    assert_eq!(app.admin.get_json("/V2/1000/riskregions/r1").await, before);
}

async fn geometry_ids_are_case_sensitive_and_unique_per_tenant(app: TestApp) {
    create(&app.admin, "1000", &london("Zone-A", 1)).await;
    create(&app.admin, "1000", &london("zone-a", 2)).await;
    let response = app
        .admin
        .post("/V2/1000/riskregions", &london("Zone-A", 4))
        .await;
    assert_problem(response, 409, "conflict").await;
    assert_eq!(
        app.admin.get_json("/V2/1000/riskregions/Zone-A").await["RiskLevel"],
        1
    );
    assert_eq!(
        app.admin.get_json("/V2/1000/riskregions/zone-a").await["RiskLevel"],
        2
    );
    assert_not_found(app.admin.get("/V2/1000/riskregions/ZONE-A").await).await;
    // Another tenant may use the same id.
    let child = app.create_tenant("1000", "Child").await;
    create(&app.admin, &child, &london("Zone-A", 5)).await;
    assert_eq!(geometry_ids(&app.admin, "1000").await, ["Zone-A", "zone-a"]);
}

async fn roles_and_sharing_with_subtenants(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    for client in [&user, &reader] {
        assert_problem(
            client.post("/V2/1000/riskregions", &london("r", 1)).await,
            403,
            "forbidden",
        )
        .await;
    }
    create(&manager, "1000", &london("private", 1)).await;
    let mut shared = london("shared", 2);
    shared["AppliesToSubtenants"] = json!(true);
    create(&manager, "1000", &shared).await;
    for client in [&user, &reader] {
        assert_eq!(
            client.get_json("/V2/1000/riskregions/shared").await["RiskLevel"],
            2
        );
        assert_problem(
            client.put("/V2/1000/riskregions/shared", &shared).await,
            403,
            "forbidden",
        )
        .await;
        assert_problem(
            client.delete("/V2/1000/riskregions/shared").await,
            403,
            "forbidden",
        )
        .await;
    }
    create(&app.admin, &child, &london("own", 3)).await;
    assert_eq!(geometry_ids(&app.admin, &child).await, ["shared", "own"]);
    assert_eq!(geometry_ids(&app.admin, &sibling).await, ["shared"]);
    assert_eq!(
        geometry_ids(&app.admin, "1000").await,
        ["private", "shared"]
    );
    assert_not_found(
        app.admin
            .get(&format!("/V2/{child}/riskregions/private"))
            .await,
    )
    .await;
    assert_not_found(app.admin.get("/V2/1000/riskregions/own").await).await;
    // Read-only below the owner, even for the root administrator.
    let below = format!("/V2/{child}/riskregions/shared");
    let problem = assert_problem(app.admin.put(&below, &shared).await, 403, "forbidden").await;
    assert!(!problem["detail"].as_str().unwrap().contains("1000"));
    assert_problem(app.admin.delete(&below).await, 403, "forbidden").await;
    // A child's own region with an inherited id takes precedence there.
    create(&app.admin, &child, &london("shared", 5)).await;
    assert_eq!(app.admin.get_json(&below).await["RiskLevel"], 5);
    assert_eq!(
        app.admin.get_json("/V2/1000/riskregions/shared").await["RiskLevel"],
        2
    );
}

async fn etag_and_if_match(app: TestApp) {
    create(&app.admin, "1000", &london("r", 1)).await;
    let path = "/V2/1000/riskregions/r";
    let etag = app.admin.get(path).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_string();
    let cached = app
        .admin
        .request(Method::GET, path)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(cached.status(), StatusCode::NOT_MODIFIED);
    let stale = app
        .admin
        .request(Method::PUT, path)
        .header("if-match", "\"stale\"")
        .json(&london("r", 4))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(app.admin.get_json(path).await["RiskLevel"], 1);
    let ok = app
        .admin
        .request(Method::PUT, path)
        .header("if-match", &etag)
        .json(&london("r", 4))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let stale_delete = app
        .admin
        .request(Method::DELETE, path)
        .header("if-match", &etag)
        .send()
        .await
        .unwrap();
    assert_problem(stale_delete, 412, "precondition_failed").await;
    assert_eq!(app.admin.get_json(path).await["RiskLevel"], 4);
}

async fn attach_and_detach(app: TestApp) {
    create(&app.admin, "1000", &square("north", 4, 60.0, 10.0, 1.0)).await;
    create(&app.admin, "1000", &square("south", 2, -40.0, 10.0, 1.0)).await;
    let id = create_itinerary(&app.admin, "1000", &json!({})).await;
    let path = format!("/V2/1000/itineraries/{id}");
    let before = app.admin.get(&path).await.headers()["etag"].clone();
    for unknown in ["nowhere", "NORTH", "has space"] {
        assert_not_found(
            app.admin
                .post(&format!("{path}/regions/{unknown}"), &json!(null))
                .await,
        )
        .await;
    }
    assert_eq!(app.admin.get(&path).await.headers()["etag"], before);

    let attach = |geometry_id: &'static str| {
        let client = app.admin.clone();
        let url = format!("{path}/regions/{geometry_id}");
        async move { client.request(Method::POST, &url).send().await.unwrap() }
    };
    assert_eq!(attach("south").await.status(), StatusCode::OK);
    assert_eq!(risk(&app.admin, &path).await, 2);
    assert_eq!(attach("north").await.status(), StatusCode::OK);
    let etag = app.admin.get(&path).await.headers()["etag"].clone();
    // Attaching again is idempotent: 200, no change, no new version.
    assert_eq!(attach("north").await.status(), StatusCode::OK);
    assert_eq!(app.admin.get(&path).await.headers()["etag"], etag);
    let expected = json!([{"Name": "Region north", "GeometryId": "north"},
                          {"Name": "Region south", "GeometryId": "south"}]);
    assert_eq!(
        app.admin.get_json(&format!("{path}/regions")).await,
        expected
    );
    let itinerary = app.admin.get_json(&path).await;
    assert_eq!(itinerary["Regions"], expected);
    assert_eq!(itinerary["OverallRisk"], 4, "the highest attached level");

    assert_eq!(
        app.admin
            .delete(&format!("{path}/regions/north"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.delete(&format!("{path}/regions/north")).await).await;
    assert_not_found(app.admin.delete(&format!("{path}/regions/nowhere")).await).await;
    assert_eq!(risk(&app.admin, &path).await, 2);
    app.admin.delete(&format!("{path}/regions/south")).await;
    assert_eq!(risk(&app.admin, &path).await, 0);
    assert_eq!(
        app.admin.get_json(&format!("{path}/regions")).await,
        json!([])
    );
    // GET of one attachment is not an operation.
    let response = app.admin.get(&format!("{path}/regions/north")).await;
    assert_problem(response, 405, "method_not_allowed").await;
    // Owners attach to their own itineraries; ReadOnly cannot.
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let mine = create_itinerary(&alice, "1000", &json!({})).await;
    let response = alice
        .post(
            &format!("/V2/1000/itineraries/{mine}/regions/north"),
            &json!(null),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_not_found(
        alice
            .post(&format!("{path}/regions/north"), &json!(null))
            .await,
    )
    .await;
}

async fn attached_regions_cannot_be_deleted_or_unshared(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let mut shared = london("shared", 3);
    shared["AppliesToSubtenants"] = json!(true);
    create(&app.admin, "1000", &shared).await;
    let id = create_itinerary(&app.admin, &child, &json!({})).await;
    let path = format!("/V2/{child}/itineraries/{id}");
    assert_eq!(
        app.admin
            .post(&format!("{path}/regions/shared"), &json!(null))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(risk(&app.admin, &path).await, 3);

    let problem = assert_problem(
        app.admin.delete("/V2/1000/riskregions/shared").await,
        409,
        "conflict",
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("attached"));
    let mut unshared = shared.clone();
    unshared["AppliesToSubtenants"] = json!(false);
    assert_problem(
        app.admin
            .put("/V2/1000/riskregions/shared", &unshared)
            .await,
        409,
        "conflict",
    )
    .await;
    assert_eq!(
        app.admin.get_json("/V2/1000/riskregions/shared").await["AppliesToSubtenants"],
        true
    );
    // Other changes are fine, and reach the itinerary below.
    let mut higher = shared.clone();
    higher["RiskLevel"] = json!(5);
    assert_eq!(
        app.admin
            .put("/V2/1000/riskregions/shared", &higher)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(risk(&app.admin, &path).await, 5);
    // Detached, it can go.
    app.admin.delete(&format!("{path}/regions/shared")).await;
    assert_eq!(
        app.admin
            .delete("/V2/1000/riskregions/shared")
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(risk(&app.admin, &path).await, 0);
    // A region attached in its own tenant cannot be deleted either.
    create(&app.admin, &child, &london("local", 1)).await;
    app.admin
        .post(&format!("{path}/regions/local"), &json!(null))
        .await;
    assert_problem(
        app.admin
            .delete(&format!("/V2/{child}/riskregions/local"))
            .await,
        409,
        "conflict",
    )
    .await;
    // Deleting the itinerary releases it.
    app.admin.delete(&path).await;
    assert_eq!(
        app.admin
            .delete(&format!("/V2/{child}/riskregions/local"))
            .await
            .status(),
        StatusCode::OK
    );
}

async fn overall_risk_follows_segments_and_regions(app: TestApp) {
    let id = create_itinerary(&app.admin, "1000", &json!({})).await;
    let path = format!("/V2/1000/itineraries/{id}");
    // A hotel in London before any region exists.
    let hotel = add(
        &app.admin,
        &format!("{path}/hotels"),
        &hotel_at(51.5, -0.12),
    )
    .await;
    assert_eq!(risk(&app.admin, &path).await, 0);
    // A region created around it raises the risk.
    create(&app.admin, "1000", &london("london", 3)).await;
    assert_eq!(risk(&app.admin, &path).await, 3);
    // A flight landing in a riskier region raises it further; the highest wins.
    create(&app.admin, "1000", &square("paris", 5, 48.5, 2.0, 1.0)).await;
    let mut to_paris = flight("2026-07-01T08:00:00Z", "2026-07-01T09:30:00Z");
    to_paris["OriginLatitude"] = json!(51.47);
    to_paris["OriginLongitude"] = json!(-0.45);
    to_paris["DestinationLatitude"] = json!(49.0);
    to_paris["DestinationLongitude"] = json!(2.55);
    let flight_id = add(&app.admin, &format!("{path}/flights"), &to_paris).await;
    assert_eq!(risk(&app.admin, &path).await, 5);
    // The flight moved elsewhere: back to London's level.
    let mut elsewhere = to_paris.clone();
    elsewhere["DestinationLatitude"] = json!(40.0);
    elsewhere["DestinationLongitude"] = json!(-3.7);
    app.admin
        .put(&format!("{path}/flights/{flight_id}"), &elsewhere)
        .await;
    assert_eq!(risk(&app.admin, &path).await, 3);
    // Region changes: level, shape moved away, deletion.
    app.admin
        .put("/V2/1000/riskregions/london", &london("london", 4))
        .await;
    assert_eq!(risk(&app.admin, &path).await, 4);
    let etag = app.admin.get(&path).await.headers()["etag"].clone();
    // A change that does not alter the risk leaves the itinerary's version alone.
    app.admin
        .put(
            "/V2/1000/riskregions/paris",
            &square("paris", 1, 48.5, 2.0, 1.0),
        )
        .await;
    assert_eq!(app.admin.get(&path).await.headers()["etag"], etag);
    app.admin
        .put(
            "/V2/1000/riskregions/london",
            &square("london", 4, -10.0, -10.0, 1.0),
        )
        .await;
    assert_eq!(risk(&app.admin, &path).await, 0);
    app.admin
        .put("/V2/1000/riskregions/london", &london("london", 2))
        .await;
    assert_eq!(risk(&app.admin, &path).await, 2);
    // A hole around the hotel excludes it.
    let mut holed = london("london", 2);
    holed["Polygon"].as_array_mut().unwrap().push(
        json!([{"Lat": 51.4, "Lon": -0.2}, {"Lat": 51.4, "Lon": -0.05},
                     {"Lat": 51.6, "Lon": -0.05}, {"Lat": 51.6, "Lon": -0.2}]),
    );
    app.admin.put("/V2/1000/riskregions/london", &holed).await;
    assert_eq!(
        risk(&app.admin, &path).await,
        2,
        "the flight's origin is still inside"
    );
    app.admin
        .delete(&format!("{path}/flights/{flight_id}"))
        .await;
    assert_eq!(risk(&app.admin, &path).await, 0, "the hotel is in the hole");
    app.admin
        .put("/V2/1000/riskregions/london", &london("london", 2))
        .await;
    assert_eq!(risk(&app.admin, &path).await, 2);
    app.admin.delete("/V2/1000/riskregions/london").await;
    assert_eq!(risk(&app.admin, &path).await, 0);
    // A journey's positions count too, and listings carry the same value.
    create(&app.admin, "1000", &square("alps", 3, 45.0, 6.0, 2.0)).await;
    add(
        &app.admin,
        &format!("{path}/journeys"),
        &json!({"JourneyType": "Train", "OriginLatitude": 45.5, "OriginLongitude": 6.5,
                "DepartureTime": "2026-07-02T08:00:00Z", "ArrivalTime": "2026-07-02T09:00:00Z"}),
    )
    .await;
    assert_eq!(risk(&app.admin, &path).await, 3);
    assert_eq!(
        app.admin.get_json("/V2/1000/itineraries").await[0]["OverallRisk"],
        3
    );
    app.admin.delete(&format!("{path}/hotels/{hotel}")).await;
    assert_eq!(risk(&app.admin, &path).await, 3);
}

async fn overall_risk_in_subtenants(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    let in_child = create_itinerary(&app.admin, &child, &json!({})).await;
    let in_sibling = create_itinerary(&app.admin, &sibling, &json!({})).await;
    let child_path = format!("/V2/{child}/itineraries/{in_child}");
    let sibling_path = format!("/V2/{sibling}/itineraries/{in_sibling}");
    add(
        &app.admin,
        &format!("{child_path}/hotels"),
        &hotel_at(51.5, -0.12),
    )
    .await;
    add(
        &app.admin,
        &format!("{sibling_path}/hotels"),
        &hotel_at(51.5, -0.12),
    )
    .await;
    // The parent's private region does not reach subtenants; sharing it does.
    create(&app.admin, "1000", &london("parent", 4)).await;
    assert_eq!(risk(&app.admin, &child_path).await, 0);
    let mut shared = london("parent", 4);
    shared["AppliesToSubtenants"] = json!(true);
    app.admin.put("/V2/1000/riskregions/parent", &shared).await;
    assert_eq!(risk(&app.admin, &child_path).await, 4);
    assert_eq!(risk(&app.admin, &sibling_path).await, 4);
    // A child's region reaches only the child.
    create(&app.admin, &child, &london("child-own", 5)).await;
    assert_eq!(risk(&app.admin, &child_path).await, 5);
    assert_eq!(risk(&app.admin, &sibling_path).await, 4);
    // Unsharing (nothing attached) takes the parent's region away again.
    app.admin
        .put("/V2/1000/riskregions/parent", &london("parent", 4))
        .await;
    assert_eq!(risk(&app.admin, &sibling_path).await, 0);
    assert_eq!(risk(&app.admin, &child_path).await, 5);
    // A sibling's region cannot be attached (not visible): 404.
    assert_not_found(
        app.admin
            .post(&format!("{sibling_path}/regions/child-own"), &json!(null))
            .await,
    )
    .await;
}

/// Segment writes on several itineraries race with writes of a shared region above them;
/// every write succeeds and the derived fields end as the final state says.
async fn parallel_segment_and_region_writes_stay_consistent(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let mut shared = london("london", 1);
    shared["AppliesToSubtenants"] = json!(true);
    create(&app.admin, "1000", &shared).await;
    let mut paths = Vec::new();
    for tenant in ["1000", child.as_str()] {
        for _ in 0..2 {
            let id = create_itinerary(&app.admin, tenant, &json!({})).await;
            paths.push(format!("/V2/{tenant}/itineraries/{id}"));
        }
    }
    let admin = &app.admin;
    let segment_writes = paths.iter().flat_map(|path| {
        (0..6).map(move |i| {
            let client = admin.clone();
            let url = format!("{path}/hotels");
            let body = json!({"Name": format!("Stay {i}"), "Latitude": 51.5, "Longitude": -0.12,
                "CheckInTime": format!("2026-07-{:02}T14:00:00Z", i + 1),
                "CheckOutTime": format!("2026-07-{:02}T10:00:00Z", i + 2)});
            async move { client.post(&url, &body).await.status() }
        })
    });
    let region_writes = (2..=5).map(|level| {
        let client = app.admin.clone();
        let mut body = shared.clone();
        body["RiskLevel"] = json!(level);
        async move {
            client
                .put("/V2/1000/riskregions/london", &body)
                .await
                .status()
        }
    });
    let (segments, regions) = futures::future::join(
        futures::future::join_all(segment_writes),
        futures::future::join_all(region_writes),
    )
    .await;
    assert!(
        segments.iter().all(|s| *s == StatusCode::OK),
        "{segments:?}"
    );
    assert!(regions.iter().all(|s| *s == StatusCode::OK), "{regions:?}");
    let level = app.admin.get_json("/V2/1000/riskregions/london").await["RiskLevel"].clone();
    for path in &paths {
        let it = app.admin.get_json(path).await;
        assert_eq!(it["Hotels"].as_array().unwrap().len(), 6, "{path}");
        assert_eq!(it["OverallRisk"], level, "{path}");
        assert_eq!(it["Start"], "2026-07-01T14:00:00Z");
        assert_eq!(it["End"], "2026-07-07T10:00:00Z");
    }
}
