//! A receiver's backlog, moved as a whole: held back while the receiver is busy with
//! earlier attempts (a hanging webhook URL), and brought forward when a receiver that
//! could not be reached answers again. The delivery worker decides when
//! (`workers/deliveries.rs`); these are the statements.

use jiff::Timestamp;
use sqlx::FromRow;

use super::deliveries::PENDING;
use super::delivery_queue::due_window;
use super::{Backend, ClaimFilter, Store, StoreResult, to_micros};
use crate::domain::delivery::Receiver;
use crate::domain::ids::TenantCode;

/// What a held-back delivery shows as its `LastError` when it had none (it was never
/// attempted: its receiver was busy with earlier ones). Written into the SQL: no quotes.
const HELD_BACK: &str = "held back: earlier attempts to the receiver are still running";

/// The statement that holds back the busy URLs' deliveries in the general loops' window of
/// due ones (`due_window`; parameters: `$1` until, `$2` now, then the URLs), returning
/// each held delivery's tenant and URL.
pub(super) fn hold_back_statement(backend: Backend, busy_urls: usize) -> String {
    let numbered: Vec<String> = (3..3 + busy_urls).map(|i| format!("${i}")).collect();
    let window = due_window(ClaimFilter::All, backend, "$2");
    let held = format!(
        "SELECT id FROM ({window}) head WHERE target IN ({})",
        numbered.join(", ")
    );
    let candidates = match backend {
        Backend::Sqlite => held,
        Backend::Postgres => format!(
            "SELECT id FROM deliveries WHERE id IN ({held})
               AND status = {PENDING} AND (lease_until IS NULL OR lease_until <= $2)
             FOR UPDATE SKIP LOCKED"
        ),
    };
    format!(
        "UPDATE deliveries SET next_attempt_at = $1,
             last_error = COALESCE(last_error, '{HELD_BACK}')
         WHERE id IN ({candidates})
         RETURNING tenant_code, target"
    )
}

/// A delivery held back, as `hold_back_statement` returns it.
#[derive(sqlx::FromRow)]
struct HeldRow {
    tenant_code: String,
    target: String,
}

/// Waiting retries released by one statement: a long outage's backlog is brought forward
/// in turns of this many, so no single write holds SQLite's writer (and ingest) for long.
const RELEASE_CHUNK: usize = 1000;

/// The statement that brings forward up to `RELEASE_CHUNK` waiting retries of a receiver
/// (parameters: `$1` now, `$2` channel, and for a webhook `$3` URL, `$4` tenant). The
/// candidates come from `deliveries_retrying`, whose condition the query repeats; SQLite is
/// told the index (without statistics it would walk the due index from now on). On
/// PostgreSQL a row another process is releasing (or claiming) is skipped, not waited on.
pub(super) fn release_statement(backend: Backend, webhook: bool) -> String {
    let (indexed_by, lock) = match backend {
        Backend::Sqlite => (" INDEXED BY deliveries_retrying", ""),
        Backend::Postgres => ("", " FOR UPDATE SKIP LOCKED"),
    };
    let url = if webhook {
        " AND target = $3 AND tenant_code = $4"
    } else {
        ""
    };
    format!(
        "UPDATE deliveries SET next_attempt_at = $1
         WHERE id IN (
             SELECT id FROM deliveries{indexed_by}
             WHERE status = {PENDING} AND last_error IS NOT NULL AND channel = $2{url}
               AND next_attempt_at > $1
             LIMIT {RELEASE_CHUNK}{lock})"
    )
}

impl Store {
    /// Holds back, until `until`, the deliveries to `busy_urls` among the oldest due
    /// ones, which a claim leaving those URLs out reads past (`due_window`): a hanging
    /// receiver's backlog longer than that window otherwise stands at the head of the
    /// queue, and every other URL's deliveries behind it wait until it is worked through.
    /// A held delivery is not attempted (its `Attempts` stay) and shows `HELD_BACK` as
    /// its `LastError` unless it has one; being a waiting retry, it is brought forward
    /// when its receiver answers again (`release_waiting_retries`). Returns the tenant
    /// and URL of each delivery held.
    pub async fn hold_back_busy_urls(
        &self,
        busy_urls: &[String],
        now: Timestamp,
        until: Timestamp,
    ) -> StoreResult<Vec<(TenantCode, String)>> {
        if busy_urls.is_empty() {
            return Ok(Vec::new());
        }
        let sql = hold_back_statement(self.backend, busy_urls.len());
        let mut query = sqlx::query(&sql)
            .bind(to_micros(until))
            .bind(to_micros(now));
        for url in busy_urls {
            query = query.bind(url.as_str());
        }
        query
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                let held = HeldRow::from_row(row)?;
                Ok((TenantCode::from_store(held.tenant_code), held.target))
            })
            .collect()
    }

    /// Brings the waiting retries of `receiver` forward to `now`: deliveries still
    /// `Pending` after a failed attempt, due later. For when the receiver answers again
    /// after failing: each retry otherwise waits out its own backoff, which after an
    /// outage of an hour runs hours past the recovery. A delivery under a lease is not due
    /// later (it was due when claimed), so an attempt in flight is never touched. Returns
    /// how many.
    pub async fn release_waiting_retries(
        &self,
        receiver: &Receiver,
        now: Timestamp,
    ) -> StoreResult<u64> {
        let sql = release_statement(self.backend, receiver.webhook.is_some());
        let mut released = 0;
        loop {
            let mut query = sqlx::query(&sql)
                .bind(to_micros(now))
                .bind(receiver.channel.as_str());
            if let Some((tenant_code, url)) = &receiver.webhook {
                query = query.bind(url.as_str()).bind(tenant_code.as_str());
            }
            let done = query.execute(&self.pool).await?.rows_affected();
            released += done;
            if done < RELEASE_CHUNK as u64 {
                return Ok(released);
            }
        }
    }
}
