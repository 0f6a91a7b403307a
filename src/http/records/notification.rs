//! The event notification as clients write it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::events::parse_expression;
use crate::domain::ids::EscalationPolicyId;
use crate::domain::notification::{
    EventNotification, MAX_DEVICES, NotificationLevel, Severity, device_filter_problems, device_ids,
};
use crate::domain::recipient::{
    MAX_RECIPIENTS, Recipient, RecipientReference, check_recipient_count, validate_recipients,
};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::null_as_default;
use crate::domain::validation::{ValidationErrors, Validator};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "EventNotification", rename_all = "PascalCase")]
#[schema(as = EventNotification)]
pub struct EventNotificationRecord {
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
    /// The escalation policy its alerts follow (`/V2/{t}/escalationpolicies`): the
    /// tenant's own or one an ancestor shares (`AppliesToSubtenants`). Only with
    /// `RaiseAlert`. Null: the tenant's default policy, else the single escalation round
    /// to the escalation contacts.
    #[schema(example = "4")]
    pub escalation_policy_id: Option<String>,
}

impl ServerFields for EventNotificationRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["NotificationId"];

    fn without_read_only(mut self) -> Self {
        self.notification_id = None;
        self
    }
}

impl From<&EventNotification> for EventNotificationRecord {
    fn from(n: &EventNotification) -> Self {
        EventNotificationRecord {
            notification_id: n.notification_id.map(|id| id.to_string()),
            notification_name: Some(n.notification_name.clone()),
            notification_text: n.notification_text.clone(),
            notification_disabled: n.notification_disabled,
            recipients: n.recipients.clone(),
            events_expression: Some(n.events_expression.clone()),
            time_zone_id: n.time_zone_id.clone(),
            raise_alert: n.raise_alert,
            severity: n.severity.map(|s| s.as_str().to_string()),
            device_type: n.device_type.clone(),
            devices: n.devices.clone(),
            escalation_policy_id: n.escalation_policy_id.map(|id| id.to_string()),
        }
    }
}

impl EventNotificationRecord {
    /// The distinct device ids named by `Devices`, in their first order (what the
    /// caller looks up before `validated`).
    pub fn device_ids(&self) -> Vec<String> {
        device_ids(self.devices.as_deref())
    }

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
        let severity = self.check_rules(level, device_types, &mut v);
        let escalation_policy_id = self.checked_escalation_policy(&mut v);
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
        let (Some(notification_name), Some(events_expression)) =
            (self.notification_name, self.events_expression)
        else {
            // Both are required: `check_rules` reported them missing.
            return Err(ValidationErrors::single("NotificationName", "is required"));
        };
        let notification = EventNotification {
            notification_id: None,
            notification_name,
            notification_text: self.notification_text,
            notification_disabled: self.notification_disabled,
            recipients: self.recipients,
            events_expression,
            time_zone_id: self.time_zone_id,
            raise_alert: self.raise_alert,
            severity,
            device_type: self.device_type,
            devices: self.devices,
            escalation_policy_id,
            etag: None,
        };
        Ok((notification, references))
    }

    /// `EscalationPolicyId` as an id (its existence is checked by the store, in the
    /// writing transaction); only a notification that raises an alert escalates.
    fn checked_escalation_policy(&self, v: &mut Validator) -> Option<EscalationPolicyId> {
        let raw = self.escalation_policy_id.as_deref()?;
        let Ok(id) = raw.trim().parse::<EscalationPolicyId>() else {
            v.add(
                "EscalationPolicyId",
                format!("'{raw}' is not an escalation policy id"),
            );
            return None;
        };
        if !self.raise_alert {
            v.add(
                "EscalationPolicyId",
                "only a notification that raises an alert (RaiseAlert) escalates",
            );
            return None;
        }
        Some(id)
    }

    /// Every rule but the recipients' and the devices' existence; returns the severity.
    fn check_rules(
        &self,
        level: NotificationLevel,
        device_types: &[String],
        v: &mut Validator,
    ) -> Option<Severity> {
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
            NotificationLevel::Tenant => {
                let problems = device_filter_problems(
                    self.device_type.as_deref(),
                    self.devices.as_deref(),
                    device_types,
                );
                for (field, message) in problems {
                    v.add(field, message);
                }
            }
        }
        self.severity.as_deref().and_then(|s| s.parse().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{GroupId, NotificationId};
    use crate::domain::recipient::RecipientType;

    fn fields_with(
        n: &EventNotificationRecord,
        level: NotificationLevel,
        device_types: &[String],
    ) -> Vec<String> {
        n.clone()
            .validated(level, device_types, &n.device_ids().into_iter().collect())
            .err()
            .map(|e| e.0.into_iter().map(|f| f.field).collect())
            .unwrap_or_default()
    }

    fn fields(n: &EventNotificationRecord, level: NotificationLevel) -> Vec<String> {
        fields_with(n, level, &[])
    }

    fn sos() -> EventNotificationRecord {
        EventNotificationRecord {
            notification_name: Some("SOS".into()),
            events_expression: Some("Emergency".into()),
            ..Default::default()
        }
    }

    #[test]
    fn rules() {
        let ok = EventNotificationRecord {
            severity: Some("2".into()),
            devices: Some("a, b".into()),
            ..sos()
        };
        assert!(fields(&ok, NotificationLevel::Tenant).is_empty());
        assert_eq!(
            fields(&ok, NotificationLevel::Group(GroupId::new(1))),
            ["Devices"]
        );
        assert_eq!(ok.device_ids(), ["a", "b"]);
        let bad = EventNotificationRecord {
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
            let n = EventNotificationRecord {
                severity: Some(severity.into()),
                ..sos()
            };
            assert!(fields(&n, NotificationLevel::Tenant).is_empty());
        }
        for severity in ["3", "", "High", " 1"] {
            let n = EventNotificationRecord {
                severity: Some(severity.into()),
                ..sos()
            };
            assert_eq!(fields(&n, NotificationLevel::Tenant), ["Severity"]);
        }
    }

    #[test]
    fn device_filters() {
        let types = ["InReach".to_string(), "Spot".to_string()];
        let typed = |t: &str| EventNotificationRecord {
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
        let listed = |d: &str| EventNotificationRecord {
            devices: Some(d.into()),
            ..sos()
        };
        assert!(fields(&listed(""), NotificationLevel::Tenant).is_empty());
        assert!(fields(&listed("  "), NotificationLevel::Tenant).is_empty());
        assert_eq!(
            fields(&listed("a,,b"), NotificationLevel::Tenant),
            ["Devices"]
        );
        assert_eq!(
            fields(&listed("a,"), NotificationLevel::Tenant),
            ["Devices"]
        );
        let many: Vec<String> = (0..=MAX_DEVICES).map(|i| format!("d{i}")).collect();
        assert_eq!(
            fields(&listed(&many.join(",")), NotificationLevel::Tenant),
            ["Devices"]
        );
        let same = vec!["d"; MAX_DEVICES + 5].join(",");
        assert!(fields(&listed(&same), NotificationLevel::Tenant).is_empty());
        // On group level even an empty string is refused: the field does not exist there.
        assert_eq!(
            fields(&listed(""), NotificationLevel::Group(GroupId::new(1))),
            ["Devices"]
        );
        assert_eq!(
            fields(&typed(""), NotificationLevel::Group(GroupId::new(1))),
            ["DeviceType"]
        );
    }

    #[test]
    fn recipient_count_is_bounded() {
        let n = EventNotificationRecord {
            recipients: vec![Recipient::default(); MAX_RECIPIENTS + 1],
            ..sos()
        };
        assert_eq!(fields(&n, NotificationLevel::Tenant), ["Recipients"]);
    }

    #[test]
    fn validated_parses_the_severity() {
        let n = EventNotificationRecord {
            severity: Some("1".into()),
            notification_id: Some("7".into()),
            ..sos()
        };
        let (n, _) = n
            .validated(NotificationLevel::Tenant, &[], &HashSet::new())
            .expect("valid");
        assert_eq!(n.severity, Some(Severity::Warning));
        assert_eq!(n.notification_id, None);
    }

    #[test]
    fn the_escalation_policy_is_an_id_and_needs_raise_alert() {
        let with = |raw: &str, raise_alert: bool| EventNotificationRecord {
            escalation_policy_id: Some(raw.into()),
            raise_alert,
            ..sos()
        };
        let (n, _) = with("12", true)
            .validated(NotificationLevel::Tenant, &[], &HashSet::new())
            .expect("valid");
        assert_eq!(n.escalation_policy_id, Some(EscalationPolicyId::new(12)));
        for bad in ["", "x", "-1", "1.5", "99999999999999999999"] {
            assert_eq!(
                fields(&with(bad, true), NotificationLevel::Tenant),
                ["EscalationPolicyId"],
                "{bad:?}"
            );
        }
        assert_eq!(
            fields(&with("12", false), NotificationLevel::Tenant),
            ["EscalationPolicyId"]
        );
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let domain = EventNotification {
            notification_id: Some(NotificationId::new(12)),
            notification_name: "SOS".into(),
            notification_text: Some("Help".into()),
            notification_disabled: true,
            recipients: vec![Recipient {
                r#type: Some(RecipientType::MessagingAddress),
                messaging_address: Some("mail:ops@example.com".into()),
                ..Default::default()
            }],
            events_expression: "Emergency".into(),
            time_zone_id: Some("Europe/London".into()),
            raise_alert: true,
            severity: Some(Severity::High),
            device_type: Some("Spot".into()),
            devices: Some("a,b".into()),
            escalation_policy_id: Some(EscalationPolicyId::new(4)),
            etag: Some("e".into()),
        };
        let json = serde_json::to_value(&domain).expect("serialises");
        let wire: EventNotificationRecord = serde_json::from_value(json.clone()).expect("reads");
        assert_eq!(serde_json::to_value(&wire).expect("serialises"), json);
        assert_eq!(EventNotificationRecord::from(&domain), wire);
        let keys: Vec<&String> = json.as_object().expect("object").keys().collect();
        assert_eq!(keys.first().map(|k| k.as_str()), Some("NotificationId"));
    }
}
