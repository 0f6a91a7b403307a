//! The scheduler's unit of work (`workers/check_ins.rs` finds the devices due): a
//! device's missed check-in and its silence, each evaluated like a message, in a
//! transaction of its own, and the schedule moved on.

use jiff::Timestamp;

use super::Pipeline;
use super::unit::{Changes, Occurrence, UnitOfWork, write_deliveries};
use crate::domain::device_state::{DeviceState, Observation};
use crate::domain::events::{EventFacts, GeofenceFact};
use crate::domain::ids::DeviceId;
use crate::domain::tenant::TenantNode;
use crate::store::StoreResult;

impl Pipeline {
    /// The scheduler's unit of work: the device's standing timers due at `at` — a
    /// missed check-in (no confirming message for its interval) and a silence (no
    /// message at all for its `SilentAfterMinutes`) — each evaluated against its
    /// notifications (`MissedCheckIn`, `Silent`), and the schedule moved on. Returns
    /// how many were recorded (0: none was still due — a message or another process got
    /// here first).
    pub async fn run_missed_check_in(
        &self,
        node: &TenantNode,
        device_id: &DeviceId,
        at: Timestamp,
    ) -> StoreResult<usize> {
        let rules = self.rules.get(&self.store, node).await?;
        let webhooks = self.store.get_webhooks(&node.code).await?;
        let mut tx = self.store.begin().await?;
        let Some((mut device, mut state)) = tx.lock_device(&node.code, device_id).await? else {
            return Ok(0);
        };
        let missed = state.next_check_in_at.filter(|due| *due <= at);
        let silent = state.silent_due_at.filter(|due| *due <= at);
        let mut due: Vec<(Timestamp, EventFacts)> = Vec::new();
        if let Some(time) = missed {
            let facts = EventFacts {
                missed_check_in: true,
                ..Default::default()
            };
            due.push((time, facts));
        }
        if let Some(time) = silent {
            let facts = EventFacts {
                silent: true,
                ..Default::default()
            };
            due.push((time, facts));
        }
        if due.is_empty() {
            return Ok(0);
        }
        due.sort_by_key(|(time, _)| *time);
        let mut changes = Changes::default();
        let recorded = due.len();
        for (time, facts) in due {
            let observation = timed_observation(&state, facts);
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
                time,
            };
            self.match_notifications(&mut unit, &rules, observation, occurrence)
                .await?;
        }
        if let Some(due) = missed {
            state.missed_check_in(due, at);
        }
        if silent.is_some() {
            // Once per silence: the next message arms it again.
            state.silent_due_at = None;
        }
        write_deliveries(&mut tx, &mut changes).await?;
        tx.save_state(&node.code, device_id, &state).await?;
        // Only the schedule moved: no device event.
        super::record_outbox(&mut tx, node, device_id, Vec::new(), changes, None);
        tx.commit().await?;
        Ok(recorded)
    }
}

/// What a timed event (`facts`: a missed check-in, an overdue session, …) means to the
/// events engine: it, inside the geofences the device was last in.
pub(super) fn timed_observation(state: &DeviceState, facts: EventFacts) -> Observation {
    Observation {
        facts: EventFacts {
            inside: state
                .containing_geofences
                .iter()
                .map(|g| GeofenceFact {
                    id: g.geofence_id.clone(),
                    name: g.geofence_name.clone(),
                })
                .collect(),
            ..facts
        },
        late: false,
        containing: state.containing_geofences.clone(),
    }
}
