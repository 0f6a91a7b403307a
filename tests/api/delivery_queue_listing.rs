//! `GET /deliveries?status=Pending`: what is left to send, read from the queue rather than
//! by walking the tenant's history; other filters, paging and tenant scope still hold.

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp};
use crate::delivery_worker::{Peers, app_with, subscribe_mo_messages_to};
use crate::mo_messages::{DEVICE, position_report, register_device};
use crate::peers::Receiver;

backend_fn_tests!(pending_deliveries_are_listed_from_the_queue);

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
