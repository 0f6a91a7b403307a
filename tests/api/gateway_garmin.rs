//! Garmin inReach IPC Outbound through a real HTTP client: posts of several devices and
//! codes into the one ingest pipeline, at least once (a resend, also to two processes at
//! once on PostgreSQL, stores each event once and fires nothing twice), an unknown IMEI
//! skipped beside a known one, and the refusals.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::{create_notification, sos_notification};
use crate::backend_tests;
use crate::common::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestApp, TestDatabase, assert_problem,
};
use crate::durability::start_with;
use crate::gateway_support::{alerts, device, gateway_token, messages, raw_request_head, register};

backend_tests!(
    a_post_of_several_devices_and_codes,
    the_same_post_twice_is_stored_once,
    an_unknown_imei_does_not_hold_back_the_others,
    refusals_store_nothing,
    a_bad_token_is_refused_before_the_body_is_read,
    more_than_a_thousand_events_of_one_device_are_all_stored,
);

pub const IMEI_A: &str = "300434030112330";
pub const IMEI_B: &str = "300434030112331";
const T0: i64 = 1_772_359_200_000; // 2026-03-01T10:00:00Z in ms

pub fn event(imei: &str, code: i64, at_ms: i64, extra: Value) -> Value {
    let mut event = json!({
        "imei": imei, "messageCode": code, "timeStamp": at_ms, "freeText": "",
        "addresses": [], "status": {"autonomous": 0, "lowBattery": 1, "intervalChange": 0, "resetDetected": 0},
        "point": {"latitude": 45.12345, "longitude": -122.54321, "altitude": 100.0,
                  "gpsFix": 2, "course": 45.0, "speed": 12.5}
    });
    if let (Some(event), Some(extra)) = (event.as_object_mut(), extra.as_object()) {
        event.extend(extra.clone());
    }
    event
}

/// A post of events A: position (0) and free text (3); B: SOS (4), then cancel (7).
pub fn mixed_post() -> Value {
    json!({"Version": "2.0", "Events": [
        event(IMEI_A, 0, T0, json!({})),
        event(IMEI_A, 3, T0 + 60_000, json!({"freeText": "All good", "addresses": [{"address": "ops@example.com"}]})),
        event(IMEI_B, 4, T0 + 1_000, json!({"freeText": "Fell, ankle"})),
        event(IMEI_B, 7, T0 + 120_000, json!({})),
    ]})
}

/// Device A is found by its IridiumImei, B by its DeviceId (the IMEI).
async fn setup(app: &TestApp) -> String {
    register(app, "1000", "inreach-a", json!({"IridiumImei": IMEI_A})).await;
    register(app, "1000", IMEI_B, json!({})).await;
    create_notification(app, "1000", &sos_notification()).await;
    gateway_token(app, "1000", &["DeviceMessages"], "garmin").await
}

async fn post(base: &str, token: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{base}/gateways/garmin"))
        .header("X-Outbound-Auth-Token", token)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn a_post_of_several_devices_and_codes(app: TestApp) {
    let token = setup(&app).await;
    let response = post(&app.base, &token, &mixed_post()).await;
    assert_eq!(response.status(), StatusCode::OK);

    let a = messages(&app, "1000", "inreach-a").await;
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(a[0]["MessageType"], "AutomaticPositionReport");
    assert_eq!(a[0]["Position"]["Latitude"], 45.12345);
    assert_eq!(a[0]["Properties"]["lowBattery"], "true");
    assert_eq!(a[1]["MessageType"], "FreeText");
    assert_eq!(a[1]["Message"], "All good");
    assert_eq!(a[1]["Properties"]["addresses"], "ops@example.com");
    let b = messages(&app, "1000", IMEI_B).await;
    assert_eq!(b.len(), 2, "{b:?}");
    assert_eq!(b[0]["MessageType"], "DeclareSos");
    assert_eq!(b[0]["EmergencyState"], "Active");
    assert_eq!(b[1]["MessageType"], "CancelSos");
    assert_eq!(b[1]["EmergencyState"], "None");

    let raised = alerts(&app, "1000").await;
    assert_eq!(raised.len(), 1, "one SOS, one alert: {raised:?}");
    assert_eq!(raised[0]["DeviceId"], IMEI_B);
    assert_eq!(device(&app, "1000", IMEI_B).await["EmergencyState"], "None");

    // Bearer works as well as Garmin's header.
    let later = json!({"Version": "3.0", "Events": [event(IMEI_A, 0, T0 + 600_000, json!({}))]});
    let response = reqwest::Client::new()
        .post(format!("{}/gateways/garmin", app.base))
        .bearer_auth(&token)
        .json(&later)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(messages(&app, "1000", "inreach-a").await.len(), 3);
}

async fn the_same_post_twice_is_stored_once(app: TestApp) {
    let token = setup(&app).await;
    // Garmin resends what it got no 200 for; two copies may also arrive at once.
    let body = mixed_post();
    let (one, two) = tokio::join!(
        post(&app.base, &token, &body),
        post(&app.base, &token, &body)
    );
    assert_eq!(
        (one.status(), two.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    assert_eq!(
        post(&app.base, &token, &mixed_post()).await.status(),
        StatusCode::OK
    );
    assert_eq!(messages(&app, "1000", "inreach-a").await.len(), 2);
    assert_eq!(messages(&app, "1000", IMEI_B).await.len(), 2);
    assert_eq!(alerts(&app, "1000").await.len(), 1);
    assert_eq!(device(&app, "1000", IMEI_B).await["EmergencyState"], "None");
}

async fn an_unknown_imei_does_not_hold_back_the_others(app: TestApp) {
    let token = setup(&app).await;
    let body = json!({"Version": "2.0", "Events": [
        event("300434030199999", 4, T0, json!({})),
        event(IMEI_B, 4, T0, json!({})),
        // Unreadable: skipped and logged, like the unknown IMEI.
        {"imei": IMEI_A, "messageCode": "four"},
    ]});
    let response = post(&app.base, &token, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(messages(&app, "1000", IMEI_B).await.len(), 1);
    assert_eq!(
        device(&app, "1000", IMEI_B).await["EmergencyState"],
        "Active"
    );
    assert_eq!(alerts(&app, "1000").await.len(), 1);
    assert!(messages(&app, "1000", "inreach-a").await.is_empty());
}

async fn refusals_store_nothing(app: TestApp) {
    let token = setup(&app).await;
    let read_only = gateway_token(&app, "1000", &["Read"], "garmin-ro").await;
    let sub = app.create_tenant("1000", "Elsewhere").await;
    let foreign = gateway_token(&app, &sub, &["DeviceMessages"], "garmin-sub").await;
    let body = mixed_post();
    assert_problem(
        post(&app.base, "x:wrong", &body).await,
        401,
        "token_malformed",
    )
    .await;
    let none = reqwest::Client::new()
        .post(format!("{}/gateways/garmin", app.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_problem(none, 401, "unauthorized").await;
    assert_problem(post(&app.base, &read_only, &body).await, 403, "forbidden").await;
    assert_problem(
        post(&app.base, &token, &json!({"Events": "no"})).await,
        400,
        "invalid_post",
    )
    .await;
    // Another tenant's token: the devices are not in its scope (skipped, logged).
    assert_eq!(
        post(&app.base, &foreign, &body).await.status(),
        StatusCode::OK
    );
    assert!(messages(&app, "1000", "inreach-a").await.is_empty());
    assert!(messages(&app, "1000", IMEI_B).await.is_empty());
    assert!(alerts(&app, "1000").await.is_empty());
}

/// The same post to two `serve` processes on one PostgreSQL database at once: each event
/// is stored once, one alert is raised, and the cancel leaves the device out of
/// emergency.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_the_same_post_to_two_processes_at_once() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let one = start_with(&database.url, &["--delivery-workers", "0"]).await;
    let two = start_with(&database.url, &["--delivery-workers", "0"]).await;
    let admin = Client::new(&one.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    for (id, extra) in [
        ("inreach-a", json!({"IridiumImei": IMEI_A})),
        (IMEI_B, json!({})),
    ] {
        let mut body = json!({"DeviceId": id, "DeviceType": "InReach"});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        assert_eq!(
            admin.post("/V2/1000/devices", &body).await.status(),
            StatusCode::OK
        );
    }
    let created = admin
        .post("/V2/1000/eventnotifications", &sos_notification())
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let created = admin
        .post(
            "/V2/1000/apitokens",
            &json!({"Name": "garmin", "Permissions": ["DeviceMessages"]}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let created: Value = created.json().await.unwrap();
    let token = created["Token"].as_str().unwrap().to_string();

    for _ in 0..3 {
        let body = mixed_post();
        let (a, b) = tokio::join!(
            post(&one.base, &token, &body),
            post(&two.base, &token, &body)
        );
        assert_eq!((a.status(), b.status()), (StatusCode::OK, StatusCode::OK));
    }
    let count = |device: &str| {
        let admin = admin.clone();
        let path = format!("/V2/1000/devices/{device}/momessages");
        async move { admin.get_json(&path).await.as_array().map_or(0, Vec::len) }
    };
    assert_eq!(count("inreach-a").await, 2);
    assert_eq!(count(IMEI_B).await, 2);
    let raised = admin.get_json("/V2/1000/alerts").await;
    assert_eq!(raised.as_array().map(Vec::len), Some(1), "{raised}");
    let b = admin.get_json(&format!("/V2/1000/devices/{IMEI_B}")).await;
    assert_eq!(b["EmergencyState"], "None");
}

/// A post with a wrong token whose body never arrives (50 MB announced, a few bytes
/// sent) is answered 401 at once: the token is checked from the headers, and nothing of
/// an unauthenticated body is read or held. The same with a real token waits for it.
async fn a_bad_token_is_refused_before_the_body_is_read(app: TestApp) {
    let token = setup(&app).await;
    let head = |token: &str| {
        format!(
            "POST /gateways/garmin HTTP/1.1\r\nHost: test\r\nX-Outbound-Auth-Token: {token}\r\n\
             Content-Type: application/json\r\nContent-Length: 50000000\r\n\r\n"
        )
    };
    let wait = std::time::Duration::from_secs(5);
    for bad in ["st_nosuchtoken0000000000000000", "x:wrong"] {
        let started = std::time::Instant::now();
        let answer = raw_request_head(&app.base, &head(bad), b"{\"Ver", wait).await;
        let answer = answer.expect("answered before the body arrived");
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
        assert!(started.elapsed() < std::time::Duration::from_secs(3));
    }
    // No token at all.
    let none = "POST /gateways/garmin HTTP/1.1\r\nHost: test\r\nContent-Length: 50000000\r\n\r\n";
    let answer = raw_request_head(&app.base, none, b"{", wait).await;
    assert!(answer.expect("answered").starts_with("HTTP/1.1 401"));
    // A known caller's body is read: still arriving, so no answer yet.
    let short = std::time::Duration::from_millis(700);
    assert_eq!(
        raw_request_head(&app.base, &head(&token), b"{", short).await,
        None
    );
    assert!(messages(&app, "1000", "inreach-a").await.is_empty());
}

/// 1,001 events of one device (over the 1,000 of one MO batch), the SOS last: every one
/// is stored, in order, and the SOS raises its alert.
async fn more_than_a_thousand_events_of_one_device_are_all_stored(app: TestApp) {
    let token = setup(&app).await;
    let mut events: Vec<Value> = (0..1000)
        .map(|i| event(IMEI_B, 0, T0 + i * 1000, json!({})))
        .collect();
    events.push(event(
        IMEI_B,
        4,
        T0 + 1_000_000,
        json!({"freeText": "Help"}),
    ));
    let body = json!({"Version": "2.0", "Events": events});
    assert_eq!(
        post(&app.base, &token, &body).await.status(),
        StatusCode::OK
    );
    let stored = app
        .admin
        .get_all_pages(&format!("/V2/1000/devices/{IMEI_B}/momessages"))
        .await;
    assert_eq!(stored.len(), 1001);
    let raised = alerts(&app, "1000").await;
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert_eq!(raised[0]["DeviceId"], IMEI_B);
    assert_eq!(
        device(&app, "1000", IMEI_B).await["EmergencyState"],
        "Active"
    );
    // Resent whole: stored once.
    assert_eq!(
        post(&app.base, &token, &body).await.status(),
        StatusCode::OK
    );
    let again = app
        .admin
        .get_all_pages(&format!("/V2/1000/devices/{IMEI_B}/momessages"))
        .await;
    assert_eq!(again.len(), 1001);
}
