//! What reports read: the selected devices with their state (one query), a device's
//! positions in a window (streamed in time order: memory stays bounded whatever the
//! window holds), its last odometer reading, and the alerts raised in a window.

pub mod monitoring;

use futures::stream::{BoxStream, StreamExt};
use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::device_rows::{DEVICE_COLUMNS, STATE_COLUMNS, device_from_row, state_from_row};
use super::stored_time;
use super::{Store, StoreError, StoreResult, TenantSelection, to_micros};
use crate::domain::device::Device;
use crate::domain::device_state::DeviceState;
use crate::domain::ids::TenantCode;
use crate::domain::mo_message::{GeofenceRef, MoMessage};
use crate::domain::report::track::TrackPoint;
use crate::domain::report::{DeviceFilter, Window};
use crate::domain::user::UserDetails;

/// A device as reports see it.
#[derive(Debug, Clone)]
pub struct ReportDevice {
    pub tenant_code: TenantCode,
    pub device: Device,
    pub state: DeviceState,
    pub group_name: Option<String>,
    /// The assigned user (id, username, the user record for names).
    pub user: Option<(i64, String, UserDetails)>,
}

impl ReportDevice {
    pub fn device_id(&self) -> &str {
        self.device.device_id.as_str()
    }
}

/// An alert raised in a window.
#[derive(Debug, Clone)]
pub struct RaisedAlert {
    /// The device's tenant: with its id, the device (ids are unique per tenant).
    pub tenant_code: TenantCode,
    pub device_id: String,
    pub alert_type: String,
    pub raised_at: jiff::Timestamp,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub geofences: Vec<String>,
}

/// Numbered placeholders, handed out in order (`?` on SQLite: see `Backend::placeholders`).
struct Params {
    backend: super::Backend,
    next: usize,
}

impl Params {
    fn take(&mut self, count: usize) -> String {
        let text = self.backend.placeholders(self.next, count);
        self.next += count;
        text
    }
}

/// Points read per query: one row holding up to this many positions as text.
pub const TRACK_CHUNK: i64 = 2000;

/// A device's positions after a (time, id) cursor, packed into one text by the database
/// (`string_agg … ORDER BY`, which SQLite ≥ 3.44 and PostgreSQL both have): a row per
/// position costs the driver far more than the position itself (docs/reports.md, "Cost").
/// Each point is `time,id,lat,lon,speed,heading`, points separated by `;`.
/// On `mo_messages_tenant_device_time`, in its order (no sort).
pub(super) const TRACK_CHUNK_SQL: &str = "SELECT COUNT(*) AS n, string_agg(
        CAST(message_time AS TEXT) || ',' || CAST(id AS TEXT) || ',' || CAST(latitude AS TEXT)
        || ',' || CAST(longitude AS TEXT) || ',' || COALESCE(CAST(speed AS TEXT), '')
        || ',' || COALESCE(CAST(heading AS TEXT), ''), ';' ORDER BY message_time, id) AS points
     FROM (SELECT message_time, id, latitude, longitude, speed, heading FROM mo_messages
           WHERE device_id = $1 AND tenant_code = $2
             AND (message_time > $3 OR (message_time = $3 AND id > $4)) AND message_time < $5
             AND latitude IS NOT NULL AND longitude IS NOT NULL
           ORDER BY message_time, id LIMIT $6) chunk";

/// The newest message before a (time, id) cursor in a window that may carry an odometer
/// reading, on `mo_messages_tenant_device_time` read backwards.
pub(super) const ODOMETER_CANDIDATE_SQL: &str = "SELECT id, message_time, doc FROM mo_messages
     WHERE device_id = $1 AND tenant_code = $2 AND message_time >= $3
       AND message_time <= $4 AND (message_time < $4 OR (message_time = $4 AND id < $5))
       AND doc LIKE '%dometer%'
     ORDER BY message_time DESC, id DESC LIMIT 1";

fn number<T: std::str::FromStr>(field: Option<&str>) -> StoreResult<T> {
    field
        .and_then(|f| f.trim().parse().ok())
        .ok_or_else(|| StoreError::Corrupt(format!("track point field {field:?}")))
}

fn optional(field: Option<&str>) -> StoreResult<Option<f64>> {
    match field.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|_| StoreError::Corrupt(format!("track point value {text}"))),
    }
}

fn parse_points(text: &str, out: &mut Vec<TrackPoint>) -> StoreResult<()> {
    for point in text.split(';').filter(|p| !p.is_empty()) {
        let mut fields = point.split(',');
        let micros: i64 = number(fields.next())?;
        let time = stored_time(micros)?;
        out.push(TrackPoint {
            time,
            message_id: number(fields.next())?,
            lat: number(fields.next())?,
            lon: number(fields.next())?,
            speed: optional(fields.next())?,
            heading: optional(fields.next())?,
        });
    }
    Ok(())
}

/// The columns a report's device row adds to the device's and its state's: tenant,
/// group name and the assigned user (null when none).
#[derive(sqlx::FromRow)]
struct ReportDeviceRow {
    tenant_code: String,
    group_name: Option<String>,
    user_id: Option<i64>,
    username: Option<String>,
    user_doc: Option<String>,
}

fn report_device_from_row(row: &AnyRow) -> StoreResult<ReportDevice> {
    let own = ReportDeviceRow::from_row(row)?;
    let user = match (own.user_id, own.username, own.user_doc) {
        (Some(id), Some(username), Some(doc)) => {
            let user: UserDetails = serde_json::from_str(&doc)
                .map_err(|e| StoreError::Corrupt(format!("user doc: {e}")))?;
            Some((id, username, user))
        }
        _ => None,
    };
    Ok(ReportDevice {
        tenant_code: TenantCode::from_store(own.tenant_code),
        device: device_from_row(row)?,
        state: state_from_row(row)?,
        group_name: own.group_name,
        user,
    })
}

/// The WHERE conditions of a report's device selection, with their values in the order
/// their placeholders were handed out: texts first, then numbers.
struct DeviceConditions {
    conditions: Vec<String>,
    texts: Vec<String>,
    numbers: Vec<i64>,
}

impl DeviceConditions {
    fn new(
        backend: super::Backend,
        tenants: &TenantSelection,
        filter: &DeviceFilter,
        only: Option<&[String]>,
    ) -> Self {
        let mut params = Params { backend, next: 1 };
        let mut conditions = vec![match tenants {
            TenantSelection::Tenant(_) => format!("d.tenant_code = {}", params.take(1)),
            TenantSelection::Subtree(_) => format!("t.path LIKE {}", params.take(1)),
        }];
        let mut texts: Vec<String> = Vec::new();
        let mut numbers: Vec<i64> = Vec::new();
        if let Some(ids) = only {
            conditions.push(format!(
                "d.device_id IN ({})",
                params.take(ids.len().max(1))
            ));
            texts.extend(ids.iter().cloned());
            if ids.is_empty() {
                texts.push(String::new());
            }
        }
        if !filter.device_ids.is_empty() {
            conditions.push(format!(
                "d.device_id IN ({})",
                params.take(filter.device_ids.len())
            ));
            texts.extend(filter.device_ids.iter().cloned());
        }
        if !filter.device_types.is_empty() {
            conditions.push(format!(
                "d.device_type IN ({})",
                params.take(filter.device_types.len())
            ));
            texts.extend(filter.device_types.iter().cloned());
        }
        if let Some(status) = &filter.status {
            conditions.push(format!("d.status = {}", params.take(1)));
            texts.push(status.as_str().to_string());
        }
        if !filter.group_ids.is_empty() {
            conditions.push(format!(
                "d.group_id IN ({})",
                params.take(filter.group_ids.len())
            ));
            numbers.extend(filter.group_ids.iter().copied());
        }
        if !filter.user_ids.is_empty() {
            conditions.push(format!(
                "d.user_id IN ({})",
                params.take(filter.user_ids.len())
            ));
            numbers.extend(filter.user_ids.iter().copied());
        }
        DeviceConditions {
            conditions,
            texts,
            numbers,
        }
    }
}

impl Store {
    /// The devices of `tenants` passing `filter` (all but `VehicleTypeTags`, which lives in
    /// the device's tags and is the caller's to apply), restricted to `only` when given
    /// (a collection's devices), in `DeviceId` order.
    pub async fn report_devices(
        &self,
        tenants: &TenantSelection,
        filter: &DeviceFilter,
        only: Option<&[String]>,
    ) -> StoreResult<Vec<ReportDevice>> {
        let DeviceConditions {
            conditions,
            texts,
            numbers,
        } = DeviceConditions::new(self.backend, tenants, filter, only);
        let sql = format!(
            "SELECT {DEVICE_COLUMNS}, {STATE_COLUMNS}, g.name AS group_name,
                u.username, u.doc AS user_doc
             FROM devices d JOIN tenants t ON t.code = d.tenant_code
             LEFT JOIN device_states s ON s.tenant_code = d.tenant_code AND s.device_id = d.device_id
             LEFT JOIN device_groups g ON g.id = d.group_id
             LEFT JOIN users u ON u.id = d.user_id
             WHERE {}
             ORDER BY d.device_id, d.tenant_code",
            conditions.join(" AND ")
        );
        let mut query = sqlx::query(&sql);
        query = match tenants {
            TenantSelection::Tenant(code) => query.bind(code.to_string()),
            TenantSelection::Subtree(path) => query.bind(format!("{path}%")),
        };
        for text in texts {
            query = query.bind(text);
        }
        for number in numbers {
            query = query.bind(number);
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter().map(report_device_from_row).collect()
    }

    /// The next chunk (at most `TRACK_CHUNK`) of a device's positions in the window
    /// after `after` (message time in µs, id), in time order. Fewer than `TRACK_CHUNK`:
    /// the last one.
    pub async fn track_chunk(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        window: Window,
        after: Option<(i64, i64)>,
    ) -> StoreResult<Vec<TrackPoint>> {
        let (time, id) = after.unwrap_or((to_micros(window.from), i64::MIN));
        let row = sqlx::query(TRACK_CHUNK_SQL)
            .bind(device_id)
            .bind(tenant_code.as_str())
            .bind(time)
            .bind(id)
            .bind(to_micros(window.to))
            .bind(TRACK_CHUNK)
            .fetch_one(&self.pool)
            .await?;
        let chunk = TrackChunkRow::from_row(&row)?;
        let mut points = Vec::with_capacity(usize::try_from(chunk.n).unwrap_or(0));
        if let Some(text) = chunk.points {
            parse_points(&text, &mut points)?;
        }
        Ok(points)
    }

    /// The names of the geofences stored with these messages (for violation rows).
    pub async fn message_geofences(
        &self,
        ids: &[i64],
    ) -> StoreResult<std::collections::HashMap<i64, Vec<String>>> {
        let mut found = std::collections::HashMap::new();
        for chunk in ids.chunks(500) {
            let sql = format!(
                "SELECT id, geofences FROM mo_messages WHERE geofences IS NOT NULL AND id IN ({})",
                self.backend.placeholders(1, chunk.len())
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&self.pool).await? {
                let row = MessageGeofencesRow::from_row(&row)?;
                let names = serde_json::from_str::<Vec<GeofenceRef>>(&row.geofences)
                    .map_err(|e| StoreError::Corrupt(format!("mo message geofences: {e}")))?
                    .into_iter()
                    .map(|g| g.geofence_name)
                    .collect();
                found.insert(row.id, names);
            }
        }
        Ok(found)
    }

    /// The last `Properties.odometer` (a number) a device reported in the window.
    pub async fn last_odometer(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        window: Window,
    ) -> StoreResult<Option<f64>> {
        // Newest first, one candidate at a time (a LIMIT of several would scan the whole
        // window for the rest when only one message mentions it); at most 20 tried.
        let mut before = (to_micros(window.to), i64::MIN);
        for _ in 0..20 {
            let row = sqlx::query(ODOMETER_CANDIDATE_SQL)
                .bind(device_id)
                .bind(tenant_code.as_str())
                .bind(to_micros(window.from))
                .bind(before.0)
                .bind(before.1)
                .fetch_optional(&self.pool)
                .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let row = OdometerCandidateRow::from_row(&row)?;
            before = (row.message_time, row.id);
            let Ok(message) = serde_json::from_str::<MoMessage>(&row.doc) else {
                continue;
            };
            let reading = message
                .properties
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case("odometer"))
                .and_then(|(_, value)| value.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite());
            if reading.is_some() {
                return Ok(reading);
            }
        }
        Ok(None)
    }

    /// The alerts raised in the window of `tenants`, in time order, as they are read.
    pub fn raised_alerts<'a>(
        &'a self,
        tenants: &TenantSelection,
        window: Window,
    ) -> BoxStream<'a, StoreResult<RaisedAlert>> {
        let (sql, key) = match tenants {
            TenantSelection::Tenant(code) => (ALERTS_OF_TENANT, code.to_string()),
            TenantSelection::Subtree(path) => (ALERTS_OF_SUBTREE, format!("{path}%")),
        };
        sqlx::query(sql)
            .bind(key)
            .bind(to_micros(window.from))
            .bind(to_micros(window.to))
            .fetch(&self.pool)
            .map(|row| alert_from_row(&row?))
            .boxed()
    }
}

const ALERTS_OF_TENANT: &str =
    "SELECT a.tenant_code, a.device_id, a.notification_name, a.raised_at, a.latitude,
        a.longitude, a.geofences
     FROM alerts a
     WHERE a.tenant_code = $1 AND a.raised_at >= $2 AND a.raised_at < $3
     ORDER BY a.raised_at, a.id";

const ALERTS_OF_SUBTREE: &str =
    "SELECT a.tenant_code, a.device_id, a.notification_name, a.raised_at, a.latitude,
        a.longitude, a.geofences
     FROM alerts a JOIN tenants t ON t.code = a.tenant_code
     WHERE t.path LIKE $1 AND a.raised_at >= $2 AND a.raised_at < $3
     ORDER BY a.raised_at, a.id";

/// An `alerts` row as selected by `ALERTS_OF_TENANT` and `ALERTS_OF_SUBTREE`.
#[derive(sqlx::FromRow)]
struct RaisedAlertRow {
    tenant_code: String,
    device_id: String,
    notification_name: String,
    raised_at: i64,
    latitude: Option<f64>,
    longitude: Option<f64>,
    geofences: String,
}

impl RaisedAlertRow {
    fn into_alert(self) -> StoreResult<RaisedAlert> {
        Ok(RaisedAlert {
            tenant_code: TenantCode::from_store(self.tenant_code),
            device_id: self.device_id,
            alert_type: self.notification_name,
            raised_at: stored_time(self.raised_at)?,
            latitude: self.latitude,
            longitude: self.longitude,
            geofences: serde_json::from_str(&self.geofences)
                .map_err(|e| StoreError::Corrupt(format!("alert geofences: {e}")))?,
        })
    }
}

fn alert_from_row(row: &AnyRow) -> StoreResult<RaisedAlert> {
    RaisedAlertRow::from_row(row)?.into_alert()
}

/// One chunk of a track: how many points, and the points as text (`parse_points`).
#[derive(sqlx::FromRow)]
struct TrackChunkRow {
    n: i64,
    points: Option<String>,
}

/// A message's stored geofences (JSON `GeofenceRef`s).
#[derive(sqlx::FromRow)]
struct MessageGeofencesRow {
    id: i64,
    geofences: String,
}

/// A message that may carry an odometer reading, with its place in time order.
#[derive(sqlx::FromRow)]
struct OdometerCandidateRow {
    id: i64,
    message_time: i64,
    doc: String,
}
