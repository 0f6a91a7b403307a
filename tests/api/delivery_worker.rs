//! The delivery worker against real peers: a real SMTP server, a Twilio fake and webhook
//! receivers (tests/api/peers.rs). Deliveries go out, are signed, retried with the same
//! `webhook-id`, fail or expire as the issue says, and can be re-queued.

use std::time::{Duration, Instant};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use safetrack::app::AppConfig;
use safetrack::channels::ChannelsConfig;
use safetrack::channels::email::SmtpConfig;
use safetrack::channels::twilio::TwilioConfig;
use safetrack::domain::retry::RetryPolicy;
use safetrack::workers::deliveries::DeliveryWorkerConfig;
use serde_json::{Value, json};

use crate::alerts::{create_notification, raise, sos_setup};
use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, assert_problem, spawn_app_with};
use crate::mo_messages::{DEVICE, position_report, register_device};
use crate::peers::{Receiver, SmtpSink};

backend_fn_tests!(
    an_sos_email_reaches_the_smtp_server,
    a_refused_mailbox_fails_permanently,
    sms_and_voice_go_through_twilio,
    webhooks_are_signed_per_standard_webhooks,
    a_receiver_outage_is_retried_with_the_same_id,
    a_receiver_back_up_gets_its_waiting_retries_at_once,
    gone_fails_and_retry_requeues,
    retries_expire_after_the_max_age,
    retry_after_is_honoured,
    a_channel_not_configured_stays_visible,
    metrics_show_the_queue_and_the_attempts,
    a_queued_delivery_wakes_the_worker,
);

const WAIT: Duration = Duration::from_secs(20);
const SID: &str = "AC0123456789abcdef";
const TOKEN: &str = "twilio-token-secret";
const FROM_NUMBER: &str = "+15005550006";

pub struct Peers<'a> {
    pub smtp: Option<&'a SmtpSink>,
    pub twilio: Option<&'a Receiver>,
    pub max_age: Duration,
    pub poll_interval: Duration,
    /// The first retry's wait (jittered ±20 %).
    pub retry_initial: Duration,
}

impl Default for Peers<'_> {
    fn default() -> Self {
        Self {
            smtp: None,
            twilio: None,
            max_age: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(50),
            retry_initial: Duration::from_millis(200),
        }
    }
}

/// The app with its channels pointed at the peers, and fast retries.
pub async fn app_with(backend: Backend, peers: Peers<'_>) -> Option<TestApp> {
    spawn_app_with(backend, peers_config(peers)).await
}

/// `app_with`'s configuration.
pub fn peers_config(peers: Peers<'_>) -> AppConfig {
    AppConfig {
        channels: ChannelsConfig {
            smtp: peers.smtp.map(|s| SmtpConfig {
                url: s.url(),
                from: "Safetrack Alerts <alerts@safetrack.test>".into(),
            }),
            twilio: peers.twilio.map(|r| TwilioConfig {
                account_sid: SID.into(),
                auth_token: TOKEN.into(),
                from: FROM_NUMBER.into(),
                base_url: r.base.clone(),
            }),
            garmin: None,
            allow_private_webhooks: true,
            push_contact: Some("mailto:ops@safetrack.test".into()),
        },
        delivery: DeliveryWorkerConfig {
            retry: RetryPolicy {
                initial: peers.retry_initial,
                max_age: peers.max_age,
            },
            // Longer than the webhook timeout (15 s): a hanging attempt keeps its lease.
            lease: Duration::from_secs(20),
            batch: 32,
            poll_interval: peers.poll_interval,
            loops: 2,
            ..DeliveryWorkerConfig::default()
        },
        ..AppConfig::default()
    }
}

/// Polls the tenant's deliveries until `done` holds for the listed ones.
pub async fn wait_deliveries(
    app: &TestApp,
    query: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    wait_deliveries_for(app, query, WAIT, done).await
}

/// `wait_deliveries`, panicking after `wait`.
pub async fn wait_deliveries_for(
    app: &TestApp,
    query: &str,
    wait: Duration,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + wait;
    loop {
        let listed = app
            .admin
            .get_json(&format!("/V2/1000/deliveries{query}"))
            .await;
        let listed = listed.as_array().unwrap().clone();
        if done(&listed) {
            return listed;
        }
        assert!(
            Instant::now() < deadline,
            "deliveries{query} never settled: {listed:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn all_status(status: &'static str) -> impl Fn(&[Value]) -> bool {
    move |list| !list.is_empty() && list.iter().all(|d| d["Status"] == status)
}

async fn subscribe(app: &TestApp, settings: Value) {
    subscribe_tenant(app, "1000", settings).await;
}

/// Saves `tenant`'s webhook settings.
pub async fn subscribe_tenant(app: &TestApp, tenant: &str, settings: Value) {
    let response = app
        .admin
        .put(&format!("/V2/{tenant}/webhooks"), &settings)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "save webhook settings");
}

/// `tenant`'s MoMessage events go to `url`.
pub async fn subscribe_mo_messages_to(app: &TestApp, tenant: &str, url: &str) {
    subscribe_tenant(
        app,
        tenant,
        json!({"Urls": [{"Url": url, "MoMessage": true}]}),
    )
    .await;
}

/// The tenant's MoMessage events go to `receiver`'s `/hook`.
pub async fn subscribe_mo_messages(app: &TestApp, receiver: &Receiver) {
    subscribe_mo_messages_to(app, "1000", &format!("{}/hook", receiver.base)).await;
}

/// `batches` batches of 100 position reports from the registered device, sequence
/// numbers from 1 on, each sent at `sent(sequence number)`.
pub async fn post_report_batches(app: &TestApp, batches: i64, sent: impl Fn(i64) -> String) {
    for batch in 0..batches {
        let messages: Vec<Value> = (1..=100)
            .map(|i| {
                let seq = batch * 100 + i;
                position_report(seq, &sent(seq), 51.5, -0.12)
            })
            .collect();
        let response = app
            .admin
            .post(
                &format!("/V2/1000/devices/{DEVICE}/momessages"),
                &json!(messages),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
}

/// One MO message from the registered device (a `MoMessage` webhook event).
pub async fn post_message(app: &TestApp, seq: i64) {
    let response = app
        .admin
        .post(
            &format!("/V2/1000/devices/{DEVICE}/momessages"),
            &json!([position_report(seq, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

async fn an_sos_email_reaches_the_smtp_server(backend: Backend) {
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
    sos_setup(&app, "1000", DEVICE).await;
    raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;

    let sent = wait_deliveries(&app, "?channel=Email", all_status("Sent")).await;
    assert_eq!(sent.len(), 1);
    let delivery = &sent[0];
    assert_eq!(delivery["Attempts"], 1);
    assert!(delivery["SentAt"].is_string());
    assert!(delivery["LastError"].is_null());
    assert!(
        delivery["ProviderId"].as_str().unwrap().starts_with("250"),
        "the server's answer: {delivery}"
    );

    let mail = &smtp.wait_for(1, WAIT).await[0];
    assert_eq!(mail["rcpt_tos"], json!(["ops@example.com"]));
    assert_eq!(mail["mail_from"], "alerts@safetrack.test");
    let headers = &mail["headers"];
    assert_eq!(headers["Subject"], "[High] SOS — Van 3");
    assert_eq!(headers["To"], "ops@example.com");
    assert_eq!(headers["From"], "Safetrack Alerts <alerts@safetrack.test>");
    assert!(
        headers["Content-Type"]
            .as_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let body = &mail["body"].as_str().unwrap().replace("\r\n", "\n");
    // The SMTP transport ends the text with a line break of its own.
    assert_eq!(
        body.trim_end(),
        delivery["Body"].as_str().unwrap().trim_end()
    );
    assert!(body.contains("Time: 2026-03-01 10:00:00 UTC\n"), "{body}");
    assert!(body.contains("Notification: SOS"), "{body}");
    assert!(body.contains("Event: Emergency"), "{body}");
    assert!(body.contains("mlat=51.50000&mlon=-0.12000"), "{body}");
    assert!(body.contains("Geofences: Depot"), "{body}");
}

async fn a_refused_mailbox_fails_permanently(backend: Backend) {
    let smtp = SmtpSink::start(Some("refused"));
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
    register_device(&app, "1000", DEVICE).await;
    create_notification(
        &app,
        "1000",
        &json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "Severity": "2",
                "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:refused@example.com"}]}),
    )
    .await;
    raise_without_alert(&app).await;
    let failed = wait_deliveries(&app, "?channel=Email", all_status("Failed")).await;
    assert_eq!(failed[0]["Attempts"], 1, "a 5xx is not retried");
    let error = failed[0]["LastError"].as_str().unwrap();
    assert!(error.contains("550"), "{error}");
    assert!(failed[0]["SentAt"].is_null());
}

/// Posts an SOS message (for notifications that raise no alert).
async fn raise_without_alert(app: &TestApp) {
    let mut message = position_report(1, "2026-03-01T10:00:00Z", 51.5, -0.12);
    message["EmergencyState"] = json!("Active");
    let response = app
        .admin
        .post(
            &format!("/V2/1000/devices/{DEVICE}/momessages"),
            &json!([message]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

async fn sms_and_voice_go_through_twilio(backend: Backend) {
    let twilio = Receiver::start().await;
    let Some(app) = app_with(
        backend,
        Peers {
            twilio: Some(&twilio),
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    let (user_id, _) = app.create_user("1000", "worker@example.com", "User").await;
    let response = app
        .admin
        .put(
            "/V2/1000/userprofile/worker@example.com",
            &json!({"CellPhone": "+447700900123"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": DEVICE, "DeviceType": "InReach", "FriendlyName": "Van 3", "UserId": user_id}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    create_notification(
        &app,
        "1000",
        &json!({"NotificationName": "Lone worker", "EventsExpression": "Emergency", "Severity": "2",
                "Recipients": [{"Type": "DeviceUserSms"}, {"Type": "DeviceUserCall"}]}),
    )
    .await;
    raise_without_alert(&app).await;

    let sms = wait_deliveries(&app, "?channel=Sms", all_status("Sent")).await;
    let voice = wait_deliveries(&app, "?channel=Voice", all_status("Sent")).await;
    let requests = twilio.wait_for(2, WAIT).await;
    let expected_auth = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{SID}:{TOKEN}"))
    );
    let text = requests
        .iter()
        .find(|r| r.path.ends_with("/Messages.json"))
        .expect("an SMS request");
    assert_eq!(
        text.path,
        format!("/2010-04-01/Accounts/{SID}/Messages.json")
    );
    assert_eq!(text.header("authorization"), Some(expected_auth.as_str()));
    assert_eq!(text.form_field("To").as_deref(), Some("+447700900123"));
    assert_eq!(text.form_field("From").as_deref(), Some(FROM_NUMBER));
    assert_eq!(
        text.form_field("Body"),
        sms[0]["Body"].as_str().map(str::to_string)
    );
    assert!(
        text.form_field("Body")
            .unwrap()
            .starts_with("[High] Lone worker — Van 3")
    );
    assert!(sms[0]["ProviderId"].as_str().unwrap().starts_with("SM"));

    let call = requests
        .iter()
        .find(|r| r.path.ends_with("/Calls.json"))
        .expect("a call request");
    assert_eq!(call.path, format!("/2010-04-01/Accounts/{SID}/Calls.json"));
    assert_eq!(call.header("authorization"), Some(expected_auth.as_str()));
    assert_eq!(call.form_field("To").as_deref(), Some("+447700900123"));
    let twiml = call.form_field("Twiml").unwrap();
    assert!(
        twiml.starts_with("<Response><Say>Safetrack alert. High. Lone worker."),
        "{twiml}"
    );
    assert!(twiml.ends_with("</Say></Response>"));
    assert!(voice[0]["ProviderId"].as_str().unwrap().starts_with("CA"));
}

/// The Standard Webhooks signature, computed here independently of the server's code.
fn expected_signature(key: &[u8], id: &str, timestamp: &str, body: &str) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

async fn webhooks_are_signed_per_standard_webhooks(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    let url = format!("{}/hooks/safetrack", receiver.base);
    let key: Vec<u8> = (0u8..32).collect();
    let secret = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(&key)
    );
    subscribe(
        &app,
        json!({"Urls": [{"Url": url, "MoMessage": true}], "Authentication": "HmacSha256", "Password": secret}),
    )
    .await;
    post_message(&app, 1).await;

    let got = receiver.wait_for(1, WAIT).await;
    let request = &got[0];
    assert_eq!(request.path, "/hooks/safetrack");
    let envelope = request.json();
    let id = request.header("webhook-id").unwrap();
    assert_eq!(envelope["Id"], id);
    assert_eq!(envelope["Category"], "MoMessage");
    assert_eq!(envelope["Type"], "Created");
    assert_eq!(envelope["TenantCode"], "1000");
    assert_eq!(envelope["Data"]["DeviceId"], DEVICE);
    let timestamp = request.header("webhook-timestamp").unwrap();
    let seconds: i64 = timestamp.parse().unwrap();
    let now = jiff::Timestamp::now().as_second();
    assert!(
        (now - seconds).abs() < 60,
        "timestamp {seconds} vs now {now}"
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert!(
        request
            .header("user-agent")
            .unwrap()
            .starts_with("safetrack/")
    );
    assert!(request.header("authorization").is_none());
    assert_eq!(
        request.header("webhook-signature").unwrap(),
        expected_signature(&key, id, timestamp, &request.body)
    );

    let delivered = wait_deliveries(&app, "?channel=Webhook", all_status("Sent")).await;
    assert_eq!(delivered[0]["EventId"], id);
    assert_eq!(delivered[0]["Target"], url);
    assert_eq!(delivered[0]["Body"], request.body.as_str());

    // A plain (non-whsec) secret signs with its own bytes.
    subscribe(
        &app,
        json!({"Urls": [{"Url": url, "MoMessage": true}], "Authentication": "HmacSha256",
               "Password": "a-plain-signing-key"}),
    )
    .await;
    post_message(&app, 2).await;
    let request = receiver.wait_for(2, WAIT).await[1].clone();
    assert_eq!(
        request.header("webhook-signature").unwrap(),
        expected_signature(
            b"a-plain-signing-key",
            request.header("webhook-id").unwrap(),
            request.header("webhook-timestamp").unwrap(),
            &request.body
        )
    );

    subscribe(
        &app,
        json!({"Urls": [{"Url": url, "MoMessage": true}], "Authentication": "Basic",
               "Username": "hook-user", "Password": "hook-password"}),
    )
    .await;
    post_message(&app, 3).await;
    let request = receiver.wait_for(3, WAIT).await[2].clone();
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("hook-user:hook-password")
    );
    assert_eq!(request.header("authorization"), Some(basic.as_str()));
    assert!(request.header("webhook-signature").is_none());

    subscribe(
        &app,
        json!({"Urls": [{"Url": url, "MoMessage": true}], "Authentication": "Bearer",
               "Password": "bearer-token-1"}),
    )
    .await;
    post_message(&app, 4).await;
    let request = receiver.wait_for(4, WAIT).await[3].clone();
    assert_eq!(
        request.header("authorization"),
        Some("Bearer bearer-token-1")
    );
}

async fn a_receiver_outage_is_retried_with_the_same_id(backend: Backend) {
    let down = Receiver::start().await;
    let port = down.port();
    down.stop();
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    let url = format!("http://127.0.0.1:{port}/hook");
    subscribe(&app, json!({"Urls": [{"Url": url, "MoMessage": true}]})).await;
    post_message(&app, 1).await;

    // Down: connections are refused, and the delivery waits for its next attempt.
    let pending = wait_deliveries(&app, "?channel=Webhook", |list| {
        list.len() == 1 && list[0]["Attempts"].as_i64().unwrap() >= 2
    })
    .await;
    let delivery = &pending[0];
    assert_eq!(delivery["Status"], "Pending");
    assert!(
        delivery["LastError"]
            .as_str()
            .unwrap()
            .contains("could not connect"),
        "{delivery}"
    );
    assert!(delivery["NextAttemptAt"].is_string());

    // Up again, answering 503 once, then 200.
    let up = Receiver::start_on(port).await;
    up.answer(503, 1, None);
    let got = up.wait_for(2, WAIT).await;
    let sent = wait_deliveries(&app, "?channel=Webhook", all_status("Sent")).await;
    let event_id = sent[0]["EventId"].as_str().unwrap();
    for request in &got {
        assert_eq!(
            request.header("webhook-id"),
            Some(event_id),
            "same id on every attempt"
        );
        assert_eq!(request.json()["Id"], event_id);
    }
    // At least: one refused, the 503, the success (a claim counts its attempt, so the
    // second may already have reached the receiver that came back).
    assert!(sent[0]["Attempts"].as_i64().unwrap() >= 3, "{}", sent[0]);
    assert_eq!(
        sent[0]["LastError"], "HTTP 503 Service Unavailable",
        "kept from the last failure"
    );
}

/// When a receiver that could not be reached answers again, its deliveries waiting for a
/// retry go at once instead of each at its own backoff (after a long outage, hours past
/// the recovery); another receiver still down keeps its retries' times.
async fn a_receiver_back_up_gets_its_waiting_retries_at_once(backend: Backend) {
    let (a, b) = (Receiver::start().await, Receiver::start().await);
    let (port_a, port_b) = (a.port(), b.port());
    a.stop();
    b.stop();
    let Some(app) = app_with(
        backend,
        Peers {
            // The first retry waits 48-72 s: longer than this test waits for anything.
            retry_initial: Duration::from_secs(60),
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    let url_a = format!("http://127.0.0.1:{port_a}/hook");
    let url_b = format!("http://127.0.0.1:{port_b}/hook");
    subscribe(
        &app,
        json!({"Urls": [{"Url": url_a, "MoMessage": true}, {"Url": url_b, "MoMessage": true}]}),
    )
    .await;
    for seq in 1..=3 {
        post_message(&app, seq).await;
    }
    let all = "?channel=Webhook&pageSize=1000";
    let refused = |d: &Value| {
        d["Status"] == "Pending"
            && d["Attempts"] == 1
            && d["LastError"]
                .as_str()
                .is_some_and(|e| e.starts_with("could not connect"))
    };
    wait_deliveries(&app, all, |list| {
        list.len() == 6 && list.iter().all(&refused)
    })
    .await;

    // A is back: the next event to it goes through and brings A's three retries forward.
    let up = Receiver::start_on(port_a).await;
    let back = Instant::now();
    post_message(&app, 4).await;
    let to = |list: &[Value], url: &str| -> Vec<Value> {
        list.iter()
            .filter(|d| d["Target"] == url)
            .cloned()
            .collect()
    };
    let listed = wait_deliveries(&app, all, |list| {
        let at_a = to(list, &url_a);
        at_a.len() == 4 && at_a.iter().all(|d| d["Status"] == "Sent")
    })
    .await;
    assert!(
        back.elapsed() < Duration::from_secs(45),
        "before any retry's own time"
    );
    let received = up.received();
    let ids: std::collections::HashSet<_> = received
        .iter()
        .map(|r| r.header("webhook-id").unwrap().to_string())
        .collect();
    assert_eq!((received.len(), ids.len()), (4, 4), "each event once");
    for d in to(&listed, &url_a) {
        let attempts = d["Attempts"].as_i64().unwrap();
        assert!(attempts <= 2, "refused once at most, then sent: {d}");
    }
    // B is still down: its retries were left at their own times.
    let at_b = to(&listed, &url_b);
    assert_eq!(at_b.len(), 4);
    assert!(at_b.iter().all(refused), "{at_b:#?}");
    let metrics = app.anonymous().get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("safetrack_delivery_retries_released_total{channel=\"Webhook\"}"),
        "{metrics}"
    );
}

async fn gone_fails_and_retry_requeues(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    subscribe_mo_messages(&app, &receiver).await;
    receiver.answer(410, 1, None);
    post_message(&app, 1).await;
    let failed = wait_deliveries(&app, "?channel=Webhook", all_status("Failed")).await;
    let id = failed[0]["DeliveryId"].as_str().unwrap().to_string();
    assert_eq!(failed[0]["Attempts"], 1, "410 is not retried");
    assert_eq!(failed[0]["LastError"], "HTTP 410 Gone");

    // Who may not: a read-only user; where it is not: another id, another tenant.
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let path = format!("/V2/1000/deliveries/{id}/retry");
    assert_eq!(
        reader.post(&path, &json!({})).await.status(),
        StatusCode::FORBIDDEN
    );
    for missing in [
        "/V2/1000/deliveries/999999/retry",
        "/V2/1000/deliveries/abc/retry",
    ] {
        let response = app.admin.post(missing, &json!({})).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{missing}");
    }
    let other = app.create_tenant("1000", "Other").await;
    let response = app
        .admin
        .post(&format!("/V2/{other}/deliveries/{id}/retry"), &json!({}))
        .await;
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "another tenant's delivery"
    );

    let response = app.admin.post(&path, &json!({})).await;
    assert_eq!(response.status(), StatusCode::OK);
    let requeued: Value = response.json().await.unwrap();
    assert_eq!(requeued["Status"], "Pending");
    assert_eq!(requeued["DeliveryId"], id.as_str());
    let sent = wait_deliveries(&app, "?channel=Webhook", all_status("Sent")).await;
    assert_eq!(sent[0]["Attempts"], 2);
    let got = receiver.wait_for(2, WAIT).await;
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));

    // Sent (or Pending) is not retried.
    let response = app.admin.post(&path, &json!({})).await;
    let problem = assert_problem(response, 409, "conflict").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("Sent"),
        "{problem}"
    );
}

async fn retries_expire_after_the_max_age(backend: Backend) {
    let receiver = Receiver::start().await;
    let peers = Peers {
        max_age: Duration::from_secs(1),
        ..Default::default()
    };
    let Some(app) = app_with(backend, peers).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    receiver.answer(503, 1000, None);
    subscribe_mo_messages(&app, &receiver).await;
    post_message(&app, 1).await;
    let expired = wait_deliveries(&app, "?channel=Webhook", all_status("Expired")).await;
    assert!(
        expired[0]["Attempts"].as_i64().unwrap() >= 2,
        "{}",
        expired[0]
    );
    assert_eq!(expired[0]["LastError"], "HTTP 503 Service Unavailable");
    assert!(expired[0]["SentAt"].is_null());
}

async fn retry_after_is_honoured(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    receiver.answer(429, 1, Some("2"));
    subscribe_mo_messages(&app, &receiver).await;
    post_message(&app, 1).await;
    let got = receiver.wait_for(2, WAIT).await;
    let gap = got[1].at.duration_since(got[0].at);
    // The backoff alone would be 0.2 s ± 20 %.
    assert!(gap >= Duration::from_millis(1900), "retried after {gap:?}");
    wait_deliveries(&app, "?channel=Webhook", all_status("Sent")).await;
}

async fn a_channel_not_configured_stays_visible(backend: Backend) {
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    sos_setup(&app, "1000", DEVICE).await;
    raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let listed = wait_deliveries(&app, "?channel=Email", all_status("NotConfigured")).await;
    let id = listed[0]["DeliveryId"].as_str().unwrap();
    // Re-queued, the worker finds the channel still missing: NotConfigured again, counted.
    let response = app
        .admin
        .post(&format!("/V2/1000/deliveries/{id}/retry"), &json!({}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let again = wait_deliveries(&app, "?channel=Email", |list| {
        list[0]["Status"] == "NotConfigured" && list[0]["Attempts"] == 1
    })
    .await;
    assert_eq!(
        again[0]["LastError"],
        "the channel is not configured on the server"
    );
}

async fn metrics_show_the_queue_and_the_attempts(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    sos_setup(&app, "1000", DEVICE).await;
    subscribe_mo_messages(&app, &receiver).await;
    raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    wait_deliveries(&app, "?channel=Webhook", all_status("Sent")).await;
    let text = app.anonymous().get("/metrics").await.text().await.unwrap();
    for expected in [
        r#"safetrack_delivery_attempts_total{channel="Webhook",outcome="sent"}"#,
        r#"safetrack_deliveries{channel="Email",status="NotConfigured"}"#,
        r#"safetrack_deliveries{channel="Webhook",status="Pending"}"#,
        "safetrack_delivery_oldest_pending_seconds",
        r#"safetrack_delivery_latency_seconds_bucket{channel="Webhook",le="0.5"}"#,
    ] {
        assert!(
            text.contains(expected),
            "/metrics lacks {expected}:\n{text}"
        );
    }
    // The counts themselves: the e-mail waits for a channel, the webhook is sent; then,
    // with the receiver gone, the next message's webhook waits for a retry (its SOS
    // joins the alert: no second e-mail).
    let counted = |text: &str, lines: &[&str]| {
        for line in lines {
            assert!(
                text.lines().any(|l| l == *line),
                "/metrics lacks {line}:\n{text}"
            );
        }
    };
    counted(
        &text,
        &[
            r#"safetrack_deliveries{channel="Email",status="NotConfigured"} 1"#,
            r#"safetrack_deliveries{channel="Webhook",status="Pending"} 0"#,
        ],
    );
    receiver.stop();
    raise(&app, "1000", DEVICE, 2, "2026-03-01T10:01:00Z").await;
    wait_deliveries(&app, "?channel=Webhook&status=Pending", |list| {
        list.len() == 1 && list[0]["Attempts"] == 1
    })
    .await;
    let text = app.anonymous().get("/metrics").await.text().await.unwrap();
    counted(
        &text,
        &[
            r#"safetrack_deliveries{channel="Webhook",status="Pending"} 1"#,
            r#"safetrack_deliveries{channel="Email",status="NotConfigured"} 1"#,
        ],
    );
}

/// The worker polls only once an hour here: a webhook that arrives anyway was sent
/// because the ingest commit woke the worker — each time, not only the first.
async fn a_queued_delivery_wakes_the_worker(backend: Backend) {
    let receiver = Receiver::start().await;
    let peers = Peers {
        poll_interval: Duration::from_secs(3600),
        ..Peers::default()
    };
    let Some(app) = app_with(backend, peers).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    subscribe_mo_messages(&app, &receiver).await;
    post_message(&app, 1).await;
    receiver.wait_for(1, WAIT).await;
    post_message(&app, 2).await;
    let got = receiver.wait_for(2, WAIT).await;
    let ids: std::collections::HashSet<&str> =
        got.iter().filter_map(|r| r.header("webhook-id")).collect();
    assert_eq!(ids.len(), 2, "two messages, two events");
}
