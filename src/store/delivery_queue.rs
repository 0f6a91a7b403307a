//! The delivery worker's side of the outbox: claim due deliveries under a lease, settle
//! each attempt, re-queue on an operator's request, and count the queue for /metrics.
//!
//! A claim is a lease, not a status: the row stays `Pending` with `lease_owner` and
//! `lease_until` set, so a process that dies mid-send leaves rows that any process
//! reclaims once the lease has passed. On PostgreSQL the claim skips rows another
//! process holds locked (`FOR UPDATE SKIP LOCKED`); on SQLite the one writer serialises
//! claims. Settling is fenced by the lease owner: a process whose lease was taken over
//! cannot overwrite the newer attempt's outcome.

use std::collections::HashSet;

use jiff::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

mod claim_sql;

pub use claim_sql::{ClaimFilter, ClaimRequest};
use claim_sql::{claim_query, due_candidates};
pub(super) use claim_sql::{claim_statement, due_window};

use super::deliveries::{PENDING, WEBHOOK, delivery_from_row, unsent_predicate};
use super::mo_messages::message_from_columns;
use super::stored;
use super::stored_time;
use super::webhook_events::MessageEvent;
use super::{AnyQuery, Backend, Store, StoreError, StoreResult, from_micros, to_micros};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::delivery::{Channel, Delivery, DeliveryStatus};
use crate::domain::ids::{DeliveryId, MoMessageId, TenantCode};
use crate::domain::retry::Settlement;

/// A delivery the worker holds the lease on.
#[derive(Debug, Clone)]
pub struct ClaimedDelivery {
    pub id: DeliveryId,
    pub tenant_code: TenantCode,
    pub channel: Channel,
    pub target: Option<String>,
    pub subject: Option<String>,
    pub body: String,
    pub event_id: Option<String>,
    pub message_id: Option<MoMessageId>,
    /// This attempt's number (1 for the first).
    pub attempt: u32,
    pub created_at: Timestamp,
    /// When retrying began: the expiry counts from here.
    pub queued_at: Timestamp,
}

/// Deliveries by channel and status (the statuses that are work or need attention).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueCount {
    pub channel: Channel,
    pub status: DeliveryStatus,
    pub count: i64,
}

/// A claimed `deliveries` row, as the claim returns it.
#[derive(sqlx::FromRow)]
struct ClaimedRow {
    id: i64,
    tenant_code: String,
    channel: String,
    target: Option<String>,
    subject: Option<String>,
    body: String,
    event_id: Option<String>,
    message_id: Option<i64>,
    attempts: i64,
    created_at: i64,
    queued_at: Option<i64>,
}

impl ClaimedRow {
    fn into_claimed(self) -> StoreResult<ClaimedDelivery> {
        let created_at = stored_time(self.created_at)?;
        Ok(ClaimedDelivery {
            id: DeliveryId::new(self.id),
            tenant_code: TenantCode::from_store(self.tenant_code),
            channel: stored(&self.channel)?,
            target: self.target,
            subject: self.subject,
            body: self.body,
            event_id: self.event_id,
            message_id: self.message_id.map(MoMessageId::new),
            attempt: u32::try_from(self.attempts).unwrap_or(u32::MAX),
            created_at,
            queued_at: from_micros(self.queued_at)?.unwrap_or(created_at),
        })
    }
}

fn claimed_from_row(row: &AnyRow) -> StoreResult<ClaimedDelivery> {
    ClaimedRow::from_row(row)?.into_claimed()
}

/// A row of `queue_counts_sql`.
#[derive(sqlx::FromRow)]
struct QueueCountRow {
    channel: String,
    status: String,
    n: i64,
}

impl QueueCountRow {
    fn into_count(self) -> StoreResult<QueueCount> {
        Ok(QueueCount {
            channel: stored(&self.channel)?,
            status: stored(&self.status)?,
            count: self.n,
        })
    }
}

/// The columns a settlement writes: status, sent at, provider id, error, next attempt.
type SettledColumns<'a> = (
    DeliveryStatus,
    Option<Timestamp>,
    Option<&'a str>,
    Option<&'a str>,
    Option<Timestamp>,
);

fn settled_columns(settlement: &Settlement) -> SettledColumns<'_> {
    match settlement {
        Settlement::Sent { at, provider_id } => (
            DeliveryStatus::Sent,
            Some(*at),
            provider_id.as_deref(),
            None,
            None,
        ),
        Settlement::Retry { next, error } => (
            DeliveryStatus::Pending,
            None,
            None,
            Some(error.as_str()),
            Some(*next),
        ),
        Settlement::Failed { error } => (
            DeliveryStatus::Failed,
            None,
            None,
            Some(error.as_str()),
            None,
        ),
        Settlement::Expired { error } => (
            DeliveryStatus::Expired,
            None,
            None,
            Some(error.as_str()),
            None,
        ),
        Settlement::NotConfigured => (
            DeliveryStatus::NotConfigured,
            None,
            None,
            Some("the channel is not configured on the server"),
            None,
        ),
    }
}

impl ClaimedDelivery {
    /// The stored message's event this delivery sends, its body rendered on claiming.
    fn message_event(&self) -> Option<MessageEvent> {
        MessageEvent::of(
            self.channel,
            &self.body,
            self.message_id,
            self.event_id.as_deref(),
            &self.tenant_code,
            self.created_at,
        )
    }
}

/// Outcomes settled by one statement, and the type of each of an outcome's parameters
/// (id, status, sent_at, provider_id, last_error, next_attempt_at).
const SETTLE_CHUNK: usize = 500;
const SETTLE_TYPES: [&str; 6] = ["BIGINT", "TEXT", "BIGINT", "TEXT", "TEXT", "BIGINT"];

impl Store {
    /// Claims up to `limit` deliveries that are due at `now` and not leased by anyone
    /// (or whose lease has run out), for `owner` until `now + lease`; counts the attempt.
    /// A stored message's webhook event gets its body rendered from the message.
    pub async fn claim_due_deliveries(
        &self,
        request: &ClaimRequest<'_>,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        Ok(self.settle_then_claim(&[], request).await?.1)
    }

    /// A worker step's write: settles the outcomes of the attempts of `request.owner`'s
    /// previous step (as `settle_deliveries`, answering whether each lease was still
    /// the owner's) and claims as `claim_due_deliveries`. On SQLite both are one
    /// transaction: each write transaction takes the one writer's turn from ingest, so a
    /// step takes it once, not twice (claim, then settle). On PostgreSQL they are two
    /// statements, the claim first: an error then means nothing was settled, so the
    /// caller may hand the same outcomes in again (the claim cannot take the rows they
    /// settle: they are still under the owner's lease).
    pub async fn settle_then_claim(
        &self,
        settlements: &[(DeliveryId, Settlement)],
        request: &ClaimRequest<'_>,
    ) -> StoreResult<(Vec<bool>, Vec<ClaimedDelivery>)> {
        let claim = claim_statement(request.filter, self.backend, request.busy_urls.len());
        let (ours, mut claimed) = match self.backend {
            Backend::Sqlite => {
                self.settle_claim_then_read_messages(settlements, &claim, request)
                    .await?
            }
            Backend::Postgres => {
                let claimed = self.claim_with_messages(&claim, request).await?;
                let ours = self.settle_deliveries(request.owner, settlements).await?;
                (ours, claimed)
            }
        };
        claimed.sort_by_key(|d| d.id);
        Ok((ours, claimed))
    }

    /// SQLite: the settlement and the claim in one write transaction (taking the writer's
    /// turn), then the messages of the claimed webhook events in one read per tenant.
    /// SQLite cannot put an `UPDATE … RETURNING` in a `WITH`. First a read (any
    /// connection, no turn) asks whether anything is due: a claim that finds nothing —
    /// most polls, and wake-ups whose rows another loop took — would still take the one
    /// writer's turn from ingest and commit. A row that becomes due after the read is the
    /// next step's.
    async fn settle_claim_then_read_messages(
        &self,
        settlements: &[(DeliveryId, Settlement)],
        claim: &str,
        request: &ClaimRequest<'_>,
    ) -> StoreResult<(Vec<bool>, Vec<ClaimedDelivery>)> {
        let probe = format!(
            "SELECT EXISTS ({}) AS due",
            due_candidates(request.filter, self.backend, request.busy_urls.len())
        );
        let due: bool = claim_query(&probe, request)
            .fetch_one(&self.pool)
            .await?
            .try_get::<i64, _>("due")?
            != 0;
        if !due && settlements.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut tx = self.begin_write().await?;
        let ours = self.settle_in(&mut tx, request.owner, settlements).await?;
        let rows = if due {
            claim_query(claim, request).fetch_all(&mut *tx).await?
        } else {
            Vec::new()
        };
        tx.commit().await?;
        let mut claimed = rows
            .iter()
            .map(claimed_from_row)
            .collect::<StoreResult<Vec<_>>>()?;
        self.fill_message_bodies(&mut claimed, ClaimedDelivery::message_event, |d, body| {
            d.body = body
        })
        .await?;
        Ok((ours, claimed))
    }

    /// PostgreSQL: claim and read the messages in one statement (one round trip, its own
    /// transaction; not BEGIN, claim, COMMIT and a read per tenant): a worker step's
    /// round trips are what a delivery waits through between its commit and its attempt.
    async fn claim_with_messages(
        &self,
        claim: &str,
        request: &ClaimRequest<'_>,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        let sql = format!(
            "WITH claimed AS ({claim})
             SELECT claimed.*, m.id AS m_id, m.device_id AS m_device_id,
                 m.received_at AS m_received_at, m.message_time AS m_message_time,
                 m.doc AS m_doc, m.geofences AS m_geofences, m.etag AS m_etag
             FROM claimed LEFT JOIN mo_messages m
                 ON claimed.channel = {WEBHOOK} AND claimed.body = ''
                 AND m.id = claimed.message_id AND m.tenant_code = claimed.tenant_code"
        );
        let rows = claim_query(&sql, request).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| {
                let mut d = claimed_from_row(row)?;
                if let Some(event) = d.message_event() {
                    // No message (deleted since): the event is sent without `Data`.
                    let message = match row.try_get::<Option<i64>, _>("m_id")? {
                        Some(_) => Some(message_from_columns(row, "m_", false)?.0),
                        None => None,
                    };
                    d.body = event.render(message.as_ref());
                }
                Ok(d)
            })
            .collect()
    }

    /// Records the outcomes of `owner`'s attempts (delivery id, settlement) and releases
    /// their leases, in one statement per `SETTLE_CHUNK` outcomes, all in one transaction:
    /// one commit (one fsync on SQLite) and one round trip per worker step, not per
    /// delivery, which would hold the single SQLite writer (and so ingest) for the whole
    /// step. On PostgreSQL a step's single statement runs as its own transaction (no
    /// BEGIN and COMMIT round trips). Returns, in order, whether each lease was still
    /// `owner`'s: when it was not (the row was reclaimed after the lease ran out), the
    /// newer holder's outcome stands.
    pub async fn settle_deliveries(
        &self,
        owner: &str,
        settlements: &[(DeliveryId, Settlement)],
    ) -> StoreResult<Vec<bool>> {
        if settlements.is_empty() {
            return Ok(Vec::new());
        }
        if let (Backend::Postgres, true) = (self.backend, settlements.len() <= SETTLE_CHUNK) {
            let sql = self.settle_sql(settlements.len());
            let ours = settle_query(&sql, settlements, owner)
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(|row| row.try_get::<i64, _>(0).map(DeliveryId::new))
                .collect::<Result<HashSet<_>, _>>()?;
            return Ok(answered_in_order(settlements, &ours));
        }
        let mut tx = self.begin_write().await?;
        let ours = self.settle_in(&mut tx, owner, settlements).await?;
        tx.commit().await?;
        Ok(ours)
    }

    /// `settle_deliveries` inside a write transaction: one statement per `SETTLE_CHUNK`.
    async fn settle_in(
        &self,
        tx: &mut super::Tx,
        owner: &str,
        settlements: &[(DeliveryId, Settlement)],
    ) -> StoreResult<Vec<bool>> {
        let mut ours = HashSet::with_capacity(settlements.len());
        for chunk in settlements.chunks(SETTLE_CHUNK) {
            let sql = self.settle_sql(chunk.len());
            for row in settle_query(&sql, chunk, owner)
                .fetch_all(&mut **tx)
                .await?
            {
                ours.insert(DeliveryId::new(row.try_get::<i64, _>(0)?));
            }
        }
        Ok(answered_in_order(settlements, &ours))
    }

    /// The statement settling `count` outcomes (bound by `settle_query`).
    fn settle_sql(&self, count: usize) -> String {
        // CASTs give the parameters their types on PostgreSQL (a VALUES list has no
        // column to infer them from); the CTE names the columns on both backends.
        let rows: Vec<String> = (0..count)
            .map(|r| {
                let cells: Vec<String> = SETTLE_TYPES
                    .iter()
                    .enumerate()
                    .map(|(c, ty)| {
                        let at = r * SETTLE_TYPES.len() + c + 1;
                        format!("CAST({} AS {ty})", self.backend.placeholders(at, 1))
                    })
                    .collect();
                format!("({})", cells.join(", "))
            })
            .collect();
        format!(
            "WITH outcome (id, status, sent_at, provider_id, last_error, next_attempt_at)
                 AS (VALUES {})
             UPDATE deliveries SET status = outcome.status, sent_at = outcome.sent_at,
                 provider_id = outcome.provider_id,
                 last_error = COALESCE(outcome.last_error, deliveries.last_error),
                 next_attempt_at = outcome.next_attempt_at,
                 lease_owner = NULL, lease_until = NULL
             FROM outcome
             WHERE deliveries.id = outcome.id AND deliveries.lease_owner = {}
             RETURNING deliveries.id",
            rows.join(", "),
            self.backend.placeholders(count * SETTLE_TYPES.len() + 1, 1)
        )
    }

    /// Puts a `Failed`, `Expired` or `NotConfigured` delivery back in the queue, due now,
    /// its retry period starting again. `Ok(None)`: no such delivery of the tenant;
    /// `Conflict` for any other status.
    pub async fn requeue_delivery(
        &self,
        tenant_code: &TenantCode,
        id: DeliveryId,
        now: Timestamp,
        audit: &Audit,
    ) -> StoreResult<Option<Delivery>> {
        let mut tx = self.begin_write().await?;
        let sql = format!(
            "SELECT status FROM deliveries WHERE tenant_code = $1 AND id = $2{}",
            self.backend.lock_rows()
        );
        let Some(row) = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(id.get())
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(None);
        };
        let status: DeliveryStatus = stored(&row.try_get::<String, _>("status")?)?;
        if !DeliveryStatus::UNSENT.contains(&status) {
            return Err(StoreError::Conflict(format!(
                "the delivery is {status}: only Failed, Expired or NotConfigured deliveries are retried"
            )));
        }
        sqlx::query(&format!(
            "UPDATE deliveries SET status = {PENDING}, next_attempt_at = $1, queued_at = $1,
                 lease_owner = NULL, lease_until = NULL WHERE id = $2"
        ))
        .bind(to_micros(now))
        .bind(id.get())
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query(&format!(
            "SELECT {} FROM deliveries d WHERE d.id = $1",
            super::deliveries::COLUMNS
        ))
        .bind(id.get())
        .fetch_one(&mut *tx)
        .await?;
        let shown = delivery_from_row(&row)?;
        super::audit_log::record(
            &mut tx,
            audit,
            AuditAction::Retry,
            ResourceType::Delivery,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(self
            .with_message_bodies(vec![shown])
            .await?
            .into_iter()
            .next())
    }

    /// Deliveries that are work or need attention, by channel and status (not `Sent` or
    /// `NoAddress`: those are history, and counted by the attempt metrics).
    pub async fn delivery_queue_counts(&self) -> StoreResult<Vec<QueueCount>> {
        let rows = sqlx::query(&queue_counts_sql())
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| QueueCountRow::from_row(row)?.into_count())
            .collect()
    }

    /// When the oldest `Pending` delivery was queued, if any is.
    pub async fn oldest_pending_delivery(&self) -> StoreResult<Option<Timestamp>> {
        let row = sqlx::query(&format!(
            "SELECT MIN(COALESCE(queued_at, created_at)) AS oldest FROM deliveries
             WHERE status = {PENDING}"
        ))
        .fetch_one(&self.pool)
        .await?;
        from_micros(row.try_get("oldest")?)
    }
}

/// `delivery_queue_counts`: each half reads its own index only (`deliveries_due` carries
/// channel and status for the Pending count, `deliveries_unsent` holds exactly the others),
/// never the table's history of sent deliveries (migration 0039).
pub(super) fn queue_counts_sql() -> String {
    format!(
        "SELECT channel, {PENDING} AS status, COUNT(*) AS n
         FROM deliveries WHERE status = {PENDING} GROUP BY channel
         UNION ALL
         SELECT channel, status, COUNT(*) AS n FROM deliveries
         WHERE {} GROUP BY channel, status",
        unsent_predicate()
    )
}

/// For each settlement, in order, whether its id is among `ours`.
fn answered_in_order(
    settlements: &[(DeliveryId, Settlement)],
    ours: &HashSet<DeliveryId>,
) -> Vec<bool> {
    settlements
        .iter()
        .map(|(id, _)| ours.contains(id))
        .collect()
}

/// `settle_sql`'s statement with the outcomes of `chunk` and the lease `owner` bound.
fn settle_query<'q>(
    sql: &'q str,
    chunk: &'q [(DeliveryId, Settlement)],
    owner: &'q str,
) -> AnyQuery<'q> {
    let mut query = sqlx::query(sql);
    for (id, settlement) in chunk {
        let (status, sent_at, provider_id, error, next) = settled_columns(settlement);
        query = query
            .bind(id.get())
            .bind(status.as_str())
            .bind(sent_at.map(to_micros))
            .bind(provider_id)
            .bind(error)
            .bind(next.map(to_micros));
    }
    query.bind(owner)
}
