//! A monitoring session as the API and the live stream show it: the stored session with
//! what its clock says at the time it is read (`State`, `NextDueAt`, `NextDueAct`,
//! `ReminderAt`), a line of its history, and the `monitoring` event the live stream and
//! `Device` webhooks carry (a line with its session). Here, not in `http`, because the
//! stream (a service) and the store's webhook events show them too.

use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

use super::{
    Confirmation, DueAct, EndKind, MonitoringSession, MonitoringState, SessionEventKind,
    SessionEventLine,
};
use crate::domain::ids::{
    DeviceId, MoMessageId, MonitoringSessionId, SessionEventId, TenantCode, UserId,
};

/// A monitoring session as read: current (`GET …/monitoring`, `GET /V2/{t}/monitoring`)
/// or ended (`GET …/monitoring/history`). `State`, `NextDueAt`, `NextDueAct` and
/// `ReminderAt` are computed from its clock when read.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename = "MonitoringSession", rename_all = "PascalCase")]
#[schema(as = MonitoringSession)]
pub struct MonitoringSessionView {
    #[schema(value_type = String, min_length = 1, example = "12")]
    pub monitoring_session_id: MonitoringSessionId,
    #[schema(value_type = String, min_length = 1, example = "1000")]
    pub tenant_code: TenantCode,
    #[schema(value_type = String, min_length = 1, example = "300434063000000")]
    pub device_id: DeviceId,
    /// The person watched: the device's user when the session started.
    #[schema(value_type = Option<String>, example = "7")]
    pub user_id: Option<UserId>,
    #[schema(value_type = String, format = DateTime)]
    pub started_at: Timestamp,
    /// A user, a token (`token:<Name>`), or `device`.
    #[schema(min_length = 1, example = "worker@example.com")]
    pub started_by: String,
    /// The start plus `DurationMinutes`.
    #[schema(value_type = String, format = DateTime)]
    pub planned_end_at: Timestamp,
    pub duration_minutes: u32,
    pub check_in_interval_minutes: u32,
    pub grace_minutes: u32,
    pub reminder_minutes: u32,
    pub no_motion_minutes: u32,
    pub note: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_check_in_at: Option<Timestamp>,
    /// What confirmed the last check-in.
    #[schema(value_type = Option<String>, example = "ApiCheckIn")]
    pub last_check_in_kind: Option<Confirmation>,
    pub check_in_count: i64,
    pub missed_check_in_count: i64,
    /// When the person must next act (null once ended).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_due_at: Option<Timestamp>,
    /// `CheckIn`, or `End` (end or extend by the planned end).
    #[schema(value_type = Option<String>, example = "CheckIn")]
    pub next_due_act: Option<DueAct>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub reminder_at: Option<Timestamp>,
    /// `Ok`, `DueSoon`, `Overdue`, `Alerting` (null once ended).
    #[schema(value_type = Option<String>, example = "Ok")]
    pub state: Option<MonitoringState>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub ended_at: Option<Timestamp>,
    pub ended_by: Option<String>,
    /// `Normal` (by the worker) or `ForceStop` (by an operator, with a reason).
    #[schema(value_type = Option<String>, example = "Normal")]
    pub end_kind: Option<EndKind>,
    pub end_reason: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    pub timestamp: Timestamp,
    /// The session's version (also the `ETag` header; `If-Match` on PATCH and DELETE).
    #[serde(rename = "ETag")]
    #[schema(min_length = 1)]
    pub etag: String,
}

impl MonitoringSessionView {
    /// The session as read at `now`.
    pub fn at(session: MonitoringSession, now: Timestamp) -> Self {
        let clock = session.clock();
        let current = session.ended.is_none();
        let schedule = current.then(|| clock.schedule());
        let s = session.settings;
        let end = session.ended;
        MonitoringSessionView {
            monitoring_session_id: session.id,
            tenant_code: session.tenant_code,
            device_id: session.device_id,
            user_id: session.user_id,
            started_at: session.started_at,
            started_by: session.started_by,
            planned_end_at: session.planned_end_at,
            duration_minutes: s.duration_minutes,
            check_in_interval_minutes: s.check_in_interval_minutes,
            grace_minutes: s.grace_minutes,
            reminder_minutes: s.reminder_minutes,
            no_motion_minutes: s.no_motion_minutes,
            note: s.note,
            last_check_in_at: session.last_check_in_at,
            last_check_in_kind: session.last_check_in_kind,
            check_in_count: session.check_in_count,
            missed_check_in_count: session.missed_check_in_count,
            next_due_at: schedule.map(|s| s.next_due_at),
            next_due_act: schedule.map(|s| s.due),
            reminder_at: schedule.and_then(|s| s.reminder_at),
            state: current.then(|| clock.state(now)),
            ended_at: end.as_ref().map(|e| e.at),
            ended_by: end.as_ref().map(|e| e.by.clone()),
            end_kind: end.as_ref().map(|e| e.kind),
            end_reason: end.and_then(|e| e.reason),
            timestamp: session.updated_at,
            etag: session.etag,
        }
    }
}

/// A line of a session's history (`GET /V2/{t}/monitoring/{monitoringSessionId}/events`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename = "MonitoringSessionEvent", rename_all = "PascalCase")]
#[schema(as = MonitoringSessionEvent)]
pub struct MonitoringSessionEventView {
    #[schema(value_type = String, example = "41")]
    pub event_id: SessionEventId,
    #[schema(value_type = String, example = "12")]
    pub monitoring_session_id: MonitoringSessionId,
    #[schema(value_type = String, format = DateTime)]
    pub at: Timestamp,
    /// `Started`, `CheckIn`, `Changed`, `Ended`, `Reminder`, `MissedCheckIn`, `Overdue`,
    /// `NoMotion`, `EscalationStep` (a step of the policy of an alert of its device).
    #[schema(value_type = String, example = "CheckIn")]
    pub kind: SessionEventKind,
    /// A user, a token (`token:<Name>`), `device`, or `monitoring` (a timer).
    pub actor: Option<String>,
    /// The device message that made it (a device's check-in).
    #[schema(value_type = Option<String>, example = "9001")]
    pub mo_message_id: Option<MoMessageId>,
    /// What the kind needs besides: the settings, a note, `EndKind` and `Reason`, the
    /// reminder's `MtMessageId`, `FiredAt`.
    #[schema(value_type = Option<Object>)]
    pub detail: Option<serde_json::Value>,
}

impl From<SessionEventLine> for MonitoringSessionEventView {
    fn from(line: SessionEventLine) -> Self {
        MonitoringSessionEventView {
            event_id: line.id,
            monitoring_session_id: line.session_id,
            at: line.at,
            kind: line.kind,
            actor: line.actor,
            mo_message_id: line.mo_message_id,
            detail: line.detail,
        }
    }
}

/// A `monitoring` event (the live stream's, and a `Device` webhook event's `Data`): a
/// line of a session's history — started, a check-in, changed, ended, a reminder, a
/// missed check-in, overdue, no motion — with the session as it is when the event is
/// read (its `State` at that time), so a console shows the board's row from it alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MonitoringEvent {
    /// The session's device (the session's `DeviceId`, at the top for filtering).
    pub device_id: DeviceId,
    #[serde(flatten)]
    pub line: MonitoringSessionEventView,
    pub session: MonitoringSessionView,
}

impl MonitoringEvent {
    /// The event of `line` of `session`, as read at `now`.
    pub fn at(line: SessionEventLine, session: MonitoringSession, now: Timestamp) -> Self {
        MonitoringEvent {
            device_id: session.device_id.clone(),
            line: line.into(),
            session: MonitoringSessionView::at(session, now),
        }
    }
}
