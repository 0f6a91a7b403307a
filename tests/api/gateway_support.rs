//! What the gateway tests share: a gateway token, devices with gateway identifiers, and
//! what a device has stored.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::TestApp;

/// An API token of `tenant` with `permissions` (`DeviceMessages` to post MO messages),
/// made by the administrator; `label` names it.
pub async fn gateway_token(
    app: &TestApp,
    tenant: &str,
    permissions: &[&str],
    label: &str,
) -> String {
    let created = crate::api_tokens::create_token(
        &app.admin,
        tenant,
        &json!({"Name": format!("gateway-{label}"), "Permissions": permissions}),
    )
    .await;
    created["Token"]
        .as_str()
        .expect("the token's secret")
        .to_string()
}

/// Registers a device with the given extra fields (`IridiumImei`, `SecondaryDeviceId`).
pub async fn register(app: &TestApp, tenant: &str, device_id: &str, extra: Value) {
    let mut body = json!({"DeviceId": device_id, "DeviceType": "InReach"});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "register {device_id}");
}

/// The device's stored messages, oldest first.
pub async fn messages(app: &TestApp, tenant: &str, device_id: &str) -> Vec<Value> {
    let list = app
        .admin
        .get_json(&format!(
            "/V2/{tenant}/devices/{device_id}/momessages?includeFile=true"
        ))
        .await;
    list.as_array().cloned().unwrap_or_default()
}

/// The device record (its state: `EmergencyState`, `LastPosition`, …).
pub async fn device(app: &TestApp, tenant: &str, device_id: &str) -> Value {
    app.admin
        .get_json(&format!("/V2/{tenant}/devices/{device_id}"))
        .await
}

/// The tenant's alerts.
pub async fn alerts(app: &TestApp, tenant: &str) -> Vec<Value> {
    app.admin
        .get_json(&format!("/V2/{tenant}/alerts"))
        .await
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `app` restarted with a DirectIP listener that stores with `token`; its address.
pub async fn with_directip(app: TestApp, token: &str) -> (TestApp, std::net::SocketAddr) {
    use std::time::Duration;
    let config = safetrack::app::AppConfig {
        directip: Some(safetrack::listeners::directip_listener::DirectIpConfig {
            listen: "127.0.0.1:0".parse().expect("an address"),
            token: token.to_string(),
            max_connections: 8,
            read_timeout: Duration::from_secs(5),
            first_byte_timeout: Duration::from_secs(5),
            allow: Vec::new(),
        }),
        ..safetrack::app::AppConfig::default()
    };
    let app = app.restart_with(config).await;
    let address = app.directip.expect("a DirectIP listener");
    (app, address)
}

/// DirectIP's confirmation of a stored message (a refused one is `[.., 0]`).
pub const DIRECTIP_ACCEPTED: [u8; 7] = [1, 0, 4, 5, 0, 1, 1];
pub const DIRECTIP_REFUSED: [u8; 7] = [1, 0, 4, 5, 0, 1, 0];

/// A DirectIP MO message from `imei` (MOMSN `momsn`, session 2026-03-01T10:00:00Z) with
/// `text` as its payload.
pub fn directip_message(imei: &str, momsn: u16, text: &[u8]) -> Vec<u8> {
    let element = |iei: u8, data: &[u8]| {
        let mut bytes = vec![iei];
        let length = u16::try_from(data.len()).expect("a short element");
        bytes.extend_from_slice(&length.to_be_bytes());
        bytes.extend_from_slice(data);
        bytes
    };
    let mut header = 7u32.to_be_bytes().to_vec();
    header.extend_from_slice(imei.as_bytes());
    header.push(0);
    header.extend_from_slice(&momsn.to_be_bytes());
    header.extend_from_slice(&0u16.to_be_bytes());
    header.extend_from_slice(&1_772_359_200u32.to_be_bytes());
    let body = [element(1, &header), element(2, text)].concat();
    let mut frame = vec![1];
    let length = u16::try_from(body.len()).expect("a short message");
    frame.extend_from_slice(&length.to_be_bytes());
    frame.extend_from_slice(&body);
    frame
}

/// Sends a DirectIP message and reads what the listener answers until it closes.
pub async fn directip_send(address: std::net::SocketAddr, bytes: &[u8]) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream.write_all(bytes).await.expect("write");
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), read).await;
    answer
}

/// Sends `head` (a request line and headers, `\r\n\r\n` included) and then `body` —
/// perhaps less than its `Content-Length` — over a raw connection, and reads the
/// answer's head; `None` if none came within `wait`.
pub async fn raw_request_head(
    base: &str,
    head: &str,
    body: &[u8],
    wait: std::time::Duration,
) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream.write_all(head.as_bytes()).await.expect("head");
    stream.write_all(body).await.expect("body");
    let read_head = async {
        let mut answer = Vec::new();
        let mut chunk = [0u8; 1024];
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..n]);
        }
        Some(String::from_utf8_lossy(&answer).into_owned())
    };
    tokio::time::timeout(wait, read_head).await.ok().flatten()
}
