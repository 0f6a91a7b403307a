//! Pruning MO messages past their tenant's retention (`workers/message_retention.rs`).
//! A message goes with its file and attachment (columns of its row) and the bodies of
//! its webhook events' deliveries (rendered from it when read); device state, alerts,
//! their timelines and monitoring session lines keep their own copies of positions.

use jiff::Timestamp;
use sqlx::Row;

use super::{Store, StoreResult, to_micros};
use crate::domain::ids::TenantCode;

impl Store {
    /// Deletes up to `limit` of `tenant`'s messages whose message time is before
    /// `cutoff`, oldest first, in one short write; returns how many. A message a delivery
    /// still waiting to go renders (and every later one) is kept until it has gone. Looks
    /// before taking the writer, so an idle prune costs no writer turn.
    pub async fn prune_messages(
        &self,
        tenant: &TenantCode,
        cutoff: Timestamp,
        limit: i64,
    ) -> StoreResult<u64> {
        let cutoff = to_micros(cutoff);
        let due = sqlx::query(
            "SELECT id FROM mo_messages WHERE tenant_code = $1 AND message_time < $2 LIMIT 1",
        )
        .bind(tenant.as_str())
        .bind(cutoff)
        .fetch_optional(&self.pool)
        .await?;
        if due.is_none() {
            return Ok(0);
        }
        let mut tx = self.begin_write().await?;
        let held = sqlx::query(
            "SELECT MIN(message_id) FROM deliveries
             WHERE tenant_code = $1 AND status IN ('Pending', 'NotConfigured')
               AND message_id IS NOT NULL",
        )
        .bind(tenant.as_str())
        .fetch_one(&mut *tx)
        .await?;
        let held: Option<i64> = held.try_get(0)?;
        let done = sqlx::query(
            "DELETE FROM mo_messages WHERE id IN
                (SELECT id FROM mo_messages
                 WHERE tenant_code = $1 AND message_time < $2 AND id < $3
                 ORDER BY message_time LIMIT $4)",
        )
        .bind(tenant.as_str())
        .bind(cutoff)
        .bind(held.unwrap_or(i64::MAX))
        .bind(limit)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}
