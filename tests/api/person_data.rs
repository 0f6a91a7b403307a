//! A person's data (DESIGN §15), for Administrators only, audited: the export
//! (`GET /V2/{t}/users/{id}/export`, one JSON document with everything held about them)
//! and the erasure (`POST …/erase`: positions and messages gone, names replaced).

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::{create_notification, sos_message, sos_notification};
use crate::common::{TestApp, assert_not_found, assert_problem};
use crate::mo_messages::position_report;

crate::backend_tests!(
    the_export_holds_everything_about_the_person,
    only_administrators_in_scope_export,
    an_erasure_removes_positions_and_names,
    an_erasure_is_refused_while_the_person_may_need_help,
);

async fn assign_device(app: &TestApp, tenant: &str, device: &str, user: Option<&str>) {
    let body = json!({"DeviceId": device, "DeviceType": "InReach", "FriendlyName": device, "UserId": user});
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "register {device}");
}

async fn post(app: &TestApp, tenant: &str, device: &str, batch: Value) {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices/{device}/momessages"), &batch)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "post to {device}");
}

/// A monitoring session of "worker-phone", started with a note and ended.
async fn ended_session(app: &TestApp, tenant: &str) {
    let monitoring = format!("/V2/{tenant}/devices/worker-phone/monitoring");
    let body = json!({"DurationMinutes": 60, "Note": "Pump station 4"});
    let started = app.admin.post(&monitoring, &body).await;
    assert_eq!(started.status(), StatusCode::OK);
    assert_eq!(app.admin.delete(&monitoring).await.status(), StatusCode::OK);
}

async fn export(app: &TestApp, tenant: &str, user: &str) -> Value {
    let response = app
        .admin
        .get(&format!("/V2/{tenant}/users/{user}/export"))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .expect("text");
    assert_eq!(
        disposition,
        format!("attachment; filename=\"user-{user}-export.json\"")
    );
    let text = response.text().await.expect("the document");
    assert!(
        !text.contains("user-password-1") && !text.contains("$argon2"),
        "a secret in the export"
    );
    serde_json::from_str(&text).expect("one JSON document")
}

async fn the_export_holds_everything_about_the_person(app: TestApp) {
    let tenant = app.create_tenant("1000", "Water board").await;
    let (worker, _) = app
        .create_user(&tenant, "lone.worker@water.test", "User")
        .await;
    let (colleague, _) = app
        .create_user(&tenant, "colleague@water.test", "User")
        .await;
    assign_device(&app, &tenant, "worker-phone", Some(&worker)).await;
    assign_device(&app, &tenant, "colleague-phone", Some(&colleague)).await;
    create_notification(&app, &tenant, &sos_notification()).await;
    // More messages than a page of the export reads, and an SOS that raises an alert.
    let batch: Vec<Value> = (1..=250)
        .map(|n| {
            position_report(
                n,
                &format!("2026-11-30T{:02}:{:02}:00Z", n / 60, n % 60),
                54.6,
                -3.13,
            )
        })
        .collect();
    post(&app, &tenant, "worker-phone", json!(batch)).await;
    post(
        &app,
        &tenant,
        "worker-phone",
        json!([sos_message(251, "2026-11-30T05:00:00Z", 54.6, -3.13)]),
    )
    .await;
    post(
        &app,
        &tenant,
        "colleague-phone",
        json!([position_report(1, "2026-11-30T10:00:00Z", 51.5, -0.1)]),
    )
    .await;
    ended_session(&app, &tenant).await;

    let document = export(&app, &tenant, &worker).await;
    assert_eq!(document["User"]["Username"], "lone.worker@water.test");
    assert_eq!(document["ExportedBy"], crate::common::ADMIN_EMAIL);
    let devices: Vec<&str> = document["Devices"]
        .as_array()
        .expect("devices")
        .iter()
        .filter_map(|d| d["DeviceId"].as_str())
        .collect();
    assert_eq!(devices, ["worker-phone"], "only their devices");
    let messages = document["MoMessages"].as_array().expect("messages");
    assert_eq!(messages.len(), 251, "every message, across pages");
    assert!(messages.iter().all(|m| m["DeviceId"] == "worker-phone"));
    let alerts = document["Alerts"].as_array().expect("alerts");
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(alerts[0]["Alert"]["DeviceId"], "worker-phone");
    assert!(
        !alerts[0]["Timeline"]
            .as_array()
            .expect("a timeline")
            .is_empty()
    );
    let sessions = document["MonitoringSessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["Note"], "Pump station 4");
    let audit = document["AuditEntries"].as_array().expect("audit entries");
    assert!(
        audit
            .iter()
            .all(|e| e["ResourceType"] == "User" && e["ResourceId"] == worker.as_str()),
        "{audit:?}"
    );
    assert!(audit.iter().any(|e| e["Action"] == "Create"), "{audit:?}");

    // The export itself is in the audit log, naming the user by id.
    let log = app
        .admin
        .get_json(&format!("/V2/{tenant}/auditlog?action=Export"))
        .await;
    let exports = log.as_array().expect("entries");
    assert_eq!(exports.len(), 1, "{log}");
    assert_eq!(exports[0]["ResourceId"], worker.as_str());
    assert_eq!(exports[0]["Actor"], crate::common::ADMIN_EMAIL);

    // A person with nothing yet: empty sections, still one document; by username too.
    let document = export(&app, &tenant, &colleague).await;
    assert_eq!(document["MoMessages"].as_array().map(Vec::len), Some(1));
    let by_name = app
        .admin
        .get(&format!("/V2/{tenant}/users/colleague@water.test/export"))
        .await;
    assert_eq!(by_name.status(), StatusCode::OK);
}

async fn only_administrators_in_scope_export(app: TestApp) {
    let tenant = app.create_tenant("1000", "Water board").await;
    let sibling = app.create_tenant("1000", "Other board").await;
    let (worker, worker_client) = app.create_user(&tenant, "worker@water.test", "User").await;
    let (_, manager) = app
        .create_user(&tenant, "manager@water.test", "Manager")
        .await;
    let (_, foreign_admin) = app
        .create_user(&sibling, "admin@other.test", "Administrator")
        .await;
    let path = format!("/V2/{tenant}/users/{worker}/export");
    for client in [&manager, &worker_client] {
        assert_problem(client.get(&path).await, 403, "forbidden").await;
    }
    assert_not_found(foreign_admin.get(&path).await).await;
    assert_not_found(
        foreign_admin
            .get(&format!("/V2/{sibling}/users/{worker}/export"))
            .await,
    )
    .await;
    assert_not_found(
        app.admin
            .get(&format!("/V2/{tenant}/users/999999/export"))
            .await,
    )
    .await;
    assert_eq!(
        app.anonymous().get(&path).await.status(),
        StatusCode::UNAUTHORIZED
    );
    // None of the refusals was an export.
    let log = app
        .admin
        .get_json("/V2/1000/auditlog?action=Export&subtenants=true")
        .await;
    assert_eq!(log.as_array().map(Vec::len), Some(0), "{log}");
}

/// A worker with a name, a phone, a device and its history: an SOS alert handled with a
/// note naming them, and an ended monitoring session. Returns the worker's id.
async fn worker_with_history(app: &TestApp, tenant: &str) -> String {
    let body = json!({"Username": "lone.worker@water.test", "Password": crate::common::PASSWORD,
        "UserRoleId": "User", "FirstName": "Lone", "LastName": "Worker"});
    let response = app.admin.post(&format!("/V2/{tenant}/users"), &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let location = response.headers()["location"].to_str().expect("location");
    let worker = location.rsplit('/').next().expect("id").to_string();
    let profile = json!({"CellPhone": "+447700900123", "City": "Keswick"});
    let response = app
        .admin
        .put(&format!("/V2/{tenant}/userprofile/{worker}"), &profile)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "profile");
    assign_device(app, tenant, "worker-phone", Some(&worker)).await;
    create_notification(app, tenant, &sos_notification()).await;
    post(
        app,
        tenant,
        "worker-phone",
        json!([position_report(1, "2026-11-30T10:00:00Z", 54.6, -3.13)]),
    )
    .await;
    post(
        app,
        tenant,
        "worker-phone",
        json!([sos_message(2, "2026-11-30T10:05:00Z", 54.6, -3.13)]),
    )
    .await;
    let alerts = app.admin.get_json(&format!("/V2/{tenant}/alerts")).await;
    let alert = alerts[0]["AlertId"].as_str().expect("an alert").to_string();
    let path = format!("/V2/{tenant}/alerts/{alert}");
    let note = json!({"Note": "Called Lone Worker on +447700900123: fell, ambulance sent"});
    assert_eq!(
        app.admin
            .post(&format!("{path}/acknowledge"), &note)
            .await
            .status(),
        StatusCode::OK
    );
    let resolution = json!({"Resolution": "Lone Worker taken to hospital"});
    assert_eq!(
        app.admin
            .post(&format!("{path}/resolve"), &resolution)
            .await
            .status(),
        StatusCode::OK
    );
    ended_session(app, tenant).await;
    worker
}

async fn erase(app: &TestApp, tenant: &str, user: &str, confirm: Value) -> reqwest::Response {
    app.admin
        .post(
            &format!("/V2/{tenant}/users/{user}/erase"),
            &json!({"Confirm": confirm}),
        )
        .await
}

async fn an_erasure_removes_positions_and_names(app: TestApp) {
    let tenant = app.create_tenant("1000", "Water board").await;
    let worker = worker_with_history(&app, &tenant).await;
    let before = export(&app, &tenant, &worker).await;
    for confirm in [json!("someone.else@water.test"), json!(null), json!("")] {
        let problem = assert_problem(
            erase(&app, &tenant, &worker, confirm).await,
            400,
            "validation_failed",
        )
        .await;
        assert_eq!(crate::common::problem_fields(&problem), ["Confirm"]);
    }
    let unchanged = export(&app, &tenant, &worker).await;
    assert_eq!(
        unchanged["MoMessages"], before["MoMessages"],
        "a refused erasure changes nothing"
    );

    let response = erase(&app, &tenant, &worker, json!("lone.worker@water.test")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let messages = app
        .admin
        .get_json(&format!("/V2/{tenant}/devices/worker-phone/momessages"))
        .await;
    assert_eq!(messages, json!([]), "the messages are gone");
    let device = app
        .admin
        .get_json(&format!("/V2/{tenant}/devices/worker-phone"))
        .await;
    assert_eq!(device["LastPosition"], Value::Null, "{device}");
    let user = app
        .admin
        .get_json(&format!("/V2/{tenant}/users/{worker}"))
        .await;
    assert_eq!(user["Username"], format!("erased-{worker}@erased.invalid"));
    assert_eq!(user["FirstName"], Value::Null);
    assert_eq!(user["IsDisabled"], true);
    let login = app
        .client("lone.worker@water.test", crate::common::PASSWORD)
        .get(&format!("/V2/{tenant}"))
        .await;
    assert_eq!(login.status(), StatusCode::UNAUTHORIZED);

    // Nothing the platform holds names them or says where they were.
    let after = export(&app, &tenant, &worker).await;
    let alert_id = after["Alerts"][0]["Alert"]["AlertId"]
        .as_str()
        .expect("the alert stays")
        .to_string();
    let alert = app
        .admin
        .get_json(&format!("/V2/{tenant}/alerts/{alert_id}"))
        .await;
    let timeline = app
        .admin
        .get_json(&format!("/V2/{tenant}/alerts/{alert_id}/timeline"))
        .await;
    let deliveries = app
        .admin
        .get_json(&format!("/V2/{tenant}/deliveries"))
        .await;
    let history = app
        .admin
        .get_json(&format!(
            "/V2/{tenant}/devices/worker-phone/monitoring/history"
        ))
        .await;
    let audit = app.admin.get_json(&format!("/V2/{tenant}/auditlog")).await;
    assert_eq!(alert["Latitude"], Value::Null, "{alert}");
    assert_eq!(alert["Resolution"], "[erased] taken to hospital");
    assert!(
        timeline.to_string().contains("Called [erased] on [erased]"),
        "{timeline}"
    );
    assert!(!deliveries.as_array().expect("deliveries").is_empty());
    for (what, text) in [
        ("export", after.to_string()),
        ("alert", alert.to_string()),
        ("timeline", timeline.to_string()),
        ("deliveries", deliveries.to_string()),
        ("history", history.to_string()),
        ("audit log", audit.to_string()),
    ] {
        for personal in [
            "lone.worker@water.test",
            "Lone Worker",
            "+447700900123",
            "Pump station 4",
            "54.6",
        ] {
            assert!(
                !text.contains(personal),
                "{personal} still in the {what}: {text}"
            );
        }
    }
    // Who erased whom, by id.
    let erased = app
        .admin
        .get_json(&format!("/V2/{tenant}/auditlog?action=Erase"))
        .await;
    assert_eq!(erased[0]["ResourceId"], worker.as_str(), "{erased}");
    assert_eq!(erased[0]["Actor"], crate::common::ADMIN_EMAIL);
}

async fn an_erasure_is_refused_while_the_person_may_need_help(app: TestApp) {
    let tenant = app.create_tenant("1000", "Water board").await;
    let (worker, worker_client) = app.create_user(&tenant, "worker@water.test", "User").await;
    let (_, manager) = app
        .create_user(&tenant, "manager@water.test", "Manager")
        .await;
    assign_device(&app, &tenant, "worker-phone", Some(&worker)).await;
    create_notification(&app, &tenant, &sos_notification()).await;
    post(
        &app,
        &tenant,
        "worker-phone",
        json!([sos_message(1, "2026-11-30T10:05:00Z", 54.6, -3.13)]),
    )
    .await;
    let confirm = json!("worker@water.test");
    let problem = assert_problem(
        erase(&app, &tenant, &worker, confirm.clone()).await,
        409,
        "conflict",
    )
    .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("open alert"),
        "{problem}"
    );
    let alerts = app.admin.get_json(&format!("/V2/{tenant}/alerts")).await;
    let path = format!(
        "/V2/{tenant}/alerts/{}",
        alerts[0]["AlertId"].as_str().expect("id")
    );
    assert_eq!(
        app.admin
            .post(&format!("{path}/resolve"), &json!({}))
            .await
            .status(),
        StatusCode::OK
    );
    let monitoring = format!("/V2/{tenant}/devices/worker-phone/monitoring");
    assert_eq!(
        app.admin
            .post(&monitoring, &json!({"DurationMinutes": 60}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_problem(
        erase(&app, &tenant, &worker, confirm.clone()).await,
        409,
        "conflict",
    )
    .await;
    let messages = app
        .admin
        .get_json(&format!("/V2/{tenant}/devices/worker-phone/momessages"))
        .await;
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "nothing erased");
    // Only an Administrator of the scope.
    let erase_path = format!("/V2/{tenant}/users/{worker}/erase");
    for client in [&manager, &worker_client] {
        assert_problem(
            client.post(&erase_path, &json!({"Confirm": confirm})).await,
            403,
            "forbidden",
        )
        .await;
    }
    assert_not_found(
        app.admin
            .post(
                &format!("/V2/{tenant}/users/999999/erase"),
                &json!({"Confirm": "x"}),
            )
            .await,
    )
    .await;
    let log = app
        .admin
        .get_json(&format!("/V2/{tenant}/auditlog?action=Erase"))
        .await;
    assert_eq!(log, json!([]), "no erasure recorded");
}
