//! A person's data export (DESIGN §15): `GET /V2/{t}/users/{id}/export`, one JSON
//! document with everything held about them, for Administrators only, audited.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::{create_notification, sos_message, sos_notification};
use crate::common::{TestApp, assert_not_found, assert_problem};
use crate::mo_messages::position_report;

crate::backend_tests!(
    the_export_holds_everything_about_the_person,
    only_administrators_in_scope_export,
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
    let monitoring = format!("/V2/{tenant}/devices/worker-phone/monitoring");
    let started = app
        .admin
        .post(
            &monitoring,
            &json!({"DurationMinutes": 60, "Note": "Pump station 4"}),
        )
        .await;
    assert_eq!(started.status(), StatusCode::OK);
    assert_eq!(app.admin.delete(&monitoring).await.status(), StatusCode::OK);

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
