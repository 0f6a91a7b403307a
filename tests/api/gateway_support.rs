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
