//! What a device's own messages do to its monitoring session, in the batch's ingest
//! transaction (docs/monitoring.md, "Device messages"): MO `BeginMonitoring` starts one,
//! `EndMonitoring` ends it, a confirming message is its check-in. None of these is an
//! error the batch could fail on: a start while a session runs, an end or a check-in
//! without one, change nothing. Not audited: the stored message is the record of what
//! the device did (the session's history names the message's actor, `device`).

use jiff::Timestamp;

use super::monitoring_events::SessionEvent;
use super::monitoring_rows::{COLUMNS, session_from_row};
use super::monitoring_sessions::{
    CheckIn, NewSession, close_session, insert_session, locked_current, record_check_in,
};
use super::{StoreResult, WriteTx, to_micros};
use crate::domain::ids::{AlertId, MoMessageId, MonitoringSessionId, TenantCode};
use crate::domain::monitoring::{
    Confirmation, EndKind, SessionEnd, SessionEventKind, SessionSettings,
};

/// Who a device's own session changes name (`started_by`, `ended_by`, an event's actor).
pub const DEVICE_ACTOR: &str = "device";

/// Who an escalation step's line names (the escalation worker).
const ESCALATION_ACTOR: &str = "escalation";

impl WriteTx {
    /// Starts a session at the device at `at` (its MO `BeginMonitoring`, actor
    /// `device`; or a rule's `StartMonitoring`, actor `notification:<id>`), unless it
    /// has a current one. Answers the new session's id.
    pub async fn begin_device_monitoring(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        settings: &SessionSettings,
        (at, actor): (Timestamp, &str),
    ) -> StoreResult<Option<MonitoringSessionId>> {
        let new = NewSession {
            tenant_code,
            device_id,
            settings,
            at,
            actor,
        };
        insert_session(self, new).await
    }

    /// Ends the device's current session as `end` says (its MO `EndMonitoring`: the
    /// worker's normal end; or a rule's `StopMonitoring` / `ForceStopMonitoring`), if it
    /// has one started before `end.at`. Answers whether it ended one.
    pub async fn end_device_monitoring(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        end: &SessionEnd,
    ) -> StoreResult<bool> {
        let Some(session) = locked_current(self, tenant_code, device_id).await? else {
            return Ok(false);
        };
        if end.at <= session.started_at {
            // An end sent before this session began belongs to an earlier one.
            return Ok(false);
        }
        close_session(self, &session, end).await?;
        Ok(true)
    }

    /// Ends the current session of a device being deleted (in its deletion's
    /// transaction), as a `ForceStop` by whoever deletes it, reason `Device deleted`.
    pub async fn end_monitoring_of_deleted_device(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        (at, by): (Timestamp, String),
    ) -> StoreResult<()> {
        let Some(session) = locked_current(self, tenant_code, device_id).await? else {
            return Ok(());
        };
        let end = SessionEnd {
            at: at.max(session.started_at),
            by,
            kind: EndKind::ForceStop,
            reason: Some("Device deleted".to_string()),
        };
        close_session(self, &session, &end).await
    }

    /// A line on the device's current session, if any, for step `step` (1-based) of
    /// the escalation policy of its alert `alert_id` fired at `at`: the board shows how
    /// far the escalation has gone. Not a change of the session (its version stays).
    pub async fn note_escalation_step_on_session(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        (alert_id, step, instructions): (AlertId, usize, Option<&str>),
        at: Timestamp,
    ) -> StoreResult<()> {
        // Not locked: the escalation holds the alert row, and ingest locks the session
        // before an alert it joins — the other order would deadlock (PostgreSQL).
        let sql = format!(
            "SELECT {COLUMNS} FROM monitoring_sessions m
             WHERE m.tenant_code = $1 AND m.device_id = $2 AND m.ended_at IS NULL"
        );
        let current = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(device_id)
            .fetch_optional(&mut *self.tx)
            .await?;
        let Some(row) = current else {
            return Ok(());
        };
        let session = session_from_row(&row, self.monitoring_minute)?;
        let event = SessionEvent::new(at, SessionEventKind::EscalationStep, ESCALATION_ACTOR);
        let detail = serde_json::json!({
            "AlertId": alert_id.to_string(),
            "Step": step,
            "Instructions": instructions,
        });
        event.insert(self, &session, Some(detail)).await
    }

    /// Records a device message's check-in (`kind`, sent at `at`) on the device's current
    /// session. Nothing when it has none, or when the message is from before its start
    /// or not newer than its last check-in (messages arrive out of order: an older one
    /// does not move the clock back). Answers whether it counted.
    pub async fn confirm_monitoring_session(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        (mo_message_id, kind, at): (MoMessageId, Confirmation, Timestamp),
    ) -> StoreResult<bool> {
        let Some(session) = locked_current(self, tenant_code, device_id).await? else {
            return Ok(false);
        };
        let newer = session.last_check_in_at.is_none_or(|last| at > last);
        if at <= session.started_at || !newer {
            return Ok(false);
        }
        let check_in = CheckIn {
            at,
            kind,
            actor: DEVICE_ACTOR,
            mo_message_id: Some(mo_message_id),
            note: None,
        };
        record_check_in(self, &session, &check_in).await?;
        Ok(true)
    }

    /// Moves the device's current session's no-motion record on by a batch's reports
    /// (`reports`: each message's time and fix, oldest first) — only for a session
    /// watching for no motion, and only reports from its start on — and re-arms its
    /// timer from it (docs/monitoring.md, "No motion"). Answers whether it moved.
    pub async fn track_monitoring_motion(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        reports: &[(Timestamp, Option<(f64, f64)>)],
    ) -> StoreResult<bool> {
        let Some(session) = locked_current(self, tenant_code, device_id).await? else {
            return Ok(false);
        };
        if session.no_motion_window().is_zero() {
            return Ok(false);
        }
        let mut moved = session.clone();
        for (at, fix) in reports.iter().filter(|(at, _)| *at >= session.started_at) {
            moved.motion.report(*at, *fix);
        }
        if moved.motion == session.motion {
            return Ok(false);
        }
        let anchor = moved.motion.anchor;
        // Not the row's version: a report moves no setting a client could overwrite.
        sqlx::query(
            "UPDATE monitoring_sessions SET motion_anchor_latitude = $1,
                motion_anchor_longitude = $2, motion_anchor_at = $3, motion_reported_at = $4,
                no_motion_due_at = $5
             WHERE id = $6",
        )
        .bind(anchor.map(|((lat, _), _)| lat))
        .bind(anchor.map(|((_, lon), _)| lon))
        .bind(anchor.map(|(_, since)| to_micros(since)))
        .bind(moved.motion.reported_at.map(to_micros))
        .bind(moved.no_motion_due().map(to_micros))
        .bind(session.id.get())
        .execute(&mut *self.tx)
        .await?;
        Ok(true)
    }
}
