//! An alert's whole timeline through the real pipeline (issue 31 §4): raised, matched
//! again, escalated, e-mailed to a local SMTP server, acknowledged with a note, noted,
//! resolved — oldest first with `At` and `By`; the escalation round on the live stream;
//! the alert's actions reaching a stream on a second process (PostgreSQL); and the
//! e-mail naming the message's `MessageType` (§6).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use safetrack::services::ingest::PipelineConfig;

use crate::alert_record::{act_and_watch, alert_path, kinds, next_alert, timeline};
use crate::backend_fn_tests;
use crate::common::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestApp, TestDatabase, spawn_app_with,
};
use crate::delivery_worker::{Peers, app_with, peers_config};
use crate::mo_messages::{DEVICE, register_device};
use crate::peers::SmtpSink;
use crate::stream::{EventStream, stream_path};

backend_fn_tests!(
    the_timeline_tells_the_whole_story,
    the_email_names_the_message_type,
);

pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// Escalation after 1 s, one round; e-mail through a local SMTP sink.
async fn escalating_app(backend: Backend, smtp: &SmtpSink) -> Option<TestApp> {
    let mut config = peers_config(Peers {
        smtp: Some(smtp),
        ..Default::default()
    });
    config.pipeline = PipelineConfig {
        escalation_after: Some(jiff::SignedDuration::from_secs(1)),
        escalation_rounds: 1,
        ..config.pipeline
    };
    spawn_app_with(backend, config).await
}

/// A device whose SOS (a ManualPositionReport with EmergencyState Active) raises a High
/// alert e-mailed to ops, with one escalation contact.
pub(crate) async fn escalating_setup(app: &TestApp) {
    register_device(app, "1000", DEVICE).await;
    let contact = json!({"ContactName": "Duty", "IsEscalationContact": true,
                         "ContactEntries": [{"Address": "duty@hq.example"}]});
    let response = app
        .admin
        .post("/V2/1000/addressbookcontacts", &contact)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let notification = json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
        "RaiseAlert": true, "Severity": "2",
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
    let response = app
        .admin
        .post("/V2/1000/eventnotifications", &notification)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

async fn sos(app: &TestApp, seq: i64) -> (String, String) {
    let batch = json!([{"MessageType": "ManualPositionReport", "SequenceNumber": seq,
        "SentFromDevice": format!("2026-03-01T10:0{seq}:00Z"), "EmergencyState": "Active",
        "Position": {"Latitude": 51.5, "Longitude": -0.12}}]);
    let processed = crate::mo_messages::post_processed(app, "1000", DEVICE, &batch).await;
    (
        processed[0]["MessageId"].as_str().unwrap().to_string(),
        processed[0]["Notifications"][0]["AlertId"]
            .as_str()
            .expect("an alert")
            .to_string(),
    )
}

/// Waits until every delivery of alert `id` is Sent; returns them.
pub(crate) async fn all_sent(app: &TestApp, id: &str, count: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let listed = app
            .admin
            .get_json(&format!("/V2/1000/deliveries?alertId={id}"))
            .await;
        let listed = listed.as_array().unwrap().clone();
        if listed.len() == count && listed.iter().all(|d| d["Status"] == "Sent") {
            return listed;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "deliveries not all sent: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn the_timeline_tells_the_whole_story(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let Some(app) = escalating_app(backend, &smtp).await else {
        return;
    };
    escalating_setup(&app).await;
    let (_, worker) = app.create_user("1000", "worker@example.com", "User").await;
    let mut stream = EventStream::open(&app.admin, &stream_path("1000", false), None).await;

    let (first_message, id) = sos(&app, 1).await;
    let (second_message, joined) = sos(&app, 2).await;
    assert_eq!(joined, id);
    // The escalation round is an alert event too.
    let escalated = loop {
        let event = next_alert(&mut stream).await;
        if event.data["EscalationLevel"] == 1 {
            break event;
        }
    };
    assert_eq!(escalated.data["Status"], "Open");
    // The first match e-mailed ops (the second joined it, telling nobody again); the
    // round e-mailed the duty contact.
    let deliveries = all_sent(&app, &id, 2).await;
    smtp.wait_for(2, WAIT).await;

    let path = alert_path("1000", &id);
    let response = worker
        .post(
            &format!("{path}/acknowledge"),
            &json!({"Note": "Calling him"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = app
        .admin
        .post(&format!("{path}/notes"), &json!({"Text": "He is safe"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = worker
        .post(
            &format!("{path}/resolve"),
            &json!({"Outcome": "Genuine", "Resolution": "Fell, minor injury"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    let steps = timeline(&app.admin, "1000", &id).await;
    assert_eq!(
        kinds(&steps),
        [
            "Raised",
            "Delivery",
            "Matched",
            "Escalated",
            "Delivery",
            "Acknowledged",
            "Note",
            "Resolved"
        ],
        "{steps:#?}"
    );
    let at: Vec<jiff::Timestamp> = steps
        .iter()
        .map(|e| e["At"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] <= w[1]), "oldest first: {at:?}");
    let by: Vec<&Value> = steps.iter().map(|e| &e["By"]).collect();
    let system = Value::Null;
    let (worker_name, admin) = (json!("worker@example.com"), json!(ADMIN_EMAIL));
    assert_eq!(
        by,
        [
            &system,
            &system,
            &system,
            &system,
            &system,
            &worker_name,
            &admin,
            &worker_name
        ]
    );
    assert_eq!(steps[0]["MessageId"], first_message);
    assert_eq!(
        (&steps[0]["Latitude"], &steps[0]["Longitude"]),
        (&json!(51.5), &json!(-0.12))
    );
    assert_eq!(steps[2]["MessageId"], second_message);
    assert_eq!(steps[2]["MatchCount"], 2);
    assert_eq!(steps[3]["Round"], 1);
    assert_eq!(
        steps[3]["Notified"],
        json!([{"Channel": "Email", "Target": "duty@hq.example"}])
    );
    for (entry, target) in [
        (&steps[1], "ops@example.com"),
        (&steps[4], "duty@hq.example"),
    ] {
        assert_eq!(entry["Channel"], "Email");
        assert_eq!(entry["Target"], target);
        assert_eq!(entry["Status"], "Sent");
        assert_eq!(entry["Attempts"], 1);
        assert!(entry["SentAt"].is_string());
        assert!(
            deliveries
                .iter()
                .any(|d| d["DeliveryId"] == entry["DeliveryId"]),
            "{entry}"
        );
    }
    assert_eq!(steps[5]["Note"], "Calling him");
    assert_eq!(steps[6]["Text"], "He is safe");
    assert_eq!(steps[7]["Outcome"], "Genuine");
    assert_eq!(steps[7]["Resolution"], "Fell, minor injury");
}

async fn the_email_names_the_message_type(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let Some(app) = app_with(
        backend,
        Peers {
            smtp: Some(&smtp),
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    escalating_setup(&app).await;
    sos(&app, 1).await;
    let mail = &smtp.wait_for(1, WAIT).await[0];
    let body = mail["body"].as_str().unwrap().replace("\r\n", "\n");
    assert!(
        body.contains(
            "Event: Emergency\nMessage type: ManualPositionReport\nEmergency state: Active\n"
        ),
        "{body}"
    );
}

/// Two `serve` processes on one PostgreSQL database: what is done to an alert through
/// one reaches a stream on the other, as the alert now is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_alert_actions_reach_a_second_process() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let one = crate::durability::start_with(&database.url, &[]).await;
    let two = crate::durability::start_with(&database.url, &[]).await;
    let admin_one = Client::new(&one.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let admin_two = Client::new(&two.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let registered = admin_one
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": DEVICE, "DeviceType": "InReach"}),
        )
        .await;
    assert_eq!(registered.status(), StatusCode::OK);
    let created = admin_one
        .post(
            "/V2/1000/eventnotifications",
            &json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
                    "RaiseAlert": true, "Severity": "0"}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let mut on_two = EventStream::open(&admin_two, &stream_path("1000", false), None).await;
    let response = admin_one
        .post(
            &format!("/V2/1000/devices/{DEVICE}/momessages?process=true"),
            &json!([{"MessageType": "FreeText", "EmergencyState": "Active"}]),
        )
        .await;
    let processed: Value = response.json().await.unwrap();
    let id = processed[0]["Notifications"][0]["AlertId"]
        .as_str()
        .expect("an alert")
        .to_string();
    assert_eq!(next_alert(&mut on_two).await.data["AlertId"], id);
    act_and_watch(&admin_one, &id, &mut on_two).await;
}
