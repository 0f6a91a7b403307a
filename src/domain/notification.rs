//! Event notifications: when (an `EventsExpression`) whom to notify, at tenant or group level.

use serde::{Deserialize, Serialize};

use super::closed_set::closed_set;
use super::ids::{EscalationPolicyId, GroupId, NotificationId};
use super::recipient::Recipient;
use super::serde_util::null_as_default;

closed_set! {
    /// How serious a notification's match is (`Severity`, stored and sent as its digit).
    #[derive(Default)]
    pub enum Severity {
        /// "0"; also a notification saved without one.
        #[default]
        Info = "0",
        Warning = "1",
        High = "2",
    }
}

impl Severity {
    /// The word messages show: Info, Warning, High.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Info => "Info",
            Severity::Warning => "Warning",
            Severity::High => "High",
        }
    }

    /// Whether an unacknowledged alert of this severity escalates (Warning and High).
    pub fn escalates(self) -> bool {
        self != Severity::Info
    }
}

/// An event notification, checked: its expression parses, its time zone resolves, its
/// recipients and device filters follow their rules. Texts are kept as the client sent
/// them (the API shows them back so). Stored as this document, with `NotificationId`
/// null (the row's id is the id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EventNotification {
    /// Set when the notification is shown (`None` as stored).
    pub notification_id: Option<NotificationId>,
    pub notification_name: String,
    pub notification_text: Option<String>,
    #[serde(default)]
    pub notification_disabled: bool,
    #[serde(default, deserialize_with = "null_as_default")]
    pub recipients: Vec<Recipient>,
    /// Parses (`events::parse_expression`).
    pub events_expression: String,
    /// Resolves (`time::resolve_time_zone`); `None`: UTC.
    pub time_zone_id: Option<String>,
    #[serde(default)]
    pub raise_alert: bool,
    /// `None`: not given (`Info`, see `severity()`).
    pub severity: Option<Severity>,
    pub device_type: Option<String>,
    /// Comma-separated device ids of the tenant (`device_ids()`); blank or `None`: all.
    pub devices: Option<String>,
    /// The escalation policy its alerts follow (visible from its tenant when written;
    /// only with `raise_alert`); `None`: the tenant default (docs/monitoring.md).
    /// Documents written before issue 45 have none.
    #[serde(default)]
    pub escalation_policy_id: Option<EscalationPolicyId>,
    /// The notification's version: the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

impl EventNotification {
    /// The severity its alerts get (`Info` when none was given).
    pub fn severity(&self) -> Severity {
        self.severity.unwrap_or_default()
    }

    /// The distinct device ids named by `Devices`, in their first order.
    pub fn device_ids(&self) -> Vec<String> {
        device_ids(self.devices.as_deref())
    }
}

/// Where a notification is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationLevel {
    Tenant,
    Group(GroupId),
}

/// Most device ids one notification may list (each is looked up on every write; larger
/// sets are what `DeviceType` and group-level notifications are for).
pub const MAX_DEVICES: usize = 1000;
pub use super::recipient::MAX_RECIPIENTS;

/// The distinct device ids a `Devices` text names, in their first order (blank entries
/// name nothing).
pub fn device_ids(devices: Option<&str>) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for id in devices.unwrap_or_default().split(',') {
        let id = id.trim();
        if !id.is_empty() && !ids.iter().any(|seen| seen == id) {
            ids.push(id.to_string());
        }
    }
    ids
}

/// The rules of a notification's device filters that are domain knowledge: what is
/// wrong with a tenant-level `DeviceType` (given the tenant's `DeviceTypes`, empty: any)
/// and `Devices` text, as (field, message).
pub fn device_filter_problems(
    device_type: Option<&str>,
    devices: Option<&str>,
    device_types: &[String],
) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    if let Some(t) = device_type.filter(|t| !t.is_empty())
        && !device_types.is_empty()
        && !device_types.iter().any(|a| a == t)
    {
        problems.push((
            "DeviceType",
            format!(
                "must be one of the tenant's device types: {}",
                device_types.join(", ")
            ),
        ));
    }
    // A blank `Devices` means all devices, like null; otherwise no entry may be empty
    // (`a,,b` is more likely a mistake than a wish).
    let Some(devices) = devices.filter(|d| !d.trim().is_empty()) else {
        return problems;
    };
    if let Some(n) = devices.split(',').position(|d| d.trim().is_empty()) {
        problems.push(("Devices", format!("entry {} is empty", n + 1)));
    }
    let count = device_ids(Some(devices)).len();
    if count > MAX_DEVICES {
        problems.push((
            "Devices",
            format!("at most {MAX_DEVICES} devices (got {count})"),
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_ids_are_distinct_and_trimmed() {
        assert_eq!(device_ids(Some("b, a,b")), ["b", "a"]);
        assert_eq!(device_ids(Some(" ")), Vec::<String>::new());
        assert_eq!(device_ids(None), Vec::<String>::new());
    }

    #[test]
    fn a_stored_document_reads_back() {
        let doc = r#"{"NotificationId":null,"NotificationName":"SOS","NotificationText":null,
            "NotificationDisabled":false,"Recipients":[],"EventsExpression":"Emergency",
            "TimeZoneId":null,"RaiseAlert":true,"Severity":"2","DeviceType":null,"Devices":null,
            "EscalationPolicyId":"4"}"#;
        let n: EventNotification = serde_json::from_str(doc).expect("reads");
        assert_eq!(n.severity(), Severity::High);
        assert_eq!(n.notification_id, None);
        let back = serde_json::to_value(&n).expect("serialises");
        let doc: serde_json::Value = serde_json::from_str(doc).expect("json");
        assert_eq!(back, doc);
        assert_eq!(n.escalation_policy_id, Some(EscalationPolicyId::new(4)));
    }

    #[test]
    fn a_document_from_before_escalation_policies_reads_without_one() {
        let doc = r#"{"NotificationName":"SOS","EventsExpression":"Emergency","Severity":"1"}"#;
        let n: EventNotification = serde_json::from_str(doc).expect("reads");
        assert_eq!(n.escalation_policy_id, None);
    }
}
