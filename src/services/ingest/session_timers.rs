//! The monitoring timer worker's unit of work (`workers/monitoring.rs` finds the sessions
//! due; docs/monitoring.md, "Timers"): the session timers of a step's devices fired in
//! one transaction — a reminder queues an MT check-in request, a missed check-in, an
//! overdue session and no motion are evaluated like a message (`MissedCheckIn`,
//! `MonitoringOverdue`, `NoMotion`) against the device's notifications — each once, the
//! device and session rows locked. One transaction for the step, not one per session:
//! on SQLite every transaction waits its turn at the one writer, and beside ingest a
//! turn per timer let due timers pile up by the thousand (bench/README.md).

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;

use super::Pipeline;
use super::missed_check_in::timed_observation;
use super::unit::{Changes, Occurrence, UnitOfWork, write_deliveries};
use crate::domain::device_state::DeviceState;
use crate::domain::device_state::Observation;
use crate::domain::events::{EventFacts, EventName};
use crate::domain::ids::{DeviceId, TenantCode};
use crate::domain::monitoring::{MonitoringSession, NoMotionCheck, SessionTimer, timers_to_fire};
use crate::domain::mt_message::{MtType, NewMtMessage};
use crate::domain::tenant::TenantNode;
use crate::domain::webhook::WebhookSettings;
use crate::services::rules::TenantRules;
use crate::store::{StoreResult, WriteTx};

/// What a tenant's timers are evaluated against, read before the transaction.
struct TimerContext {
    rules: Arc<TenantRules>,
    webhooks: Option<WebhookSettings>,
}

impl Pipeline {
    /// Fires the timers due at `at` of the current sessions of `devices`, each in time
    /// order, all in one transaction, the devices locked in one order (tenant, device
    /// id) so that workers racing on PostgreSQL cannot deadlock. Returns how many fired
    /// (a device whose timers were no longer due — another process or a check-in got
    /// there first — fires none). An error rolls back the whole step.
    pub async fn run_monitoring_timers(
        &self,
        devices: &[(TenantNode, DeviceId)],
        at: Timestamp,
    ) -> StoreResult<usize> {
        let mut contexts: HashMap<TenantCode, TimerContext> = HashMap::new();
        for (node, _) in devices {
            if !contexts.contains_key(&node.code) {
                let context = TimerContext {
                    rules: self.rules.get(&self.store, node).await?,
                    webhooks: self.store.get_webhooks(&node.code).await?,
                };
                contexts.insert(node.code.clone(), context);
            }
        }
        let mut ordered: Vec<&(TenantNode, DeviceId)> = devices.iter().collect();
        ordered.sort_by(|(a, x), (b, y)| (&a.code, x).cmp(&(&b.code, y)));
        ordered.dedup_by(|(a, x), (b, y)| a.code == b.code && x == y);
        let mut tx = self.store.begin().await?;
        let mut fired = 0;
        for (node, device_id) in ordered {
            if let Some(context) = contexts.get(&node.code) {
                fired += self
                    .fire_device_timers(&mut tx, node, device_id, context, at)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(fired)
    }

    /// The device's current session's timers due at `at`, in `tx`.
    async fn fire_device_timers(
        &self,
        tx: &mut WriteTx,
        node: &TenantNode,
        device_id: &DeviceId,
        context: &TimerContext,
        at: Timestamp,
    ) -> StoreResult<usize> {
        let (rules, webhooks) = (&context.rules, &context.webhooks);
        // The device first, as ingest locks it, then its session.
        let Some((mut device, mut state)) = tx.lock_device(&node.code, device_id).await? else {
            return Ok(0);
        };
        let Some(due) = tx
            .lock_due_monitoring_timers(&node.code, device_id, at)
            .await?
        else {
            return Ok(0);
        };
        let to_fire = timers_to_fire(due.due.clone());
        let mut changes = Changes::default();
        let mut fired = 0;
        for (timer, due_for) in &to_fire {
            if *timer == SessionTimer::NoMotion
                && due.session.motion.check(due.session.no_motion_window()) == NoMotionCheck::Parked
            {
                // Quiet, not still: the device's next report re-arms it.
                tx.park_no_motion_timer(&due.session).await?;
                continue;
            }
            fired += 1;
            let detail = match timer {
                SessionTimer::Reminder => Some(remind(tx, node, device_id, &due).await?),
                SessionTimer::MissedCheckIn | SessionTimer::Overdue | SessionTimer::NoMotion => {
                    let mut unit = UnitOfWork {
                        tx,
                        node,
                        webhooks: webhooks.as_ref(),
                        device_id,
                        device: &mut device,
                        state: &mut state,
                        changes: &mut changes,
                    };
                    let observation = timer_observation(*timer, unit.state);
                    let occurrence = Occurrence {
                        message: None,
                        time: *due_for,
                    };
                    self.match_notifications(&mut unit, rules, observation, occurrence)
                        .await?;
                    Some(timer_detail(*timer, &due.session))
                }
            };
            tx.fire_monitoring_timer(&due.session, (*timer, *due_for), at, detail)
                .await?;
        }
        // A reminder dropped beside its missed check-in is spent too, with no line.
        for skipped in due.due.iter().filter(|d| !to_fire.contains(d)) {
            tx.fire_monitoring_timer(&due.session, *skipped, at, None)
                .await?;
        }
        write_deliveries(tx, &mut changes).await?;
        tx.save_state(&node.code, device_id, &state).await?;
        super::record_outbox(tx, node, device_id, Vec::new(), changes, None);
        Ok(fired)
    }
}

/// The reminder: an MT `CheckInRequest` queued for the device (a gateway that carries MT
/// delivers it; the worker app's push is §12's), with the due time in its parameters.
async fn remind(
    tx: &mut WriteTx,
    node: &TenantNode,
    device_id: &DeviceId,
    due: &crate::store::DueTimers,
) -> StoreResult<serde_json::Value> {
    let schedule = due.session.clock().schedule();
    let mut parameters = serde_json::Map::new();
    parameters.insert(
        "DueAt".into(),
        serde_json::json!(schedule.next_due_at.to_string()),
    );
    let message = NewMtMessage {
        r#type: MtType::CheckInRequest,
        message: Some(format!(
            "Check-in due at {} UTC: reply or press check-in.",
            schedule.next_due_at.strftime("%H:%M")
        )),
        parameters,
    };
    let mt = tx
        .queue_mt_message(&node.code, device_id, &message, None)
        .await?;
    Ok(serde_json::json!({"MtMessageId": mt.to_string()}))
}

/// The event a timer raises in `EventsExpression` (a reminder raises none).
fn raised_event(timer: SessionTimer) -> Option<EventName> {
    match timer {
        SessionTimer::Reminder => None,
        SessionTimer::MissedCheckIn => Some(EventName::MissedCheckIn),
        SessionTimer::Overdue => Some(EventName::MonitoringOverdue),
        SessionTimer::NoMotion => Some(EventName::NoMotion),
    }
}

/// A raising timer's history detail: the event raised, and for no motion where the
/// device has been still and since when.
fn timer_detail(timer: SessionTimer, session: &MonitoringSession) -> serde_json::Value {
    let mut detail = serde_json::json!({"Event": raised_event(timer).map(EventName::as_str)});
    if let (SessionTimer::NoMotion, Some(((lat, lon), since))) = (timer, session.motion.anchor) {
        detail["Latitude"] = serde_json::json!(lat);
        detail["Longitude"] = serde_json::json!(lon);
        detail["StillSince"] = serde_json::json!(since.to_string());
    }
    detail
}

/// What a fired timer means to the events engine.
fn timer_observation(timer: SessionTimer, state: &DeviceState) -> Observation {
    let facts = EventFacts {
        missed_check_in: timer == SessionTimer::MissedCheckIn,
        monitoring_overdue: timer == SessionTimer::Overdue,
        no_motion: timer == SessionTimer::NoMotion,
        ..Default::default()
    };
    timed_observation(state, facts)
}
