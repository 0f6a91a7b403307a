//! MT back to inReach devices: messages queued for a device whose `DeviceType` is an
//! InReach with an `IridiumImei` go to Garmin's IPC Inbound API (a local fake here) as
//! `Garmin` deliveries — text, location request, tracking interval — and the MT
//! message's status follows the answer, with the delivery worker's retries.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, spawn_app_with};
use crate::gateway_support::register;
use crate::peers::Receiver;
use safetrack::app::AppConfig;
use safetrack::channels::ChannelsConfig;
use safetrack::channels::garmin::GarminConfig;
use safetrack::domain::retry::RetryPolicy;
use safetrack::workers::deliveries::DeliveryWorkerConfig;

backend_fn_tests!(queued_messages_go_to_garmin_and_their_status_follows);

const IMEI: &str = "300434030112330";

async fn queue(app: &TestApp, device: &str, body: Value) -> String {
    let response = app
        .admin
        .post(&format!("/V2/1000/devices/{device}/mtmessages"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "queue {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

async fn status_of(app: &TestApp, device: &str, id: &str) -> String {
    app.admin
        .get_json(&format!("/V2/1000/devices/{device}/mtmessages/{id}"))
        .await["Status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn queued_messages_go_to_garmin_and_their_status_follows(backend: Backend) {
    let inbound = Receiver::start().await;
    // The first call is refused for the moment: retried, then sent.
    inbound.answer(503, 1, None);
    let config = AppConfig {
        channels: ChannelsConfig {
            garmin: Some(GarminConfig {
                base_url: format!("{}/IPCInbound/V1/", inbound.base),
                credential: "ipc-user:ipc-secret".into(),
            }),
            ..ChannelsConfig::default()
        },
        delivery: DeliveryWorkerConfig {
            retry: RetryPolicy {
                initial: Duration::from_millis(200),
                ..RetryPolicy::default()
            },
            ..DeliveryWorkerConfig::default()
        },
        ..AppConfig::default()
    };
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    register(
        &app,
        "1000",
        "inreach-1",
        json!({"DeviceType": "InReachMini", "IridiumImei": IMEI}),
    )
    .await;
    register(&app, "1000", "phone-1", json!({"DeviceType": "Phone"})).await;

    let text = queue(
        &app,
        "inreach-1",
        json!({"Type": "Text", "Message": "Return to base", "Parameters": {"Sender": "Ops"}}),
    )
    .await;
    let locate = queue(&app, "inreach-1", json!({"Type": "LocationRequest"})).await;
    let interval = queue(
        &app,
        "inreach-1",
        json!({"Type": "ReportingFrequency", "Parameters": {"Interval": "10"}}),
    )
    .await;
    let call = queue(&app, "inreach-1", json!({"Type": "Call"})).await;
    let phone = queue(
        &app,
        "phone-1",
        json!({"Type": "Text", "Message": "not Garmin's"}),
    )
    .await;

    let received = inbound.wait_for(4, Duration::from_secs(20)).await;
    let mut finals = Vec::new();
    for _ in 0..100 {
        finals = vec![
            status_of(&app, "inreach-1", &text).await,
            status_of(&app, "inreach-1", &locate).await,
            status_of(&app, "inreach-1", &interval).await,
            status_of(&app, "inreach-1", &call).await,
        ];
        if finals == ["Sent", "Sent", "Sent", "Failed"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(finals, ["Sent", "Sent", "Sent", "Failed"]);
    assert_eq!(status_of(&app, "phone-1", &phone).await, "Queued");

    let received = if received.len() < 4 {
        inbound.wait_for(4, Duration::from_secs(5)).await
    } else {
        received
    };
    let paths: Vec<&str> = received.iter().map(|r| r.path.as_str()).collect();
    assert!(
        paths.iter().all(|p| p.starts_with("/IPCInbound/V1/")),
        "{paths:?}"
    );
    // Three requests, one of them twice: the 503 was retried.
    assert_eq!(received.len(), 4, "{paths:?}");
    let distinct: std::collections::BTreeSet<&str> = paths.iter().copied().collect();
    assert_eq!(distinct.len(), 3, "{paths:?}");
    let text_calls: Vec<_> = received
        .iter()
        .filter(|r| r.path.ends_with("Messaging.svc/Message"))
        .collect();
    let last = text_calls.len() - 1;
    let body = text_calls[last].json();
    assert_eq!(
        body["Messages"][0]["Recipients"],
        json!([300434030112330u64])
    );
    assert_eq!(body["Messages"][0]["Sender"], "Ops");
    assert_eq!(body["Messages"][0]["Message"], "Return to base");
    assert!(
        text_calls[last]
            .header("authorization")
            .is_some_and(|a| a.starts_with("Basic "))
    );
    let located = received
        .iter()
        .find(|r| r.path.ends_with("Location.svc/LocationRequest"))
        .expect("a location request");
    assert_eq!(
        located.json(),
        json!({"Locations": [{"IMEI": 300434030112330u64}]})
    );
    let tracking = received
        .iter()
        .find(|r| r.path.ends_with("Tracking.svc/Interval"))
        .expect("a tracking interval");
    assert_eq!(
        tracking.json(),
        json!({"Devices": [{"IMEI": 300434030112330u64, "Interval": 10}]})
    );

    // The deliveries say what happened, the unsupported type included.
    let deliveries = app
        .admin
        .get_json("/V2/1000/deliveries?channel=Garmin")
        .await;
    let deliveries = deliveries.as_array().unwrap();
    assert_eq!(deliveries.len(), 4, "{deliveries:?}");
    assert!(
        deliveries.iter().any(|d| d["Status"] == "Failed"
            && d["LastError"].as_str().is_some_and(|e| e.contains("Call")))
    );
}
