//! Web Push end to end (issue 46 §2): the `Push` channel against a local push service
//! (`tests/peers/push_service.py`, Python's http_ece and py_vapid: an implementation of
//! RFC 8291/8292 independent of ours) that makes the browser's half of a subscription,
//! checks every push's VAPID token against the server's public key and its audience, and
//! decrypts the payload. Operator texts, alert acknowledgements and monitoring reminders
//! arrive as `{Title, Body, Url, Kind}`; a 500 is retried; a 410 drops the subscription
//! and fails the delivery, visible in `GET /deliveries`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use jiff::SignedDuration;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::create_notification;
use crate::backend_fn_tests;
use crate::common::{ADMIN_EMAIL, Backend, Client, TestApp, spawn_app_with};
use crate::delivery_worker::{Peers, peers_config, wait_deliveries};
use crate::peers::peer_python;
use crate::push_subscription_api::worker_with_device;

backend_fn_tests!(
    an_operator_text_arrives_signed_and_decrypted,
    an_acknowledgement_and_a_reminder_arrive,
    a_500_is_retried_then_delivered,
    a_410_drops_the_subscription_and_ends_the_delivery,
);

const WAIT: Duration = Duration::from_secs(20);
const SUBSCRIPTIONS: &str = "/V2/1000/pushsubscriptions";

/// The local push service; killed when dropped.
struct PushService {
    base: String,
    http: reqwest::Client,
    child: Child,
}

impl PushService {
    fn start() -> PushService {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/push_service.py");
        let mut child = Command::new(peer_python())
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the push service");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the push service's ready line");
        let ready: Value = serde_json::from_str(&line).expect("ready json");
        let port = ready["ready"].as_u64().expect("a port");
        PushService {
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
            child,
        }
    }

    async fn control(&self, path: &str, body: &Value) -> Value {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await
            .expect("push service control");
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        response.json().await.expect("control json")
    }

    /// A new subscription's browser half (Endpoint, P256dh, Auth), whose pushes must
    /// carry `vapid_key`.
    async fn subscription(&self, vapid_key: &str) -> Value {
        self.control("/_subscribe", &json!({"VapidKey": vapid_key}))
            .await
    }

    /// The next `count` pushes are answered `status`.
    async fn answer(&self, status: u16, count: usize) {
        self.control("/_answer", &json!({"Status": status, "Count": count}))
            .await;
    }

    async fn received(&self) -> Vec<Value> {
        let got: Value = self
            .http
            .get(format!("{}/_received", self.base))
            .send()
            .await
            .expect("received")
            .json()
            .await
            .expect("received json");
        got.as_array().cloned().unwrap_or_default()
    }

    async fn wait_for(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        loop {
            let got = self.received().await;
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "the push service got {} of {n}: {got:#?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for PushService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every check the push service made passed, and the payload is what it should be.
fn assert_pushed(push: &Value, kind: &str, title: &str, body_has: &str) {
    assert_eq!(push["VapidError"], Value::Null, "VAPID: {push:#}");
    assert_eq!(push["DecryptError"], Value::Null, "decryption: {push:#}");
    assert_eq!(push["ContentEncoding"], "aes128gcm", "{push:#}");
    assert!(push["Ttl"].as_str().is_some(), "TTL: {push:#}");
    let payload = &push["Payload"];
    assert_eq!(payload["Kind"], kind, "{push:#}");
    assert_eq!(payload["Title"], title, "{push:#}");
    assert_eq!(payload["Url"], "/worker/", "{push:#}");
    let body = payload["Body"].as_str().unwrap_or_default();
    assert!(body.contains(body_has), "{body:?} lacks {body_has:?}");
}

async fn app(backend: Backend) -> Option<TestApp> {
    let mut config = peers_config(Peers::default());
    config.pipeline.monitoring_minute =
        SignedDuration::try_from(Duration::from_millis(400)).expect("a duration");
    config.worker_interval = Duration::from_millis(100);
    spawn_app_with(backend, config).await
}

/// A worker with device `phone-1`, subscribed at the push service; answers the worker's
/// client and the subscription's id.
async fn subscribed_worker(app: &TestApp, service: &PushService) -> (Client, String) {
    let key = app
        .admin
        .get_json("/V2/1000/pushsubscriptions/vapidpublickey")
        .await;
    let browser = service
        .subscription(key["PublicKey"].as_str().expect("key"))
        .await;
    let (_, worker) = worker_with_device(app, "1000", "w@example.com", "phone-1").await;
    let body = json!({"Endpoint": browser["Endpoint"],
                      "Keys": {"P256dh": browser["P256dh"], "Auth": browser["Auth"]}});
    let response = worker.post(SUBSCRIPTIONS, &body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let created: Value = response.json().await.expect("subscription");
    let id = created["PushSubscriptionId"]
        .as_str()
        .expect("id")
        .to_string();
    (worker, id)
}

async fn send_text(app: &TestApp, text: &str) -> String {
    let response = app
        .admin
        .post(
            "/V2/1000/devices/phone-1/mtmessages",
            &json!({"Type": "Text", "Message": text}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "queue MT");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

async fn an_operator_text_arrives_signed_and_decrypted(backend: Backend) {
    let service = PushService::start();
    let Some(app) = app(backend).await else {
        return;
    };
    let (_, subscription) = subscribed_worker(&app, &service).await;
    let mt = send_text(&app, "Return to depot").await;
    let got = service.wait_for(1).await;
    assert_pushed(
        &got[0],
        "Message",
        "Message from your operator",
        "Return to depot",
    );
    let listed = wait_deliveries(&app, "?channel=Push", |list| {
        list.len() == 1 && list[0]["Status"] == "Sent"
    })
    .await;
    assert_eq!(listed[0]["Target"], subscription.as_str());
    assert_eq!(listed[0]["DeviceId"], "phone-1");
    assert_eq!(listed[0]["MtMessageId"], mt.as_str());
    assert_eq!(listed[0]["Attempts"], 1);
    // A text for another device's person is not pushed to this one.
    let (_, _) = worker_with_device(&app, "1000", "o@example.com", "phone-2").await;
    let other = app
        .admin
        .post(
            "/V2/1000/devices/phone-2/mtmessages",
            &json!({"Type": "Text", "Message": "not yours"}),
        )
        .await;
    assert_eq!(other.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(service.received().await.len(), 1);
}

async fn an_acknowledgement_and_a_reminder_arrive(backend: Backend) {
    let service = PushService::start();
    let Some(app) = app(backend).await else {
        return;
    };
    let (worker, _) = subscribed_worker(&app, &service).await;
    let sos = json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
        "RaiseAlert": true, "Severity": "2",
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
    create_notification(&app, "1000", &sos).await;
    let message = json!([{"MessageType": "ManualPositionReport", "EmergencyState": "Active",
        "SequenceNumber": 1, "SentFromDevice": "2026-01-05T10:00:00Z",
        "Position": {"Latitude": 57.1, "Longitude": -2.1}}]);
    let posted = worker
        .post("/V2/1000/devices/phone-1/momessages?process=true", &message)
        .await;
    assert_eq!(posted.status(), StatusCode::OK);
    let alerts = app.admin.get_json("/V2/1000/alerts").await;
    let alert = alerts[0]["AlertId"].as_str().expect("an alert").to_string();
    let acked = app
        .admin
        .post(&format!("/V2/1000/alerts/{alert}/acknowledge"), &json!({}))
        .await;
    assert_eq!(acked.status(), StatusCode::OK);
    let got = service.wait_for(1).await;
    assert_pushed(
        &got[0],
        "Acknowledgement",
        "Your alert was acknowledged",
        &format!("acknowledged by {ADMIN_EMAIL}"),
    );
    let listed = wait_deliveries(&app, "?channel=Push", |list| {
        list.len() == 1 && list[0]["Status"] == "Sent"
    })
    .await;
    assert_eq!(listed[0]["AlertId"], alert.as_str());
    // A session whose first check-in is due in 2 "minutes" reminds after 1.
    let started = worker
        .post(
            "/V2/1000/devices/phone-1/monitoring",
            &json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 2,
                    "ReminderMinutes": 1, "GraceMinutes": 1}),
        )
        .await;
    assert_eq!(started.status(), StatusCode::OK);
    let got = service.wait_for(2).await;
    assert_pushed(&got[1], "Reminder", "Check-in due", "Check-in due at");
}

async fn a_500_is_retried_then_delivered(backend: Backend) {
    let service = PushService::start();
    let Some(app) = app(backend).await else {
        return;
    };
    subscribed_worker(&app, &service).await;
    service.answer(500, 1).await;
    send_text(&app, "Call the office").await;
    let got = service.wait_for(2).await;
    assert_eq!(got[0]["Answered"], 500);
    assert_eq!(got[1]["Answered"], 201);
    assert_pushed(
        &got[1],
        "Message",
        "Message from your operator",
        "Call the office",
    );
    let listed = wait_deliveries(&app, "?channel=Push", |list| {
        list.len() == 1 && list[0]["Status"] == "Sent"
    })
    .await;
    assert_eq!(listed[0]["Attempts"], 2);
}

async fn a_410_drops_the_subscription_and_ends_the_delivery(backend: Backend) {
    let service = PushService::start();
    let Some(app) = app(backend).await else {
        return;
    };
    let (worker, _) = subscribed_worker(&app, &service).await;
    service.answer(410, 1).await;
    send_text(&app, "Are you there?").await;
    let listed = wait_deliveries(&app, "?channel=Push", |list| {
        list.len() == 1 && list[0]["Status"] == "Failed"
    })
    .await;
    let error = listed[0]["LastError"].as_str().unwrap_or_default();
    assert!(error.contains("410"), "{error}");
    assert_eq!(listed[0]["Attempts"], 1, "not retried");
    let left = worker.get_json(SUBSCRIPTIONS).await;
    assert_eq!(left, json!([]), "the subscription is dropped");
    // Nothing more is pushed to it.
    send_text(&app, "Hello?").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(service.received().await.len(), 1);
    let listed = app.admin.get_json("/V2/1000/deliveries?channel=Push").await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
}
