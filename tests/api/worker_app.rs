//! The worker app (DESIGN §12): served at `/worker/` with the console's policy, and a
//! user acts for the device assigned to them: whatever
//! their role — here `ReadOnly`, which has no `DeviceMessages` — they may post their own
//! device's MO messages (an SOS) and start, check in, change and end its monitoring
//! session; not another device of their tenant, nor one in a tenant outside their scope.

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_problem};

backend_tests!(
    the_app_is_served_at_worker,
    a_read_only_user_acts_for_their_own_device,
    not_for_another_device_nor_a_foreign_tenant,
);

/// `/worker` goes to `/worker/`; the page (or, built without the console, the page saying
/// so) carries the same-origin policy and `nosniff`; a path under it that is no file of
/// the build and no page is a 404.
async fn the_app_is_served_at_worker(app: TestApp) {
    let redirected = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .get(format!("{}/worker", app.base))
        .send()
        .await
        .expect("GET /worker");
    assert_eq!(redirected.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(redirected.headers()["location"], "/worker/");
    let page = app
        .anonymous()
        .request(reqwest::Method::GET, "/worker/")
        .header("accept", "text/html")
        .send()
        .await
        .expect("GET /worker/");
    assert!(
        matches!(page.status().as_u16(), 200 | 503),
        "{}",
        page.status()
    );
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .expect("policy")
        .to_string();
    assert!(
        policy.starts_with("default-src 'self'; script-src 'self';"),
        "{policy}"
    );
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    let body = page.text().await.expect("page");
    assert!(body.contains("<html"), "{body}");
    let missing = app.anonymous().get("/worker/no-such-file.js").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

async fn device(app: &TestApp, tenant: &str, id: &str, user: Option<&str>) {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices"),
            &json!({"DeviceId": id, "DeviceType": "Phone", "UserId": user}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create device {id}");
}

fn sos(sequence: i64) -> serde_json::Value {
    json!([{"MessageType": "ManualPositionReport", "EmergencyState": "Active",
            "SequenceNumber": sequence, "SentFromDevice": "2026-01-05T10:00:00Z",
            "Position": {"Latitude": 57.1, "Longitude": -2.1}}])
}

async fn a_read_only_user_acts_for_their_own_device(app: TestApp) {
    let (worker_id, worker) = app
        .create_user("1000", "worker@example.com", "ReadOnly")
        .await;
    device(&app, "1000", "phone-1", Some(&worker_id)).await;

    let posted = worker
        .post("/V2/1000/devices/phone-1/momessages?process=true", &sos(1))
        .await;
    assert_eq!(posted.status(), StatusCode::OK, "their own SOS");
    let messages = app
        .admin
        .get_json("/V2/1000/devices/phone-1/momessages")
        .await;
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "{messages}");

    let path = "/V2/1000/devices/phone-1/monitoring";
    let started = worker
        .post(path, &json!({"DurationMinutes": 60, "Note": "pump house"}))
        .await;
    assert_eq!(
        started.status(),
        StatusCode::OK,
        "their own session started"
    );
    let checked = worker
        .post(&format!("{path}/checkins"), &json!({"Note": "fine"}))
        .await;
    assert_eq!(checked.status(), StatusCode::OK, "their own check-in");
    let patched = worker
        .patch(
            path,
            &json!([{"op": "replace", "path": "/DurationMinutes", "value": 90}]),
        )
        .await;
    assert_eq!(
        patched.status(),
        StatusCode::OK,
        "their own session extended"
    );
    assert_eq!(app.admin.get_json(path).await["DurationMinutes"], 90);
    let ended = worker.delete(path).await;
    assert_eq!(ended.status(), StatusCode::OK, "their own session ended");

    // What the role itself allows is unchanged: no force stop, no other writes.
    let forced = worker
        .post(&format!("{path}/forcestop"), &json!({"Reason": "no"}))
        .await;
    assert_eq!(forced.status(), StatusCode::FORBIDDEN);
}

async fn not_for_another_device_nor_a_foreign_tenant(app: TestApp) {
    let (worker_id, worker) = app
        .create_user("1000", "worker@example.com", "ReadOnly")
        .await;
    let (other_id, _) = app
        .create_user("1000", "other@example.com", "ReadOnly")
        .await;
    device(&app, "1000", "phone-1", Some(&worker_id)).await;
    device(&app, "1000", "phone-2", Some(&other_id)).await;
    device(&app, "1000", "phone-3", None).await;
    for id in ["phone-2", "phone-3", "no-such-phone"] {
        let posted = worker
            .post(&format!("/V2/1000/devices/{id}/momessages"), &sos(2))
            .await;
        assert_problem(posted, 403, "forbidden").await;
        let started = worker
            .post(&format!("/V2/1000/devices/{id}/monitoring"), &json!({}))
            .await;
        assert_problem(started, 403, "forbidden").await;
    }

    // A worker of a subtenant never reaches its parent's devices, even one naming them.
    let child = app.create_tenant("1000", "Crew").await;
    let (crew_id, crew) = app
        .create_user(&child, "crew@example.com", "ReadOnly")
        .await;
    device(&app, "1000", "phone-4", Some(&crew_id)).await;
    let posted = crew
        .post("/V2/1000/devices/phone-4/momessages", &sos(3))
        .await;
    assert_eq!(
        posted.status(),
        StatusCode::NOT_FOUND,
        "outside their scope"
    );
    let messages = app
        .admin
        .get_json("/V2/1000/devices/phone-4/momessages")
        .await;
    assert_eq!(messages.as_array().map(Vec::len), Some(0), "{messages}");
}
