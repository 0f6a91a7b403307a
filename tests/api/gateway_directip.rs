//! The Iridium SBD DirectIP listener over real sockets: messages written byte by byte
//! (header only, with payload, with location and payload), the confirmation once stored
//! (also for a resend, stored once), and bad input — a failed session, truncation,
//! oversize, lengths that disagree, a stalled connection — closed with nothing stored
//! while the listener goes on serving.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, spawn_app};
use crate::gateway_support::{gateway_token, messages, register};
use safetrack::app::AppConfig;
use safetrack::gateways::directip_listener::DirectIpConfig;

backend_fn_tests!(
    messages_written_byte_by_byte,
    a_resend_is_confirmed_and_stored_once,
    bad_input_is_closed_and_stores_nothing,
    devices_outside_the_token_scope_are_refused,
    refused_tokens_store_nothing,
);

const IMEI: &str = "300234063904190";
const SESSION: u32 = 1_772_359_200; // 2026-03-01T10:00:00Z

/// `app` restarted with a DirectIP listener that stores with `token`.
async fn with_listener(app: TestApp, token: &str) -> (TestApp, SocketAddr) {
    let config = AppConfig {
        directip: Some(DirectIpConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            token: token.to_string(),
            max_connections: 8,
            read_timeout: Duration::from_millis(800),
        }),
        ..AppConfig::default()
    };
    let app = app.restart_with(config).await;
    let address = app.directip.expect("a DirectIP listener");
    (app, address)
}

fn element(iei: u8, data: &[u8]) -> Vec<u8> {
    let mut bytes = vec![iei];
    bytes.extend_from_slice(&u16::try_from(data.len()).unwrap().to_be_bytes());
    bytes.extend_from_slice(data);
    bytes
}

fn header(imei: &str, status: u8, momsn: u16, session: u32) -> Vec<u8> {
    let mut data = 7u32.to_be_bytes().to_vec(); // CDR reference
    data.extend_from_slice(imei.as_bytes());
    data.push(status);
    data.extend_from_slice(&momsn.to_be_bytes());
    data.extend_from_slice(&0u16.to_be_bytes());
    data.extend_from_slice(&session.to_be_bytes());
    element(1, &data)
}

/// 33° 52.128' S, 151° 12.558' E (−33.8688, 151.2093), CEP 3 km.
fn sydney() -> Vec<u8> {
    let mut data = vec![0x02, 33];
    data.extend_from_slice(&52_128u16.to_be_bytes());
    data.push(151);
    data.extend_from_slice(&12_558u16.to_be_bytes());
    data.extend_from_slice(&3u32.to_be_bytes());
    element(3, &data)
}

fn frame(elements: &[Vec<u8>]) -> Vec<u8> {
    let body: Vec<u8> = elements.concat();
    let mut bytes = vec![1];
    bytes.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    bytes.extend_from_slice(&body);
    bytes
}

/// Writes `bytes` one at a time (optionally closing our side after), then reads what
/// the listener answers until it closes the connection.
async fn exchange(address: SocketAddr, bytes: &[u8], close_after: bool) -> Vec<u8> {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.set_nodelay(true).unwrap();
    for byte in bytes {
        if stream.write_all(&[*byte]).await.is_err() {
            break;
        }
    }
    if close_after {
        let _ = stream.shutdown().await;
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    answer
}

const ACCEPTED: [u8; 7] = [1, 0, 4, 5, 0, 1, 1];
const REFUSED: [u8; 7] = [1, 0, 4, 5, 0, 1, 0];

async fn setup(backend: Backend) -> Option<(TestApp, SocketAddr)> {
    let app = spawn_app(backend).await?;
    register(&app, "1000", "buoy-1", json!({"IridiumImei": IMEI})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "directip").await;
    Some(with_listener(app, &token).await)
}

async fn messages_written_byte_by_byte(backend: Backend) {
    let Some((app, address)) = setup(backend).await else {
        return;
    };
    let only_header = frame(&[header(IMEI, 0, 1, SESSION)]);
    assert_eq!(exchange(address, &only_header, false).await, ACCEPTED);
    let with_payload = frame(&[header(IMEI, 0, 2, SESSION + 60), element(2, b"hello\0\0")]);
    assert_eq!(exchange(address, &with_payload, false).await, ACCEPTED);
    let everything = frame(&[
        header(IMEI, 0, 3, SESSION + 120),
        sydney(),
        element(2, &[0xff, 0x00, 0x10]),
    ]);
    assert_eq!(exchange(address, &everything, false).await, ACCEPTED);

    let stored = messages(&app, "1000", "buoy-1").await;
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert_eq!(stored[0]["MessageType"], "MailCheck");
    assert_eq!(stored[0]["SequenceNumber"], 1);
    assert_eq!(stored[0]["SentFromDevice"], "2026-03-01T10:00:00Z");
    assert_eq!(stored[0]["Properties"]["cdrReference"], "7");
    assert_eq!(stored[1]["MessageType"], "FreeText");
    assert_eq!(stored[1]["Message"], "hello");
    assert_eq!(stored[2]["MessageType"], "BinaryMessage");
    assert_eq!(stored[2]["File"], "/wAQ");
    assert_eq!(stored[2]["Position"]["Latitude"], -33.8688);
    assert_eq!(stored[2]["Position"]["Longitude"], 151.2093);
    assert_eq!(stored[2]["Position"]["LocationSource"], "Iridium");
}

async fn a_resend_is_confirmed_and_stored_once(backend: Backend) {
    let Some((app, address)) = setup(backend).await else {
        return;
    };
    let message = frame(&[header(IMEI, 0, 9, SESSION), element(2, b"once")]);
    for _ in 0..3 {
        assert_eq!(exchange(address, &message, false).await, ACCEPTED);
    }
    assert_eq!(messages(&app, "1000", "buoy-1").await.len(), 1);
}

async fn bad_input_is_closed_and_stores_nothing(backend: Backend) {
    let Some((app, address)) = setup(backend).await else {
        return;
    };
    // A failed session (13: RF link loss).
    let failed = frame(&[header(IMEI, 13, 1, SESSION)]);
    assert!(exchange(address, &failed, false).await.is_empty());
    // Truncated: half a message, then the sender closes.
    let whole = frame(&[header(IMEI, 0, 2, SESSION), element(2, b"cut short")]);
    assert!(
        exchange(address, &whole[..whole.len() / 2], true)
            .await
            .is_empty()
    );
    // Oversize: an overall length past the protocol's largest message.
    assert!(exchange(address, &[1, 0x0f, 0xff], false).await.is_empty());
    // Lengths that disagree: the payload element claims more than the message holds.
    let mut disagreeing = frame(&[header(IMEI, 0, 3, SESSION), element(2, b"abc")]);
    let payload_length_at = disagreeing.len() - 5;
    disagreeing[payload_length_at..payload_length_at + 2].copy_from_slice(&9u16.to_be_bytes());
    assert!(exchange(address, &disagreeing, false).await.is_empty());
    // A payload over 1,960 bytes.
    let big = frame(&[header(IMEI, 0, 4, SESSION), element(2, &[b'x'; 1961])]);
    assert!(exchange(address, &big, false).await.is_empty());
    // Stalled: the start of a message, then nothing (the listener's deadline is 0.8 s).
    let stalled = tokio::spawn(async move {
        let mut stream = TcpStream::connect(address).await.unwrap();
        stream.write_all(&whole[..10]).await.unwrap();
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
            .await
            .expect("closed by the listener");
        (read.is_ok(), answer)
    });
    // Meanwhile the listener serves others.
    let good = frame(&[header(IMEI, 0, 5, SESSION + 5)]);
    assert_eq!(exchange(address, &good, false).await, ACCEPTED);
    let (_, answer) = stalled.await.unwrap();
    assert!(answer.is_empty(), "no confirmation for a stalled message");

    let stored = messages(&app, "1000", "buoy-1").await;
    assert_eq!(stored.len(), 1, "only the good message: {stored:?}");
    assert_eq!(stored[0]["SequenceNumber"], 5);
}

async fn devices_outside_the_token_scope_are_refused(backend: Backend) {
    let Some(app) = spawn_app(backend).await else {
        return;
    };
    let sub = app.create_tenant("1000", "Sea").await;
    register(&app, &sub, "buoy-sub", json!({"IridiumImei": IMEI})).await;
    register(&app, &sub, "300234063904192", json!({})).await;
    let parent_imei = "300234063904191";
    register(
        &app,
        "1000",
        "buoy-root",
        json!({"IridiumImei": parent_imei}),
    )
    .await;
    let token = gateway_token(&app, &sub, &["DeviceMessages"], "sea").await;
    let (app, address) = with_listener(app, &token).await;
    let message = |imei: &str| frame(&[header(imei, 0, 1, SESSION), element(2, b"hi")]);

    // The parent's device: outside the token's subtree.
    assert_eq!(
        exchange(address, &message(parent_imei), false).await,
        REFUSED
    );
    assert!(messages(&app, "1000", "buoy-root").await.is_empty());
    // Unknown anywhere.
    assert_eq!(
        exchange(address, &message("300234063904199"), false).await,
        REFUSED
    );
    // Its own devices: by IMEI, and one registered with the IMEI as its DeviceId.
    assert_eq!(exchange(address, &message(IMEI), false).await, ACCEPTED);
    assert_eq!(
        exchange(address, &message("300234063904192"), false).await,
        ACCEPTED
    );
    assert_eq!(messages(&app, &sub, "buoy-sub").await.len(), 1);
    assert_eq!(messages(&app, &sub, "300234063904192").await.len(), 1);
}

/// A token without `DeviceMessages`, and a revoked one: nothing stored, nothing confirmed
/// (Iridium keeps the message and sends it again).
async fn refused_tokens_store_nothing(backend: Backend) {
    let Some(app) = spawn_app(backend).await else {
        return;
    };
    register(&app, "1000", "buoy-1", json!({"IridiumImei": IMEI})).await;
    let read_only = gateway_token(&app, "1000", &["Read"], "read").await;
    let (app, address) = with_listener(app, &read_only).await;
    let message = frame(&[header(IMEI, 0, 1, SESSION), element(2, b"hi")]);
    assert!(exchange(address, &message, false).await.is_empty());

    let created = crate::api_tokens::create_token(
        &app.admin,
        "1000",
        &json!({"Name": "to-revoke", "Permissions": ["DeviceMessages"]}),
    )
    .await;
    let secret = created["Token"].as_str().unwrap().to_string();
    let id = created["TokenId"].as_str().unwrap().to_string();
    let (app, address) = with_listener(app, &secret).await;
    assert_eq!(exchange(address, &message, false).await, ACCEPTED);
    let revoked = app.admin.delete(&format!("/V2/1000/apitokens/{id}")).await;
    assert_eq!(revoked.status(), reqwest::StatusCode::OK);
    let next = frame(&[header(IMEI, 0, 2, SESSION + 1), element(2, b"after")]);
    assert!(exchange(address, &next, false).await.is_empty());
    assert_eq!(messages(&app, "1000", "buoy-1").await.len(), 1);
}
