//! Running a report (docs/reports.md): the devices are selected once (one query), then
//! each device's history is read in time order and turned into rows as it is read, and
//! each row is sent on as soon as it is complete. Memory is bounded by the number of
//! devices (and, for driver summaries, of drivers), never by the number of messages.

mod monitoring;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::channel::mpsc::{Receiver, Sender, channel};
use futures::{FutureExt, SinkExt, StreamExt, stream};
use jiff::Timestamp;

use crate::domain::ids::TenantCode;
use crate::domain::place::Position;
use crate::domain::profile::DistanceUnits;
use crate::domain::report::rows::{
    AlertRow, OverviewRow, SummaryRow, UtilisationRow, ViolationRow, round,
};
use crate::domain::report::track::{Finding, TrackAnalyser, TrackSummary, Trip, Violation};
use crate::domain::report::{
    Calendar, DeviceFilter, Geocoder, GroupBy, OfflinePlaces, Thresholds, ViolationType, Window,
    ago_text, duration_text, geofence_names, last_time_filter, score,
};
use crate::store::TenantSelection;
use crate::store::reports::{ReportDevice, TRACK_CHUNK};
use crate::store::{Store, StoreError, StoreResult};

/// Devices whose history is read at the same time (order is kept): reads overlap with
/// computing, on a few of the pool's connections.
const DEVICES_AT_ONCE: usize = 3;

/// Rows buffered between the report and the response writing them.
const ROWS_IN_FLIGHT: usize = 256;

/// Why a report stopped before its last row.
#[derive(Debug, thiserror::Error)]
pub enum ReportFailure {
    #[error("reading the report's data failed: {0}")]
    Store(#[from] StoreError),
    #[error("the report's computation panicked")]
    Panicked,
}

/// Where rows go: the receiver renders them. A closed receiver (the client went away)
/// stops the run.
pub type Rows<R> = Sender<Result<R, ReportFailure>>;

/// The rows of a running report, ending with its failure if it fails.
pub type ReportRows<R> = Receiver<Result<R, ReportFailure>>;

/// Runs `report` on its own task, which outlives the request that started it, and
/// answers the receiving end of its rows. A report that panics ends its rows with
/// `ReportFailure::Panicked`, so the reader is told the report failed rather than seeing
/// a short but complete report.
pub fn start<R, F, Fut>(report: F) -> ReportRows<R>
where
    R: Send + 'static,
    F: FnOnce(Rows<R>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (rows, received) = channel(ROWS_IN_FLIGHT);
    let mut failures = rows.clone();
    let work = AssertUnwindSafe(report(rows)).catch_unwind();
    tokio::spawn(async move {
        if work.await.is_err() {
            let _ = failures.send(Err(ReportFailure::Panicked)).await;
        }
    });
    received
}

/// One report request, resolved: tenants, filters, window, calendar and the extras.
#[derive(Debug, Clone)]
pub struct ReportRequest {
    pub tenants: TenantSelection,
    pub filter: DeviceFilter,
    /// A collection's devices (group and device filters are then ignored).
    pub collection: Option<Vec<String>>,
    pub window: Window,
    pub calendar: Calendar,
    pub now: Timestamp,
    pub last_time_hours: i32,
    pub group_by: GroupBy,
    pub violation_types: Vec<ViolationType>,
    /// The reader's distance unit, for the `Address` columns (their profile's, else the
    /// tenant's default).
    pub distance_units: DistanceUnits,
}

#[derive(Clone)]
pub struct ReportService {
    store: Store,
    thresholds: Thresholds,
    geocoder: Arc<dyn Geocoder>,
}

/// Whether the receiver still listens.
async fn send<R>(out: &mut Rows<R>, row: R) -> bool {
    out.send(Ok(row)).await.is_ok()
}

fn display_name(device: &ReportDevice) -> String {
    device
        .device
        .friendly_name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| device.device_id().to_string())
}

fn driver_name(device: &ReportDevice) -> Option<String> {
    let (_, username, user) = device.user.as_ref()?;
    let full = [user.first_name.as_deref(), user.last_name.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Some(if full.is_empty() {
        username.clone()
    } else {
        full
    })
}

fn seconds(value: f64) -> i32 {
    value.round().clamp(0.0, f64::from(i32::MAX)) as i32
}

/// Totals of one device or driver in a driver summary.
#[derive(Debug, Default)]
struct Totals {
    name: Option<String>,
    trips: u32,
    distance_m: f64,
    duration_secs: f64,
    weighted: f64,
}

impl Totals {
    fn add(&mut self, summary: &TrackSummary, weighted: f64) {
        self.trips += summary.trips;
        self.distance_m += summary.distance_m;
        self.duration_secs += summary.duration_secs;
        self.weighted += weighted;
    }

    fn row(&self, group_by: GroupBy) -> SummaryRow {
        let distance_km = self.distance_m / 1000.0;
        SummaryRow {
            score: score(self.weighted, distance_km),
            driver: (group_by == GroupBy::Driver)
                .then(|| self.name.clone())
                .flatten(),
            vehicle: (group_by == GroupBy::Vehicle)
                .then(|| self.name.clone())
                .flatten(),
            journeys_count: i32::try_from(self.trips).unwrap_or(i32::MAX),
            distance_km: round(distance_km, 3),
            duration_sec: seconds(self.duration_secs),
        }
    }
}

impl ReportService {
    pub fn new(store: Store, thresholds: Thresholds) -> Self {
        ReportService {
            store,
            thresholds,
            geocoder: Arc::new(OfflinePlaces),
        }
    }

    /// The devices the request covers, in `DeviceId` order.
    pub async fn devices(&self, request: &ReportRequest) -> StoreResult<Vec<ReportDevice>> {
        let (filter, only) = match &request.collection {
            Some(ids) => (
                request.filter.clone().for_collection(),
                Some(ids.as_slice()),
            ),
            None => (request.filter.clone(), None),
        };
        let mut devices = self
            .store
            .report_devices(&request.tenants, &filter, only)
            .await?;
        devices.retain(|d| {
            filter.vehicle_type_matches(d.device.tags.get("VehicleType").map(String::as_str))
        });
        Ok(devices)
    }

    pub async fn devices_overview(
        self,
        request: ReportRequest,
        devices: Vec<ReportDevice>,
        mut out: Rows<OverviewRow>,
    ) {
        for device in devices {
            let state = &device.state;
            if !last_time_filter(
                request.last_time_hours,
                state.last_message_time,
                request.now,
            ) {
                continue;
            }
            let position = state.last_position.as_ref();
            let geofences: Vec<String> = state
                .containing_geofences
                .iter()
                .map(|g| g.geofence_name.clone())
                .collect();
            let row = OverviewRow {
                device_id: Some(device.device.device_id.to_string()),
                device_friendly_name: device.device.friendly_name.clone(),
                device_type: Some(device.device.device_type.clone()),
                last_mo_message_time: state.last_message_time,
                last_mo_message_ago: state
                    .last_message_time
                    .map(|t| ago_text(request.now.as_second() - t.as_second())),
                last_latitude: position.map(|p| p.lat),
                last_longitude: position.map(|p| p.lon),
                address: self.geocoder.address(
                    position.and_then(|p| Position::new(p.lat, p.lon)),
                    &geofences,
                    request.distance_units,
                ),
                battery_percentage: state.battery_percentage.map(|b| format!("{b}")),
            };
            if !send(&mut out, row).await {
                return;
            }
        }
    }

    pub async fn alerts(
        self,
        request: ReportRequest,
        devices: Vec<ReportDevice>,
        mut out: Rows<AlertRow>,
    ) {
        // By tenant and id: two tenants in the scope may each have a device of one id.
        let names: HashMap<(TenantCode, String), Option<String>> = devices
            .into_iter()
            .map(|d| {
                let key = (d.tenant_code.clone(), d.device_id().to_string());
                (key, d.device.friendly_name)
            })
            .collect();
        let mut alerts = self.store.raised_alerts(&request.tenants, request.window);
        while let Some(alert) = alerts.next().await {
            let alert = match alert {
                Ok(alert) => alert,
                Err(e) => {
                    let _ = out.send(Err(e.into())).await;
                    return;
                }
            };
            let key = (alert.tenant_code, alert.device_id);
            let Some(friendly_name) = names.get(&key) else {
                continue;
            };
            let row = AlertRow {
                device_friendly_name: friendly_name.clone(),
                alert_type: Some(alert.alert_type),
                start_time_local: Some(request.calendar.format_local(alert.raised_at)),
                latitude: alert.latitude,
                longitude: alert.longitude,
                address: self.geocoder.address(
                    Position::of(alert.latitude, alert.longitude),
                    &alert.geofences,
                    request.distance_units,
                ),
                location_name: geofence_names(&alert.geofences),
                device_id: Some(key.1),
            };
            if !send(&mut out, row).await {
                return;
            }
        }
    }

    /// Reads a device's track in the window through the analyser, handing each finding
    /// to `found` as it is made. Returns the device's totals.
    async fn analyse(
        &self,
        device: &ReportDevice,
        window: Window,
        mut found: impl FnMut(Finding),
    ) -> StoreResult<TrackSummary> {
        let limit = device
            .device
            .tags
            .get("SpeedLimitKmh")
            .and_then(|v| v.trim().parse::<f64>().ok());
        let mut analyser = TrackAnalyser::new(self.thresholds, limit);
        let mut findings = Vec::new();
        let mut after = None;
        loop {
            let points = self
                .store
                .track_chunk(&device.tenant_code, device.device_id(), window, after)
                .await?;
            let last = points.len() < TRACK_CHUNK as usize;
            after = points
                .last()
                .map(|p| (p.time.as_microsecond(), p.message_id));
            for point in points {
                analyser.push(point, &mut findings);
                findings.drain(..).for_each(&mut found);
            }
            if last || after.is_none() {
                break;
            }
        }
        analyser.finish(&mut findings);
        findings.drain(..).for_each(&mut found);
        Ok(analyser.summary)
    }

    /// One device's utilisation row.
    async fn utilisation_row(
        &self,
        device: &ReportDevice,
        window: Window,
    ) -> StoreResult<UtilisationRow> {
        let summary = self.analyse(device, window, |_| {}).await?;
        let odometer = self
            .store
            .last_odometer(&device.tenant_code, device.device_id(), window)
            .await?;
        let duration = seconds(summary.duration_secs);
        Ok(UtilisationRow {
            device_id: Some(device.device.device_id.to_string()),
            device_friendly_name: device.device.friendly_name.clone(),
            trips: i32::try_from(summary.trips).unwrap_or(i32::MAX),
            distance_km: round(summary.distance_m / 1000.0, 3),
            duration_sec: duration,
            duration_string: duration_text(i64::from(duration)),
            odometer_km: odometer,
        })
    }

    pub async fn asset_utilisation(
        self,
        request: ReportRequest,
        devices: Vec<ReportDevice>,
        mut out: Rows<UtilisationRow>,
    ) {
        let service = &self;
        let mut rows = stream::iter(devices)
            .map(|device| async move { service.utilisation_row(&device, request.window).await })
            .buffered(DEVICES_AT_ONCE);
        while let Some(row) = rows.next().await {
            match row {
                Ok(row) => {
                    if !send(&mut out, row).await {
                        return;
                    }
                }
                Err(e) => {
                    let _ = out.send(Err(e.into())).await;
                    return;
                }
            }
        }
    }

    /// One device's totals and weighted violations of the selected types.
    async fn device_totals(
        &self,
        device: &ReportDevice,
        request: &ReportRequest,
    ) -> StoreResult<(TrackSummary, f64)> {
        let weights = self.thresholds.score_weights;
        let mut weighted = 0.0;
        let summary = self
            .analyse(device, request.window, |finding| {
                if let Finding::Violation(v) = finding
                    && request.violation_types.contains(&v.kind)
                {
                    weighted += weights.of(v.kind);
                }
            })
            .await?;
        Ok((summary, weighted))
    }

    /// DriverPerformanceSummaryReport and DriverBehaviourReport: by vehicle, a row per
    /// device as it is done; by driver, a row per assigned user (and one for devices with
    /// none) once every device is done.
    pub async fn driver_summary(
        self,
        request: ReportRequest,
        devices: Vec<ReportDevice>,
        mut out: Rows<SummaryRow>,
    ) {
        // Assigned users in id order, then the devices with none.
        let mut drivers: BTreeMap<(bool, i64), Totals> = BTreeMap::new();
        let (service, request) = (&self, &request);
        let mut totals = stream::iter(devices)
            .map(|device| async move {
                let computed = service.device_totals(&device, request).await;
                (device, computed)
            })
            .buffered(DEVICES_AT_ONCE);
        while let Some((device, computed)) = totals.next().await {
            let (summary, weighted) = match computed {
                Ok(computed) => computed,
                Err(e) => {
                    let _ = out.send(Err(e.into())).await;
                    return;
                }
            };
            match request.group_by {
                GroupBy::Vehicle => {
                    let mut totals = Totals {
                        name: Some(display_name(&device)),
                        ..Totals::default()
                    };
                    totals.add(&summary, weighted);
                    if !send(&mut out, totals.row(GroupBy::Vehicle)).await {
                        return;
                    }
                }
                GroupBy::Driver => {
                    let key = device
                        .user
                        .as_ref()
                        .map_or((true, 0), |(id, _, _)| (false, *id));
                    let totals = drivers.entry(key).or_insert_with(|| Totals {
                        name: driver_name(&device),
                        ..Totals::default()
                    });
                    totals.add(&summary, weighted);
                }
            }
        }
        for totals in drivers.values() {
            if !send(&mut out, totals.row(GroupBy::Driver)).await {
                return;
            }
        }
    }

    /// DriverPerformanceDetailedReport and DriverBehaviourViolationReport: every
    /// violation of the selected types, device by device, in time order. A device's rows
    /// are sent once its track is read: memory holds a few devices' violations at most.
    pub async fn violations(
        self,
        request: ReportRequest,
        devices: Vec<ReportDevice>,
        mut out: Rows<ViolationRow>,
    ) {
        let (service, request) = (&self, &request);
        let mut per_device = stream::iter(devices)
            .map(|device| async move {
                let mut rows = Vec::new();
                let result = service.analyse_rows(&device, request, &mut rows).await;
                result.map(|()| rows)
            })
            .buffered(DEVICES_AT_ONCE);
        while let Some(rows) = per_device.next().await {
            match rows {
                Ok(rows) => {
                    for row in rows {
                        if !send(&mut out, row).await {
                            return;
                        }
                    }
                }
                Err(e) => {
                    let _ = out.send(Err(e.into())).await;
                    return;
                }
            }
        }
    }

    /// One device's violation rows.
    async fn analyse_rows(
        &self,
        device: &ReportDevice,
        request: &ReportRequest,
        rows: &mut Vec<ViolationRow>,
    ) -> StoreResult<()> {
        let mut violations = Vec::new();
        self.analyse(device, request.window, |finding| {
            if let Finding::Violation(v) = finding
                && request.violation_types.contains(&v.kind)
            {
                violations.push(v);
            }
        })
        .await?;
        let ids: Vec<i64> = violations.iter().map(|v| v.at.message_id).collect();
        let geofences = self.store.message_geofences(&ids).await?;
        let none = Vec::new();
        rows.extend(violations.into_iter().map(|v| {
            let names = geofences.get(&v.at.message_id).unwrap_or(&none);
            self.violation_row(device, request, v, names)
        }));
        Ok(())
    }

    fn violation_row(
        &self,
        device: &ReportDevice,
        request: &ReportRequest,
        v: Violation,
        geofences: &[String],
    ) -> ViolationRow {
        let user = device.user.as_ref();
        ViolationRow {
            tenant_var_code: Some(device.tenant_code.clone()),
            journey_id: v
                .trip_start
                .map(|s| Trip::journey_id(device.device_id(), s)),
            device_id: Some(device.device.device_id.to_string()),
            user_id: user.map(|(id, _, _)| id.to_string()),
            date_time_local: Some(request.calendar.format_local(v.at.time)),
            date_time_utc: Some(v.at.time),
            latitude: Some(v.at.lat),
            longitude: Some(v.at.lon),
            address: self.geocoder.address(
                Position::new(v.at.lat, v.at.lon),
                geofences,
                request.distance_units,
            ),
            violation_type: Some(v.kind.name().to_string()),
            limit: v.limit,
            recorded_value: round(v.recorded, 2),
            duration_seconds: round(v.duration_secs, 1),
            geofence: geofence_names(geofences),
            group_name: device.group_name.clone(),
            device_friendly_name: device.device.friendly_name.clone(),
            user_first_name: user.and_then(|(_, _, u)| u.first_name.clone()),
            user_last_name: user.and_then(|(_, _, u)| u.last_name.clone()),
        }
    }
}
