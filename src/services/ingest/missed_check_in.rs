//! The scheduler's unit of work (`workers/check_ins.rs` finds the devices due): a missed
//! check-in evaluated like a message, in a transaction of its own, and the schedule moved
//! on.

use jiff::Timestamp;

use super::Pipeline;
use super::unit::{Changes, Occurrence, UnitOfWork, write_deliveries};
use crate::domain::device_state::{DeviceState, Observation};
use crate::domain::events::{EventFacts, GeofenceFact};
use crate::domain::ids::DeviceId;
use crate::domain::tenant::TenantNode;
use crate::store::StoreResult;

impl Pipeline {
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
        let facts = EventFacts {
            missed_check_in: true,
            ..Default::default()
        };
        let observation = timed_observation(&state, facts);
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
        super::record_outbox(&mut tx, node, device_id, Vec::new(), changes, None);
        tx.commit().await?;
        Ok(true)
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
