//! A monitoring session's timers (issue 45 §2; docs/monitoring.md "Timers"): the
//! reminder (an MT check-in request), `MissedCheckIn` after the grace, and
//! `MonitoringOverdue` after the planned end — each fired once, by the worker, through a
//! restart and with racing workers on one database. A session's minute lasts
//! `MINUTE` here (`PipelineConfig::monitoring_minute`, in-process only).

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::SignedDuration;
use reqwest::StatusCode;
use safetrack::app::AppConfig;
use safetrack::services::ingest::{Pipeline, PipelineConfig};
use safetrack::services::stream::EventHub;
use safetrack::workers::StepOutcome;
use safetrack::workers::monitoring::MonitoringTimers;
use serde_json::{Value, json};

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, spawn_app_with};
use crate::mo_messages::register_device;

backend_fn_tests!(
    a_missed_check_in_is_reminded_then_raised_once,
    a_check_in_after_the_reminder_counts_from_itself,
    an_overdue_session_raises_once_and_an_extension_rearms_it,
    a_restart_neither_loses_nor_repeats_a_timer,
    racing_workers_fire_each_timer_once,
    the_new_events_are_names_of_the_language,
    a_fall_is_an_emergency_and_a_fall,
);

const MINUTE: Duration = Duration::from_millis(400);
const WAIT: Duration = Duration::from_secs(20);
const DEVICE: &str = "w1";
const PATH: &str = "/V2/1000/devices/w1/monitoring";

fn config() -> AppConfig {
    let mut config = AppConfig::default();
    config.pipeline.monitoring_minute = SignedDuration::try_from(MINUTE).expect("a duration");
    config.worker_interval = Duration::from_millis(100);
    config
}

/// The device and a notification raising an alert on `events`.
async fn setup(app: &TestApp, events: &str) {
    register_device(app, "1000", DEVICE).await;
    let notification = json!({"NotificationName": events, "EventsExpression": events,
        "RaiseAlert": true, "Severity": "2",
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
    let response = app
        .admin
        .post("/V2/1000/eventnotifications", &notification)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create notification");
}

async fn start(app: &TestApp, settings: Value) -> Value {
    let response = app.admin.post(PATH, &settings).await;
    assert_eq!(response.status(), StatusCode::OK, "start {settings}");
    app.admin.get_json(PATH).await
}

/// The session's history lines' kinds (current or just ended).
async fn history_kinds(app: &TestApp) -> Vec<String> {
    let sessions = app.admin.get_json(&format!("{PATH}/history")).await;
    let current = app.admin.get(PATH).await;
    let id = if current.status() == StatusCode::OK {
        current.json::<Value>().await.expect("session")["MonitoringSessionId"].clone()
    } else {
        sessions[sessions.as_array().map_or(0, Vec::len) - 1]["MonitoringSessionId"].clone()
    };
    let id = id.as_str().expect("an id").to_string();
    let lines = app
        .admin
        .get_json(&format!("/V2/1000/monitoring/{id}/events"))
        .await;
    lines
        .as_array()
        .map(|l| {
            l.iter()
                .map(|e| e["Kind"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Polls the current session until `done` holds of it.
async fn wait_for(app: &TestApp, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let session = app.admin.get_json(PATH).await;
        if done(&session) {
            return session;
        }
        assert!(Instant::now() < deadline, "never {what}: {session}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn alerts(app: &TestApp) -> Vec<Value> {
    let listed = app.admin.get_json("/V2/1000/alerts").await;
    listed.as_array().expect("alerts").clone()
}

async fn check_in_requests(app: &TestApp) -> usize {
    let listed = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}/mtmessages"))
        .await;
    listed
        .as_array()
        .expect("MT messages")
        .iter()
        .filter(|m| m["Type"] == "CheckInRequest")
        .count()
}

/// Sleeps `n` session minutes.
async fn minutes(n: u32) {
    tokio::time::sleep(MINUTE * n).await;
}

async fn a_missed_check_in_is_reminded_then_raised_once(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    setup(&app, "MissedCheckIn").await;
    // Reminder at 2, due at 3, missed at 4 (minutes).
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 3,
        "ReminderMinutes": 1, "GraceMinutes": 1, "Note": "Pump station 4"});
    let session = start(&app, settings).await;
    assert_eq!(session["State"], "Ok");
    let reminded = wait_for(&app, "reminded", |s| s["State"] != "Ok").await;
    assert_eq!(reminded["MissedCheckInCount"], 0);
    let missed = wait_for(&app, "missed", |s| s["MissedCheckInCount"] == 1).await;
    assert_eq!(missed["State"], "Alerting");
    assert_eq!(
        check_in_requests(&app).await,
        1,
        "one reminder on the device's channel"
    );
    let raised = alerts(&app).await;
    assert_eq!(raised.len(), 1, "one alert: {raised:?}");
    assert_eq!(raised[0]["DeviceId"], DEVICE);

    // Nothing fires twice: two more minutes, still one of each.
    minutes(2).await;
    let after = app.admin.get_json(PATH).await;
    assert_eq!(after["MissedCheckInCount"], 1);
    assert_eq!(alerts(&app).await[0]["MatchCount"], 1);
    assert_eq!(check_in_requests(&app).await, 1);
    assert_eq!(
        history_kinds(&app).await,
        ["Started", "Reminder", "MissedCheckIn"]
    );

    // A check-in restarts the clock: the next missed check-in is another alert match.
    let response = app
        .admin
        .post(&format!("{PATH}/checkins"), &json!({"Note": "called, OK"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let checked = app.admin.get_json(PATH).await;
    assert_eq!(checked["State"], "Ok");
    wait_for(&app, "missed again", |s| s["MissedCheckInCount"] == 2).await;
    assert_eq!(check_in_requests(&app).await, 2);
}

async fn a_check_in_after_the_reminder_counts_from_itself(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    setup(&app, "MissedCheckIn").await;
    // Reminder at 3, due at 5, missed at 6.
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 5,
        "ReminderMinutes": 2, "GraceMinutes": 1});
    start(&app, settings).await;
    let reminded = wait_for(&app, "reminded", |s| s["State"] == "DueSoon").await;
    let response = app
        .admin
        .post(&format!("{PATH}/checkins"), &json!({}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let checked = app.admin.get_json(PATH).await;
    let at: jiff::Timestamp = checked["LastCheckInAt"].as_str().unwrap().parse().unwrap();
    let due: jiff::Timestamp = checked["NextDueAt"].as_str().unwrap().parse().unwrap();
    assert_eq!(due, at + SignedDuration::try_from(MINUTE * 5).unwrap());
    assert_ne!(checked["NextDueAt"], reminded["NextDueAt"]);
    // Past the first due time and its grace: nothing missed.
    minutes(4).await;
    let later = app.admin.get_json(PATH).await;
    assert_eq!(later["MissedCheckInCount"], 0, "{later}");
    assert!(alerts(&app).await.is_empty());
}

async fn an_overdue_session_raises_once_and_an_extension_rearms_it(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    setup(&app, "MonitoringOverdue").await;
    // Ends at 3; no check-in falls due before it; overdue at 4.
    let settings = json!({"DurationMinutes": 3, "CheckInIntervalMinutes": 3,
        "ReminderMinutes": 0, "GraceMinutes": 1});
    let session = start(&app, settings).await;
    assert_eq!(session["NextDueAct"], "End");
    let deadline = Instant::now() + WAIT;
    while alerts(&app).await.is_empty() {
        assert!(Instant::now() < deadline, "never overdue");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let overdue = app.admin.get_json(PATH).await;
    assert_eq!(overdue["State"], "Alerting");
    // A change that leaves the planned end as it was does not arm it again.
    let note = json!([{"op": "replace", "path": "/Note", "value": "still here"}]);
    assert_eq!(app.admin.patch(PATH, &note).await.status(), StatusCode::OK);
    minutes(2).await;
    assert_eq!(alerts(&app).await[0]["MatchCount"], 1, "overdue once");
    // Extending moves the end: overdue again at the new end plus the grace. (A check-in
    // would be due from the start otherwise: an extension is not a check-in.)
    let longer = json!([{"op": "replace", "path": "/DurationMinutes", "value": 12},
        {"op": "replace", "path": "/CheckInIntervalMinutes", "value": 12}]);
    assert_eq!(
        app.admin.patch(PATH, &longer).await.status(),
        StatusCode::OK
    );
    let extended = app.admin.get_json(PATH).await;
    assert_ne!(extended["State"], "Alerting", "{extended}");
    let deadline = Instant::now() + WAIT;
    while alerts(&app).await[0]["MatchCount"] != 2 {
        assert!(
            Instant::now() < deadline,
            "never overdue after the extension"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let kinds = history_kinds(&app).await;
    let overdue_lines = kinds.iter().filter(|k| *k == "Overdue").count();
    assert_eq!(overdue_lines, 2, "{kinds:?}");
}

async fn a_restart_neither_loses_nor_repeats_a_timer(backend: Backend) {
    // "Down": this process's timer worker looks once at start, then not for an hour.
    let mut down = config();
    down.worker_interval = Duration::from_secs(3600);
    let Some(app) = spawn_app_with(backend, down).await else {
        return;
    };
    setup(&app, "MissedCheckIn").await;
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 3,
        "ReminderMinutes": 0, "GraceMinutes": 0});
    start(&app, settings).await;
    minutes(5).await;
    let idle = app.admin.get_json(PATH).await;
    assert_eq!(idle["MissedCheckInCount"], 0, "nobody was watching");
    // Restarted across the due time: the timer fires after the restart, once.
    let app = app.restart_with(config()).await;
    let missed = wait_for(&app, "missed", |s| s["MissedCheckInCount"] == 1).await;
    assert_eq!(missed["State"], "Alerting");
    let app = app.restart().await;
    minutes(2).await;
    let after = app.admin.get_json(PATH).await;
    assert_eq!(after["MissedCheckInCount"], 1);
    let raised = alerts(&app).await;
    assert_eq!(raised.len(), 1);
    assert_eq!(raised[0]["MatchCount"], 1);
}

async fn race(workers: &[Arc<MonitoringTimers>]) -> usize {
    let tasks: Vec<_> = workers
        .iter()
        .map(|w| {
            let w = w.clone();
            tokio::spawn(async move { w.step().await })
        })
        .collect();
    let mut fired = 0;
    for task in tasks {
        if let StepOutcome::Worked(n) = task.await.expect("worker task").expect("step") {
            fired += n;
        }
    }
    fired
}

async fn racing_workers_fire_each_timer_once(backend: Backend) {
    // Minutes long enough that each race falls half a minute clear of both due times,
    // however loaded the machine.
    let minute = MINUTE * 4;
    let mut config = config();
    config.pipeline.monitoring_minute = SignedDuration::try_from(minute).expect("a duration");
    // The app's own worker stays idle: only the racers below work.
    config.worker_interval = Duration::from_secs(3600);
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    setup(&app, "MissedCheckIn").await;
    let mut workers = Vec::new();
    for _ in 0..2 {
        let store = safetrack::app::open_store(app.database_url())
            .await
            .expect("open store")
            .with_monitoring_minute(SignedDuration::try_from(minute).expect("a duration"));
        let pipeline = Pipeline::new(
            store.clone(),
            Arc::new(EventHub::default()),
            PipelineConfig::default(),
        );
        for _ in 0..4 {
            workers.push(Arc::new(MonitoringTimers::new(
                store.clone(),
                pipeline.clone(),
            )));
        }
    }
    // Reminder at 2, missed at 3.
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 3,
        "ReminderMinutes": 1, "GraceMinutes": 0});
    start(&app, settings).await;
    assert_eq!(race(&workers).await, 0, "nothing due yet");
    tokio::time::sleep(minute * 5 / 2).await;
    assert_eq!(race(&workers).await, 1, "the reminder, once");
    tokio::time::sleep(minute).await;
    assert_eq!(race(&workers).await, 1, "the missed check-in, once");
    assert_eq!(race(&workers).await, 0);
    assert_eq!(check_in_requests(&app).await, 1);
    let raised = alerts(&app).await;
    assert_eq!(raised.len(), 1);
    assert_eq!(raised[0]["MatchCount"], 1);
    assert_eq!(app.admin.get_json(PATH).await["MissedCheckInCount"], 1);
}

async fn the_new_events_are_names_of_the_language(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    for events in [
        "MissedCheckIn",
        "MonitoringOverdue",
        "NoMotion",
        "Fall",
        "Silent",
        "fall OR monitoringoverdue",
    ] {
        let body = json!({"NotificationName": "n", "EventsExpression": events});
        let response = app
            .admin
            .post("/V2/1000/eventnotifications/validate", &body)
            .await;
        assert_eq!(response.status(), StatusCode::OK, "{events}");
    }
    let body = json!({"NotificationName": "n", "EventsExpression": "Falls"});
    let response = app
        .admin
        .post("/V2/1000/eventnotifications/validate", &body)
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

async fn a_fall_is_an_emergency_and_a_fall(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    for (name, events) in [("fall", "Fall"), ("sos", "Emergency")] {
        let body = json!({"NotificationName": name, "EventsExpression": events});
        let response = app.admin.post("/V2/1000/eventnotifications", &body).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let batch = json!([{"MessageType": "AutomaticPositionReport", "EmergencyState": "Fall",
        "Position": {"Latitude": 51.5, "Longitude": -0.12}}]);
    let processed = crate::mo_messages::post_processed(&app, "1000", DEVICE, &batch).await;
    let mut matched: Vec<&str> = processed[0]["Notifications"]
        .as_array()
        .expect("notifications")
        .iter()
        .filter_map(|n| n["NotificationName"].as_str())
        .collect();
    matched.sort_unstable();
    assert_eq!(matched, ["fall", "sos"]);
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["EmergencyState"], "Fall");
    // Any other message type with a fall is one too; a plain report is neither.
    let plain = json!([{"MessageType": "AutomaticPositionReport", "EmergencyState": "None"}]);
    let processed = crate::mo_messages::post_processed(&app, "1000", DEVICE, &plain).await;
    assert_eq!(processed[0]["Notifications"], json!([]));
}
