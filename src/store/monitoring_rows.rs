//! How a monitoring session and a line of its history read from a row: the columns
//! every session query selects (`COLUMNS`, table alias `m`; a line's `LINE_COLUMNS`,
//! alias `e`) and their readers, shared by the session writes, the timers, the history
//! and the events (a leaf: it imports none of them).

use std::sync::LazyLock;

use jiff::SignedDuration;
use sqlx::{FromRow, Row};

use super::{StoreError, StoreResult, stored_time};
use crate::domain::ids::{
    DeviceId, MoMessageId, MonitoringSessionId, SessionEventId, TenantCode, UserId,
};
use crate::domain::monitoring::record::minutes_between;
use crate::domain::monitoring::{
    Confirmation, EndKind, FiredTimers, MonitoringSession, Motion, SessionEnd, SessionEventKind,
    SessionEventLine, SessionSettings,
};

pub(super) const COLUMNS: &str = "m.id, m.tenant_code, m.device_id, m.user_id, m.started_at, m.started_by, \
    m.planned_end_at, m.check_in_interval_minutes, m.grace_minutes, m.reminder_minutes, \
    m.no_motion_minutes, m.note, m.last_check_in_at, m.last_check_in_kind, m.check_in_count, \
    m.missed_check_in_count, m.ended_at, m.ended_by, m.end_kind, m.end_reason, m.etag, \
    m.updated_at, m.reminder_fired_for, m.missed_check_in_fired_for, m.overdue_fired_for, \
    m.no_motion_fired_for, m.motion_anchor_latitude, m.motion_anchor_longitude, \
    m.motion_anchor_at, m.motion_reported_at";

#[derive(sqlx::FromRow)]
struct SessionRow {
    id: i64,
    tenant_code: String,
    device_id: String,
    user_id: Option<i64>,
    started_at: i64,
    started_by: String,
    planned_end_at: i64,
    check_in_interval_minutes: i64,
    grace_minutes: i64,
    reminder_minutes: i64,
    no_motion_minutes: i64,
    note: Option<String>,
    last_check_in_at: Option<i64>,
    last_check_in_kind: Option<String>,
    check_in_count: i64,
    missed_check_in_count: i64,
    ended_at: Option<i64>,
    ended_by: Option<String>,
    end_kind: Option<String>,
    end_reason: Option<String>,
    etag: String,
    updated_at: i64,
    reminder_fired_for: Option<i64>,
    missed_check_in_fired_for: Option<i64>,
    overdue_fired_for: Option<i64>,
    no_motion_fired_for: Option<i64>,
    motion_anchor_latitude: Option<f64>,
    motion_anchor_longitude: Option<f64>,
    motion_anchor_at: Option<i64>,
    motion_reported_at: Option<i64>,
}

fn stored_minutes(n: i64) -> StoreResult<u32> {
    u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("session minutes {n}")))
}

impl SessionRow {
    fn into_session(self, minute: SignedDuration) -> StoreResult<MonitoringSession> {
        let started_at = stored_time(self.started_at)?;
        let planned_end_at = stored_time(self.planned_end_at)?;
        let ended = match (self.ended_at, self.end_kind) {
            (Some(at), Some(kind)) => Some(SessionEnd {
                at: stored_time(at)?,
                by: self.ended_by.unwrap_or_default(),
                kind: kind
                    .parse::<EndKind>()
                    .map_err(|_| StoreError::Corrupt(format!("session end kind {kind}")))?,
                reason: self.end_reason,
            }),
            _ => None,
        };
        Ok(MonitoringSession {
            id: MonitoringSessionId::new(self.id),
            tenant_code: TenantCode::from_store(self.tenant_code),
            device_id: DeviceId::from_store(self.device_id),
            user_id: self.user_id.map(UserId::new),
            started_at,
            started_by: self.started_by,
            planned_end_at,
            settings: SessionSettings {
                duration_minutes: minutes_between(started_at, planned_end_at, minute),
                check_in_interval_minutes: stored_minutes(self.check_in_interval_minutes)?,
                grace_minutes: stored_minutes(self.grace_minutes)?,
                reminder_minutes: stored_minutes(self.reminder_minutes)?,
                no_motion_minutes: stored_minutes(self.no_motion_minutes)?,
                note: self.note,
            },
            last_check_in_at: self.last_check_in_at.map(stored_time).transpose()?,
            last_check_in_kind: self
                .last_check_in_kind
                .and_then(|k| k.parse::<Confirmation>().ok()),
            check_in_count: self.check_in_count,
            missed_check_in_count: self.missed_check_in_count,
            ended,
            updated_at: stored_time(self.updated_at)?,
            etag: self.etag,
            fired: FiredTimers {
                reminder: self.reminder_fired_for.map(stored_time).transpose()?,
                missed_check_in: self
                    .missed_check_in_fired_for
                    .map(stored_time)
                    .transpose()?,
                overdue: self.overdue_fired_for.map(stored_time).transpose()?,
                no_motion: self.no_motion_fired_for.map(stored_time).transpose()?,
            },
            motion: Motion {
                anchor: match (
                    self.motion_anchor_latitude,
                    self.motion_anchor_longitude,
                    self.motion_anchor_at,
                ) {
                    (Some(lat), Some(lon), Some(at)) => Some(((lat, lon), stored_time(at)?)),
                    _ => None,
                },
                reported_at: self.motion_reported_at.map(stored_time).transpose()?,
            },
            minute,
        })
    }
}

pub(super) fn session_from_row(
    row: &sqlx::any::AnyRow,
    minute: SignedDuration,
) -> StoreResult<MonitoringSession> {
    SessionRow::from_row(row)?.into_session(minute)
}

/// `COLUMNS` without the table alias: a write's `RETURNING` list, so the write hands back
/// the session as it leaves it (no read after it).
pub(super) static RETURNED_COLUMNS: LazyLock<String> = LazyLock::new(|| COLUMNS.replace("m.", ""));

/// `LINE_COLUMNS` as the line's `INSERT … RETURNING` names them.
pub(super) const RETURNED_LINE_COLUMNS: &str = "id AS line_id, at AS line_at, kind AS line_kind, actor AS line_actor, \
     mo_message_id AS line_mo_message_id, detail AS line_detail";

/// A history line's columns, read by `line_from_row` (`e.` is `monitoring_session_events`).
pub(super) const LINE_COLUMNS: &str = "e.id AS line_id, e.at AS line_at, e.kind AS line_kind, e.actor AS line_actor, \
     e.mo_message_id AS line_mo_message_id, e.detail AS line_detail";

/// A line of session `session_id`'s history from a row holding `LINE_COLUMNS`.
pub(super) fn line_from_row(
    row: &sqlx::any::AnyRow,
    session_id: MonitoringSessionId,
) -> StoreResult<SessionEventLine> {
    let kind: String = row.try_get("line_kind")?;
    let detail: Option<String> = row.try_get("line_detail")?;
    Ok(SessionEventLine {
        id: SessionEventId::new(row.try_get("line_id")?),
        session_id,
        at: stored_time(row.try_get("line_at")?)?,
        kind: kind
            .parse::<SessionEventKind>()
            .map_err(|_| StoreError::Corrupt(format!("session event kind {kind}")))?,
        actor: row.try_get("line_actor")?,
        mo_message_id: row
            .try_get::<Option<i64>, _>("line_mo_message_id")?
            .map(MoMessageId::new),
        detail: detail
            .map(|d| serde_json::from_str(&d))
            .transpose()
            .map_err(|e| StoreError::Corrupt(format!("session event detail: {e}")))?,
    })
}
