//! `GET /deliveries?status=Pending`: what is left to send, read from the queue rather than
//! by walking the tenant's history; other filters, paging and tenant scope still hold.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp};
use crate::delivery_worker::{Peers, app_with};
use crate::mo_messages::{DEVICE, register_device};
use crate::peers::Receiver;

backend_fn_tests!(pending_deliveries_are_listed_from_the_queue);

/// Every page of the tenant's deliveries matching `query` (pageSize 2), ids in order.
async fn walk(app: &TestApp, tenant: &str, query: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..50 {
        let mut request = app.admin.request(
            Method::GET,
            &format!("/V2/{tenant}/deliveries?pageSize=2&{query}"),
        );
        if let Some(t) = &token {
            request = request.header("X-CONTINUATIONTOKEN", t);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{query}");
        token = response
            .headers()
            .get("x-continuationtoken")
            .map(|v| v.to_str().unwrap().to_string());
        let page: Value = response.json().await.unwrap();
        seen.extend(
            page.as_array()
                .unwrap()
                .iter()
                .map(|d| d["DeliveryId"].as_str().unwrap().to_string()),
        );
        if token.is_none() {
            return seen;
        }
    }
    panic!("paging does not end");
}

/// `tenant`'s MoMessage events go to `url`; `count` messages from its device.
async fn queue_message_events(app: &TestApp, tenant: &str, device: &str, url: &str, count: i64) {
    let response = app
        .admin
        .put(
            &format!("/V2/{tenant}/webhooks"),
            &json!({"Urls": [{"Url": url, "MoMessage": true}]}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    for seq in 1..=count {
        let response = app
            .admin
            .post(
                &format!("/V2/{tenant}/devices/{device}/momessages"),
                &json!([{"MessageType": "AutomaticPositionReport", "SequenceNumber": seq,
                         "SentFromDevice": format!("2026-03-01T10:0{seq}:00Z"),
                         "Position": {"Lat": 51.5, "Lon": -0.12}}]),
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
