//! Escalation until someone acknowledges: an `Open` Warning or High alert
//! that nobody acknowledged `escalation_after` after it was raised notifies the tenant's
//! escalation contacts (its own and those its ancestors share), and again every
//! `escalation_after`, for at most `escalation_rounds` rounds. Acknowledging or resolving
//! stops it (the alert's due time is cleared). Each round is one transaction: the level,
//! the next due time, the deliveries and the round's step on the alert's timeline (who
//! was notified) commit together, so a restart neither skips nor repeats a round; the
//! alert as the round left it is an `alert` event on the live stream.
//!
//! An alert that follows an escalation policy (settled at its raise,
//! `store/escalation_steps.rs`) fires the policy's steps instead (`steps.rs`), whatever
//! `escalation_after` says: the policy is the tenant's configuration, the flags today's
//! fallback.

mod steps;

use jiff::Timestamp;

use super::ingest::PipelineConfig;
use crate::domain::address::ContactAddress;
use crate::domain::address_book::Contact;
use crate::domain::alert::{Alert, Notified, TimelineKind};
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::ids::AlertId;
use crate::domain::time::now;
use crate::store::{AlertEvent, DueEscalation, NewDelivery, Store, StoreResult, Wake};

pub struct Escalator {
    store: Store,
    config: PipelineConfig,
}

impl Escalator {
    pub fn new(store: Store, config: PipelineConfig) -> Self {
        Self { store, config }
    }

    /// Runs the round of alert `id` if it is still due at `at`. Returns whether it ran.
    pub async fn run_round(&self, id: AlertId, at: Timestamp) -> StoreResult<bool> {
        let mut tx = self.store.begin().await?;
        let Some(due) = tx.lock_due_escalation(id, at).await? else {
            return Ok(false);
        };
        if let Some(escalation) = due.alert.escalation.clone() {
            return self.fire_steps(tx, &due, escalation, at).await;
        }
        let Some(after) = self.config.escalation_after else {
            return Ok(false);
        };
        let level = due.alert.escalation_level + 1;
        let rounds = self.config.escalation_rounds.max(1);
        let (subject, body) = round_message(&due.alert, level, rounds);
        let created = now();
        let template = round_delivery(&due, subject.clone(), body, created);
        let contacts = tx.escalation_contacts(&due.node).await?;
        let written = self.deliveries_to(&contacts, &subject, template);
        tx.insert_deliveries(&written).await?;
        if written.iter().any(|d| d.status == DeliveryStatus::Pending) {
            // People's channels: the alerting loop sends them at once.
            tx.wake(Wake::Alerting);
        }
        let next = if level < rounds {
            due.due.checked_add(after).ok().map(|next| next.max(at))
        } else {
            None
        };
        tx.escalated(id, level, next).await?;
        let notified = notified(&written);
        let round = AlertEvent {
            count: Some(level),
            notified: Some(&notified),
            ..AlertEvent::new(TimelineKind::Escalated, created, None)
        };
        tx.record_alert_event(id, &round).await?;
        let alert = tx.alert(id).await?;
        tx.announce_alert(&due.node, &alert);
        tx.commit().await?;
        Ok(true)
    }

    /// One delivery per distinct address of the contacts: email as is, SMS with the
    /// subject as its body. None usable: one `NoAddress` delivery records why.
    fn deliveries_to(
        &self,
        contacts: &[Contact],
        subject: &str,
        template: NewDelivery,
    ) -> Vec<NewDelivery> {
        let mut written: Vec<NewDelivery> = Vec::new();
        let mut seen = Vec::new();
        for entry in contacts.iter().flat_map(|c| &c.contact_entries) {
            let Ok(address) = ContactAddress::parse(&entry.address) else {
                continue;
            };
            let d = match address {
                ContactAddress::Email(email) => NewDelivery {
                    channel: Channel::Email,
                    target: Some(email),
                    status: DeliveryStatus::new_on(self.config.email),
                    ..template.clone()
                },
                ContactAddress::Phone(phone) => NewDelivery {
                    channel: Channel::Sms,
                    target: Some(phone),
                    body: subject.to_string(),
                    status: DeliveryStatus::new_on(self.config.sms),
                    ..template.clone()
                },
            };
            let key = (d.channel, d.target.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            written.push(d);
        }
        if written.is_empty() {
            written.push(NewDelivery {
                channel: Channel::Email,
                body: "the tenant has no escalation contacts (IsEscalationContact)".into(),
                status: DeliveryStatus::NoAddress,
                next_attempt_at: None,
                ..template
            });
        }
        written
    }
}

/// The round's subject (also the SMS text) and email body.
fn round_message(alert: &Alert, level: i64, rounds: i64) -> (String, String) {
    let subject = format!(
        "[{}] Escalation {level} of {rounds}: {} — {} (not acknowledged)",
        alert.severity.word(),
        alert.notification_name,
        alert.device_id
    );
    let body = format!(
        "{subject}\n\nAlert {} was raised at {} and is still open.\nPosition: {}\nAcknowledge it to stop further escalation.\n",
        alert.alert_id,
        alert.raised_at,
        match (alert.latitude, alert.longitude) {
            (Some(lat), Some(lon)) => format!("{lat:.5}, {lon:.5}"),
            _ => "unknown".into(),
        }
    );
    (subject, body)
}

/// What every delivery of the round shares: an email with no address yet, linked to the
/// alert, its notification, message and device.
fn round_delivery(
    due: &DueEscalation,
    subject: String,
    body: String,
    created: Timestamp,
) -> NewDelivery {
    let alert = &due.alert;
    NewDelivery {
        tenant_code: due.node.code.clone(),
        channel: Channel::Email,
        target: None,
        status: DeliveryStatus::NoAddress,
        subject: Some(subject),
        body,
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

/// Who the round notified, for its timeline step: the deliveries that had an address.
fn notified(written: &[NewDelivery]) -> Vec<Notified> {
    written
        .iter()
        .filter(|d| d.status != DeliveryStatus::NoAddress)
        .map(|d| Notified {
            channel: d.channel,
            target: d.target.clone(),
        })
        .collect()
}
