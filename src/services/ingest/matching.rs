//! Matching: every notification that applies to a device evaluated against what a
//! message (or a missed check-in) means, and each match acted on inside the caller's
//! transaction: the facts it needs looked up (recipients, the tenant's time zone, the
//! device's user), its effects planned by the domain (`match_effects::plan_match`) and
//! applied (`effects.rs`). What the unit of work shares: `unit.rs`.

use jiff::tz::TimeZone;

use super::effects::{DeliveryBase, apply_effects};
use super::unit::{Occurrence, UnitOfWork};
use super::{Pipeline, Triggered};
use crate::domain::alert::Alert;
use crate::domain::device_state::Observation;
use crate::domain::events::{EventFacts, evaluate_expression};
use crate::domain::match_effects::{
    Circumstances, Matched, ServerChannels, needs_device_user, plan_match,
};
use crate::domain::place::ReaderUnits;
use crate::domain::recipient_targets::{MatchedDevice, Target};
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;
use crate::services::recipients::resolve_recipients;
use crate::services::rules::{CompiledNotification, TenantRules};
use crate::store::{StoreResult, WriteTx};

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
        let tenant_units = self.tenant_units(unit.tx, unit.node, &targets).await?;
        let readers = resolved.facts.users.values().flatten().collect();
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
                tenant_units,
                readers,
            },
        );
        let base = DeliveryBase {
            notification_id: notification.id,
            message_id: occurrence.message.map(|(id, _)| id),
            at,
        };
        apply_effects(unit, &base, effects).await
    }

    /// The tenant's units for messages to outside contacts (read only when someone is
    /// told).
    async fn tenant_units(
        &self,
        tx: &mut WriteTx,
        node: &TenantNode,
        targets: &[Target],
    ) -> StoreResult<ReaderUnits> {
        if targets.is_empty() {
            return Ok(ReaderUnits::default());
        }
        let tenant = self.tenant_in(tx, &node.code).await?;
        Ok(tenant.map_or_else(ReaderUnits::default, |t| {
            ReaderUnits::of_tenant(&t.properties)
        }))
    }
}
