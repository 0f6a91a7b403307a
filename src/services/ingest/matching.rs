//! Matching: every notification that applies to a device evaluated against what a
//! message (or a missed check-in) means, and each match acted on inside the caller's
//! transaction: the facts it needs looked up (recipients, the tenant's time zone, the
//! device's user), its effects planned by the domain (`match_effects::plan_match`) and
//! applied (`effects.rs`).

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::effects::{DeliveryBase, apply_effects};
use super::{Pipeline, Triggered};
use crate::domain::alert::Alert;
use crate::domain::device::Device;
use crate::domain::device_state::{DeviceState, Observation};
use crate::domain::events::{EventFacts, GeofenceFact, evaluate_expression};
use crate::domain::ids::{DeviceId, MoMessageId};
use crate::domain::match_effects::{
    Circumstances, Matched, ServerChannels, needs_device_user, plan_match,
};
use crate::domain::mo_message::MoMessage;
use crate::domain::recipient_targets::MatchedDevice;
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;
use crate::domain::webhook::WebhookSettings;
use crate::services::recipients::resolve_recipients;
use crate::services::rules::{CompiledNotification, TenantRules};
use crate::store::{NewDelivery, StoreResult, WriteTx};

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

/// One device's unit of work in its transaction: what matching reads and changes.
pub(super) struct UnitOfWork<'a> {
    pub(super) tx: &'a mut WriteTx,
    pub(super) node: &'a TenantNode,
    /// The tenant's webhook settings, read once per unit of work: every match emits an
    /// `EventNotification` event, and a query per match cost the writer a round trip.
    pub(super) webhooks: Option<&'a WebhookSettings>,
    /// The device's id (the unit found the device by it: no `Option` to read).
    pub(super) device_id: &'a DeviceId,
    pub(super) device: &'a mut Device,
    pub(super) state: &'a mut DeviceState,
    pub(super) changes: &'a mut Changes,
}

/// What happened: a stored message, or (for a missed check-in) nothing at a time.
pub(super) struct Occurrence<'a> {
    pub(super) message: Option<(MoMessageId, &'a MoMessage)>,
    pub(super) time: Timestamp,
}

impl Pipeline {
    /// Evaluates every notification that applies to the device against the observation
    /// and acts on each match. Returns what triggered.
    pub(super) async fn match_notifications(
        &self,
        unit: &mut UnitOfWork<'_>,
        rules: &TenantRules,
        mut observation: Observation,
        occurrence: Occurrence<'_>,
    ) -> StoreResult<Vec<Triggered>> {
        let device_id = unit.device_id;
        let device_type = unit.device.device_type.clone();
        let group = unit.device.group_id;
        let mut triggered = Vec::new();
        for notification in &rules.notifications {
            if !notification.applies_to(device_id, &device_type, group) {
                continue;
            }
            let facts: &mut EventFacts = &mut observation.facts;
            facts.set_local_time(occurrence.time, &notification.zone);
            if !evaluate_expression(&notification.expression, facts) {
                continue;
            }
            let alert = self
                .act(unit, notification, &observation, &occurrence)
                .await?;
            triggered.push(Triggered {
                notification_id: notification.id,
                notification_name: notification.record.notification_name.clone(),
                alert_id: alert.as_ref().map(|a| a.alert_id),
            });
            unit.changes.alerts.extend(alert);
        }
        Ok(triggered)
    }

    /// One match: the facts looked up, its effects planned, then applied. Returns the
    /// alert it raised or joined.
    async fn act(
        &self,
        unit: &mut UnitOfWork<'_>,
        notification: &CompiledNotification,
        observation: &Observation,
        occurrence: &Occurrence<'_>,
    ) -> StoreResult<Option<Alert>> {
        let position = occurrence
            .message
            .and_then(|(_, m)| m.position.as_ref()?.lat_lon())
            .or_else(|| unit.state.last_position.as_ref().map(|p| (p.lat, p.lon)));
        let device = &*unit.device;
        let matched = Matched {
            notification_id: notification.id,
            notification: &notification.record,
            severity: notification.severity,
            device,
            message: occurrence.message,
            time: occurrence.time,
            observation,
            position,
        };
        let resolved = resolve_recipients(
            unit.tx,
            unit.node,
            &MatchedDevice {
                device_id: unit.device_id.as_str(),
                group_id: device.group_id.map(|id| id.get()),
                user_id: device.user_id.map(|id| id.get()),
                position,
            },
            &notification.record.recipients,
        )
        .await?;
        let targets = resolved.targets;
        let at = now();
        let tenant_zone = if targets.is_empty() {
            TimeZone::UTC
        } else {
            self.tenant_zone(unit.tx, &unit.node.code).await?
        };
        // The device's user, if a recipient did not already read it.
        let user_id = device.user_id.map(|id| id.get());
        let device_user = match user_id.filter(|_| needs_device_user(&matched, &targets)) {
            Some(id) => match resolved.facts.users.get(&id) {
                Some(user) => user.clone(),
                None => unit.tx.user_contact(id).await?,
            },
            None => None,
        };
        let effects = plan_match(
            &matched,
            &Circumstances {
                targets,
                tenant_zone,
                device_user: device_user.as_ref(),
                tenant_webhooks: unit.webhooks.is_some(),
                channels: ServerChannels {
                    email: self.config.email,
                    sms: self.config.sms,
                    voice: self.config.voice,
                    escalation_after: self.config.escalation_after,
                },
                now: at,
            },
        );
        let base = DeliveryBase {
            notification_id: notification.id,
            message_id: occurrence.message.map(|(id, _)| id),
            at,
        };
        apply_effects(unit, &base, effects).await
    }

    /// The scheduler's unit of work: if the device's check-in is (still) due at `at`,
    /// evaluates `MissedCheckIn` against its notifications, acts on the matches and
    /// moves the schedule on. Returns whether a missed check-in was recorded.
    pub async fn run_missed_check_in(
        &self,
        node: &TenantNode,
        device_id: &DeviceId,
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
        let observation = missed_check_in(&state);
        let mut changes = Changes::default();
        let mut unit = UnitOfWork {
            tx: &mut tx,
            node,
            webhooks: webhooks.as_ref(),
            device_id,
            device: &mut device,
            state: &mut state,
            changes: &mut changes,
        };
        let occurrence = Occurrence {
            message: None,
            time: due,
        };
        self.match_notifications(&mut unit, &rules, observation, occurrence)
            .await?;
        state.missed_check_in(due, at);
        write_deliveries(&mut tx, &mut changes).await?;
        tx.save_state(&node.code, device_id, &state).await?;
        // Only the schedule moved: no device event.
        changes.device_changed = false;
        let announced = super::announcement(node, device_id, &device, &state, Vec::new(), &changes);
        tx.announce_stream(&announced).await?;
        tx.commit().await?;
        self.publish(node, &device, &state, changes, Vec::new());
        Ok(true)
    }
}

/// What a missed check-in means to the events engine: `MissedCheckIn`, inside the
/// geofences the device was last in.
fn missed_check_in(state: &DeviceState) -> Observation {
    Observation {
        facts: EventFacts {
            missed_check_in: true,
            inside: state
                .containing_geofences
                .iter()
                .map(|g| GeofenceFact {
                    id: g.geofence_id.clone(),
                    name: g.geofence_name.clone(),
                })
                .collect(),
            ..Default::default()
        },
        late: false,
        containing: state.containing_geofences.clone(),
    }
}

/// Writes the deliveries the unit's matches queued, in one statement.
pub(super) async fn write_deliveries(tx: &mut WriteTx, changes: &mut Changes) -> StoreResult<()> {
    if changes.deliveries.is_empty() {
        return Ok(());
    }
    if changes
        .deliveries
        .iter()
        .any(|d| d.status == crate::domain::delivery::DeliveryStatus::Pending)
    {
        changes.queued_deliveries = true;
        changes.alerting_queued = true;
    }
    tx.insert_deliveries(&std::mem::take(&mut changes.deliveries))
        .await
}
