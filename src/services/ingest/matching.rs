//! Matching: every notification that applies to a device evaluated against what a
//! message (or a missed check-in) means, and each match acted on — the alert raised or
//! joined, the recipients resolved, the deliveries and MT messages written, the
//! commands' effects applied — inside the caller's transaction.

use jiff::Timestamp;

use super::{Pipeline, Triggered};
use crate::domain::alert::{Alert, TimelineKind};
use crate::domain::delivery::{self, MatchSummary};
use crate::domain::device::Device;
use crate::domain::device_state::{DeviceState, Observation};
use crate::domain::events::{EventFacts, evaluate_expression};
use crate::domain::mo_message::MoMessage;
use crate::domain::mt_message::{MtMessage, QUEUED};
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;
use crate::domain::webhook::{Category, WebhookSettings};
use crate::domain::webhook_event::{EventType, WebhookEvent, event_data};
use crate::services::recipients::{Match, Target, resolve_recipients};
use crate::services::rules::{CompiledNotification, TenantRules};
use crate::store::{AlertEvent, AlertMatch, NewDelivery, StoreResult, WriteTx};

/// What one unit of work (a batch, or a missed check-in) changed, to publish after commit.
#[derive(Default)]
pub(super) struct Changes {
    pub(super) alerts: Vec<Alert>,
    pub(super) device_changed: bool,
    /// `Pending` deliveries were queued: the delivery worker is woken after the commit.
    /// (Only for those: a match whose channels are not configured leaves work for nobody,
    /// and a claim for nothing takes the SQLite writer's turn from ingest.)
    pub(super) queued_deliveries: bool,
    /// A match queued `Pending` deliveries (people's channels or its EventNotification
    /// webhooks): the alerting loop is woken after the commit.
    pub(super) alerting_queued: bool,
    /// The matches' deliveries, written together once the unit's matching is done
    /// (`write_deliveries`).
    pub(super) deliveries: Vec<NewDelivery>,
}

/// What matching needs besides the transaction.
pub(super) struct Context<'a> {
    pub(super) node: &'a TenantNode,
    /// The tenant's webhook settings, read once per unit of work: every match emits an
    /// `EventNotification` event, and a query per match cost the writer a round trip.
    pub(super) webhooks: Option<&'a WebhookSettings>,
}

/// What happened: a stored message, or (for a missed check-in) nothing at a time.
pub(super) struct Occurrence<'a> {
    pub(super) message: Option<(i64, &'a MoMessage)>,
    pub(super) time: Timestamp,
}

impl Pipeline {
    /// Evaluates every notification that applies to the device against the observation
    /// and acts on each match. Returns what triggered.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn match_notifications(
        &self,
        tx: &mut WriteTx,
        context: &Context<'_>,
        rules: &TenantRules,
        device: &mut Device,
        state: &mut DeviceState,
        mut observation: Observation,
        occurrence: Occurrence<'_>,
        changes: &mut Changes,
    ) -> StoreResult<Vec<Triggered>> {
        let device_id = device.device_id.clone().unwrap_or_default();
        let device_type = device.device_type.clone().unwrap_or_default();
        let group = device.group_id_number();
        let mut triggered = Vec::new();
        for notification in &rules.notifications {
            if !notification.applies_to(&device_id, &device_type, group) {
                continue;
            }
            let facts: &mut EventFacts = &mut observation.facts;
            facts.set_local_time(occurrence.time, &notification.zone);
            if !evaluate_expression(&notification.expression, facts) {
                continue;
            }
            let alert = self
                .act(
                    tx,
                    context,
                    notification,
                    device,
                    state,
                    &observation,
                    &occurrence,
                    changes,
                )
                .await?;
            triggered.push(Triggered {
                notification_id: notification.id.to_string(),
                notification_name: notification
                    .record
                    .notification_name
                    .clone()
                    .unwrap_or_default(),
                alert_id: alert.as_ref().and_then(|a| a.alert_id.clone()),
            });
            changes.alerts.extend(alert);
        }
        Ok(triggered)
    }

    /// One match: raise or join the alert, resolve the recipients, write the deliveries,
    /// queue the device commands, apply their effects.
    #[allow(clippy::too_many_arguments)]
    async fn act(
        &self,
        tx: &mut WriteTx,
        context: &Context<'_>,
        notification: &CompiledNotification,
        device: &mut Device,
        state: &mut DeviceState,
        observation: &Observation,
        occurrence: &Occurrence<'_>,
        changes: &mut Changes,
    ) -> StoreResult<Option<Alert>> {
        let record = &notification.record;
        let device_id = device.device_id.clone().unwrap_or_default();
        let position = occurrence
            .message
            .and_then(|(_, m)| m.position.as_ref()?.lat_lon())
            .or_else(|| state.last_position.as_ref().map(|p| (p.lat, p.lon)));
        let geofence_names: Vec<String> = observation
            .containing
            .iter()
            .map(|g| g.geofence_name.clone())
            .collect();
        let severity = record.severity.clone().unwrap_or_else(|| "0".into());
        let alert = if record.raise_alert {
            let escalates = matches!(severity.as_str(), "1" | "2");
            let at = now();
            let (alert, raised) = tx
                .raise_or_join_alert(&AlertMatch {
                    tenant_code: &context.node.code,
                    device_id: &device_id,
                    notification_id: notification.id,
                    notification_name: record.notification_name.as_deref().unwrap_or_default(),
                    severity: &severity,
                    at,
                    position,
                    geofences: &geofence_names,
                    message_id: occurrence.message.map(|(id, _)| id),
                    late: observation.late,
                    escalate_at: self
                        .config
                        .escalation_after
                        .filter(|_| escalates)
                        .and_then(|after| now().checked_add(after).ok()),
                })
                .await?;
            record_match(tx, &alert, raised, at, occurrence, position).await?;
            Some(alert)
        } else {
            None
        };
        let alert_id = alert
            .as_ref()
            .and_then(|a| a.alert_id.as_deref())
            .and_then(|id| id.parse().ok());
        if let Some(webhooks) = context.webhooks {
            let fired = serde_json::json!({
                "NotificationId": notification.id.to_string(),
                "NotificationName": record.notification_name,
                "Severity": severity,
                "DeviceId": device_id,
                "MessageId": occurrence.message.map(|(id, _)| id.to_string()),
                "AlertId": alert.as_ref().and_then(|a| a.alert_id.clone()),
                "Alert": alert,
                "MissedCheckIn": observation.facts.missed_check_in,
                "Time": occurrence.time,
                "Latitude": position.map(|p| p.0),
                "Longitude": position.map(|p| p.1),
                "Geofences": geofence_names,
                "Late": observation.late,
            });
            let mut event = WebhookEvent::from_value(
                Category::EventNotification,
                EventType::Fired,
                &context.node.code,
                now(),
                fired,
            );
            // Sent with the match's e-mails and calls, not behind other webhooks.
            event.notification_id = Some(notification.id);
            let emitted = tx
                .emit_events_with(
                    webhooks,
                    &context.node.code,
                    Category::EventNotification,
                    &[event],
                )
                .await?;
            if emitted > 0 {
                changes.queued_deliveries = true;
                changes.alerting_queued = true;
            }
        }

        let targets = resolve_recipients(
            tx,
            &Match {
                node: context.node,
                device,
                position,
            },
            &record.recipients,
        )
        .await?;
        if targets.is_empty() {
            return Ok(alert);
        }
        let event = if observation.facts.missed_check_in {
            "MissedCheckIn".to_string()
        } else if observation.facts.emergency {
            "Emergency".to_string()
        } else if observation.facts.emergency_cancelled {
            "EmergencyCancelled".to_string()
        } else {
            observation
                .facts
                .message_type
                .clone()
                .unwrap_or_else(|| "Message".into())
        };
        let tenant_zone = self.tenant_zone(tx, &context.node.code).await?;
        let mut summary = MatchSummary {
            notification_name: record.notification_name.clone().unwrap_or_default(),
            notification_text: record.notification_text.clone(),
            severity: record.severity.clone(),
            device_id: device_id.clone(),
            device_name: device.friendly_name.clone(),
            event,
            message_type: occurrence.message.and_then(|(_, m)| m.message_type.clone()),
            emergency_state: occurrence
                .message
                .and_then(|(_, m)| m.emergency_state.clone()),
            time: occurrence.time,
            tenant_zone,
            position,
            geofences: geofence_names,
            emergency_contacts: Vec::new(),
            emergency_information: None,
        };
        if observation.facts.emergency
            && targets.iter().any(|t| matches!(t, Target::Email(_)))
            && let Some(user) = device.user_id_number()
            && let Some(user) = tx.user_contact(user).await?
        {
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

        let created = now();
        let base = NewDelivery {
            tenant_code: context.node.code.clone(),
            notification_id: Some(notification.id),
            alert_id,
            message_id: occurrence.message.map(|(id, _)| id),
            device_id: Some(device_id.clone()),
            created_at: created,
            ..Default::default()
        };
        let status = |configured: bool| {
            if configured {
                delivery::PENDING
            } else {
                delivery::NOT_CONFIGURED
            }
        };
        for target in targets {
            let delivery = match target {
                Target::Email(address) => NewDelivery {
                    channel: delivery::EMAIL,
                    target: Some(address),
                    subject: Some(summary.subject()),
                    body: summary.email_body(),
                    status: status(self.config.email),
                    next_attempt_at: Some(created),
                    ..base.clone()
                },
                Target::Sms(number) => NewDelivery {
                    channel: delivery::SMS,
                    target: Some(number),
                    body: summary.sms_body(),
                    status: status(self.config.sms),
                    next_attempt_at: Some(created),
                    ..base.clone()
                },
                Target::Voice(number) => NewDelivery {
                    channel: delivery::VOICE,
                    target: Some(number),
                    body: summary.voice_body(),
                    status: status(self.config.voice),
                    next_attempt_at: Some(created),
                    ..base.clone()
                },
                Target::Device {
                    device_id: to_device,
                    kind,
                    parameters,
                } => {
                    let text = summary.device_text();
                    let mt = MtMessage {
                        r#type: Some(kind.to_string()),
                        message: Some(text.clone()),
                        parameters,
                        status: Some(QUEUED.into()),
                        ..Default::default()
                    };
                    let mt_id = tx
                        .queue_mt_message(
                            &context.node.code,
                            &to_device,
                            &mt,
                            Some(notification.id),
                        )
                        .await?;
                    NewDelivery {
                        channel: delivery::MT,
                        target: Some(to_device),
                        subject: Some(kind.to_string()),
                        body: text,
                        // Queued for the device in this very transaction.
                        status: delivery::SENT,
                        sent_at: Some(created),
                        mt_message_id: Some(mt_id),
                        ..base.clone()
                    }
                }
                Target::Nobody { channel, why } => NewDelivery {
                    channel: match channel {
                        "Sms" => delivery::SMS,
                        "Voice" => delivery::VOICE,
                        "Mt" => delivery::MT,
                        _ => delivery::EMAIL,
                    },
                    target: None,
                    subject: Some(summary.subject()),
                    body: why,
                    status: delivery::NO_ADDRESS,
                    ..base.clone()
                },
                Target::MoveToGroup(group) => {
                    if tx
                        .move_device(&context.node.code, &device_id, group)
                        .await?
                    {
                        device.group_id = Some(group.to_string());
                        let shown = event_data(&device.clone().with_state(state));
                        tx.emit_events(
                            &context.node.code,
                            Category::Device,
                            EventType::Updated,
                            vec![shown],
                        )
                        .await?;
                    }
                    continue;
                }
                Target::CheckInInterval(minutes) => {
                    state.set_check_in_interval(Some(minutes), now());
                    continue;
                }
                Target::PauseCheckIns(paused) => {
                    state.pause_check_in(paused, now());
                    continue;
                }
            };
            changes.deliveries.push(delivery);
        }
        Ok(alert)
    }

    /// The scheduler's unit of work: if the device's check-in is (still) due at `at`,
    /// evaluates `MissedCheckIn` against its notifications, acts on the matches and
    /// moves the schedule on. Returns whether a missed check-in was recorded.
    pub async fn run_missed_check_in(
        &self,
        node: &TenantNode,
        device_id: &str,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let rules = self.rules.get(&self.store, node).await?;
        let webhooks = self.store.get_webhooks(&node.code).await?;
        let mut tx = self.store.begin().await?;
        let Some((mut device, mut state)) = tx.lock_device(&node.code, device_id).await? else {
            return Ok(false);
        };
        // Another process (or a message) got here first.
        let Some(due) = state.next_check_in_at.filter(|due| *due <= at) else {
            return Ok(false);
        };
        let observation = Observation {
            facts: EventFacts {
                missed_check_in: true,
                inside: state
                    .containing_geofences
                    .iter()
                    .map(|g| crate::domain::events::GeofenceFact {
                        id: g.geofence_id.clone(),
                        name: g.geofence_name.clone(),
                    })
                    .collect(),
                ..Default::default()
            },
            late: false,
            containing: state.containing_geofences.clone(),
        };
        let context = Context {
            node,
            webhooks: webhooks.as_ref(),
        };
        let mut changes = Changes::default();
        self.match_notifications(
            &mut tx,
            &context,
            &rules,
            &mut device,
            &mut state,
            observation,
            Occurrence {
                message: None,
                time: due,
            },
            &mut changes,
        )
        .await?;
        state.missed_check_in(due, at);
        write_deliveries(&mut tx, &mut changes).await?;
        tx.save_state(&node.code, device_id, &state).await?;
        // Only the schedule moved: no device event.
        changes.device_changed = false;
        tx.announce_stream(&super::announcement(
            node,
            &device,
            &state,
            Vec::new(),
            &changes,
        ))
        .await?;
        tx.commit().await?;
        self.publish(node, &device, &state, changes, Vec::new());
        Ok(true)
    }
}

/// The match's step on the alert's timeline: `Raised`, or `Matched` with the count it
/// brought the alert to (one insert per match that raises or joins an alert).
async fn record_match(
    tx: &mut WriteTx,
    alert: &Alert,
    raised: bool,
    at: Timestamp,
    occurrence: &Occurrence<'_>,
    position: Option<(f64, f64)>,
) -> StoreResult<()> {
    let Some(id) = alert.alert_id.as_deref().and_then(|id| id.parse().ok()) else {
        return Ok(());
    };
    let kind = if raised {
        TimelineKind::Raised
    } else {
        TimelineKind::Matched
    };
    let event = AlertEvent {
        message_id: occurrence.message.map(|(id, _)| id),
        position,
        count: (!raised).then_some(alert.match_count),
        ..AlertEvent::new(kind, at, None)
    };
    tx.record_alert_event(id, &event).await
}

/// Writes the deliveries the unit's matches queued, in one statement.
pub(super) async fn write_deliveries(tx: &mut WriteTx, changes: &mut Changes) -> StoreResult<()> {
    if changes.deliveries.is_empty() {
        return Ok(());
    }
    if changes
        .deliveries
        .iter()
        .any(|d| d.status == delivery::PENDING)
    {
        changes.queued_deliveries = true;
        changes.alerting_queued = true;
    }
    tx.insert_deliveries(&std::mem::take(&mut changes.deliveries))
        .await
}
