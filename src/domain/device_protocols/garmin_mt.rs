//! MT back to inReach devices through Garmin's IPC Inbound API, as Garmin's "Developer
//! Guide for IPC Inbound" (v3.1.1, 2024-10-10, "IPCv2 Endpoints") describes it: what a
//! `Garmin` delivery carries (its body, written when the MT message is queued) and the
//! request it becomes.
//!
//! Paths are relative to the tenant's Inbound base URL (`--garmin-inbound-url`: the
//! "Inbound URL" of Explore → Admin Controls → Portal Connect → Inbound Settings, with
//! `/api/`, e.g. `https://ipcinbound.inreachapp.com/api/`); every request is a POST of
//! JSON with the API key in `X-API-Key` (`channels/garmin.rs`).
//!
//! | MT `Type` | Request | Body |
//! |---|---|---|
//! | `Text` | `Messaging/Message` ([`inbound_text`]) | `{"Messages":[{"Recipients":[imei],"Sender":…,"Timestamp":"/Date(ms)/","Message":…}]}` |
//! | `LocationRequest` | `Location/SendLocationRequest` ([`inbound_location_request`]) | `{"IMEI":[imei]}` |
//! | `ReportingFrequency` | `Tracking/Interval` ([`inbound_tracking_interval`]) | `{"Devices":[{"Imei":imei,"Interval":seconds}]}` |
//!
//! IMEIs go as JSON numbers (the guide's `integer(64)`), dates as `/Date(ms)/` (Unix
//! milliseconds, UTC; the guide's JSON writes the slashes escaped, `"\/Date(…)\/"`, the
//! same string). The guide's limits, checked here so that a message Garmin would refuse
//! (422) fails at once instead of being retried: a text of 1 to 160 characters; a sender
//! that is an email address or a phone number (`Parameters.Sender`, else
//! `--garmin-inbound-sender`); a tracking interval of 30 to 65,535 seconds (the MT
//! message's `Parameters.Interval` or `Parameters.ReportingFrequency`, in minutes as
//! everywhere in the API: 1 to 1,092).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::domain::ids::{DeviceId, MtMessageId};
use crate::domain::mt_message::MtType;

/// Whether MT messages for a device go to Garmin: an inReach (`DeviceType` starting with
/// `InReach`, any case) with an `IridiumImei`.
pub fn is_inreach(device_type: &str, iridium_imei: Option<&str>) -> bool {
    device_type.to_ascii_lowercase().starts_with("inreach")
        && iridium_imei.is_some_and(|imei| !imei.trim().is_empty())
}

/// An IPC Inbound call: POST `body` (JSON) to `path` under the Inbound base URL.
#[derive(Debug, Clone, PartialEq)]
pub struct InboundRequest {
    pub path: &'static str,
    pub body: Value,
}

/// Why an MT message cannot go to Garmin as asked (Garmin would answer 422).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InboundError {
    #[error("the device's IMEI `{0}` is not 15 digits")]
    Imei(String),
    #[error("the text is empty")]
    EmptyText,
    #[error("the text is {0} characters; Garmin takes at most {MAX_TEXT_CHARS}")]
    TextTooLong(usize),
    #[error(
        "Garmin needs the sender as an email address or phone number (`Parameters.Sender` or --garmin-inbound-sender), not `{0}`"
    )]
    Sender(String),
    #[error(
        "the tracking interval must be {MIN_INTERVAL_SECONDS} to {MAX_INTERVAL_SECONDS} seconds (1 to 1,092 minutes)"
    )]
    Interval,
}

/// Longest text Garmin's Messaging service takes.
pub const MAX_TEXT_CHARS: usize = 160;
/// Tracking intervals Garmin takes, in seconds.
pub const MIN_INTERVAL_SECONDS: u32 = 30;
pub const MAX_INTERVAL_SECONDS: u32 = 65_535;

fn imei_number(imei: &str) -> Result<u64, InboundError> {
    let imei = imei.trim();
    if imei.len() != 15 || !imei.bytes().all(|b| b.is_ascii_digit()) {
        return Err(InboundError::Imei(imei.to_string()));
    }
    imei.parse()
        .map_err(|_| InboundError::Imei(imei.to_string()))
}

/// An email address (`local@domain.tld`, no spaces) or a phone number (an optional `+`,
/// then 7 to 15 digits): what Garmin takes as a text's sender.
pub fn is_valid_sender(sender: &str) -> bool {
    let phone = sender.strip_prefix('+').unwrap_or(sender);
    if (7..=15).contains(&phone.len()) && phone.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    match sender.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.contains('@')
                && domain
                    .split('.')
                    .all(|label| !label.is_empty() && !label.starts_with('-'))
                && domain.contains('.')
                && !sender.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    }
}

/// A text message to the device from `sender` (the address the device shows and replies
/// to), sent at `at`.
pub fn inbound_text(
    imei: &str,
    sender: &str,
    text: &str,
    at: Timestamp,
) -> Result<InboundRequest, InboundError> {
    let imei = imei_number(imei)?;
    if text.trim().is_empty() {
        return Err(InboundError::EmptyText);
    }
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(InboundError::TextTooLong(chars));
    }
    let sender = sender.trim();
    if !is_valid_sender(sender) {
        return Err(InboundError::Sender(sender.to_string()));
    }
    Ok(InboundRequest {
        path: "Messaging/Message",
        body: json!({"Messages": [{
            "Recipients": [imei],
            "Sender": sender,
            "Timestamp": format!("/Date({})/", at.as_millisecond()),
            "Message": text,
        }]}),
    })
}

/// Asks the device for its location (it answers with a Locate Response, code 2).
pub fn inbound_location_request(imei: &str) -> Result<InboundRequest, InboundError> {
    let imei = imei_number(imei)?;
    Ok(InboundRequest {
        path: "Location/SendLocationRequest",
        body: json!({"IMEI": [imei]}),
    })
}

/// Sets the device's tracking interval, in seconds.
pub fn inbound_tracking_interval(imei: &str, seconds: u32) -> Result<InboundRequest, InboundError> {
    let imei = imei_number(imei)?;
    if !(MIN_INTERVAL_SECONDS..=MAX_INTERVAL_SECONDS).contains(&seconds) {
        return Err(InboundError::Interval);
    }
    Ok(InboundRequest {
        path: "Tracking/Interval",
        body: json!({"Devices": [{"Imei": imei, "Interval": seconds}]}),
    })
}

/// What a `Garmin` delivery carries: the MT message to send. Stored in the delivery's
/// body, so its form stays readable: `MtMessageId` a JSON number, `DeviceId` text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GarminMt {
    #[serde(with = "id_number")]
    pub mt_message_id: MtMessageId,
    pub device_id: DeviceId,
    pub r#type: MtType,
    pub message: Option<String>,
    #[serde(default)]
    pub parameters: serde_json::Map<String, Value>,
    pub queued_at: Timestamp,
}

impl GarminMt {
    /// The Inbound request for this message to `imei` (a text's sender: its
    /// `Parameters.Sender`, else `default_sender`), or why Garmin cannot carry it.
    pub fn request(
        &self,
        imei: &str,
        default_sender: Option<&str>,
    ) -> Result<InboundRequest, String> {
        let parameter = |name: &str| {
            self.parameters
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| value)
        };
        let result = match self.r#type {
            MtType::Text => {
                let sender = parameter("Sender")
                    .and_then(Value::as_str)
                    .or(default_sender)
                    .unwrap_or_default();
                inbound_text(
                    imei,
                    sender,
                    self.message.as_deref().unwrap_or_default(),
                    self.queued_at,
                )
            }
            MtType::LocationRequest => inbound_location_request(imei),
            MtType::ReportingFrequency => {
                let minutes = parameter("Interval")
                    .or_else(|| parameter("ReportingFrequency"))
                    .and_then(|v| match v {
                        Value::Number(n) => n.as_u64(),
                        Value::String(s) => s.trim().parse().ok(),
                        _ => None,
                    })
                    .ok_or("ReportingFrequency needs Parameters.Interval in minutes")?;
                let seconds = minutes
                    .checked_mul(60)
                    .and_then(|s| u32::try_from(s).ok())
                    .unwrap_or(u32::MAX);
                inbound_tracking_interval(imei, seconds)
            }
            other => {
                return Err(format!(
                    "Garmin IPC Inbound has no request for an MT message of type {other}"
                ));
            }
        };
        result.map_err(|e| e.to_string())
    }
}

/// An `MtMessageId` as the JSON number a delivery body holds.
mod id_number {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::domain::ids::MtMessageId;

    pub fn serialize<S: Serializer>(id: &MtMessageId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(id.get())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<MtMessageId, D::Error> {
        i64::deserialize(d).map(MtMessageId::new)
    }
}

#[cfg(test)]
#[path = "garmin_mt_tests.rs"]
mod tests;
