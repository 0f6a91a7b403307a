//! What monitoring sessions leave behind, read back: a device's ended sessions, and a
//! session's history lines (`monitoring_session_events`: started, check-ins, reminders,
//! missed check-ins, changes, overdue, no motion, the end), each paged in id order; and
//! lines as `monitoring` events, with their session (the live stream's read, and what a
//! write announces).

use std::collections::HashMap;

use super::monitoring_rows::{COLUMNS, LINE_COLUMNS, line_from_row, session_from_row};
use super::{Store, StoreError, StoreResult};
use crate::domain::ids::{MonitoringSessionId, TenantCode};
use crate::domain::monitoring::view::MonitoringEvent;
use crate::domain::monitoring::{MonitoringSession, SessionEventLine};

impl Store {
    /// One page of a device's ended sessions, in id order after `after`.
    pub async fn monitoring_session_history(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        after: i64,
        limit: u32,
    ) -> StoreResult<Vec<MonitoringSession>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM monitoring_sessions m
             WHERE m.tenant_code = $1 AND m.device_id = $2 AND m.ended_at IS NOT NULL
               AND m.id > $3 ORDER BY m.id LIMIT $4"
        );
        let rows = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(device_id)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| session_from_row(r, self.monitoring_minute))
            .collect()
    }

    /// One page of the history lines of session `id` of `tenant_code` (current or
    /// ended), in id order after `after`. `NotFound` for a session not the tenant's.
    pub async fn monitoring_session_events(
        &self,
        tenant_code: &TenantCode,
        id: MonitoringSessionId,
        after: i64,
        limit: u32,
    ) -> StoreResult<Vec<SessionEventLine>> {
        let owned =
            sqlx::query("SELECT 1 FROM monitoring_sessions WHERE id = $1 AND tenant_code = $2")
                .bind(id.get())
                .bind(tenant_code.as_str())
                .fetch_optional(&self.pool)
                .await?;
        if owned.is_none() {
            return Err(StoreError::NotFound);
        }
        let rows = sqlx::query(&format!(
            "SELECT {LINE_COLUMNS} FROM monitoring_session_events e
                 WHERE e.session_id = $1 AND e.id > $2 ORDER BY e.id LIMIT $3"
        ))
        .bind(id.get())
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| line_from_row(row, id)).collect()
    }

    /// The `monitoring` events of the history lines `ids` of `tenant_code`, each with its
    /// session as it is now (the live stream's read of a notification naming them).
    /// Lines not found (another tenant's, none such) are left out.
    pub async fn monitoring_stream_events(
        &self,
        tenant_code: &TenantCode,
        ids: &[i64],
    ) -> StoreResult<HashMap<i64, MonitoringEvent>> {
        let mut found = HashMap::with_capacity(ids.len());
        let now = crate::domain::time::now();
        for chunk in ids.chunks(500) {
            let list = (0..chunk.len())
                .map(|i| format!("${}", i + 2))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT {COLUMNS}, {LINE_COLUMNS} FROM monitoring_session_events e
                 JOIN monitoring_sessions m ON m.id = e.session_id
                 WHERE e.tenant_code = $1 AND e.id IN ({list})"
            );
            let mut query = sqlx::query(&sql).bind(tenant_code.as_str());
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&self.pool).await? {
                let session = session_from_row(&row, self.monitoring_minute)?;
                let line = line_from_row(&row, session.id)?;
                let id = line.id.get();
                found.insert(id, MonitoringEvent::at(line, session, now));
            }
        }
        Ok(found)
    }
}
