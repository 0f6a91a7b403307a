//! A session's clock (DESIGN §11): when the person must next act, when they are
//! reminded, when a missed check-in or an overdue session is raised, and the state an
//! operator sees. Pure: the clock is an input.
//!
//! - The next check-in is due `CheckInIntervalMinutes` after the last confirmation (or
//!   the start, before the first): always from the confirmation, never from the
//!   reminder, so a reminder that came and went moves nothing.
//! - A check-in that would fall due at or after the planned end is not asked for: the
//!   person's next act is then to end (or extend) the session by its planned end.
//! - The reminder is `ReminderMinutes` before that due time (0: none); never at or
//!   before the confirmation it follows.
//! - `MissedCheckIn` is raised `GraceMinutes` after a check-in due time passes
//!   unconfirmed; `MonitoringOverdue` `GraceMinutes` after the planned end passes
//!   without an end or an extension. After a `MissedCheckIn` nothing more is asked of
//!   the check-in clock until a confirmation: the alert's escalation takes over.
//!
//! States: `Ok`; `DueSoon` inside the reminder window; `Overdue` past the due time (or
//! the planned end) but inside the grace; `Alerting` once the grace has passed.

use jiff::{SignedDuration, Timestamp};

use super::super::closed_set::closed_set;
use super::settings::SessionSettings;

closed_set! {
    /// How a session stands (`GET /V2/{t}/monitoring`).
    pub enum MonitoringState {
        Ok = "Ok",
        DueSoon = "DueSoon",
        Overdue = "Overdue",
        Alerting = "Alerting",
    }
}

closed_set! {
    /// What the person must do by the due time.
    pub enum DueAct {
        /// Check in (else `MissedCheckIn`).
        CheckIn = "CheckIn",
        /// End or extend the session (else `MonitoringOverdue`).
        End = "End",
    }
}

closed_set! {
    /// A timer of a session the timer worker fires once when due (a due column of
    /// `monitoring_sessions`); each firing is a line of the session's history.
    pub enum SessionTimer {
        /// Remind the person `ReminderMinutes` before a check-in is due.
        Reminder = "Reminder",
        /// A check-in's grace passed unconfirmed.
        MissedCheckIn = "MissedCheckIn",
        /// The planned end plus the grace passed without an end or extension.
        Overdue = "Overdue",
        /// The device kept reporting without moving more than 25 m.
        NoMotion = "NoMotion",
    }
}

/// The due time each timer last fired for: a timer fires once per due time, so a write
/// that recomputes the schedule to the same time does not arm it again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FiredTimers {
    pub reminder: Option<Timestamp>,
    pub missed_check_in: Option<Timestamp>,
    pub overdue: Option<Timestamp>,
    pub no_motion: Option<Timestamp>,
}

/// The timers a session owes: the schedule's, less those already fired for their time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArmedTimers {
    pub reminder: Option<Timestamp>,
    pub missed_check_in: Option<Timestamp>,
    pub overdue: Option<Timestamp>,
}

impl Schedule {
    /// What is still owed after `fired`.
    pub fn armed(&self, fired: &FiredTimers) -> ArmedTimers {
        let unless =
            |at: Option<Timestamp>, fired: Option<Timestamp>| at.filter(|a| Some(*a) != fired);
        ArmedTimers {
            reminder: unless(self.reminder_at, fired.reminder),
            missed_check_in: unless(self.missed_check_in_at, fired.missed_check_in),
            overdue: unless(Some(self.overdue_at), fired.overdue),
        }
    }
}

/// Of the timers due now (`due`, any order), those to fire, in time order: a reminder
/// due together with its missed check-in (after downtime) is dropped — it would only
/// arrive with the alarm.
pub fn timers_to_fire(mut due: Vec<(SessionTimer, Timestamp)>) -> Vec<(SessionTimer, Timestamp)> {
    if due.iter().any(|(t, _)| *t == SessionTimer::MissedCheckIn) {
        due.retain(|(t, _)| *t != SessionTimer::Reminder);
    }
    due.sort_by_key(|(timer, at)| (*at, *timer as u8));
    due
}

/// The facts a session's clock runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionClock {
    pub started_at: Timestamp,
    /// The last check-in confirmed in this session (`None`: none yet).
    pub last_confirmation: Option<Timestamp>,
    pub interval: SignedDuration,
    pub reminder: SignedDuration,
    pub grace: SignedDuration,
    /// The start plus the duration, moved by each extension.
    pub planned_end: Timestamp,
}

/// The timers of a session, from its clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// When the person must next act, and what they must do.
    pub next_due_at: Timestamp,
    pub due: DueAct,
    /// The reminder to the person (an MT check-in request, a push), if any.
    pub reminder_at: Option<Timestamp>,
    /// When `MissedCheckIn` is raised (`None` when the next act is the end).
    pub missed_check_in_at: Option<Timestamp>,
    /// When `MonitoringOverdue` is raised: the planned end plus the grace.
    pub overdue_at: Timestamp,
}

/// `n` of a session's minutes (`minute`: a minute, except in tests).
pub fn minutes(n: u32, minute: SignedDuration) -> SignedDuration {
    minute
        .checked_mul(i32::try_from(n).unwrap_or(i32::MAX))
        .unwrap_or(SignedDuration::MAX)
}

/// `at + d`, at the end of time when beyond it (times here are a week from a stored one).
fn plus(at: Timestamp, d: SignedDuration) -> Timestamp {
    at.checked_add(d).unwrap_or(Timestamp::MAX)
}

fn minus(at: Timestamp, d: SignedDuration) -> Timestamp {
    at.checked_sub(d).unwrap_or(Timestamp::MIN)
}

impl SessionClock {
    /// A session started at `started_at` with `settings`, before any check-in; its
    /// settings count in `minute`s (a minute, except in tests).
    pub fn start(
        started_at: Timestamp,
        settings: &SessionSettings,
        minute: SignedDuration,
    ) -> Self {
        let minutes = |n| minutes(n, minute);
        SessionClock {
            started_at,
            last_confirmation: None,
            interval: minutes(settings.check_in_interval_minutes),
            reminder: minutes(settings.reminder_minutes),
            grace: minutes(settings.grace_minutes),
            planned_end: plus(started_at, minutes(settings.duration_minutes)),
        }
    }

    /// What the check-in clock counts from: the last confirmation, else the start (a
    /// confirmation from before the start is not this session's).
    pub fn counted_from(&self) -> Timestamp {
        self.last_confirmation
            .map_or(self.started_at, |c| c.max(self.started_at))
    }

    /// The session's timers (the module's rules).
    pub fn schedule(&self) -> Schedule {
        let from = self.counted_from();
        let check_in_due = plus(from, self.interval);
        let (next_due_at, due) = if check_in_due < self.planned_end {
            (check_in_due, DueAct::CheckIn)
        } else {
            (self.planned_end, DueAct::End)
        };
        let reminder_at = Some(minus(next_due_at, self.reminder))
            .filter(|at| !self.reminder.is_zero() && *at > from);
        Schedule {
            next_due_at,
            due,
            reminder_at,
            missed_check_in_at: (due == DueAct::CheckIn).then(|| plus(next_due_at, self.grace)),
            overdue_at: plus(self.planned_end, self.grace),
        }
    }

    /// The state at `now`.
    pub fn state(&self, now: Timestamp) -> MonitoringState {
        let schedule = self.schedule();
        let missed = schedule.missed_check_in_at.is_some_and(|at| now >= at);
        if missed || now >= schedule.overdue_at {
            MonitoringState::Alerting
        } else if now >= schedule.next_due_at {
            MonitoringState::Overdue
        } else if schedule.reminder_at.is_some_and(|at| now >= at) {
            MonitoringState::DueSoon
        } else {
            MonitoringState::Ok
        }
    }

    /// The clock after a check-in confirmed at `at` (a confirmation older than the last
    /// one changes nothing: messages may arrive out of order).
    pub fn confirmed(self, at: Timestamp) -> Self {
        let last = self.last_confirmation.map_or(at, |c| c.max(at));
        SessionClock {
            last_confirmation: Some(last),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    fn t(hh_mm: &str) -> Timestamp {
        at(&format!("2026-03-01T{hh_mm}:00Z"))
    }

    /// 08:00 start, 8 h, check in every 60 min, reminder 10, grace 5.
    fn clock() -> SessionClock {
        SessionClock::start(
            t("08:00"),
            &SessionSettings {
                duration_minutes: 480,
                check_in_interval_minutes: 60,
                grace_minutes: 5,
                reminder_minutes: 10,
                no_motion_minutes: 0,
                note: None,
            },
            SignedDuration::from_mins(1),
        )
    }

    #[test]
    fn a_timer_fired_for_its_time_is_not_armed_again() {
        let s = clock().schedule();
        let all = s.armed(&FiredTimers::default());
        assert_eq!(all.missed_check_in, Some(t("09:05")));
        let fired = FiredTimers {
            reminder: Some(t("08:50")),
            missed_check_in: Some(t("09:05")),
            overdue: Some(t("10:00")),
            no_motion: None,
        };
        let armed = s.armed(&fired);
        assert_eq!(armed.reminder, None);
        assert_eq!(armed.missed_check_in, None);
        // Fired for another time (before an extension): owed again.
        assert_eq!(armed.overdue, Some(t("16:05")));
    }

    #[test]
    fn a_reminder_due_with_its_missed_check_in_is_dropped() {
        let due = vec![
            (SessionTimer::Overdue, t("16:05")),
            (SessionTimer::MissedCheckIn, t("09:05")),
            (SessionTimer::Reminder, t("08:50")),
        ];
        assert_eq!(
            timers_to_fire(due),
            vec![
                (SessionTimer::MissedCheckIn, t("09:05")),
                (SessionTimer::Overdue, t("16:05")),
            ]
        );
        let reminder = vec![(SessionTimer::Reminder, t("08:50"))];
        assert_eq!(timers_to_fire(reminder.clone()), reminder);
    }

    #[test]
    fn the_first_check_in_counts_from_the_start() {
        let s = clock().schedule();
        assert_eq!(s.next_due_at, t("09:00"));
        assert_eq!(s.due, DueAct::CheckIn);
        assert_eq!(s.reminder_at, Some(t("08:50")));
        assert_eq!(s.missed_check_in_at, Some(t("09:05")));
        assert_eq!(s.overdue_at, t("16:05"));
    }

    #[test]
    fn the_states_through_one_interval() {
        let c = clock();
        assert_eq!(c.state(t("08:00")), MonitoringState::Ok);
        assert_eq!(c.state(t("08:49")), MonitoringState::Ok);
        assert_eq!(c.state(t("08:50")), MonitoringState::DueSoon);
        assert_eq!(c.state(t("08:59")), MonitoringState::DueSoon);
        assert_eq!(c.state(t("09:00")), MonitoringState::Overdue);
        assert_eq!(c.state(t("09:04")), MonitoringState::Overdue);
        assert_eq!(c.state(t("09:05")), MonitoringState::Alerting);
        assert_eq!(c.state(t("12:00")), MonitoringState::Alerting);
    }

    #[test]
    fn the_next_due_time_counts_from_the_confirmation_never_the_reminder() {
        // Checked in at 08:55, after the 08:50 reminder: next due 09:55, not 09:50.
        let c = clock().confirmed(t("08:55"));
        let s = c.schedule();
        assert_eq!(s.next_due_at, t("09:55"));
        assert_eq!(s.reminder_at, Some(t("09:45")));
        assert_eq!(c.state(t("09:00")), MonitoringState::Ok);
        // Checked in early (08:20): next due 09:20.
        assert_eq!(
            clock().confirmed(t("08:20")).schedule().next_due_at,
            t("09:20")
        );
    }

    #[test]
    fn a_late_check_in_inside_the_grace_or_after_the_alarm_restarts_the_clock() {
        let c = clock().confirmed(t("09:03"));
        assert_eq!(c.state(t("09:03")), MonitoringState::Ok);
        assert_eq!(c.schedule().next_due_at, t("10:03"));
        let c = clock().confirmed(t("09:30"));
        assert_eq!(c.state(t("09:30")), MonitoringState::Ok);
    }

    #[test]
    fn out_of_order_and_pre_start_confirmations_change_nothing() {
        let c = clock().confirmed(t("10:00")).confirmed(t("09:00"));
        assert_eq!(c.last_confirmation, Some(t("10:00")));
        let before = clock().confirmed(t("07:00"));
        assert_eq!(before.counted_from(), t("08:00"));
        assert_eq!(before.schedule(), clock().schedule());
    }

    #[test]
    fn near_the_planned_end_the_act_is_to_end() {
        // Confirmed 15:10: a check-in at 16:10 would be after the 16:00 end.
        let c = clock().confirmed(t("15:10"));
        let s = c.schedule();
        assert_eq!(s.next_due_at, t("16:00"));
        assert_eq!(s.due, DueAct::End);
        assert_eq!(s.missed_check_in_at, None);
        assert_eq!(s.reminder_at, Some(t("15:50")));
        assert_eq!(c.state(t("15:55")), MonitoringState::DueSoon);
        assert_eq!(c.state(t("16:00")), MonitoringState::Overdue);
        assert_eq!(c.state(t("16:05")), MonitoringState::Alerting);
        // A check-in due exactly at the end is the end.
        assert_eq!(clock().confirmed(t("15:00")).schedule().due, DueAct::End);
    }

    #[test]
    fn a_reminder_is_never_at_or_before_the_confirmation() {
        let c = clock().confirmed(t("15:55"));
        let s = c.schedule();
        assert_eq!(s.due, DueAct::End);
        assert_eq!(s.reminder_at, None);
        assert_eq!(c.state(t("15:58")), MonitoringState::Ok);
    }

    #[test]
    fn without_a_reminder_or_a_grace() {
        let c = SessionClock {
            reminder: SignedDuration::ZERO,
            grace: SignedDuration::ZERO,
            ..clock()
        };
        let s = c.schedule();
        assert_eq!(s.reminder_at, None);
        assert_eq!(s.missed_check_in_at, Some(t("09:00")));
        assert_eq!(c.state(t("08:59")), MonitoringState::Ok);
        assert_eq!(c.state(t("09:00")), MonitoringState::Alerting);
    }

    #[test]
    fn the_overdue_alarm_holds_even_after_a_missed_check_in() {
        let c = clock();
        assert_eq!(c.schedule().overdue_at, t("16:05"));
        assert_eq!(c.state(t("17:00")), MonitoringState::Alerting);
    }
}
