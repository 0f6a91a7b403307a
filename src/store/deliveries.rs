//! The delivery outbox (`deliveries`): written in the transaction of the match that
//! caused it; listed by the API; claimed and settled by the delivery worker.

use jiff::Timestamp;
use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::stored;
use super::stored_time;
use super::webhook_events::MessageEvent;
use super::{Backend, Store, StoreResult, WriteTx, from_micros, to_micros};
use crate::domain::delivery::{Channel, Delivery, DeliveryStatus};
use crate::domain::ids::{
    AlertId, DeliveryId, DeviceId, MoMessageId, MtMessageId, NotificationId, TenantCode,
};

/// `'Pending'`, as the partial indexes of due deliveries (`deliveries_due`, …) write it in
/// their predicates: a statement repeats the predicate word for word, or the planner
/// cannot use the index (a bound parameter would not let it prove the index applies).
pub(super) const PENDING: &str = DeliveryStatus::Pending.sql();

/// `'Webhook'`, as `deliveries_due_alerting` writes it.
pub(super) const WEBHOOK: &str = Channel::Webhook.sql();

/// `deliveries_unsent`'s predicate (the index of `DeliveryStatus::UNSENT`), exactly as
/// migration 0039 writes it: `status IN ('NotConfigured', 'Failed', 'Expired')`. A
/// statement repeats it word for word, or SQLite does not use the index.
pub(super) fn unsent_predicate() -> String {
    let statuses: Vec<&str> = DeliveryStatus::UNSENT.iter().map(|s| s.sql()).collect();
    format!("status IN ({})", statuses.join(", "))
}

pub(super) const COLUMNS: &str = "d.id, d.tenant_code, d.channel, d.target, d.subject, d.body, d.status, \
     d.notification_id, d.alert_id, d.message_id, d.mt_message_id, d.device_id, d.event_id, \
     d.created_at, d.attempts, d.next_attempt_at, d.last_error, d.sent_at, d.provider_id";

/// A delivery to write.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    pub tenant_code: TenantCode,
    pub channel: Channel,
    pub target: Option<String>,
    pub subject: Option<String>,
    pub body: String,
    pub status: DeliveryStatus,
    pub notification_id: Option<NotificationId>,
    pub alert_id: Option<AlertId>,
    pub message_id: Option<MoMessageId>,
    pub mt_message_id: Option<MtMessageId>,
    pub device_id: Option<DeviceId>,
    pub event_id: Option<String>,
    pub created_at: Timestamp,
    /// When the worker should first try (`Pending` only).
    pub next_attempt_at: Option<Timestamp>,
    pub sent_at: Option<Timestamp>,
}

/// Which deliveries a listing covers (a tenant's, in id order, or newest first).
#[derive(Debug, Clone)]
pub struct DeliveryFilter<'a> {
    pub tenant_code: &'a TenantCode,
    pub status: Option<DeliveryStatus>,
    pub channel: Option<Channel>,
    pub alert_id: Option<AlertId>,
    pub device_id: Option<&'a str>,
    /// Exactly this target (a webhook URL, an address).
    pub target: Option<&'a str>,
    /// Created at or after this time.
    pub from: Option<Timestamp>,
    /// Created before this time.
    pub to: Option<Timestamp>,
    /// Descending id order: `after` is then the id the page continues below.
    pub newest_first: bool,
    /// The id the page continues after (`None`: the first page).
    pub after: Option<DeliveryId>,
    pub limit: u32,
}

/// A `deliveries` row as selected by `COLUMNS`.
#[derive(sqlx::FromRow)]
struct DeliveryRow {
    id: i64,
    tenant_code: String,
    channel: String,
    target: Option<String>,
    subject: Option<String>,
    body: String,
    status: String,
    notification_id: Option<i64>,
    alert_id: Option<i64>,
    message_id: Option<i64>,
    mt_message_id: Option<i64>,
    device_id: Option<String>,
    event_id: Option<String>,
    created_at: i64,
    attempts: i64,
    next_attempt_at: Option<i64>,
    last_error: Option<String>,
    sent_at: Option<i64>,
    provider_id: Option<String>,
}

/// A delivery as the API shows it, and the stored message's event whose body is still to
/// be rendered into it (see `webhook_events.rs`).
pub(super) type ShownDelivery = (Delivery, Option<MessageEvent>);

impl DeliveryRow {
    fn into_shown(self) -> StoreResult<ShownDelivery> {
        let channel: Channel = stored(&self.channel)?;
        let status: DeliveryStatus = stored(&self.status)?;
        let created_at = stored_time(self.created_at)?;
        let tenant_code = TenantCode::from_store(self.tenant_code);
        let event = MessageEvent::of(
            channel,
            &self.body,
            self.message_id.map(MoMessageId::new),
            self.event_id.as_deref(),
            &tenant_code,
            created_at,
        );
        let delivery = Delivery {
            delivery_id: DeliveryId::new(self.id),
            tenant_code,
            channel,
            target: self.target,
            subject: self.subject,
            body: self.body,
            status,
            notification_id: self.notification_id.map(NotificationId::new),
            alert_id: self.alert_id.map(AlertId::new),
            message_id: self.message_id.map(MoMessageId::new),
            mt_message_id: self.mt_message_id.map(MtMessageId::new),
            device_id: self.device_id.map(DeviceId::from_store),
            event_id: self.event_id,
            created_at,
            attempts: self.attempts,
            next_attempt_at: from_micros(self.next_attempt_at)?,
            last_error: self.last_error,
            sent_at: from_micros(self.sent_at)?,
            provider_id: self.provider_id,
        };
        Ok((delivery, event))
    }
}

pub(super) fn delivery_from_row(row: &AnyRow) -> StoreResult<ShownDelivery> {
    DeliveryRow::from_row(row)?.into_shown()
}

/// Columns of a delivery insert, and rows per statement (SQLite takes 32,766 parameters).
const INSERT_COLUMNS: usize = 15;
const INSERT_CHUNK: usize = 500;

impl WriteTx {
    /// Writes deliveries, in one statement per 500: a batch's matches write theirs
    /// together (a statement is a round trip to the one SQLite writer).
    pub async fn insert_deliveries(&mut self, deliveries: &[NewDelivery]) -> StoreResult<()> {
        for chunk in deliveries.chunks(INSERT_CHUNK) {
            let sql = format!(
                "INSERT INTO deliveries (tenant_code, channel, target, subject, body, status,
                    notification_id, alert_id, message_id, mt_message_id, device_id, event_id,
                    created_at, next_attempt_at, sent_at)
                 VALUES {}",
                self.backend.value_rows(chunk.len(), INSERT_COLUMNS)
            );
            let mut query = sqlx::query(&sql);
            for d in chunk {
                query = query
                    .bind(d.tenant_code.as_str())
                    .bind(d.channel.as_str())
                    .bind(d.target.as_deref())
                    .bind(d.subject.as_deref())
                    .bind(d.body.as_str())
                    .bind(d.status.as_str())
                    .bind(d.notification_id.map(NotificationId::get))
                    .bind(d.alert_id.map(AlertId::get))
                    .bind(d.message_id.map(MoMessageId::get))
                    .bind(d.mt_message_id.map(MtMessageId::get))
                    .bind(d.device_id.as_deref())
                    .bind(d.event_id.as_deref())
                    .bind(to_micros(d.created_at))
                    .bind(d.next_attempt_at.map(to_micros))
                    .bind(d.sent_at.map(to_micros));
            }
            query.execute(&mut *self.tx).await?;
        }
        Ok(())
    }
}

impl Store {
    /// A page of a tenant's deliveries in id order (or newest first).
    pub async fn list_deliveries(&self, f: &DeliveryFilter<'_>) -> StoreResult<Vec<Delivery>> {
        let sql = list_deliveries_sql(ListRoute::of(f), f.newest_first, self.backend);
        let after = match (f.newest_first, f.after) {
            (_, Some(after)) => after.get(),
            (true, None) => i64::MAX,
            (false, None) => 0,
        };
        let rows = sqlx::query(&sql)
            .bind(f.tenant_code.as_str())
            .bind(f.status.map_or("", DeliveryStatus::as_str))
            .bind(f.channel.map_or("", Channel::as_str))
            .bind(f.alert_id.map_or(0, AlertId::get))
            .bind(f.device_id.unwrap_or(""))
            .bind(after)
            .bind(i64::from(f.limit))
            .bind(f.target.unwrap_or(""))
            .bind(f.from.map_or(0, to_micros))
            .bind(f.to.map_or(0, to_micros))
            .fetch_all(&self.pool)
            .await?;
        let deliveries = rows
            .iter()
            .map(delivery_from_row)
            .collect::<StoreResult<_>>()?;
        self.with_message_bodies(deliveries).await
    }

    pub async fn get_delivery(
        &self,
        tenant_code: &TenantCode,
        id: DeliveryId,
    ) -> StoreResult<Option<Delivery>> {
        let sql =
            format!("SELECT {COLUMNS} FROM deliveries d WHERE d.tenant_code = $1 AND d.id = $2");
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let shown = self
            .with_message_bodies(vec![delivery_from_row(&row)?])
            .await?;
        Ok(shown.into_iter().next())
    }

    /// `deliveries` with the bodies of stored messages' webhook events rendered (see
    /// `webhook_events.rs`).
    pub(super) async fn with_message_bodies(
        &self,
        mut deliveries: Vec<ShownDelivery>,
    ) -> StoreResult<Vec<Delivery>> {
        self.fill_message_bodies(
            &mut deliveries,
            |(_, event)| event.clone(),
            |(d, _), body| d.body = body,
        )
        .await?;
        Ok(deliveries.into_iter().map(|(d, _)| d).collect())
    }
}

/// How a listing reaches its rows, each through an index (asserted in query_plans.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListRoute {
    /// The tenant's deliveries in id order (`deliveries_tenant`).
    Tenant,
    /// One alert's (`deliveries_alert`): `tenant_code || ''` keeps SQLite's planner, which
    /// has no statistics here, from walking the tenant's whole history in id order and
    /// checking each row for the alert (a cost that grows with the history).
    Alert,
    /// The deliveries in one status that stays unsent (`deliveries_unsent`, a partial
    /// index): a rare status among a tenant's history would otherwise walk all of it.
    /// The status and the index's own predicate are written into the statement — SQLite
    /// uses a partial index only for a query repeating its predicate, and the status is
    /// one of `DeliveryStatus::UNSENT`, never the caller's text.
    Unsent(DeliveryStatus),
    /// The `Pending` deliveries, read from the due index and sorted by id: the queue is
    /// what is left to send (small, except in an outage), where the tenant's history in
    /// id order reaches its pending deliveries only after everything ever sent. SQLite is
    /// told the index (`INDEXED BY`): without statistics it would walk the tenant.
    Pending,
}

impl ListRoute {
    pub(super) fn of(f: &DeliveryFilter<'_>) -> ListRoute {
        if f.alert_id.is_some() {
            return ListRoute::Alert;
        }
        match f.status {
            Some(DeliveryStatus::Pending) => ListRoute::Pending,
            Some(status) if DeliveryStatus::UNSENT.contains(&status) => ListRoute::Unsent(status),
            _ => ListRoute::Tenant,
        }
    }
}

/// `list_deliveries`' statement (parameters: tenant, status, channel, alert, device,
/// after, limit, target, from, to; a time of 0 is no bound). Newest first walks the same
/// index backwards from `after`. The time bounds and the target are checked on the rows
/// the route reaches (no index of their own: the log is read a page at a time).
pub(super) fn list_deliveries_sql(
    route: ListRoute,
    newest_first: bool,
    backend: Backend,
) -> String {
    let (tenant, alert, route_terms) = match route {
        ListRoute::Tenant => ("d.tenant_code", "$4 = 0", String::new()),
        ListRoute::Alert => ("d.tenant_code || ''", "d.alert_id = $4", String::new()),
        ListRoute::Unsent(status) => (
            "d.tenant_code",
            "$4 = 0",
            format!(
                "d.{} AND d.status = {} AND ",
                unsent_predicate(),
                status.sql()
            ),
        ),
        ListRoute::Pending => (
            "d.tenant_code",
            "$4 = 0",
            format!("d.status = {PENDING} AND "),
        ),
    };
    let (beyond, order) = if newest_first {
        ("<", " DESC")
    } else {
        (">", "")
    };
    let indexed_by = match (route, backend) {
        (ListRoute::Pending, Backend::Sqlite) => " INDEXED BY deliveries_due",
        _ => "",
    };
    format!(
        "SELECT {COLUMNS} FROM deliveries d{indexed_by}
         WHERE {route_terms}{tenant} = $1 AND ($2 = '' OR d.status = $2) AND ($3 = '' OR d.channel = $3)
           AND {alert} AND ($5 = '' OR d.device_id = $5) AND d.id {beyond} $6
           AND ($8 = '' OR d.target = $8) AND ($9 = 0 OR d.created_at >= $9)
           AND ($10 = 0 OR d.created_at < $10)
         ORDER BY d.id{order} LIMIT $7"
    )
}
