//! A match's effects (`domain::match_effects::Effect`) applied in order inside the unit
//! of work's transaction: what the plan could not know — the alert's id, an MT
//! message's id, whether the group still exists — comes from the writes themselves.

use jiff::Timestamp;

use super::unit::UnitOfWork;
use crate::domain::alert::{Alert, TimelineKind};
use crate::domain::ids::{AlertId, MoMessageId, MtMessageId, NotificationId};
use crate::domain::match_effects::{self, AlertRaise, Effect, PlannedDelivery};
use crate::domain::monitoring::{DefaultSources, EndKind, RequestedSettings, SessionEnd};
use crate::domain::recipient_targets::MonitoringCommand;
use crate::domain::webhook::Category;
use crate::domain::webhook_event::{EventType, event_data};
use crate::store::{AlertEvent, AlertMatch, MatchedAlert, NewDelivery, StoreResult};

/// What every delivery of one match shares.
pub(super) struct DeliveryBase {
    pub(super) notification_id: NotificationId,
    pub(super) message_id: Option<MoMessageId>,
    /// The match's instant (the plan's clock): deliveries are created, and check-in
    /// changes made, at it.
    pub(super) at: Timestamp,
}

/// Applies `effects` in order; returns the alert raised or joined, if any. Deliveries go
/// to `changes.deliveries`, written once the unit's matching is done.
pub(super) async fn apply_effects(
    unit: &mut UnitOfWork<'_>,
    base: &DeliveryBase,
    effects: Vec<Effect>,
) -> StoreResult<Option<Alert>> {
    let mut alert: Option<Alert> = None;
    let mut alert_id: Option<AlertId> = None;
    let at = base.at;
    let mut effects = effects.into_iter();
    while let Some(effect) = effects.next() {
        match effect {
            Effect::RaiseOrJoinAlert(raise) => {
                let matched = raise_or_join(unit, base, &raise).await?;
                alert_id = Some(matched.alert.alert_id);
                alert = Some(matched.alert);
                if !matched.raised {
                    // Joined: nobody is told again (the escalation decides that).
                    let rest = match_effects::joining(effects.collect());
                    effects = rest.into_iter();
                }
            }
            Effect::Webhook(fired) => {
                let Some(webhooks) = unit.webhooks else {
                    continue;
                };
                let event = fired.event(&unit.node.code, alert.as_ref());
                let category = Category::EventNotification;
                let emitted = unit
                    .tx
                    .emit_events_with(webhooks, &unit.node.code, category, &[event])
                    .await?;
                if emitted > 0 {
                    unit.changes.queued_deliveries = true;
                    unit.changes.alerting_queued = true;
                }
            }
            Effect::Deliver(planned) => {
                let delivery = new_delivery(unit, base, alert_id, planned, None);
                unit.changes.deliveries.push(delivery);
            }
            Effect::QueueMt {
                device_id,
                message,
                delivery,
            } => {
                let code = &unit.node.code;
                let notification = Some(base.notification_id);
                let mt_id = unit
                    .tx
                    .queue_mt_message(code, &device_id, &message, notification)
                    .await?;
                let mt_id = Some(mt_id);
                let delivery = new_delivery(unit, base, alert_id, delivery, mt_id);
                unit.changes.deliveries.push(delivery);
            }
            Effect::MoveToGroup(group) => move_to_group(unit, group).await?,
            Effect::SetCheckInInterval(minutes) => {
                unit.state.set_check_in_interval(Some(minutes), at)
            }
            Effect::PauseCheckIns(paused) => unit.state.pause_check_in(paused, at),
            Effect::Monitoring(command) => monitor(unit, base, command).await?,
        }
    }
    Ok(alert)
}

/// Raises or joins the alert, and records the match's step on its timeline: `Raised`,
/// or `Matched` with the count it brought the alert to, collapsed into the alert's
/// newest step when that is a `Matched` one (`record_match`).
async fn raise_or_join(
    unit: &mut UnitOfWork<'_>,
    base: &DeliveryBase,
    raise: &AlertRaise,
) -> StoreResult<MatchedAlert> {
    let matched = unit
        .tx
        .raise_or_join_alert(&AlertMatch {
            tenant_code: &unit.node.code,
            device_id: unit.device_id.as_str(),
            notification_id: base.notification_id,
            notification_name: &raise.notification_name,
            severity: raise.severity,
            at: raise.at,
            position: raise.position,
            geofences: &raise.geofences,
            message_id: raise.message_id,
            late: raise.late,
            escalate_at: raise.escalate_at,
        })
        .await?;
    let kind = if matched.raised {
        TimelineKind::Raised
    } else {
        TimelineKind::Matched
    };
    let step = AlertEvent {
        message_id: raise.message_id,
        position: raise.position,
        count: (!matched.raised).then_some(matched.alert.match_count),
        ..AlertEvent::new(kind, raise.at, None)
    };
    let id = matched.alert.alert_id;
    if matched.raised {
        unit.tx.record_alert_event(id, &step).await?;
    } else {
        unit.tx.record_match(id, &step).await?;
    }
    Ok(matched)
}

/// `StartMonitoring` / `StopMonitoring` / `ForceStopMonitoring`: the matched device's
/// session started (with its defaults) or ended, at the match's instant, named after the
/// notification. The MT command is queued beside it (`QueueMt`).
async fn monitor(
    unit: &mut UnitOfWork<'_>,
    base: &DeliveryBase,
    command: MonitoringCommand,
) -> StoreResult<()> {
    let actor = format!("notification:{}", base.notification_id.get());
    let (code, device_id) = (&unit.node.code, unit.device_id.as_str());
    let (kind, reason) = match command {
        MonitoringCommand::Start => {
            let tenant = unit.tx.tenant(code).await?;
            let sources = DefaultSources {
                message: None,
                device: Some(&unit.device.properties),
                tenant: tenant.as_ref().map(|t| &t.properties),
            };
            let settings = RequestedSettings::settle_from_device(None, sources);
            let at = (base.at, actor.as_str());
            unit.tx
                .begin_device_monitoring(code, device_id, &settings, at)
                .await?;
            return Ok(());
        }
        MonitoringCommand::Stop => (EndKind::Normal, "StopMonitoring"),
        MonitoringCommand::ForceStop => (EndKind::ForceStop, "ForceStopMonitoring"),
    };
    let end = SessionEnd {
        at: base.at,
        by: actor,
        kind,
        reason: Some(format!("{reason} (event notification)")),
    };
    unit.tx.end_device_monitoring(code, device_id, &end).await?;
    Ok(())
}

/// `ChangeGroup`: the device moves if the group still exists, and the move is a device
/// event.
async fn move_to_group(unit: &mut UnitOfWork<'_>, group: i64) -> StoreResult<()> {
    if !unit
        .tx
        .move_device(&unit.node.code, unit.device_id, group)
        .await?
    {
        return Ok(());
    }
    unit.device.group_id = Some(crate::domain::ids::GroupId::new(group));
    let shown = event_data(&unit.device.clone().with_state(unit.state));
    unit.tx
        .emit_events(
            &unit.node.code,
            Category::Device,
            EventType::Updated,
            vec![shown],
        )
        .await?;
    Ok(())
}

fn new_delivery(
    unit: &UnitOfWork<'_>,
    base: &DeliveryBase,
    alert_id: Option<AlertId>,
    planned: PlannedDelivery,
    mt_message_id: Option<MtMessageId>,
) -> NewDelivery {
    NewDelivery {
        tenant_code: unit.node.code.clone(),
        channel: planned.channel,
        target: planned.target,
        subject: planned.subject,
        body: planned.body,
        status: planned.status,
        notification_id: Some(base.notification_id),
        alert_id,
        message_id: base.message_id,
        mt_message_id,
        device_id: Some(unit.device_id.clone()),
        event_id: None,
        created_at: base.at,
        next_attempt_at: planned.next_attempt_at,
        sent_at: planned.sent_at,
    }
}
