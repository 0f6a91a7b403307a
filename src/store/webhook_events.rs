//! Webhook events into the outbox: written by the transaction that makes the change, as
//! one `Webhook` delivery per subscribed URL of the tenant's settings (the delivery worker
//! sends them). No settings, or no URL wanting the category: nothing is written.

use super::{StoreResult, Tx, WriteTx, from_doc, to_micros};
use crate::domain::delivery::{PENDING, WEBHOOK};
use crate::domain::time::now;
use crate::domain::webhook::{Category, WebhookSettings};
use crate::domain::webhook_event::{EventType, WebhookEvent};

/// Rows per INSERT, and the values of each.
const CHUNK: usize = 200;
const COLUMNS: usize = 9;

/// The URLs of `tenant_code`'s settings subscribed to `category`.
async fn subscribed_urls(
    tx: &mut Tx,
    tenant_code: &str,
    category: Category,
) -> StoreResult<Vec<String>> {
    let row = sqlx::query("SELECT doc FROM webhook_settings WHERE tenant_code = $1")
        .bind(tenant_code)
        .fetch_optional(&mut **tx)
        .await?;
    let Some(row) = row else {
        return Ok(Vec::new());
    };
    let settings: WebhookSettings = from_doc(&row, "doc")?;
    Ok(subscribed(&settings, category))
}

/// The URLs of `settings` subscribed to `category`.
pub fn subscribed(settings: &WebhookSettings, category: Category) -> Vec<String> {
    settings
        .urls
        .iter()
        .filter(|u| u.wants(category))
        .filter_map(|u| u.url.clone())
        .collect()
}

/// Writes one event per `data` (all of `category` and `kind`, changes of `tenant_code`)
/// for every subscribed URL of `to_tenant`'s settings. Returns how many deliveries.
pub(super) async fn emit_events(
    tx: &mut Tx,
    to_tenant: &str,
    tenant_code: &str,
    category: Category,
    kind: EventType,
    data: Vec<serde_json::Value>,
) -> StoreResult<usize> {
    if data.is_empty() {
        return Ok(0);
    }
    let urls = subscribed_urls(tx, to_tenant, category).await?;
    emit_to(tx, &urls, to_tenant, tenant_code, category, kind, data).await
}

/// `emit_events` to URLs already known.
async fn emit_to(
    tx: &mut Tx,
    urls: &[String],
    to_tenant: &str,
    tenant_code: &str,
    category: Category,
    kind: EventType,
    data: Vec<serde_json::Value>,
) -> StoreResult<usize> {
    if urls.is_empty() || data.is_empty() {
        return Ok(0);
    }
    let at = now();
    let events: Vec<WebhookEvent> = data
        .into_iter()
        .map(|d| WebhookEvent::from_value(category, kind, tenant_code, at, d))
        .collect();
    insert_events(tx, urls, to_tenant, &events).await
}

/// One `Pending` webhook delivery per event and URL.
async fn insert_events(
    tx: &mut Tx,
    urls: &[String],
    to_tenant: &str,
    events: &[WebhookEvent],
) -> StoreResult<usize> {
    let rows: Vec<(&WebhookEvent, &String)> = events
        .iter()
        .flat_map(|e| urls.iter().map(move |u| (e, u)))
        .collect();
    for chunk in rows.chunks(CHUNK) {
        let values: Vec<String> = (0..chunk.len())
            .map(|r| format!("({})", tx.backend.placeholders(r * COLUMNS + 1, COLUMNS)))
            .collect();
        let sql = format!(
            "INSERT INTO deliveries (tenant_code, channel, target, body, status, event_id,
                device_id, created_at, next_attempt_at) VALUES {}",
            values.join(", ")
        );
        let mut query = sqlx::query(&sql);
        for (event, url) in chunk {
            query = query
                .bind(to_tenant)
                .bind(WEBHOOK)
                .bind(url.as_str())
                .bind(event.body.as_str())
                .bind(PENDING)
                .bind(event.id.as_str())
                .bind(event.device_id.as_deref())
                .bind(to_micros(event.at))
                .bind(to_micros(event.at));
        }
        query.execute(&mut **tx).await?;
    }
    Ok(rows.len())
}

/// One event for a change of `tenant_code`, to its own settings.
pub(super) async fn emit(
    tx: &mut Tx,
    tenant_code: &str,
    category: Category,
    kind: EventType,
    data: serde_json::Value,
) -> StoreResult<()> {
    emit_events(tx, tenant_code, tenant_code, category, kind, vec![data]).await?;
    Ok(())
}

impl WriteTx {
    /// Events already made (`WebhookEvent::new`, `from_value`) of `category`, for
    /// changes of `tenant_code`, to the URLs of its `settings` (already read) that want
    /// them. Returns how many deliveries.
    pub async fn emit_events_with(
        &mut self,
        settings: &WebhookSettings,
        tenant_code: &str,
        category: Category,
        events: &[WebhookEvent],
    ) -> StoreResult<usize> {
        let urls = subscribed(settings, category);
        if urls.is_empty() {
            return Ok(0);
        }
        insert_events(&mut self.tx, &urls, tenant_code, events).await
    }

    /// Events of `category`/`kind` for changes of `tenant_code`, to its own settings.
    pub async fn emit_events(
        &mut self,
        tenant_code: &str,
        category: Category,
        kind: EventType,
        data: Vec<serde_json::Value>,
    ) -> StoreResult<usize> {
        emit_events(&mut self.tx, tenant_code, tenant_code, category, kind, data).await
    }
}
