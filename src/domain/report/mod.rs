//! Reports (docs/reports.md): the eight report kinds, their
//! parameters as domain values, the thresholds, and the computations — the window
//! (`interval`), trips and violations on a track (`track`), scores, and the rows
//! (`rows`). No HTTP, no SQL.

pub mod collection;
pub mod interval;
pub mod monitoring;
pub mod rows;
pub mod track;

use std::str::FromStr;

pub use interval::{Calendar, IntervalType, Window};

use crate::domain::place::Position;
use crate::domain::profile::DistanceUnits;

/// The report endpoints, named as the spec names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportKind {
    AlertsReport,
    AssetUtilisationReport,
    DevicesOverviewReport,
    DriverPerformanceSummaryReport,
    DriverBehaviourReport,
    DriverPerformanceDetailedReport,
    DriverBehaviourViolationReport,
    /// Lone-worker monitoring sessions per person (docs/monitoring.md).
    MonitoringReport,
}

impl ReportKind {
    pub const ALL: [ReportKind; 8] = [
        ReportKind::AlertsReport,
        ReportKind::AssetUtilisationReport,
        ReportKind::DevicesOverviewReport,
        ReportKind::DriverPerformanceSummaryReport,
        ReportKind::DriverBehaviourReport,
        ReportKind::DriverPerformanceDetailedReport,
        ReportKind::DriverBehaviourViolationReport,
        ReportKind::MonitoringReport,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReportKind::AlertsReport => "AlertsReport",
            ReportKind::AssetUtilisationReport => "AssetUtilisationReport",
            ReportKind::DevicesOverviewReport => "DevicesOverviewReport",
            ReportKind::DriverPerformanceSummaryReport => "DriverPerformanceSummaryReport",
            ReportKind::DriverBehaviourReport => "DriverBehaviourReport",
            ReportKind::DriverPerformanceDetailedReport => "DriverPerformanceDetailedReport",
            ReportKind::DriverBehaviourViolationReport => "DriverBehaviourViolationReport",
            ReportKind::MonitoringReport => "MonitoringReport",
        }
    }

    /// The reports a tenant has enabled: all, unless its `EnabledReports` property (a
    /// comma-separated list of names, matched ignoring case) narrows them.
    pub fn enabled(property: Option<&str>) -> Vec<ReportKind> {
        match property {
            None => Self::ALL.to_vec(),
            Some(list) => {
                let names: Vec<&str> = list.split(',').map(str::trim).collect();
                Self::ALL
                    .into_iter()
                    .filter(|kind| names.iter().any(|n| n.eq_ignore_ascii_case(kind.name())))
                    .collect()
            }
        }
    }
}

impl FromStr for ReportKind {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Self::ALL.into_iter().find(|k| k.name() == s).ok_or(())
    }
}

/// The driving violations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViolationType {
    Acceleration,
    Braking,
    Turning,
    Speeding,
}

impl ViolationType {
    pub const ALL: [ViolationType; 4] = [
        ViolationType::Acceleration,
        ViolationType::Braking,
        ViolationType::Turning,
        ViolationType::Speeding,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ViolationType::Acceleration => "Acceleration",
            ViolationType::Braking => "Braking",
            ViolationType::Turning => "Turning",
            ViolationType::Speeding => "Speeding",
        }
    }

    /// Matched ignoring case.
    pub fn parse(text: &str) -> Option<ViolationType> {
        Self::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// How driver summaries are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    #[default]
    Driver,
    Vehicle,
}

impl GroupBy {
    pub fn parse(text: &str) -> Option<GroupBy> {
        match text.trim() {
            t if t.eq_ignore_ascii_case("Driver") => Some(GroupBy::Driver),
            t if t.eq_ignore_ascii_case("Vehicle") => Some(GroupBy::Vehicle),
            _ => None,
        }
    }
}

/// Thresholds of the computations (`serve --report-*`, docs/reports.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A stop at least this long ends a trip.
    pub stop_minutes: f64,
    /// Slower than this (km/h, derived from consecutive positions) is not moving.
    pub stop_speed_kmh: f64,
    /// Speed limit of devices without a `SpeedLimitKmh` tag.
    pub default_speed_limit_kmh: f64,
    /// m/s².
    pub acceleration_ms2: f64,
    /// m/s² (deceleration).
    pub braking_ms2: f64,
    /// Lateral acceleration, m/s².
    pub turning_ms2: f64,
    /// Score points lost per weighted violation per 100 km.
    pub score_weights: Weights,
}

/// Weight of each violation type in the score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub speeding: f64,
    pub acceleration: f64,
    pub braking: f64,
    pub turning: f64,
}

impl Weights {
    pub fn of(&self, kind: ViolationType) -> f64 {
        match kind {
            ViolationType::Speeding => self.speeding,
            ViolationType::Acceleration => self.acceleration,
            ViolationType::Braking => self.braking,
            ViolationType::Turning => self.turning,
        }
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            stop_minutes: 5.0,
            stop_speed_kmh: 3.0,
            default_speed_limit_kmh: 100.0,
            acceleration_ms2: 3.0,
            braking_ms2: 3.0,
            turning_ms2: 4.0,
            score_weights: Weights {
                speeding: 5.0,
                acceleration: 2.0,
                braking: 3.0,
                turning: 2.0,
            },
        }
    }
}

/// Score = 100 − Σ(weight × violations) per 100 km, floored at 0, as an integer. The
/// distance counts as at least 1 km, so a few metres with one violation do not make an
/// infinite rate (and no distance with no violation is 100).
pub fn score(weighted_violations: f64, distance_km: f64) -> i32 {
    let per_100_km = weighted_violations * 100.0 / distance_km.max(1.0);
    (100.0 - per_100_km).floor().clamp(0.0, 100.0) as i32
}

/// `3 h 12 min`, `2 d 5 h`, `7 min` (`0 min` under a minute): how long ago.
pub fn ago_text(seconds: i64) -> String {
    let minutes = seconds.max(0) / 60;
    let (days, hours, mins) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    if days > 0 {
        format!("{days} d {hours} h")
    } else if hours > 0 {
        format!("{hours} h {mins} min")
    } else {
        format!("{mins} min")
    }
}

/// `HH:mm` of a duration (hours may pass 24: `27:05`).
pub fn duration_text(seconds: i64) -> String {
    let minutes = seconds.max(0) / 60;
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// Turns a position into an address (docs/reports.md, "Addresses"). The one
/// implementation is offline (`OfflinePlaces`, what `ReportService::new` uses); an online
/// geocoder would implement this trait too.
pub trait Geocoder: Send + Sync {
    fn address(
        &self,
        position: Option<Position>,
        geofences: &[String],
        units: DistanceUnits,
    ) -> Option<String>;
}

/// The containing geofences' names, then the nearest GeoNames place in words
/// (`domain::place::address`).
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflinePlaces;

impl Geocoder for OfflinePlaces {
    fn address(
        &self,
        position: Option<Position>,
        geofences: &[String],
        units: DistanceUnits,
    ) -> Option<String> {
        crate::domain::place::address(position, geofences, units)
    }
}

/// Names joined with `, ` (None: no geofence).
pub fn geofence_names(names: &[String]) -> Option<String> {
    (!names.is_empty()).then(|| names.join(", "))
}

/// The devices a report covers: the filters of the common parameters (combined with AND).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceFilter {
    pub group_ids: Vec<i64>,
    pub device_types: Vec<String>,
    pub status: Option<crate::domain::device::DeviceStatus>,
    pub vehicle_type_tags: Vec<String>,
    pub device_ids: Vec<String>,
    pub user_ids: Vec<i64>,
}

impl DeviceFilter {
    /// The filter that stays when a collection is given: group and device related
    /// filters are ignored, leaving the users.
    pub fn for_collection(self) -> DeviceFilter {
        DeviceFilter {
            user_ids: self.user_ids,
            ..DeviceFilter::default()
        }
    }

    /// Whether a device's `VehicleType` tag passes (matched ignoring case).
    pub fn vehicle_type_matches(&self, tag: Option<&str>) -> bool {
        self.vehicle_type_tags.is_empty()
            || tag.is_some_and(|t| {
                self.vehicle_type_tags
                    .iter()
                    .any(|v| v.eq_ignore_ascii_case(t))
            })
    }
}

/// `LastTimeHoursFilter`: 0 none; N reported within the last N hours; −N did not.
pub fn last_time_filter(hours: i32, last: Option<jiff::Timestamp>, now: jiff::Timestamp) -> bool {
    let window_us = i64::from(hours).abs() * 3_600_000_000;
    let recent = last.is_some_and(|t| now.as_microsecond() - t.as_microsecond() <= window_us);
    match hours {
        0 => true,
        h if h > 0 => recent,
        _ => !recent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores() {
        assert_eq!(score(0.0, 0.0), 100);
        assert_eq!(score(5.0, 100.0), 95);
        assert_eq!(score(5.0, 10.0), 50);
        assert_eq!(score(50.0, 10.0), 0);
        assert_eq!(score(1.0, 0.2), 0);
        assert_eq!(score(2.5, 100.0), 97);
    }

    #[test]
    fn texts() {
        assert_eq!(ago_text(3 * 3600 + 12 * 60 + 5), "3 h 12 min");
        assert_eq!(ago_text(59), "0 min");
        assert_eq!(ago_text(7 * 60), "7 min");
        assert_eq!(ago_text(2 * 86400 + 5 * 3600), "2 d 5 h");
        assert_eq!(duration_text(600), "00:10");
        assert_eq!(duration_text(27 * 3600 + 5 * 60 + 59), "27:05");
    }

    #[test]
    fn enabled_reports() {
        assert_eq!(ReportKind::enabled(None).len(), 8);
        assert_eq!(
            ReportKind::enabled(Some("alertsreport, DevicesOverviewReport,Nope")),
            vec![ReportKind::AlertsReport, ReportKind::DevicesOverviewReport]
        );
    }

    #[test]
    fn last_time_hours() {
        let now: jiff::Timestamp = "2026-05-13T12:00:00Z".parse().unwrap();
        let two_hours_ago = Some("2026-05-13T10:00:00Z".parse().unwrap());
        assert!(last_time_filter(0, None, now));
        assert!(last_time_filter(3, two_hours_ago, now));
        assert!(!last_time_filter(1, two_hours_ago, now));
        assert!(!last_time_filter(3, None, now));
        assert!(last_time_filter(-1, two_hours_ago, now));
        assert!(!last_time_filter(-3, two_hours_ago, now));
        assert!(last_time_filter(-3, None, now));
    }
}
