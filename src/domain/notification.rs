//! Event notifications: when (an `EventsExpression`) whom to notify, at tenant or group level.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::events::parse_expression;
use super::recipient::Recipient;
use super::serde_util::null_as_default;
use super::validation::Validator;

pub const SEVERITIES: [&str; 3] = ["0", "1", "2"];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct EventNotification {
    #[schema(read_only)]
    pub notification_id: Option<String>,
    #[schema(required = true, min_length = 1)]
    pub notification_name: Option<String>,
    /// Text used in messages to recipients.
    pub notification_text: Option<String>,
    #[serde(default)]
    pub notification_disabled: bool,
    #[serde(default, deserialize_with = "null_as_default")]
    pub recipients: Vec<Recipient>,
    /// When to notify, in the events grammar (see docs/events-expressions.md),
    /// e.g. `Emergency OR (Speed > 120 AND NOT Day IN (Sat, Sun))`.
    #[schema(
        required = true,
        min_length = 1,
        example = "Emergency OR MissedCheckIn"
    )]
    pub events_expression: Option<String>,
    /// Time zone of `Time`/`Day` conditions (IANA or Windows id; default UTC).
    pub time_zone_id: Option<String>,
    #[serde(default)]
    pub raise_alert: bool,
    /// "0" None, "1" Warning, "2" High.
    #[schema(example = "2", pattern = "^[012]$")]
    pub severity: Option<String>,
    /// Tenant-level only: applies to every device of this type.
    pub device_type: Option<String>,
    /// Tenant-level only: comma-separated device ids; null means all devices.
    pub devices: Option<String>,
}

/// Where a notification is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationLevel {
    Tenant,
    Group(i64),
}

impl EventNotification {
    /// Checks the rules that need no lookup into `v` (recipients and devices are checked
    /// against the store by the caller).
    pub fn validate(&self, level: NotificationLevel, v: &mut Validator) {
        if let Some(name) = v.required("NotificationName", self.notification_name.as_deref()) {
            v.length("NotificationName", Some(name), 1, 200);
        }
        v.length(
            "NotificationText",
            self.notification_text.as_deref(),
            0,
            4000,
        );
        if let Some(expression) = v.required("EventsExpression", self.events_expression.as_deref())
            && let Err(e) = parse_expression(expression)
        {
            v.add("EventsExpression", e.to_string());
        }
        v.time_zone("TimeZoneId", self.time_zone_id.as_deref());
        v.one_of("Severity", self.severity.as_deref(), &SEVERITIES);
        if let NotificationLevel::Group(_) = level {
            for (field, value) in [
                ("DeviceType", &self.device_type),
                ("Devices", &self.devices),
            ] {
                if value.is_some() {
                    v.add(field, "is only allowed on tenant-level notifications");
                }
            }
        }
    }

    /// The device ids named by `Devices`.
    pub fn device_ids(&self) -> Vec<String> {
        self.devices
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(n: &EventNotification, level: NotificationLevel) -> Vec<String> {
        let mut v = Validator::new();
        n.validate(level, &mut v);
        v.finish()
            .err()
            .map(|e| e.0.into_iter().map(|f| f.field).collect())
            .unwrap_or_default()
    }

    #[test]
    fn rules() {
        let ok = EventNotification {
            notification_name: Some("SOS".into()),
            events_expression: Some("Emergency".into()),
            severity: Some("2".into()),
            devices: Some("a, b".into()),
            ..Default::default()
        };
        assert!(fields(&ok, NotificationLevel::Tenant).is_empty());
        assert_eq!(fields(&ok, NotificationLevel::Group(1)), ["Devices"]);
        assert_eq!(ok.device_ids(), ["a", "b"]);
        let bad = EventNotification {
            events_expression: Some("Emergency AND".into()),
            severity: Some("3".into()),
            time_zone_id: Some("Nowhere".into()),
            ..Default::default()
        };
        assert_eq!(
            fields(&bad, NotificationLevel::Tenant),
            [
                "NotificationName",
                "EventsExpression",
                "TimeZoneId",
                "Severity"
            ]
        );
    }
}
