//! MT back to inReach devices: messages queued for a device whose `DeviceType` is an
//! InReach with an `IridiumImei` go to Garmin's IPC Inbound API (a local fake here,
//! checking the requests against Garmin's IPC Inbound guide v3.1.1: IPCv2 paths and
//! bodies, `X-API-Key`) as `Garmin` deliveries — text, location request, tracking
//! interval — and the MT message's status follows the answer, with the delivery worker's
//! retries; what Garmin would refuse fails without a call.

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
                base_url: format!("{}/api/", inbound.base),
                api_key: "ipc-api-key".into(),
                sender: Some("ops@example.com".into()),
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
        json!({"Type": "Text", "Message": "Return to base", "Parameters": {"Sender": "duty@example.com"}}),
    )
    .await;
    let default_sender = queue(
        &app,
        "inreach-1",
        json!({"Type": "Text", "Message": "Weather closing in"}),
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
    // Garmin takes only an email address or phone number as the sender.
    let bad_sender = queue(
        &app,
        "inreach-1",
        json!({"Type": "Text", "Message": "hello", "Parameters": {"Sender": "Ops room"}}),
    )
    .await;
    let phone = queue(
        &app,
        "phone-1",
        json!({"Type": "Text", "Message": "not Garmin's"}),
    )
    .await;

    let ids = [
        &text,
        &default_sender,
        &locate,
        &interval,
        &call,
        &bad_sender,
    ];
    let expected = ["Sent", "Sent", "Sent", "Sent", "Failed", "Failed"];
    let mut finals = Vec::new();
    for _ in 0..200 {
        finals.clear();
        for id in ids {
            finals.push(status_of(&app, "inreach-1", id).await);
        }
        if finals == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(finals, expected);
    assert_eq!(status_of(&app, "phone-1", &phone).await, "Queued");

    // Four requests, one of them twice (the 503 was retried); none for the two refused.
    let received = inbound.wait_for(5, Duration::from_secs(10)).await;
    let paths: Vec<&str> = received.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(received.len(), 5, "{paths:?}");
    for request in &received {
        assert_eq!(request.header("x-api-key"), Some("ipc-api-key"));
        assert!(request.header("authorization").is_none());
    }
    let distinct: std::collections::BTreeSet<&str> = paths.iter().copied().collect();
    assert_eq!(
        distinct.into_iter().collect::<Vec<_>>(),
        [
            "/api/Location/SendLocationRequest",
            "/api/Messaging/Message",
            "/api/Tracking/Interval"
        ]
    );
    let texts: Vec<Value> = received
        .iter()
        .filter(|r| r.path == "/api/Messaging/Message")
        .map(|r| r.json()["Messages"][0].clone())
        .collect();
    let by_sender = |sender: &str| {
        texts
            .iter()
            .find(|m| m["Sender"] == sender)
            .unwrap_or_else(|| panic!("a text from {sender}: {texts:?}"))
            .clone()
    };
    let from_duty = by_sender("duty@example.com");
    assert_eq!(from_duty["Recipients"], json!([300434030112330u64]));
    assert_eq!(from_duty["Message"], "Return to base");
    let stamp = from_duty["Timestamp"].as_str().unwrap_or_default();
    let millis = stamp
        .strip_prefix("/Date(")
        .and_then(|rest| rest.strip_suffix(")/"))
        .and_then(|ms| ms.parse::<i64>().ok());
    assert!(millis.is_some_and(|ms| ms > 1_293_840_000_000), "{stamp}");
    assert_eq!(
        by_sender("ops@example.com")["Message"],
        "Weather closing in"
    );
    let located = received
        .iter()
        .find(|r| r.path == "/api/Location/SendLocationRequest")
        .expect("a location request");
    assert_eq!(located.json(), json!({"IMEI": [300434030112330u64]}));
    let tracking = received
        .iter()
        .find(|r| r.path == "/api/Tracking/Interval")
        .expect("a tracking interval");
    // Ten minutes, in seconds.
    assert_eq!(
        tracking.json(),
        json!({"Devices": [{"Imei": 300434030112330u64, "Interval": 600}]})
    );

    // The deliveries say what happened, the refused ones included.
    let deliveries = app
        .admin
        .get_json("/V2/1000/deliveries?channel=Garmin")
        .await;
    let deliveries = deliveries.as_array().unwrap();
    assert_eq!(deliveries.len(), 6, "{deliveries:?}");
    let failed = |needle: &str| {
        deliveries.iter().any(|d| {
            d["Status"] == "Failed" && d["LastError"].as_str().is_some_and(|e| e.contains(needle))
        })
    };
    assert!(failed("Call"), "{deliveries:?}");
    assert!(failed("Ops room"), "{deliveries:?}");

    // Garmin refusing a request (422, e.g. an IMEI not the tenant's) fails it at once.
    inbound.answer(422, 1, None);
    let refused = queue(&app, "inreach-1", json!({"Type": "LocationRequest"})).await;
    let mut status = String::new();
    for _ in 0..200 {
        status = status_of(&app, "inreach-1", &refused).await;
        if status != "Queued" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, "Failed");
    assert_eq!(inbound.received().len(), 6, "one call, not retried");
}
