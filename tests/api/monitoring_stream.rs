//! A monitoring session on the live stream and to webhooks (issue 45 §4; docs/monitoring.md
//! "Events"): every line of its history — started, a check-in through the API or from
//! the device, changed, the timers' reminder and missed check-in, ended — is a
//! `monitoring` event carrying `DeviceId`, the line and the `Session` as it then is, in
//! the caller's scope only, and a `Device` webhook event of `Type` `Updated`.

use std::time::Duration;

use jiff::SignedDuration;
use reqwest::StatusCode;
use safetrack::app::AppConfig;
use serde_json::{Value, json};

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, spawn_app_with};
use crate::mo_messages::register_device;
use crate::stream::{EventStream, SseEvent, stream_path};

backend_fn_tests!(
    a_session_s_life_is_followed_on_the_stream,
    a_device_s_check_in_follows_its_message,
    monitoring_events_stay_in_their_scope,
    session_lines_are_device_webhook_events,
    a_policy_step_is_a_line_of_the_session,
);

/// A session's minute here (`PipelineConfig::monitoring_minute`).
const MINUTE: Duration = Duration::from_millis(400);

fn config() -> AppConfig {
    let mut config = AppConfig::default();
    config.pipeline.monitoring_minute = SignedDuration::try_from(MINUTE).expect("a duration");
    config.worker_interval = Duration::from_millis(100);
    config.pipeline.escalation_minute = SignedDuration::try_from(MINUTE).expect("a duration");
    // Today's rounds would come after an hour: none during a test.
    config.pipeline.escalation_after = Some(SignedDuration::from_hours(1));
    config
}

async fn app(backend: Backend) -> Option<TestApp> {
    spawn_app_with(backend, config()).await
}

fn monitoring_path(tenant: &str, device: &str) -> String {
    format!("/V2/{tenant}/devices/{device}/monitoring")
}

/// Starts a session at `device` of `tenant` (a long one unless `settings` say otherwise).
async fn start(app: &TestApp, tenant: &str, device: &str, settings: Value) {
    let response = app
        .admin
        .post(&monitoring_path(tenant, device), &settings)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "start {settings}");
}

/// The next `monitoring` event, passing over the other kinds.
async fn next_monitoring(stream: &mut EventStream) -> SseEvent {
    loop {
        let event = stream.expect().await;
        if event.event == "monitoring" {
            return event;
        }
    }
}

async fn a_session_s_life_is_followed_on_the_stream(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    register_device(&app, "1000", "w1").await;
    let mut stream = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    let path = monitoring_path("1000", "w1");
    // Reminder at 1, due at 2, missed at 3 (minutes).
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 2,
        "ReminderMinutes": 1, "GraceMinutes": 1, "Note": "Pump station 4"});
    start(&app, "1000", "w1", settings).await;

    let started = stream.expect().await;
    assert_eq!(started.event, "monitoring", "{started:?}");
    let data = &started.data;
    assert_eq!(data["Kind"], "Started");
    assert_eq!(data["DeviceId"], "w1");
    assert!(data["EventId"].is_string(), "{data}");
    assert_eq!(data["Actor"], crate::common::ADMIN_EMAIL);
    assert_eq!(data["Session"]["DeviceId"], "w1");
    assert_eq!(data["Session"]["State"], "Ok");
    assert_eq!(data["Session"]["Note"], "Pump station 4");
    let session_id = data["Session"]["MonitoringSessionId"].clone();
    assert_eq!(data["MonitoringSessionId"], session_id);

    // The timers' lines, in order, the session's state moving with them.
    let reminded = next_monitoring(&mut stream).await;
    assert_eq!(reminded.data["Kind"], "Reminder", "{:?}", reminded.data);
    assert_eq!(reminded.data["Actor"], "monitoring");
    assert!(reminded.data["Detail"]["MtMessageId"].is_string());
    // DueSoon, or Overdue when the machine is so loaded the worker came late.
    let state = &reminded.data["Session"]["State"];
    assert!(state == "DueSoon" || state == "Overdue", "{state}");
    let missed = next_monitoring(&mut stream).await;
    assert_eq!(missed.data["Kind"], "MissedCheckIn", "{:?}", missed.data);
    assert_eq!(missed.data["Session"]["MissedCheckInCount"], 1);
    assert_eq!(missed.data["Session"]["State"], "Alerting");
    assert!(reminded.id < missed.id && started.id < reminded.id);

    // A check-in through the API, a change, the end.
    let response = app
        .admin
        .post(&format!("{path}/checkins"), &json!({"Note": "called, OK"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let checked = next_monitoring(&mut stream).await;
    assert_eq!(checked.data["Kind"], "CheckIn");
    assert_eq!(checked.data["Detail"]["Kind"], "ApiCheckIn");
    assert_eq!(checked.data["Detail"]["Note"], "called, OK");
    assert_eq!(checked.data["Session"]["CheckInCount"], 1);
    assert_eq!(checked.data["Session"]["State"], "Ok");
    let extend = json!([{"op": "replace", "path": "/DurationMinutes", "value": 90}]);
    let response = app.admin.patch(&path, &extend).await;
    assert_eq!(response.status(), StatusCode::OK);
    let changed = next_monitoring(&mut stream).await;
    assert_eq!(changed.data["Kind"], "Changed", "{:?}", changed.data);
    assert_eq!(changed.data["Session"]["DurationMinutes"], 90);
    let response = app.admin.delete(&path).await;
    assert_eq!(response.status(), StatusCode::OK);
    let ended = next_monitoring(&mut stream).await;
    assert_eq!(ended.data["Kind"], "Ended");
    assert_eq!(ended.data["Session"]["EndKind"], "Normal");
    assert_eq!(ended.data["Session"]["State"], Value::Null);
    assert_eq!(ended.data["Session"]["MonitoringSessionId"], session_id);

    // Each event is a line of the session's history, under the same id.
    let lines = app
        .admin
        .get_json(&format!(
            "/V2/1000/monitoring/{}/events",
            session_id.as_str().expect("an id")
        ))
        .await;
    let line_ids: Vec<&Value> = lines
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| &l["EventId"])
        .collect();
    let streamed = [&started, &reminded, &missed, &checked, &changed, &ended];
    let streamed_ids: Vec<&Value> = streamed.iter().map(|e| &e.data["EventId"]).collect();
    assert_eq!(line_ids, streamed_ids);
}

async fn a_device_s_check_in_follows_its_message(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    register_device(&app, "1000", "w2").await;
    start(&app, "1000", "w2", json!({"DurationMinutes": 600})).await;
    let mut stream = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    let sent = jiff::Timestamp::now().to_string();
    let batch = json!([{"MessageType": "CheckIn", "SequenceNumber": 1, "SentFromDevice": sent}]);
    let response = app
        .admin
        .post("/V2/1000/devices/w2/momessages?process=true", &batch)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let processed: Value = response.json().await.expect("processed");
    let events = stream.take(3).await;
    let kinds: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(kinds, ["momessage", "device", "monitoring"], "{events:?}");
    let check_in = &events[2].data;
    assert_eq!(check_in["Kind"], "CheckIn");
    assert_eq!(check_in["Actor"], "device");
    assert_eq!(check_in["MoMessageId"], processed[0]["MessageId"]);
    assert_eq!(check_in["Session"]["LastCheckInKind"], "CheckIn");
}

async fn monitoring_events_stay_in_their_scope(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    let child = app.create_tenant("1000", "Depot").await;
    register_device(&app, &child, "w3").await;
    register_device(&app, "1000", "w4").await;
    let mut own = EventStream::open(&app.admin, &stream_path("1000", false), None).await;
    let mut subtree = EventStream::open(&app.admin, &stream_path("1000", true), None).await;
    let mut child_stream = EventStream::open(&app.admin, &stream_path(&child, false), None).await;

    start(&app, &child, "w3", json!({"DurationMinutes": 600})).await;
    start(&app, "1000", "w4", json!({"DurationMinutes": 600})).await;

    let seen = next_monitoring(&mut subtree).await;
    assert_eq!(seen.data["DeviceId"], "w3");
    assert_eq!(seen.data["Session"]["TenantCode"], child.as_str());
    assert_eq!(next_monitoring(&mut subtree).await.data["DeviceId"], "w4");
    assert_eq!(
        next_monitoring(&mut child_stream).await.data["DeviceId"],
        "w3"
    );
    // The parent's own stream has the parent's session only: the child's came first.
    assert_eq!(next_monitoring(&mut own).await.data["DeviceId"], "w4");
}

async fn session_lines_are_device_webhook_events(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    let hooks = json!({"Authentication": "None", "Urls": [
        {"Url": "https://hooks.example.com/devices", "Device": true},
        {"Url": "https://hooks.example.com/messages", "MoMessage": true}]});
    let response = app.admin.put("/V2/1000/webhooks", &hooks).await;
    assert_eq!(response.status(), StatusCode::OK);
    register_device(&app, "1000", "w5").await;
    start(&app, "1000", "w5", json!({"DurationMinutes": 600})).await;
    let response = app
        .admin
        .post(
            &format!("{}/checkins", monitoring_path("1000", "w5")),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    let deliveries = app
        .admin
        .get_json("/V2/1000/deliveries?channel=Webhook")
        .await;
    let sessions: Vec<Value> = deliveries
        .as_array()
        .expect("deliveries")
        .iter()
        .filter_map(|d| {
            let body: Value = serde_json::from_str(d["Body"].as_str()?).ok()?;
            (body["Data"]["Session"].is_object()).then(|| (d.clone(), body))
        })
        .map(|(delivery, body)| {
            assert_eq!(delivery["Target"], "https://hooks.example.com/devices");
            assert_eq!(delivery["DeviceId"], "w5", "{delivery}");
            body
        })
        .collect();
    let kinds: Vec<(&Value, &Value, &Value)> = sessions
        .iter()
        .map(|b| (&b["Category"], &b["Type"], &b["Data"]["Kind"]))
        .collect();
    assert_eq!(
        kinds,
        [
            (&json!("Device"), &json!("Updated"), &json!("Started")),
            (&json!("Device"), &json!("Updated"), &json!("CheckIn")),
        ],
        "{sessions:?}"
    );
    assert_eq!(sessions[1]["Data"]["Session"]["CheckInCount"], 1);
}

async fn a_policy_step_is_a_line_of_the_session(backend: Backend) {
    let Some(app) = app(backend).await else {
        return;
    };
    let steps = json!([
        {"AfterMinutes": 0, "Instructions": "Call the worker.",
         "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:first@example.com"}]},
        {"AfterMinutes": 2, "Instructions": "No answer: call the site supervisor.",
         "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:second@example.com"}]},
    ]);
    let response = app
        .admin
        .post(
            "/V2/1000/escalationpolicies",
            &json!({"Name": "Lone worker", "Steps": steps}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create policy");
    let location = response.headers()["location"].to_str().expect("location");
    let policy = location.rsplit('/').next().expect("an id").to_string();
    let notification = json!({"NotificationName": "Missed", "EventsExpression": "MissedCheckIn",
        "RaiseAlert": true, "Severity": "2", "EscalationPolicyId": policy,
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
    let response = app
        .admin
        .post("/V2/1000/eventnotifications", &notification)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create notification");
    register_device(&app, "1000", "w6").await;
    let mut stream = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 2,
        "ReminderMinutes": 0, "GraceMinutes": 1});
    start(&app, "1000", "w6", settings).await;

    let mut kinds = Vec::new();
    let mut steps_seen = Vec::new();
    while steps_seen.len() < 2 {
        let event = next_monitoring(&mut stream).await;
        kinds.push(event.data["Kind"].as_str().unwrap_or_default().to_string());
        if event.data["Kind"] == "EscalationStep" {
            steps_seen.push(event.data.clone());
        }
    }
    assert_eq!(
        kinds,
        [
            "Started",
            "MissedCheckIn",
            "EscalationStep",
            "EscalationStep"
        ]
    );
    let first = &steps_seen[0];
    assert_eq!(first["Actor"], "escalation");
    assert_eq!(first["Detail"]["Step"], 1);
    assert_eq!(first["Detail"]["Instructions"], "Call the worker.");
    assert!(first["Detail"]["AlertId"].is_string(), "{first}");
    assert_eq!(first["Session"]["State"], "Alerting");
    assert_eq!(steps_seen[1]["Detail"]["Step"], 2);
    // A step is no change of the session: its version is the missed check-in's.
    let session = app.admin.get_json(&monitoring_path("1000", "w6")).await;
    assert_eq!(session["ETag"], first["Session"]["ETag"]);
}
