//! The monitoring timer worker's unit of work (`workers/monitoring.rs` finds the sessions
//! due; docs/monitoring.md, "Timers"): a device's session timers fired in one
//! transaction — a reminder queues an MT check-in request, a missed check-in and an
//! overdue session are evaluated like a message (`MissedCheckIn`, `MonitoringOverdue`)
//! against the device's notifications — each once, the session row locked.

use jiff::Timestamp;

use super::Pipeline;
use super::missed_check_in::timed_observation;
use super::unit::{Changes, Occurrence, UnitOfWork, write_deliveries};
use crate::domain::device_state::DeviceState;
use crate::domain::device_state::Observation;
use crate::domain::events::EventFacts;
use crate::domain::ids::DeviceId;
use crate::domain::monitoring::{MonitoringSession, NoMotionCheck, SessionTimer, timers_to_fire};
use crate::domain::mt_message::{MtType, NewMtMessage};
use crate::domain::tenant::TenantNode;
use crate::store::{StoreResult, WriteTx};

impl Pipeline {
    /// Fires the timers of the device's current session due at `at`, in time order, in
    /// one transaction. Returns how many fired (0: none was still due — another process
    /// or a check-in got here first).
    pub async fn run_monitoring_timers(
        &self,
        node: &TenantNode,
        device_id: &DeviceId,
        at: Timestamp,
    ) -> StoreResult<usize> {
        let rules = self.rules.get(&self.store, node).await?;
        let webhooks = self.store.get_webhooks(&node.code).await?;
        let mut tx = self.store.begin().await?;
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
                SessionTimer::Reminder => Some(remind(&mut tx, node, device_id, &due).await?),
                SessionTimer::MissedCheckIn | SessionTimer::Overdue | SessionTimer::NoMotion => {
                    let mut unit = UnitOfWork {
                        tx: &mut tx,
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
                    self.match_notifications(&mut unit, &rules, observation, occurrence)
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
        write_deliveries(&mut tx, &mut changes).await?;
        tx.save_state(&node.code, device_id, &state).await?;
        super::record_outbox(&mut tx, node, device_id, Vec::new(), changes, None);
        tx.commit().await?;
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

/// The event name a timer is to `EventsExpression`.
fn event_name(timer: SessionTimer) -> &'static str {
    match timer {
        SessionTimer::Reminder => "Reminder",
        SessionTimer::MissedCheckIn => "MissedCheckIn",
        SessionTimer::Overdue => "MonitoringOverdue",
        SessionTimer::NoMotion => "NoMotion",
    }
}

/// A raising timer's history detail: the event raised, and for no motion where the
/// device has been still and since when.
fn timer_detail(timer: SessionTimer, session: &MonitoringSession) -> serde_json::Value {
    let mut detail = serde_json::json!({"Event": event_name(timer)});
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
