//! The live stream (`GET /V2/{t}/stream`, Server-Sent Events) through HTTP: what ingest
//! publishes arrives as `momessage`, `alert` and `device` events in the caller's scope;
//! `Last-Event-ID` resumes without a gap or a duplicate; errors; shutdown ends streams.
//! Several processes on one PostgreSQL: `stream_processes.rs`.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem};
use crate::event_notifications::sos;
use crate::mo_messages::{position_report, register_device};

backend_tests!(
    messages_alerts_and_device_changes_arrive,
    streams_see_only_their_scope,
    last_event_id_resumes_without_gap_or_duplicate,
    refusals,
    shutdown_ends_open_streams,
);

/// How long a test waits for an event before failing.
const WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub event: String,
    pub id: u64,
    pub data: Value,
}

/// An open stream, read incrementally.
pub struct EventStream {
    response: reqwest::Response,
    buffer: String,
    /// Comment lines seen (keep-alives, the reason a stream ended).
    comments: Vec<String>,
}

impl EventStream {
    pub async fn open(client: &Client, path: &str, last_event_id: Option<u64>) -> EventStream {
        let mut request = client
            .request(Method::GET, path)
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        let response = tokio::time::timeout(WAIT, request.send())
            .await
            .expect("stream headers in time")
            .expect("GET stream");
        assert_eq!(response.status(), StatusCode::OK, "open {path}");
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        assert_eq!(response.headers()["cache-control"], "no-cache");
        EventStream {
            response,
            buffer: String::new(),
            comments: Vec::new(),
        }
    }

    /// The next event; `None` when the stream ended. Fails after `WAIT`.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(event) = self.parse(&block) {
                    return Some(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout(WAIT, self.response.chunk())
                .await
                .expect("an event in time")
                .expect("read stream")?;
            self.buffer
                .push_str(std::str::from_utf8(&chunk).expect("UTF-8 stream"));
        }
    }

    pub async fn expect(&mut self) -> SseEvent {
        self.next()
            .await
            .expect("an event, not the end of the stream")
    }

    /// Parses one block: an event, or comments only.
    fn parse(&mut self, block: &str) -> Option<SseEvent> {
        let (mut event, mut id, mut data) = (None, None, None);
        for line in block.lines().filter(|l| !l.is_empty()) {
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "" => self.comments.push(value.to_string()),
                "event" => event = Some(value.to_string()),
                "id" => id = Some(value.parse::<u64>().expect("numeric id")),
                "data" => {
                    assert!(data.is_none(), "one data line per event: {block}");
                    data = Some(serde_json::from_str(value).expect("JSON data"));
                }
                other => panic!("unexpected field {other} in {block:?}"),
            }
        }
        match (event, id, data) {
            (Some(event), Some(id), Some(data)) => Some(SseEvent { event, id, data }),
            (None, None, None) => None,
            partial => panic!("incomplete event {partial:?} in {block:?}"),
        }
    }

    /// The comment lines seen so far (keep-alives, the reason the stream ended).
    pub fn comments(&self) -> &[String] {
        &self.comments
    }

    /// The next `n` events.
    pub async fn take(&mut self, n: usize) -> Vec<SseEvent> {
        let mut events = Vec::with_capacity(n);
        for _ in 0..n {
            events.push(self.expect().await);
        }
        events
    }
}

pub fn stream_path(tenant: &str, subtenants: bool) -> String {
    if subtenants {
        format!("/V2/{tenant}/stream?subtenants=true")
    } else {
        format!("/V2/{tenant}/stream")
    }
}

/// Posts one position report (sequence `seq`) from `device`; returns its MessageId.
pub async fn post_report(app: &TestApp, tenant: &str, device: &str, seq: i64) -> String {
    let sent = format!("2026-03-02T10:{:02}:00Z", seq % 60);
    let processed = post_processed(
        app,
        tenant,
        device,
        &json!([position_report(
            seq,
            &sent,
            51.5 + seq as f64 / 1000.0,
            -0.12
        )]),
    )
    .await;
    processed[0]["MessageId"]
        .as_str()
        .expect("MessageId")
        .to_string()
}

/// Posts a batch with `process=true`; returns the processed messages.
async fn post_processed(app: &TestApp, tenant: &str, device: &str, batch: &Value) -> Value {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices/{device}/momessages?process=true"),
            batch,
        )
        .await;
    let status = response.status();
    let body = response.text().await.expect("body");
    assert_eq!(status, StatusCode::OK, "post messages: {body}");
    serde_json::from_str(&body).expect("processed json")
}

pub fn kinds(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event.as_str()).collect()
}

async fn messages_alerts_and_device_changes_arrive(app: TestApp) {
    register_device(&app, "1000", "van-3").await;
    let response = app.admin.post("/V2/1000/eventnotifications", &sos()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = EventStream::open(&app.admin, "/V2/1000/stream", None).await;

    let id = post_report(&app, "1000", "van-3", 1).await;
    let events = stream.take(2).await;
    assert_eq!(kinds(&events), ["momessage", "device"]);
    assert_eq!(events[0].data["MessageId"], id);
    assert_eq!(events[0].data["DeviceId"], "van-3");
    assert_eq!(events[0].data["MessageType"], "AutomaticPositionReport");
    assert_eq!(events[1].data["DeviceId"], "van-3");
    let lat = events[1].data["LastPosition"]["Lat"].as_f64().expect("Lat");
    assert!((lat - 51.501).abs() < 1e-9, "{}", events[1].data);
    assert!(events[0].id < events[1].id);

    // An SOS: the message, the alert its notification raised, the device in emergency.
    let processed = post_processed(
        &app,
        "1000",
        "van-3",
        &json!([{"MessageType": "CheckIn", "SequenceNumber": 2,
                 "SentFromDevice": "2026-03-02T10:05:00Z", "EmergencyState": "Active"}]),
    )
    .await;
    let alert_id = processed[0]["Notifications"][0]["AlertId"].clone();
    assert!(alert_id.is_string(), "{processed}");
    let sos_events = stream.take(3).await;
    assert_eq!(kinds(&sos_events), ["momessage", "alert", "device"]);
    assert_eq!(sos_events[0].data["MessageId"], processed[0]["MessageId"]);
    assert_eq!(sos_events[1].data["AlertId"], alert_id);
    assert_eq!(sos_events[1].data["Status"], "Open");
    assert_eq!(sos_events[1].data["DeviceId"], "van-3");
    assert_eq!(sos_events[2].data["EmergencyState"], "Active");
    assert!(events[1].id < sos_events[0].id);
    assert!(sos_events.windows(2).all(|w| w[0].id < w[1].id));

    // A retry stores nothing and publishes nothing: the next event is the next message.
    post_processed(
        &app,
        "1000",
        "van-3",
        &json!([{"MessageType": "CheckIn", "SequenceNumber": 2,
                 "SentFromDevice": "2026-03-02T10:05:00Z", "EmergencyState": "Active"}]),
    )
    .await;
    let next = post_report(&app, "1000", "van-3", 3).await;
    let event = stream.expect().await;
    assert_eq!(
        (event.event.as_str(), &event.data["MessageId"]),
        ("momessage", &json!(next))
    );
}

async fn streams_see_only_their_scope(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    register_device(&app, &a, "dev-a").await;
    register_device(&app, &b, "dev-b").await;
    register_device(&app, "1000", "dev-root").await;
    let (_, reader_a) = app.create_user(&a, "reader@a.test", "ReadOnly").await;

    let mut own = EventStream::open(&reader_a, &stream_path(&a, false), None).await;
    let mut sibling = EventStream::open(&app.admin, &stream_path(&b, true), None).await;
    let mut parent = EventStream::open(&app.admin, &stream_path("1000", false), None).await;
    let mut parent_wide = EventStream::open(&app.admin, &stream_path("1000", true), None).await;

    let in_a = post_report(&app, &a, "dev-a", 1).await;
    for stream in [&mut own, &mut parent_wide] {
        let event = stream.expect().await;
        assert_eq!(event.event, "momessage");
        assert_eq!(event.data["MessageId"], in_a);
        assert_eq!(stream.expect().await.event, "device");
    }
    // What the others get next is their own tenant's: A's events never reached them.
    let in_b = post_report(&app, &b, "dev-b", 1).await;
    assert_eq!(sibling.expect().await.data["MessageId"], in_b);
    let in_root = post_report(&app, "1000", "dev-root", 1).await;
    assert_eq!(parent.expect().await.data["MessageId"], in_root);
    // The wide parent stream saw B's and the root's too; A's own stream neither.
    let wide: Vec<Value> = parent_wide
        .take(4)
        .await
        .into_iter()
        .filter(|e| e.event == "momessage")
        .map(|e| e.data["MessageId"].clone())
        .collect();
    assert_eq!(wide, [json!(in_b), json!(in_root)]);
    let again = post_report(&app, &a, "dev-a", 2).await;
    assert_eq!(own.expect().await.data["MessageId"], again);

    // A's reader cannot follow its parent or sibling (404, like a missing tenant).
    for tenant in ["1000", b.as_str()] {
        assert_not_found(reader_a.get(&stream_path(tenant, true)).await).await;
    }
}

async fn last_event_id_resumes_without_gap_or_duplicate(app: TestApp) {
    register_device(&app, "1000", "van-3").await;
    // A witness that stays connected sees every event.
    let mut witness = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    let mut client = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    post_report(&app, "1000", "van-3", 1).await;
    post_report(&app, "1000", "van-3", 2).await;
    let seen = client.take(3).await;
    assert_eq!(kinds(&seen), ["momessage", "device", "momessage"]);
    let last = seen[2].id;
    drop(client);

    // Missed while disconnected (and one event the client had not read yet).
    let missed_ids = [
        post_report(&app, "1000", "van-3", 3).await,
        post_report(&app, "1000", "van-3", 4).await,
    ];
    let all = witness.take(8).await;
    assert_eq!(all[..3], seen[..]);
    let missed: Vec<SseEvent> = all[3..].to_vec();
    assert_eq!(
        kinds(&missed),
        ["device", "momessage", "device", "momessage", "device"]
    );
    assert_eq!(missed[1].data["MessageId"], missed_ids[0]);
    assert_eq!(missed[3].data["MessageId"], missed_ids[1]);

    let mut resumed = EventStream::open(&app.admin, "/V2/1000/stream", Some(last)).await;
    assert_eq!(resumed.take(missed.len()).await, missed);
    // Then live, with nothing repeated in between.
    let live = post_report(&app, "1000", "van-3", 5).await;
    let event = resumed.expect().await;
    assert_eq!(event.data["MessageId"], live);
    assert!(event.id > missed[missed.len() - 1].id);

    // Resuming from the first event replays everything after it, in order.
    let mut from_first = EventStream::open(&app.admin, "/V2/1000/stream", Some(all[0].id)).await;
    assert_eq!(from_first.take(7).await, all[1..]);
    // An id older than every kept event replays all that is kept.
    let mut from_zero = EventStream::open(&app.admin, "/V2/1000/stream", Some(0)).await;
    assert_eq!(from_zero.take(8).await, all);
}

async fn refusals(app: TestApp) {
    let bad = app
        .admin
        .request(Method::GET, "/V2/1000/stream")
        .header("last-event-id", "yesterday")
        .send()
        .await
        .expect("GET");
    let problem = assert_problem(bad, 400, "invalid_header").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("Last-Event-ID")
    );
    let anonymous = app.anonymous().get("/V2/1000/stream").await;
    assert_problem(anonymous, 401, "unauthorized").await;
    assert_not_found(app.admin.get("/V2/9999/stream").await).await;
    let bad_query = app.admin.get("/V2/1000/stream?subtenants=maybe").await;
    assert_problem(bad_query, 400, "validation_failed").await;

    // The stream only speaks text/event-stream; other routes still negotiate as before.
    let json_only = app
        .admin
        .request(Method::GET, "/V2/1000/stream")
        .header("accept", "application/json")
        .send()
        .await
        .expect("GET");
    assert_problem(json_only, 406, "not_acceptable").await;
    let devices = app
        .admin
        .request(Method::GET, "/V2/1000/devices")
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("GET");
    assert_problem(devices, 406, "not_acceptable").await;
    let post = app
        .admin
        .request(Method::POST, "/V2/1000/stream")
        .send()
        .await
        .expect("POST");
    assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
}

async fn shutdown_ends_open_streams(app: TestApp) {
    register_device(&app, "1000", "van-3").await;
    let mut unread = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    let mut read = EventStream::open(&app.admin, "/V2/1000/stream", None).await;
    post_report(&app, "1000", "van-3", 1).await;
    let before = read.take(2).await;

    // Stopping the server ends both streams promptly (it waits for open responses).
    let app = tokio::time::timeout(WAIT, app.restart())
        .await
        .expect("restarted in time");
    for stream in [&mut unread, &mut read] {
        let rest = tokio::time::timeout(WAIT, async {
            let mut rest = Vec::new();
            while let Some(event) = stream.next().await {
                rest.push(event);
            }
            rest
        })
        .await
        .expect("the stream ended");
        // At most what had been sent before the shutdown, then a last comment.
        assert!(before.starts_with(&rest), "{rest:?}");
        assert!(
            stream.comments.iter().any(|c| c.contains("shutting down")),
            "{:?}",
            stream.comments
        );
    }
    // The new server's ids continue beyond the old one's (whose kept events are gone).
    let mut resumed = EventStream::open(&app.admin, "/V2/1000/stream", Some(before[1].id)).await;
    let id = post_report(&app, "1000", "van-3", 2).await;
    let event = resumed.expect().await;
    assert_eq!(event.data["MessageId"], id);
    assert!(event.id > before[1].id);
}
