//! Mobile-terminated (MT) messages: messages and commands queued for a device
//! (docs/api.md, "Devices"). A device gateway lists the `Queued` ones and reports progress.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::record::ServerFields;
use super::validation::{ValidationErrors, Validator};

closed_set! {
    /// What an MT message asks of the device (`Type`).
    pub enum MtType {
        Text = "Text",
        LocationRequest = "LocationRequest",
        CheckInRequest = "CheckInRequest",
        ReportingFrequency = "ReportingFrequency",
        StartMonitoring = "StartMonitoring",
        StopMonitoring = "StopMonitoring",
        ForceStopMonitoring = "ForceStopMonitoring",
        StartCheckInSchedule = "StartCheckInSchedule",
        StopCheckInSchedule = "StopCheckInSchedule",
        Call = "Call",
    }
}

closed_set! {
    /// How far an MT message got on its way to the device.
    // Which step may follow which: `check_transition`.
    #[derive(ToSchema)]
    pub enum MtStatus {
        Queued = "Queued",
        Sent = "Sent",
        Delivered = "Delivered",
        Failed = "Failed",
    }
}
pub const MAX_TEXT_CHARS: usize = 4000;

/// An MT message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct MtMessage {
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
impl ServerFields for MtMessage {
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

impl MtMessage {
    /// A new message: checks every rule; returns it as stored (status `Queued`).
    pub fn validated(self) -> Result<MtMessage, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(t) = v.required("Type", self.r#type.as_deref()) {
            v.one_of("Type", Some(t), MtType::NAMES);
        }
        v.length("Message", self.message.as_deref(), 0, MAX_TEXT_CHARS);
        if self.r#type.as_deref() == Some(MtType::Text.as_str())
            && self.message.as_deref().is_none_or(|m| m.trim().is_empty())
        {
            v.add("Message", "is required for a Text message");
        }
        v.finish()?;
        Ok(MtMessage {
            status: Some(MtStatus::Queued.to_string()),
            ..self.without_read_only()
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

impl MtStatus {
    /// Whether a status is final: a delivered or failed message never changes again.
    pub fn is_final(self) -> bool {
        matches!(self, MtStatus::Delivered | MtStatus::Failed)
    }

    /// How far along the way to the device a status is (`Failed` ends the way anywhere).
    fn progress(self) -> Option<u8> {
        match self {
            MtStatus::Queued => Some(0),
            MtStatus::Sent => Some(1),
            MtStatus::Delivered => Some(2),
            MtStatus::Failed => None,
        }
    }
}

/// The status workflow a gateway reports through: forward only, `Queued` → `Sent` →
/// `Delivered` (a gateway that learns of the delivery first may skip `Sent`), and any
/// status that is not final → `Failed`. Reporting the current status again changes
/// nothing and is allowed (a gateway's retry). Returns why a step is refused.
pub fn check_transition(from: MtStatus, to: MtStatus) -> Result<(), String> {
    if from == to {
        return Ok(());
    }
    if from.is_final() {
        return Err(format!(
            "the message is {from}, which is final; it cannot become {to}"
        ));
    }
    if to == MtStatus::Failed {
        return Ok(());
    }
    match (from.progress(), to.progress()) {
        (Some(a), Some(b)) if b > a => Ok(()),
        _ => Err(format!(
            "the message is {from}; it cannot go back to {to} (the way is Queued, Sent, Delivered)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MtStatus::{Delivered as DELIVERED, Failed as FAILED, Queued as QUEUED, Sent as SENT};

    #[test]
    fn status_moves_forward_only_and_final_states_stay() {
        for (from, to) in [
            (QUEUED, SENT),
            (QUEUED, DELIVERED),
            (SENT, DELIVERED),
            (QUEUED, FAILED),
            (SENT, FAILED),
            (QUEUED, QUEUED),
            (SENT, SENT),
            (DELIVERED, DELIVERED),
            (FAILED, FAILED),
        ] {
            assert!(check_transition(from, to).is_ok(), "{from} -> {to}");
        }
        for (from, to) in [
            (SENT, QUEUED),
            (DELIVERED, QUEUED),
            (DELIVERED, SENT),
            (DELIVERED, FAILED),
            (FAILED, QUEUED),
            (FAILED, SENT),
            (FAILED, DELIVERED),
        ] {
            assert!(check_transition(from, to).is_err(), "{from} -> {to}");
        }
        assert!(DELIVERED.is_final() && FAILED.is_final());
        assert!(!QUEUED.is_final() && !SENT.is_final());
    }

    #[test]
    fn a_new_message_is_queued_and_checked() {
        let queued = MtMessage {
            r#type: Some("Text".into()),
            message: Some("hello".into()),
            status: Some(DELIVERED.to_string()),
            message_id: Some("9".into()),
            ..Default::default()
        }
        .validated()
        .unwrap();
        assert_eq!(queued.status.as_deref(), Some(QUEUED.as_str()));
        assert_eq!(queued.message_id, None);
        let errors = MtMessage {
            r#type: Some("Shout".into()),
            ..Default::default()
        }
        .validated()
        .unwrap_err();
        assert_eq!(errors.0[0].field, "Type");
        let errors = MtMessage {
            r#type: Some("Text".into()),
            message: Some(" ".into()),
            ..Default::default()
        }
        .validated()
        .unwrap_err();
        assert_eq!(errors.0[0].field, "Message");
        let errors = MtMessage {
            status: Some("Lost".into()),
            ..Default::default()
        }
        .validated_status()
        .unwrap_err();
        assert_eq!(errors.0[0].field, "Status");
    }
}
