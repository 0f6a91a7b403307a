//! The alert's shared record (issue 31 §4): notes, acknowledge's `Note`, resolve's
//! `Outcome` and the `?outcome=` filter, each step on the timeline, and every action on
//! the live stream for a second client, resumable. The whole timeline with escalation
//! and deliveries, a second process, and the e-mail: `alert_timeline.rs`.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::alerts::{raise, sos_setup};
use crate::backend_tests;
use crate::common::{
    ADMIN_EMAIL, Client, TestApp, assert_not_found, assert_problem, problem_fields,
};
use crate::mo_messages::{DEVICE, register_device};
use crate::stream::{EventStream, SseEvent, stream_path};

backend_tests!(
    notes_are_checked_scoped_and_recorded,
    acknowledge_with_and_without_a_note,
    resolve_with_each_outcome_and_filter_by_it,
    a_second_stream_client_sees_every_action,
);

pub fn alert_path(tenant: &str, id: &str) -> String {
    format!("/V2/{tenant}/alerts/{id}")
}

pub async fn timeline(client: &Client, tenant: &str, id: &str) -> Vec<Value> {
    let listed = client
        .get_json(&format!("{}/timeline", alert_path(tenant, id)))
        .await;
    listed.as_array().expect("a list").clone()
}

/// The timeline without its deliveries (what people and the engine did).
async fn steps(client: &Client, tenant: &str, id: &str) -> Vec<Value> {
    let mut all = timeline(client, tenant, id).await;
    all.retain(|e| e["Kind"] != "Delivery");
    all
}

pub fn kinds(timeline: &[Value]) -> Vec<&str> {
    timeline
        .iter()
        .map(|e| e["Kind"].as_str().expect("Kind"))
        .collect()
}

/// (ETag, body) of an alert.
async fn read(app: &TestApp, tenant: &str, id: &str) -> (String, Value) {
    let response = app.admin.get(&alert_path(tenant, id)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    (etag, response.json().await.unwrap())
}

async fn notes_are_checked_scoped_and_recorded(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let (_, id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let notes = format!("{}/notes", alert_path("1000", &id));
    let (_, worker) = app.create_user("1000", "worker@example.com", "User").await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let before = read(&app, "1000", &id).await;

    // Refusals: each a 400 naming Text (or 403, 404), and none stores anything.
    let long = "a".repeat(4001);
    for (case, body) in [
        ("empty", json!({"Text": ""})),
        ("blank", json!({"Text": "   "})),
        ("missing", json!({})),
        ("4,001 characters", json!({"Text": long})),
        ("wrong type", json!({"Text": 5})),
    ] {
        let response = worker.post(&notes, &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["Text"], "{case}: {problem}");
    }
    let response = reader.post(&notes, &json!({"Text": "read only"})).await;
    assert_problem(response, 403, "forbidden").await;
    // Another tenant's alert: through a subtenant's path, and by a subtenant's user.
    let child = app.create_tenant("1000", "Branch").await;
    let (_, outsider) = app
        .create_user(&child, "outsider@example.com", "Administrator")
        .await;
    let foreign = format!("{}/notes", alert_path(&child, &id));
    assert_not_found(app.admin.post(&foreign, &json!({"Text": "x"})).await).await;
    assert_not_found(outsider.post(&notes, &json!({"Text": "x"})).await).await;
    assert_not_found(
        outsider
            .get(&format!("{}/timeline", alert_path("1000", &id)))
            .await,
    )
    .await;
    assert_not_found(
        app.admin
            .post(
                &format!("{}/notes", alert_path("1000", "999999")),
                &json!({"Text": "x"}),
            )
            .await,
    )
    .await;
    assert_eq!(read(&app, "1000", &id).await, before, "nothing changed");
    assert_eq!(kinds(&steps(&app.admin, "1000", &id).await), ["Raised"]);

    // A note of 4,000 characters (not bytes) is kept whole, by its author.
    let text = "é".repeat(4000);
    let response = worker.post(&notes, &json!({"Text": text})).await;
    assert_eq!(response.status(), StatusCode::OK);
    let note: Value = response.json().await.unwrap();
    assert_eq!(note["Kind"], "Note");
    assert_eq!(note["Text"], text);
    assert_eq!(note["By"], "worker@example.com");
    assert!(note["At"].is_string());
    let (etag, alert) = read(&app, "1000", &id).await;
    assert_eq!(alert["NoteCount"], 1);
    assert_ne!(etag, before.0, "a note is a new version of the alert");
    assert_eq!(alert["Status"], "Open", "a note moves no status");

    // Allowed after resolution: follow-up.
    let resolved = app
        .admin
        .post(&format!("{}/resolve", alert_path("1000", &id)), &json!({}))
        .await;
    assert_eq!(resolved.status(), StatusCode::OK);
    let response = app
        .admin
        .post(&notes, &json!({"Text": "Spoke to him next day: fine"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let after = steps(&app.admin, "1000", &id).await;
    assert_eq!(kinds(&after), ["Raised", "Note", "Resolved", "Note"]);
    assert_eq!(after[1], note, "the answer is the timeline's entry");
    assert_eq!(after[3]["By"], ADMIN_EMAIL);
    assert_eq!(read(&app, "1000", &id).await.1["NoteCount"], 2);
}

async fn acknowledge_with_and_without_a_note(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    register_device(&app, "1000", "second").await;
    let (_, first) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let (_, second) = raise(&app, "1000", "second", 1, "2026-03-01T10:00:00Z").await;
    let acknowledge = |id: &str| format!("{}/acknowledge", alert_path("1000", id));

    // A note that is too long refuses the acknowledgement: nothing changes.
    let before = read(&app, "1000", &first).await;
    let response = app
        .admin
        .post(&acknowledge(&first), &json!({"Note": "n".repeat(4001)}))
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Note"]);
    assert_eq!(read(&app, "1000", &first).await, before);

    let response = app
        .admin
        .post(&acknowledge(&first), &json!({"Note": "Calling him now"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let acknowledged: Value = response.json().await.unwrap();
    assert_eq!(acknowledged["Status"], "Acknowledged");
    assert_eq!(acknowledged["NoteCount"], 0, "the note belongs to the step");
    let recorded = steps(&app.admin, "1000", &first).await;
    assert_eq!(kinds(&recorded), ["Raised", "Acknowledged"]);
    assert_eq!(recorded[1]["Note"], "Calling him now");
    assert_eq!(recorded[1]["By"], ADMIN_EMAIL);
    assert_eq!(recorded[1]["At"], acknowledged["AcknowledgedAt"]);

    // No body at all, as before.
    let response = app
        .admin
        .request(Method::POST, &acknowledge(&second))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let recorded = steps(&app.admin, "1000", &second).await;
    assert_eq!(kinds(&recorded), ["Raised", "Acknowledged"]);
    assert!(recorded[1].get("Note").is_none(), "{}", recorded[1]);
}

async fn resolve_with_each_outcome_and_filter_by_it(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let mut ids = Vec::new();
    for (n, device) in ["d-genuine", "d-false", "d-test", "d-other", "d-none"]
        .iter()
        .enumerate()
    {
        register_device(&app, "1000", device).await;
        let (_, id) = raise(&app, "1000", device, n as i64 + 1, "2026-03-01T10:00:00Z").await;
        ids.push(id);
    }
    let resolve = |id: &str| format!("{}/resolve", alert_path("1000", id));

    // A bad Outcome is a 400 naming it; the alert stays as it was.
    let before = read(&app, "1000", &ids[0]).await;
    for bad in [json!("Maybe"), json!("genuine"), json!(1)] {
        let response = app
            .admin
            .post(
                &resolve(&ids[0]),
                &json!({"Outcome": bad, "Resolution": "x"}),
            )
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["Outcome"], "{bad}: {problem}");
    }
    assert_eq!(read(&app, "1000", &ids[0]).await, before);
    assert_eq!(before.1["Outcome"], Value::Null);

    for (id, outcome) in ids.iter().zip(["Genuine", "FalseAlarm", "Test", "Other"]) {
        let response = app
            .admin
            .post(
                &resolve(id),
                &json!({"Outcome": outcome, "Resolution": format!("{outcome} it was")}),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let resolved: Value = response.json().await.unwrap();
        assert_eq!(resolved["Status"], "Resolved");
        assert_eq!(resolved["Outcome"], outcome);
        assert_eq!(read(&app, "1000", id).await.1, resolved);
        let recorded = steps(&app.admin, "1000", id).await;
        let last = recorded.last().unwrap();
        assert_eq!(last["Kind"], "Resolved");
        assert_eq!(last["Outcome"], outcome);
        assert_eq!(last["Resolution"], format!("{outcome} it was"));
        assert_eq!(last["At"], resolved["ResolvedAt"]);
    }
    // Without one (as existing clients resolve): stored null.
    let response = app.admin.post(&resolve(&ids[4]), &json!({})).await;
    let resolved: Value = response.json().await.unwrap();
    assert_eq!(resolved["Outcome"], Value::Null);
    let recorded = steps(&app.admin, "1000", &ids[4]).await;
    assert!(recorded.last().unwrap().get("Outcome").is_none());

    for (outcome, expected) in [
        ("Genuine", &ids[0]),
        ("FalseAlarm", &ids[1]),
        ("Test", &ids[2]),
        ("Other", &ids[3]),
    ] {
        let listed = app
            .admin
            .get_json(&format!("/V2/1000/alerts?outcome={outcome}"))
            .await;
        let listed: Vec<&str> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["AlertId"].as_str().unwrap())
            .collect();
        assert_eq!(listed, [expected.as_str()], "{outcome}");
    }
    let response = app.admin.get("/V2/1000/alerts?outcome=Maybe").await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["outcome"]);
}

/// The next `alert` event (skipping messages and devices).
pub async fn next_alert(stream: &mut EventStream) -> SseEvent {
    loop {
        let event = stream.expect().await;
        if event.event == "alert" {
            return event;
        }
    }
}

/// Acknowledges (with a note), notes and resolves alert `id` of tenant 1000 through
/// `actor`; after each, `watch` must show the alert as the action left it.
pub async fn act_and_watch(actor: &Client, id: &str, watch: &mut EventStream) -> Vec<SseEvent> {
    let path = alert_path("1000", id);
    let mut seen = Vec::new();
    for (action, body) in [
        ("acknowledge", json!({"Note": "On it"})),
        ("notes", json!({"Text": "Driver answered"})),
        (
            "resolve",
            json!({"Outcome": "FalseAlarm", "Resolution": "Pocket dial"}),
        ),
    ] {
        let response = actor.post(&format!("{path}/{action}"), &body).await;
        assert_eq!(response.status(), StatusCode::OK, "{action}");
        let now = actor.get_json(&path).await;
        let event = next_alert(watch).await;
        assert_eq!(event.data, now, "after {action}: the alert as it now is");
        seen.push(event);
    }
    assert_eq!(seen[0].data["Status"], "Acknowledged");
    assert_eq!(seen[1].data["NoteCount"], 1);
    assert_eq!(seen[2].data["Status"], "Resolved");
    assert_eq!(seen[2].data["Outcome"], "FalseAlarm");
    seen
}

async fn a_second_stream_client_sees_every_action(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let (_, watcher) = app
        .create_user("1000", "watcher@example.com", "ReadOnly")
        .await;
    let mut stream = EventStream::open(&watcher, &stream_path("1000", false), None).await;
    let (_, id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let raised = next_alert(&mut stream).await;
    assert_eq!(raised.data["AlertId"], id);
    let seen = act_and_watch(&app.admin, &id, &mut stream).await;
    assert!(seen.windows(2).all(|w| w[0].id < w[1].id));

    // Resuming after the raise brings the three again, under the same ids.
    let mut resumed =
        EventStream::open(&watcher, &stream_path("1000", false), Some(raised.id)).await;
    let mut again = Vec::new();
    while again.len() < 3 {
        let event = resumed.expect().await;
        if event.event == "alert" {
            again.push(event);
        }
    }
    let ids = |events: &[SseEvent]| events.iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(&again), ids(&seen));
    assert_eq!(again, seen, "the same events, as they were sent");
}
