//! What monitoring sessions leave behind, read back: a device's ended sessions, and a
//! session's history lines (`monitoring_session_events`: started, check-ins, reminders,
//! missed check-ins, changes, overdue, no motion, the end), each paged in id order.

use sqlx::Row;

use super::monitoring_sessions::{COLUMNS, session_from_row};
use super::{Store, StoreError, StoreResult, stored_time};
use crate::domain::ids::{MoMessageId, MonitoringSessionId, TenantCode};
use crate::domain::monitoring::{MonitoringSession, SessionEventKind, SessionEventLine};

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
        let rows = sqlx::query(
            "SELECT id, at, kind, actor, mo_message_id, detail FROM monitoring_session_events
             WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        )
        .bind(id.get())
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let kind: String = row.try_get("kind")?;
                let detail: Option<String> = row.try_get("detail")?;
                Ok(SessionEventLine {
                    id: row.try_get("id")?,
                    session_id: id,
                    at: stored_time(row.try_get("at")?)?,
                    kind: kind
                        .parse::<SessionEventKind>()
                        .map_err(|_| StoreError::Corrupt(format!("session event kind {kind}")))?,
                    actor: row.try_get("actor")?,
                    mo_message_id: row
                        .try_get::<Option<i64>, _>("mo_message_id")?
                        .map(MoMessageId::new),
                    detail: detail
                        .map(|d| serde_json::from_str(&d))
                        .transpose()
                        .map_err(|e| StoreError::Corrupt(format!("session event detail: {e}")))?,
                })
            })
            .collect()
    }
}
