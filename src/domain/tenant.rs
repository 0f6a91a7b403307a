//! Tenant records and their validation.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::ids::TenantCode;

pub const ROOT_TENANT_CODE: &str = "1000";

/// The root tenant's code (`ROOT_TENANT_CODE`), which the server bootstraps.
pub fn root_tenant_code() -> TenantCode {
    TenantCode::from_store(ROOT_TENANT_CODE.to_string())
}
pub const DESCRIPTION_MAX_CHARS: usize = 250;

/// A tenant's settings as a client sets them, validated: what the store keeps as the
/// tenant's `doc` JSON document (PascalCase; other keys are ignored on reading).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TenantFields {
    pub description: String,
    pub admin_contacts: Option<String>,
    pub sales_contacts: Option<String>,
    pub device_types: Option<String>,
    pub culture_name: Option<String>,
    pub default_ui_language: Option<String>,
    pub time_zone_id: Option<String>,
    #[serde(default, deserialize_with = "super::serde_util::null_as_default")]
    pub properties: BTreeMap<String, String>,
}

/// A tenant (organisation) as stored and sent, in the API's key order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tenant {
    pub tenant_code: TenantCode,
    pub description: String,
    pub admin_contacts: Option<String>,
    pub sales_contacts: Option<String>,
    pub device_types: Option<String>,
    pub culture_name: Option<String>,
    pub default_ui_language: Option<String>,
    pub time_zone_id: Option<String>,
    pub properties: BTreeMap<String, String>,
    /// `None` for the root, and in answers to a caller who cannot reach the parent.
    pub parent_tenant_code: Option<TenantCode>,
    pub timestamp: Option<Timestamp>,
    #[serde(rename = "ETag")]
    pub etag: String,
}

impl Tenant {
    /// A tenant's code, parent and version (its columns) with its settings.
    pub fn new(
        tenant_code: TenantCode,
        parent_tenant_code: Option<TenantCode>,
        fields: TenantFields,
        timestamp: Option<Timestamp>,
        etag: String,
    ) -> Self {
        let TenantFields {
            description,
            admin_contacts,
            sales_contacts,
            device_types,
            culture_name,
            default_ui_language,
            time_zone_id,
            properties,
        } = fields;
        Tenant {
            tenant_code,
            description,
            admin_contacts,
            sales_contacts,
            device_types,
            culture_name,
            default_ui_language,
            time_zone_id,
            properties,
            parent_tenant_code,
            timestamp,
            etag,
        }
    }
}

/// Where a tenant sits in the hierarchy; the unit of access control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantNode {
    pub code: TenantCode,
    pub parent_code: Option<TenantCode>,
    /// Materialised path of codes, `/1000/1001/`: a subtree is a path prefix.
    pub path: String,
}

impl TenantNode {
    /// Whether this tenant is the tenant with path `ancestor_path` or one of its
    /// descendants: the tenant-scope rule.
    pub fn is_within(&self, ancestor_path: &str) -> bool {
        self.path.starts_with(ancestor_path)
    }

    pub fn child_path(&self, child_code: &TenantCode) -> String {
        format!("{}{child_code}/", self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> TenantCode {
        text.parse().expect("a tenant code")
    }

    #[test]
    fn subtree() {
        let root = TenantNode {
            code: root_tenant_code(),
            parent_code: None,
            path: "/1000/".into(),
        };
        let child = TenantNode {
            code: code("1001"),
            parent_code: Some(code("1000")),
            path: root.child_path(&code("1001")),
        };
        assert!(child.is_within(&root.path));
        assert!(!root.is_within(&child.path));
        assert!(root.is_within(&root.path));
    }
}
