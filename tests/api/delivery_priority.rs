//! People first: an alert's e-mail is sent at once even while every general delivery
//! loop is held up by a webhook receiver that answers only after its timeout, with a
//! backlog of webhook deliveries queued ahead of the e-mail (`serve` runs a loop for
//! people's channels beside the others).

use std::time::{Duration, Instant};

use crate::alerts::{raise, sos_setup};
use crate::backend_fn_tests;
use crate::common::Backend;
use crate::delivery_worker::{
    Peers, all_status, app_with, post_message, subscribe_mo_messages, wait_deliveries,
};
use crate::mo_messages::DEVICE;
use crate::peers::{Receiver, SmtpSink};

backend_fn_tests!(an_sos_email_overtakes_a_hanging_webhook_backlog);

async fn an_sos_email_overtakes_a_hanging_webhook_backlog(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let receiver = Receiver::start().await;
    // Longer than the 15 s webhook timeout: every attempt holds its loop until then.
    receiver.delay(Duration::from_secs(30));
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
    subscribe_mo_messages(&app, &receiver).await;
    // 100 webhook deliveries, more than both general loops take in a step (2 × 32).
    for seq in 1..=100 {
        post_message(&app, seq).await;
    }
    // Both general loops have claimed their step and are waiting on the receiver.
    tokio::time::sleep(Duration::from_millis(1000)).await;

    let queued = Instant::now();
    raise(&app, "1000", DEVICE, 101, "2026-03-01T10:05:00Z").await;
    let sent = wait_deliveries(&app, "?channel=Email", all_status("Sent")).await;
    let waited = queued.elapsed();
    assert_eq!(sent.len(), 1);
    assert_eq!(smtp.wait_for(1, Duration::from_secs(5)).await.len(), 1);
    // The general loops are stuck until the webhook timeout (15 s): the e-mail went out
    // well before any of them could have taken it.
    assert!(
        waited < Duration::from_secs(10),
        "the e-mail waited {waited:?} behind the webhooks"
    );
    let webhooks = wait_deliveries(&app, "?channel=Webhook", |_| true).await;
    assert!(
        webhooks.iter().all(|d| d["Status"] == "Pending"),
        "the webhooks were still waiting on their receiver"
    );
}
