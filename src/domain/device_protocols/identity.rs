//! Which device a gateway identifier may name (docs/decisions.md, "One device per
//! gateway identifier"). A gateway finds a device by `DeviceId`, `IridiumImei` or
//! `SecondaryDeviceId` across its token's subtree, so:
//!
//! - an `IridiumImei` or `SecondaryDeviceId` (a *physical* identifier: the modem, the
//!   phone) names one device in the whole installation — no other device has it as its
//!   IridiumImei, SecondaryDeviceId or DeviceId;
//! - a `DeviceId` is unique within its tenant only (two customers may both have a
//!   `truck1`), but is no other device's physical identifier.
//!
//! A device write that breaks either rule is refused ([`IdentifierConflict`]); what was
//! stored before the rule is left to the gateway lookup, which refuses an identifier
//! naming several devices instead of picking one.

use super::DeviceKey;
use crate::domain::ids::DeviceId;
use crate::domain::tenant::TenantNode;

/// A device's gateway identifiers, as written or as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceIdentifiers {
    pub device_id: String,
    pub iridium_imei: Option<String>,
    pub secondary_device_id: Option<String>,
}

/// Why a device write is refused: its `field` holds `value`, which is the `other_field`
/// of another device (`other_device` in `other_tenant`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentifierConflict {
    pub field: DeviceKey,
    pub value: String,
    pub other_field: DeviceKey,
    pub other_tenant: TenantNode,
    pub other_device: DeviceId,
}

impl DeviceIdentifiers {
    /// The physical identifiers set (an empty text is none), IridiumImei first.
    pub fn physical(&self) -> Vec<(DeviceKey, &str)> {
        [
            (DeviceKey::IridiumImei, self.iridium_imei.as_deref()),
            (
                DeviceKey::SecondaryDeviceId,
                self.secondary_device_id.as_deref(),
            ),
        ]
        .into_iter()
        .filter_map(|(key, value)| Some((key, value.filter(|v| !v.is_empty())?)))
        .collect()
    }

    /// The distinct physical values, sorted.
    pub fn physical_values(&self) -> Vec<&str> {
        let mut values: Vec<&str> = self.physical().into_iter().map(|(_, v)| v).collect();
        values.sort_unstable();
        values.dedup();
        values
    }

    /// Every distinct value (DeviceId and physical), sorted: the order a write takes
    /// their locks in, so two writes never wait for each other in a cycle.
    pub fn all_values(&self) -> Vec<&str> {
        let mut values = self.physical_values();
        values.push(&self.device_id);
        values.sort_unstable();
        values.dedup();
        values
    }

    /// The value of `key`, if set.
    fn get(&self, key: DeviceKey) -> Option<&str> {
        match key {
            DeviceKey::DeviceId => Some(self.device_id.as_str()),
            DeviceKey::IridiumImei => self.iridium_imei.as_deref(),
            DeviceKey::SecondaryDeviceId => self.secondary_device_id.as_deref(),
        }
        .filter(|v| !v.is_empty())
    }

    /// The first clash of these identifiers with another device's (`other`): one of
    /// ours that is one of its, except DeviceId against DeviceId. As (our field, the
    /// value, its field).
    pub fn clash_with(&self, other: &DeviceIdentifiers) -> Option<(DeviceKey, String, DeviceKey)> {
        const PHYSICAL: [DeviceKey; 2] = [DeviceKey::IridiumImei, DeviceKey::SecondaryDeviceId];
        const ANY: [DeviceKey; 3] = [
            DeviceKey::IridiumImei,
            DeviceKey::SecondaryDeviceId,
            DeviceKey::DeviceId,
        ];
        let ours = PHYSICAL.iter().map(|&key| (key, &ANY[..]));
        let ours = ours.chain(std::iter::once((DeviceKey::DeviceId, &PHYSICAL[..])));
        for (key, theirs) in ours {
            let Some(value) = self.get(key) else { continue };
            if let Some(&other_key) = theirs.iter().find(|&&k| other.get(k) == Some(value)) {
                return Some((key, value.to_string(), other_key));
            }
        }
        None
    }
}

impl IdentifierConflict {
    /// The refusal's text for a caller whose scope is the subtree at `visible_path`: the
    /// other device is named only when it is inside it.
    pub fn detail(&self, visible_path: &str) -> String {
        let (field, value) = (self.field.as_str(), &self.value);
        if self.other_tenant.is_within(visible_path) {
            format!(
                "{field} `{value}` is already the {} of device `{}` in tenant {}: a gateway \
                 identifier names one device",
                self.other_field.as_str(),
                self.other_device,
                self.other_tenant.code,
            )
        } else {
            format!(
                "{field} `{value}` already identifies another device: an IridiumImei or \
                 SecondaryDeviceId names one device in the whole installation, and is no \
                 other device's DeviceId"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::TenantCode;

    fn ids(device_id: &str, imei: Option<&str>, secondary: Option<&str>) -> DeviceIdentifiers {
        DeviceIdentifiers {
            device_id: device_id.into(),
            iridium_imei: imei.map(Into::into),
            secondary_device_id: secondary.map(Into::into),
        }
    }

    #[test]
    fn device_ids_may_repeat_physical_identifiers_may_not() {
        let truck = ids("truck1", None, None);
        assert_eq!(truck.clash_with(&ids("truck1", None, None)), None);
        let imei = ids("a", Some("300234010753370"), None);
        assert_eq!(
            imei.clash_with(&ids("300234010753370", None, None)),
            Some((
                DeviceKey::IridiumImei,
                "300234010753370".into(),
                DeviceKey::DeviceId
            ))
        );
        assert_eq!(
            ids("300234010753370", None, None).clash_with(&imei),
            Some((
                DeviceKey::DeviceId,
                "300234010753370".into(),
                DeviceKey::IridiumImei
            ))
        );
        let phone = ids("b", None, Some("x-1"));
        assert_eq!(
            phone.clash_with(&ids("c", Some("x-1"), None)),
            Some((
                DeviceKey::SecondaryDeviceId,
                "x-1".into(),
                DeviceKey::IridiumImei
            ))
        );
        // Empty texts are no identifiers.
        assert_eq!(
            ids("d", Some(""), Some("")).clash_with(&ids("e", Some(""), Some(""))),
            None
        );
    }

    #[test]
    fn values_are_sorted_and_distinct() {
        let device = ids("z", Some("1"), Some("1"));
        assert_eq!(device.physical_values(), ["1"]);
        assert_eq!(device.all_values(), ["1", "z"]);
        assert_eq!(ids("a", None, Some("")).all_values(), ["a"]);
    }

    #[test]
    fn the_other_device_is_named_only_inside_the_scope() {
        let conflict = IdentifierConflict {
            field: DeviceKey::IridiumImei,
            value: "300234010753370".into(),
            other_field: DeviceKey::DeviceId,
            other_tenant: TenantNode {
                code: TenantCode::from_store("1002".into()),
                parent_code: None,
                path: "/1000/1002/".into(),
            },
            other_device: DeviceId::from_store("truck1".into()),
        };
        let named = conflict.detail("/1000/");
        assert!(
            named.contains("truck1") && named.contains("1002"),
            "{named}"
        );
        let neutral = conflict.detail("/1000/1001/");
        assert!(
            !neutral.contains("truck1") && !neutral.contains("1002"),
            "{neutral}"
        );
        assert!(neutral.starts_with("IridiumImei"), "{neutral}");
    }
}
