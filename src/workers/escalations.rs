//! The escalation worker: alerts whose next escalation round is due (`alerts.
//! next_escalation_at`, in the database) get it, one alert per transaction — today's
//! round, or for an alert that follows an escalation policy every step now due
//! (`services::escalation`).

use super::StepOutcome;
use crate::domain::time::now;
use crate::services::escalation::Escalator;
use crate::store::Store;

/// Alerts handled per step.
const BATCH: u32 = 50;

pub struct EscalationWorker {
    store: Store,
    escalator: Escalator,
}

impl EscalationWorker {
    pub fn new(store: Store, escalator: Escalator) -> Self {
        Self { store, escalator }
    }

    /// Runs the escalation rounds due now (at most `BATCH` alerts).
    pub async fn step(&self) -> anyhow::Result<StepOutcome> {
        let at = now();
        let due = self.store.due_escalations(at, BATCH).await?;
        if due.is_empty() {
            return Ok(StepOutcome::Idle);
        }
        let mut rounds = 0;
        for &id in &due {
            match self.escalator.run_round(id, at).await {
                Ok(true) => rounds += 1,
                Ok(false) => {}
                Err(e) => tracing::error!(alert = id.get(), error = %e, "escalation round failed"),
            }
        }
        Ok(if (due.len() as u32) < BATCH && rounds == 0 {
            StepOutcome::Idle
        } else {
            StepOutcome::Worked(rounds)
        })
    }
}
