//! Devices, device groups and the deleted-devices log (docs/api.md, "Devices").

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::device_state::{DeviceState, LastPosition};
use super::ids::{DeviceId, GroupId, TenantCode, UserId};
use super::mo_message::{EmergencyState, GeofenceRef};
use super::serde_util::null_as_default;

closed_set! {
    /// A device's `Status` (`Active` unless given).
    pub enum DeviceStatus {
        Active = "Active",
        Inactive = "Inactive",
    }
}

/// Most minutes a check-in interval may have (a week).
pub const MAX_CHECK_IN_MINUTES: i64 = 7 * 24 * 60;

/// What a client sets on a device, its rules checked: what the store writes.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceFields {
    pub device_id: DeviceId,
    pub device_type: String,
    pub friendly_name: Option<String>,
    pub user_id: Option<UserId>,
    pub group_id: Option<GroupId>,
    pub secondary_device_id: Option<String>,
    pub iridium_imei: Option<String>,
    pub sim_number: Option<String>,
    pub phone_number: Option<String>,
    pub status: DeviceStatus,
    pub tags: BTreeMap<String, String>,
    pub properties: BTreeMap<String, String>,
    /// `None`: a write keeps the current interval (a new device has none).
    pub check_in_interval_minutes: Option<i64>,
}

/// The person a device is assigned to (`UserId`), as device reads show them beside it:
/// the user record's own field names. Read in the device's query (no lookup per device),
/// and only when the user is in the device's tenant or below it: a user of any other
/// tenant is never shown through a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct AssignedUser {
    #[schema(min_length = 1, example = "4")]
    pub user_id: String,
    /// The user's tenant (the device's, or one of its subtenants).
    #[schema(min_length = 1, example = "1000")]
    pub tenant_code: String,
    /// The user's login e-mail.
    #[schema(min_length = 1, example = "jane@example.com")]
    pub username: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
}

/// A tracked device as stored, with its state. `DeviceId` is chosen by the client (often
/// the IMEI) and is unique within its tenant; with the tenant, it is the key in paths.
/// Serialised in the API's form (the stream and its log carry it so, and read it back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Device {
    pub device_id: DeviceId,
    pub tenant_code: TenantCode,
    pub device_type: String,
    pub friendly_name: Option<String>,
    pub user_id: Option<UserId>,
    pub group_id: Option<GroupId>,
    pub secondary_device_id: Option<String>,
    pub iridium_imei: Option<String>,
    pub sim_number: Option<String>,
    pub phone_number: Option<String>,
    pub status: DeviceStatus,
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    pub check_in_interval_minutes: Option<i64>,
    /// Whom `user_id` names, when a read looked them up (null from writes and the
    /// stream, which carry the id alone).
    #[serde(default)]
    pub assigned_user: Option<AssignedUser>,
    pub last_message_time: Option<Timestamp>,
    pub last_position: Option<LastPosition>,
    /// As the device state holds it.
    pub emergency_state: Option<EmergencyState>,
    pub battery_percentage: Option<f64>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub containing_geofences: Vec<GeofenceRef>,
    pub timestamp: Timestamp,
    #[serde(rename = "ETag")]
    pub etag: String,
}

impl Device {
    /// The device as a write leaves it: `fields` in `tenant_code`, at version `etag`
    /// written at `timestamp`, without state (`with_state` adds it).
    pub fn new(
        tenant_code: TenantCode,
        fields: DeviceFields,
        etag: String,
        timestamp: Timestamp,
    ) -> Self {
        Device {
            device_id: fields.device_id,
            tenant_code,
            device_type: fields.device_type,
            friendly_name: fields.friendly_name,
            user_id: fields.user_id,
            group_id: fields.group_id,
            secondary_device_id: fields.secondary_device_id,
            iridium_imei: fields.iridium_imei,
            sim_number: fields.sim_number,
            phone_number: fields.phone_number,
            status: fields.status,
            tags: fields.tags,
            properties: fields.properties,
            check_in_interval_minutes: fields.check_in_interval_minutes,
            assigned_user: None,
            last_message_time: None,
            last_position: None,
            emergency_state: None,
            battery_percentage: None,
            containing_geofences: Vec::new(),
            timestamp,
            etag,
        }
    }

    /// Shows the device's state on the record.
    pub fn with_state(mut self, state: &DeviceState) -> Self {
        self.check_in_interval_minutes = state.check_in_interval_minutes;
        self.last_message_time = state.last_message_time;
        self.last_position = state.last_position.clone();
        self.emergency_state = state.emergency_state;
        self.battery_percentage = state.battery_percentage;
        self.containing_geofences = state.containing_geofences.clone();
        self
    }

    /// What a client set (the interval as the state has it).
    pub fn fields(&self) -> DeviceFields {
        DeviceFields {
            device_id: self.device_id.clone(),
            device_type: self.device_type.clone(),
            friendly_name: self.friendly_name.clone(),
            user_id: self.user_id,
            group_id: self.group_id,
            secondary_device_id: self.secondary_device_id.clone(),
            iridium_imei: self.iridium_imei.clone(),
            sim_number: self.sim_number.clone(),
            phone_number: self.phone_number.clone(),
            status: self.status,
            tags: self.tags.clone(),
            properties: self.properties.clone(),
            check_in_interval_minutes: self.check_in_interval_minutes,
        }
    }
}

/// Whether `limit` (a `SpeedLimitKmh` tag) is a positive number.
pub fn is_speed_limit(limit: &str) -> bool {
    limit.parse::<f64>().is_ok_and(|n| n.is_finite() && n > 0.0)
}

/// Whether `imei` is an Iridium IMEI: 15 digits.
pub fn is_imei(imei: &str) -> bool {
    imei.len() == 15 && imei.chars().all(|c| c.is_ascii_digit())
}

/// Whether `sim` is an ICCID: 18 to 22 digits.
pub fn is_iccid(sim: &str) -> bool {
    (18..=22).contains(&sim.len()) && sim.chars().all(|c| c.is_ascii_digit())
}

/// The comma-separated `DeviceTypes` of a tenant, as a list.
pub fn device_type_list(device_types: Option<&str>) -> Vec<String> {
    device_types
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// What a client sets on a group, its rules checked.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupFields {
    pub name: String,
    pub description: Option<String>,
    pub properties: BTreeMap<String, String>,
}

/// A group of devices as stored (notifications and reports can target a group).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Group {
    pub group_id: GroupId,
    /// Unique within the tenant.
    pub name: String,
    pub description: Option<String>,
    pub properties: BTreeMap<String, String>,
    pub timestamp: Timestamp,
    #[serde(rename = "ETag")]
    pub etag: String,
}

impl Group {
    /// What a client set.
    pub fn fields(&self) -> GroupFields {
        GroupFields {
            name: self.name.clone(),
            description: self.description.clone(),
            properties: self.properties.clone(),
        }
    }
}

/// A device removed from the registry, as the deleted-devices log keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct DeletedDevice {
    #[schema(value_type = Option<String>)]
    pub tenant_code: Option<TenantCode>,
    pub tenant_description: Option<String>,
    #[schema(value_type = Option<String>)]
    pub device_id: Option<DeviceId>,
    pub device_type: Option<String>,
    pub friendly_name: Option<String>,
    /// The last assigned user's e-mail, redacted (`j***@example.com`).
    pub username: Option<String>,
    pub secondary_device_id: Option<String>,
    pub iridium_imei: Option<String>,
    pub sim_number: Option<String>,
    pub phone_number: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    pub date_deleted: Timestamp,
    /// The deleting user's e-mail, redacted.
    pub deleted_by: Option<String>,
}

/// `jane@example.com` → `j***@example.com`; anything without an `@` → `***`.
pub fn redact_email(email: &str) -> String {
    match email.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}***@{domain}")
        }
        None => "***".to_string(),
    }
}

/// A device of `device_id` with nothing else set (type `InReach`), for tests.
#[cfg(test)]
pub fn bare_fields(device_id: &str) -> DeviceFields {
    DeviceFields {
        device_id: DeviceId::from_store(device_id.to_string()),
        device_type: "InReach".to_string(),
        friendly_name: None,
        user_id: None,
        group_id: None,
        secondary_device_id: None,
        iridium_imei: None,
        sim_number: None,
        phone_number: None,
        status: DeviceStatus::Active,
        tags: BTreeMap::new(),
        properties: BTreeMap::new(),
        check_in_interval_minutes: None,
    }
}

/// `bare_fields` as stored in tenant 1000, for tests.
#[cfg(test)]
pub fn bare_device(device_id: &str) -> Device {
    let tenant_code = TenantCode::from_store("1000".to_string());
    let etag = "W/\"1\"".to_string();
    Device::new(
        tenant_code,
        bare_fields(device_id),
        etag,
        Timestamp::UNIX_EPOCH,
    )
}

/// A fully populated device, for tests.
#[cfg(test)]
pub fn sample_device(device_id: &str) -> Device {
    Device {
        device_id: DeviceId::from_store(device_id.to_string()),
        tenant_code: TenantCode::from_store("1000".to_string()),
        device_type: "InReach".to_string(),
        friendly_name: Some("Van 3".to_string()),
        user_id: Some(UserId::new(4)),
        group_id: Some(GroupId::new(12)),
        secondary_device_id: Some("van-3".to_string()),
        iridium_imei: Some("300234010753370".to_string()),
        sim_number: Some("8988169312345678901".to_string()),
        phone_number: Some("+4712345678".to_string()),
        status: DeviceStatus::Active,
        tags: [("SpeedLimitKmh".to_string(), "80".to_string())].into(),
        properties: [("Colour".to_string(), "red".to_string())].into(),
        check_in_interval_minutes: Some(60),
        assigned_user: Some(AssignedUser {
            user_id: "4".to_string(),
            tenant_code: "1000".to_string(),
            username: "jane@example.com".to_string(),
            first_name: Some("Jane".to_string()),
            last_name: None,
        }),
        last_message_time: Some(Timestamp::from_second(1_700_000_000).expect("in range")),
        last_position: Some(LastPosition {
            lat: 59.9,
            lon: 10.7,
            speed: Some(12.5),
            heading: None,
            altitude: None,
            gps_timestamp: None,
        }),
        emergency_state: Some(EmergencyState::Clear),
        battery_percentage: Some(80.0),
        containing_geofences: vec![GeofenceRef {
            geofence_id: "3".to_string(),
            geofence_name: "Depot".to_string(),
        }],
        timestamp: Timestamp::from_second(1_700_000_100).expect("in range"),
        etag: "W/\"1\"".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction() {
        assert_eq!(redact_email("jane@example.com"), "j***@example.com");
        assert_eq!(redact_email("élodie@example.fr"), "é***@example.fr");
        assert_eq!(redact_email("nonsense"), "***");
    }

    #[test]
    fn device_types_list() {
        assert_eq!(device_type_list(Some("A, B,,C ")), ["A", "B", "C"]);
        assert!(device_type_list(None).is_empty());
    }

    #[test]
    fn a_device_reads_back_as_it_was_written() {
        let device = sample_device("300234010753370");
        let json = serde_json::to_string(&device).expect("serialises");
        let back: Device = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, device);
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&json)
                .expect("an object")
                .keys()
                .cloned()
                .collect();
        assert_eq!(keys.first().map(String::as_str), Some("DeviceId"));
    }

    #[test]
    fn a_deleted_device_keeps_its_form() {
        let json = r#"{"TenantCode":"1000","TenantDescription":"Root","DeviceId":"gone-1","DeviceType":"X","FriendlyName":null,"Username":"j***@example.com","SecondaryDeviceId":null,"IridiumImei":null,"SimNumber":null,"PhoneNumber":null,"DateDeleted":"2026-03-01T10:00:00Z","DeletedBy":"a***@example.com"}"#;
        let read: DeletedDevice = serde_json::from_str(json).expect("reads");
        assert_eq!(read.device_id.as_deref(), Some("gone-1"));
        assert_eq!(serde_json::to_string(&read).expect("serialises"), json);
    }
}
