//! The monitoring timer worker: current sessions with a timer due (`monitoring_sessions.
//! *_due_at`, in the database so a restart or a second process misses and repeats
//! nothing) get it fired — reminder, missed check-in, overdue, no motion — one device's
//! session per transaction (`Pipeline::run_monitoring_timers`).

use std::sync::Arc;

use super::StepOutcome;
use crate::domain::time::now;
use crate::services::ingest::Pipeline;
use crate::store::Store;

/// Sessions handled per step.
const BATCH: u32 = 50;

pub struct MonitoringTimers {
    store: Store,
    pipeline: Arc<Pipeline>,
}

impl MonitoringTimers {
    pub fn new(store: Store, pipeline: Arc<Pipeline>) -> Self {
        Self { store, pipeline }
    }

    /// Fires the timers due now (of at most `BATCH` sessions).
    pub async fn step(&self) -> anyhow::Result<StepOutcome> {
        let at = now();
        let due = self.store.due_monitoring_sessions(at, BATCH).await?;
        if due.is_empty() {
            return Ok(StepOutcome::Idle);
        }
        let mut fired = 0;
        for (node, device_id) in &due {
            // One session's trouble must not hold up the others due.
            match self
                .pipeline
                .run_monitoring_timers(node, device_id, at)
                .await
            {
                Ok(n) => fired += n,
                Err(e) => {
                    tracing::error!(device = %device_id, error = %e, "monitoring timer failed")
                }
            }
        }
        Ok(if (due.len() as u32) < BATCH && fired == 0 {
            StepOutcome::Idle
        } else {
            StepOutcome::Worked(fired)
        })
    }
}
