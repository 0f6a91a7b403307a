//! The report query parameters (docs/reports.md), read into domain values. Names are
//! matched ignoring case; arrays come as repeated parameters (`DeviceIds=a&DeviceIds=b`),
//! as comma lists (`DeviceIds=a,b`), or both. Every bad value is reported at once, each
//! naming its parameter.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use utoipa::IntoParams;

use crate::domain::device::DeviceStatus;
use crate::domain::report::{Calendar, DeviceFilter, GroupBy, IntervalType, ViolationType, Window};
use crate::domain::validation::{ValidationErrors, Validator};

/// A date-time as given: with an offset it is an instant; without, a wall-clock time
/// (or a whole day) in the tenant's zone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DateInput {
    Instant(Timestamp),
    Local(DateTime),
    Day(Date),
}

impl DateInput {
    fn parse(text: &str) -> Option<DateInput> {
        let text = text.trim();
        if let Ok(t) = text.parse::<Timestamp>() {
            return Some(DateInput::Instant(t));
        }
        if text.len() == 10
            && let Ok(d) = text.parse::<Date>()
        {
            return Some(DateInput::Day(d));
        }
        text.parse::<DateTime>().ok().map(DateInput::Local)
    }

    /// The instant; a whole day `DateTo` means up to the end of that day.
    fn resolve(self, calendar: &Calendar, end: bool) -> Result<Timestamp, jiff::Error> {
        match self {
            DateInput::Instant(t) => Ok(t),
            DateInput::Local(at) => calendar.local(at),
            DateInput::Day(day) => {
                let day = if end { day.tomorrow()? } else { day };
                calendar.local(day.to_datetime(jiff::civil::Time::midnight()))
            }
        }
    }
}

/// Every report parameter, parsed.
#[derive(Debug, Clone, Default)]
pub struct ReportParams {
    pub subtenants: bool,
    pub filter: DeviceFilter,
    pub collection_id: Option<i64>,
    pub interval: Option<IntervalType>,
    pub date_from: Option<DateInput>,
    pub date_to: Option<DateInput>,
    pub last_time_hours: i32,
    pub group_by: GroupBy,
    pub violation_types: Vec<ViolationType>,
}

struct Raw(Vec<(String, String)>);

impl Raw {
    fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Every item of a repeated and/or comma-separated parameter.
    fn list(&self, name: &str) -> Vec<String> {
        self.values(name)
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// A single-valued parameter (the last one given; empty counts as absent).
    fn single(&self, name: &str) -> Option<String> {
        self.values(name)
            .last()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }
}

fn numbers(v: &mut Validator, name: &str, items: Vec<String>) -> Vec<i64> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item.parse::<i64>() {
            Ok(n) => out.push(n),
            Err(_) => v.add(name, format!("'{item}' is not an id (a number)")),
        }
    }
    out
}

/// The device filters: groups, users, types, vehicle types, ids and status.
fn device_filter(raw: &Raw, v: &mut Validator) -> DeviceFilter {
    let mut filter = DeviceFilter::default();
    let group_ids = raw.list("GroupIds");
    filter.group_ids = numbers(v, "GroupIds", group_ids);
    let user_ids = raw.list("UserIds");
    filter.user_ids = numbers(v, "UserIds", user_ids);
    filter.device_types = raw.list("DeviceTypes");
    filter.vehicle_type_tags = raw.list("VehicleTypeTags");
    filter.device_ids = raw.list("DeviceIds");
    if let Some(status) = raw.single("DeviceStatus") {
        // Any letter case, as the report's other parameters.
        let member = DeviceStatus::NAMES
            .iter()
            .find(|name| name.eq_ignore_ascii_case(&status));
        match member.and_then(|name| name.parse().ok()) {
            Some(parsed) => filter.status = Some(parsed),
            None => v.add("DeviceStatus", "must be Active or Inactive"),
        }
    }
    filter
}

/// The violation types asked for, each once; all of them when none is named.
fn violation_types(raw: &Raw, v: &mut Validator) -> Vec<ViolationType> {
    let mut types = Vec::new();
    let names = raw.list("DrivingViolationTypes");
    if names.is_empty() {
        return ViolationType::ALL.to_vec();
    }
    for name in names {
        match ViolationType::parse(&name) {
            Some(t) if !types.contains(&t) => types.push(t),
            Some(_) => {}
            None => v.add(
                "DrivingViolationTypes",
                format!("'{name}' is not one of Acceleration, Braking, Turning, Speeding"),
            ),
        }
    }
    types
}

impl ReportParams {
    /// Reads the query string.
    pub fn parse(query: &str) -> Result<ReportParams, ValidationErrors> {
        let raw = Raw(form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect());
        let mut v = Validator::new();
        let mut params = ReportParams::default();
        if let Some(text) = raw.single("Subtenants") {
            match text.to_ascii_lowercase().as_str() {
                "true" | "1" => params.subtenants = true,
                "false" | "0" => {}
                _ => v.add("Subtenants", "must be true or false"),
            }
        }
        params.filter = device_filter(&raw, &mut v);
        if let Some(id) = raw.single("CollectionId") {
            match id.parse::<i64>() {
                Ok(id) => params.collection_id = Some(id),
                Err(_) => v.add("CollectionId", "is not a collection you can use"),
            }
        }
        params.read_window(&raw, &mut v);
        if let Some(text) = raw.single("LastTimeHoursFilter") {
            match text.parse::<i32>() {
                Ok(hours) => params.last_time_hours = hours,
                Err(_) => v.add("LastTimeHoursFilter", "must be a whole number of hours"),
            }
        }
        if let Some(text) = raw.single("GroupBy") {
            match GroupBy::parse(&text) {
                Some(g) => params.group_by = g,
                None => v.add("GroupBy", "must be Vehicle or Driver"),
            }
        }
        params.violation_types = violation_types(&raw, &mut v);
        v.finish()?;
        Ok(params)
    }

    /// The window's parameters: `IntervalType`, or both `DateFrom` and `DateTo`.
    fn read_window(&mut self, raw: &Raw, v: &mut Validator) {
        if let Some(text) = raw.single("IntervalType") {
            match IntervalType::parse(&text) {
                Some(interval) => self.interval = Some(interval),
                None => v.add(
                    "IntervalType",
                    format!("must be one of {}", IntervalType::names()),
                ),
            }
        }
        for (name, slot) in [
            ("DateFrom", &mut self.date_from),
            ("DateTo", &mut self.date_to),
        ] {
            if let Some(text) = raw.single(name) {
                match DateInput::parse(&text) {
                    Some(date) => *slot = Some(date),
                    None => v.add(name, "must be an ISO 8601 date-time (or date)"),
                }
            }
        }
        if self.interval.is_none() && raw.single("IntervalType").is_none() {
            if raw.single("DateFrom").is_none() {
                v.add("DateFrom", "is required when IntervalType is absent");
            }
            if raw.single("DateTo").is_none() {
                v.add("DateTo", "is required when IntervalType is absent");
            }
        }
    }

    /// The window: the interval (which wins over DateFrom/DateTo) or the two dates.
    pub fn window(&self, calendar: &Calendar, now: Timestamp) -> Result<Window, ValidationErrors> {
        let failed = |field: &str| ValidationErrors::single(field, "cannot be placed in time");
        if let Some(interval) = self.interval {
            return calendar
                .resolve(interval, now)
                .map_err(|_| failed("IntervalType"));
        }
        let (Some(from), Some(to)) = (self.date_from, self.date_to) else {
            return Err(ValidationErrors::single(
                "DateFrom",
                "is required when IntervalType is absent",
            ));
        };
        let from = from
            .resolve(calendar, false)
            .map_err(|_| failed("DateFrom"))?;
        let to = to.resolve(calendar, true).map_err(|_| failed("DateTo"))?;
        if from > to {
            let mut v = Validator::new();
            v.add("DateFrom", "must not be after DateTo");
            v.add("DateTo", "must not be before DateFrom");
            v.finish()?;
        }
        Ok(Window { from, to })
    }
}

/// The parameters every report takes (for the OpenAPI document; `ReportParams::parse`
/// reads them).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(non_snake_case, dead_code)]
pub struct CommonParams {
    /// Include the path tenant's descendants (never beyond the caller's own subtree).
    Subtenants: Option<bool>,
    /// Group ids (repeated, or comma-separated).
    GroupIds: Option<Vec<String>>,
    /// Device types.
    DeviceTypes: Option<Vec<String>>,
    /// Active or Inactive.
    #[param(pattern = "^(Active|Inactive)$")]
    DeviceStatus: Option<String>,
    /// Values of the devices' VehicleType tag.
    VehicleTypeTags: Option<Vec<String>>,
    DeviceIds: Option<Vec<String>>,
    /// Ids of the devices' assigned users.
    UserIds: Option<Vec<String>>,
    /// A collection (`/collections`) of the caller's tenants or named in the caller's
    /// CrossTenantCollections; group and device filters are then ignored.
    CollectionId: Option<String>,
    /// A predefined window in the tenant's time zone (docs/reports.md); wins over
    /// DateFrom/DateTo.
    #[param(
        pattern = "^(this-week|this-month|this-quarter|this-year|this-financial-year|yesterday|last-week|last-week-sunday|last-7-days|last-10-days|last-30-days|last-4-weeks|last-12-weeks|last-3-months|last-6-months|last-12-months|last-month|last-quarter|last-year|last-financial-year)$"
    )]
    IntervalType: Option<String>,
    /// Window start (inclusive). Required without IntervalType. Without an offset: the
    /// tenant's local time; a date alone: the start of that day.
    #[param(value_type = Option<String>, format = DateTime)]
    DateFrom: Option<String>,
    /// Window end (exclusive). Required without IntervalType. A date alone: the end of
    /// that day.
    #[param(value_type = Option<String>, format = DateTime)]
    DateTo: Option<String>,
}

/// DevicesOverviewReport's own parameter.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(non_snake_case, dead_code)]
pub struct OverviewParams {
    /// 0: no filter; N: devices that reported within the last N hours; -N: devices that
    /// did not.
    LastTimeHoursFilter: Option<i32>,
}

/// The driver summaries' own parameters.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(non_snake_case, dead_code)]
pub struct SummaryParams {
    /// Driver (default: the device's assigned user) or Vehicle (the device).
    #[param(pattern = "^(Vehicle|Driver)$")]
    GroupBy: Option<String>,
    /// Acceleration, Braking, Turning, Speeding (default: all).
    DrivingViolationTypes: Option<Vec<String>>,
}

/// The violation reports' own parameter.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(non_snake_case, dead_code)]
pub struct ViolationParams {
    /// Acceleration, Braking, Turning, Speeding (default: all).
    DrivingViolationTypes: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(query: &str) -> Vec<String> {
        ReportParams::parse(query)
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    #[test]
    fn arrays_come_repeated_and_as_comma_lists() {
        let p = ReportParams::parse(
            "IntervalType=yesterday&DeviceIds=a,b&deviceids=c&DeviceIds=&GroupIds=1,2",
        )
        .unwrap();
        assert_eq!(p.filter.device_ids, ["a", "b", "c"]);
        assert_eq!(p.filter.group_ids, [1, 2]);
        assert_eq!(p.violation_types.len(), 4);
    }

    #[test]
    fn dates_are_required_without_an_interval() {
        assert_eq!(fields(""), ["DateFrom", "DateTo"]);
        assert_eq!(fields("DateFrom=2026-01-01"), ["DateTo"]);
    }

    #[test]
    fn every_bad_value_is_named() {
        assert_eq!(
            fields(
                "IntervalType=last-2-days&DeviceStatus=On&GroupBy=Fleet&DrivingViolationTypes=Speeding,Drifting\
                 &Subtenants=maybe&GroupIds=x&UserIds=y&LastTimeHoursFilter=z&CollectionId=c"
            ),
            [
                "Subtenants",
                "GroupIds",
                "UserIds",
                "DeviceStatus",
                "CollectionId",
                "IntervalType",
                "LastTimeHoursFilter",
                "GroupBy",
                "DrivingViolationTypes"
            ]
        );
        assert_eq!(fields("DateFrom=yesterday&DateTo=2026-01-01"), ["DateFrom"]);
    }

    #[test]
    fn windows_from_dates() {
        let calendar = Calendar::new(jiff::tz::TimeZone::get("Europe/Paris").ok(), None);
        let now = Timestamp::UNIX_EPOCH;
        let p = ReportParams::parse("DateFrom=2026-03-01&DateTo=2026-03-01").unwrap();
        let w = p.window(&calendar, now).unwrap();
        assert_eq!(w.from.to_string(), "2026-02-28T23:00:00Z");
        assert_eq!(w.to.to_string(), "2026-03-01T23:00:00Z");
        let p = ReportParams::parse("DateFrom=2026-03-01T10:00:00Z&DateTo=2026-03-01T09:00:00")
            .unwrap();
        let errors = p.window(&calendar, now).unwrap_err();
        assert_eq!(errors.0[0].field, "DateFrom");
        assert_eq!(errors.0[1].field, "DateTo");
    }
}
