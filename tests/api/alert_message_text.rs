//! What the worker sent, on the alert (issue 43): `MessageType` and `MessageText` (the
//! raising MO message's `MessageType` and `Message`) on the alert record — read, listed,
//! answered by an action and on the stream's alert events — kept from the raising
//! message when further matches join, null when the message had none, and a foreign
//! tenant's alert still 404.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alert_record::next_alert;
use crate::alerts::{sos_message, sos_setup};
use crate::backend_tests;
use crate::common::{TestApp, assert_not_found};
use crate::mo_messages::{DEVICE, post_processed, register_device};
use crate::stream::{EventStream, stream_path};

backend_tests!(
    an_alert_carries_the_text_its_message_sent,
    a_message_without_text_leaves_them_null,
    a_foreign_tenants_alert_stays_not_found,
    a_message_without_a_position_names_no_place,
);

fn alert_path(tenant: &str, id: &str) -> String {
    format!("/V2/{tenant}/alerts/{id}")
}

/// An SOS of `MessageType` `kind` saying `text` (none: no `Message`); answers its alert's id.
async fn sos_saying(
    app: &TestApp,
    tenant: &str,
    seq: i64,
    kind: &str,
    text: Option<&str>,
) -> String {
    let mut message = sos_message(seq, "2026-03-01T10:00:00Z", 51.5, -0.12);
    message["MessageType"] = json!(kind);
    if let Some(text) = text {
        message["Message"] = json!(text);
    }
    let processed = post_processed(app, tenant, DEVICE, &json!([message])).await;
    processed[0]["Notifications"][0]["AlertId"]
        .as_str()
        .unwrap_or_else(|| panic!("no alert in {processed}"))
        .to_string()
}

fn said(alert: &Value) -> (Value, Value) {
    (alert["MessageType"].clone(), alert["MessageText"].clone())
}

async fn an_alert_carries_the_text_its_message_sent(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let mut stream = EventStream::open(&app.admin, &stream_path("1000", false), None).await;
    // Markup and quotes are text, kept as sent.
    let text = r#"Fell off the ladder <b>"help"</b> — ankle"#;
    let id = sos_saying(&app, "1000", 1, "FreeText", Some(text)).await;
    let expected = (json!("FreeText"), json!(text));

    let alert = app.admin.get_json(&alert_path("1000", &id)).await;
    assert_eq!(said(&alert), expected, "{alert}");
    let listed = app.admin.get_json("/V2/1000/alerts?status=Open").await;
    assert_eq!(said(&listed[0]), expected, "the listing: {listed}");
    let raised = next_alert(&mut stream).await;
    assert_eq!(
        said(&raised.data),
        expected,
        "the raised event: {}",
        raised.data
    );

    // A further SOS with other words joins the alert: it still shows what raised it.
    let joined = sos_saying(&app, "1000", 2, "CannedMessageSend", Some("Still here")).await;
    assert_eq!(joined, id);
    let alert = app.admin.get_json(&alert_path("1000", &id)).await;
    assert_eq!(alert["MatchCount"], 2);
    assert_eq!(said(&alert), expected, "after a joining match: {alert}");
    let matched = next_alert(&mut stream).await;
    assert_eq!(said(&matched.data), expected, "the joining event");

    // An action answers the alert with them, and so does its stream event.
    let response = app
        .admin
        .post(
            &format!("{}/acknowledge", alert_path("1000", &id)),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let acknowledged: Value = response.json().await.unwrap();
    assert_eq!(said(&acknowledged), expected);
    let event = next_alert(&mut stream).await;
    assert_eq!(event.data["Status"], "Acknowledged");
    assert_eq!(said(&event.data), expected, "the acknowledged event");
    // The document says what they are.
    let document = app.admin.get_json("/openapi.json").await;
    let fields = &document["components"]["schemas"]["Alert"]["properties"];
    for field in ["MessageType", "MessageText"] {
        assert!(fields[field].is_object(), "{field} in {fields}");
    }
}

async fn a_message_without_text_leaves_them_null(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let id = sos_saying(&app, "1000", 1, "AutomaticPositionReport", None).await;
    let alert = app.admin.get_json(&alert_path("1000", &id)).await;
    assert_eq!(
        said(&alert),
        (json!("AutomaticPositionReport"), Value::Null),
        "{alert}"
    );
    // Blank words are what was sent, not nothing.
    let resolved = app
        .admin
        .post(&format!("{}/resolve", alert_path("1000", &id)), &json!({}))
        .await;
    assert_eq!(resolved.status(), StatusCode::OK);
    let again = sos_saying(&app, "1000", 2, "FreeText", Some(" ")).await;
    assert_ne!(again, id, "a resolved alert is not joined");
    let alert = app.admin.get_json(&alert_path("1000", &again)).await;
    assert_eq!(said(&alert), (json!("FreeText"), json!(" ")), "{alert}");
}

async fn a_foreign_tenants_alert_stays_not_found(app: TestApp) {
    let branch = app.create_tenant("1000", "Branch").await;
    let other = app.create_tenant("1000", "Other").await;
    sos_setup(&app, &branch, DEVICE).await;
    let id = sos_saying(
        &app,
        &branch,
        1,
        "FreeText",
        Some("Trapped in the cold store"),
    )
    .await;
    let (_, outsider) = app
        .create_user(&other, "outsider@example.com", "Administrator")
        .await;
    // The other tenant's path and its own: nothing, and its listing holds nothing.
    assert_not_found(outsider.get(&alert_path(&branch, &id)).await).await;
    assert_not_found(outsider.get(&alert_path(&other, &id)).await).await;
    let listed = outsider
        .get_json(&format!("/V2/{other}/alerts?subtenants=true"))
        .await;
    assert_eq!(listed, json!([]), "{listed}");
    // The owner's admin reads it, with its text.
    let alert = app.admin.get_json(&alert_path(&branch, &id)).await;
    assert_eq!(alert["MessageText"], "Trapped in the cold store");
}

/// The e-mail bodies stored for the deliveries of `device`.
async fn email_bodies(app: &TestApp, device: &str) -> Vec<String> {
    let listed = app
        .admin
        .get_json("/V2/1000/deliveries?channel=Email")
        .await;
    listed
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["DeviceId"] == device)
        .filter_map(|d| d["Body"].as_str().map(str::to_string))
        .collect()
}

/// Where, in the stored bodies (issue 48): the place when there is a position, nothing
/// when there is none; a tenant default that is no `PositionFormat` is decimal degrees.
async fn a_message_without_a_position_names_no_place(app: TestApp) {
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "Properties": {"PositionFormat": "Mercator"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    sos_setup(&app, "1000", DEVICE).await;
    sos_saying(&app, "1000", 1, "FreeText", Some("Help")).await;
    let bodies = email_bodies(&app, DEVICE).await;
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert!(
        bodies[0]
            .contains("Place: City of Westminster, England, GB\nPosition: 51.50000, -0.12000\n"),
        "{}",
        bodies[0]
    );
    assert!(bodies[0].contains("Navigate: geo:51.50000,-0.12000\n"));

    register_device(&app, "1000", "bare").await;
    let sos = json!({"MessageType": "ManualPositionReport", "SequenceNumber": 1,
                     "SentFromDevice": "2026-03-01T10:00:00Z", "EmergencyState": "Active"});
    post_processed(&app, "1000", "bare", &json!([sos])).await;
    let bodies = email_bodies(&app, "bare").await;
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert!(bodies[0].contains("Position: unknown\n"), "{}", bodies[0]);
    for absent in ["Place:", "Map:", "geo:"] {
        assert!(!bodies[0].contains(absent), "{absent} in {}", bodies[0]);
    }
}
