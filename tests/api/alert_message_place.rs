//! Where, in every alerting message (issue 48 §1, §3): an SOS's e-mail, SMS and call, as
//! the real SMTP server and the Twilio fake received them (tests/api/peers.rs), carry the
//! place in words, the position in the reader's `PositionFormat` and distance unit (a
//! platform user's profile; an outside contact gets the tenant's defaults), and the
//! OpenStreetMap and `geo:` links.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::{create_notification, sos_message};
use crate::backend_fn_tests;
use crate::common::{Backend, TestApp};
use crate::delivery_worker::{Peers, all_status, app_with, wait_deliveries};
use crate::mo_messages::{DEVICE, post_processed};
use crate::peers::{Receiver, SmtpSink};

backend_fn_tests!(an_sos_says_where_to_each_reader_in_their_units);

const WAIT: Duration = Duration::from_secs(20);
const WORKER_PHONE: &str = "+447700900123";
const OUTSIDE_PHONE: &str = "+447700900999";
/// 2.3 km north-east of Keswick (GeoNames: 54.59947, -3.13256).
const LAT: f64 = 54.6141;
const LON: f64 = -3.1075;
const OSM: &str =
    "https://www.openstreetmap.org/?mlat=54.61410&mlon=-3.10750#map=17/54.61410/-3.10750";
const GEO: &str = "geo:54.61410,-3.10750";
/// The worker's profile: degrees and minutes, feet and miles.
const WORKER_PLACE: &str = "1.4 mi NE of Keswick, England, GB";
const WORKER_POSITION: &str = "54° 36.846' N, 3° 06.450' W";
/// The tenant's defaults, for outside contacts: UTM, metres.
const OUTSIDE_PLACE: &str = "2.3 km NE of Keswick, England, GB";
const OUTSIDE_POSITION: &str = "30U 493057E 6051855N";

/// Tenant 1000 with UTM as its default, a worker who reads degrees-minutes and miles
/// assigned to the device, and an SOS rule telling the worker by e-mail, SMS and call,
/// and an outside address by e-mail and SMS.
async fn setup(app: &TestApp) {
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "Properties": {"PositionFormat": "Utm"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let (user_id, _) = app.create_user("1000", "worker@example.com", "User").await;
    let profile = json!({"CellPhone": WORKER_PHONE, "PositionFormat": "DegreeMinute",
                         "DistanceUnits": "ft"});
    let response = app
        .admin
        .put("/V2/1000/userprofile/worker@example.com", &profile)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": DEVICE, "DeviceType": "InReach", "FriendlyName": "Van 3",
                    "UserId": user_id}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let recipients = json!([
        {"Type": "DeviceUserEmail"}, {"Type": "DeviceUserSms"}, {"Type": "DeviceUserCall"},
        {"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"},
        {"Type": "MessagingAddress", "MessagingAddress": format!("sms:{OUTSIDE_PHONE}")},
    ]);
    create_notification(
        app,
        "1000",
        &json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "Severity": "2",
                "Recipients": recipients}),
    )
    .await;
}

fn mail_to(mails: &[Value], to: &str) -> String {
    let mail = mails
        .iter()
        .find(|m| m["rcpt_tos"] == json!([to]))
        .unwrap_or_else(|| panic!("no mail to {to} in {mails:?}"));
    mail["body"]
        .as_str()
        .unwrap_or_default()
        .replace("\r\n", "\n")
}

async fn an_sos_says_where_to_each_reader_in_their_units(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let twilio = Receiver::start().await;
    let peers = Peers {
        smtp: Some(&smtp),
        twilio: Some(&twilio),
        ..Default::default()
    };
    let Some(app) = app_with(backend, peers).await else {
        return;
    };
    setup(&app).await;
    let sos = sos_message(1, "2026-03-01T10:00:00Z", LAT, LON);
    post_processed(&app, "1000", DEVICE, &json!([sos])).await;
    wait_deliveries(&app, "?channel=Email", all_status("Sent")).await;
    wait_deliveries(&app, "?channel=Sms", all_status("Sent")).await;

    let mails = smtp.wait_for(2, WAIT).await;
    let worker = mail_to(&mails, "worker@example.com");
    for line in [
        format!("Place: {WORKER_PLACE}\n"),
        format!("Position: {WORKER_POSITION}\n"),
        format!("Map: {OSM}\n"),
        format!("Navigate: {GEO}\n"),
    ] {
        assert!(worker.contains(&line), "{line:?} in {worker}");
    }
    let outside = mail_to(&mails, "ops@example.com");
    assert!(
        outside.contains(&format!("Place: {OUTSIDE_PLACE}\n")),
        "{outside}"
    );
    assert!(
        outside.contains(&format!("Position: {OUTSIDE_POSITION}\n")),
        "{outside}"
    );
    assert!(outside.contains(&format!("Map: {OSM}\n")), "{outside}");

    let requests = twilio.wait_for(3, WAIT).await;
    let texts: Vec<_> = requests
        .iter()
        .filter(|r| r.path.ends_with("/Messages.json"))
        .collect();
    let text_to = |to: &str| {
        texts
            .iter()
            .find(|r| r.form_field("To").as_deref() == Some(to))
            .and_then(|r| r.form_field("Body"))
            .unwrap_or_else(|| panic!("no SMS to {to}"))
    };
    let sms = text_to(WORKER_PHONE);
    let expected = format!("{WORKER_PLACE} ({WORKER_POSITION}) {OSM} {GEO}");
    assert!(
        sms.starts_with("[High] SOS — Van 3: Emergency at "),
        "{sms}"
    );
    assert!(sms.ends_with(&expected), "{sms}");
    let sms = text_to(OUTSIDE_PHONE);
    let expected = format!("{OUTSIDE_PLACE} ({OUTSIDE_POSITION}) {OSM} {GEO}");
    assert!(sms.ends_with(&expected), "{sms}");

    wait_deliveries(&app, "?channel=Voice", all_status("Sent")).await;
    let call = twilio
        .wait_for(3, WAIT)
        .await
        .into_iter()
        .find(|r| r.path.ends_with("/Calls.json"))
        .expect("a call");
    let said = call.form_field("Twiml").unwrap_or_default();
    assert!(
        said.contains("1.4 miles north-east of Keswick, England, GB. Position 54° 36.846"),
        "{said}"
    );
}
