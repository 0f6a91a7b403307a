//! How a device row and its state row read (`devices d LEFT JOIN device_states s`): shared
//! by the device records (`devices.rs`) and the ingest lookups (`device_states.rs`).

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreError, StoreResult, from_doc, from_micros};
use crate::domain::device::Device;
use crate::domain::device_state::{DeviceState, LastPosition};
use crate::domain::mo_message::GeofenceRef;

/// The device columns, for `devices d`.
pub(super) const DEVICE_COLUMNS: &str = "d.device_id, d.tenant_code, d.group_id, d.user_id, \
     d.device_type, d.status, d.doc, d.etag, d.updated_at";

/// The device as stored (without its state).
pub(super) fn device_from_row(row: &AnyRow) -> StoreResult<Device> {
    let mut device: Device = from_doc(row, "doc")?;
    device.device_id = Some(row.try_get("device_id")?);
    device.tenant_code = Some(row.try_get("tenant_code")?);
    device.group_id = row
        .try_get::<Option<i64>, _>("group_id")?
        .map(|id| id.to_string());
    device.user_id = row
        .try_get::<Option<i64>, _>("user_id")?
        .map(|id| id.to_string());
    device.device_type = Some(row.try_get("device_type")?);
    device.status = Some(row.try_get("status")?);
    device.etag = Some(row.try_get("etag")?);
    device.timestamp = from_micros(row.try_get("updated_at")?)?;
    Ok(device)
}

/// The state columns, for a `LEFT JOIN device_states s`.
pub(super) const STATE_COLUMNS: &str = "s.last_message_time, s.last_message_id, s.latitude, \
     s.longitude, s.speed, s.heading, s.altitude, s.gps_at, s.emergency_state, s.battery, \
     s.geofences, s.check_in_interval_minutes, s.check_in_paused, s.next_check_in_at";

pub(super) fn state_from_row(row: &AnyRow) -> StoreResult<DeviceState> {
    let position = match (
        row.try_get::<Option<f64>, _>("latitude")?,
        row.try_get::<Option<f64>, _>("longitude")?,
    ) {
        (Some(lat), Some(lon)) => Some(LastPosition {
            lat,
            lon,
            speed: row.try_get("speed")?,
            heading: row.try_get("heading")?,
            altitude: row.try_get("altitude")?,
            gps_timestamp: from_micros(row.try_get("gps_at")?)?,
        }),
        _ => None,
    };
    let geofences: Option<String> = row.try_get("geofences")?;
    let containing_geofences: Vec<GeofenceRef> = match geofences {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("device state geofences: {e}")))?,
        None => Vec::new(),
    };
    Ok(DeviceState {
        last_message_time: from_micros(row.try_get("last_message_time")?)?,
        last_message_id: row.try_get("last_message_id")?,
        last_position: position,
        emergency_state: row.try_get("emergency_state")?,
        battery_percentage: row.try_get("battery")?,
        containing_geofences,
        check_in_interval_minutes: row.try_get("check_in_interval_minutes")?,
        check_in_paused: row
            .try_get::<Option<i64>, _>("check_in_paused")?
            .unwrap_or(0)
            != 0,
        next_check_in_at: from_micros(row.try_get("next_check_in_at")?)?,
    })
}
