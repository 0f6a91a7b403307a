//! The device as clients write it (`POST`/`PUT`/`PATCH /V2/{t}/devices`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::device::{
    AssignedUser, Device, DeviceFields, DeviceStatus, MAX_CHECK_IN_MINUTES, is_iccid, is_imei,
    is_speed_limit,
};
use crate::domain::device_state::LastPosition;
use crate::domain::ids::{DeviceId, GroupId, MAX_DEVICE_ID_CHARS, UserId};
use crate::domain::mo_message::GeofenceRef;
use crate::domain::record::ServerFields;
use crate::domain::serde_util::null_as_default;
use crate::domain::validation::{ValidationErrors, Validator};

/// A tracked device. `DeviceId` is chosen by the client (often the IMEI) and is unique
/// within its tenant; with the tenant, it is the key in paths.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Device", rename_all = "PascalCase")]
#[schema(as = Device)]
pub struct DeviceRecord {
    #[schema(required = true, min_length = 1, example = "300234010753370")]
    pub device_id: Option<String>,
    /// The tenant the device belongs to (read-only; what a `subtenants=true` listing needs
    /// to address each device).
    #[schema(read_only, example = "1000")]
    pub tenant_code: Option<String>,
    #[schema(required = true, min_length = 1, example = "InReachMini")]
    pub device_type: Option<String>,
    pub friendly_name: Option<String>,
    /// The assigned user; must exist in the tenant's subtree.
    pub user_id: Option<String>,
    /// Must be a group of the same tenant.
    pub group_id: Option<String>,
    pub secondary_device_id: Option<String>,
    /// 15 digits.
    pub iridium_imei: Option<String>,
    /// ICCID: 18 to 22 digits.
    pub sim_number: Option<String>,
    /// Starts with + and a country code.
    pub phone_number: Option<String>,
    /// Active (default) or Inactive.
    #[schema(example = "Active", pattern = "^(Active|Inactive)$")]
    pub status: Option<String>,
    /// E.g. `VehicleType`, `SpeedLimitKmh` (a positive number).
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: BTreeMap<String, String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    /// Minutes without a message after which a `MissedCheckIn` is raised (0: no schedule).
    /// A PUT or PATCH that omits it (null) keeps the current interval. Also set by a
    /// `SendCheckInRequest` recipient's `Interval`.
    #[schema(minimum = 0, maximum = 10080, example = 60)]
    pub check_in_interval_minutes: Option<i64>,
    /// The person `UserId` names (read-only): their id, tenant, login and name, read with
    /// the device on `GET` (one record or the list). Null when the device has no user,
    /// when the user is not in the device's tenant or below it, and on the live
    /// stream's and webhooks' device events (which carry `UserId` alone).
    #[schema(read_only)]
    pub assigned_user: Option<AssignedUser>,
    /// The time of the newest message (read-only device state).
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub last_message_time: Option<Timestamp>,
    #[schema(read_only)]
    pub last_position: Option<LastPosition>,
    /// `None` or `Active` (read-only device state).
    #[schema(read_only)]
    pub emergency_state: Option<String>,
    /// From the newest message's `Properties.battery` (read-only device state).
    #[schema(read_only)]
    pub battery_percentage: Option<f64>,
    /// The geofences the device is in (read-only device state).
    #[schema(read_only)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub containing_geofences: Vec<GeofenceRef>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
}

/// `DeviceId` is the key: chosen on POST, fixed after (PUT takes the path's, PATCH may
/// not change it). The device state comes from messages.
impl ServerFields for DeviceRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[
        "DeviceId",
        "TenantCode",
        "AssignedUser",
        "LastMessageTime",
        "LastPosition",
        "EmergencyState",
        "BatteryPercentage",
        "ContainingGeofences",
        "Timestamp",
        "ETag",
    ];

    fn without_read_only(mut self) -> Self {
        self.tenant_code = None;
        self.assigned_user = None;
        self.last_message_time = None;
        self.last_position = None;
        self.emergency_state = None;
        self.battery_percentage = None;
        self.containing_geofences = Vec::new();
        self.timestamp = None;
        self.etag = None;
        self
    }
}

impl DeviceRecord {
    /// Checks every rule that needs no lookup; returns what the client set, parsed.
    /// `allowed_types` is the tenant's `DeviceTypes` list (empty: any type).
    pub fn validated(self, allowed_types: &[String]) -> Result<DeviceFields, ValidationErrors> {
        let mut v = Validator::new();
        let device_id = self.checked_device_id(&mut v);
        let device_type = self.checked_device_type(&mut v, allowed_types);
        v.length("FriendlyName", self.friendly_name.as_deref(), 0, 200);
        if let Some(imei) = self.iridium_imei.as_deref().filter(|s| !s.is_empty())
            && !is_imei(imei)
        {
            v.add("IridiumImei", "must be 15 digits");
        }
        if let Some(sim) = self.sim_number.as_deref().filter(|s| !s.is_empty())
            && !is_iccid(sim)
        {
            v.add("SimNumber", "must be an ICCID of 18 to 22 digits");
        }
        v.phone("PhoneNumber", self.phone_number.as_deref());
        let status = match self.status.as_deref() {
            None => Some(DeviceStatus::Active),
            Some(text) => {
                v.one_of("Status", Some(text), DeviceStatus::NAMES);
                text.parse().ok()
            }
        };
        let user_id = serial_id::<UserId>(&mut v, "UserId", self.user_id.as_deref());
        let group_id = serial_id::<GroupId>(&mut v, "GroupId", self.group_id.as_deref());
        if let Some(limit) = self.tags.get("SpeedLimitKmh")
            && !is_speed_limit(limit)
        {
            v.add("Tags.SpeedLimitKmh", "must be a positive number");
        }
        if self
            .check_in_interval_minutes
            .is_some_and(|m| !(0..=MAX_CHECK_IN_MINUTES).contains(&m))
        {
            v.add(
                "CheckInIntervalMinutes",
                format!("must be between 0 and {MAX_CHECK_IN_MINUTES} minutes"),
            );
        }
        v.finish()?;
        match (device_id, device_type, status, user_id, group_id) {
            (Some(device_id), Some(device_type), Some(status), Ok(user_id), Ok(group_id)) => {
                Ok(DeviceFields {
                    device_id,
                    device_type,
                    friendly_name: self.friendly_name,
                    user_id,
                    group_id,
                    secondary_device_id: self.secondary_device_id,
                    iridium_imei: self.iridium_imei,
                    sim_number: self.sim_number,
                    phone_number: self.phone_number,
                    status,
                    tags: self.tags,
                    properties: self.properties,
                    check_in_interval_minutes: self.check_in_interval_minutes,
                })
            }
            // Each `None`/`Err` above added its error, so `finish` returned it.
            _ => Err(ValidationErrors::single("DeviceId", "is required")),
        }
    }

    fn checked_device_id(&self, v: &mut Validator) -> Option<DeviceId> {
        let text = v.required("DeviceId", self.device_id.as_deref())?;
        let parsed = text.parse::<DeviceId>().ok();
        if parsed.is_none() {
            v.add(
                "DeviceId",
                format!("must be 1 to {MAX_DEVICE_ID_CHARS} characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"),
            );
        }
        parsed
    }

    fn checked_device_type(&self, v: &mut Validator, allowed_types: &[String]) -> Option<String> {
        let text = v.required("DeviceType", self.device_type.as_deref())?;
        if !allowed_types.is_empty() && !allowed_types.iter().any(|a| a == text) {
            v.add(
                "DeviceType",
                format!(
                    "must be one of the tenant's device types: {}",
                    allowed_types.join(", ")
                ),
            );
        }
        Some(text.to_string())
    }
}

/// An optional serial id given as text: absent or empty is none; anything else must be
/// decimal digits (`Err` when it is not, its error added).
fn serial_id<T: std::str::FromStr>(
    v: &mut Validator,
    field: &str,
    text: Option<&str>,
) -> Result<Option<T>, ()> {
    match text.filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(id) => match id.parse::<T>() {
            Ok(parsed) => Ok(Some(parsed)),
            Err(_) => {
                v.add(field, format!("'{id}' is not an id"));
                Err(())
            }
        },
    }
}

impl From<&Device> for DeviceRecord {
    fn from(device: &Device) -> Self {
        DeviceRecord {
            device_id: Some(device.device_id.to_string()),
            tenant_code: Some(device.tenant_code.to_string()),
            device_type: Some(device.device_type.clone()),
            friendly_name: device.friendly_name.clone(),
            user_id: device.user_id.map(|id| id.to_string()),
            group_id: device.group_id.map(|id| id.to_string()),
            secondary_device_id: device.secondary_device_id.clone(),
            iridium_imei: device.iridium_imei.clone(),
            sim_number: device.sim_number.clone(),
            phone_number: device.phone_number.clone(),
            status: Some(device.status.to_string()),
            tags: device.tags.clone(),
            properties: device.properties.clone(),
            check_in_interval_minutes: device.check_in_interval_minutes,
            assigned_user: device.assigned_user.clone(),
            last_message_time: device.last_message_time,
            last_position: device.last_position.clone(),
            emergency_state: device.emergency_state.map(|s| s.to_string()),
            battery_percentage: device.battery_percentage,
            containing_geofences: device.containing_geofences.clone(),
            timestamp: Some(device.timestamp),
            etag: Some(device.etag.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::device::sample_device;

    fn device() -> DeviceRecord {
        DeviceRecord {
            device_id: Some("300234010753370".into()),
            device_type: Some("InReach".into()),
            ..Default::default()
        }
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let device = sample_device("300234010753370");
        let domain = serde_json::to_string(&device).expect("serialises");
        let wire: DeviceRecord = serde_json::from_str(&domain).expect("reads as the wire record");
        assert_eq!(serde_json::to_string(&wire).expect("serialises"), domain);
        assert_eq!(DeviceRecord::from(&device), wire);
    }

    #[test]
    fn a_valid_record_parses_into_fields() {
        let fields = DeviceRecord {
            user_id: Some("4".into()),
            group_id: Some(String::new()),
            ..device()
        }
        .validated(&[])
        .expect("valid");
        assert_eq!(fields.status, DeviceStatus::Active);
        assert_eq!(fields.user_id, Some(UserId::new(4)));
        assert_eq!(fields.group_id, None);
        let device = sample_device("van-3");
        let fields = DeviceRecord::from(&device)
            .validated(&[])
            .expect("a stored device is valid");
        assert_eq!(fields, device.fields());
    }

    #[test]
    fn device_rules() {
        assert!(device().validated(&[]).is_ok());
        assert!(device().validated(&["InReach".into()]).is_ok());
        assert!(device().validated(&["Other".into()]).is_err());
        let bad = DeviceRecord {
            device_id: Some("has spaces".into()),
            iridium_imei: Some("123".into()),
            sim_number: Some("12ab".into()),
            phone_number: Some("0123".into()),
            status: Some("Lost".into()),
            user_id: Some("x".into()),
            tags: [("SpeedLimitKmh".to_string(), "-5".to_string())].into(),
            ..device()
        };
        let fields: Vec<_> = bad
            .validated(&[])
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(
            fields,
            [
                "DeviceId",
                "IridiumImei",
                "SimNumber",
                "PhoneNumber",
                "Status",
                "UserId",
                "Tags.SpeedLimitKmh"
            ]
        );
    }
}
