//! An MT message as clients send it: a POST queues one (`Type`, `Message`,
//! `Parameters`); a gateway's PATCH changes only its `Status`.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::mt_message::{MAX_TEXT_CHARS, MtMessage, MtStatus, MtType, NewMtMessage};
use crate::domain::record::ServerFields;
use crate::domain::validation::{ValidationErrors, Validator};

/// An MT message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "MtMessage", rename_all = "PascalCase")]
#[schema(as = MtMessage)]
pub struct MtMessageRecord {
    #[schema(read_only, example = "7")]
    pub message_id: Option<String>,
    #[schema(read_only)]
    pub device_id: Option<String>,
    /// Text, LocationRequest, CheckInRequest, ReportingFrequency, StartMonitoring,
    /// StopMonitoring, ForceStopMonitoring, StartCheckInSchedule, StopCheckInSchedule, Call.
    #[schema(
        required = true,
        example = "Text",
        pattern = "^(Text|LocationRequest|CheckInRequest|ReportingFrequency|StartMonitoring|StopMonitoring|ForceStopMonitoring|StartCheckInSchedule|StopCheckInSchedule|Call)$"
    )]
    pub r#type: Option<String>,
    /// The text (required for `Text`; at most 4,000 characters).
    #[schema(max_length = 4000)]
    pub message: Option<String>,
    /// Command parameters, e.g. `{"Interval": "30"}` for a `CheckInRequest`.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Queued, Sent, Delivered or Failed; only a PATCH changes it, forward only
    /// (`check_transition`).
    #[schema(read_only, pattern = "^(Queued|Sent|Delivered|Failed)$")]
    pub status: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub created_at: Option<Timestamp>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    /// The notification that queued it, if any.
    #[schema(read_only)]
    pub notification_id: Option<String>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
}

/// Everything but `Status` is read-only once queued.
impl ServerFields for MtMessageRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[
        "MessageId",
        "DeviceId",
        "Type",
        "Message",
        "Parameters",
        "CreatedAt",
        "Timestamp",
        "NotificationId",
        "ETag",
    ];

    fn without_read_only(mut self) -> Self {
        self.message_id = None;
        self.device_id = None;
        self.status = None;
        self.created_at = None;
        self.timestamp = None;
        self.notification_id = None;
        self.etag = None;
        self
    }
}

impl From<&MtMessage> for MtMessageRecord {
    fn from(m: &MtMessage) -> Self {
        Self {
            message_id: Some(m.message_id.to_string()),
            device_id: Some(m.device_id.to_string()),
            r#type: Some(m.r#type.to_string()),
            message: m.message.clone(),
            parameters: m.parameters.clone(),
            status: Some(m.status.to_string()),
            created_at: Some(m.created_at),
            timestamp: Some(m.timestamp),
            notification_id: m.notification_id.map(|id| id.to_string()),
            etag: Some(m.etag.clone()),
        }
    }
}

impl MtMessageRecord {
    /// A new message: checks every rule; read-only fields sent are ignored.
    pub fn validated(self) -> Result<NewMtMessage, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(t) = v.required("Type", self.r#type.as_deref()) {
            v.one_of("Type", Some(t), MtType::NAMES);
        }
        v.length("Message", self.message.as_deref(), 0, MAX_TEXT_CHARS);
        let kind = self
            .r#type
            .as_deref()
            .and_then(|t| t.parse::<MtType>().ok());
        if kind == Some(MtType::Text) && self.message.as_deref().is_none_or(|m| m.trim().is_empty())
        {
            v.add("Message", "is required for a Text message");
        }
        v.finish()?;
        let r#type = kind.ok_or_else(|| ValidationErrors::single("Type", "is required"))?;
        Ok(NewMtMessage {
            r#type,
            message: self.message,
            parameters: self.parameters,
        })
    }

    /// After a PATCH: only `Status` may have changed, to one of `MtStatus`.
    pub fn validated_status(self) -> Result<MtStatus, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(s) = v.required("Status", self.status.as_deref()) {
            v.one_of("Status", Some(s), MtStatus::NAMES);
        }
        v.finish()?;
        self.status
            .as_deref()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ValidationErrors::single("Status", "is required"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::domain::ids::{DeviceId, MtMessageId, NotificationId};

    #[test]
    fn wire_form_matches_the_domain_form() {
        let at: Timestamp = "2026-03-01T10:00:00Z".parse().unwrap();
        let message = MtMessage {
            message_id: MtMessageId::new(7),
            device_id: DeviceId::from_store("300234010753370".into()),
            r#type: MtType::CheckInRequest,
            message: Some("Check in, please".into()),
            parameters: json!({"Interval": "30"}).as_object().cloned().unwrap(),
            status: MtStatus::Sent,
            created_at: at,
            timestamp: "2026-03-01T10:05:00.123Z".parse().unwrap(),
            notification_id: Some(NotificationId::new(3)),
            etag: "\"abc\"".into(),
        };
        let domain = serde_json::to_string(&message).unwrap();
        let record: MtMessageRecord = serde_json::from_str(&domain).unwrap();
        assert_eq!(serde_json::to_string(&record).unwrap(), domain);
        assert_eq!(MtMessageRecord::from(&message), record);
    }

    #[test]
    fn a_new_message_is_checked_and_typed() {
        let queued = MtMessageRecord {
            r#type: Some("Text".into()),
            message: Some("hello".into()),
            status: Some("Delivered".into()),
            message_id: Some("9".into()),
            ..Default::default()
        }
        .validated()
        .unwrap();
        assert_eq!(queued.r#type, MtType::Text);
        assert_eq!(queued.message.as_deref(), Some("hello"));
        let errors = MtMessageRecord {
            r#type: Some("Shout".into()),
            ..Default::default()
        }
        .validated()
        .unwrap_err();
        assert_eq!(errors.0[0].field, "Type");
        let errors = MtMessageRecord {
            r#type: Some("Text".into()),
            message: Some(" ".into()),
            ..Default::default()
        }
        .validated()
        .unwrap_err();
        assert_eq!(errors.0[0].field, "Message");
        let errors = MtMessageRecord {
            status: Some("Lost".into()),
            ..Default::default()
        }
        .validated_status()
        .unwrap_err();
        assert_eq!(errors.0[0].field, "Status");
    }
}
