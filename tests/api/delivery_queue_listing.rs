//! `GET /deliveries?status=Pending`: what is left to send, read from the queue rather than
//! by walking the tenant's history; other filters, paging and tenant scope still hold.

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, assert_problem, problem_fields};
use crate::delivery_worker::{Peers, app_with, subscribe_mo_messages_to};
use crate::mo_messages::{DEVICE, position_report, register_device};
use crate::peers::Receiver;

backend_fn_tests!(
    pending_deliveries_are_listed_from_the_queue,
    the_log_filters_by_time_and_target_newest_first
);

/// Every page of `tenant`'s deliveries matching `query` (pageSize 2), ids in order.
async fn walk(app: &TestApp, tenant: &str, query: &str) -> Vec<String> {
    app.admin
        .get_all_pages(&format!("/V2/{tenant}/deliveries?pageSize=2&{query}"))
        .await
        .iter()
        .map(|d| d["DeliveryId"].as_str().unwrap().to_string())
        .collect()
}

/// `tenant`'s MoMessage events go to `url`; `count` messages from its device.
async fn queue_message_events(app: &TestApp, tenant: &str, device: &str, url: &str, count: i64) {
    subscribe_mo_messages_to(app, tenant, url).await;
    for seq in 1..=count {
        let sent = format!("2026-03-01T10:0{seq}:00Z");
        let response = app
            .admin
            .post(
                &format!("/V2/{tenant}/devices/{device}/momessages"),
                &json!([position_report(seq, &sent, 51.5, -0.12)]),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
}

async fn pending_deliveries_are_listed_from_the_queue(backend: Backend) {
    // A receiver that is gone: its events stay Pending, retried.
    let receiver = Receiver::start().await;
    let url = format!("{}/hook", receiver.base);
    receiver.stop();
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    queue_message_events(&app, "1000", DEVICE, &url, 3).await;
    let child = app.create_tenant("1000", "Child").await;
    register_device(&app, &child, "child-device").await;
    queue_message_events(&app, &child, "child-device", &url, 1).await;

    let webhooks = walk(&app, "1000", "channel=Webhook").await;
    assert_eq!(webhooks.len(), 3);
    // Pending, in id order across pages of 2, the tenant's own only.
    assert_eq!(walk(&app, "1000", "status=Pending").await, webhooks);
    assert_eq!(
        walk(&app, "1000", &format!("status=Pending&deviceId={DEVICE}")).await,
        webhooks
    );
    assert_eq!(
        walk(&app, "1000", "status=Pending&channel=Email").await,
        Vec::<String>::new()
    );
    assert_eq!(
        walk(&app, "1000", "status=Pending&deviceId=child-device").await,
        Vec::<String>::new()
    );
    let child_pending = walk(&app, &child, "status=Pending").await;
    assert_eq!(child_pending.len(), 1);
    assert!(!webhooks.contains(&child_pending[0]));
    // Continuing after the first: the rest, in order.
    let page = app
        .admin
        .get_json("/V2/1000/deliveries?status=Pending&pageSize=1")
        .await;
    assert_eq!(page[0]["DeliveryId"], webhooks[0].as_str());
    assert_eq!(page[0]["Status"], "Pending");
}

/// The console's deliveries log: newest first across pages, `[from, to)` on `CreatedAt`,
/// one webhook URL's deliveries by `target` (ManageConfiguration only: it matches the
/// whole URL, which other callers see only as its origin).
async fn the_log_filters_by_time_and_target_newest_first(backend: Backend) {
    let receiver = Receiver::start().await;
    let url = format!("{}/hook", receiver.base);
    receiver.stop();
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    register_device(&app, "1000", DEVICE).await;
    queue_message_events(&app, "1000", DEVICE, &url, 3).await;
    let oldest_first = app
        .admin
        .get_all_pages("/V2/1000/deliveries?pageSize=2&channel=Webhook")
        .await;
    assert_eq!(oldest_first.len(), 3);
    let ids = |list: &[serde_json::Value]| -> Vec<String> {
        list.iter()
            .map(|d| d["DeliveryId"].as_str().unwrap().to_string())
            .collect()
    };
    let mut newest = ids(&oldest_first);
    newest.reverse();
    assert_eq!(walk(&app, "1000", "newestFirst=true").await, newest);
    assert_eq!(
        walk(
            &app,
            "1000",
            &format!("newestFirst=true&target={}", encode(&url))
        )
        .await,
        newest
    );
    assert_eq!(
        walk(
            &app,
            "1000",
            "target=https%3A%2F%2Felsewhere.example%2Fhook"
        )
        .await,
        Vec::<String>::new()
    );

    // [from, to) on CreatedAt: from the second delivery's time, to the third's.
    let at = |i: usize| oldest_first[i]["CreatedAt"].as_str().unwrap().to_string();
    let expected: Vec<String> = oldest_first
        .iter()
        .filter(|d| {
            let created = d["CreatedAt"].as_str().unwrap();
            parse(created) >= parse(&at(1)) && parse(created) < parse(&at(2))
        })
        .map(|d| d["DeliveryId"].as_str().unwrap().to_string())
        .collect();
    assert!(expected.contains(&oldest_first[1]["DeliveryId"].as_str().unwrap().to_string()));
    assert_eq!(
        walk(
            &app,
            "1000",
            &format!("from={}&to={}", encode(&at(1)), encode(&at(2)))
        )
        .await,
        expected
    );
    assert_eq!(
        walk(&app, "1000", "from=2100-01-01T00:00:00Z").await,
        Vec::<String>::new()
    );

    // Bad values are 400s naming the parameter; target without ManageConfiguration a 403.
    let bad = app.admin.get("/V2/1000/deliveries?from=yesterday").await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let reversed = app
        .admin
        .get("/V2/1000/deliveries?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z")
        .await;
    let problem = assert_problem(reversed, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["from"]);
    let (_, operator) = app
        .create_user("1000", "operator@example.com", "User")
        .await;
    assert_problem(
        operator
            .get(&format!("/V2/1000/deliveries?target={}", encode(&url)))
            .await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(
        operator
            .get_all_pages("/V2/1000/deliveries?newestFirst=true")
            .await
            .len(),
        3
    );
}

fn encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn parse(at: &str) -> jiff::Timestamp {
    at.parse().unwrap()
}
