//! A monitoring session as stored (`monitoring_sessions`, migration 0061): who is
//! watched at which device, its settled settings, its check-ins and how it ended. Its
//! clock (`clock()`) is what the timers and the state are computed from.

use jiff::{SignedDuration, Timestamp};

use super::super::closed_set::closed_set;
use super::super::ids::{DeviceId, MonitoringSessionId, TenantCode, UserId};
use super::check_in::Confirmation;
use super::session::{SessionClock, SessionTimer};
use super::settings::SessionSettings;

closed_set! {
    /// A line of a session's history (`monitoring_session_events.kind`).
    pub enum SessionEventKind {
        Started = "Started",
        CheckIn = "CheckIn",
        Changed = "Changed",
        Ended = "Ended",
        /// The timer worker reminded the person (an MT check-in request).
        Reminder = "Reminder",
        /// A check-in's grace passed unconfirmed (`MissedCheckIn` raised).
        MissedCheckIn = "MissedCheckIn",
        /// The planned end plus the grace passed (`MonitoringOverdue` raised).
        Overdue = "Overdue",
        /// The device kept reporting without moving 25 m (`NoMotion` raised).
        NoMotion = "NoMotion",
        /// A step of the escalation policy of an alert of the session's device fired.
        EscalationStep = "EscalationStep",
    }
}

impl From<SessionTimer> for SessionEventKind {
    /// The history line a timer's firing writes.
    fn from(timer: SessionTimer) -> Self {
        match timer {
            SessionTimer::Reminder => SessionEventKind::Reminder,
            SessionTimer::MissedCheckIn => SessionEventKind::MissedCheckIn,
            SessionTimer::Overdue => SessionEventKind::Overdue,
            SessionTimer::NoMotion => SessionEventKind::NoMotion,
        }
    }
}

closed_set! {
    /// How a session ended.
    pub enum EndKind {
        /// By the worker (the API's DELETE, or MO `EndMonitoring`).
        Normal = "Normal",
        /// By an operator, with a reason (`ForceStopMonitoring`).
        ForceStop = "ForceStop",
    }
}

/// A line of a session's history as stored (`monitoring_session_events`): what
/// happened when, who did it (a user, a token, `device`, or `monitoring` for a timer),
/// the device message that made it, and what the kind needs besides (`Detail`: the
/// settings changed, the reason, the MT reminder's id, …).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEventLine {
    pub id: super::super::ids::SessionEventId,
    pub session_id: MonitoringSessionId,
    pub at: Timestamp,
    pub kind: SessionEventKind,
    pub actor: Option<String>,
    pub mo_message_id: Option<super::super::ids::MoMessageId>,
    pub detail: Option<serde_json::Value>,
}

/// An operator's force stop (`ForceStopMonitoring` through the API): why, checked
/// (not blank, at most 500 characters), kept as the session's `EndReason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForceStop {
    pub reason: String,
}

/// How a session ended, by whom and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEnd {
    pub at: Timestamp,
    pub by: String,
    pub kind: EndKind,
    pub reason: Option<String>,
}

/// One session, current (`ended` is `None`) or ended.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitoringSession {
    pub id: MonitoringSessionId,
    pub tenant_code: TenantCode,
    pub device_id: DeviceId,
    /// The device's user when the session started.
    pub user_id: Option<UserId>,
    pub started_at: Timestamp,
    pub started_by: String,
    /// The start plus `DurationMinutes`, moved by each extension.
    pub planned_end_at: Timestamp,
    /// `duration_minutes` is what the planned end says (from the start).
    pub settings: SessionSettings,
    pub last_check_in_at: Option<Timestamp>,
    pub last_check_in_kind: Option<Confirmation>,
    pub check_in_count: i64,
    pub missed_check_in_count: i64,
    pub ended: Option<SessionEnd>,
    pub updated_at: Timestamp,
    pub etag: String,
    /// The due time each timer last fired for.
    pub fired: super::session::FiredTimers,
    /// Where the device has been still since, and its last report (no motion).
    pub motion: super::motion::Motion,
    /// How long one of its minutes lasts: a minute, except in tests (which shorten it so
    /// timers fire within seconds; `PipelineConfig::monitoring_minute`).
    pub minute: SignedDuration,
}

impl MonitoringSession {
    /// The session's clock: its start, last confirmation, settings and planned end.
    pub fn clock(&self) -> SessionClock {
        let minutes = |n: u32| super::session::minutes(n, self.minute);
        SessionClock {
            started_at: self.started_at,
            last_confirmation: self.last_check_in_at,
            interval: minutes(self.settings.check_in_interval_minutes),
            reminder: minutes(self.settings.reminder_minutes),
            grace: minutes(self.settings.grace_minutes),
            planned_end: self.planned_end_at,
        }
    }

    /// The no-motion window (`NoMotionMinutes`; zero: off).
    pub fn no_motion_window(&self) -> SignedDuration {
        super::session::minutes(self.settings.no_motion_minutes, self.minute)
    }

    /// When the no-motion timer is next due: `NoMotionMinutes` after the anchor, unless
    /// it fired for that time already.
    pub fn no_motion_due(&self) -> Option<Timestamp> {
        let due = self.motion.due(self.no_motion_window())?;
        (Some(due) != self.fired.no_motion).then_some(due)
    }
}

/// Whole `minute`s from `from` to `to` (a planned end is always whole minutes after its
/// start; anything else rounds down, at least 0).
pub fn minutes_between(from: Timestamp, to: Timestamp, minute: SignedDuration) -> u32 {
    let span = to.duration_since(from).as_nanos();
    let minutes = span.checked_div(minute.as_nanos()).unwrap_or(0);
    u32::try_from(minutes.max(0)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    #[test]
    fn the_clock_is_the_stored_session() {
        let session = MonitoringSession {
            id: MonitoringSessionId::new(1),
            tenant_code: TenantCode::from_store("1000".into()),
            device_id: DeviceId::from_store("d1".into()),
            user_id: None,
            started_at: at("2026-03-01T08:00:00Z"),
            started_by: "a@example.com".into(),
            planned_end_at: at("2026-03-01T10:00:00Z"),
            settings: SessionSettings {
                duration_minutes: 120,
                check_in_interval_minutes: 30,
                grace_minutes: 5,
                reminder_minutes: 5,
                no_motion_minutes: 0,
                note: None,
            },
            last_check_in_at: Some(at("2026-03-01T08:10:00Z")),
            last_check_in_kind: Some(Confirmation::ApiCheckIn),
            check_in_count: 1,
            missed_check_in_count: 0,
            ended: None,
            updated_at: at("2026-03-01T08:10:00Z"),
            etag: "e".into(),
            fired: Default::default(),
            motion: Default::default(),
            minute: SignedDuration::from_mins(1),
        };
        let schedule = session.clock().schedule();
        assert_eq!(schedule.next_due_at, at("2026-03-01T08:40:00Z"));
        assert_eq!(
            minutes_between(session.started_at, session.planned_end_at, session.minute),
            120
        );
    }
}
