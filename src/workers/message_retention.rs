//! MO messages' retention (DESIGN §15): each tenant's messages older than its
//! `MessageRetentionDays` (`domain/retention.rs`) are deleted, a bounded batch per tenant
//! per step, each batch a short write that lets ingest's waiting batches go first.

use std::collections::HashMap;
use std::time::Duration;

use super::StepOutcome;
use crate::domain::retention::{self, RetentionDays};
use crate::domain::time::now;
use crate::store::Store;

/// Messages one write deletes: short enough that ingest never waits long for the writer.
const PRUNE_BATCH: i64 = 1000;
/// How long a batch waits for ingest's declared writes to go first.
const YIELD_AT_MOST: Duration = Duration::from_millis(200);

/// `--message-retention-days` (none: kept unless a tenant says otherwise) and how often
/// to look (a message outlives its retention by at most this).
#[derive(Debug, Clone, Copy)]
pub struct MessageRetentionConfig {
    pub default_days: Option<RetentionDays>,
    pub interval: Duration,
}

impl Default for MessageRetentionConfig {
    fn default() -> Self {
        Self {
            default_days: None,
            interval: Duration::from_secs(600),
        }
    }
}

#[derive(Clone)]
pub struct MessagePruner {
    store: Store,
    default_days: Option<RetentionDays>,
}

impl MessagePruner {
    pub fn new(store: Store, config: MessageRetentionConfig) -> Self {
        Self {
            store,
            default_days: config.default_days,
        }
    }

    /// Deletes one batch of each tenant's messages past their retention; `Worked` while
    /// any tenant had some, so a backlog is drained batch by batch.
    pub async fn step(&self) -> anyhow::Result<StepOutcome> {
        let tenants: HashMap<_, _> = self
            .store
            .list_descendant_tenants("/")
            .await?
            .into_iter()
            .map(|t| (t.tenant_code.clone(), t))
            .collect();
        let mut pruned = 0;
        for code in tenants.keys() {
            let Some(days) = retention::effective(code, &tenants, self.default_days) else {
                continue;
            };
            // A retention reaching back before the earliest time jiff knows: nothing is older.
            let Ok(cutoff) = now().checked_sub(days.duration()) else {
                continue;
            };
            self.store.writer_lull(YIELD_AT_MOST).await;
            pruned += self.store.prune_messages(code, cutoff, PRUNE_BATCH).await?;
        }
        Ok(match pruned {
            0 => StepOutcome::Idle,
            n => StepOutcome::Worked(n as usize),
        })
    }
}
