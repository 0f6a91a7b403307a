//! What the gateway tests share: a gateway token, devices with gateway identifiers, and
//! what a device has stored.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::TestApp;

/// A gateway credential for `tenant` whose holder has `role` (`User` may post MO
/// messages, `ReadOnly` may not); `label` keeps the holders apart.
pub async fn gateway_token(app: &TestApp, tenant: &str, role: &str, label: &str) -> String {
    let email = format!("gateway-{label}@safetrack.test");
    app.create_user(tenant, &email, role).await;
    format!("{email}:{}", crate::common::PASSWORD)
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
