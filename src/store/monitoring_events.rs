//! A line of a monitoring session's history written (`monitoring_session_events`), and
//! with it what the line tells others, in the writing transaction: a `monitoring` event
//! on the live stream (`StreamRecord::Monitoring`) and a `Device`-category webhook event
//! (`Type` `Updated`, `Data` the same event). Every session write — the API, a device's
//! messages, a rule's recipients, the timer worker — writes its line here, so none can
//! change a session without the consoles and receivers hearing of it.

use std::sync::Arc;

use jiff::Timestamp;

use super::monitoring_rows::{RETURNED_LINE_COLUMNS, line_from_row};
use super::webhook_events::emit;
use super::{StoreError, StoreResult, StreamAnnouncement, StreamRecord, WriteTx, to_micros};
use crate::domain::ids::MoMessageId;
use crate::domain::monitoring::view::MonitoringEvent;
use crate::domain::monitoring::{MonitoringSession, SessionEventKind, SessionEventLine};
use crate::domain::webhook::Category;
use crate::domain::webhook_event::EventType;

/// A row of `monitoring_session_events` to write.
pub(super) struct SessionEvent<'a> {
    at: Timestamp,
    kind: SessionEventKind,
    actor: &'a str,
    /// The device message that made it (a device's check-in), if any.
    pub(super) mo_message_id: Option<MoMessageId>,
}

impl<'a> SessionEvent<'a> {
    pub(super) fn new(at: Timestamp, kind: SessionEventKind, actor: &'a str) -> Self {
        SessionEvent {
            at,
            kind,
            actor,
            mo_message_id: None,
        }
    }

    /// Writes the line after the session's own change, and announces it with `session`
    /// as that change left it (the change's `RETURNING` row: nothing is read back).
    pub(super) async fn insert(
        self,
        tx: &mut WriteTx,
        session: &MonitoringSession,
        detail: Option<serde_json::Value>,
    ) -> StoreResult<()> {
        let sql = format!(
            "INSERT INTO monitoring_session_events
                (session_id, tenant_code, at, kind, actor, detail, mo_message_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {RETURNED_LINE_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(session.id.get())
            .bind(session.tenant_code.as_str())
            .bind(to_micros(self.at))
            .bind(self.kind.as_str())
            .bind(self.actor)
            .bind(detail.map(|d| d.to_string()))
            .bind(self.mo_message_id.map(|id| id.get()))
            .fetch_one(&mut *tx.tx)
            .await?;
        let line = line_from_row(&row, session.id)?;
        tx.announce_session_line(line, session.clone()).await
    }
}

impl WriteTx {
    /// The stream's and the webhooks' event of `line` of `session`.
    async fn announce_session_line(
        &mut self,
        line: SessionEventLine,
        session: MonitoringSession,
    ) -> StoreResult<()> {
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
