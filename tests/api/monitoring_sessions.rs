//! Lone-worker monitoring sessions through the API (`/V2/{t}/devices/{id}/monitoring`,
//! issue 45 §1; docs/monitoring.md).

use jiff::{SignedDuration, Timestamp};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    a_start_takes_device_then_tenant_then_built_in_defaults,
    every_bad_value_is_named_and_nothing_is_stored,
    foreign_and_unknown_devices_are_not_found,
    a_check_in_moves_the_next_due_time,
    patch_extends_and_if_match_holds,
    ending_and_history,
    a_worker_ends_a_session_and_a_reader_cannot,
    the_active_list_with_subtenants,
    two_parallel_starts_leave_one,
    deleting_the_device_ends_its_session,
);

fn monitoring(tenant: &str, device: &str) -> String {
    format!("/V2/{tenant}/devices/{device}/monitoring")
}

async fn device(app: &TestApp, tenant: &str, id: &str, properties: Value) {
    let body = json!({"DeviceId": id, "DeviceType": "InReach", "Properties": properties});
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create device {body}");
}

/// Starts a session that must be accepted.
async fn start(app: &TestApp, tenant: &str, id: &str, body: Value) {
    let response = app.admin.post(&monitoring(tenant, id), &body).await;
    assert_eq!(response.status(), StatusCode::OK, "start {body}");
    assert_eq!(
        response.headers()["location"].to_str().unwrap(),
        monitoring(tenant, id)
    );
}

fn time(value: &Value) -> Timestamp {
    value.as_str().expect("a time").parse().expect("timestamp")
}

fn mins(n: i64) -> SignedDuration {
    SignedDuration::from_mins(n)
}

async fn a_start_takes_device_then_tenant_then_built_in_defaults(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000",
            &json!({"Description": "Site", "Properties": {
                "CheckInIntervalMinutes": "45", "GraceMinutes": "10"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let tenant = response.json::<Value>().await.unwrap()["TenantCode"]
        .as_str()
        .unwrap()
        .to_string();
    device(&app, &tenant, "w1", json!({"CheckInIntervalMinutes": "30"})).await;
    let before = Timestamp::now();
    start(&app, &tenant, "w1", json!({})).await;
    let session = app.admin.get_json(&monitoring(&tenant, "w1")).await;
    assert_eq!(session["DeviceId"], "w1");
    assert_eq!(session["TenantCode"], tenant.as_str());
    assert_eq!(session["CheckInIntervalMinutes"], 30, "the device's");
    assert_eq!(session["GraceMinutes"], 10, "the tenant's");
    assert_eq!(session["DurationMinutes"], 480, "built in");
    assert_eq!(session["ReminderMinutes"], 5);
    assert_eq!(session["NoMotionMinutes"], 0);
    assert_eq!(session["State"], "Ok");
    assert_eq!(session["NextDueAct"], "CheckIn");
    assert_eq!(session["CheckInCount"], 0);
    assert_eq!(session["LastCheckInAt"], Value::Null);
    assert_eq!(session["StartedBy"], crate::common::ADMIN_EMAIL);
    let started = time(&session["StartedAt"]);
    assert!(started >= before - mins(1));
    assert_eq!(time(&session["NextDueAt"]), started + mins(30));
    assert_eq!(time(&session["ReminderAt"]), started + mins(25));
    assert_eq!(time(&session["PlannedEndAt"]), started + mins(480));

    let again = app.admin.post(&monitoring(&tenant, "w1"), &json!({})).await;
    assert_problem(again, 409, "conflict").await;

    // What the client sends beats every default.
    device(&app, &tenant, "w2", json!({"CheckInIntervalMinutes": "30"})).await;
    start(
        &app,
        &tenant,
        "w2",
        json!({"DurationMinutes": 120, "CheckInIntervalMinutes": 20, "GraceMinutes": 0,
               "ReminderMinutes": 0, "NoMotionMinutes": 15, "Note": "Pump station 4"}),
    )
    .await;
    let session = app.admin.get_json(&monitoring(&tenant, "w2")).await;
    assert_eq!(session["CheckInIntervalMinutes"], 20);
    assert_eq!(session["GraceMinutes"], 0);
    assert_eq!(session["ReminderAt"], Value::Null);
    assert_eq!(session["NoMotionMinutes"], 15);
    assert_eq!(session["Note"], "Pump station 4");
}

async fn every_bad_value_is_named_and_nothing_is_stored(app: TestApp) {
    device(&app, "1000", "w1", json!({})).await;
    let path = monitoring("1000", "w1");
    for (body, field) in [
        (json!({"DurationMinutes": 0}), "DurationMinutes"),
        (json!({"DurationMinutes": 10_081}), "DurationMinutes"),
        (json!({"DurationMinutes": "soon"}), "DurationMinutes"),
        (json!({"DurationMinutes": 1.5}), "DurationMinutes"),
        (
            json!({"CheckInIntervalMinutes": 0}),
            "CheckInIntervalMinutes",
        ),
        (
            json!({"DurationMinutes": 30, "CheckInIntervalMinutes": 31}),
            "CheckInIntervalMinutes",
        ),
        (
            json!({"CheckInIntervalMinutes": true}),
            "CheckInIntervalMinutes",
        ),
        (json!({"GraceMinutes": 121}), "GraceMinutes"),
        (json!({"GraceMinutes": -1}), "GraceMinutes"),
        (
            json!({"CheckInIntervalMinutes": 10, "ReminderMinutes": 10}),
            "ReminderMinutes",
        ),
        (json!({"NoMotionMinutes": 4}), "NoMotionMinutes"),
        (json!({"NoMotionMinutes": 1_441}), "NoMotionMinutes"),
        (json!({"Note": "n".repeat(501)}), "Note"),
        (json!({"Note": 5}), "Note"),
    ] {
        let response = app.admin.post(&path, &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{body}");
        assert_not_found(app.admin.get(&path).await).await;
    }
    // No body at all is refused (`{}` asks for every default).
    let bare = app.admin.request(Method::POST, &path).send().await.unwrap();
    assert!(bare.status().is_client_error(), "{}", bare.status());
    assert_not_found(app.admin.get(&path).await).await;
    // Every bad field at once.
    let response = app
        .admin
        .post(
            &path,
            &json!({"DurationMinutes": 0, "GraceMinutes": 500, "NoMotionMinutes": 2}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["DurationMinutes", "GraceMinutes", "NoMotionMinutes"]
    );
    assert_not_found(app.admin.get(&path).await).await;
    assert!(
        app.admin
            .get_json("/V2/1000/monitoring")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
}

async fn foreign_and_unknown_devices_are_not_found(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    device(&app, &a, "w1", json!({})).await;
    let (_, b_admin) = app
        .create_user(&b, "b-admin@example.com", "Administrator")
        .await;
    // Another tenant's device, through either path, and an unknown one: 404.
    for path in [monitoring(&a, "w1"), monitoring(&b, "w1")] {
        assert_not_found(b_admin.post(&path, &json!({})).await).await;
        assert_not_found(b_admin.get(&path).await).await;
        assert_not_found(b_admin.get(&format!("{path}/history")).await).await;
    }
    assert_not_found(app.admin.post(&monitoring(&a, "nobody"), &json!({})).await).await;
    assert_not_found(
        app.admin
            .get(&format!("{}/history", monitoring(&a, "nobody")))
            .await,
    )
    .await;
    // A session's history lines: another tenant's, unknown or not a number, 404.
    let started = app.admin.post(&monitoring(&a, "w1"), &json!({})).await;
    assert_eq!(started.status(), StatusCode::OK);
    let session = app.admin.get_json(&monitoring(&a, "w1")).await;
    let id = session["MonitoringSessionId"]
        .as_str()
        .expect("an id")
        .to_string();
    let lines = app
        .admin
        .get_json(&format!("/V2/{a}/monitoring/{id}/events"))
        .await;
    assert_eq!(lines[0]["Kind"], "Started");
    for path in [
        format!("/V2/{b}/monitoring/{id}/events"),
        format!("/V2/{a}/monitoring/999999/events"),
        format!("/V2/{a}/monitoring/abc/events"),
        format!("/V2/{a}/monitoring/-1/events"),
    ] {
        let caller = if path.contains(&format!("/{b}/")) {
            &b_admin
        } else {
            &app.admin
        };
        assert_not_found(caller.get(&path).await).await;
    }
    assert_eq!(
        app.admin.delete(&monitoring(&a, "w1")).await.status(),
        StatusCode::OK
    );
    // A device without a session: GET, check-in, PATCH and DELETE are 404.
    let path = monitoring(&a, "w1");
    assert_not_found(app.admin.get(&path).await).await;
    assert_not_found(
        app.admin
            .post(&format!("{path}/checkins"), &json!({}))
            .await,
    )
    .await;
    assert_not_found(app.admin.delete(&path).await).await;
    start(&app, &a, "w1", json!({})).await;
    assert_not_found(b_admin.delete(&monitoring(&a, "w1")).await).await;
    assert_not_found(
        b_admin
            .post(&format!("{}/checkins", monitoring(&a, "w1")), &json!({}))
            .await,
    )
    .await;
    assert_eq!(app.admin.get_json(&path).await["State"], "Ok");
}

async fn a_check_in_moves_the_next_due_time(app: TestApp) {
    device(&app, "1000", "w1", json!({})).await;
    let path = monitoring("1000", "w1");
    start(&app, "1000", "w1", json!({"CheckInIntervalMinutes": 60})).await;
    let before = app.admin.get_json(&path).await;
    let too_long = app
        .admin
        .post(
            &format!("{path}/checkins"),
            &json!({"Note": "n".repeat(501)}),
        )
        .await;
    let problem = assert_problem(too_long, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Note"]);
    assert_eq!(app.admin.get_json(&path).await["CheckInCount"], 0);

    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let response = app
        .admin
        .post(&format!("{path}/checkins"), &json!({"Note": "Called in"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let after = app.admin.get_json(&path).await;
    assert_eq!(after["CheckInCount"], 1);
    assert_eq!(after["LastCheckInKind"], "ApiCheckIn");
    let checked = time(&after["LastCheckInAt"]);
    assert!(checked > time(&before["StartedAt"]));
    assert_eq!(time(&after["NextDueAt"]), checked + mins(60));
    assert!(time(&after["NextDueAt"]) > time(&before["NextDueAt"]));
    assert_eq!(after["State"], "Ok");
    assert_ne!(after["Timestamp"], before["Timestamp"]);
}

async fn etag_of(app: &TestApp, path: &str) -> String {
    let response = app.admin.get(path).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.headers()["etag"].to_str().unwrap().to_string()
}

async fn patch_extends_and_if_match_holds(app: TestApp) {
    device(&app, "1000", "w1", json!({})).await;
    let path = monitoring("1000", "w1");
    start(&app, "1000", "w1", json!({"DurationMinutes": 120})).await;
    let etag = etag_of(&app, &path).await;
    let extend = json!([{"op": "replace", "path": "/DurationMinutes", "value": 600}]);
    let response = app.admin.patch(&path, &extend).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = app.admin.get_json(&path).await;
    assert_eq!(session["DurationMinutes"], 600);
    assert_eq!(
        time(&session["PlannedEndAt"]),
        time(&session["StartedAt"]) + mins(600)
    );
    // The old version no longer matches.
    let stale = app
        .admin
        .request(Method::PATCH, &path)
        .header("if-match", &etag)
        .header("content-type", "application/json-patch+json")
        .body(json!([{"op": "replace", "path": "/GraceMinutes", "value": 9}]).to_string())
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(app.admin.get_json(&path).await["GraceMinutes"], 5);
    // A bad value is named; nothing changes.
    let bad = app
        .admin
        .patch(
            &path,
            &json!([{"op": "replace", "path": "/CheckInIntervalMinutes", "value": 601}]),
        )
        .await;
    let problem = assert_problem(bad, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["CheckInIntervalMinutes"]);
    let fresh = etag_of(&app, &path).await;
    let response = app
        .admin
        .request(Method::PATCH, &path)
        .header("if-match", &fresh)
        .header("content-type", "application/json-patch+json")
        .body(
            json!([{"op": "replace", "path": "/CheckInIntervalMinutes", "value": 15}]).to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let session = app.admin.get_json(&path).await;
    assert_eq!(
        time(&session["NextDueAt"]),
        time(&session["StartedAt"]) + mins(15)
    );
    assert_eq!(session["DurationMinutes"], 600);
    let stale_delete = app
        .admin
        .request(Method::DELETE, &path)
        .header("if-match", &fresh)
        .send()
        .await
        .unwrap();
    assert_problem(stale_delete, 412, "precondition_failed").await;
    assert_eq!(app.admin.get(&path).await.status(), StatusCode::OK);
}

async fn ending_and_history(app: TestApp) {
    device(&app, "1000", "w1", json!({})).await;
    let path = monitoring("1000", "w1");
    assert!(
        app.admin
            .get_json(&format!("{path}/history"))
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    start(&app, "1000", "w1", json!({"Note": "First"})).await;
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
    start(&app, "1000", "w1", json!({"Note": "Second"})).await;
    let response = app
        .admin
        .delete(&format!("{path}?reason=Shift%20over"))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let history = app
        .admin
        .get_all_pages(&format!("{path}/history?pageSize=1"))
        .await;
    assert_eq!(history.len(), 2);
    assert_eq!(history[0]["Note"], "First");
    assert_eq!(history[1]["Note"], "Second");
    for ended in &history {
        assert_eq!(ended["EndKind"], "Normal");
        assert_eq!(ended["EndedBy"], crate::common::ADMIN_EMAIL);
        assert_eq!(ended["State"], Value::Null);
        assert_eq!(ended["NextDueAt"], Value::Null);
        assert!(time(&ended["EndedAt"]) >= time(&ended["StartedAt"]));
    }
    assert_eq!(history[0]["EndReason"], Value::Null);
    assert_eq!(history[1]["EndReason"], "Shift over");
    assert!(
        app.admin
            .get_json("/V2/1000/monitoring")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
}

async fn a_worker_ends_a_session_and_a_reader_cannot(app: TestApp) {
    device(&app, "1000", "w1", json!({})).await;
    let path = monitoring("1000", "w1");
    start(&app, "1000", "w1", json!({})).await;
    let (_, worker) = app.create_user("1000", "worker@example.com", "User").await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    assert_problem(reader.delete(&path).await, 403, "forbidden").await;
    assert_problem(reader.post(&path, &json!({})).await, 403, "forbidden").await;
    // An operator's force stop is its own operation (tests/api/monitoring_force_stop.rs).
    let stopped = app
        .admin
        .post(
            &format!("{path}/forcestop"),
            &json!({"Reason": "Worker reached by phone"}),
        )
        .await;
    assert_eq!(stopped.status(), StatusCode::OK);
    let history = app.admin.get_json(&format!("{path}/history")).await;
    assert_eq!(history[0]["EndKind"], "ForceStop");
    // The worker (a User) starts, checks in and ends a session of their own; a reader
    // can do none of it.
    assert_eq!(
        worker.post(&path, &json!({})).await.status(),
        StatusCode::OK
    );
    let check_ins = format!("{path}/checkins");
    assert_problem(reader.post(&check_ins, &json!({})).await, 403, "forbidden").await;
    assert_eq!(
        worker.post(&check_ins, &json!({})).await.status(),
        StatusCode::OK
    );
    assert_eq!(worker.delete(&path).await.status(), StatusCode::OK);
    let history = app.admin.get_json(&format!("{path}/history")).await;
    assert_eq!(history[1]["StartedBy"], "worker@example.com");
    assert_eq!(history[1]["EndKind"], "Normal");
    assert_eq!(history[1]["CheckInCount"], 1);
}

async fn the_active_list_with_subtenants(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    device(&app, "1000", "w1", json!({})).await;
    device(&app, "1000", "w2", json!({})).await;
    device(&app, &child, "c1", json!({})).await;
    start(&app, "1000", "w1", json!({"CheckInIntervalMinutes": 20})).await;
    start(&app, &child, "c1", json!({})).await;
    let own = app.admin.get_json("/V2/1000/monitoring").await;
    let own = own.as_array().unwrap();
    assert_eq!(own.len(), 1);
    assert_eq!(own[0]["DeviceId"], "w1");
    assert_eq!(own[0]["State"], "Ok");
    assert_eq!(
        time(&own[0]["NextDueAt"]),
        time(&own[0]["StartedAt"]) + mins(20)
    );
    let all = app
        .admin
        .get_all_pages("/V2/1000/monitoring?subtenants=true&pageSize=1")
        .await;
    let devices: Vec<(&str, &str)> = all
        .iter()
        .map(|s| {
            (
                s["TenantCode"].as_str().unwrap(),
                s["DeviceId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(devices, [("1000", "w1"), (child.as_str(), "c1")]);
    let from_child = app
        .admin
        .get_json(&format!("/V2/{child}/monitoring?subtenants=true"))
        .await;
    assert_eq!(from_child.as_array().unwrap().len(), 1);
}

async fn two_parallel_starts_leave_one(app: TestApp) {
    device(&app, "1000", "w1", json!({})).await;
    let path = monitoring("1000", "w1");
    let (one, two) = (json!({"Note": "one"}), json!({"Note": "two"}));
    let (first, second) = tokio::join!(app.admin.post(&path, &one), app.admin.post(&path, &two));
    let mut statuses = [first.status().as_u16(), second.status().as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409]);
    assert_eq!(
        app.admin
            .get_json("/V2/1000/monitoring")
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

async fn deleting_the_device_ends_its_session(app: TestApp) {
    device(&app, "1000", "gone-1", json!({})).await;
    let path = monitoring("1000", "gone-1");
    start(&app, "1000", "gone-1", json!({"DurationMinutes": 120})).await;
    let session = app.admin.get_json(&path).await;
    let id = session["MonitoringSessionId"]
        .as_str()
        .expect("an id")
        .to_string();
    let response = app.admin.delete("/V2/1000/devices/gone-1").await;
    assert!(response.status().is_success(), "delete the device");
    let active = app.admin.get_json("/V2/1000/monitoring").await;
    assert_eq!(active.as_array().map(Vec::len), Some(0), "{active}");
    let lines = app
        .admin
        .get_json(&format!("/V2/1000/monitoring/{id}/events"))
        .await;
    let ended = lines.as_array().and_then(|l| l.last()).expect("its lines");
    assert_eq!(ended["Kind"], "Ended", "{lines}");
    assert_eq!(ended["Detail"]["EndKind"], "ForceStop");
    assert_eq!(ended["Detail"]["Reason"], "Device deleted");
    assert_eq!(ended["Actor"], crate::common::ADMIN_EMAIL);
}
