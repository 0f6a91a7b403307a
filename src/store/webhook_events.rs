//! Webhook events into the outbox: written by the transaction that makes the change, as
//! one `Webhook` delivery per subscribed URL of the tenant's settings (the delivery worker
//! sends them). No settings, or no URL wanting the category: nothing is written.
//!
//! A stored MO message's `Created` event is written without its body (`body` empty,
//! `message_id` set): the body is rendered from the message whenever the delivery is
//! read (`Store::fill_message_bodies`), so ingest writes each message once.

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::{Store, StoreResult, Tx, WriteTx, from_doc, to_micros};
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::ids::{MoMessageId, NotificationId, TenantCode};
use crate::domain::mo_message::MoMessage;
use crate::domain::time::now;
use crate::domain::webhook::{Category, WebhookSettings};
use crate::domain::webhook_event::{EventType, WebhookEvent, message_event_body};

/// Rows per INSERT, and the values of each.
const CHUNK: usize = 200;
const COLUMNS: usize = 11;

/// The URLs of `tenant_code`'s settings subscribed to `category`.
async fn subscribed_urls(
    tx: &mut Tx,
    tenant_code: &TenantCode,
    category: Category,
) -> StoreResult<Vec<String>> {
    let row = sqlx::query("SELECT doc FROM webhook_settings WHERE tenant_code = $1")
        .bind(tenant_code.as_str())
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
        .map(|u| u.url.clone())
        .collect()
}

/// Writes one event per `data` (all of `category` and `kind`, changes of `tenant_code`)
/// for every subscribed URL of `to_tenant`'s settings. Returns how many deliveries.
pub(super) async fn emit_events(
    tx: &mut Tx,
    to_tenant: &TenantCode,
    tenant_code: &TenantCode,
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
    to_tenant: &TenantCode,
    tenant_code: &TenantCode,
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
    to_tenant: &TenantCode,
    events: &[WebhookEvent],
) -> StoreResult<usize> {
    let rows: Vec<(&WebhookEvent, &String)> = events
        .iter()
        .flat_map(|e| urls.iter().map(move |u| (e, u)))
        .collect();
    for chunk in rows.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO deliveries (tenant_code, channel, target, body, status, event_id,
                device_id, created_at, next_attempt_at, message_id, notification_id) VALUES {}",
            tx.backend().value_rows(chunk.len(), COLUMNS)
        );
        let mut query = sqlx::query(&sql);
        for (event, url) in chunk {
            query = query
                .bind(to_tenant.as_str())
                .bind(Channel::Webhook.as_str())
                .bind(url.as_str())
                .bind(event.body.as_str())
                .bind(DeliveryStatus::Pending.as_str())
                .bind(event.id.as_str())
                .bind(event.device_id.as_deref())
                .bind(to_micros(event.at))
                .bind(to_micros(event.at))
                .bind(event.message_id.map(MoMessageId::get))
                .bind(event.notification_id.map(NotificationId::get));
        }
        query.execute(&mut **tx).await?;
    }
    Ok(rows.len())
}

/// One event for a change of `tenant_code`, to its own settings.
pub(super) async fn emit(
    tx: &mut Tx,
    tenant_code: &TenantCode,
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
        tenant_code: &TenantCode,
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
        tenant_code: &TenantCode,
        category: Category,
        kind: EventType,
        data: Vec<serde_json::Value>,
    ) -> StoreResult<usize> {
        emit_events(&mut self.tx, tenant_code, tenant_code, category, kind, data).await
    }
}

/// A webhook delivery of a stored message's event, its body to render on reading.
#[derive(Debug, Clone)]
pub(super) struct MessageEvent {
    pub message_id: MoMessageId,
    pub event_id: String,
    pub tenant_code: TenantCode,
    pub at: Timestamp,
}

impl MessageEvent {
    /// Whether a delivery row is one (a webhook without a body, naming its message).
    pub(super) fn of(
        channel: Channel,
        body: &str,
        message_id: Option<MoMessageId>,
        event_id: Option<&str>,
        tenant_code: &TenantCode,
        at: Timestamp,
    ) -> Option<Self> {
        (channel == Channel::Webhook && body.is_empty()).then_some(())?;
        Some(Self {
            message_id: message_id?,
            event_id: event_id?.to_string(),
            tenant_code: tenant_code.clone(),
            at,
        })
    }

    /// The event's body, from its message (`None`: deleted since, sent without `Data`).
    pub(super) fn render(&self, message: Option<&MoMessage>) -> String {
        message_event_body(&self.event_id, &self.tenant_code, self.at, message)
    }
}

impl Store {
    /// Renders the body of each of `items` that is a stored message's event (`event`
    /// says which, `set_body` puts it in place).
    pub(super) async fn fill_message_bodies<T>(
        &self,
        items: &mut [T],
        event: impl Fn(&T) -> Option<MessageEvent>,
        set_body: impl Fn(&mut T, String),
    ) -> StoreResult<()> {
        let (positions, events): (Vec<usize>, Vec<MessageEvent>) = items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| Some((i, event(item)?)))
            .unzip();
        if events.is_empty() {
            return Ok(());
        }
        let bodies = self.render_message_events(&events).await?;
        for (i, body) in positions.into_iter().zip(bodies) {
            set_body(&mut items[i], body);
        }
        Ok(())
    }

    /// The bodies of `events`, in order, from their messages (one query per tenant).
    async fn render_message_events(&self, events: &[MessageEvent]) -> StoreResult<Vec<String>> {
        let mut by_tenant: BTreeMap<&TenantCode, Vec<MoMessageId>> = BTreeMap::new();
        for event in events {
            by_tenant
                .entry(&event.tenant_code)
                .or_default()
                .push(event.message_id);
        }
        let mut messages = BTreeMap::new();
        for (tenant_code, mut ids) in by_tenant {
            ids.sort_unstable();
            ids.dedup();
            for (id, message) in self.get_messages(tenant_code, None, &ids).await? {
                messages.insert((tenant_code, id), message);
            }
        }
        Ok(events
            .iter()
            .map(|e| e.render(messages.get(&(&e.tenant_code, e.message_id))))
            .collect())
    }
}
