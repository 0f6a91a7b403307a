//! Mobile-terminated (MT) messages: messages and commands queued for a device
//! (docs/api.md, "Devices"). A device gateway lists the `Queued` ones and reports progress.

use jiff::Timestamp;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::ids::{DeviceId, MtMessageId, NotificationId};

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

/// A message to queue, as a client (`http::records::mt_message`) or a notification's
/// device command asks it; it is stored `Queued`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMtMessage {
    pub r#type: MtType,
    /// The text (required for `Text`).
    pub message: Option<String>,
    /// Command parameters, e.g. `{"Interval": "30"}` for a `CheckInRequest`.
    pub parameters: Map<String, Value>,
}

/// An MT message as stored, in the API's form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MtMessage {
    pub message_id: MtMessageId,
    pub device_id: DeviceId,
    pub r#type: MtType,
    pub message: Option<String>,
    pub parameters: Map<String, Value>,
    pub status: MtStatus,
    pub created_at: Timestamp,
    pub timestamp: Timestamp,
    /// The notification that queued it, if any.
    pub notification_id: Option<NotificationId>,
    #[serde(rename = "ETag")]
    pub etag: String,
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
}
