//! An operator's force stop (`POST /V2/{t}/devices/{id}/monitoring/forcestop`,
//! `ForceStopMonitoring`; docs/monitoring.md): its own operation with a required
//! `Reason`, needing `ManageConfiguration`, `If-Match` honoured, audited.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    a_force_stop_ends_the_session_with_its_reason_and_is_audited,
    a_missing_blank_long_or_mistyped_reason_is_named_and_the_session_runs,
    only_a_caller_managing_the_configuration_may_force_stop,
    foreign_tenants_and_devices_without_a_session_are_not_found,
    a_stale_if_match_is_refused,
    delete_is_the_normal_end_and_refuses_force,
);

fn monitoring(tenant: &str, device: &str) -> String {
    format!("/V2/{tenant}/devices/{device}/monitoring")
}

fn force_stop(tenant: &str, device: &str) -> String {
    format!("{}/forcestop", monitoring(tenant, device))
}

/// A device with a current session.
async fn monitored(app: &TestApp, tenant: &str, id: &str) {
    let body = json!({"DeviceId": id, "DeviceType": "InReach"});
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create device {body}");
    let response = app.admin.post(&monitoring(tenant, id), &json!({})).await;
    assert_eq!(response.status(), StatusCode::OK, "start");
}

async fn still_running(client: &Client, tenant: &str, device: &str) {
    let session = client.get_json(&monitoring(tenant, device)).await;
    assert!(session["EndedAt"].is_null(), "{session}");
}

async fn a_force_stop_ends_the_session_with_its_reason_and_is_audited(app: TestApp) {
    monitored(&app, "1000", "w1").await;
    let path = monitoring("1000", "w1");
    let id = app.admin.get_json(&path).await["MonitoringSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let response = app
        .admin
        .post(
            &force_stop("1000", "w1"),
            &json!({"Reason": "Worker reached by phone"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
    let history = app.admin.get_json(&format!("{path}/history")).await;
    assert_eq!(history[0]["MonitoringSessionId"], id.as_str());
    assert_eq!(history[0]["EndKind"], "ForceStop");
    assert_eq!(history[0]["EndReason"], "Worker reached by phone");
    assert_eq!(history[0]["EndedBy"], crate::common::ADMIN_EMAIL);
    // The session's history ends with the force stop, its kind and reason.
    let lines = app
        .admin
        .get_json(&format!("/V2/1000/monitoring/{id}/events"))
        .await;
    let ended = lines.as_array().unwrap().last().unwrap();
    assert_eq!(ended["Kind"], "Ended");
    assert_eq!(ended["Detail"]["EndKind"], "ForceStop", "{ended}");
    assert_eq!(ended["Detail"]["Reason"], "Worker reached by phone");
    // Audited as the end of the session (a Delete of it).
    let entries = app
        .admin
        .get_all_pages("/V2/1000/auditlog?resourceType=MonitoringSession")
        .await;
    let what: Vec<(String, String)> = entries
        .iter()
        .rev()
        .map(|e| {
            (
                e["Action"].as_str().unwrap().to_string(),
                e["ResourceId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        what,
        [
            ("Create".to_string(), id.clone()),
            ("Delete".to_string(), id)
        ]
    );
    // A Manager may force stop too; the reason is kept trimmed.
    monitored(&app, "1000", "w2").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    let response = manager
        .post(
            &force_stop("1000", "w2"),
            &json!({"Reason": "  Exercise over  "}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let history = app
        .admin
        .get_json(&format!("{}/history", monitoring("1000", "w2")))
        .await;
    assert_eq!(history[0]["EndReason"], "Exercise over");
    assert_eq!(history[0]["EndedBy"], "manager@example.com");
}

async fn a_missing_blank_long_or_mistyped_reason_is_named_and_the_session_runs(app: TestApp) {
    monitored(&app, "1000", "w1").await;
    let path = force_stop("1000", "w1");
    for body in [
        json!({}),
        json!({"Reason": null}),
        json!({"Reason": ""}),
        json!({"Reason": "   "}),
        json!({"Reason": "r".repeat(501)}),
        json!({"Reason": 42}),
        json!({"Reason": ["Worker reached"]}),
    ] {
        let response = app.admin.post(&path, &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["Reason"], "{body}");
        still_running(&app.admin, "1000", "w1").await;
    }
    // Exactly 500 characters is fine.
    let response = app
        .admin
        .post(&path, &json!({"Reason": "r".repeat(500)}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let history = app
        .admin
        .get_json(&format!("{}/history", monitoring("1000", "w1")))
        .await;
    assert_eq!(history[0]["EndReason"].as_str().map(str::len), Some(500));
}

async fn only_a_caller_managing_the_configuration_may_force_stop(app: TestApp) {
    monitored(&app, "1000", "w1").await;
    let path = force_stop("1000", "w1");
    let body = json!({"Reason": "Test"});
    let (_, worker) = app.create_user("1000", "worker@example.com", "User").await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    for caller in [&worker, &reader] {
        assert_problem(caller.post(&path, &body).await, 403, "forbidden").await;
        // The permission is checked before the body.
        assert_problem(caller.post(&path, &json!({})).await, 403, "forbidden").await;
    }
    still_running(&app.admin, "1000", "w1").await;
    // The worker ends it normally instead.
    assert_eq!(
        worker.delete(&monitoring("1000", "w1")).await.status(),
        StatusCode::OK
    );
}

async fn foreign_tenants_and_devices_without_a_session_are_not_found(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    monitored(&app, &a, "w1").await;
    let (_, b_admin) = app
        .create_user(&b, "b-admin@example.com", "Administrator")
        .await;
    let body = json!({"Reason": "Not yours"});
    for path in [force_stop(&a, "w1"), force_stop(&b, "w1")] {
        assert_not_found(b_admin.post(&path, &body).await).await;
    }
    still_running(&app.admin, &a, "w1").await;
    // An unknown device, and a device without a current session.
    assert_not_found(app.admin.post(&force_stop(&a, "nobody"), &body).await).await;
    assert_eq!(
        app.admin.delete(&monitoring(&a, "w1")).await.status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.post(&force_stop(&a, "w1"), &body).await).await;
    let history = app
        .admin
        .get_json(&format!("{}/history", monitoring(&a, "w1")))
        .await;
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert_eq!(history[0]["EndKind"], "Normal");
}

async fn a_stale_if_match_is_refused(app: TestApp) {
    monitored(&app, "1000", "w1").await;
    let path = monitoring("1000", "w1");
    let etag_of =
        |response: &reqwest::Response| response.headers()["etag"].to_str().unwrap().to_string();
    let stale = etag_of(&app.admin.get(&path).await);
    let check_in = app
        .admin
        .post(&format!("{path}/checkins"), &json!({}))
        .await;
    assert_eq!(check_in.status(), StatusCode::OK);
    let fresh = etag_of(&app.admin.get(&path).await);
    assert_ne!(stale, fresh);
    let send = |etag: &str| {
        app.admin
            .request(Method::POST, &force_stop("1000", "w1"))
            .header("if-match", etag)
            .json(&json!({"Reason": "Worker reached by phone"}))
            .send()
    };
    assert_problem(send(&stale).await.unwrap(), 412, "precondition_failed").await;
    still_running(&app.admin, "1000", "w1").await;
    assert_eq!(send(&fresh).await.unwrap().status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
}

async fn delete_is_the_normal_end_and_refuses_force(app: TestApp) {
    monitored(&app, "1000", "w1").await;
    let path = monitoring("1000", "w1");
    // The old force stop through DELETE is refused, naming `force`, not taken for a
    // normal end.
    for query in ["?force=true&reason=Test", "?force=false"] {
        let response = app.admin.delete(&format!("{path}{query}")).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["force"], "{query}");
        still_running(&app.admin, "1000", "w1").await;
    }
    let long = format!("{path}?reason={}", "r".repeat(501));
    let problem = assert_problem(app.admin.delete(&long).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["reason"]);
    let response = app
        .admin
        .delete(&format!("{path}?reason=Shift%20over"))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let history = app.admin.get_json(&format!("{path}/history")).await;
    assert_eq!(history[0]["EndKind"], "Normal");
    assert_eq!(history[0]["EndReason"], "Shift over");
}
