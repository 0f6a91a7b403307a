//! The monitoring timer worker's store (docs/monitoring.md, "Timers"): which current
//! sessions have a timer due, and firing one. A timer fires once per due time: firing
//! clears its due column and records the time it fired for (`*_fired_for`, migration
//! 0063), in the caller's transaction with the session row locked, so a second process
//! (or a restart after kill -9, which rolls back what was not committed) neither loses
//! nor repeats it.

use jiff::Timestamp;
use sqlx::Row;

use super::monitoring_events::SessionEvent;
use super::monitoring_rows::{COLUMNS, RETURNED_COLUMNS, session_from_row};
use super::{Store, StoreResult, WriteTx, new_etag, stored_time, to_micros};
use crate::domain::ids::{DeviceId, TenantCode};
use crate::domain::monitoring::{MonitoringSession, SessionTimer};
use crate::domain::tenant::TenantNode;

/// Who a timer's history line names.
const WORKER_ACTOR: &str = "monitoring";

/// A current session, locked, with its timers due now.
pub struct DueTimers {
    pub session: MonitoringSession,
    /// Each due timer with the time it is due for, in no order.
    pub due: Vec<(SessionTimer, Timestamp)>,
}

/// The due column of a timer and the column of the time it last fired for.
fn columns(timer: SessionTimer) -> (&'static str, &'static str) {
    match timer {
        SessionTimer::Reminder => ("reminder_due_at", "reminder_fired_for"),
        SessionTimer::MissedCheckIn => ("missed_check_in_due_at", "missed_check_in_fired_for"),
        SessionTimer::Overdue => ("overdue_due_at", "overdue_fired_for"),
        SessionTimer::NoMotion => ("no_motion_due_at", "no_motion_fired_for"),
    }
}

impl Store {
    /// Current sessions with a timer due at `at` (at most `limit`), by their device —
    /// only of devices that exist (the worker locks the device first: a session without
    /// one would stay due and fill every batch).
    pub async fn due_monitoring_sessions(
        &self,
        at: Timestamp,
        limit: u32,
    ) -> StoreResult<Vec<(TenantNode, DeviceId)>> {
        // One branch per timer, each on its partial index.
        let branches: Vec<String> = SessionTimer::ALL
            .iter()
            .map(|t| {
                let (due, _) = columns(*t);
                format!(
                    "SELECT id FROM monitoring_sessions WHERE {due} IS NOT NULL AND {due} <= $1"
                )
            })
            .collect();
        let sql = format!(
            "SELECT m.device_id, t.code, t.parent_code, t.path FROM monitoring_sessions m
             JOIN tenants t ON t.code = m.tenant_code
             JOIN devices d ON d.tenant_code = m.tenant_code AND d.device_id = m.device_id
             WHERE m.ended_at IS NULL AND m.id IN ({})
             ORDER BY m.id LIMIT $2",
            branches.join(" UNION ")
        );
        let rows = sqlx::query(&sql)
            .bind(to_micros(at))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| {
                let node = TenantNode {
                    code: TenantCode::from_store(row.try_get("code")?),
                    parent_code: row
                        .try_get::<Option<String>, _>("parent_code")?
                        .map(TenantCode::from_store),
                    path: row.try_get("path")?,
                };
                Ok((node, DeviceId::from_store(row.try_get("device_id")?)))
            })
            .collect()
    }
}

impl WriteTx {
    /// The device's current session locked for this transaction, with its timers due at
    /// `at`; `None` when it has none (ended meanwhile, or never started).
    pub async fn lock_due_monitoring_timers(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        at: Timestamp,
    ) -> StoreResult<Option<DueTimers>> {
        let due_columns: Vec<&str> = SessionTimer::ALL.iter().map(|t| columns(*t).0).collect();
        let sql = format!(
            "SELECT {COLUMNS}, {} FROM monitoring_sessions m
             WHERE m.tenant_code = $1 AND m.device_id = $2 AND m.ended_at IS NULL{}",
            due_columns.join(", "),
            self.backend.lock_rows()
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(device_id.as_str())
            .fetch_optional(&mut *self.tx)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let session = session_from_row(&row, self.monitoring_minute)?;
        let mut due = Vec::new();
        for timer in SessionTimer::ALL {
            let stored: Option<i64> = row.try_get(columns(*timer).0)?;
            if let Some(time) = stored.map(stored_time).transpose()?
                && time <= at
            {
                due.push((*timer, time));
            }
        }
        Ok(Some(DueTimers { session, due }))
    }

    /// Fires `timer` of `session`, due for `due_for`, at `at`: its due column cleared and
    /// the time recorded as fired for, a missed check-in counted, the row's version
    /// moved, and a history line with `detail` (at the due time; the firing time in its
    /// detail) — none when `detail` is `None`: the timer was spent without acting.
    pub async fn fire_monitoring_timer(
        &mut self,
        session: &MonitoringSession,
        (timer, due_for): (SessionTimer, Timestamp),
        at: Timestamp,
        detail: Option<serde_json::Value>,
    ) -> StoreResult<()> {
        let spent = self.spend_timer(session, (timer, due_for), at).await?;
        let Some(mut detail) = detail else {
            return Ok(());
        };
        if let Some(map) = detail.as_object_mut() {
            map.insert("FiredAt".into(), serde_json::json!(at.to_string()));
        }
        SessionEvent::new(due_for, timer.into(), WORKER_ACTOR)
            .insert(self, &spent, Some(detail))
            .await
    }

    /// Leaves the no-motion timer of `session` waiting for the device's next report
    /// (its due column cleared, not marked fired: that report re-arms it).
    pub async fn park_no_motion_timer(&mut self, session: &MonitoringSession) -> StoreResult<()> {
        sqlx::query("UPDATE monitoring_sessions SET no_motion_due_at = NULL WHERE id = $1")
            .bind(session.id.get())
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    async fn spend_timer(
        &mut self,
        session: &MonitoringSession,
        (timer, due_for): (SessionTimer, Timestamp),
        at: Timestamp,
    ) -> StoreResult<MonitoringSession> {
        let (due, fired_for) = columns(timer);
        let count = if timer == SessionTimer::MissedCheckIn {
            ", missed_check_in_count = missed_check_in_count + 1"
        } else {
            ""
        };
        let sql = format!(
            "UPDATE monitoring_sessions SET {due} = NULL, {fired_for} = $1{count},
                etag = $2, updated_at = $3
             WHERE id = $4 RETURNING {}",
            RETURNED_COLUMNS.as_str()
        );
        let row = sqlx::query(&sql)
            .bind(to_micros(due_for))
            .bind(new_etag())
            .bind(to_micros(at))
            .bind(session.id.get())
            .fetch_one(&mut *self.tx)
            .await?;
        session_from_row(&row, self.monitoring_minute)
    }
}
