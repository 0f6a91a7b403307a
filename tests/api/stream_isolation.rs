//! One tenant's burst neither drops nor pushes out another tenant's stream: a client's
//! lag and its resume window count only the events it may see.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::TestApp;
use crate::mo_messages::{position_report, register_device};
use crate::stream::{EventStream, kinds, post_report, stream_path};

backend_tests!(a_quiet_tenants_stream_survives_a_burst_elsewhere_and_resumes_without_a_gap);

/// More events than the whole hub used to keep (16,384), and than a subscriber may lag.
const BURST_BATCHES: usize = 17;
const BATCH: usize = 1000;

fn full_batch(round: usize) -> Value {
    let messages: Vec<Value> = (0..BATCH)
        .map(|i| {
            let seq = (round * BATCH + i) as i64;
            let sent = format!(
                "2026-03-01T{:02}:{:02}:{:02}Z",
                seq / 3600,
                seq / 60 % 60,
                seq % 60
            );
            position_report(seq, &sent, 51.5, -0.12)
        })
        .collect();
    json!(messages)
}

async fn a_quiet_tenants_stream_survives_a_burst_elsewhere_and_resumes_without_a_gap(app: TestApp) {
    let quiet = app.create_tenant("1000", "Quiet").await;
    let other = app.create_tenant("1000", "Other quiet").await;
    let noisy = app.create_tenant("1000", "Noisy").await;
    register_device(&app, &quiet, "q-1").await;
    register_device(&app, &other, "o-1").await;
    let noisy_devices: Vec<String> = (0..BURST_BATCHES).map(|i| format!("n-{i}")).collect();
    for device in &noisy_devices {
        register_device(&app, &noisy, device).await;
    }
    let mut own = EventStream::open(&app.admin, &stream_path(&quiet, false), None).await;
    let mut wide = EventStream::open(&app.admin, &stream_path(&other, true), None).await;
    post_report(&app, &quiet, "q-1", 1).await;
    let before = own.take(2).await;
    assert_eq!(kinds(&before), ["momessage", "device"]);

    // The burst: neither quiet stream reads meanwhile.
    let posts = noisy_devices.iter().enumerate().map(|(round, device)| {
        let admin = app.admin.clone();
        let path = format!("/V2/{noisy}/devices/{device}/momessages");
        async move { admin.post(&path, &full_batch(round)).await.status() }
    });
    for status in join_all(posts).await {
        assert_eq!(status, StatusCode::OK);
    }

    // Both quiet streams are still open and get their tenants' next events.
    let second = post_report(&app, &quiet, "q-1", 2).await;
    let after = own.take(2).await;
    assert_eq!(after[0].data["MessageId"], second, "{:?}", own.comments());
    let elsewhere = post_report(&app, &other, "o-1", 1).await;
    let event = wide.expect().await;
    assert_eq!(event.data["MessageId"], elsewhere, "{:?}", wide.comments());

    // Resuming from before the burst replays the tenant's events without a gap.
    let mut resumed =
        EventStream::open(&app.admin, &stream_path(&quiet, false), Some(before[0].id)).await;
    let replayed = resumed.take(3).await;
    let ids: Vec<u64> = replayed.iter().map(|e| e.id).collect();
    assert_eq!(ids, [before[1].id, after[0].id, after[1].id]);
}
