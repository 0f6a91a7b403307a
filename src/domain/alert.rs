//! Alerts: what a notification with `RaiseAlert` records, and its workflow
//! (`Open` → `Acknowledged` → `Resolved`).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::delivery::{Channel, DeliveryStatus};
use super::ids::{
    AlertId, DeliveryId, DeviceId, EscalationPolicyId, MoMessageId, NotificationId, TenantCode,
};
use super::notification::Severity;
use super::validation::{ValidationErrors, Validator};

closed_set! {
    /// Where an alert is in its workflow.
    #[derive(ToSchema)]
    pub enum AlertStatus {
        Open = "Open",
        Acknowledged = "Acknowledged",
        Resolved = "Resolved",
    }
}

impl AlertStatus {
    /// The statuses a further match joins (a resolved alert is closed: the next match
    /// raises a new one).
    pub const JOINABLE: [AlertStatus; 2] = [AlertStatus::Open, AlertStatus::Acknowledged];
}
/// Longest `Resolution` text.
pub const MAX_RESOLUTION_CHARS: usize = 4000;
/// Longest note (a note's `Text`, acknowledge's `Note`).
pub const MAX_NOTE_CHARS: usize = 4000;

closed_set! {
    /// How a resolved alert turned out (resolve's `Outcome`): a closed set.
    #[derive(ToSchema)]
    pub enum Outcome {
        Genuine = "Genuine",
        FalseAlarm = "FalseAlarm",
        Test = "Test",
        Other = "Other",
    }
}

/// An alert. Every field is set by the server; a further match of the same notification
/// on the same device joins an `Open` or `Acknowledged` alert (`MatchCount`,
/// `LastMatchAt`) instead of raising a new one.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Alert {
    #[schema(value_type = Option<String>, example = "12")]
    pub alert_id: AlertId,
    #[schema(value_type = Option<String>)]
    pub tenant_code: TenantCode,
    #[schema(value_type = Option<String>)]
    pub device_id: DeviceId,
    /// Null once the notification is deleted (its name stays).
    #[schema(value_type = Option<String>)]
    pub notification_id: Option<NotificationId>,
    #[schema(value_type = Option<String>)]
    pub notification_name: String,
    /// "0" None, "1" Warning, "2" High.
    #[schema(value_type = Option<String>)]
    pub severity: Severity,
    #[schema(value_type = Option<String>, pattern = "^(Open|Acknowledged|Resolved)$")]
    pub status: AlertStatus,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub raised_at: Timestamp,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_match_at: Timestamp,
    pub match_count: i64,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    /// Names of the geofences the device was in.
    pub geofences: Vec<String>,
    /// The message that raised it (null for a `MissedCheckIn`).
    #[schema(value_type = Option<String>)]
    pub message_id: Option<MoMessageId>,
    /// The raising message's `MessageType` (null: no message, or it had none).
    pub message_type: Option<String>,
    /// The raising message's text, its `Message` (null: no message, or it had no text).
    pub message_text: Option<String>,
    /// Raised by a message older than the device's state (it arrived late).
    pub late: bool,
    pub acknowledged_by: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub acknowledged_at: Option<Timestamp>,
    pub resolved_by: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub resolved_at: Option<Timestamp>,
    pub resolution: Option<String>,
    /// How it turned out, given when it was resolved (null: not resolved, or resolved
    /// without one).
    pub outcome: Option<Outcome>,
    /// Notes added so far (`POST …/notes`; they are on its timeline).
    pub note_count: i64,
    /// Escalation rounds sent so far (an alert following a policy: its steps fired).
    pub escalation_level: i64,
    /// The escalation policy the alert follows and where it is in it (null: it follows
    /// none, and escalates by today's rounds to the escalation contacts).
    pub escalation: Option<AlertEscalation>,
    #[serde(rename = "ETag")]
    #[schema(value_type = Option<String>)]
    pub etag: String,
}

/// The escalation policy an alert follows (settled when it was raised) and where it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct AlertEscalation {
    /// Null once the policy is deleted (its name stays; no further step fires).
    #[schema(value_type = Option<String>)]
    pub policy_id: Option<EscalationPolicyId>,
    pub policy_name: String,
    /// Steps fired so far (equals `EscalationLevel`).
    #[serde(default)]
    pub steps_fired: i64,
    /// The policy's steps (as they were when the last step fired).
    pub step_count: i64,
    /// The last step fired, whose `Instructions` the operator follows now (null before
    /// the first step fires).
    pub current_step: Option<CurrentEscalationStep>,
    /// When the next step is due (null: every step fired, or acknowledged, resolved, or
    /// the policy was deleted).
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_step_at: Option<Timestamp>,
}

/// The step of its policy an alert is at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct CurrentEscalationStep {
    /// 1 for the policy's first step.
    pub number: i64,
    pub after_minutes: u32,
    /// The response procedure (null: the step has none).
    pub instructions: Option<String>,
}

/// A raised alert, every field set (for tests).
#[cfg(test)]
pub(crate) fn sample(id: i64) -> Alert {
    let at = |s: &str| s.parse::<Timestamp>().expect("a time");
    Alert {
        alert_id: AlertId::new(id),
        tenant_code: TenantCode::from_store("1000".into()),
        device_id: DeviceId::from_store("300234010753370".into()),
        notification_id: Some(NotificationId::new(4)),
        notification_name: "SOS".into(),
        severity: Severity::High,
        status: AlertStatus::Resolved,
        raised_at: at("2026-07-01T13:05:00Z"),
        last_match_at: at("2026-07-01T13:06:00.5Z"),
        match_count: 2,
        latitude: Some(51.5),
        longitude: Some(-0.125),
        geofences: vec!["Depot".into()],
        message_id: Some(MoMessageId::new(17)),
        message_type: Some("FreeText".into()),
        message_text: Some("Fell, ankle hurt".into()),
        late: false,
        acknowledged_by: Some("ann".into()),
        acknowledged_at: Some(at("2026-07-01T13:07:00Z")),
        resolved_by: Some("bob".into()),
        resolved_at: Some(at("2026-07-01T13:08:00Z")),
        resolution: Some("Called him".into()),
        outcome: Some(Outcome::FalseAlarm),
        note_count: 1,
        escalation_level: 0,
        escalation: None,
        etag: "00000000000000ab".into(),
    }
}

/// The body of `POST …/alerts/{id}/resolve` (optional).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Resolution {
    /// How the alert was resolved (at most 4,000 characters).
    #[schema(max_length = 4000)]
    pub resolution: Option<String>,
    /// How it turned out (optional).
    #[schema(value_type = Option<Outcome>)]
    pub outcome: Option<String>,
}

/// What resolving records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolve {
    /// Blank is none.
    pub resolution: Option<String>,
    pub outcome: Option<Outcome>,
}

impl Resolution {
    pub fn validated(self) -> Result<Resolve, ValidationErrors> {
        let mut v = Validator::new();
        v.length(
            "Resolution",
            self.resolution.as_deref(),
            0,
            MAX_RESOLUTION_CHARS,
        );
        let outcome = match self.outcome.as_deref() {
            None => None,
            Some(text) => {
                let parsed = text.parse::<Outcome>().ok();
                if parsed.is_none() {
                    v.add(
                        "Outcome",
                        format!("must be one of {}", Outcome::NAMES.join(", ")),
                    );
                }
                parsed
            }
        };
        v.finish()?;
        Ok(Resolve {
            resolution: self.resolution.filter(|r| !r.trim().is_empty()),
            outcome,
        })
    }
}

/// The body of `POST …/alerts/{id}/acknowledge` (optional).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Acknowledgement {
    /// A note for the alert's timeline (at most 4,000 characters; blank is none).
    #[schema(max_length = 4000)]
    pub note: Option<String>,
}

impl Acknowledgement {
    pub fn validated(self) -> Result<Option<String>, ValidationErrors> {
        let mut v = Validator::new();
        v.length("Note", self.note.as_deref(), 0, MAX_NOTE_CHARS);
        v.finish()?;
        Ok(self.note.filter(|n| !n.trim().is_empty()))
    }
}

/// The body of `POST …/alerts/{id}/notes`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct NewNote {
    /// 1–4,000 characters, not only white space.
    #[schema(min_length = 1, max_length = 4000)]
    pub text: Option<String>,
}

impl NewNote {
    pub fn validated(self) -> Result<String, ValidationErrors> {
        let mut v = Validator::new();
        let text = v.required("Text", self.text.as_deref()).map(str::to_string);
        v.length("Text", text.as_deref(), 1, MAX_NOTE_CHARS);
        v.finish()?;
        text.ok_or_else(|| ValidationErrors::single("Text", "is required"))
    }
}

closed_set! {
    /// What a timeline entry records.
    #[derive(ToSchema)]
    pub enum TimelineKind {
        /// The alert was raised (by a message, or a missed check-in).
        Raised = "Raised",
        /// A further match joined it.
        Matched = "Matched",
        /// An escalation round notified the escalation contacts.
        Escalated = "Escalated",
        /// A step of the alert's escalation policy fired: its recipients were told.
        EscalationStep = "EscalationStep",
        /// Something was sent about it (its current status).
        Delivery = "Delivery",
        Acknowledged = "Acknowledged",
        Note = "Note",
        Resolved = "Resolved",
    }
}

/// Someone an escalation round notified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Notified {
    /// Email or Sms.
    #[schema(value_type = String)]
    pub channel: Channel,
    /// The address (null when the tenant had no escalation contacts).
    pub target: Option<String>,
}

/// One step of an alert's shared record (`GET …/alerts/{id}/timeline`, oldest first).
/// `Kind`, `At` and `By` are always present; the other fields only for the kinds named.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct TimelineEntry {
    pub kind: TimelineKind,
    #[schema(value_type = String, format = DateTime)]
    pub at: Timestamp,
    /// Who: the caller's username; null for the system (raised, matched, escalated,
    /// deliveries).
    pub by: Option<String>,
    /// Raised, Matched: the message (absent for a missed check-in).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub message_id: Option<MoMessageId>,
    /// Raised, Matched: where the device was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latitude: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longitude: Option<f64>,
    /// Matched: the alert's `MatchCount` after this match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_count: Option<i64>,
    /// Escalated: the round (1, 2, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<i64>,
    /// Escalated, EscalationStep: who this round (step) notified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notified: Option<Vec<Notified>>,
    /// EscalationStep: which step of the policy (1 for the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    /// EscalationStep: the step's `Instructions` (absent: it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Delivery: its id (`GET …/deliveries?alertId=` lists them whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub delivery_id: Option<DeliveryId>,
    /// Delivery: Email, Sms, Voice, Mt or Webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub channel: Option<Channel>,
    /// Delivery: the address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Delivery: its current status (Pending, Sent, Failed, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub status: Option<DeliveryStatus>,
    /// Delivery: attempts so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<i64>,
    /// Delivery: when it was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub sent_at: Option<Timestamp>,
    /// Delivery: why its last attempt failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Acknowledged: the note given with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Note: its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Resolved: its `Resolution`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
    /// Resolved: its `Outcome`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

impl TimelineEntry {
    /// An entry of `kind` with only `At` and `By` set.
    pub fn new(kind: TimelineKind, at: Timestamp, by: Option<String>) -> Self {
        Self {
            kind,
            at,
            by,
            message_id: None,
            latitude: None,
            longitude: None,
            match_count: None,
            round: None,
            notified: None,
            step: None,
            instructions: None,
            delivery_id: None,
            channel: None,
            target: None,
            status: None,
            attempts: None,
            sent_at: None,
            last_error: None,
            note: None,
            text: None,
            resolution: None,
            outcome: None,
        }
    }
}

/// Oldest first; at the same instant the recorded steps come before the deliveries (an
/// escalation round before what it sent). The sort is stable: each source keeps its order.
pub fn merge_timeline(
    mut steps: Vec<TimelineEntry>,
    deliveries: Vec<TimelineEntry>,
) -> Vec<TimelineEntry> {
    steps.extend(deliveries);
    steps.sort_by_key(|e| (e.at, e.kind == TimelineKind::Delivery));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_parse_exactly_and_resolution_names_a_bad_one() {
        for &outcome in Outcome::ALL {
            assert_eq!(outcome.as_str().parse::<Outcome>(), Ok(outcome));
            assert_eq!(
                serde_json::to_value(outcome).unwrap(),
                serde_json::json!(outcome.as_str())
            );
        }
        assert!("genuine".parse::<Outcome>().is_err());
        let bad = Resolution {
            resolution: None,
            outcome: Some("Maybe".into()),
        }
        .validated()
        .unwrap_err();
        assert_eq!(bad.0[0].field, "Outcome");
        let ok = Resolution {
            resolution: Some("  ".into()),
            outcome: Some("FalseAlarm".into()),
        }
        .validated()
        .unwrap();
        assert_eq!(
            ok,
            Resolve {
                resolution: None,
                outcome: Some(Outcome::FalseAlarm)
            }
        );
    }

    #[test]
    fn an_alert_is_shown_with_its_ids_as_text_in_field_order() {
        let json = serde_json::to_string(&sample(12)).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"{"AlertId":"12","TenantCode":"1000","DeviceId":"300234010753370","#,
                r#""NotificationId":"4","NotificationName":"SOS","Severity":"2","#,
                r#""Status":"Resolved","RaisedAt":"2026-07-01T13:05:00Z","#,
                r#""LastMatchAt":"2026-07-01T13:06:00.5Z","MatchCount":2,"Latitude":51.5,"#,
                r#""Longitude":-0.125,"Geofences":["Depot"],"MessageId":"17","#,
                r#""MessageType":"FreeText","MessageText":"Fell, ankle hurt","Late":false,"#,
                r#""AcknowledgedBy":"ann","AcknowledgedAt":"2026-07-01T13:07:00Z","#,
                r#""ResolvedBy":"bob","ResolvedAt":"2026-07-01T13:08:00Z","#,
                r#""Resolution":"Called him","Outcome":"FalseAlarm","NoteCount":1,"#,
                r#""EscalationLevel":0,"Escalation":null,"ETag":"00000000000000ab"}"#
            )
        );
        let missed = Alert {
            notification_id: None,
            message_id: None,
            message_type: None,
            message_text: None,
            ..sample(13)
        };
        let value = serde_json::to_value(&missed).unwrap();
        assert!(value["NotificationId"].is_null() && value["MessageId"].is_null());
        assert!(value["MessageType"].is_null() && value["MessageText"].is_null());
    }

    #[test]
    fn notes_need_text_of_one_to_4000_characters() {
        let note = |t: Option<&str>| {
            NewNote {
                text: t.map(str::to_string),
            }
            .validated()
        };
        assert_eq!(note(Some("Called him")).unwrap(), "Called him");
        assert_eq!(note(Some(&"é".repeat(4000))).unwrap().chars().count(), 4000);
        for bad in [None, Some(""), Some("  "), Some(&*"a".repeat(4001))] {
            assert_eq!(note(bad).unwrap_err().0[0].field, "Text", "{bad:?}");
        }
    }

    #[test]
    fn the_timeline_is_oldest_first_with_steps_before_deliveries_at_one_instant() {
        let t = |s: i64| Timestamp::from_second(s).unwrap();
        let steps = vec![
            TimelineEntry::new(TimelineKind::Raised, t(1), None),
            TimelineEntry::new(TimelineKind::Escalated, t(5), None),
            TimelineEntry::new(TimelineKind::Acknowledged, t(9), Some("a".into())),
        ];
        let deliveries = vec![
            TimelineEntry::new(TimelineKind::Delivery, t(2), None),
            TimelineEntry::new(TimelineKind::Delivery, t(5), None),
        ];
        let kinds: Vec<TimelineKind> = merge_timeline(steps, deliveries)
            .iter()
            .map(|e| e.kind)
            .collect();
        use TimelineKind::*;
        assert_eq!(kinds, [Raised, Delivery, Escalated, Delivery, Acknowledged]);
    }
}
