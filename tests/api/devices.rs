use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    groups_crud_and_unique_names,
    group_with_devices_cannot_be_deleted,
    device_crud_round_trip,
    device_ids_are_unique_within_a_tenant,
    device_validation_lists_fields_and_stores_nothing,
    device_references_must_be_in_scope,
    device_types_follow_the_tenant,
    device_patch_and_preconditions,
    deleting_a_device_records_it_redacted,
    deleted_devices_need_access_all_devices,
    devices_of_other_tenants_are_404,
);

async fn create_group(app: &TestApp, tenant: &str, name: &str) -> String {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/groups"), &json!({"Name": name}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

async fn create_device(app: &TestApp, tenant: &str, body: Value) {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create device {body}");
}

async fn device_count(app: &TestApp, tenant: &str) -> usize {
    app.admin
        .get_json(&format!("/V2/{tenant}/devices"))
        .await
        .as_array()
        .unwrap()
        .len()
}

async fn groups_crud_and_unique_names(app: TestApp) {
    let id = create_group(&app, "1000", "Vans").await;
    let group = app.admin.get_json(&format!("/V2/1000/groups/{id}")).await;
    assert_eq!(group["Name"], "Vans");
    assert_eq!(group["GroupId"], id);
    assert_problem(
        app.admin
            .post("/V2/1000/groups", &json!({"Name": "Vans"}))
            .await,
        409,
        "conflict",
    )
    .await;
    let other_case = app
        .admin
        .post("/V2/1000/groups", &json!({"Name": " vans "}))
        .await;
    assert_problem(other_case, 409, "conflict").await;
    let missing = app
        .admin
        .post("/V2/1000/groups", &json!({"Description": "no name"}))
        .await;
    assert_eq!(
        problem_fields(&assert_problem(missing, 400, "validation_failed").await),
        ["Name"]
    );
    let put = app
        .admin
        .put(
            &format!("/V2/1000/groups/{id}"),
            &json!({"Name": "Trucks", "Description": "Heavy"}),
        )
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    assert_eq!(
        app.admin.get_json(&format!("/V2/1000/groups/{id}")).await["Name"],
        "Trucks"
    );
    assert_eq!(
        app.admin
            .get_json("/V2/1000/groups")
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/groups/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&format!("/V2/1000/groups/{id}")).await).await;
    assert_not_found(app.admin.get("/V2/1000/groups/abc").await).await;
}

async fn group_with_devices_cannot_be_deleted(app: TestApp) {
    let id = create_group(&app, "1000", "Field").await;
    create_device(
        &app,
        "1000",
        json!({"DeviceId": "dev-1", "DeviceType": "InReach", "GroupId": id}),
    )
    .await;
    assert_problem(
        app.admin.delete(&format!("/V2/1000/groups/{id}")).await,
        409,
        "conflict",
    )
    .await;
    assert_eq!(
        app.admin
            .get(&format!("/V2/1000/groups/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.delete("/V2/1000/devices/dev-1").await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/groups/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
}

async fn device_crud_round_trip(app: TestApp) {
    let group = create_group(&app, "1000", "Fleet").await;
    let (user, _) = app.create_user("1000", "driver@example.com", "User").await;
    let body = json!({
        "DeviceId": "300234010753370", "DeviceType": "InReach", "FriendlyName": "Van 7",
        "UserId": user, "GroupId": group, "IridiumImei": "300234010753370",
        "SimNumber": "8944100000000000001", "PhoneNumber": "+447700900123",
        "Tags": {"VehicleType": "Van", "SpeedLimitKmh": "90"}, "Properties": {"Colour": "White"}
    });
    let response = app.admin.post("/V2/1000/devices", &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["location"],
        "/V2/1000/devices/300234010753370"
    );
    let device = app.admin.get_json("/V2/1000/devices/300234010753370").await;
    assert_eq!(device["FriendlyName"], "Van 7");
    assert_eq!(device["UserId"], user);
    assert_eq!(device["GroupId"], group);
    assert_eq!(device["Status"], "Active");
    assert_eq!(device["Tags"]["SpeedLimitKmh"], "90");
    assert!(device["ETag"].is_string());
    let put = app
        .admin
        .put(
            "/V2/1000/devices/300234010753370",
            &json!({"DeviceId": "ignored", "DeviceType": "InReach", "Status": "Inactive"}),
        )
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    let device = app.admin.get_json("/V2/1000/devices/300234010753370").await;
    assert_eq!(device["DeviceId"], "300234010753370");
    assert_eq!(device["Status"], "Inactive");
    assert!(device["UserId"].is_null());
    assert_eq!(device_count(&app, "1000").await, 1);
}

/// Unique within a tenant only: another tenant registers the same id as its own
/// (`device_tenancy.rs` holds the two apart).
async fn device_ids_are_unique_within_a_tenant(app: TestApp) {
    let other = app.create_tenant("1000", "Other").await;
    create_device(&app, "1000", json!({"DeviceId": "same", "DeviceType": "X"})).await;
    let again = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "same", "DeviceType": "X"}),
        )
        .await;
    assert_problem(again, 409, "conflict").await;
    assert_eq!(device_count(&app, "1000").await, 1);
    create_device(&app, &other, json!({"DeviceId": "same", "DeviceType": "X"})).await;
    assert_eq!(device_count(&app, &other).await, 1);
}

async fn device_validation_lists_fields_and_stores_nothing(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "bad id!", "IridiumImei": "12", "SimNumber": "x", "PhoneNumber": "0123",
                    "Status": "Lost", "Tags": {"SpeedLimitKmh": "fast"}}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        [
            "DeviceId",
            "DeviceType",
            "IridiumImei",
            "SimNumber",
            "PhoneNumber",
            "Status",
            "Tags.SpeedLimitKmh"
        ]
    );
    let wrong_type = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "d", "DeviceType": "X", "Tags": ["a"]}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(wrong_type, 400, "validation_failed").await),
        ["Tags"]
    );
    assert_eq!(device_count(&app, "1000").await, 0);
}

async fn device_references_must_be_in_scope(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let b_group = create_group(&app, &b, "B group").await;
    let (b_user, _) = app.create_user(&b, "b@example.com", "User").await;
    for (body, field) in [
        (
            json!({"DeviceId": "d1", "DeviceType": "X", "GroupId": b_group}),
            "GroupId",
        ),
        (
            json!({"DeviceId": "d1", "DeviceType": "X", "GroupId": "999999"}),
            "GroupId",
        ),
        (
            json!({"DeviceId": "d1", "DeviceType": "X", "UserId": b_user}),
            "UserId",
        ),
    ] {
        let response = app.admin.post(&format!("/V2/{a}/devices"), &body).await;
        assert_eq!(
            problem_fields(&assert_problem(response, 400, "validation_failed").await),
            [field]
        );
    }
    assert_eq!(device_count(&app, &a).await, 0);
}

async fn device_types_follow_the_tenant(app: TestApp) {
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "DeviceTypes": "InReach, Spot"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let wrong = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "d", "DeviceType": "Garmin"}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(wrong, 400, "validation_failed").await),
        ["DeviceType"]
    );
    create_device(&app, "1000", json!({"DeviceId": "d", "DeviceType": "Spot"})).await;
}

async fn device_patch_and_preconditions(app: TestApp) {
    create_device(&app, "1000", json!({"DeviceId": "p1", "DeviceType": "X"})).await;
    let ok = app
        .admin
        .patch(
            "/V2/1000/devices/p1",
            &json!([{"op": "add", "path": "/FriendlyName", "value": "Bike"}]),
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(
        app.admin.get_json("/V2/1000/devices/p1").await["FriendlyName"],
        "Bike"
    );
    let read_only = app
        .admin
        .patch(
            "/V2/1000/devices/p1",
            &json!([{"op": "replace", "path": "/DeviceId", "value": "p2"}]),
        )
        .await;
    assert_problem(read_only, 400, "validation_failed").await;
    let invalid = app
        .admin
        .patch(
            "/V2/1000/devices/p1",
            &json!([{"op": "replace", "path": "/Status", "value": "Gone"}]),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(invalid, 400, "validation_failed").await),
        ["Status"]
    );
    let stale = app
        .admin
        .request(Method::PUT, "/V2/1000/devices/p1")
        .header("if-match", "\"stale\"")
        .json(&json!({"DeviceType": "Y"}))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    let device = app.admin.get_json("/V2/1000/devices/p1").await;
    assert_eq!(device["DeviceType"], "X");
    assert_eq!(device["Status"], "Active");
}

async fn deleting_a_device_records_it_redacted(app: TestApp) {
    let (user, _) = app.create_user("1000", "jane@example.com", "User").await;
    create_device(
        &app,
        "1000",
        json!({"DeviceId": "gone-1", "DeviceType": "X", "UserId": user, "FriendlyName": "Old"}),
    )
    .await;
    assert_eq!(
        app.admin.delete("/V2/1000/devices/gone-1").await.status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get("/V2/1000/devices/gone-1").await).await;
    let log = app.admin.get_json("/V2/1000/deleteddevices").await;
    assert_eq!(log.as_array().unwrap().len(), 1);
    let entry = &log[0];
    assert_eq!(entry["DeviceId"], "gone-1");
    assert_eq!(entry["FriendlyName"], "Old");
    assert_eq!(entry["TenantCode"], "1000");
    assert_eq!(entry["TenantDescription"], "Root");
    assert_eq!(entry["Username"], "j***@example.com");
    assert_eq!(entry["DeletedBy"], "a***@safetrack.test");
    assert!(entry["DateDeleted"].is_string());
    // Re-registered and deleted again: two entries for the id.
    create_device(
        &app,
        "1000",
        json!({"DeviceId": "gone-1", "DeviceType": "X"}),
    )
    .await;
    assert_eq!(
        app.admin.delete("/V2/1000/devices/gone-1").await.status(),
        StatusCode::OK
    );
    let both = app.admin.get_json("/V2/1000/deleteddevices/gone-1").await;
    assert_eq!(both.as_array().unwrap().len(), 2);
    assert_eq!(
        app.admin.get_json("/V2/1000/deleteddevices/other").await,
        json!([])
    );
}

async fn deleted_devices_need_access_all_devices(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    create_device(&app, &child, json!({"DeviceId": "c1", "DeviceType": "X"})).await;
    assert_eq!(
        app.admin
            .delete(&format!("/V2/{child}/devices/c1"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json("/V2/1000/deleteddevices").await,
        json!([])
    );
    let with_sub = app
        .admin
        .get_json("/V2/1000/deleteddevices?subtenants=true")
        .await;
    assert_eq!(with_sub.as_array().unwrap().len(), 1);
    assert_eq!(
        app.admin
            .get_json("/V2/1000/deleteddevices/c1?subtenants=true")
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let (_, manager) = app.create_user("1000", "m@example.com", "Manager").await;
    assert_eq!(
        manager.get("/V2/1000/deleteddevices").await.status(),
        StatusCode::OK
    );
    for role in ["User", "ReadOnly"] {
        let (_, client) = app
            .create_user("1000", &format!("{role}@example.com"), role)
            .await;
        assert_problem(
            client.get("/V2/1000/deleteddevices").await,
            403,
            "forbidden",
        )
        .await;
        assert_problem(
            client.get("/V2/1000/deleteddevices/c1").await,
            403,
            "forbidden",
        )
        .await;
        let create = client
            .post(
                "/V2/1000/devices",
                &json!({"DeviceId": "nope", "DeviceType": "X"}),
            )
            .await;
        assert_problem(create, 403, "forbidden").await;
        assert_eq!(
            client.get("/V2/1000/devices").await.status(),
            StatusCode::OK
        );
    }
    assert_eq!(device_count(&app, "1000").await, 0);
}

async fn devices_of_other_tenants_are_404(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    create_device(&app, &b, json!({"DeviceId": "b-dev", "DeviceType": "X"})).await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    assert_not_found(a_admin.get(&format!("/V2/{a}/devices/b-dev")).await).await;
    assert_not_found(a_admin.get(&format!("/V2/{b}/devices/b-dev")).await).await;
    assert_not_found(a_admin.delete(&format!("/V2/{a}/devices/b-dev")).await).await;
    assert_not_found(
        a_admin
            .put(
                &format!("/V2/{a}/devices/b-dev"),
                &json!({"DeviceType": "X"}),
            )
            .await,
    )
    .await;
    assert_not_found(a_admin.get(&format!("/V2/{b}/deleteddevices")).await).await;
    assert_eq!(device_count(&app, &b).await, 1);
}
