use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    circle_create_get_list_put_delete,
    polygon_ring_is_closed_and_polyline_kept,
    invalid_shapes_are_refused_and_nothing_stored,
    wrong_types_and_missing_fields_are_refused,
    invalid_put_changes_nothing,
    names_are_unique_per_tenant,
    etag_and_if_match,
    sibling_and_unknown_geofences_are_404,
    applies_to_subtenants_is_read_only_below,
    read_only_users_cannot_write,
    xml_round_trip_and_ieee754,
);

fn circle(name: &str) -> Value {
    json!({
        "Name": name,
        "GeofenceType": "circle",
        "CircleCentre": {"Lat": 51.5, "Lon": -0.12},
        "CircleRadius": 150.0,
        "MinZoom": 3,
        "MaxZoom": 18,
        "Properties": {"colour": "red"},
    })
}

fn square() -> Value {
    json!([[{"Lat": 0, "Lon": 0}, {"Lat": 0, "Lon": 1}, {"Lat": 1, "Lon": 1}, {"Lat": 1, "Lon": 0}]])
}

/// POSTs a geofence that must be accepted; returns its id.
async fn create(client: &Client, tenant: &str, body: &Value) -> String {
    let response = client.post(&format!("/V2/{tenant}/geofences"), body).await;
    assert_eq!(response.status(), StatusCode::OK, "create geofence {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let id = location.rsplit('/').next().unwrap().to_string();
    assert_eq!(location, format!("/V2/{tenant}/geofences/{id}"));
    id
}

async fn names(client: &Client, tenant: &str) -> Vec<String> {
    let list = client.get_json(&format!("/V2/{tenant}/geofences")).await;
    list.as_array()
        .unwrap()
        .iter()
        .map(|g| g["Name"].as_str().unwrap().to_string())
        .collect()
}

async fn circle_create_get_list_put_delete(app: TestApp) {
    let mut body = circle("Depot");
    body["GeofenceId"] = json!("999");
    body["GeofenceType"] = json!("Circle");
    let id = create(&app.admin, "1000", &body).await;
    assert_ne!(id, "999", "client-sent GeofenceId is ignored");

    let response = app.admin.get(&format!("/V2/1000/geofences/{id}")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().contains_key("etag"));
    let got: Value = response.json().await.unwrap();
    assert_eq!(got["GeofenceId"], id);
    assert_eq!(got["GeofenceType"], "circle");
    assert_eq!(got["CircleCentre"], json!({"Lat": 51.5, "Lon": -0.12}));
    assert_eq!(got["CircleRadius"], 150.0);
    assert_eq!(got["Properties"]["colour"], "red");
    assert_eq!(got["AppliesToSubtenants"], false);
    assert!(got["Timestamp"].is_string());
    assert!(
        got.get("ETag").is_none(),
        "the record itself has no ETag field"
    );
    assert_eq!(names(&app.admin, "1000").await, ["Depot"]);

    let mut changed = circle("Depot 2");
    changed["CircleRadius"] = json!(500);
    let put = app
        .admin
        .put(&format!("/V2/1000/geofences/{id}"), &changed)
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    let got = app
        .admin
        .get_json(&format!("/V2/1000/geofences/{id}"))
        .await;
    assert_eq!(got["Name"], "Depot 2");
    assert_eq!(got["CircleRadius"], 500.0);

    let delete = app.admin.delete(&format!("/V2/1000/geofences/{id}")).await;
    assert_eq!(delete.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&format!("/V2/1000/geofences/{id}")).await).await;
    assert!(names(&app.admin, "1000").await.is_empty());
}

async fn polygon_ring_is_closed_and_polyline_kept(app: TestApp) {
    let id = create(
        &app.admin,
        "1000",
        &json!({"Name": "Yard", "GeofenceType": "polygon", "PolygonPositions": square()}),
    )
    .await;
    let got = app
        .admin
        .get_json(&format!("/V2/1000/geofences/{id}"))
        .await;
    let ring = got["PolygonPositions"][0].as_array().unwrap();
    assert_eq!(ring.len(), 5, "closed by the server");
    assert_eq!(ring[0], ring[4]);
    assert!(got["CircleCentre"].is_null());

    let id = create(
        &app.admin,
        "1000",
        &json!({"Name": "Road", "GeofenceType": "polyline", "FenceWidth": 40,
                "PolylinePositions": [{"Lat": 0, "Lon": 0}, {"Lat": 0.5, "Lon": 0.5}]}),
    )
    .await;
    let got = app
        .admin
        .get_json(&format!("/V2/1000/geofences/{id}"))
        .await;
    assert_eq!(got["FenceWidth"], 40);
    assert_eq!(got["PolylinePositions"].as_array().unwrap().len(), 2);
}

/// Each invalid body gets a 400 naming the offending field(s); none is stored.
async fn invalid_shapes_are_refused_and_nothing_stored(app: TestApp) {
    let bow_tie = json!([[{"Lat": 0, "Lon": 0}, {"Lat": 1, "Lon": 1}, {"Lat": 1, "Lon": 0}, {"Lat": 0, "Lon": 1}]]);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"Name": "p", "GeofenceType": "polygon",
                   "PolygonPositions": [[{"Lat": 0, "Lon": 0}, {"Lat": 1, "Lon": 1}]]}),
            vec!["PolygonPositions[0]"],
        ),
        (
            json!({"Name": "p", "GeofenceType": "polygon", "PolygonPositions": bow_tie}),
            vec!["PolygonPositions[0]"],
        ),
        (
            json!({"Name": "p", "GeofenceType": "polygon",
                   "PolygonPositions": [[{"Lat": 0, "Lon": 0}, {"Lat": 0, "Lon": 181}, {"Lat": 1, "Lon": 1}]]}),
            vec!["PolygonPositions[0][1].Lon"],
        ),
        (
            json!({"Name": "p", "GeofenceType": "polygon"}),
            vec!["PolygonPositions"],
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleCentre": {"Lat": 91, "Lon": 0}, "CircleRadius": 5}),
            vec!["CircleCentre.Lat"],
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleCentre": {"Lat": 1, "Lon": 0}}),
            vec!["CircleRadius"],
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleCentre": {"Lat": 1, "Lon": 0}, "CircleRadius": 0}),
            vec!["CircleRadius"],
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleRadius": 10}),
            vec!["CircleCentre"],
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleCentre": {"Lat": 1, "Lon": 0},
                   "CircleRadius": 10, "MinZoom": 15, "MaxZoom": 5}),
            vec!["MinZoom"],
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleCentre": {"Lat": 1, "Lon": 0},
                   "CircleRadius": 10, "PolygonPositions": square(), "FenceWidth": 3}),
            vec!["PolygonPositions", "FenceWidth"],
        ),
        (
            json!({"Name": "l", "GeofenceType": "polyline",
                   "PolylinePositions": [{"Lat": 0, "Lon": 0}, {"Lat": 1, "Lon": 1}]}),
            vec!["FenceWidth"],
        ),
        (
            json!({"Name": "l", "GeofenceType": "polyline", "FenceWidth": 10,
                   "PolylinePositions": [{"Lat": 0, "Lon": 0}]}),
            vec!["PolylinePositions"],
        ),
        (
            json!({"Name": "l", "GeofenceType": "polyline", "FenceWidth": -1,
                   "PolylinePositions": [{"Lat": 0, "Lon": 0}, {"Lat": 1, "Lon": 1}]}),
            vec!["FenceWidth"],
        ),
        (
            json!({"Name": "x", "GeofenceType": "square"}),
            vec!["GeofenceType"],
        ),
        (
            json!({"GeofenceType": "circle", "CircleCentre": {"Lat": 1, "Lon": 0}, "CircleRadius": 1}),
            vec!["Name"],
        ),
        (
            json!({"Name": "x".repeat(201), "GeofenceType": "circle",
                   "CircleCentre": {"Lat": 1, "Lon": 0}, "CircleRadius": 1}),
            vec!["Name"],
        ),
        (json!({"Name": "no type"}), vec!["GeofenceType"]),
    ];
    for (body, fields) in cases {
        let response = app.admin.post("/V2/1000/geofences", &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}");
    }
    assert!(names(&app.admin, "1000").await.is_empty());
}

async fn wrong_types_and_missing_fields_are_refused(app: TestApp) {
    let cases = [
        (json!({"Name": 5, "GeofenceType": "circle"}), "Name"),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleRadius": "big"}),
            "CircleRadius",
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleCentre": [51.5, -0.12]}),
            "CircleCentre",
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "CircleCentre": {"Lat": 1}}),
            "CircleCentre",
        ),
        (
            json!({"Name": "l", "GeofenceType": "polyline", "FenceWidth": 10.5}),
            "FenceWidth",
        ),
        (
            json!({"Name": "l", "GeofenceType": "polyline", "FenceWidth": "wide"}),
            "FenceWidth",
        ),
        (
            json!({"Name": "p", "GeofenceType": "polygon", "PolygonPositions": "square"}),
            "PolygonPositions",
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "AppliesToSubtenants": "yes"}),
            "AppliesToSubtenants",
        ),
        (
            json!({"Name": "c", "GeofenceType": "circle", "Properties": {"a": 1}}),
            "Properties.a",
        ),
    ];
    for (body, field) in cases {
        let response = app.admin.post("/V2/1000/geofences", &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{body}");
    }
    let malformed = app
        .admin
        .request(Method::POST, "/V2/1000/geofences")
        .header("content-type", "application/json")
        .body("{\"Name\": ")
        .send()
        .await
        .unwrap();
    assert_problem(malformed, 400, "malformed_json").await;
    assert!(names(&app.admin, "1000").await.is_empty());
}

async fn invalid_put_changes_nothing(app: TestApp) {
    let id = create(&app.admin, "1000", &circle("Depot")).await;
    let before = app
        .admin
        .get_json(&format!("/V2/1000/geofences/{id}"))
        .await;
    let mut bad = circle("Renamed");
    bad["CircleRadius"] = json!(-3);
    let response = app
        .admin
        .put(&format!("/V2/1000/geofences/{id}"), &bad)
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["CircleRadius"]);
    // Changing the type without the new shape's fields is refused too.
    let mut retype = circle("Renamed");
    retype["GeofenceType"] = json!("polygon");
    let response = app
        .admin
        .put(&format!("/V2/1000/geofences/{id}"), &retype)
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["CircleCentre", "CircleRadius", "PolygonPositions"]
    );
    let after = app
        .admin
        .get_json(&format!("/V2/1000/geofences/{id}"))
        .await;
    assert_eq!(before, after);
}

async fn names_are_unique_per_tenant(app: TestApp) {
    let id = create(&app.admin, "1000", &circle("Depot")).await;
    let response = app.admin.post("/V2/1000/geofences", &circle("DEPOT")).await;
    assert_problem(response, 409, "conflict").await;
    let other = create(&app.admin, "1000", &circle("Other")).await;
    let response = app
        .admin
        .put(&format!("/V2/1000/geofences/{other}"), &circle("depot"))
        .await;
    assert_problem(response, 409, "conflict").await;
    // Renaming a geofence to its own name (another spelling) is fine.
    let response = app
        .admin
        .put(&format!("/V2/1000/geofences/{id}"), &circle("DEPOT"))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // Another tenant may use the same name.
    let child = app.create_tenant("1000", "Child").await;
    create(&app.admin, &child, &circle("Depot")).await;
    assert_eq!(names(&app.admin, "1000").await, ["DEPOT", "Other"]);
}

async fn etag_and_if_match(app: TestApp) {
    let id = create(&app.admin, "1000", &circle("Depot")).await;
    let path = format!("/V2/1000/geofences/{id}");
    let response = app.admin.get(&path).await;
    let etag = response.headers()["etag"].to_str().unwrap().to_string();

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
        .json(&circle("Changed"))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(app.admin.get_json(&path).await["Name"], "Depot");

    let ok = app
        .admin
        .request(Method::PUT, &path)
        .header("if-match", &etag)
        .json(&circle("Changed"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let response = app.admin.get(&path).await;
    let new_etag = response.headers()["etag"].to_str().unwrap().to_string();
    assert_ne!(new_etag, etag);

    let stale_delete = app
        .admin
        .request(Method::DELETE, &path)
        .header("if-match", &etag)
        .send()
        .await
        .unwrap();
    assert_problem(stale_delete, 412, "precondition_failed").await;
    let delete = app
        .admin
        .request(Method::DELETE, &path)
        .header("if-match", &new_etag)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), StatusCode::OK);
}

async fn sibling_and_unknown_geofences_are_404(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let id = create(&app.admin, &a, &circle("A's")).await;
    let (_, b_admin) = app
        .create_user(&b, "b-admin@example.com", "Administrator")
        .await;
    // Through the sibling's own path, and through A's path (outside B's scope).
    for path in [
        format!("/V2/{b}/geofences/{id}"),
        format!("/V2/{a}/geofences/{id}"),
        format!("/V2/{a}/geofences"),
    ] {
        assert_not_found(b_admin.get(&path).await).await;
    }
    for path in [
        format!("/V2/{b}/geofences/{id}"),
        format!("/V2/{a}/geofences/{id}"),
    ] {
        assert_not_found(b_admin.put(&path, &circle("x")).await).await;
        assert_not_found(b_admin.delete(&path).await).await;
    }
    assert!(names(&b_admin, &b).await.is_empty());
    // A parent's geofence without AppliesToSubtenants is not visible below.
    assert_not_found(app.admin.get(&format!("/V2/{b}/geofences/{id}")).await).await;
    for bad in ["abc", "99999", "-1"] {
        assert_not_found(app.admin.get(&format!("/V2/{a}/geofences/{bad}")).await).await;
    }
    assert_eq!(names(&app.admin, &a).await, ["A's"]);
}

async fn applies_to_subtenants_is_read_only_below(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let grandchild = app.create_tenant(&child, "Grandchild").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    let mut shared = circle("Shared");
    shared["AppliesToSubtenants"] = json!(true);
    let shared_id = create(&app.admin, "1000", &shared).await;
    create(&app.admin, "1000", &circle("Private")).await;
    let mut child_shared = circle("Child shared");
    child_shared["AppliesToSubtenants"] = json!(true);
    let child_shared_id = create(&app.admin, &child, &child_shared).await;
    create(&app.admin, &grandchild, &circle("Own")).await;

    assert_eq!(names(&app.admin, "1000").await, ["Shared", "Private"]);
    assert_eq!(names(&app.admin, &child).await, ["Shared", "Child shared"]);
    assert_eq!(
        names(&app.admin, &grandchild).await,
        ["Shared", "Child shared", "Own"]
    );
    assert_eq!(names(&app.admin, &sibling).await, ["Shared"]);

    let (_, child_admin) = app
        .create_user(&child, "child-admin@example.com", "Administrator")
        .await;
    let got = child_admin
        .get_json(&format!("/V2/{grandchild}/geofences/{shared_id}"))
        .await;
    assert_eq!(got["Name"], "Shared");
    // Read-only below the owner, even for the root administrator.
    for (client, tenant, id) in [
        (&child_admin, child.as_str(), shared_id.as_str()),
        (&app.admin, grandchild.as_str(), child_shared_id.as_str()),
    ] {
        let path = format!("/V2/{tenant}/geofences/{id}");
        let problem =
            assert_problem(client.put(&path, &circle("Mine")).await, 403, "forbidden").await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(!detail.contains("1000"), "owner not named: {detail}");
        assert_problem(client.delete(&path).await, 403, "forbidden").await;
    }
    // The owner still manages it; the parent does not see a child's shared geofence.
    assert_not_found(
        app.admin
            .get(&format!("/V2/1000/geofences/{child_shared_id}"))
            .await,
    )
    .await;
    let path = format!("/V2/{child}/geofences/{child_shared_id}");
    assert_eq!(child_admin.delete(&path).await.status(), StatusCode::OK);
    assert_eq!(names(&app.admin, &grandchild).await, ["Shared", "Own"]);
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/1000/geofences/{shared_id}"))
            .await["Name"],
        "Shared"
    );
}

async fn read_only_users_cannot_write(app: TestApp) {
    let id = create(&app.admin, "1000", &circle("Depot")).await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    let path = format!("/V2/1000/geofences/{id}");
    for client in [&reader, &user] {
        assert_problem(
            client.post("/V2/1000/geofences", &circle("New")).await,
            403,
            "forbidden",
        )
        .await;
        assert_problem(client.put(&path, &circle("New")).await, 403, "forbidden").await;
        assert_problem(client.delete(&path).await, 403, "forbidden").await;
        assert_eq!(client.get_json(&path).await["Name"], "Depot");
    }
    assert_eq!(names(&reader, "1000").await, ["Depot"]);
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    create(&manager, "1000", &circle("By manager")).await;
}

async fn xml_round_trip_and_ieee754(app: TestApp) {
    let id = create(
        &app.admin,
        "1000",
        &json!({"Name": "Yard", "GeofenceType": "polygon",
                "PolygonPositions": [square()[0].clone(),
                    [{"Lat": 0.2, "Lon": 0.2}, {"Lat": 0.2, "Lon": 0.4}, {"Lat": 0.4, "Lon": 0.4}]],
                "Properties": {"site": "north"}}),
    )
    .await;
    let path = format!("/V2/1000/geofences/{id}");
    let xml = app
        .admin
        .request(Method::GET, &path)
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(xml.contains("<Geofence>"), "{xml}");
    let json_before = app.admin.get_json(&path).await;
    // The XML as read is accepted back and changes nothing but the version.
    let put = app
        .admin
        .request(Method::PUT, &path)
        .header("content-type", "application/xml")
        .body(xml.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::OK, "{xml}");
    let json_after = app.admin.get_json(&path).await;
    assert_eq!(
        json_before["PolygonPositions"],
        json_after["PolygonPositions"]
    );
    assert_eq!(json_after["PolygonPositions"].as_array().unwrap().len(), 2);
    assert_eq!(json_after["Properties"]["site"], "north");

    let line = create(
        &app.admin,
        "1000",
        &json!({"Name": "Road", "GeofenceType": "polyline", "FenceWidth": "25",
                "PolylinePositions": [{"Lat": 0, "Lon": 0}, {"Lat": 1, "Lon": 1}]}),
    )
    .await;
    let compatible: Value = app
        .admin
        .request(Method::GET, &format!("/V2/1000/geofences/{line}"))
        .header("accept", "application/json;IEEE754Compatible=true")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(compatible["FenceWidth"], "25");
    let plain = app
        .admin
        .get_json(&format!("/V2/1000/geofences/{line}"))
        .await;
    assert_eq!(plain["FenceWidth"], 25);
}
