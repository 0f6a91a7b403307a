//! Check-in schedules: `CheckInIntervalMinutes` on the device (PUT/PATCH, or a
//! `SendCheckInRequest` recipient), one `MissedCheckIn` per missed interval from a
//! scheduler whose due times live in the database, paused and resumed by commands.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use safetrack::app::AppConfig;

use crate::common::{Backend, TestApp, assert_problem, spawn_app_with};
use crate::mo_messages::register_device;
use crate::stream::EventStream;

fn config() -> AppConfig {
    AppConfig {
        worker_interval: Duration::from_millis(100),
        ..AppConfig::default()
    }
}

pub async fn set_interval(app: &TestApp, minutes: Value) -> reqwest::Response {
    app.admin
        .put(
            "/V2/1000/devices/checker",
            &json!({"DeviceType": "InReach", "CheckInIntervalMinutes": minutes}),
        )
        .await
}

pub async fn missed_alerts(app: &TestApp) -> Vec<Value> {
    let alerts = app.admin.get_json("/V2/1000/alerts").await;
    alerts
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["NotificationName"] == "Missed")
        .cloned()
        .collect()
}

pub async fn setup(app: &TestApp) {
    register_device(app, "1000", "checker").await;
    let response = app
        .admin
        .post(
            "/V2/1000/eventnotifications",
            &json!({"NotificationName": "Missed", "EventsExpression": "MissedCheckIn",
                    "RaiseAlert": true, "Severity": "1"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// Posts a message sent `ago` before now.
pub async fn message_sent(app: &TestApp, ago: Duration) {
    let sent = jiff::Timestamp::now() - jiff::SignedDuration::try_from(ago).unwrap();
    let response = app
        .admin
        .post(
            "/V2/1000/devices/checker/momessages",
            &json!([{"MessageType": "CheckIn", "SentFromDevice": sent.to_string(),
                     "Position": {"Latitude": 51.5, "Longitude": -0.12}}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

async fn wait_for_alerts(app: &TestApp, count: usize) -> Vec<Value> {
    for _ in 0..50 {
        let alerts = missed_alerts(app).await;
        if alerts.len() >= count {
            return alerts;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no MissedCheckIn alert");
}

async fn a_silent_device_misses_its_check_in_once_per_interval(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    setup(&app).await;
    assert_eq!(set_interval(&app, json!(1)).await.status(), StatusCode::OK);
    let device = app.admin.get_json("/V2/1000/devices/checker").await;
    assert_eq!(device["CheckInIntervalMinutes"], 1);
    // Its last message was 59.5 s ago: the check-in is due in half a second.
    let mut stream = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    message_sent(&app, Duration::from_millis(59_500)).await;
    let alerts = wait_for_alerts(&app, 1).await;
    assert_eq!(alerts[0]["MatchCount"], 1);
    // The scheduler's alert is streamed after the message's events.
    let streamed = [
        stream.expect().await,
        stream.expect().await,
        stream.expect().await,
    ];
    let kinds: Vec<&str> = streamed.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(kinds, ["momessage", "device", "alert"]);
    assert_eq!(streamed[2].data, alerts[0]);
    assert!(alerts[0]["MessageId"].is_null());
    assert_eq!(alerts[0]["Latitude"], 51.5, "the last known position");
    // The next one is due a minute later: nothing more now.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let alerts = missed_alerts(&app).await;
    assert_eq!(
        (alerts.len(), alerts[0]["MatchCount"].clone()),
        (1, json!(1))
    );
}

async fn a_long_silence_is_one_missed_check_in_not_a_flood(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    setup(&app).await;
    assert_eq!(set_interval(&app, json!(30)).await.status(), StatusCode::OK);
    message_sent(&app, Duration::from_secs(10 * 3600)).await;
    let alerts = wait_for_alerts(&app, 1).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let alerts_after = missed_alerts(&app).await;
    assert_eq!(alerts_after.len(), 1);
    assert_eq!(alerts_after[0]["MatchCount"], alerts[0]["MatchCount"]);
    assert_eq!(alerts_after[0]["MatchCount"], 1);
}

async fn due_times_survive_a_restart(backend: Backend) {
    // The first process's check-in loop looks once, at start, then not for an hour: the
    // check-in falls due while nothing looks, and only the restarted process can see it.
    let idle = AppConfig {
        worker_interval: Duration::from_secs(3600),
        ..AppConfig::default()
    };
    let Some(app) = spawn_app_with(backend, idle).await else {
        return;
    };
    setup(&app).await;
    assert_eq!(set_interval(&app, json!(1)).await.status(), StatusCode::OK);
    message_sent(&app, Duration::from_secs(61)).await;
    assert!(missed_alerts(&app).await.is_empty());
    let app = app.restart_with(config()).await;
    wait_for_alerts(&app, 1).await;
}

async fn commands_set_pause_and_resume_the_schedule(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    register_device(&app, "1000", "checker").await;
    for (name, expression, recipient) in [
        (
            "Start",
            "CheckIn",
            json!({"Type": "SendCheckInRequest", "Interval": "45"}),
        ),
        ("Stop", "FreeText", json!({"Type": "StopCheckInSchedule"})),
        (
            "Resume",
            "PowerDown",
            json!({"Type": "StartCheckInSchedule"}),
        ),
    ] {
        let response = app
            .admin
            .post(
                "/V2/1000/eventnotifications",
                &json!({"NotificationName": name, "EventsExpression": expression,
                        "Recipients": [recipient]}),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let post = |kind: &'static str| {
        let admin = app.admin.clone();
        async move {
            admin
                .post(
                    "/V2/1000/devices/checker/momessages",
                    &json!([{"MessageType": kind}]),
                )
                .await
        }
    };
    assert_eq!(post("CheckIn").await.status(), StatusCode::OK);
    let device = app.admin.get_json("/V2/1000/devices/checker").await;
    assert_eq!(device["CheckInIntervalMinutes"], 45);
    let queued = app
        .admin
        .get_json("/V2/1000/devices/checker/mtmessages")
        .await;
    assert_eq!(queued[0]["Type"], "CheckInRequest");
    assert_eq!(queued[0]["Parameters"]["Interval"], 45.0);
    assert_eq!(post("FreeText").await.status(), StatusCode::OK);
    assert_eq!(post("PowerDown").await.status(), StatusCode::OK);
    let queued = app
        .admin
        .get_json("/V2/1000/devices/checker/mtmessages")
        .await;
    let types: Vec<&str> = queued
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["Type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "CheckInRequest",
            "StopCheckInSchedule",
            "StartCheckInSchedule"
        ]
    );
}

async fn the_interval_field_is_validated_and_kept(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    register_device(&app, "1000", "checker").await;
    assert_eq!(set_interval(&app, json!(60)).await.status(), StatusCode::OK);
    // Null keeps it.
    assert_eq!(
        set_interval(&app, Value::Null).await.status(),
        StatusCode::OK
    );
    let device = app.admin.get_json("/V2/1000/devices/checker").await;
    assert_eq!(device["CheckInIntervalMinutes"], 60);
    for bad in [json!(-1), json!(10081), json!("soon"), json!(1.5)] {
        let response = set_interval(&app, bad.clone()).await;
        assert_problem(response, 400, "validation_failed").await;
    }
    let device = app.admin.get_json("/V2/1000/devices/checker").await;
    assert_eq!(device["CheckInIntervalMinutes"], 60);
    // 0 turns it off.
    assert_eq!(set_interval(&app, json!(0)).await.status(), StatusCode::OK);
    let device = app.admin.get_json("/V2/1000/devices/checker").await;
    assert!(device["CheckInIntervalMinutes"].is_null());
    let patched = app
        .admin
        .patch(
            "/V2/1000/devices/checker",
            &json!([{"op": "add", "path": "/CheckInIntervalMinutes", "value": 15}]),
        )
        .await;
    assert_eq!(patched.status(), StatusCode::OK);
    let device = app.admin.get_json("/V2/1000/devices/checker").await;
    assert_eq!(device["CheckInIntervalMinutes"], 15);
}

macro_rules! both {
    ($($name:ident),*) => {
        mod sqlite { $( #[tokio::test] async fn $name() { super::$name(crate::common::Backend::Sqlite).await; } )* }
        mod postgres { $( #[tokio::test] #[cfg_attr(safetrack_no_postgres, ignore = "no PostgreSQL answered when the tests were built (see build.rs)")] async fn $name() { super::$name(crate::common::Backend::Postgres).await; } )* }
    };
}

/// A person lies still while the tracker reports: routine reports are not check-ins, so
/// the check-in is missed all the same (DESIGN §11).
async fn automatic_reports_do_not_reset_the_check_in(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    setup(&app).await;
    assert_eq!(set_interval(&app, json!(1)).await.status(), StatusCode::OK);
    // The person's last check-in was 59.5 s ago; the tracker keeps reporting.
    message_sent(&app, Duration::from_millis(59_500)).await;
    for kind in [
        "AutomaticPositionReport",
        "Synchronise",
        "AutomaticPositionReport",
    ] {
        let response = app
            .admin
            .post(
                "/V2/1000/devices/checker/momessages",
                &json!([{"MessageType": kind, "Position": {"Latitude": 51.5, "Longitude": -0.12}}]),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let alerts = wait_for_alerts(&app, 1).await;
    assert_eq!(alerts[0]["MatchCount"], 1);
}

/// `Silent`: nothing at all from the device for its `SilentAfterMinutes` (a device
/// property, a session minute long here), once per silence.
async fn a_device_silent_for_its_minutes_is_silent_once(backend: Backend) {
    let mut config = config();
    let minute = Duration::from_millis(500);
    config.pipeline.monitoring_minute = jiff::SignedDuration::try_from(minute).unwrap();
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    let device = json!({"DeviceId": "quiet", "DeviceType": "InReach",
        "Properties": {"SilentAfterMinutes": "2"}});
    let response = app.admin.post("/V2/1000/devices", &device).await;
    assert_eq!(response.status(), StatusCode::OK);
    let notification = json!({"NotificationName": "Quiet", "EventsExpression": "Silent",
        "RaiseAlert": true, "Severity": "1"});
    let response = app
        .admin
        .post("/V2/1000/eventnotifications", &notification)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let report = json!([{"MessageType": "AutomaticPositionReport",
        "Position": {"Latitude": 51.5, "Longitude": -0.12}}]);
    let path = "/V2/1000/devices/quiet/momessages";
    assert_eq!(app.admin.post(path, &report).await.status(), StatusCode::OK);
    // Reporting keeps it from being silent.
    for _ in 0..3 {
        tokio::time::sleep(minute / 2).await;
        assert_eq!(app.admin.post(path, &report).await.status(), StatusCode::OK);
    }
    let quiet = |alerts: &Value| {
        alerts
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["NotificationName"] == "Quiet")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(quiet(&app.admin.get_json("/V2/1000/alerts").await).is_empty());
    // Then nothing: silent once, not once a tick.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while quiet(&app.admin.get_json("/V2/1000/alerts").await).is_empty() {
        assert!(std::time::Instant::now() < deadline, "never Silent");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(minute * 4).await;
    let alerts = quiet(&app.admin.get_json("/V2/1000/alerts").await);
    assert_eq!(
        (alerts.len(), alerts[0]["MatchCount"].clone()),
        (1, json!(1))
    );
    // A message arms it again: the next silence is another match.
    assert_eq!(app.admin.post(path, &report).await.status(), StatusCode::OK);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while quiet(&app.admin.get_json("/V2/1000/alerts").await)[0]["MatchCount"] != 2 {
        assert!(std::time::Instant::now() < deadline, "never Silent again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

both!(
    automatic_reports_do_not_reset_the_check_in,
    a_device_silent_for_its_minutes_is_silent_once,
    a_silent_device_misses_its_check_in_once_per_interval,
    a_long_silence_is_one_missed_check_in_not_a_flood,
    due_times_survive_a_restart,
    commands_set_pause_and_resume_the_schedule,
    the_interval_field_is_validated_and_kept
);
