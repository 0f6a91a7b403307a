//! Tenant records and their validation.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::record::ServerFields;
use super::validation::{ValidationErrors, Validator};

pub const ROOT_TENANT_CODE: &str = "1000";
pub const DESCRIPTION_MAX_CHARS: usize = 250;

/// A tenant (organisation). Read-only on write: `TenantCode`, `ParentTenantCode`,
/// `Timestamp`, `ETag`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Tenant {
    /// Tenant var code: a numeric string of at least 4 digits, assigned by the server.
    #[schema(read_only, example = "1001")]
    pub tenant_code: Option<String>,
    /// Tenant name.
    #[schema(
        required = true,
        min_length = 1,
        max_length = 250,
        example = "Acme Field Services"
    )]
    pub description: Option<String>,
    /// Semicolon-separated list of e-mail addresses.
    pub admin_contacts: Option<String>,
    /// Semicolon-separated list of e-mail addresses.
    pub sales_contacts: Option<String>,
    /// Comma-separated device types the tenant can provision and manage.
    pub device_types: Option<String>,
    /// Culture for date formatting in a portal (e.g. `en-GB`).
    pub culture_name: Option<String>,
    /// Default UI language for new users; empty means browser language.
    pub default_ui_language: Option<String>,
    /// IANA (`Europe/London`) or Windows (`GMT Standard Time`) time zone id.
    pub time_zone_id: Option<String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "super::serde_util::null_as_default")]
    pub properties: BTreeMap<String, String>,
    /// Returned only when the caller can access the parent tenant.
    #[schema(read_only)]
    pub parent_tenant_code: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
}

impl Tenant {
    /// Checks every rule; returns the tenant as stored.
    pub fn validated(self) -> Result<Tenant, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(d) = v.required("Description", self.description.as_deref()) {
            v.length("Description", Some(d), 1, DESCRIPTION_MAX_CHARS);
        }
        v.email_list("AdminContacts", self.admin_contacts.as_deref());
        v.email_list("SalesContacts", self.sales_contacts.as_deref());
        v.time_zone("TimeZoneId", self.time_zone_id.as_deref());
        v.culture("CultureName", self.culture_name.as_deref());
        v.culture("DefaultUiLanguage", self.default_ui_language.as_deref());
        v.finish()?;
        Ok(self.without_read_only())
    }
}

impl ServerFields for Tenant {
    const READ_ONLY_FIELDS: &'static [&'static str] =
        &["TenantCode", "ParentTenantCode", "Timestamp", "ETag"];

    fn without_read_only(mut self) -> Self {
        self.tenant_code = None;
        self.parent_tenant_code = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

/// Where a tenant sits in the hierarchy; the unit of access control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantNode {
    pub code: String,
    pub parent_code: Option<String>,
    /// Materialised path of codes, `/1000/1001/`: a subtree is a path prefix.
    pub path: String,
}

impl TenantNode {
    /// Whether this tenant is the tenant with path `ancestor_path` or one of its
    /// descendants: the tenant-scope rule.
    pub fn is_within(&self, ancestor_path: &str) -> bool {
        self.path.starts_with(ancestor_path)
    }

    pub fn child_path(&self, child_code: &str) -> String {
        format!("{}{child_code}/", self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(description: &str) -> Tenant {
        Tenant {
            description: Some(description.into()),
            ..Default::default()
        }
    }

    #[test]
    fn description_bounds() {
        assert!(tenant("Acme").validated().is_ok());
        assert!(tenant("").validated().is_err());
        assert!(tenant(&"x".repeat(250)).validated().is_ok());
        assert!(tenant(&"x".repeat(251)).validated().is_err());
        assert!(Tenant::default().validated().is_err());
    }

    #[test]
    fn contacts_zone_culture() {
        let mut t = tenant("Acme");
        t.admin_contacts = Some("a@example.com; b@example.org".into());
        t.time_zone_id = Some("GMT Standard Time".into());
        t.culture_name = Some("en-GB".into());
        assert!(t.clone().validated().is_ok());
        t.sales_contacts = Some("a@example.com;nope".into());
        t.time_zone_id = Some("Nowhere/Special".into());
        t.culture_name = Some("en_GB!".into());
        assert_eq!(t.validated().unwrap_err().0.len(), 3);
    }

    #[test]
    fn subtree() {
        let root = TenantNode {
            code: "1000".into(),
            parent_code: None,
            path: "/1000/".into(),
        };
        let child = TenantNode {
            code: "1001".into(),
            parent_code: Some("1000".into()),
            path: root.child_path("1001"),
        };
        assert!(child.is_within(&root.path));
        assert!(!root.is_within(&child.path));
        assert!(root.is_within(&root.path));
    }
}
