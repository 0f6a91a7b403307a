//! Lone-worker monitoring sessions (migration 0061; docs/monitoring.md). A device's
//! current session is its row with `ended_at` NULL — at most one, by the unique index
//! `monitoring_sessions_current`, so two starts racing on either backend leave exactly
//! one (the other's insert is a duplicate: `Conflict`). Every write keeps the timers'
//! due columns (`reminder_due_at`, `missed_check_in_due_at`, `overdue_due_at`) equal to
//! `SessionClock::schedule()` of the row (all NULL once ended), adds a row to
//! `monitoring_session_events`, and is audited, in one transaction.

use jiff::Timestamp;
use sqlx::Row;

use super::audit_log::record;
use super::monitoring_events::SessionEvent;
use super::monitoring_rows::{COLUMNS, RETURNED_COLUMNS, session_from_row};
use super::{Key, Store, StoreError, StoreResult, VersionedRow, WriteTx, new_etag, to_micros};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{MoMessageId, MonitoringSessionId, TenantCode};
use crate::domain::monitoring::{
    Confirmation, EndKind, FiredTimers, MonitoringSession, SessionClock, SessionEnd,
    SessionEventKind, SessionSettings,
};
use crate::store::TenantSelection;

const DUPLICATE: &str = "a current monitoring session of this device";

/// The due columns of a clock: reminder, missed check-in, overdue — less the timers
/// already fired for their time (`fired`).
fn due_times(clock: &SessionClock, fired: &FiredTimers) -> (Option<i64>, Option<i64>, Option<i64>) {
    let armed = clock.schedule().armed(fired);
    (
        armed.reminder.map(to_micros),
        armed.missed_check_in.map(to_micros),
        armed.overdue.map(to_micros),
    )
}

/// Who the audit names (the session's `started_by` / `ended_by`).
pub(super) fn actor_of(audit: &Audit) -> String {
    audit
        .entry(AuditAction::Update, ResourceType::MonitoringSession, "")
        .actor
}

/// Keys: tenant code, device id (the current session's row).
fn current_row<'a>(keys: &'a [Key<'a>; 2]) -> VersionedRow<'a> {
    VersionedRow {
        table: "monitoring_sessions",
        column: "etag",
        filter: "tenant_code = $1 AND device_id = $2 AND ended_at IS NULL",
        keys,
    }
}

/// How a session ends (DELETE).
pub struct SessionEnding<'a> {
    pub kind: EndKind,
    pub reason: Option<&'a str>,
    pub if_match: Option<&'a str>,
}

/// A session to start.
pub(super) struct NewSession<'a> {
    pub(super) tenant_code: &'a TenantCode,
    pub(super) device_id: &'a str,
    pub(super) settings: &'a SessionSettings,
    pub(super) at: Timestamp,
    pub(super) actor: &'a str,
}

/// Inserts a current session watching the device's user, and its `Started` line, in
/// `tx`. `NotFound` without such a device; `None` when the device has a current session
/// already (no error, so the caller's transaction goes on: ingest's cannot roll back).
pub(super) async fn insert_session(
    tx: &mut WriteTx,
    new: NewSession<'_>,
) -> StoreResult<Option<MonitoringSessionId>> {
    let minute = tx.monitoring_minute;
    let device =
        sqlx::query("SELECT user_id FROM devices WHERE tenant_code = $1 AND device_id = $2")
            .bind(new.tenant_code.as_str())
            .bind(new.device_id)
            .fetch_optional(&mut *tx.tx)
            .await?
            .ok_or(StoreError::NotFound)?;
    let user_id: Option<i64> = device.try_get("user_id")?;
    let settings = new.settings;
    let clock = SessionClock::start(new.at, settings, minute);
    let (reminder, missed, overdue) = due_times(&clock, &FiredTimers::default());
    let sql = format!(
        "INSERT INTO monitoring_sessions (tenant_code, device_id, user_id, started_at,
            started_by, planned_end_at, check_in_interval_minutes, grace_minutes,
            reminder_minutes, no_motion_minutes, note, reminder_due_at,
            missed_check_in_due_at, overdue_due_at, etag, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $4)
         ON CONFLICT (tenant_code, device_id) WHERE ended_at IS NULL DO NOTHING
         RETURNING {}",
        RETURNED_COLUMNS.as_str()
    );
    let row = sqlx::query(&sql)
        .bind(new.tenant_code.as_str())
        .bind(new.device_id)
        .bind(user_id)
        .bind(to_micros(new.at))
        .bind(new.actor)
        .bind(to_micros(clock.planned_end))
        .bind(i64::from(settings.check_in_interval_minutes))
        .bind(i64::from(settings.grace_minutes))
        .bind(i64::from(settings.reminder_minutes))
        .bind(i64::from(settings.no_motion_minutes))
        .bind(settings.note.clone())
        .bind(reminder)
        .bind(missed)
        .bind(overdue)
        .bind(new_etag())
        .fetch_optional(&mut *tx.tx)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let session = session_from_row(&row, minute)?;
    SessionEvent::new(new.at, SessionEventKind::Started, new.actor)
        .insert(tx, &session, Some(settings_detail(settings)))
        .await?;
    Ok(Some(session.id))
}

impl Store {
    /// Starts a session at `device_id` of `tenant_code` now, watching the device's user.
    /// `NotFound` without such a device; `Conflict` when it has a current session.
    pub async fn start_monitoring_session(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        settings: &SessionSettings,
        audit: &Audit,
    ) -> StoreResult<MonitoringSessionId> {
        let mut tx = self.begin().await?;
        let actor = actor_of(audit);
        let new = NewSession {
            tenant_code,
            device_id,
            settings,
            at: crate::domain::time::now(),
            actor: &actor,
        };
        let id = insert_session(&mut tx, new)
            .await?
            .ok_or_else(|| StoreError::Conflict(format!("{DUPLICATE} already exists")))?;
        record(
            &mut tx.tx,
            audit,
            AuditAction::Create,
            ResourceType::MonitoringSession,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The device's current session, if any.
    pub async fn current_monitoring_session(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
    ) -> StoreResult<Option<MonitoringSession>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM monitoring_sessions m
             WHERE m.tenant_code = $1 AND m.device_id = $2 AND m.ended_at IS NULL"
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(device_id)
            .fetch_optional(&self.pool)
            .await?;
        let minute = self.monitoring_minute;
        row.as_ref()
            .map(|r| session_from_row(r, minute))
            .transpose()
    }

    /// One page of the current sessions of `tenants`, in id order after `after`.
    pub async fn list_active_monitoring_sessions(
        &self,
        tenants: &TenantSelection,
        after: i64,
        limit: u32,
    ) -> StoreResult<Vec<MonitoringSession>> {
        let (filter, key) = match tenants {
            TenantSelection::Tenant(code) => ("m.tenant_code = $1", code.to_string()),
            TenantSelection::Subtree(path) => ("t.path LIKE $1", format!("{path}%")),
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM monitoring_sessions m JOIN tenants t ON t.code = m.tenant_code
             WHERE {filter} AND m.ended_at IS NULL AND m.id > $2 ORDER BY m.id LIMIT $3"
        );
        let rows = sqlx::query(&sql)
            .bind(key)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| session_from_row(r, self.monitoring_minute))
            .collect()
    }

    /// Replaces the current session's settings (`DurationMinutes` counts from the start:
    /// the planned end moves), the timers recomputed. `If-Match` on its `ETag` (412).
    pub async fn change_monitoring_session(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        settings: &SessionSettings,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let keys = [Key::Text(tenant_code), Key::Text(device_id)];
        self.check_version(&mut tx.tx, current_row(&keys), if_match)
            .await?;
        let session = locked_current(&mut tx, tenant_code, device_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let mut clock = SessionClock::start(session.started_at, settings, self.monitoring_minute);
        clock.last_confirmation = session.last_check_in_at;
        let (reminder, missed, overdue) = due_times(&clock, &session.fired);
        let mut changed = session.clone();
        changed.settings = settings.clone();
        let at = crate::domain::time::now();
        let sql = format!(
            "UPDATE monitoring_sessions SET planned_end_at = $1, check_in_interval_minutes = $2,
                grace_minutes = $3, reminder_minutes = $4, no_motion_minutes = $5, note = $6,
                reminder_due_at = $7, missed_check_in_due_at = $8, overdue_due_at = $9,
                etag = $10, updated_at = $11, no_motion_due_at = $13
             WHERE id = $12 RETURNING {}",
            RETURNED_COLUMNS.as_str()
        );
        let row = sqlx::query(&sql)
            .bind(to_micros(clock.planned_end))
            .bind(i64::from(settings.check_in_interval_minutes))
            .bind(i64::from(settings.grace_minutes))
            .bind(i64::from(settings.reminder_minutes))
            .bind(i64::from(settings.no_motion_minutes))
            .bind(settings.note.clone())
            .bind(reminder)
            .bind(missed)
            .bind(overdue)
            .bind(new_etag())
            .bind(to_micros(at))
            .bind(session.id.get())
            .bind(changed.no_motion_due().map(to_micros))
            .fetch_one(&mut *tx.tx)
            .await?;
        let changed = session_from_row(&row, self.monitoring_minute)?;
        let actor = actor_of(audit);
        SessionEvent::new(at, SessionEventKind::Changed, &actor)
            .insert(&mut tx, &changed, Some(settings_detail(settings)))
            .await?;
        record(
            &mut tx.tx,
            audit,
            AuditAction::Update,
            ResourceType::MonitoringSession,
            session.id,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Ends the current session now (its timers cleared). `If-Match` on its `ETag`.
    pub async fn end_monitoring_session(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        ending: SessionEnding<'_>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let keys = [Key::Text(tenant_code), Key::Text(device_id)];
        self.check_version(&mut tx.tx, current_row(&keys), ending.if_match)
            .await?;
        let session = locked_current(&mut tx, tenant_code, device_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let actor = actor_of(audit);
        let end = SessionEnd {
            at: crate::domain::time::now(),
            by: actor,
            kind: ending.kind,
            reason: ending.reason.map(str::to_string),
        };
        close_session(&mut tx, &session, &end).await?;
        record(
            &mut tx.tx,
            audit,
            AuditAction::Delete,
            ResourceType::MonitoringSession,
            session.id,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Ends `session` as `end` says (its timers cleared), with its `Ended` line, in `tx`.
pub(super) async fn close_session(
    tx: &mut WriteTx,
    session: &MonitoringSession,
    end: &SessionEnd,
) -> StoreResult<()> {
    let sql = format!(
        "UPDATE monitoring_sessions SET ended_at = $1, ended_by = $2, end_kind = $3,
            end_reason = $4, reminder_due_at = NULL, missed_check_in_due_at = NULL,
            overdue_due_at = NULL, no_motion_due_at = NULL, etag = $5, updated_at = $1
         WHERE id = $6 RETURNING {}",
        RETURNED_COLUMNS.as_str()
    );
    let row = sqlx::query(&sql)
        .bind(to_micros(end.at))
        .bind(&end.by)
        .bind(end.kind.as_str())
        .bind(end.reason.clone())
        .bind(new_etag())
        .bind(session.id.get())
        .fetch_one(&mut *tx.tx)
        .await?;
    let ended = session_from_row(&row, tx.monitoring_minute)?;
    let detail = serde_json::json!({"EndKind": end.kind.as_str(), "Reason": end.reason});
    SessionEvent::new(end.at, SessionEventKind::Ended, &end.by)
        .insert(tx, &ended, Some(detail))
        .await
}

/// The device's current session locked for this transaction, if any.
pub(super) async fn locked_current(
    tx: &mut WriteTx,
    tenant_code: &TenantCode,
    device_id: &str,
) -> StoreResult<Option<MonitoringSession>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM monitoring_sessions m
         WHERE m.tenant_code = $1 AND m.device_id = $2 AND m.ended_at IS NULL{}",
        tx.backend.lock_rows()
    );
    let row = sqlx::query(&sql)
        .bind(tenant_code.as_str())
        .bind(device_id)
        .fetch_optional(&mut *tx.tx)
        .await?;
    let minute = tx.monitoring_minute;
    row.as_ref()
        .map(|r| session_from_row(r, minute))
        .transpose()
}

/// A confirmed check-in to record on a session.
pub(super) struct CheckIn<'a> {
    pub(super) at: Timestamp,
    pub(super) kind: Confirmation,
    pub(super) actor: &'a str,
    pub(super) mo_message_id: Option<MoMessageId>,
    pub(super) note: Option<&'a str>,
}

/// The one place a check-in is written, for the API and for device messages alike: the
/// last check-in, its kind and count, the due columns from the clock, a `CheckIn` event.
pub(super) async fn record_check_in(
    tx: &mut WriteTx,
    session: &MonitoringSession,
    check_in: &CheckIn<'_>,
) -> StoreResult<()> {
    let clock = session.clock().confirmed(check_in.at);
    let (reminder, missed, overdue) = due_times(&clock, &session.fired);
    let mut after = session.clone();
    after.motion.confirmed(check_in.at);
    let sql = format!(
        "UPDATE monitoring_sessions SET last_check_in_at = $1, last_check_in_kind = $2,
            check_in_count = check_in_count + 1, reminder_due_at = $3,
            missed_check_in_due_at = $4, overdue_due_at = $5, etag = $6, updated_at = $7,
            motion_anchor_at = $9, no_motion_due_at = $10
         WHERE id = $8 RETURNING {}",
        RETURNED_COLUMNS.as_str()
    );
    let row = sqlx::query(&sql)
        .bind(clock.last_confirmation.map(to_micros))
        .bind(check_in.kind.as_str())
        .bind(reminder)
        .bind(missed)
        .bind(overdue)
        .bind(new_etag())
        .bind(to_micros(crate::domain::time::now()))
        .bind(session.id.get())
        .bind(after.motion.anchor.map(|(_, since)| to_micros(since)))
        .bind(after.no_motion_due().map(to_micros))
        .fetch_one(&mut *tx.tx)
        .await?;
    let confirmed = session_from_row(&row, tx.monitoring_minute)?;
    let mut event = SessionEvent::new(check_in.at, SessionEventKind::CheckIn, check_in.actor);
    event.mo_message_id = check_in.mo_message_id;
    let detail = serde_json::json!({"Kind": check_in.kind.as_str(), "Note": check_in.note});
    event.insert(tx, &confirmed, Some(detail)).await
}

fn settings_detail(settings: &SessionSettings) -> serde_json::Value {
    serde_json::json!({
        "DurationMinutes": settings.duration_minutes,
        "CheckInIntervalMinutes": settings.check_in_interval_minutes,
        "GraceMinutes": settings.grace_minutes,
        "ReminderMinutes": settings.reminder_minutes,
        "NoMotionMinutes": settings.no_motion_minutes,
        "Note": settings.note,
    })
}

#[cfg(test)]
mod tests {
    use super::super::temp_file::TempSqliteFile;
    use super::*;
    use crate::domain::audit::Actor;
    use crate::domain::tenant::TenantNode;

    /// The due columns the timer worker reads, per session row.
    async fn due(
        store: &Store,
        id: MonitoringSessionId,
    ) -> (Option<i64>, Option<i64>, Option<i64>) {
        let row = sqlx::query(
            "SELECT reminder_due_at, missed_check_in_due_at, overdue_due_at
             FROM monitoring_sessions WHERE id = $1",
        )
        .bind(id.get())
        .fetch_one(&store.pool)
        .await
        .expect("session row");
        (
            row.try_get("reminder_due_at").expect("reminder"),
            row.try_get("missed_check_in_due_at").expect("missed"),
            row.try_get("overdue_due_at").expect("overdue"),
        )
    }

    async fn events(store: &Store, id: MonitoringSessionId) -> Vec<String> {
        let rows = sqlx::query(
            "SELECT kind FROM monitoring_session_events WHERE session_id = $1 ORDER BY id",
        )
        .bind(id.get())
        .fetch_all(&store.pool)
        .await
        .expect("events");
        rows.iter()
            .map(|r| r.try_get("kind").expect("kind"))
            .collect()
    }

    /// Each write leaves the due columns equal to the clock's schedule, and an end clears
    /// them: what the timer worker claims.
    #[tokio::test]
    async fn the_due_columns_follow_the_clock() {
        let file = TempSqliteFile::new("safetrack-monitoring");
        let store = Store::connect(&file.url()).await.expect("connect");
        store.migrate().await.expect("migrate");
        for sql in [
            "INSERT INTO tenants (code, parent_code, path, doc, etag, updated_at)
             VALUES ('1000', NULL, '/1000/', '{}', 'e', 0) ON CONFLICT DO NOTHING",
            "INSERT INTO devices (device_id, tenant_code, device_type, status, doc, etag, updated_at)
             VALUES ('w1', '1000', 'InReach', 'Active', '{}', 'e', 0)",
        ] {
            sqlx::query(sql).execute(&store.pool).await.expect("seed");
        }
        let node = TenantNode {
            code: "1000".parse().expect("code"),
            parent_code: None,
            path: "/1000/".into(),
        };
        let audit = Audit::new(Actor::user("op@example.com"), None, &node);
        let settings = SessionSettings {
            duration_minutes: 120,
            check_in_interval_minutes: 30,
            grace_minutes: 5,
            reminder_minutes: 10,
            no_motion_minutes: 0,
            note: None,
        };
        let id = store
            .start_monitoring_session(&node.code, "w1", &settings, &audit)
            .await
            .expect("start");
        let scheduled = |s: &MonitoringSession| due_times(&s.clock(), &s.fired);
        let session = store
            .current_monitoring_session(&node.code, "w1")
            .await
            .expect("read")
            .expect("current");
        let (reminder, missed, overdue) = scheduled(&session);
        assert_eq!(due(&store, id).await, (reminder, missed, overdue));
        let start = to_micros(session.started_at);
        let minute = 60_000_000;
        assert_eq!(reminder, Some(start + 20 * minute));
        assert_eq!(missed, Some(start + 35 * minute));
        assert_eq!(overdue, Some(start + 125 * minute));

        let check_in = super::super::ApiCheckIn {
            tenant_code: node.code.clone(),
            device_id: crate::domain::ids::DeviceId::from_store("w1".into()),
            note: None,
            audit: audit.clone(),
        };
        store
            .check_in_monitoring_session(&check_in)
            .await
            .expect("check in");
        let session = store
            .current_monitoring_session(&node.code, "w1")
            .await
            .expect("read")
            .expect("current");
        let checked = to_micros(session.last_check_in_at.expect("checked in"));
        let (reminder, missed, overdue) = scheduled(&session);
        assert_eq!(missed, Some(checked + 35 * minute));
        assert_eq!(due(&store, id).await, (reminder, missed, overdue));

        let ending = SessionEnding {
            kind: EndKind::Normal,
            reason: None,
            if_match: None,
        };
        store
            .end_monitoring_session(&node.code, "w1", ending, &audit)
            .await
            .expect("end");
        assert_eq!(due(&store, id).await, (None, None, None));
        assert_eq!(events(&store, id).await, ["Started", "CheckIn", "Ended"]);
        store.close().await;
    }
}
