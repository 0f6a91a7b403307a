//! Devices, device groups and the deleted-devices log (docs/api.md, "Devices").

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::device_state::{DeviceState, LastPosition};
use super::ids::{DeviceId, MAX_DEVICE_ID_CHARS};
use super::mo_message::GeofenceRef;
use super::record::ServerFields;
use super::serde_util::null_as_default;
use super::validation::{ValidationErrors, Validator};

closed_set! {
    /// A device's `Status` (`Active` unless given).
    pub enum DeviceStatus {
        Active = "Active",
        Inactive = "Inactive",
    }
}

/// A tracked device. `DeviceId` is chosen by the client (often the IMEI) and is unique
/// within its tenant; with the tenant, it is the key in paths.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Device {
    #[schema(required = true, example = "300234010753370")]
    pub device_id: Option<String>,
    /// The tenant the device belongs to (read-only; what a `subtenants=true` listing needs
    /// to address each device).
    #[schema(read_only, example = "1000")]
    pub tenant_code: Option<String>,
    #[schema(required = true, example = "InReachMini")]
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

/// Most minutes a check-in interval may have (a week).
pub const MAX_CHECK_IN_MINUTES: i64 = 7 * 24 * 60;

/// `DeviceId` is the key: chosen on POST, fixed after (PUT takes the path's, PATCH may
/// not change it). The device state comes from messages.
impl ServerFields for Device {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[
        "DeviceId",
        "TenantCode",
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

impl Device {
    /// Shows the device's state on the record.
    pub fn with_state(mut self, state: &DeviceState) -> Self {
        self.check_in_interval_minutes = state.check_in_interval_minutes;
        self.last_message_time = state.last_message_time;
        self.last_position = state.last_position.clone();
        self.emergency_state = state.emergency_state.clone();
        self.battery_percentage = state.battery_percentage;
        self.containing_geofences = state.containing_geofences.clone();
        self
    }
}

impl Device {
    /// Checks every rule that needs no lookup; returns the device as stored.
    /// `allowed_types` is the tenant's `DeviceTypes` list (empty: any type).
    pub fn validated(self, allowed_types: &[String]) -> Result<Device, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(id) = v.required("DeviceId", self.device_id.as_deref())
            && id.parse::<DeviceId>().is_err()
        {
            v.add(
                "DeviceId",
                format!("must be 1 to {MAX_DEVICE_ID_CHARS} characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"),
            );
        }
        if let Some(t) = v.required("DeviceType", self.device_type.as_deref())
            && !allowed_types.is_empty()
            && !allowed_types.iter().any(|a| a == t)
        {
            v.add(
                "DeviceType",
                format!(
                    "must be one of the tenant's device types: {}",
                    allowed_types.join(", ")
                ),
            );
        }
        v.length("FriendlyName", self.friendly_name.as_deref(), 0, 200);
        if let Some(imei) = self.iridium_imei.as_deref().filter(|s| !s.is_empty())
            && !(imei.len() == 15 && imei.chars().all(|c| c.is_ascii_digit()))
        {
            v.add("IridiumImei", "must be 15 digits");
        }
        if let Some(sim) = self.sim_number.as_deref().filter(|s| !s.is_empty())
            && !((18..=22).contains(&sim.len()) && sim.chars().all(|c| c.is_ascii_digit()))
        {
            v.add("SimNumber", "must be an ICCID of 18 to 22 digits");
        }
        v.phone("PhoneNumber", self.phone_number.as_deref());
        v.one_of("Status", self.status.as_deref(), DeviceStatus::NAMES);
        for (field, value) in [("UserId", &self.user_id), ("GroupId", &self.group_id)] {
            if let Some(id) = value.as_deref().filter(|s| !s.is_empty())
                && id.parse::<i64>().is_err()
            {
                v.add(field, format!("'{id}' is not an id"));
            }
        }
        if let Some(limit) = self.tags.get("SpeedLimitKmh")
            && !limit.parse::<f64>().is_ok_and(|n| n.is_finite() && n > 0.0)
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
        Ok(self.without_read_only())
    }

    pub fn status_or_default(&self) -> &str {
        self.status
            .as_deref()
            .unwrap_or(DeviceStatus::Active.as_str())
    }

    pub fn user_id_number(&self) -> Option<i64> {
        self.user_id.as_deref().and_then(|s| s.parse().ok())
    }

    pub fn group_id_number(&self) -> Option<i64> {
        self.group_id.as_deref().and_then(|s| s.parse().ok())
    }
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

/// A group of devices (notifications and reports can target a group).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Group {
    #[schema(read_only, example = "7")]
    pub group_id: Option<String>,
    /// Unique within the tenant.
    #[schema(required = true, min_length = 1, max_length = 100)]
    pub name: Option<String>,
    pub description: Option<String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
}

impl Group {
    /// Checks every rule; returns the group as stored.
    pub fn validated(self) -> Result<Group, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("Name", self.name.as_deref()) {
            v.length("Name", Some(name.trim()), 1, 100);
        }
        v.length("Description", self.description.as_deref(), 0, 1000);
        v.finish()?;
        Ok(self.without_read_only())
    }
}

impl ServerFields for Group {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["GroupId", "Timestamp", "ETag"];

    fn without_read_only(mut self) -> Self {
        self.group_id = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

/// A device removed from the registry, as the deleted-devices log keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct DeletedDevice {
    pub tenant_code: Option<String>,
    pub tenant_description: Option<String>,
    pub device_id: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> Device {
        Device {
            device_id: Some("300234010753370".into()),
            device_type: Some("InReach".into()),
            ..Default::default()
        }
    }

    #[test]
    fn redaction() {
        assert_eq!(redact_email("jane@example.com"), "j***@example.com");
        assert_eq!(redact_email("élodie@example.fr"), "é***@example.fr");
        assert_eq!(redact_email("nonsense"), "***");
    }

    #[test]
    fn device_rules() {
        assert!(device().validated(&[]).is_ok());
        assert!(device().validated(&["InReach".into()]).is_ok());
        assert!(device().validated(&["Other".into()]).is_err());
        let bad = Device {
            device_id: Some("has spaces".into()),
            iridium_imei: Some("123".into()),
            sim_number: Some("12ab".into()),
            phone_number: Some("0123".into()),
            status: Some("Lost".into()),
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
                "Tags.SpeedLimitKmh"
            ]
        );
    }

    #[test]
    fn device_types_list() {
        assert_eq!(device_type_list(Some("A, B,,C ")), ["A", "B", "C"]);
        assert!(device_type_list(None).is_empty());
    }
}
