//! An MT message on its way to an inReach device: what a `Garmin` delivery carries (its
//! body, written when the message is queued) and the IPC Inbound request it becomes.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::garmin::{
    InboundRequest, inbound_location_request, inbound_text, inbound_tracking_interval,
};

/// The sender name a text shows on the device unless the MT message's `Parameters.Sender`
/// names one.
pub const DEFAULT_SENDER: &str = "safetrack";

/// Whether MT messages for a device go to Garmin: an inReach (`DeviceType` starting with
/// `InReach`, any case) with an `IridiumImei`.
pub fn is_inreach(device_type: &str, iridium_imei: Option<&str>) -> bool {
    device_type.to_ascii_lowercase().starts_with("inreach")
        && iridium_imei.is_some_and(|imei| !imei.trim().is_empty())
}

/// What a `Garmin` delivery carries: the MT message to send.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GarminMt {
    pub mt_message_id: i64,
    pub device_id: String,
    pub r#type: String,
    pub message: Option<String>,
    #[serde(default)]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    pub queued_at: Timestamp,
}

impl GarminMt {
    /// The Inbound request for this message to `imei`, or why Garmin cannot carry it.
    pub fn request(&self, imei: &str) -> Result<InboundRequest, String> {
        let parameter = |name: &str| {
            self.parameters
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| value)
        };
        let result = match self.r#type.as_str() {
            "Text" => {
                let sender = parameter("Sender")
                    .and_then(|v| v.as_str())
                    .unwrap_or(DEFAULT_SENDER);
                inbound_text(
                    imei,
                    sender,
                    self.message.as_deref().unwrap_or_default(),
                    self.queued_at,
                )
            }
            "LocationRequest" => inbound_location_request(imei),
            "ReportingFrequency" => {
                let minutes = parameter("Interval")
                    .and_then(|v| match v {
                        serde_json::Value::Number(n) => n.as_u64(),
                        serde_json::Value::String(s) => s.trim().parse().ok(),
                        _ => None,
                    })
                    .and_then(|m| u32::try_from(m).ok())
                    .ok_or("ReportingFrequency needs Parameters.Interval in minutes")?;
                inbound_tracking_interval(imei, minutes)
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
