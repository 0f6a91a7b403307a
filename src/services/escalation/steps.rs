//! An escalation policy's steps fired (issue 45 §3). The alert row is locked (the
//! caller's `lock_due_escalation`), so each step fires once across processes and
//! restarts: every step whose time since the raise has passed fires, in order (a worker
//! that was down catches up with each), its recipients resolved like a notification's
//! (`services::recipients`), its deliveries and its `EscalationStep` timeline entry
//! written, and the alert's fired count (`EscalationLevel`), its escalation as the
//! console shows it and the next step's due time commit together with them.
//!
//! A step at 0 minutes fires on the worker's first pass after the raise (within its
//! interval), telling the step's recipients in addition to the notification's own (the
//! raise wrote those; the step writes only its own). Acknowledging or resolving clears
//! the due time, which stops the chain.

use jiff::{SignedDuration, Timestamp};

use super::Escalator;
use crate::domain::alert::{AlertEscalation, CurrentEscalationStep, Notified, TimelineKind};
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::escalation_policy::{EscalationPolicy, EscalationStep};
use crate::domain::ids::DeviceId;
use crate::domain::mt_message::NewMtMessage;
use crate::domain::recipient_targets::{MatchedDevice, Target};
use crate::domain::time::now;
use crate::services::recipients::resolve_recipients;
use crate::store::{AlertEvent, DueEscalation, NewDelivery, StoreResult, Wake, WriteTx};

/// A policy's minutes on the real clock: `minute` long each (a minute, except in tests).
#[derive(Debug, Clone, Copy)]
pub(super) struct PolicyClock {
    minute: SignedDuration,
}

const REAL_MINUTE_NANOS: i128 = 60_000_000_000;

impl PolicyClock {
    pub(super) fn new(minute: SignedDuration) -> Self {
        Self {
            minute: minute.max(SignedDuration::from_millis(1)),
        }
    }

    /// `at` as the policy's clock reads it: as many policy minutes after `raised` as
    /// `minute`s have passed (rounded down, so no step is early).
    fn policy_time(self, raised: Timestamp, at: Timestamp) -> Timestamp {
        let elapsed = at.duration_since(raised).as_nanos();
        let scaled = elapsed * REAL_MINUTE_NANOS / self.minute.as_nanos();
        offset(raised, scaled)
    }

    /// A policy time back on the real clock (rounded up, the inverse of `policy_time`).
    fn real_time(self, raised: Timestamp, policy: Timestamp) -> Timestamp {
        let elapsed = policy.duration_since(raised).as_nanos();
        let scaled = (elapsed * self.minute.as_nanos() + REAL_MINUTE_NANOS - 1) / REAL_MINUTE_NANOS;
        offset(raised, scaled)
    }
}

/// `base` moved by `nanos` (clamped to the representable times).
fn offset(base: Timestamp, nanos: i128) -> Timestamp {
    let nanos = i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX });
    base.checked_add(SignedDuration::from_nanos(nanos))
        .unwrap_or(if nanos < 0 {
            Timestamp::MIN
        } else {
            Timestamp::MAX
        })
}

impl Escalator {
    /// Fires the steps of the policy `due` follows that are due at `at`, in the locked
    /// alert's transaction `tx`, and commits. Returns whether a step fired.
    pub(super) async fn fire_steps(
        &self,
        mut tx: WriteTx,
        due: &DueEscalation,
        escalation: AlertEscalation,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let alert = &due.alert;
        let id = alert.alert_id;
        let policy = match escalation.policy_id {
            Some(policy_id) => tx.escalation_policy(policy_id).await?,
            None => None,
        };
        let Some(policy) = policy else {
            // The policy was deleted: the chain ends where it is.
            tx.escalation_steps_fired(id, alert.escalation_level, &escalation, None)
                .await?;
            let alert = tx.alert(id).await?;
            tx.announce_alert(&due.node, &alert);
            tx.commit().await?;
            return Ok(false);
        };
        let clock = PolicyClock::new(self.config.escalation_minute);
        let raised = alert.raised_at;
        let fired = usize::try_from(alert.escalation_level).unwrap_or(0);
        let steps = policy.due_steps(raised, clock.policy_time(raised, at), fired);
        for index in steps.indexes() {
            self.fire_step(&mut tx, due, &policy, index).await?;
        }
        let end = steps.end.max(fired);
        let next = policy
            .next_due_at(raised, end)
            .map(|t| clock.real_time(raised, t));
        let shown = shown_escalation(&policy, end);
        let level = i64::try_from(end).unwrap_or(i64::MAX);
        tx.escalation_steps_fired(id, level, &shown, next).await?;
        let alert = tx.alert(id).await?;
        tx.announce_alert(&due.node, &alert);
        tx.commit().await?;
        Ok(!steps.is_empty())
    }

    /// Step `index` of `policy`: its recipients told, and its timeline entry.
    async fn fire_step(
        &self,
        tx: &mut WriteTx,
        due: &DueEscalation,
        policy: &EscalationPolicy,
        index: usize,
    ) -> StoreResult<()> {
        let alert = &due.alert;
        let step = &policy.steps[index];
        let device = tx.step_device(&alert.tenant_code, &alert.device_id).await?;
        let position = alert.latitude.zip(alert.longitude);
        let resolved = resolve_recipients(
            tx,
            &due.node,
            &MatchedDevice {
                device_id: alert.device_id.as_str(),
                group_id: device.group_id,
                user_id: device.user_id,
                position,
            },
            &step.recipients,
        )
        .await?;
        let created = now();
        let message = StepMessage::new(due, policy, index, step);
        let mut written = Vec::new();
        for target in &resolved.targets {
            if let Some(d) = self
                .step_delivery(tx, due, &message, target, created)
                .await?
            {
                written.push(d);
            }
        }
        tx.insert_deliveries(&written).await?;
        if written.iter().any(|d| d.status == DeliveryStatus::Pending) {
            tx.wake(Wake::Alerting);
        }
        let notified: Vec<Notified> = written
            .iter()
            .filter(|d| d.status != DeliveryStatus::NoAddress)
            .map(|d| Notified {
                channel: d.channel,
                target: d.target.clone(),
            })
            .collect();
        let entry = AlertEvent {
            count: Some(i64::try_from(index + 1).unwrap_or(i64::MAX)),
            text: step.instructions.as_deref(),
            notified: Some(&notified),
            ..AlertEvent::new(TimelineKind::EscalationStep, created, None)
        };
        tx.record_alert_event(alert.alert_id, &entry).await?;
        let fired = (alert.alert_id, index + 1, step.instructions.as_deref());
        tx.note_escalation_step_on_session(
            &alert.tenant_code,
            alert.device_id.as_str(),
            fired,
            created,
        )
        .await
    }

    /// What one target of a step becomes: a delivery (an MT message queued for a
    /// device), or nothing for the targets that change the device (a group move, the
    /// check-in schedule: a rule's business, not a step's).
    async fn step_delivery(
        &self,
        tx: &mut WriteTx,
        due: &DueEscalation,
        message: &StepMessage,
        target: &Target,
        created: Timestamp,
    ) -> StoreResult<Option<NewDelivery>> {
        let base = message.delivery(due, created);
        let person =
            |channel: Channel, address: &str, configured: bool, body: String| NewDelivery {
                channel,
                target: Some(address.to_string()),
                status: DeliveryStatus::new_on(configured),
                body,
                ..base.clone()
            };
        Ok(Some(match target {
            Target::Email(a) => person(Channel::Email, a, self.config.email, message.email.clone()),
            Target::Sms(n) => person(Channel::Sms, n, self.config.sms, message.short.clone()),
            Target::Voice(n) => person(Channel::Voice, n, self.config.voice, message.short.clone()),
            Target::Nobody { channel, why } => NewDelivery {
                channel: *channel,
                body: why.clone(),
                next_attempt_at: None,
                ..base
            },
            Target::Device {
                device_id,
                kind,
                parameters,
            } => {
                // A recipient names a device of the tenant that the store resolved.
                let device = DeviceId::from_store(device_id.clone());
                let mt = NewMtMessage {
                    r#type: *kind,
                    message: Some(message.short.clone()),
                    parameters: parameters.clone(),
                };
                let mt_id = tx
                    .queue_mt_message(&due.node.code, &device, &mt, due.alert.notification_id)
                    .await?;
                NewDelivery {
                    channel: Channel::Mt,
                    target: Some(device_id.clone()),
                    subject: Some(kind.to_string()),
                    body: message.short.clone(),
                    status: DeliveryStatus::Sent,
                    mt_message_id: Some(mt_id),
                    next_attempt_at: None,
                    sent_at: Some(created),
                    ..base
                }
            }
            Target::MoveToGroup(_)
            | Target::CheckInInterval(_)
            | Target::PauseCheckIns(_)
            | Target::Monitoring(_) => {
                return Ok(None);
            }
        }))
    }
}

/// What a step's deliveries say.
struct StepMessage {
    /// The subject; also the text of an SMS, a call and an MT message.
    short: String,
    email: String,
}

impl StepMessage {
    fn new(
        due: &DueEscalation,
        policy: &EscalationPolicy,
        index: usize,
        step: &EscalationStep,
    ) -> Self {
        let alert = &due.alert;
        let short = format!(
            "[{}] Escalation step {} of {}: {} — {} (not acknowledged)",
            alert.severity.word(),
            index + 1,
            policy.steps.len(),
            alert.notification_name,
            alert.device_id
        );
        let position = match (alert.latitude, alert.longitude) {
            (Some(lat), Some(lon)) => format!("{lat:.5}, {lon:.5}"),
            _ => "unknown".into(),
        };
        let instructions = step
            .instructions
            .as_deref()
            .map(|i| format!("\nWhat to do now:\n{i}\n"))
            .unwrap_or_default();
        let email = format!(
            "{short}\n\nAlert {} was raised at {} and nobody has acknowledged it.\nPolicy: {}\nPosition: {position}\n{instructions}\nAcknowledge it to stop further escalation.\n",
            alert.alert_id, alert.raised_at, policy.name
        );
        Self { short, email }
    }

    /// What every delivery of the step shares: linked to the alert, its notification,
    /// message and device; due at once.
    fn delivery(&self, due: &DueEscalation, created: Timestamp) -> NewDelivery {
        let alert = &due.alert;
        NewDelivery {
            tenant_code: due.node.code.clone(),
            channel: Channel::Email,
            target: None,
            status: DeliveryStatus::NoAddress,
            subject: Some(self.short.clone()),
            body: self.email.clone(),
            notification_id: alert.notification_id,
            alert_id: Some(alert.alert_id),
            message_id: alert.message_id,
            device_id: Some(alert.device_id.clone()),
            mt_message_id: None,
            event_id: None,
            created_at: created,
            next_attempt_at: Some(created),
            sent_at: None,
        }
    }
}

/// The alert's escalation as the console shows it once `fired` steps have fired.
fn shown_escalation(policy: &EscalationPolicy, fired: usize) -> AlertEscalation {
    let current = policy
        .current_step(fired)
        .map(|step| CurrentEscalationStep {
            number: i64::try_from(fired.min(policy.steps.len())).unwrap_or(i64::MAX),
            after_minutes: step.after_minutes,
            instructions: step.instructions.clone(),
        });
    AlertEscalation {
        policy_id: Some(policy.escalation_policy_id),
        policy_name: policy.name.clone(),
        steps_fired: i64::try_from(fired).unwrap_or(i64::MAX),
        step_count: i64::try_from(policy.steps.len()).unwrap_or(i64::MAX),
        current_step: current,
        next_step_at: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_minute_scales_both_ways_without_making_a_step_early() {
        let raised: Timestamp = "2026-03-01T10:00:00Z".parse().expect("time");
        let clock = PolicyClock::new(SignedDuration::from_millis(500));
        // Half a second of real time is a policy minute.
        let real = raised + SignedDuration::from_millis(1250);
        assert_eq!(
            clock.policy_time(raised, real),
            raised + SignedDuration::from_secs(150)
        );
        let step = raised + SignedDuration::from_mins(3);
        let back = clock.real_time(raised, step);
        assert_eq!(back, raised + SignedDuration::from_millis(1500));
        assert!(clock.policy_time(raised, back) >= step);
        // A real minute is a minute.
        let real_clock = PolicyClock::new(SignedDuration::from_mins(1));
        assert_eq!(real_clock.policy_time(raised, step), step);
        assert_eq!(real_clock.real_time(raised, step), step);
    }
}
