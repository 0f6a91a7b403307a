//! Event notifications: when (an `EventsExpression`) whom to notify, at tenant or group level.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::events::parse_expression;
use std::collections::HashSet;

use super::recipient::{Recipient, RecipientReference, check_recipient_count, validate_recipients};
use super::record::ServerFields;
use super::serde_util::null_as_default;
use super::validation::{ValidationErrors, Validator};

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
    /// The severity a stored record names (missing: `Info`; records are validated
    /// when written, so nothing else is stored).
    pub fn of_stored(text: Option<&str>) -> Severity {
        text.and_then(|t| t.parse().ok()).unwrap_or_default()
    }

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
    #[schema(nullable)]
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
    /// Tenant-level only: applies to every device of this type (one of the tenant's
    /// `DeviceTypes` when the tenant lists any).
    pub device_type: Option<String>,
    /// Tenant-level only: comma-separated ids of devices of the tenant (at most 1000,
    /// no empty entries); null or blank means all devices.
    pub devices: Option<String>,
    /// The notification's version: the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

impl ServerFields for EventNotification {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["NotificationId"];

    fn without_read_only(mut self) -> Self {
        self.notification_id = None;
        self.etag = None;
        self
    }
}

/// Where a notification is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationLevel {
    Tenant,
    Group(i64),
}

/// Most device ids one notification may list (each is looked up on every write; larger
/// sets are what `DeviceType` and group-level notifications are for).
pub const MAX_DEVICES: usize = 1000;
pub use super::recipient::MAX_RECIPIENTS;

impl EventNotification {
    /// Checks every rule; returns the notification as stored and the references its
    /// recipients make (the store resolves them in the writing transaction).
    /// `device_types` is the tenant's `DeviceTypes` list (empty: any type); `known_devices`
    /// which of `device_ids()` are devices of the tenant.
    pub fn validated(
        self,
        level: NotificationLevel,
        device_types: &[String],
        known_devices: &HashSet<String>,
    ) -> Result<(EventNotification, Vec<RecipientReference>), ValidationErrors> {
        let mut v = Validator::new();
        self.check_rules(level, device_types, &mut v);
        let references = if self.recipients.len() <= MAX_RECIPIENTS {
            validate_recipients(&self.recipients, &mut v)
        } else {
            Vec::new()
        };
        if level == NotificationLevel::Tenant {
            let ids = self.device_ids();
            if ids.len() <= MAX_DEVICES {
                for device in ids.iter().filter(|d| !known_devices.contains(*d)) {
                    v.add("Devices", format!("no device '{device}' in this tenant"));
                }
            }
        }
        v.finish()?;
        Ok((self.without_read_only(), references))
    }

    fn check_rules(&self, level: NotificationLevel, device_types: &[String], v: &mut Validator) {
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
        v.one_of("Severity", self.severity.as_deref(), Severity::NAMES);
        check_recipient_count(&self.recipients, v);
        match level {
            NotificationLevel::Group(_) => {
                for (field, value) in [
                    ("DeviceType", &self.device_type),
                    ("Devices", &self.devices),
                ] {
                    if value.is_some() {
                        v.add(field, "is only allowed on tenant-level notifications");
                    }
                }
            }
            NotificationLevel::Tenant => self.validate_device_filters(device_types, v),
        }
    }

    fn validate_device_filters(&self, device_types: &[String], v: &mut Validator) {
        if let Some(t) = self.device_type.as_deref().filter(|t| !t.is_empty())
            && !device_types.is_empty()
            && !device_types.iter().any(|a| a == t)
        {
            v.add(
                "DeviceType",
                format!(
                    "must be one of the tenant's device types: {}",
                    device_types.join(", ")
                ),
            );
        }
        // A blank `Devices` means all devices, like null; otherwise no entry may be empty
        // (`a,,b` is more likely a mistake than a wish).
        let Some(devices) = self.devices.as_deref().filter(|d| !d.trim().is_empty()) else {
            return;
        };
        if let Some(n) = devices.split(',').position(|d| d.trim().is_empty()) {
            v.add("Devices", format!("entry {} is empty", n + 1));
        }
        let count = self.device_ids().len();
        if count > MAX_DEVICES {
            v.add(
                "Devices",
                format!("at most {MAX_DEVICES} devices (got {count})"),
            );
        }
    }

    /// The distinct device ids named by `Devices`, in their first order.
    pub fn device_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for id in self.devices.as_deref().unwrap_or_default().split(',') {
            let id = id.trim();
            if !id.is_empty() && !ids.iter().any(|seen| seen == id) {
                ids.push(id.to_string());
            }
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields_with(
        n: &EventNotification,
        level: NotificationLevel,
        device_types: &[String],
    ) -> Vec<String> {
        n.clone()
            .validated(level, device_types, &n.device_ids().into_iter().collect())
            .err()
            .map(|e| e.0.into_iter().map(|f| f.field).collect())
            .unwrap_or_default()
    }

    fn fields(n: &EventNotification, level: NotificationLevel) -> Vec<String> {
        fields_with(n, level, &[])
    }

    fn sos() -> EventNotification {
        EventNotification {
            notification_name: Some("SOS".into()),
            events_expression: Some("Emergency".into()),
            ..Default::default()
        }
    }

    #[test]
    fn rules() {
        let ok = EventNotification {
            severity: Some("2".into()),
            devices: Some("a, b".into()),
            ..sos()
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
        for severity in ["0", "1", "2"] {
            let n = EventNotification {
                severity: Some(severity.into()),
                ..sos()
            };
            assert!(fields(&n, NotificationLevel::Tenant).is_empty());
        }
        for severity in ["3", "", "High", " 1"] {
            let n = EventNotification {
                severity: Some(severity.into()),
                ..sos()
            };
            assert_eq!(fields(&n, NotificationLevel::Tenant), ["Severity"]);
        }
    }

    #[test]
    fn device_filters() {
        let types = ["InReach".to_string(), "Spot".to_string()];
        let typed = |t: &str| EventNotification {
            device_type: Some(t.into()),
            ..sos()
        };
        assert!(fields_with(&typed("Spot"), NotificationLevel::Tenant, &types).is_empty());
        assert!(fields_with(&typed(""), NotificationLevel::Tenant, &types).is_empty());
        assert!(fields(&typed("Anything"), NotificationLevel::Tenant).is_empty());
        assert_eq!(
            fields_with(&typed("spot"), NotificationLevel::Tenant, &types),
            ["DeviceType"]
        );
        let listed = |d: &str| EventNotification {
            devices: Some(d.into()),
            ..sos()
        };
        assert!(fields(&listed(""), NotificationLevel::Tenant).is_empty());
        assert!(fields(&listed("  "), NotificationLevel::Tenant).is_empty());
        assert_eq!(listed(" ").device_ids(), Vec::<String>::new());
        assert_eq!(
            fields(&listed("a,,b"), NotificationLevel::Tenant),
            ["Devices"]
        );
        assert_eq!(
            fields(&listed("a,"), NotificationLevel::Tenant),
            ["Devices"]
        );
        assert_eq!(listed("b, a,b").device_ids(), ["b", "a"]);
        let many: Vec<String> = (0..=MAX_DEVICES).map(|i| format!("d{i}")).collect();
        assert_eq!(
            fields(&listed(&many.join(",")), NotificationLevel::Tenant),
            ["Devices"]
        );
        let same = vec!["d"; MAX_DEVICES + 5].join(",");
        assert!(fields(&listed(&same), NotificationLevel::Tenant).is_empty());
        // On group level even an empty string is refused: the field does not exist there.
        assert_eq!(
            fields(&listed(""), NotificationLevel::Group(1)),
            ["Devices"]
        );
        assert_eq!(
            fields(&typed(""), NotificationLevel::Group(1)),
            ["DeviceType"]
        );
    }

    #[test]
    fn recipient_count_is_bounded() {
        let n = EventNotification {
            recipients: vec![Recipient::default(); MAX_RECIPIENTS + 1],
            ..sos()
        };
        assert_eq!(fields(&n, NotificationLevel::Tenant), ["Recipients"]);
    }
}
