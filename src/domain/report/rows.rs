//! The rows of the reports, field for field as the spec's "Report rows" names them. Every
//! field is always serialised (null when unknown), so a default row names the columns.

use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::ids::TenantCode;

/// A row of a report: its XML element name.
pub trait ReportRow: Serialize + Default + Send + 'static {
    const NAME: &'static str;
}

/// One alert raised in the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct AlertRow {
    pub device_id: Option<String>,
    pub device_friendly_name: Option<String>,
    /// The name of the notification that raised it.
    pub alert_type: Option<String>,
    /// When it was raised, in the tenant's time zone (with its offset).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub start_time_local: Option<String>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    /// The names of the geofences containing the point, then the nearest place in words (docs/reports.md, Addresses).
    pub address: Option<String>,
    /// The names of the geofences where the alert occurred.
    pub location_name: Option<String>,
}

impl ReportRow for AlertRow {
    const NAME: &'static str = "AlertsReportRow";
}

/// How much a device was used in the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct UtilisationRow {
    pub device_id: Option<String>,
    pub device_friendly_name: Option<String>,
    pub trips: i32,
    pub distance_km: f64,
    pub duration_sec: i32,
    /// `HH:mm`.
    #[schema(example = "01:35")]
    pub duration_string: String,
    /// The last `Properties.odometer` reported in the window.
    pub odometer_km: Option<f64>,
}

impl ReportRow for UtilisationRow {
    const NAME: &'static str = "AssetUtilisationReportRow";
}

/// Where a device is now (its state; no history is read).
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct OverviewRow {
    pub device_id: Option<String>,
    pub device_friendly_name: Option<String>,
    pub device_type: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_mo_message_time: Option<Timestamp>,
    /// How long ago, e.g. `3 h 12 min`.
    #[schema(example = "3 h 12 min")]
    pub last_mo_message_ago: Option<String>,
    pub last_latitude: Option<f64>,
    pub last_longitude: Option<f64>,
    /// The names of the geofences containing the last position, then the nearest place in words.
    pub address: Option<String>,
    #[schema(example = "85")]
    pub battery_percentage: Option<String>,
}

impl ReportRow for OverviewRow {
    const NAME: &'static str = "DevicesOverviewReportRow";
}

/// A driver's (or a vehicle's) score over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct SummaryRow {
    pub score: i32,
    /// Set when GroupBy is Driver: the assigned user's name (null: devices with no user).
    pub driver: Option<String>,
    /// Set when GroupBy is Vehicle: the device's friendly name (or id).
    pub vehicle: Option<String>,
    pub journeys_count: i32,
    pub distance_km: f64,
    pub duration_sec: i32,
}

impl ReportRow for SummaryRow {
    const NAME: &'static str = "DriverSummaryReportRow";
}

/// One violation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct ViolationRow {
    #[schema(value_type = Option<String>)]
    pub tenant_var_code: Option<TenantCode>,
    pub journey_id: Option<String>,
    pub device_id: Option<String>,
    pub user_id: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub date_time_local: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub date_time_utc: Option<Timestamp>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub address: Option<String>,
    /// Acceleration, Braking, Turning or Speeding.
    pub violation_type: Option<String>,
    /// km/h for Speeding, m/s² otherwise.
    pub limit: f64,
    pub recorded_value: f64,
    pub duration_seconds: f64,
    pub geofence: Option<String>,
    pub group_name: Option<String>,
    pub device_friendly_name: Option<String>,
    pub user_first_name: Option<String>,
    pub user_last_name: Option<String>,
}

impl ReportRow for ViolationRow {
    const NAME: &'static str = "DriverViolationReportRow";
}

/// One person's monitoring sessions in the window (MonitoringReport): a row per session
/// user, then one per device for the sessions that watched no user (`UserId` null).
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct MonitoringRow {
    /// The person's tenant; for a row without a person, the sessions' tenant.
    #[schema(value_type = Option<String>)]
    pub tenant_var_code: Option<TenantCode>,
    /// The person watched (the device's user when the session started); null for a
    /// device's sessions that watched no one.
    pub user_id: Option<String>,
    pub user_first_name: Option<String>,
    pub user_last_name: Option<String>,
    /// The devices of the sessions, in id order, joined with `, `.
    pub device_id: Option<String>,
    /// Sessions overlapping the window.
    pub session_count: i32,
    /// Whole minutes of the sessions (start to end, or to now) inside the window.
    pub minutes_monitored: i64,
    /// Check-ins recorded in the window.
    pub check_ins_made: i32,
    /// Missed check-ins raised in the window.
    pub missed_check_ins: i32,
    /// Sessions that became overdue in the window.
    pub overdue_sessions: i32,
    /// Alerts of the sessions' devices raised during the sessions, in the window.
    pub alerts: i32,
}

impl ReportRow for MonitoringRow {
    const NAME: &'static str = "MonitoringReportRow";
}

/// Rounds to `places` decimals (report figures, not measurements).
pub fn round(value: f64, places: i32) -> f64 {
    let factor = 10f64.powi(places);
    (value * factor).round() / factor
}
