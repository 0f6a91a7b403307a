//! Escalation until someone acknowledges: an `Open` Warning or High alert
//! that nobody acknowledged `escalation_after` after it was raised notifies the tenant's
//! escalation contacts (its own and those its ancestors share), and again every
//! `escalation_after`, for at most `escalation_rounds` rounds. Acknowledging or resolving
//! stops it (the alert's due time is cleared). Each round is one transaction: the level,
//! the next due time, the deliveries and the round's step on the alert's timeline (who
//! was notified) commit together, so a restart neither skips nor repeats a round; the
//! alert as the round left it is an `alert` event on the live stream.

use std::sync::Arc;

use jiff::Timestamp;

use super::alerts::publish_alert;
use super::ingest::PipelineConfig;
use super::stream::EventHub;
use crate::domain::address::ContactAddress;
use crate::domain::alert::{Notified, TimelineKind};
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::ids::AlertId;
use crate::domain::time::now;
use crate::store::{AlertEvent, NewDelivery, Store, StoreResult};

pub struct Escalator {
    store: Store,
    config: PipelineConfig,
    /// Where a round's alert is published (SQLite; PostgreSQL's is announced).
    hub: Arc<EventHub>,
}

impl Escalator {
    pub fn new(store: Store, config: PipelineConfig, hub: Arc<EventHub>) -> Self {
        Self { store, config, hub }
    }

    /// Runs the round of alert `id` if it is still due at `at`. Returns whether it ran.
    pub async fn run_round(&self, id: i64, at: Timestamp) -> StoreResult<bool> {
        let Some(after) = self.config.escalation_after else {
            return Ok(false);
        };
        let mut tx = self.store.begin().await?;
        let Some(due) = tx.lock_due_escalation(AlertId::new(id), at).await? else {
            return Ok(false);
        };
        let alert = &due.alert;
        let level = alert.escalation_level + 1;
        let rounds = self.config.escalation_rounds.max(1);
        let subject = format!(
            "[{}] Escalation {level} of {rounds}: {} — {} (not acknowledged)",
            alert.severity.unwrap_or_default().word(),
            alert.notification_name.as_deref().unwrap_or_default(),
            alert.device_id.as_deref().unwrap_or_default()
        );
        let body = format!(
            "{subject}\n\nAlert {} was raised at {} and is still open.\nPosition: {}\nAcknowledge it to stop further escalation.\n",
            alert.alert_id.as_deref().unwrap_or_default(),
            alert.raised_at.map(|t| t.to_string()).unwrap_or_default(),
            match (alert.latitude, alert.longitude) {
                (Some(lat), Some(lon)) => format!("{lat:.5}, {lon:.5}"),
                _ => "unknown".into(),
            }
        );
        let created = now();
        let base = NewDelivery {
            tenant_code: due.node.code.clone(),
            channel: Channel::Email,
            target: None,
            status: DeliveryStatus::NoAddress,
            subject: Some(subject.clone()),
            body: body.clone(),
            notification_id: alert
                .notification_id
                .as_deref()
                .and_then(|n| n.parse().ok()),
            alert_id: Some(id),
            message_id: alert.message_id.as_deref().and_then(|m| m.parse().ok()),
            device_id: alert.device_id.clone(),
            mt_message_id: None,
            event_id: None,
            created_at: created,
            next_attempt_at: Some(created),
            sent_at: None,
        };
        let mut written: Vec<NewDelivery> = Vec::new();
        let mut seen = Vec::new();
        for contact in tx.escalation_contacts(&due.node).await? {
            for entry in &contact.contact_entries {
                let Some(Ok(address)) = entry.address.as_deref().map(ContactAddress::parse) else {
                    continue;
                };
                let d = match address {
                    ContactAddress::Email(email) => NewDelivery {
                        channel: Channel::Email,
                        target: Some(email),
                        status: DeliveryStatus::new_on(self.config.email),
                        ..base.clone()
                    },
                    ContactAddress::Phone(phone) => NewDelivery {
                        channel: Channel::Sms,
                        target: Some(phone),
                        body: subject.clone(),
                        status: DeliveryStatus::new_on(self.config.sms),
                        ..base.clone()
                    },
                };
                let key = (d.channel, d.target.clone());
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                written.push(d);
            }
        }
        if written.is_empty() {
            written.push(NewDelivery {
                channel: Channel::Email,
                body: "the tenant has no escalation contacts (IsEscalationContact)".into(),
                status: DeliveryStatus::NoAddress,
                next_attempt_at: None,
                ..base
            });
        }
        tx.insert_deliveries(&written).await?;
        let next = if level < rounds {
            due.due.checked_add(after).ok().map(|next| next.max(at))
        } else {
            None
        };
        tx.escalated(id, level, next).await?;
        let notified: Vec<Notified> = written
            .iter()
            .filter(|d| d.status != DeliveryStatus::NoAddress)
            .map(|d| Notified {
                channel: d.channel,
                target: d.target.clone(),
            })
            .collect();
        let round = AlertEvent {
            count: Some(level),
            notified: Some(&notified),
            ..AlertEvent::new(TimelineKind::Escalated, created, None)
        };
        tx.record_alert_event(id, &round).await?;
        let alert = tx.alert(id).await?;
        tx.announce_alert(&due.node, &alert).await?;
        tx.commit().await?;
        publish_alert(&self.store, &self.hub, &due.node, &alert);
        Ok(true)
    }
}
