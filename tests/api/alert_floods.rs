//! No flood on repeat matches (issue 43 §1): a further match of an open (or
//! acknowledged) alert joins it without telling anyone again — no new e-mail, its
//! MatchCount and position moving — and the timeline keeps one collapsed `Matched` line
//! per run of matches. And an SOS that arrives late (older than the device's latest
//! message) still puts the device in emergency.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alert_record::{alert_path, kinds, timeline};
use crate::alert_timeline::{WAIT, all_sent, escalating_setup};
use crate::backend_fn_tests;
use crate::common::{Backend, TestApp};
use crate::delivery_worker::{Peers, app_with};
use crate::mo_messages::{DEVICE, post_processed};
use crate::peers::SmtpSink;

backend_fn_tests!(
    twenty_repeat_matches_send_the_first_matchs_emails_only,
    a_match_after_an_acknowledgement_starts_a_new_matched_line,
    a_late_sos_puts_the_device_in_emergency,
);

/// The `i`th SOS of a run, 30 s apart, a little further north each time; answers its
/// message id and alert id.
async fn sos(app: &TestApp, i: i64) -> (String, String) {
    let batch = json!([{"MessageType": "ManualPositionReport", "SequenceNumber": i + 1,
        "SentFromDevice": format!("2026-03-01T10:{:02}:{:02}Z", i / 2, (i % 2) * 30),
        "EmergencyState": "Active",
        "Position": {"Latitude": 51.5 + i as f64 / 100.0, "Longitude": -0.12}}]);
    let processed = post_processed(app, "1000", DEVICE, &batch).await;
    let text = |v: &Value| v.as_str().expect("an id").to_string();
    (
        text(&processed[0]["MessageId"]),
        text(&processed[0]["Notifications"][0]["AlertId"]),
    )
}

async fn flooding_app(backend: Backend, smtp: &SmtpSink) -> Option<TestApp> {
    let peers = Peers {
        smtp: Some(smtp),
        ..Default::default()
    };
    let app = app_with(backend, peers).await?;
    escalating_setup(&app).await;
    Some(app)
}

async fn twenty_repeat_matches_send_the_first_matchs_emails_only(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let Some(app) = flooding_app(backend, &smtp).await else {
        return;
    };
    let (_, id) = sos(&app, 0).await;
    let mut last = String::new();
    for i in 1..=20 {
        let (message, joined) = sos(&app, i).await;
        assert_eq!(joined, id, "match {i} joins the alert");
        last = message;
    }
    // Deliveries are written with their match: the first match's one e-mail is all.
    let deliveries = all_sent(&app, &id, 1).await;
    assert_eq!(deliveries[0]["Target"], "ops@example.com");
    assert_eq!(smtp.wait_for(1, WAIT).await.len(), 1);

    let alert = app.admin.get_json(&alert_path("1000", &id)).await;
    assert_eq!(alert["MatchCount"], 21);
    assert_eq!(
        alert["Latitude"],
        json!(51.7),
        "the latest match's position"
    );
    let steps = timeline(&app.admin, "1000", &id).await;
    assert_eq!(
        kinds(&steps),
        ["Raised", "Delivery", "Matched"],
        "{steps:#?}"
    );
    assert_eq!(steps[2]["MatchCount"], 21);
    assert_eq!(steps[2]["MessageId"], json!(last));
    assert_eq!(steps[2]["Latitude"], json!(51.7));
    assert_eq!(steps[2]["At"], alert["LastMatchAt"]);
}

async fn a_match_after_an_acknowledgement_starts_a_new_matched_line(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let Some(app) = flooding_app(backend, &smtp).await else {
        return;
    };
    let (_, id) = sos(&app, 0).await;
    sos(&app, 1).await;
    sos(&app, 2).await;
    let path = alert_path("1000", &id);
    let response = app
        .admin
        .post(&format!("{path}/acknowledge"), &json!({}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    for i in 3..=5 {
        assert_eq!(sos(&app, i).await.1, id, "an acknowledged alert is joined");
    }
    all_sent(&app, &id, 1).await;
    let steps = timeline(&app.admin, "1000", &id).await;
    assert_eq!(
        kinds(&steps),
        ["Raised", "Delivery", "Matched", "Acknowledged", "Matched"],
        "{steps:#?}"
    );
    assert_eq!(steps[2]["MatchCount"], 3);
    assert_eq!(steps[4]["MatchCount"], 6);
    let alert = app.admin.get_json(&path).await;
    assert_eq!(
        (&alert["MatchCount"], &alert["Status"]),
        (&json!(6), &json!("Acknowledged"))
    );
}

async fn a_late_sos_puts_the_device_in_emergency(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let Some(app) = flooding_app(backend, &smtp).await else {
        return;
    };
    let report = json!([{"MessageType": "AutomaticPositionReport", "SequenceNumber": 1,
        "SentFromDevice": "2026-03-01T10:05:00Z",
        "Position": {"Latitude": 51.6, "Longitude": -0.12}}]);
    post_processed(&app, "1000", DEVICE, &report).await;
    // Sent at 10:00, delivered after the 10:05 report: late.
    let (_, id) = sos(&app, 0).await;
    let alert = app.admin.get_json(&alert_path("1000", &id)).await;
    assert_eq!(alert["Late"], true);
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["EmergencyState"], "Active", "{device}");
    assert_eq!(
        device["LastPosition"]["Lat"], 51.6,
        "the rest of the state stays"
    );
    // A late cancel older than the SOS does not cancel it.
    let cancel = json!([{"MessageType": "EmergencyCancelled", "SequenceNumber": 3,
        "SentFromDevice": "2026-03-01T09:59:00Z", "EmergencyState": "None"}]);
    post_processed(&app, "1000", DEVICE, &cancel).await;
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["EmergencyState"], "Active", "{device}");
}
