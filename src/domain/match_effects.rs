//! What a match does, planned: from a notification that matched a device (and what was
//! looked up for it) to the ordered list of effects the ingest transaction applies —
//! the alert raised or joined, the `EventNotification` webhook event, a delivery per
//! target, the MT messages queued, and the device's group and check-in changes.
//! `plan_match` is pure (the clock is an input), so each rule is tested without a
//! database; `services/ingest/matching.rs` applies the effects in order.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use super::alert::Alert;
use super::delivery::{Channel, DeliveryStatus, MatchSummary};
use super::device::Device;
use super::device_state::Observation;
use super::ids::{DeviceId, MoMessageId, NotificationId, TenantCode};
use super::mo_message::MoMessage;
use super::mt_message::{MtType, NewMtMessage};
use super::notification::{EventNotification, Severity};
use super::place::ReaderUnits;
use super::recipient_targets::{Target, UserContact};
use super::webhook::Category;
use super::webhook_event::{EventType, WebhookEvent};

/// A notification that matched a device, and what it matched.
#[derive(Debug, Clone, Copy)]
pub struct Matched<'a> {
    pub notification_id: NotificationId,
    pub notification: &'a EventNotification,
    pub severity: Severity,
    pub device: &'a Device,
    /// The stored message and its id (`None`: a missed check-in).
    pub message: Option<(MoMessageId, &'a MoMessage)>,
    /// When it happened: the message's time, or when the check-in was due.
    pub time: Timestamp,
    pub observation: &'a Observation,
    /// The message's position, else the device's last known one.
    pub position: Option<(f64, f64)>,
}

/// Which of the server's channels are configured (deliveries on the others are recorded
/// `NotConfigured`), and when alerts escalate.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerChannels {
    pub email: bool,
    pub sms: bool,
    pub voice: bool,
    /// An unacknowledged Warning or High alert escalates this long after it was raised
    /// (None: never).
    pub escalation_after: Option<SignedDuration>,
}

/// What the effects depend on besides the match: looked up, or the server's.
#[derive(Debug, Clone)]
pub struct Circumstances<'a> {
    /// The notification's recipients, resolved (`recipient_targets::plan_targets`).
    pub targets: Vec<Target>,
    /// The tenant's time zone, for the times messages show.
    pub tenant_zone: TimeZone,
    /// The device's user, for an emergency's e-mails (their emergency contacts).
    pub device_user: Option<&'a UserContact>,
    /// The tenant has webhook settings: the match is an `EventNotification` event.
    pub tenant_webhooks: bool,
    pub channels: ServerChannels,
    pub now: Timestamp,
    /// How the tenant shows positions and distances to outside contacts (its
    /// `PositionFormat` and `DistanceUnits` properties).
    pub tenant_units: ReaderUnits,
    /// The platform users the recipients named (the device's user, their manager): a
    /// message to one of their addresses is in their profile's units.
    pub readers: Vec<&'a UserContact>,
}

impl Circumstances<'_> {
    /// The units of the reader at `address`: a platform user's (their username, or one of
    /// their phones), else the tenant's.
    fn units_for(&self, address: &str) -> ReaderUnits {
        let theirs = |u: &&&UserContact| {
            let p = &u.profile;
            u.username.eq_ignore_ascii_case(address)
                || [&p.cell_phone, &p.daytime_phone, &p.evening_phone]
                    .into_iter()
                    .flatten()
                    .any(|phone| phone.trim() == address.trim())
        };
        match self.readers.iter().find(theirs) {
            Some(user) => ReaderUnits::of_user(&user.profile, self.tenant_units),
            None => self.tenant_units,
        }
    }
}

/// One thing a match does, in the order they are applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Join the notification's open (or acknowledged) alert on the device, or raise one;
    /// and record the match on its timeline.
    RaiseOrJoinAlert(AlertRaise),
    /// The `EventNotification` event, with the alert once it is raised or joined.
    Webhook(Fired),
    /// A delivery to a person (or the record that there was no address).
    Deliver(PlannedDelivery),
    /// An MT message queued for a device, and its delivery (`Sent`: queued in the same
    /// transaction).
    QueueMt {
        device_id: DeviceId,
        message: Box<NewMtMessage>,
        delivery: PlannedDelivery,
    },
    /// Move the matched device to this group (if the group still exists).
    MoveToGroup(i64),
    /// The device's check-in interval, in minutes.
    SetCheckInInterval(i64),
    /// Pause (true) or resume the device's check-in schedule.
    PauseCheckIns(bool),
    /// Start or end the device's monitoring session.
    Monitoring(crate::domain::recipient_targets::MonitoringCommand),
}

impl Effect {
    /// Whether the effect tells someone: a delivery to a person (or its no-address
    /// record) or an MT message. A match that joins an alert already raised skips these
    /// (`joining`): the first match told everyone, and who is told again is the
    /// escalation's business. Webhook events and device changes still happen.
    pub fn notifies(&self) -> bool {
        matches!(self, Effect::Deliver(_) | Effect::QueueMt { .. })
    }
}

/// What a match that joined an existing alert still does of `effects`: all but the
/// notifying ones (`Effect::notifies`).
pub fn joining(effects: Vec<Effect>) -> Vec<Effect> {
    effects.into_iter().filter(|e| !e.notifies()).collect()
}

/// What a match tells an alert.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRaise {
    pub at: Timestamp,
    pub severity: Severity,
    pub notification_name: String,
    pub position: Option<(f64, f64)>,
    pub geofences: Vec<String>,
    pub message_id: Option<MoMessageId>,
    pub late: bool,
    /// When it escalates if nobody acknowledges it (None: never).
    pub escalate_at: Option<Timestamp>,
}

/// A delivery to write; the match's common fields (tenant, notification, alert, message,
/// device, creation time) are added when it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedDelivery {
    pub channel: Channel,
    pub target: Option<String>,
    pub subject: Option<String>,
    pub body: String,
    pub status: DeliveryStatus,
    /// When the worker first tries (`Pending` only).
    pub next_attempt_at: Option<Timestamp>,
    pub sent_at: Option<Timestamp>,
}

/// The `EventNotification` event's data but the alert (only known once it is written).
#[derive(Debug, Clone, PartialEq)]
pub struct Fired {
    pub at: Timestamp,
    pub notification_id: NotificationId,
    pub notification_name: Option<String>,
    pub severity: Severity,
    pub device_id: DeviceId,
    pub message_id: Option<MoMessageId>,
    pub missed_check_in: bool,
    pub time: Timestamp,
    pub position: Option<(f64, f64)>,
    pub geofences: Vec<String>,
    pub late: bool,
}

impl Fired {
    /// The event for `tenant_code`, with the alert the match raised or joined.
    pub fn event(&self, tenant_code: &TenantCode, alert: Option<&Alert>) -> WebhookEvent {
        let data = json!({
            "NotificationId": self.notification_id,
            "NotificationName": self.notification_name,
            "Severity": self.severity,
            "DeviceId": self.device_id,
            "MessageId": self.message_id,
            "AlertId": alert.map(|a| a.alert_id),
            "Alert": alert,
            "MissedCheckIn": self.missed_check_in,
            "Time": self.time,
            "Latitude": self.position.map(|p| p.0),
            "Longitude": self.position.map(|p| p.1),
            "Geofences": self.geofences,
            "Late": self.late,
        });
        let mut event = WebhookEvent::from_value(
            Category::EventNotification,
            EventType::Fired,
            tenant_code,
            self.at,
            data,
        );
        // Sent with the match's e-mails and calls, not behind other webhooks.
        event.notification_id = Some(self.notification_id);
        event
    }
}

impl Matched<'_> {
    fn geofence_names(&self) -> Vec<String> {
        let containing = &self.observation.containing;
        containing.iter().map(|g| g.geofence_name.clone()).collect()
    }

    /// What happened, in a word: `MissedCheckIn`, `Emergency`, `EmergencyCancelled`, or
    /// the message's type.
    fn event_word(&self) -> String {
        let facts = &self.observation.facts;
        if facts.missed_check_in {
            "MissedCheckIn".into()
        } else if facts.emergency {
            "Emergency".into()
        } else if facts.emergency_cancelled {
            "EmergencyCancelled".into()
        } else {
            facts
                .message_type
                .clone()
                .unwrap_or_else(|| "Message".into())
        }
    }
}

/// Whether the match's messages need the device's user (`Circumstances::device_user`):
/// an emergency's e-mails list their emergency contacts.
pub fn needs_device_user(m: &Matched<'_>, targets: &[Target]) -> bool {
    m.observation.facts.emergency && targets.iter().any(|t| matches!(t, Target::Email(_)))
}

/// Everything the match does, in order: the alert, the webhook event, then each target's
/// delivery, MT message or change.
pub fn plan_match(m: &Matched<'_>, c: &Circumstances<'_>) -> Vec<Effect> {
    let mut effects = Vec::with_capacity(c.targets.len() + 2);
    if m.notification.raise_alert {
        let escalate_at = c
            .channels
            .escalation_after
            .filter(|_| m.severity.escalates())
            .and_then(|after| c.now.checked_add(after).ok());
        effects.push(Effect::RaiseOrJoinAlert(AlertRaise {
            at: c.now,
            severity: m.severity,
            notification_name: m.notification.notification_name.clone(),
            position: m.position,
            geofences: m.geofence_names(),
            message_id: m.message.map(|(id, _)| id),
            late: m.observation.late,
            escalate_at,
        }));
    }
    if c.tenant_webhooks {
        effects.push(Effect::Webhook(Fired {
            at: c.now,
            notification_id: m.notification_id,
            notification_name: Some(m.notification.notification_name.clone()),
            severity: m.severity,
            device_id: m.device.device_id.clone(),
            message_id: m.message.map(|(id, _)| id),
            missed_check_in: m.observation.facts.missed_check_in,
            time: m.time,
            position: m.position,
            geofences: m.geofence_names(),
            late: m.observation.late,
        }));
    }
    if c.targets.is_empty() {
        return effects;
    }
    let summary = summary(m, c);
    effects.extend(c.targets.iter().map(|t| target_effect(t, &summary, c)));
    effects
}

/// What the match's messages say.
fn summary(m: &Matched<'_>, c: &Circumstances<'_>) -> MatchSummary {
    let mut summary = MatchSummary {
        notification_name: m.notification.notification_name.clone(),
        notification_text: m.notification.notification_text.clone(),
        severity: m.severity,
        device_id: m.device.device_id.to_string(),
        device_name: m.device.friendly_name.clone(),
        event: m.event_word(),
        message_type: m.message.and_then(|(_, msg)| msg.message_type.clone()),
        emergency_state: m.message.and_then(|(_, msg)| msg.emergency_state),
        time: m.time,
        tenant_zone: c.tenant_zone.clone(),
        position: m.position,
        geofences: m.geofence_names(),
        emergency_contacts: Vec::new(),
        emergency_information: None,
    };
    if let Some(user) = c.device_user.filter(|_| needs_device_user(m, &c.targets)) {
        let p = &user.profile;
        for (name, address, phone) in [
            (
                &p.emergency_contact_name,
                &p.emergency_contact_address,
                &p.emergency_contact_telephone_number,
            ),
            (
                &p.emergency_contact_name2,
                &p.emergency_contact_address2,
                &p.emergency_contact_telephone_number2,
            ),
        ] {
            let parts: Vec<&str> = [name, phone, address]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .filter(|s| !s.trim().is_empty())
                .collect();
            if !parts.is_empty() {
                summary.emergency_contacts.push(parts.join(", "));
            }
        }
        summary.emergency_information = p.emergency_information.clone();
    }
    summary
}

/// What one target of the match becomes.
fn target_effect(target: &Target, summary: &MatchSummary, c: &Circumstances<'_>) -> Effect {
    let to_person = |channel: Channel, address: &str, configured: bool| PlannedDelivery {
        channel,
        target: Some(address.to_string()),
        subject: (channel == Channel::Email).then(|| summary.subject()),
        body: match channel {
            Channel::Email => summary.email_body(c.units_for(address)),
            Channel::Sms => summary.sms_body(c.units_for(address)),
            _ => summary.voice_body(c.units_for(address)),
        },
        status: DeliveryStatus::new_on(configured),
        next_attempt_at: Some(c.now),
        sent_at: None,
    };
    match target {
        Target::Email(address) => {
            Effect::Deliver(to_person(Channel::Email, address, c.channels.email))
        }
        Target::Sms(number) => Effect::Deliver(to_person(Channel::Sms, number, c.channels.sms)),
        Target::Voice(number) => {
            Effect::Deliver(to_person(Channel::Voice, number, c.channels.voice))
        }
        Target::Device {
            device_id,
            kind,
            parameters,
        } => queue_mt(device_id, *kind, parameters, summary, c.now),
        Target::Nobody { channel, why } => Effect::Deliver(PlannedDelivery {
            channel: *channel,
            target: None,
            subject: Some(summary.subject()),
            body: why.clone(),
            status: DeliveryStatus::NoAddress,
            next_attempt_at: None,
            sent_at: None,
        }),
        Target::MoveToGroup(group) => Effect::MoveToGroup(*group),
        Target::CheckInInterval(minutes) => Effect::SetCheckInInterval(*minutes),
        Target::PauseCheckIns(paused) => Effect::PauseCheckIns(*paused),
        Target::Monitoring(command) => Effect::Monitoring(*command),
    }
}

/// An MT message for a device and its delivery, `Sent` by being queued.
fn queue_mt(
    device_id: &str,
    kind: MtType,
    parameters: &Map<String, Value>,
    summary: &MatchSummary,
    now: Timestamp,
) -> Effect {
    let text = summary.device_text();
    Effect::QueueMt {
        // A recipient names a device of the tenant that the store resolved.
        device_id: DeviceId::from_store(device_id.to_string()),
        message: Box::new(NewMtMessage {
            r#type: kind,
            message: Some(text.clone()),
            parameters: parameters.clone(),
        }),
        delivery: PlannedDelivery {
            channel: Channel::Mt,
            target: Some(device_id.to_string()),
            subject: Some(kind.to_string()),
            body: text,
            status: DeliveryStatus::Sent,
            next_attempt_at: None,
            sent_at: Some(now),
        },
    }
}

#[cfg(test)]
#[path = "match_effects_tests.rs"]
mod tests;
