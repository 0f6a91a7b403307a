//! The check-in scheduler: devices whose next check-in is due (`device_states.
//! next_check_in_at`, kept in the database so a restart misses nothing) get one
//! `MissedCheckIn` per missed interval, and those silent for their `SilentAfterMinutes`
//! (`silent_due_at`) one `Silent`, each evaluated like a message.

use std::sync::Arc;

use super::StepOutcome;
use crate::domain::time::now;
use crate::services::ingest::Pipeline;
use crate::store::Store;

/// Devices handled per step.
const BATCH: u32 = 50;

pub struct CheckInScheduler {
    store: Store,
    pipeline: Arc<Pipeline>,
}

impl CheckInScheduler {
    pub fn new(store: Store, pipeline: Arc<Pipeline>) -> Self {
        Self { store, pipeline }
    }

    /// Records the missed check-ins due now (at most `BATCH` devices).
    pub async fn step(&self) -> anyhow::Result<StepOutcome> {
        let at = now();
        let due = self.store.due_check_ins(at, BATCH).await?;
        if due.is_empty() {
            return Ok(StepOutcome::Idle);
        }
        let mut recorded = 0;
        for (node, device_id) in &due {
            // One device's trouble must not hold up the others due.
            match self.pipeline.run_missed_check_in(node, device_id, at).await {
                Ok(n) => recorded += n,
                Err(e) => {
                    tracing::error!(device = %device_id, error = %e, "missed check-in failed")
                }
            }
        }
        // Everything found was handled (by us or another process): more may be due.
        Ok(if (due.len() as u32) < BATCH && recorded == 0 {
            StepOutcome::Idle
        } else {
            StepOutcome::Worked(recorded)
        })
    }
}
