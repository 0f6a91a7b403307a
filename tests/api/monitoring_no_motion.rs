//! No motion (issue 45 §2; docs/monitoring.md "No motion"): during a session with
//! `NoMotionMinutes`, a device that keeps reporting from within 25 m for that long
//! raises `NoMotion` once; moving re-arms it, a check-in restarts the window, and a
//! device that stopped reporting is not "still" until it reports again. A session's
//! minute lasts `MINUTE` here (`PipelineConfig::monitoring_minute`).

use std::time::{Duration, Instant};

use jiff::SignedDuration;
use reqwest::StatusCode;
use safetrack::app::AppConfig;
use serde_json::{Value, json};

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, spawn_app_with};
use crate::mo_messages::{position_report, post_processed, register_device};

backend_fn_tests!(
    a_still_device_that_keeps_reporting_raises_no_motion_once,
    a_walk_never_does_and_a_check_in_restarts_the_window,
    a_quiet_device_waits_for_its_next_report,
);

const MINUTE: Duration = Duration::from_millis(300);
const WAIT: Duration = Duration::from_secs(20);
const PATH: &str = "/V2/1000/devices/still-1/monitoring";
/// Pump station 4, and one metre of latitude in degrees.
const HERE: (f64, f64) = (54.6001, -3.1340);
const METRE: f64 = 1.0 / 111_195.0;

async fn app(backend: Backend) -> Option<TestApp> {
    let mut config = AppConfig::default();
    config.pipeline.monitoring_minute = SignedDuration::try_from(MINUTE).expect("a duration");
    config.worker_interval = Duration::from_millis(100);
    let app = spawn_app_with(backend, config).await?;
    register_device(&app, "1000", "still-1").await;
    let notification = json!({"NotificationName": "No motion", "EventsExpression": "NoMotion",
        "RaiseAlert": true, "Severity": "2",
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
    let response = app
        .admin
        .post("/V2/1000/eventnotifications", &notification)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create notification");
    // No motion after 5 minutes; check-ins far apart, so nothing else fires.
    let settings = json!({"DurationMinutes": 600, "CheckInIntervalMinutes": 300,
        "NoMotionMinutes": 5});
    let response = app.admin.post(PATH, &settings).await;
    assert_eq!(response.status(), StatusCode::OK, "start");
    Some(app)
}

/// A report now from `north` metres north of `HERE`.
async fn report(app: &TestApp, seq: i64, north: f64) {
    let sent = jiff::Timestamp::now().to_string();
    let message = position_report(seq, &sent, HERE.0 + north * METRE, HERE.1);
    post_processed(app, "1000", "still-1", &json!([message])).await;
}

/// The current session's history lines of `kind`.
async fn lines(app: &TestApp, kind: &str) -> Vec<Value> {
    let session = app.admin.get_json(PATH).await;
    let id = session["MonitoringSessionId"].as_str().expect("a session");
    let all = app
        .admin
        .get_json(&format!("/V2/1000/monitoring/{id}/events"))
        .await;
    all.as_array()
        .expect("lines")
        .iter()
        .filter(|l| l["Kind"] == kind)
        .cloned()
        .collect()
}

async fn alert_count(app: &TestApp) -> usize {
    let alerts = app.admin.get_json("/V2/1000/alerts").await;
    alerts.as_array().map_or(0, Vec::len)
}

/// Reports every half minute for `minutes`, each `step` metres farther north than the
/// last (0: jitter of a few metres around the same place).
async fn keep_reporting(app: &TestApp, first_seq: i64, minutes: u32, step: f64) -> i64 {
    let mut seq = first_seq;
    for i in 0..minutes * 2 {
        let north = if step == 0.0 {
            f64::from(i % 3) * 6.0
        } else {
            f64::from(i) * step
        };
        report(app, seq, north).await;
        seq += 1;
        tokio::time::sleep(MINUTE / 2).await;
    }
    seq
}

async fn wait_for_lines(app: &TestApp, kind: &str, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let found = lines(app, kind).await;
        if found.len() >= n {
            return found;
        }
        assert!(Instant::now() < deadline, "never {n} {kind}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn a_still_device_that_keeps_reporting_raises_no_motion_once(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    let seq = keep_reporting(&app, 1, 7, 0.0).await;
    let raised = wait_for_lines(&app, "NoMotion", 1).await;
    let detail = &raised[0]["Detail"];
    assert_eq!(detail["Event"], "NoMotion");
    assert!((detail["Latitude"].as_f64().expect("lat") - HERE.0).abs() < 1e-9);
    assert!(detail["StillSince"].is_string(), "{detail}");
    assert_eq!(alert_count(&app).await, 1);

    // Still there for longer: nothing more.
    let seq = keep_reporting(&app, seq, 3, 0.0).await;
    assert_eq!(lines(&app, "NoMotion").await.len(), 1, "once per stillness");
    assert_eq!(alert_count(&app).await, 1);

    // Moving 40 m anchors it anew: still again for the window, raised again.
    report(&app, seq, 40.0).await;
    let deadline = Instant::now() + WAIT;
    let mut seq = seq + 1;
    while lines(&app, "NoMotion").await.len() < 2 {
        assert!(Instant::now() < deadline, "never raised again");
        report(&app, seq, 42.0).await;
        seq += 1;
        tokio::time::sleep(MINUTE / 2).await;
    }
}

async fn a_walk_never_does_and_a_check_in_restarts_the_window(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    // 30 m each half minute: a walk.
    let seq = keep_reporting(&app, 1, 8, 30.0).await;
    tokio::time::sleep(MINUTE).await;
    assert_eq!(lines(&app, "NoMotion").await, Vec::<Value>::new());
    assert_eq!(alert_count(&app).await, 0);

    // Still for 3 minutes, then a check-in: the window counts from the check-in.
    let seq = keep_reporting(&app, seq, 3, 0.0).await;
    let response = app
        .admin
        .post(&format!("{PATH}/checkins"), &json!({}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let checked_in = time(&lines(&app, "CheckIn").await[0]["At"]);
    let deadline = Instant::now() + WAIT;
    let mut seq = seq;
    while lines(&app, "NoMotion").await.is_empty() {
        assert!(Instant::now() < deadline, "never raised");
        report(&app, seq, 5.0).await;
        seq += 1;
        tokio::time::sleep(MINUTE / 2).await;
    }
    let raised = &lines(&app, "NoMotion").await[0];
    assert_eq!(time(&raised["Detail"]["StillSince"]), checked_in);
    let window = SignedDuration::try_from(MINUTE * 5).expect("a duration");
    assert!(time(&raised["Detail"]["FiredAt"]).duration_since(checked_in) >= window);
}

fn time(value: &Value) -> jiff::Timestamp {
    value
        .as_str()
        .expect("a time")
        .parse()
        .expect("a timestamp")
}

async fn a_quiet_device_waits_for_its_next_report(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    report(&app, 1, 0.0).await;
    // Silence for more than the window: quiet is not still.
    tokio::time::sleep(MINUTE * 7).await;
    assert_eq!(lines(&app, "NoMotion").await, Vec::<Value>::new());
    // Its next report from the same place shows it was still all along.
    report(&app, 2, 3.0).await;
    wait_for_lines(&app, "NoMotion", 1).await;
    assert_eq!(alert_count(&app).await, 1);
}
