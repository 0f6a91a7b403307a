//! Alerts: what a notification with `RaiseAlert` records, and its workflow
//! (`Open` → `Acknowledged` → `Resolved`).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub const OPEN: &str = "Open";
pub const ACKNOWLEDGED: &str = "Acknowledged";
pub const RESOLVED: &str = "Resolved";
pub const STATUSES: [&str; 3] = [OPEN, ACKNOWLEDGED, RESOLVED];
/// Longest `Resolution` text.
pub const MAX_RESOLUTION_CHARS: usize = 4000;

/// An alert. Every field is set by the server; a further match of the same notification
/// on the same device joins an `Open` or `Acknowledged` alert (`MatchCount`,
/// `LastMatchAt`) instead of raising a new one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Alert {
    #[schema(example = "12")]
    pub alert_id: Option<String>,
    pub tenant_code: Option<String>,
    pub device_id: Option<String>,
    /// Null once the notification is deleted (its name stays).
    pub notification_id: Option<String>,
    pub notification_name: Option<String>,
    /// "0" None, "1" Warning, "2" High.
    pub severity: Option<String>,
    #[schema(pattern = "^(Open|Acknowledged|Resolved)$")]
    pub status: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub raised_at: Option<Timestamp>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_match_at: Option<Timestamp>,
    pub match_count: i64,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    /// Names of the geofences the device was in.
    pub geofences: Vec<String>,
    /// The message that raised it (null for a `MissedCheckIn`).
    pub message_id: Option<String>,
    /// Raised by a message older than the device's state (it arrived late).
    pub late: bool,
    pub acknowledged_by: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub acknowledged_at: Option<Timestamp>,
    pub resolved_by: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub resolved_at: Option<Timestamp>,
    pub resolution: Option<String>,
    /// Escalation rounds sent so far.
    pub escalation_level: i64,
    #[serde(rename = "ETag")]
    pub etag: Option<String>,
}

/// The body of `POST …/alerts/{id}/resolve` (optional).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Resolution {
    /// How the alert was resolved (at most 4,000 characters).
    #[schema(max_length = 4000)]
    pub resolution: Option<String>,
}

impl Resolution {
    pub fn validated(self) -> Result<Option<String>, super::validation::ValidationErrors> {
        let mut v = super::validation::Validator::new();
        v.length(
            "Resolution",
            self.resolution.as_deref(),
            0,
            MAX_RESOLUTION_CHARS,
        );
        v.finish()?;
        Ok(self.resolution.filter(|r| !r.trim().is_empty()))
    }
}
