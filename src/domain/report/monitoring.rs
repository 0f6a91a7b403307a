//! MonitoringReport (docs/reports.md, docs/monitoring.md): the lone-worker monitoring
//! sessions overlapping the window, totalled per person — the session's user — and, for
//! sessions that watched no user, per device. Pure: the store reads each session's
//! figures, this adds them up.

use jiff::Timestamp;

use super::Window;
use super::rows::MonitoringRow;
use crate::domain::ids::TenantCode;

/// Whom a row is about. Ordered as the rows are: people by id, then the devices.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Monitored {
    /// A person (a user id).
    Person(i64),
    /// A device's sessions that watched no user (ids are unique per tenant).
    Device {
        device_id: String,
        tenant_code: TenantCode,
    },
}

/// The person a session watched, as the report names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitoredPerson {
    pub user_id: i64,
    /// The person's own tenant.
    pub tenant_code: TenantCode,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
}

/// One session overlapping the window, with its counts inside the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFigures {
    pub tenant_code: TenantCode,
    pub device_id: String,
    pub person: Option<MonitoredPerson>,
    pub started_at: Timestamp,
    /// None: still current (it counts up to now).
    pub ended_at: Option<Timestamp>,
    /// `CheckIn` events in the window.
    pub check_ins: i64,
    /// `MissedCheckIn` events in the window.
    pub missed_check_ins: i64,
    /// Whether an `Overdue` event is in the window.
    pub overdue: bool,
    /// Alerts of the device raised during the session, in the window.
    pub alerts: i64,
}

impl SessionFigures {
    pub fn monitored(&self) -> Monitored {
        match &self.person {
            Some(person) => Monitored::Person(person.user_id),
            None => Monitored::Device {
                device_id: self.device_id.clone(),
                tenant_code: self.tenant_code.clone(),
            },
        }
    }

    /// Microseconds of [start, end — or `now` while current] inside the window.
    pub fn micros_in(&self, window: Window, now: Timestamp) -> i64 {
        let end = self.ended_at.unwrap_or(now);
        let from = self.started_at.max(window.from);
        let to = end.min(window.to);
        (to.as_microsecond() - from.as_microsecond()).max(0)
    }
}

/// The running totals of one row.
#[derive(Debug, Clone)]
pub struct MonitoringTotals {
    pub monitored: Monitored,
    row: MonitoringRow,
    micros: i64,
    devices: Vec<String>,
}

fn count(n: i64) -> i32 {
    i32::try_from(n.max(0)).unwrap_or(i32::MAX)
}

impl MonitoringTotals {
    /// Empty totals for whom `first` is about (named from it).
    pub fn new(first: &SessionFigures) -> Self {
        let person = first.person.as_ref();
        let row = MonitoringRow {
            tenant_var_code: Some(
                person
                    .map_or(&first.tenant_code, |p| &p.tenant_code)
                    .clone(),
            ),
            user_id: person.map(|p| p.user_id.to_string()),
            user_first_name: person.and_then(|p| p.first_name.clone()),
            user_last_name: person.and_then(|p| p.last_name.clone()),
            ..MonitoringRow::default()
        };
        MonitoringTotals {
            monitored: first.monitored(),
            row,
            micros: 0,
            devices: Vec::new(),
        }
    }

    /// Adds a session (one of whom these totals are about).
    pub fn add(&mut self, session: &SessionFigures, window: Window, now: Timestamp) {
        let row = &mut self.row;
        row.session_count = row.session_count.saturating_add(1);
        row.check_ins_made = row.check_ins_made.saturating_add(count(session.check_ins));
        row.missed_check_ins = row
            .missed_check_ins
            .saturating_add(count(session.missed_check_ins));
        row.overdue_sessions = row
            .overdue_sessions
            .saturating_add(i32::from(session.overdue));
        row.alerts = row.alerts.saturating_add(count(session.alerts));
        self.micros = self.micros.saturating_add(session.micros_in(window, now));
        if !self.devices.contains(&session.device_id) {
            self.devices.push(session.device_id.clone());
        }
    }

    /// The row: the minutes are the sessions' exact time in the window, summed, then
    /// rounded down to whole minutes.
    pub fn row(mut self) -> MonitoringRow {
        self.devices.sort();
        self.row.minutes_monitored = self.micros / 60_000_000;
        self.row.device_id = (!self.devices.is_empty()).then(|| self.devices.join(", "));
        self.row
    }
}

/// Totals consecutive sessions of the same person or device into rows: feed the
/// sessions in row order (`Monitored`'s), each completed row comes back as soon as the
/// next one starts, the last from `finish`.
#[derive(Debug)]
pub struct MonitoringRows {
    window: Window,
    now: Timestamp,
    current: Option<MonitoringTotals>,
}

impl MonitoringRows {
    pub fn new(window: Window, now: Timestamp) -> Self {
        MonitoringRows {
            window,
            now,
            current: None,
        }
    }

    /// Adds a session; answers the previous row when this session starts a new one.
    pub fn push(&mut self, session: &SessionFigures) -> Option<MonitoringRow> {
        let monitored = session.monitored();
        let done = match &self.current {
            Some(totals) if totals.monitored != monitored => self.current.take(),
            _ => None,
        };
        self.current
            .get_or_insert_with(|| MonitoringTotals::new(session))
            .add(session, self.window, self.now);
        done.map(MonitoringTotals::row)
    }

    /// The last row, if any session was pushed.
    pub fn finish(self) -> Option<MonitoringRow> {
        self.current.map(MonitoringTotals::row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a timestamp")
    }

    fn window() -> Window {
        Window {
            from: at("2026-03-02T08:00:00Z"),
            to: at("2026-03-02T12:00:00Z"),
        }
    }

    fn person(id: i64) -> Option<MonitoredPerson> {
        Some(MonitoredPerson {
            user_id: id,
            tenant_code: TenantCode::from_store("1000".into()),
            first_name: Some(format!("First{id}")),
            last_name: None,
        })
    }

    fn session(
        device: &str,
        who: Option<MonitoredPerson>,
        from: &str,
        to: Option<&str>,
    ) -> SessionFigures {
        SessionFigures {
            tenant_code: TenantCode::from_store("1001".into()),
            device_id: device.into(),
            person: who,
            started_at: at(from),
            ended_at: to.map(at),
            check_ins: 2,
            missed_check_ins: 1,
            overdue: false,
            alerts: 1,
        }
    }

    #[test]
    fn time_in_the_window_is_clipped_at_both_ends_and_current_sessions_count_to_now() {
        let now = at("2026-03-02T10:30:00Z");
        let before = session(
            "d",
            None,
            "2026-03-02T07:00:00Z",
            Some("2026-03-02T08:45:30Z"),
        );
        assert_eq!(
            before.micros_in(window(), now),
            45 * 60_000_000 + 30_000_000
        );
        let after = session(
            "d",
            None,
            "2026-03-02T11:50:00Z",
            Some("2026-03-02T13:00:00Z"),
        );
        assert_eq!(after.micros_in(window(), now), 10 * 60_000_000);
        let current = session("d", None, "2026-03-02T10:00:00Z", None);
        assert_eq!(current.micros_in(window(), now), 30 * 60_000_000);
        let outside = session(
            "d",
            None,
            "2026-03-02T06:00:00Z",
            Some("2026-03-02T07:00:00Z"),
        );
        assert_eq!(outside.micros_in(window(), now), 0);
    }

    #[test]
    fn sessions_are_totalled_per_person_then_per_device() {
        let now = at("2026-03-02T12:00:00Z");
        let mut overdue = session(
            "b",
            person(7),
            "2026-03-02T10:00:00Z",
            Some("2026-03-02T10:20:20Z"),
        );
        overdue.overdue = true;
        overdue.missed_check_ins = 0;
        let sessions = [
            session(
                "a",
                person(7),
                "2026-03-02T07:59:00Z",
                Some("2026-03-02T09:00:50Z"),
            ),
            overdue,
            session("a", person(9), "2026-03-02T11:00:00Z", None),
            session(
                "x",
                None,
                "2026-03-02T09:00:00Z",
                Some("2026-03-02T09:10:00Z"),
            ),
            session(
                "y",
                None,
                "2026-03-02T09:00:00Z",
                Some("2026-03-02T09:05:00Z"),
            ),
        ];
        let mut rows = MonitoringRows::new(window(), now);
        let mut out: Vec<MonitoringRow> = sessions.iter().filter_map(|s| rows.push(s)).collect();
        out.extend(rows.finish());
        assert_eq!(out.len(), 4);
        let seven = &out[0];
        assert_eq!(seven.user_id.as_deref(), Some("7"));
        assert_eq!(seven.user_first_name.as_deref(), Some("First7"));
        assert_eq!(
            seven.tenant_var_code.as_ref().map(TenantCode::as_str),
            Some("1000")
        );
        assert_eq!(seven.device_id.as_deref(), Some("a, b"));
        assert_eq!(seven.session_count, 2);
        // 60 min 50 s + 20 min 20 s = 81 min 10 s: 81 whole minutes.
        assert_eq!(seven.minutes_monitored, 81);
        assert_eq!(seven.check_ins_made, 4);
        assert_eq!(seven.missed_check_ins, 1);
        assert_eq!(seven.overdue_sessions, 1);
        assert_eq!(seven.alerts, 2);
        assert_eq!(out[1].user_id.as_deref(), Some("9"));
        assert_eq!(out[1].minutes_monitored, 60);
        let x = &out[2];
        assert_eq!(x.user_id, None);
        assert_eq!(x.device_id.as_deref(), Some("x"));
        assert_eq!(
            x.tenant_var_code.as_ref().map(TenantCode::as_str),
            Some("1001")
        );
        assert_eq!((x.session_count, x.minutes_monitored), (1, 10));
        assert_eq!(out[3].device_id.as_deref(), Some("y"));
        assert!(MonitoringRows::new(window(), now).finish().is_none());
    }
}
