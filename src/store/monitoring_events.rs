//! A line of a monitoring session's history written (`monitoring_session_events`), and
//! with it what the line tells others, in the writing transaction: a `monitoring` event
//! on the live stream (`StreamRecord::Monitoring`) and a `Device`-category webhook event
//! (`Type` `Updated`, `Data` the same event). Every session write — the API, a device's
//! messages, a rule's recipients, the timer worker — writes its line here, so none can
//! change a session without the consoles and receivers hearing of it.

use std::sync::Arc;

use jiff::Timestamp;

use super::monitoring_rows::{COLUMNS, LINE_COLUMNS, line_from_row, session_from_row};
use super::webhook_events::emit;
use super::{StoreError, StoreResult, StreamAnnouncement, StreamRecord, WriteTx, to_micros};
use crate::domain::ids::{MoMessageId, MonitoringSessionId, TenantCode};
use crate::domain::monitoring::SessionEventKind;
use crate::domain::monitoring::view::MonitoringEvent;
use crate::domain::webhook::Category;
use crate::domain::webhook_event::EventType;

/// A row of `monitoring_session_events` to write.
pub(super) struct SessionEvent<'a> {
    session: MonitoringSessionId,
    tenant_code: &'a TenantCode,
    at: Timestamp,
    kind: SessionEventKind,
    actor: &'a str,
    /// The device message that made it (a device's check-in), if any.
    pub(super) mo_message_id: Option<MoMessageId>,
}

impl<'a> SessionEvent<'a> {
    pub(super) fn new(
        session: MonitoringSessionId,
        tenant_code: &'a TenantCode,
        at: Timestamp,
        kind: SessionEventKind,
        actor: &'a str,
    ) -> Self {
        SessionEvent {
            session,
            tenant_code,
            at,
            kind,
            actor,
            mo_message_id: None,
        }
    }

    /// Writes the line after the session's own change (so the event shows the session
    /// as this write leaves it), and announces it.
    pub(super) async fn insert(
        self,
        tx: &mut WriteTx,
        detail: Option<serde_json::Value>,
    ) -> StoreResult<()> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO monitoring_session_events
                (session_id, tenant_code, at, kind, actor, detail, mo_message_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(self.session.get())
        .bind(self.tenant_code.as_str())
        .bind(to_micros(self.at))
        .bind(self.kind.as_str())
        .bind(self.actor)
        .bind(detail.map(|d| d.to_string()))
        .bind(self.mo_message_id.map(|id| id.get()))
        .fetch_one(&mut *tx.tx)
        .await?;
        tx.announce_session_line(id).await
    }
}

impl WriteTx {
    /// The stream's and the webhooks' event of line `id`, read back with its session
    /// through this transaction (one indexed read; SQLite's stream carries the record).
    async fn announce_session_line(&mut self, id: i64) -> StoreResult<()> {
        let sql = format!(
            "SELECT {COLUMNS}, {LINE_COLUMNS} FROM monitoring_session_events e
             JOIN monitoring_sessions m ON m.id = e.session_id WHERE e.id = $1"
        );
        let row = sqlx::query(&sql).bind(id).fetch_one(&mut *self.tx).await?;
        let session = session_from_row(&row, self.monitoring_minute)?;
        let line = line_from_row(&row, session.id)?;
        let tenant_code = session.tenant_code.clone();
        let node = self
            .tenant_node(&tenant_code)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("session of tenant {tenant_code}")))?;
        let event = MonitoringEvent::at(line, session, crate::domain::time::now());
        let data = serde_json::to_value(&event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        emit(
            &mut self.tx,
            &tenant_code,
            Category::Device,
            EventType::Updated,
            data,
        )
        .await?;
        let device_id = event.device_id.to_string();
        let record = StreamRecord::Monitoring(Arc::new(event));
        self.announce(StreamAnnouncement::of(&node, &device_id, vec![record]));
        Ok(())
    }
}
