//! Monitoring sessions on the wire (`/V2/{t}/devices/{deviceId}/monitoring`, issue 45
//! §1; docs/monitoring.md): the settings a client sends to start or change a session,
//! what a check-in carries, and the session as read (its state computed at read time).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ids::{DeviceId, MoMessageId, MonitoringSessionId, TenantCode, UserId};
use crate::domain::monitoring::settings::NOTE_MAX_CHARS;
use crate::domain::monitoring::{
    Confirmation, DefaultSources, DueAct, EndKind, MonitoringSession, MonitoringState,
    RequestedSettings, SessionEventKind, SessionEventLine, SessionSettings,
};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::opt_int64;
use crate::domain::validation::{ValidationErrors, Validator};

/// A session's settings as a client sends them (`POST`, and what a `PATCH` applies to).
/// A value not sent comes from the device's `Properties`, then the tenant's, under the
/// same name, then the built-in default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "MonitoringSettings", rename_all = "PascalCase")]
#[schema(as = MonitoringSettings)]
pub struct MonitoringSettingsRecord {
    /// From the start to the planned end, 1 to 10080 (a week); default 480. Counted from
    /// the start: extending a session is a larger duration.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 10080, example = 480)]
    pub duration_minutes: Option<i64>,
    /// 1 to 1440, at most the duration; default 60 (the duration when shorter).
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1440, example = 60)]
    pub check_in_interval_minutes: Option<i64>,
    /// 0 to 120; default 5.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 120, example = 5)]
    pub grace_minutes: Option<i64>,
    /// 0 (no reminder) to the interval − 1; default 5.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1439, example = 5)]
    pub reminder_minutes: Option<i64>,
    /// 0 (off), or 5 to 1440; default 0.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1440, example = 0)]
    pub no_motion_minutes: Option<i64>,
    /// Where and what, at most 500 characters.
    #[schema(max_length = 500, example = "Pump station 4, valve maintenance")]
    pub note: Option<String>,
}

impl ServerFields for MonitoringSettingsRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[];

    fn without_read_only(self) -> Self {
        self
    }
}

impl MonitoringSettingsRecord {
    /// The settings settled against the limits and the defaults (every bad value named).
    pub fn validated(
        self,
        sources: DefaultSources<'_>,
    ) -> Result<SessionSettings, ValidationErrors> {
        let requested = RequestedSettings {
            duration_minutes: self.duration_minutes,
            check_in_interval_minutes: self.check_in_interval_minutes,
            grace_minutes: self.grace_minutes,
            reminder_minutes: self.reminder_minutes,
            no_motion_minutes: self.no_motion_minutes,
            note: self.note,
        };
        Ok(requested.settle(sources)?.settings)
    }
}

impl From<&SessionSettings> for MonitoringSettingsRecord {
    fn from(s: &SessionSettings) -> Self {
        MonitoringSettingsRecord {
            duration_minutes: Some(i64::from(s.duration_minutes)),
            check_in_interval_minutes: Some(i64::from(s.check_in_interval_minutes)),
            grace_minutes: Some(i64::from(s.grace_minutes)),
            reminder_minutes: Some(i64::from(s.reminder_minutes)),
            no_motion_minutes: Some(i64::from(s.no_motion_minutes)),
            note: s.note.clone(),
        }
    }
}

/// A check-in through the API (`POST …/monitoring/checkins`): an operator or an
/// integration records that the person called in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "MonitoringCheckIn", rename_all = "PascalCase")]
#[schema(as = MonitoringCheckIn)]
pub struct CheckInRecord {
    /// At most 500 characters (kept on the session's history).
    #[schema(max_length = 500, example = "Called the duty phone")]
    pub note: Option<String>,
}

impl CheckInRecord {
    pub fn validated(self) -> Result<Option<String>, ValidationErrors> {
        let mut v = Validator::new();
        v.length("Note", self.note.as_deref(), 0, NOTE_MAX_CHARS);
        v.finish()?;
        Ok(self.note.filter(|n| !n.trim().is_empty()))
    }
}

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
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename = "MonitoringSessionEvent", rename_all = "PascalCase")]
#[schema(as = MonitoringSessionEvent)]
pub struct MonitoringSessionEventView {
    #[schema(example = "41")]
    pub event_id: String,
    #[schema(value_type = String, example = "12")]
    pub monitoring_session_id: MonitoringSessionId,
    #[schema(value_type = String, format = DateTime)]
    pub at: Timestamp,
    /// `Started`, `CheckIn`, `Changed`, `Ended`, `Reminder`, `MissedCheckIn`, `Overdue`,
    /// `NoMotion`.
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
            event_id: line.id.to_string(),
            monitoring_session_id: line.session_id,
            at: line.at,
            kind: line.kind,
            actor: line.actor,
            mo_message_id: line.mo_message_id,
            detail: line.detail,
        }
    }
}
