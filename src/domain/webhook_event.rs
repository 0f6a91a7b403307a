//! What a webhook receiver gets: one envelope per change (docs/api.md, Standard
//! Webhooks): `{"Id","Category","Type","TenantCode","Timestamp","Data"}`. The same `Id`
//! goes to every URL and every retry, so receivers can drop duplicates.

use jiff::Timestamp;
use serde::Serialize;

use super::closed_set::closed_set;
use super::ids::{DeviceId, MoMessageId, NotificationId};
use super::mo_message::{MoMessage, MoMessageEventData};
use super::webhook::Category;
use crate::domain::ids::TenantCode;

closed_set! {
    /// What happened to the record (the envelope's `Type`).
    pub enum EventType {
        Created = "Created",
        Updated = "Updated",
        Deleted = "Deleted",
        /// A notification matched (category `EventNotification`).
        Fired = "Fired",
    }
}

/// One change, as POSTed to the tenant's webhook URLs: the envelope is rendered once,
/// when the event is made, and every URL and every retry sends these bytes — except a
/// stored MO message's `Created` event (`for_stored_message`), whose envelope is rendered
/// from the stored message whenever it is read (`message_event_body`), so ingest does
/// not write every message twice.
#[derive(Debug, Clone)]
pub struct WebhookEvent {
    pub id: String,
    pub at: Timestamp,
    /// The device the change concerns, if any (kept on the delivery for filtering).
    pub device_id: Option<DeviceId>,
    /// The request body (what the signature covers); empty when rendered on reading.
    pub body: String,
    /// The stored MO message this event's `Data` is rendered from.
    pub message_id: Option<MoMessageId>,
    /// The notification that fired (`EventNotification` events): kept on the delivery,
    /// which is then sent by the alerting loop with people's channels.
    pub notification_id: Option<NotificationId>,
}

/// The envelope as serialised: `Data` borrowed, so a record is written straight into
/// the body without an intermediate JSON value.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Envelope<'a, T: Serialize> {
    id: &'a str,
    category: &'static str,
    r#type: EventType,
    tenant_code: &'a TenantCode,
    timestamp: Timestamp,
    data: &'a T,
}

impl WebhookEvent {
    /// An event whose `Data` is `data` serialised as it is (the caller has left out what
    /// must never leave; see `event_data`).
    pub fn new<T: Serialize>(
        category: Category,
        kind: EventType,
        tenant_code: &TenantCode,
        at: Timestamp,
        data: &T,
        device_id: Option<DeviceId>,
    ) -> Self {
        let id = new_event_id();
        let body = render(&id, category, kind, tenant_code, at, data);
        Self {
            id,
            at,
            device_id,
            body,
            message_id: None,
            notification_id: None,
        }
    }

    /// The `MoMessage`/`Created` event of stored message `message_id`: its body is
    /// rendered from the stored message when the delivery is read (`message_event_body`).
    pub fn for_stored_message(
        at: Timestamp,
        message_id: MoMessageId,
        device_id: &DeviceId,
    ) -> Self {
        Self {
            id: new_event_id(),
            at,
            device_id: Some(device_id.clone()),
            body: String::new(),
            message_id: Some(message_id),
            notification_id: None,
        }
    }

    /// An event whose `Data` is a record made by `event_data`; its `DeviceId` (if it
    /// has one, a stored device's) is the device the event concerns.
    pub fn from_value(
        category: Category,
        kind: EventType,
        tenant_code: &TenantCode,
        at: Timestamp,
        data: serde_json::Value,
    ) -> Self {
        let device_id = data
            .get("DeviceId")
            .and_then(|d| d.as_str())
            .map(|d| DeviceId::from_store(d.to_string()));
        Self::new(category, kind, tenant_code, at, &data, device_id)
    }
}

fn new_event_id() -> String {
    format!("evt_{}", uuid::Uuid::new_v4().simple())
}

fn render<T: Serialize>(
    id: &str,
    category: Category,
    kind: EventType,
    tenant_code: &TenantCode,
    at: Timestamp,
    data: &T,
) -> String {
    serde_json::to_string(&Envelope {
        id,
        category: category.as_str(),
        r#type: kind,
        tenant_code,
        timestamp: at,
        data,
    })
    .unwrap_or_default()
}

/// The body of a stored message's `Created` event (`WebhookEvent::for_stored_message`):
/// the same bytes on every read, so every retry carries the same signature. `message`
/// is the stored message as the API shows it (None: deleted since; `Data` is then null).
pub fn message_event_body(
    event_id: &str,
    tenant_code: &TenantCode,
    at: Timestamp,
    message: Option<&MoMessage>,
) -> String {
    let data = message.and_then(|m| {
        Some(MoMessageEventData::new(
            m,
            m.message_id?,
            m.device_id.as_deref()?,
            m.received_at_server?,
            &m.containing_geofences,
            m.etag.as_deref()?,
        ))
    });
    render(
        event_id,
        Category::MoMessage,
        EventType::Created,
        tenant_code,
        at,
        &data,
    )
}

/// A record as an event's `Data`: its API form, without what must never leave (the
/// user's `Password` and `Photo`, an MO message's `File` and `Attachment`).
pub fn event_data<T: Serialize>(record: &T) -> serde_json::Value {
    let mut value = serde_json::to_value(record).unwrap_or(serde_json::Value::Null);
    if let Some(fields) = value.as_object_mut() {
        for secret in ["Password", "Photo", "File", "Attachment"] {
            fields.remove(secret);
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_shape_and_redaction() {
        let at: Timestamp = "2026-03-01T10:00:00Z".parse().unwrap();
        let code: TenantCode = "1001".parse().unwrap();
        let data =
            event_data(&serde_json::json!({"Username": "a@b.co", "Password": "x", "Photo": "y"}));
        let event = WebhookEvent::from_value(Category::User, EventType::Created, &code, at, data);
        let body: serde_json::Value = serde_json::from_str(&event.body).unwrap();
        assert_eq!(body["Category"], "User");
        assert_eq!(body["Type"], "Created");
        assert_eq!(body["TenantCode"], "1001");
        assert_eq!(body["Timestamp"], "2026-03-01T10:00:00Z");
        assert!(body["Id"].as_str().unwrap().starts_with("evt_"));
        assert_eq!(body["Data"], serde_json::json!({"Username": "a@b.co"}));
    }
}

/// The signing key of a Standard Webhooks secret: the Base64 after `whsec_` when the
/// secret has that prefix (and it decodes), else the secret's UTF-8 bytes.
pub fn signing_key(secret: &str) -> Vec<u8> {
    use base64::Engine as _;
    secret
        .strip_prefix("whsec_")
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

/// The `webhook-signature` header value: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`
/// (Standard Webhooks), so receivers verify with its libraries.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &str) -> String {
    use base64::Engine as _;
    use hmac::{Hmac, Mac};
    let key = signing_key(secret);
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    let mut mac = match <Hmac<sha2::Sha256> as Mac>::new_from_slice(&key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of any length"),
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    let tag = mac.finalize().into_bytes();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag)
    )
}

#[cfg(test)]
mod signature_tests {
    use super::*;

    /// The example of the Standard Webhooks specification (and its libraries' tests).
    #[test]
    fn signs_like_the_standard_webhooks_reference() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            sign(secret, id, 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_plain_secret_is_its_bytes() {
        assert_eq!(signing_key("not-base64-secret"), b"not-base64-secret");
        assert_eq!(signing_key("whsec_AAEC"), vec![0, 1, 2]);
        assert_eq!(signing_key("whsec_!!"), b"whsec_!!", "undecodable: bytes");
    }
}
