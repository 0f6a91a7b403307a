//! Cross-tenant collections (`/V2/{t}/collections`): a named set of devices from any
//! tenants the owner can access. Reports take one as `CollectionId`; users name the
//! collections they may use across tenants in `CrossTenantCollections`.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ids::TenantCode;
use crate::domain::record::ServerFields;
use crate::domain::validation::{ValidationErrors, Validator};

pub const NAME_MAX_CHARS: usize = 250;
/// Most devices one collection names.
pub const MAX_DEVICES: usize = 10_000;

/// A collection. Read-only on write: `CollectionId`, `TenantCode`, `Timestamp`, `ETag`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Collection {
    /// Assigned by the server.
    #[schema(read_only, example = "7")]
    pub collection_id: Option<String>,
    /// The owning tenant.
    #[schema(read_only, value_type = Option<String>)]
    pub tenant_code: Option<TenantCode>,
    #[schema(
        required = true,
        min_length = 1,
        max_length = 250,
        example = "Night shift vans"
    )]
    pub name: Option<String>,
    /// Devices of any tenants the caller can access (each once).
    #[serde(
        default,
        deserialize_with = "crate::domain::serde_util::null_as_default"
    )]
    #[schema(nullable)]
    pub device_ids: Vec<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
}

impl Collection {
    /// Checks every rule; returns the collection as stored (ids trimmed, duplicates
    /// dropped, order kept). Whether the devices exist is the store's to find out.
    pub fn validated(self) -> Result<Collection, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("Name", self.name.as_deref()) {
            v.length("Name", Some(name.trim()), 1, NAME_MAX_CHARS);
        }
        if self.device_ids.len() > MAX_DEVICES {
            v.add("DeviceIds", format!("at most {MAX_DEVICES} devices"));
        }
        let mut ids: Vec<String> = Vec::with_capacity(self.device_ids.len());
        for (i, id) in self.device_ids.iter().enumerate() {
            let id = id.trim();
            if id.is_empty() {
                v.add(format!("DeviceIds[{i}]"), "must not be empty");
            } else if !ids.iter().any(|known| known == id) {
                ids.push(id.to_string());
            }
        }
        v.finish()?;
        let name = self.name.as_deref().map(|n| n.trim().to_string());
        Ok(Collection {
            name,
            device_ids: ids,
            ..self.without_read_only()
        })
    }

    /// The ids named in a user's `CrossTenantCollections` (comma-delimited).
    pub fn ids_in(cross_tenant_collections: Option<&str>) -> Vec<String> {
        cross_tenant_collections
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }
}

impl ServerFields for Collection {
    const READ_ONLY_FIELDS: &'static [&'static str] =
        &["CollectionId", "TenantCode", "Timestamp", "ETag"];

    fn without_read_only(mut self) -> Self {
        self.collection_id = None;
        self.tenant_code = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_every_field() {
        let bad = Collection {
            name: Some("  ".into()),
            device_ids: vec!["a".into(), " ".into()],
            ..Default::default()
        };
        let errors = bad.validated().unwrap_err();
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["Name", "DeviceIds[1]"]);
        let good = Collection {
            name: Some(" Vans ".into()),
            device_ids: vec!["a".into(), "b".into(), "a ".into()],
            collection_id: Some("9".into()),
            ..Default::default()
        }
        .validated()
        .unwrap();
        assert_eq!(good.name.as_deref(), Some("Vans"));
        assert_eq!(good.device_ids, ["a", "b"]);
        assert_eq!(good.collection_id, None);
    }

    #[test]
    fn cross_tenant_ids() {
        assert_eq!(Collection::ids_in(Some(" 3, 5,,")), ["3", "5"]);
        assert!(Collection::ids_in(None).is_empty());
    }
}
