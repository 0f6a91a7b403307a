//! What a webhook receiver gets: one envelope per change (DESIGN.md §5, Standard
//! Webhooks): `{"Id","Category","Type","TenantCode","Timestamp","Data"}`. The same `Id`
//! goes to every URL and every retry, so receivers can drop duplicates.

use jiff::Timestamp;
use serde::Serialize;

use super::webhook::Category;

/// What happened to the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventType {
    Created,
    Updated,
    Deleted,
    /// A notification matched (category `EventNotification`).
    Fired,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Device => "Device",
            Category::EventNotification => "EventNotification",
            Category::MoMessage => "MoMessage",
            Category::MtMessage => "MtMessage",
            Category::Tenant => "Tenant",
            Category::User => "User",
        }
    }
}

/// One change, as POSTed to the tenant's webhook URLs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct WebhookEvent {
    pub id: String,
    pub category: &'static str,
    pub r#type: EventType,
    pub tenant_code: String,
    pub timestamp: Timestamp,
    /// The record as the API shows it (no password, no photo, no MO `File`).
    pub data: serde_json::Value,
}

impl WebhookEvent {
    pub fn new(
        category: Category,
        kind: EventType,
        tenant_code: &str,
        at: Timestamp,
        data: serde_json::Value,
    ) -> Self {
        Self {
            id: format!("evt_{}", uuid::Uuid::new_v4().simple()),
            category: category.as_str(),
            r#type: kind,
            tenant_code: tenant_code.to_string(),
            timestamp: at,
            data,
        }
    }

    /// The request body (what the signature covers).
    pub fn body(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
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
        let data =
            event_data(&serde_json::json!({"Username": "a@b.co", "Password": "x", "Photo": "y"}));
        let event = WebhookEvent::new(Category::User, EventType::Created, "1001", at, data);
        let body: serde_json::Value = serde_json::from_str(&event.body()).unwrap();
        assert_eq!(body["Category"], "User");
        assert_eq!(body["Type"], "Created");
        assert_eq!(body["TenantCode"], "1001");
        assert_eq!(body["Timestamp"], "2026-03-01T10:00:00Z");
        assert!(body["Id"].as_str().unwrap().starts_with("evt_"));
        assert_eq!(body["Data"], serde_json::json!({"Username": "a@b.co"}));
    }
}
