//! The monitoring timer worker: current sessions with a timer due (`monitoring_sessions.
//! *_due_at`, in the database so a restart or a second process misses and repeats
//! nothing) get it fired — reminder, missed check-in, overdue, no motion — a step's
//! sessions in one transaction (`Pipeline::run_monitoring_timers`), one by one only when
//! that fails.

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
        let fired = match self.pipeline.run_monitoring_timers(&due, at).await {
            Ok(fired) => fired,
            // One session's trouble must not hold up the others due: one by one.
            Err(e) => {
                tracing::warn!(error = %e, sessions = due.len(), "monitoring timers failed together");
                let mut fired = 0;
                for one in &due {
                    match self
                        .pipeline
                        .run_monitoring_timers(std::slice::from_ref(one), at)
                        .await
                    {
                        Ok(n) => fired += n,
                        Err(e) => {
                            tracing::error!(device = %one.1, error = %e, "monitoring timer failed")
                        }
                    }
                }
                fired
            }
        };
        Ok(if (due.len() as u32) < BATCH && fired == 0 {
            StepOutcome::Idle
        } else {
            StepOutcome::Worked(fired)
        })
    }
}
