//! The report window: `DateFrom`/`DateTo`, or one of the 21 `IntervalType` values resolved
//! in the tenant's time zone against an injected "now" (docs/reports.md lists each
//! window). Weeks start on Monday (except `last-week-sunday`); the financial year starts
//! on the first day of the tenant's `FinancialYearStartMonth`. Every window is half-open,
//! `[from, to)`; the `this-*` windows run to now, the `last-*` windows end at the start of
//! today, of this week, or of this month/quarter/year.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, Zoned};

/// A resolved window, `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: Timestamp,
    pub to: Timestamp,
}

impl Window {
    pub fn contains(&self, t: Timestamp) -> bool {
        t >= self.from && t < self.to
    }
}

/// The spec's `IntervalType` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalType {
    ThisWeek,
    ThisMonth,
    ThisQuarter,
    ThisYear,
    ThisFinancialYear,
    Yesterday,
    LastWeek,
    LastWeekSunday,
    Last7Days,
    Last10Days,
    Last30Days,
    Last4Weeks,
    Last12Weeks,
    Last3Months,
    Last6Months,
    Last12Months,
    LastMonth,
    LastQuarter,
    LastYear,
    LastFinancialYear,
}

impl IntervalType {
    pub const ALL: [(&'static str, IntervalType); 20] = [
        ("this-week", IntervalType::ThisWeek),
        ("this-month", IntervalType::ThisMonth),
        ("this-quarter", IntervalType::ThisQuarter),
        ("this-year", IntervalType::ThisYear),
        ("this-financial-year", IntervalType::ThisFinancialYear),
        ("yesterday", IntervalType::Yesterday),
        ("last-week", IntervalType::LastWeek),
        ("last-week-sunday", IntervalType::LastWeekSunday),
        ("last-7-days", IntervalType::Last7Days),
        ("last-10-days", IntervalType::Last10Days),
        ("last-30-days", IntervalType::Last30Days),
        ("last-4-weeks", IntervalType::Last4Weeks),
        ("last-12-weeks", IntervalType::Last12Weeks),
        ("last-3-months", IntervalType::Last3Months),
        ("last-6-months", IntervalType::Last6Months),
        ("last-12-months", IntervalType::Last12Months),
        ("last-month", IntervalType::LastMonth),
        ("last-quarter", IntervalType::LastQuarter),
        ("last-year", IntervalType::LastYear),
        ("last-financial-year", IntervalType::LastFinancialYear),
    ];

    /// The value as the spec spells it (matched ignoring case).
    pub fn parse(text: &str) -> Option<IntervalType> {
        let text = text.trim();
        Self::ALL
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(text))
            .map(|(_, value)| *value)
    }

    pub fn names() -> String {
        Self::ALL
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The calendar facts an interval is resolved with.
#[derive(Debug, Clone)]
pub struct Calendar {
    pub zone: TimeZone,
    /// 1–12: the month the financial year starts in.
    pub financial_year_start_month: i8,
}

impl Calendar {
    /// The tenant's calendar: its `TimeZoneId` (UTC when unset or unknown) and
    /// `FinancialYearStartMonth` (1 when unset or not 1–12).
    pub fn new(zone: Option<TimeZone>, financial_year_start_month: Option<&str>) -> Calendar {
        let month = financial_year_start_month
            .and_then(|m| m.trim().parse::<i8>().ok())
            .filter(|m| (1..=12).contains(m))
            .unwrap_or(1);
        Calendar {
            zone: zone.unwrap_or(TimeZone::UTC),
            financial_year_start_month: month,
        }
    }

    /// The start of `date` in the zone (the first instant that exists on that day).
    fn start_of(&self, date: Date) -> Result<Timestamp, jiff::Error> {
        Ok(date
            .to_zoned(self.zone.clone())?
            .start_of_day()?
            .timestamp())
    }

    /// A civil date-time (no offset given) read in the zone.
    pub fn local(&self, at: DateTime) -> Result<Timestamp, jiff::Error> {
        Ok(at.to_zoned(self.zone.clone())?.timestamp())
    }

    /// A timestamp as the zone's wall clock, with the offset (`2026-03-01T11:00:00+01:00`).
    pub fn format_local(&self, at: Timestamp) -> String {
        at.to_zoned(self.zone.clone())
            .strftime("%Y-%m-%dT%H:%M:%S%:z")
            .to_string()
    }

    /// The window of `interval` at `now`.
    pub fn resolve(&self, interval: IntervalType, now: Timestamp) -> Result<Window, jiff::Error> {
        use IntervalType::*;
        let today: Zoned = now.to_zoned(self.zone.clone());
        let date = today.date();
        let monday = date.checked_sub(i64::from(date.weekday().to_monday_zero_offset()).days())?;
        let sunday = date.checked_sub(i64::from(date.weekday().to_sunday_zero_offset()).days())?;
        let month = date.first_of_month();
        let quarter = Date::new(date.year(), (date.month() - 1) / 3 * 3 + 1, 1)?;
        let year = Date::new(date.year(), 1, 1)?;
        let fy_month = self.financial_year_start_month;
        let financial_year = if date.month() >= fy_month {
            Date::new(date.year(), fy_month, 1)?
        } else {
            Date::new(date.year() - 1, fy_month, 1)?
        };
        let days_back = |n: i64| date.checked_sub(n.days());
        let (from, to): (Date, Option<Date>) = match interval {
            ThisWeek => (monday, None),
            ThisMonth => (month, None),
            ThisQuarter => (quarter, None),
            ThisYear => (year, None),
            ThisFinancialYear => (financial_year, None),
            Yesterday => (days_back(1)?, Some(date)),
            LastWeek => (monday.checked_sub(1.week())?, Some(monday)),
            LastWeekSunday => (sunday.checked_sub(1.week())?, Some(sunday)),
            Last7Days => (days_back(7)?, Some(date)),
            Last10Days => (days_back(10)?, Some(date)),
            Last30Days => (days_back(30)?, Some(date)),
            Last4Weeks => (monday.checked_sub(4.weeks())?, Some(monday)),
            Last12Weeks => (monday.checked_sub(12.weeks())?, Some(monday)),
            Last3Months => (month.checked_sub(3.months())?, Some(month)),
            Last6Months => (month.checked_sub(6.months())?, Some(month)),
            Last12Months => (month.checked_sub(12.months())?, Some(month)),
            LastMonth => (month.checked_sub(1.month())?, Some(month)),
            LastQuarter => (quarter.checked_sub(3.months())?, Some(quarter)),
            LastYear => (year.checked_sub(1.year())?, Some(year)),
            LastFinancialYear => (financial_year.checked_sub(1.year())?, Some(financial_year)),
        };
        Ok(Window {
            from: self.start_of(from)?,
            to: match to {
                Some(to) => self.start_of(to)?,
                None => now,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday 2026-05-13 15:30 in Europe/London (BST, UTC+1).
    fn now() -> Timestamp {
        "2026-05-13T14:30:00Z".parse().unwrap()
    }

    fn london(fy: Option<&str>) -> Calendar {
        Calendar::new(TimeZone::get("Europe/London").ok(), fy)
    }

    /// Local midnight of a date in London, as UTC text.
    fn window(calendar: &Calendar, interval: IntervalType) -> (String, String) {
        let w = calendar.resolve(interval, now()).unwrap();
        (w.from.to_string(), w.to.to_string())
    }

    fn check(interval: IntervalType, from: &str, to: &str) {
        assert_eq!(
            window(&london(None), interval),
            (from.to_string(), to.to_string()),
            "{interval:?}"
        );
    }

    const NOW: &str = "2026-05-13T14:30:00Z";

    #[test]
    fn every_name_parses() {
        for (name, value) in IntervalType::ALL {
            assert_eq!(IntervalType::parse(name), Some(value));
            assert_eq!(IntervalType::parse(&name.to_uppercase()), Some(value));
        }
        assert_eq!(IntervalType::parse("last-2-days"), None);
    }

    #[test]
    fn this_week() {
        check(IntervalType::ThisWeek, "2026-05-10T23:00:00Z", NOW);
    }
    #[test]
    fn this_month() {
        check(IntervalType::ThisMonth, "2026-04-30T23:00:00Z", NOW);
    }
    #[test]
    fn this_quarter() {
        check(IntervalType::ThisQuarter, "2026-03-31T23:00:00Z", NOW);
    }
    #[test]
    fn this_year() {
        // January: GMT, no offset.
        check(IntervalType::ThisYear, "2026-01-01T00:00:00Z", NOW);
    }
    #[test]
    fn this_financial_year() {
        check(IntervalType::ThisFinancialYear, "2026-01-01T00:00:00Z", NOW);
        // April start (UK): 2026-04-01 BST.
        assert_eq!(
            window(&london(Some("4")), IntervalType::ThisFinancialYear).0,
            "2026-03-31T23:00:00Z"
        );
        // A start month still to come this year: last year's.
        assert_eq!(
            window(&london(Some("7")), IntervalType::ThisFinancialYear).0,
            "2025-06-30T23:00:00Z"
        );
    }
    #[test]
    fn yesterday() {
        check(
            IntervalType::Yesterday,
            "2026-05-11T23:00:00Z",
            "2026-05-12T23:00:00Z",
        );
    }
    #[test]
    fn last_week() {
        check(
            IntervalType::LastWeek,
            "2026-05-03T23:00:00Z",
            "2026-05-10T23:00:00Z",
        );
    }
    #[test]
    fn last_week_sunday() {
        // Weeks starting Sunday: this one began Sunday 10 May; the last ran 3–10 May.
        check(
            IntervalType::LastWeekSunday,
            "2026-05-02T23:00:00Z",
            "2026-05-09T23:00:00Z",
        );
    }
    #[test]
    fn last_7_days() {
        check(
            IntervalType::Last7Days,
            "2026-05-05T23:00:00Z",
            "2026-05-12T23:00:00Z",
        );
    }
    #[test]
    fn last_10_days() {
        check(
            IntervalType::Last10Days,
            "2026-05-02T23:00:00Z",
            "2026-05-12T23:00:00Z",
        );
    }
    #[test]
    fn last_30_days() {
        check(
            IntervalType::Last30Days,
            "2026-04-12T23:00:00Z",
            "2026-05-12T23:00:00Z",
        );
    }
    #[test]
    fn last_4_weeks() {
        check(
            IntervalType::Last4Weeks,
            "2026-04-12T23:00:00Z",
            "2026-05-10T23:00:00Z",
        );
    }
    #[test]
    fn last_12_weeks() {
        // 16 February is before the clocks go forward: GMT.
        check(
            IntervalType::Last12Weeks,
            "2026-02-16T00:00:00Z",
            "2026-05-10T23:00:00Z",
        );
    }
    #[test]
    fn last_3_months() {
        check(
            IntervalType::Last3Months,
            "2026-02-01T00:00:00Z",
            "2026-04-30T23:00:00Z",
        );
    }
    #[test]
    fn last_6_months() {
        check(
            IntervalType::Last6Months,
            "2025-11-01T00:00:00Z",
            "2026-04-30T23:00:00Z",
        );
    }
    #[test]
    fn last_12_months() {
        check(
            IntervalType::Last12Months,
            "2025-04-30T23:00:00Z",
            "2026-04-30T23:00:00Z",
        );
    }
    #[test]
    fn last_month() {
        check(
            IntervalType::LastMonth,
            "2026-03-31T23:00:00Z",
            "2026-04-30T23:00:00Z",
        );
    }
    #[test]
    fn last_quarter() {
        check(
            IntervalType::LastQuarter,
            "2026-01-01T00:00:00Z",
            "2026-03-31T23:00:00Z",
        );
    }
    #[test]
    fn last_year() {
        check(
            IntervalType::LastYear,
            "2025-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
        );
    }
    #[test]
    fn last_financial_year() {
        check(
            IntervalType::LastFinancialYear,
            "2025-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
        );
        assert_eq!(
            window(&london(Some("4")), IntervalType::LastFinancialYear),
            (
                "2025-03-31T23:00:00Z".to_string(),
                "2026-03-31T23:00:00Z".to_string()
            )
        );
    }

    #[test]
    fn utc_when_the_zone_is_unset_and_month_defaults_to_january() {
        let calendar = Calendar::new(None, Some("13"));
        assert_eq!(calendar.financial_year_start_month, 1);
        let w = calendar.resolve(IntervalType::Yesterday, now()).unwrap();
        assert_eq!(w.from.to_string(), "2026-05-12T00:00:00Z");
        assert_eq!(w.to.to_string(), "2026-05-13T00:00:00Z");
    }

    #[test]
    fn local_times_carry_their_offset() {
        assert_eq!(
            london(None).format_local(now()),
            "2026-05-13T15:30:00+01:00"
        );
    }
}
