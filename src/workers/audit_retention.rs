//! The audit log's retention: entries older than `--audit-retention-days` are deleted,
//! a bounded batch per step.

use std::time::Duration;

use super::StepOutcome;
use crate::domain::time::now;
use crate::store::Store;

/// Longest wait between prunes: an entry outlives its retention by at most this.
const MAX_INTERVAL: Duration = Duration::from_secs(3600);

#[derive(Clone)]
pub struct AuditPruner {
    store: Store,
    retention: Duration,
}

impl AuditPruner {
    pub fn new(store: Store, retention: Duration) -> Self {
        Self { store, retention }
    }

    /// How often to look: a tenth of the retention, between the workers' interval and
    /// an hour (a year's retention is pruned hourly; a test's seconds, every tick).
    pub fn interval(&self, worker_interval: Duration) -> Duration {
        (self.retention / 10).clamp(worker_interval.min(MAX_INTERVAL), MAX_INTERVAL)
    }

    /// Deletes one batch of entries past their retention.
    pub async fn step(&self) -> anyhow::Result<StepOutcome> {
        let retention = jiff::SignedDuration::try_from(self.retention)?;
        // A retention reaching back before the earliest time jiff knows: nothing is older.
        let Ok(cutoff) = now().checked_sub(retention) else {
            return Ok(StepOutcome::Idle);
        };
        Ok(match self.store.prune_audit_log(cutoff).await? {
            0 => StepOutcome::Idle,
            n => StepOutcome::Worked(n as usize),
        })
    }
}
