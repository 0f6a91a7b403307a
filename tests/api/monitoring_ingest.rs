//! Device messages drive a device's monitoring session (issue 45 §1–2;
//! docs/monitoring.md "What confirms a check-in"): a confirming MO message is the
//! session's check-in, an automatic report is not.

use jiff::{SignedDuration, Timestamp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::TestApp;

backend_tests!(
    a_check_in_message_moves_the_session_clock,
    automatic_reports_confirm_nothing,
    free_text_and_an_sos_confirm,
    a_message_from_before_the_start_changes_nothing,
    a_device_clock_ahead_counts_from_the_arrival,
    begin_and_end_monitoring_messages_start_and_end_a_session,
    rules_start_and_force_stop_a_session,
);

const PATH: &str = "/V2/1000/devices/w1/monitoring";

/// A device `w1` with a 30-minute session started a second ago; answers the session.
async fn started(app: &TestApp) -> Value {
    let body = json!({"DeviceId": "w1", "DeviceType": "InReach"});
    let response = app.admin.post("/V2/1000/devices", &body).await;
    assert_eq!(response.status(), StatusCode::OK, "create device");
    let settings = json!({"CheckInIntervalMinutes": 30, "DurationMinutes": 240});
    let response = app.admin.post(PATH, &settings).await;
    assert_eq!(response.status(), StatusCode::OK, "start");
    let session = app.admin.get_json(PATH).await;
    // Messages "sent" in the first second after the start have arrived by now: a
    // check-in never counts from later than its arrival.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    session
}

async fn send(app: &TestApp, message: Value) {
    let response = app
        .admin
        .post("/V2/1000/devices/w1/momessages", &json!([message]))
        .await;
    assert_eq!(response.status(), StatusCode::OK, "message {message}");
}

/// A message of `message_type` sent `after` the session's start.
fn sent_after(session: &Value, message_type: &str, after: SignedDuration) -> Value {
    let sent = time(&session["StartedAt"]) + after;
    json!({"MessageType": message_type, "SentFromDevice": sent.to_string(),
           "Position": {"Latitude": 51.5, "Longitude": -0.12}})
}

fn time(value: &Value) -> Timestamp {
    value.as_str().expect("a time").parse().expect("timestamp")
}

async fn a_check_in_message_moves_the_session_clock(app: TestApp) {
    let session = started(&app).await;
    let sent = sent_after(&session, "CheckIn", SignedDuration::from_millis(500));
    send(&app, sent.clone()).await;
    let now = app.admin.get_json(PATH).await;
    let at = time(&sent["SentFromDevice"]);
    assert_eq!(
        time(&now["LastCheckInAt"]),
        at,
        "counts from when it was sent"
    );
    assert_eq!(now["LastCheckInKind"], "CheckIn");
    assert_eq!(now["CheckInCount"], 1);
    assert_eq!(time(&now["NextDueAt"]), at + SignedDuration::from_mins(30));
    assert_ne!(now["ETag"], session["ETag"]);

    // The history keeps the check-in once the session ends.
    assert_eq!(app.admin.delete(PATH).await.status(), StatusCode::OK);
    let history = app.admin.get_json(&format!("{PATH}/history")).await;
    assert_eq!(history[0]["CheckInCount"], 1);
    assert_eq!(history[0]["LastCheckInKind"], "CheckIn");
    assert_eq!(time(&history[0]["LastCheckInAt"]), at);
}

async fn automatic_reports_confirm_nothing(app: TestApp) {
    let session = started(&app).await;
    let later = SignedDuration::from_millis(500);
    for kind in ["AutomaticPositionReport", "Synchronise", "AmIAlive"] {
        send(&app, sent_after(&session, kind, later)).await;
    }
    let now = app.admin.get_json(PATH).await;
    assert_eq!(now["LastCheckInAt"], Value::Null);
    assert_eq!(now["CheckInCount"], 0);
    assert_eq!(now["NextDueAt"], session["NextDueAt"]);
    assert_eq!(now["ETag"], session["ETag"], "the session row is untouched");
}

async fn free_text_and_an_sos_confirm(app: TestApp) {
    let session = started(&app).await;
    let text = sent_after(&session, "FreeText", SignedDuration::from_millis(300));
    send(&app, text).await;
    let now = app.admin.get_json(PATH).await;
    assert_eq!(now["LastCheckInKind"], "FreeText");
    assert_eq!(now["CheckInCount"], 1);

    let mut sos = sent_after(
        &session,
        "AutomaticPositionReport",
        SignedDuration::from_millis(600),
    );
    sos["EmergencyState"] = json!("Active");
    send(&app, sos.clone()).await;
    let now = app.admin.get_json(PATH).await;
    assert_eq!(now["LastCheckInKind"], "Emergency");
    assert_eq!(now["CheckInCount"], 2);
    assert_eq!(time(&now["LastCheckInAt"]), time(&sos["SentFromDevice"]));
}

async fn a_message_from_before_the_start_changes_nothing(app: TestApp) {
    let session = started(&app).await;
    let early = sent_after(&session, "CheckIn", SignedDuration::from_mins(-5));
    send(&app, early).await;
    let now = app.admin.get_json(PATH).await;
    assert_eq!(now["LastCheckInAt"], Value::Null);
    assert_eq!(now["CheckInCount"], 0);
    assert_eq!(now["NextDueAt"], session["NextDueAt"]);
}

async fn a_device_clock_ahead_counts_from_the_arrival(app: TestApp) {
    let session = started(&app).await;
    let ahead = sent_after(&session, "CheckIn", SignedDuration::from_hours(2));
    let before = Timestamp::now();
    send(&app, ahead).await;
    let now = app.admin.get_json(PATH).await;
    let at = time(&now["LastCheckInAt"]);
    assert!(
        at >= before && at <= Timestamp::now(),
        "{at}: when it arrived"
    );
    assert_eq!(time(&now["NextDueAt"]), at + SignedDuration::from_mins(30));
}

async fn begin_and_end_monitoring_messages_start_and_end_a_session(app: TestApp) {
    let body = json!({"DeviceId": "w1", "DeviceType": "InReach",
        "Properties": {"GraceMinutes": "7"}});
    assert_eq!(
        app.admin.post("/V2/1000/devices", &body).await.status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.get(PATH).await.status(), StatusCode::NOT_FOUND);
    let sent = Timestamp::from_second(Timestamp::now().as_second() - 30).expect("a time");
    let begin = json!({"MessageType": "BeginMonitoring", "SentFromDevice": sent.to_string(),
        "Message": "Going into the tank",
        "Properties": {"DurationMinutes": "90", "CheckInIntervalMinutes": "20",
                       "ReminderMinutes": "soon", "Note": "Pump station 4"}});
    send(&app, begin).await;
    let session = app.admin.get_json(PATH).await;
    assert_eq!(session["StartedBy"], "device");
    assert_eq!(
        time(&session["StartedAt"]),
        sent,
        "from when the person started it"
    );
    assert_eq!(session["DurationMinutes"], 90);
    assert_eq!(session["CheckInIntervalMinutes"], 20);
    assert_eq!(session["GraceMinutes"], 7, "the device's property");
    assert_eq!(session["ReminderMinutes"], 5, "a bad value passed over");
    assert_eq!(session["Note"], "Pump station 4");

    // A second start while one runs changes nothing (and the batch is still stored).
    let again = json!({"MessageType": "BeginMonitoring", "Properties": {"DurationMinutes": "10"}});
    send(&app, again).await;
    let still = app.admin.get_json(PATH).await;
    assert_eq!(still["MonitoringSessionId"], session["MonitoringSessionId"]);
    assert_eq!(still["DurationMinutes"], 90);

    send(&app, json!({"MessageType": "EndMonitoring"})).await;
    assert_eq!(app.admin.get(PATH).await.status(), StatusCode::NOT_FOUND);
    let history = app.admin.get_json(&format!("{PATH}/history")).await;
    assert_eq!(history[0]["EndKind"], "Normal");
    assert_eq!(history[0]["EndedBy"], "device");
    // An end without a session: nothing, and no error.
    send(&app, json!({"MessageType": "EndMonitoring"})).await;
    let messages = app.admin.get_json("/V2/1000/devices/w1/momessages").await;
    assert_eq!(
        messages.as_array().map(Vec::len),
        Some(4),
        "every message stored"
    );
}

async fn rules_start_and_force_stop_a_session(app: TestApp) {
    let body = json!({"DeviceId": "w1", "DeviceType": "InReach"});
    assert_eq!(
        app.admin.post("/V2/1000/devices", &body).await.status(),
        StatusCode::OK
    );
    let mut ids = Vec::new();
    for (name, events, recipient) in [
        ("Start", "Waypoint", "StartMonitoring"),
        ("Stop", "PowerDown", "ForceStopMonitoring"),
    ] {
        let notification = json!({"NotificationName": name, "EventsExpression": events,
            "Recipients": [{"Type": recipient}]});
        let response = app
            .admin
            .post("/V2/1000/eventnotifications", &notification)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let location = response.headers()["location"].to_str().unwrap().to_string();
        ids.push(location.rsplit('/').next().unwrap().to_string());
    }
    send(&app, json!({"MessageType": "Waypoint"})).await;
    let session = app.admin.get_json(PATH).await;
    assert_eq!(session["StartedBy"], format!("notification:{}", ids[0]));
    assert_eq!(session["DurationMinutes"], 480, "the built-in defaults");
    send(&app, json!({"MessageType": "PowerDown"})).await;
    assert_eq!(app.admin.get(PATH).await.status(), StatusCode::NOT_FOUND);
    let history = app.admin.get_json(&format!("{PATH}/history")).await;
    assert_eq!(history[0]["EndKind"], "ForceStop");
    assert_eq!(history[0]["EndedBy"], format!("notification:{}", ids[1]));
    assert_eq!(
        history[0]["EndReason"],
        "ForceStopMonitoring (event notification)"
    );
    // Each also queued its MT command for the device.
    let queued = app.admin.get_json("/V2/1000/devices/w1/mtmessages").await;
    let kinds: Vec<&str> = queued
        .as_array()
        .expect("MT messages")
        .iter()
        .filter_map(|m| m["Type"].as_str())
        .collect();
    assert_eq!(kinds, ["StartMonitoring", "ForceStopMonitoring"]);
}
