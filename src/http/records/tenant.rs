//! The tenant record as clients send it.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::record::ServerFields;
use crate::domain::retention::{self, RetentionDays};
use crate::domain::serde_util::null_as_default;
use crate::domain::tenant::{DESCRIPTION_MAX_CHARS, Tenant, TenantFields};
use crate::domain::validation::{ValidationErrors, Validator};

/// A tenant (organisation). Read-only on write: `TenantCode`, `ParentTenantCode`,
/// `Timestamp`, `ETag`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Tenant", rename_all = "PascalCase")]
#[schema(as = Tenant)]
pub struct TenantRecord {
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
    #[serde(default, deserialize_with = "null_as_default")]
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

impl TenantRecord {
    /// Checks every rule; returns the tenant's settings as stored.
    pub fn validated(self) -> Result<TenantFields, ValidationErrors> {
        let mut v = Validator::new();
        let description = v.required("Description", self.description.as_deref());
        if let Some(d) = description {
            v.length("Description", Some(d), 1, DESCRIPTION_MAX_CHARS);
        }
        let description = description.map(str::to_string);
        v.email_list("AdminContacts", self.admin_contacts.as_deref());
        v.email_list("SalesContacts", self.sales_contacts.as_deref());
        v.time_zone("TimeZoneId", self.time_zone_id.as_deref());
        v.culture("CultureName", self.culture_name.as_deref());
        v.culture("DefaultUiLanguage", self.default_ui_language.as_deref());
        if let Some(Err(message)) = self
            .properties
            .get(retention::PROPERTY)
            .map(|d| RetentionDays::parse(d))
        {
            v.add(format!("Properties.{}", retention::PROPERTY), message);
        }
        v.finish()?;
        Ok(TenantFields {
            // `required` reported a missing description, so `finish` has returned.
            description: description.unwrap_or_default(),
            admin_contacts: self.admin_contacts,
            sales_contacts: self.sales_contacts,
            device_types: self.device_types,
            culture_name: self.culture_name,
            default_ui_language: self.default_ui_language,
            time_zone_id: self.time_zone_id,
            properties: self.properties,
        })
    }
}

impl ServerFields for TenantRecord {
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

impl From<&Tenant> for TenantRecord {
    fn from(tenant: &Tenant) -> Self {
        TenantRecord {
            tenant_code: Some(tenant.tenant_code.to_string()),
            description: Some(tenant.description.clone()),
            admin_contacts: tenant.admin_contacts.clone(),
            sales_contacts: tenant.sales_contacts.clone(),
            device_types: tenant.device_types.clone(),
            culture_name: tenant.culture_name.clone(),
            default_ui_language: tenant.default_ui_language.clone(),
            time_zone_id: tenant.time_zone_id.clone(),
            properties: tenant.properties.clone(),
            parent_tenant_code: tenant.parent_tenant_code.as_ref().map(|c| c.to_string()),
            timestamp: tenant.timestamp,
            etag: Some(tenant.etag.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::TenantCode;

    fn tenant(description: &str) -> TenantRecord {
        TenantRecord {
            description: Some(description.into()),
            ..Default::default()
        }
    }

    #[test]
    fn description_bounds() {
        assert_eq!(tenant("Acme").validated().unwrap().description, "Acme");
        assert!(tenant("").validated().is_err());
        assert!(tenant(&"x".repeat(250)).validated().is_ok());
        assert!(tenant(&"x".repeat(251)).validated().is_err());
        assert!(TenantRecord::default().validated().is_err());
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
    fn wire_form_matches_the_domain_form() {
        let fields = TenantFields {
            description: "Acme".into(),
            admin_contacts: Some("a@example.com".into()),
            sales_contacts: Some("s@example.com".into()),
            device_types: Some("Iridium".into()),
            culture_name: Some("en-GB".into()),
            default_ui_language: Some("en".into()),
            time_zone_id: Some("Europe/London".into()),
            properties: BTreeMap::from([("EnabledReports".into(), "All".into())]),
        };
        let tenant = Tenant::new(
            TenantCode::from_store("1001".into()),
            Some(TenantCode::from_store("1000".into())),
            fields,
            Some("2024-05-01T12:00:00Z".parse().unwrap()),
            "abc".into(),
        );
        let domain = serde_json::to_string(&tenant).unwrap();
        let record: TenantRecord = serde_json::from_str(&domain).unwrap();
        assert_eq!(serde_json::to_string(&record).unwrap(), domain);
        assert_eq!(
            serde_json::to_string(&TenantRecord::from(&tenant)).unwrap(),
            domain
        );
    }
}
