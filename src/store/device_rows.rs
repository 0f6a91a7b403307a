//! How a device row and its state row read (`devices d LEFT JOIN device_states s`): shared
//! by the device records (`devices.rs`) and the ingest lookups (`device_states.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::stored_time;
use super::{StoreError, StoreResult, from_micros, stored, to_doc};
use crate::domain::device::{AssignedUser, Device, DeviceFields};
use crate::domain::device_state::{DeviceState, LastPosition};
use crate::domain::ids::{DeviceId, GroupId, TenantCode, UserId};
use crate::domain::mo_message::GeofenceRef;
use crate::domain::serde_util::null_as_default;
use crate::domain::user::UserDetails;

/// The device columns, for `devices d`.
pub(super) const DEVICE_COLUMNS: &str = "d.device_id, d.tenant_code, d.group_id, d.user_id, \
     d.device_type, d.status, d.doc, d.etag, d.updated_at";

/// What `devices.doc` holds: the fields without a column (or a state row) of their own.
/// Documents written with the other keys (null) read the same.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct DeviceDoc {
    friendly_name: Option<String>,
    secondary_device_id: Option<String>,
    iridium_imei: Option<String>,
    sim_number: Option<String>,
    phone_number: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    tags: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_as_default")]
    properties: BTreeMap<String, String>,
}

/// The document of a device written with `fields`.
pub(super) fn device_doc(fields: &DeviceFields) -> StoreResult<String> {
    to_doc(&DeviceDoc {
        friendly_name: fields.friendly_name.clone(),
        secondary_device_id: fields.secondary_device_id.clone(),
        iridium_imei: fields.iridium_imei.clone(),
        sim_number: fields.sim_number.clone(),
        phone_number: fields.phone_number.clone(),
        tags: fields.tags.clone(),
        properties: fields.properties.clone(),
    })
}

/// A `devices` row as selected by `DEVICE_COLUMNS`.
#[derive(sqlx::FromRow)]
struct DeviceRow {
    device_id: String,
    tenant_code: String,
    group_id: Option<i64>,
    user_id: Option<i64>,
    device_type: String,
    status: String,
    doc: String,
    etag: String,
    updated_at: i64,
}

impl DeviceRow {
    fn into_device(self) -> StoreResult<Device> {
        let doc: DeviceDoc = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("device document: {e}")))?;
        let timestamp = stored_time(self.updated_at)?;
        let fields = DeviceFields {
            device_id: DeviceId::from_store(self.device_id),
            device_type: self.device_type,
            friendly_name: doc.friendly_name,
            user_id: self.user_id.map(UserId::new),
            group_id: self.group_id.map(GroupId::new),
            secondary_device_id: doc.secondary_device_id,
            iridium_imei: doc.iridium_imei,
            sim_number: doc.sim_number,
            phone_number: doc.phone_number,
            status: stored(&self.status)?,
            tags: doc.tags,
            properties: doc.properties,
            check_in_interval_minutes: None,
        };
        let tenant_code = TenantCode::from_store(self.tenant_code);
        Ok(Device::new(tenant_code, fields, self.etag, timestamp))
    }
}

/// The device as stored (without its state).
pub(super) fn device_from_row(row: &AnyRow) -> StoreResult<Device> {
    DeviceRow::from_row(row)?.into_device()
}

/// The assigned user's columns, for `ASSIGNED_USER_JOIN` (which needs `tenants t`, the
/// device's tenant, joined before it).
pub(super) const ASSIGNED_USER_COLUMNS: &str =
    "ut.code AS assigned_tenant_code, au.username AS assigned_username, au.doc AS assigned_doc";

/// The device's user, found only in the device's tenant or below it (`ut` is null for a
/// user anywhere else, and then nothing of theirs is read).
pub(super) const ASSIGNED_USER_JOIN: &str = "LEFT JOIN users au ON au.id = d.user_id
    LEFT JOIN tenants ut ON ut.code = au.tenant_code AND ut.path LIKE t.path || '%'";

#[derive(sqlx::FromRow)]
struct AssignedUserRow {
    user_id: Option<i64>,
    assigned_tenant_code: Option<String>,
    assigned_username: Option<String>,
    assigned_doc: Option<String>,
}

/// Whom the device's `user_id` names, as `ASSIGNED_USER_COLUMNS` read them.
pub(super) fn assigned_user_from_row(row: &AnyRow) -> StoreResult<Option<AssignedUser>> {
    let own = AssignedUserRow::from_row(row)?;
    let (Some(id), Some(tenant_code), Some(username), Some(doc)) = (
        own.user_id,
        own.assigned_tenant_code,
        own.assigned_username,
        own.assigned_doc,
    ) else {
        return Ok(None);
    };
    let details: UserDetails =
        serde_json::from_str(&doc).map_err(|e| StoreError::Corrupt(format!("user doc: {e}")))?;
    Ok(Some(AssignedUser {
        user_id: UserId::new(id).to_string(),
        tenant_code,
        username,
        first_name: details.first_name,
        last_name: details.last_name,
    }))
}

/// The state columns, for a `LEFT JOIN device_states s`.
pub(super) const STATE_COLUMNS: &str = "s.last_message_time, s.last_message_id, s.latitude, \
     s.longitude, s.speed, s.heading, s.altitude, s.gps_at, s.emergency_state, s.battery, \
     s.geofences, s.check_in_interval_minutes, s.check_in_paused, s.next_check_in_at, \
     s.silent_due_at, s.last_check_in_at";

/// A `device_states` row as selected by `STATE_COLUMNS`: every column optional (a LEFT
/// JOIN may find no state row).
#[derive(sqlx::FromRow)]
struct StateRow {
    last_message_time: Option<i64>,
    last_message_id: Option<i64>,
    latitude: Option<f64>,
    longitude: Option<f64>,
    speed: Option<f64>,
    heading: Option<f64>,
    altitude: Option<f64>,
    gps_at: Option<i64>,
    emergency_state: Option<String>,
    battery: Option<f64>,
    geofences: Option<String>,
    check_in_interval_minutes: Option<i64>,
    check_in_paused: Option<i64>,
    next_check_in_at: Option<i64>,
    silent_due_at: Option<i64>,
    last_check_in_at: Option<i64>,
}

impl StateRow {
    fn into_state(self) -> StoreResult<DeviceState> {
        let last_position = match (self.latitude, self.longitude) {
            (Some(lat), Some(lon)) => Some(LastPosition {
                lat,
                lon,
                speed: self.speed,
                heading: self.heading,
                altitude: self.altitude,
                gps_timestamp: from_micros(self.gps_at)?,
            }),
            _ => None,
        };
        let containing_geofences: Vec<GeofenceRef> = match self.geofences {
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("device state geofences: {e}")))?,
            None => Vec::new(),
        };
        Ok(DeviceState {
            last_message_time: from_micros(self.last_message_time)?,
            last_message_id: self.last_message_id,
            last_position,
            emergency_state: self.emergency_state.as_deref().map(stored).transpose()?,
            battery_percentage: self.battery,
            containing_geofences,
            check_in_interval_minutes: self.check_in_interval_minutes,
            check_in_paused: self.check_in_paused.unwrap_or(0) != 0,
            next_check_in_at: from_micros(self.next_check_in_at)?,
            silent_due_at: from_micros(self.silent_due_at)?,
            last_check_in_at: from_micros(self.last_check_in_at)?,
        })
    }
}

pub(super) fn state_from_row(row: &AnyRow) -> StoreResult<DeviceState> {
    StateRow::from_row(row)?.into_state()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documents written with every key of the API form (the column-backed ones null)
    /// read as the lean document does.
    #[test]
    fn documents_with_every_key_read_back() {
        let old = r#"{"DeviceId":null,"TenantCode":null,"DeviceType":null,"FriendlyName":"Van 3",
            "UserId":null,"GroupId":null,"SecondaryDeviceId":"van-3","IridiumImei":null,
            "SimNumber":null,"PhoneNumber":"+4712345678","Status":null,"Tags":{"A":"1"},
            "Properties":null,"CheckInIntervalMinutes":null,"LastMessageTime":null,
            "LastPosition":null,"EmergencyState":null,"BatteryPercentage":null,
            "ContainingGeofences":[],"Timestamp":null,"ETag":null}"#;
        let doc: DeviceDoc = serde_json::from_str(old).expect("reads");
        assert_eq!(doc.friendly_name.as_deref(), Some("Van 3"));
        assert_eq!(doc.secondary_device_id.as_deref(), Some("van-3"));
        assert_eq!(doc.phone_number.as_deref(), Some("+4712345678"));
        assert_eq!(doc.tags.get("A").map(String::as_str), Some("1"));
        assert!(doc.properties.is_empty());
        let fields = crate::domain::device::bare_fields("van-3");
        let written = device_doc(&fields).expect("writes");
        let back: DeviceDoc = serde_json::from_str(&written).expect("reads");
        assert_eq!(back.friendly_name, None);
    }
}
