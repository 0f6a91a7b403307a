//! The Iridium SBD DirectIP listener over real sockets: messages written byte by byte
//! (header only, with payload, with location and payload), the confirmation once stored
//! (also for a resend, stored once), and bad input — a failed session, truncation,
//! oversize, lengths that disagree, a stalled connection — closed with nothing stored
//! while the listener goes on serving. Idle peers (issue 42): silent connections hold no
//! slot and are closed at the first-byte deadline; `--directip-allow` refuses other
//! sources, and a bad entry in it stops the server at start.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, spawn_app};
use crate::gateway_support::{gateway_token, messages, register};
use safetrack::app::AppConfig;
use safetrack::listeners::directip_listener::DirectIpConfig;

backend_fn_tests!(
    messages_written_byte_by_byte,
    a_resend_is_confirmed_and_stored_once,
    bad_input_is_closed_and_stores_nothing,
    devices_outside_the_token_scope_are_refused,
    refused_tokens_store_nothing,
    silent_connections_do_not_hold_the_slots,
    sources_outside_the_allow_list_are_refused,
);

const IMEI: &str = "300234063904190";
const SESSION: u32 = 1_772_359_200; // 2026-03-01T10:00:00Z

/// The listener's settings in these tests: it stores with `token`.
fn listener_config(token: &str) -> DirectIpConfig {
    DirectIpConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        token: token.to_string(),
        max_connections: 8,
        read_timeout: Duration::from_millis(800),
        first_byte_timeout: Duration::from_millis(800),
        allow: Vec::new(),
    }
}

/// `app` restarted with a DirectIP listener that stores with `token`.
async fn with_listener(app: TestApp, token: &str) -> (TestApp, SocketAddr) {
    with_listener_config(app, listener_config(token)).await
}

/// `app` restarted with a DirectIP listener configured so.
async fn with_listener_config(app: TestApp, directip: DirectIpConfig) -> (TestApp, SocketAddr) {
    let config = AppConfig {
        directip: Some(directip),
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

/// Issue 42: 24 connections that never send, against 2 slots, a first-byte deadline of
/// 1 s and a read deadline of 30 s. They hold no slot, so a real message is stored while
/// they are still open — long before the read deadline would have freed a slot for it —
/// and each is closed at its first-byte deadline.
async fn silent_connections_do_not_hold_the_slots(backend: Backend) {
    let Some(app) = spawn_app(backend).await else {
        return;
    };
    register(&app, "1000", "buoy-1", json!({"IridiumImei": IMEI})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "directip").await;
    let config = DirectIpConfig {
        max_connections: 2,
        read_timeout: Duration::from_secs(30),
        first_byte_timeout: Duration::from_secs(1),
        ..listener_config(&token)
    };
    let (app, address) = with_listener_config(app, config).await;
    let mut silent = Vec::new();
    for _ in 0..24 {
        silent.push(TcpStream::connect(address).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let message = frame(&[header(IMEI, 0, 1, SESSION), element(2, b"SOS")]);
    let answer = tokio::time::timeout(Duration::from_secs(10), exchange(address, &message, false))
        .await
        .expect("the message is served while silent connections are open");
    assert_eq!(answer, ACCEPTED);
    let stored = messages(&app, "1000", "buoy-1").await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["Message"], "SOS");
    // The silent ones are closed by the listener, with nothing sent.
    for stream in &mut silent {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
            .await
            .expect("a silent connection is closed at its first-byte deadline");
        assert!(read.is_err() || answer.is_empty(), "{answer:?}");
    }
}

/// A source outside `--directip-allow` is closed unread and stores nothing; one inside
/// it is served.
async fn sources_outside_the_allow_list_are_refused(backend: Backend) {
    let Some(app) = spawn_app(backend).await else {
        return;
    };
    register(&app, "1000", "buoy-1", json!({"IridiumImei": IMEI})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "directip").await;
    let elsewhere = DirectIpConfig {
        allow: vec![
            "192.0.2.0/24".parse().unwrap(),
            "2001:db8::1".parse().unwrap(),
        ],
        ..listener_config(&token)
    };
    let (app, address) = with_listener_config(app, elsewhere).await;
    let message = frame(&[header(IMEI, 0, 1, SESSION), element(2, b"refused")]);
    let mut stream = TcpStream::connect(address).await.unwrap();
    // Closed at once, before anything is read: well within the first-byte deadline.
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_millis(600), stream.read_to_end(&mut answer))
        .await
        .expect("a refused source is closed at once");
    assert!(read.is_err() || answer.is_empty(), "{answer:?}");
    assert!(exchange(address, &message, false).await.is_empty());
    assert!(messages(&app, "1000", "buoy-1").await.is_empty());

    let loopback = DirectIpConfig {
        allow: vec![
            "192.0.2.0/24".parse().unwrap(),
            "127.0.0.0/8".parse().unwrap(),
        ],
        ..listener_config(&token)
    };
    let (app, address) = with_listener_config(app, loopback).await;
    let message = frame(&[header(IMEI, 0, 2, SESSION + 1), element(2, b"served")]);
    assert_eq!(exchange(address, &message, false).await, ACCEPTED);
    let stored = messages(&app, "1000", "buoy-1").await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["Message"], "served");
}

/// A `--directip-allow` entry that is no address or network stops the server at start,
/// naming the flag and the entry; nothing is served.
#[tokio::test]
async fn a_bad_allow_entry_stops_the_server_at_start() {
    for bad in ["10.0.0.0/33", "192.0.2.0/24,iridium.example"] {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_safetrack"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(["--database-url", "sqlite::memory:"])
            .args([
                "--directip-listen",
                "127.0.0.1:0",
                "--directip-token",
                "st_x",
            ])
            .args(["--directip-allow", bad])
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(Duration::from_secs(30), output)
            .await
            .expect("the server stops at once")
            .expect("run safetrack");
        assert!(!output.status.success(), "{bad}: {:?}", output.status);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--directip-allow"), "{stderr}");
        let entry = bad.rsplit(',').next().unwrap_or(bad);
        assert!(stderr.contains(&format!("'{entry}'")), "{stderr}");
        assert!(String::from_utf8_lossy(&output.stdout).is_empty());
    }
}
