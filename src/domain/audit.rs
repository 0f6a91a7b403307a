//! The audit log: who did what to which record, when and from where. An entry is
//! written in the transaction of the change it describes (`store/audit_log.rs`), so it
//! exists exactly when its change does. It names things, never their contents: no
//! password, token, secret or message body ever enters it.

use std::fmt;
use std::net::IpAddr;

use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::ids::TenantCode;
use super::tenant::TenantNode;
use super::time::now;

closed_set! {
    /// What was done.
    pub enum AuditAction {
        Create = "Create",
        Update = "Update",
        Delete = "Delete",
        /// A password verified (a Basic login that was not served from the cache, or a
        /// session opened).
        Login = "Login",
        /// A wrong password, a refusal while locked, or a disabled account's login.
        LoginFailed = "LoginFailed",
        /// A session or token ended before its time.
        Revoke = "Revoke",
        /// Alert actions.
        Acknowledge = "Acknowledge",
        Resolve = "Resolve",
        Note = "Note",
        /// A delivery sent again at an operator's request.
        Retry = "Retry",
        /// A person's data exported (`GET …/users/{id}/export`).
        Export = "Export",
        /// A person erased (`POST …/users/{id}/erase`).
        Erase = "Erase",
    }
}

closed_set! {
    /// What kind of record it was done to.
    pub enum ResourceType {
        Tenant = "Tenant",
        User = "User",
        Profile = "Profile",
        Contact = "Contact",
        DistributionList = "DistributionList",
        Geofence = "Geofence",
        Notification = "Notification",
        Webhooks = "Webhooks",
        Device = "Device",
        Group = "Group",
        RiskRegion = "RiskRegion",
        Collection = "Collection",
        ExternalLink = "ExternalLink",
        ApiToken = "ApiToken",
        Session = "Session",
        Alert = "Alert",
        Delivery = "Delivery",
        EscalationPolicy = "EscalationPolicy",
        MonitoringSession = "MonitoringSession",
    }
}

/// A closed set documented as its texts (what `#[derive(ToSchema)]` of a plain enum
/// gives).
fn names_schema(
    description: &str,
    names: &'static [&'static str],
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .description(Some(description))
        .enum_values(Some(names.iter().copied()))
        .into()
}

impl utoipa::PartialSchema for AuditAction {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        names_schema("What was done.", AuditAction::NAMES)
    }
}

impl ToSchema for AuditAction {}

impl utoipa::PartialSchema for ResourceType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        names_schema("What kind of record it was done to.", ResourceType::NAMES)
    }
}

impl ToSchema for ResourceType {}

/// Who acted: a user (by username) or an API token (`token:<Name>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor(String);

impl Actor {
    pub fn user(username: &str) -> Self {
        Actor(username.to_string())
    }

    pub fn token(name: &str) -> Self {
        Actor(format!("token:{name}"))
    }

    /// As the caller already names itself (`Principal::actor_name`).
    pub fn named(name: String) -> Self {
        Actor(name)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Who is acting, from where, in which tenant: what an audited write is given, so the
/// store can describe the change in the change's own transaction.
#[derive(Debug, Clone)]
pub struct Audit {
    actor: Actor,
    client: Option<IpAddr>,
    tenant_code: TenantCode,
    tenant_path: String,
}

impl Audit {
    /// `tenant` is where the entry is listed: the path tenant of the request (for a
    /// login, the user's home tenant).
    pub fn new(actor: Actor, client: Option<IpAddr>, tenant: &TenantNode) -> Self {
        Self::in_tenant(actor, client, &tenant.code, &tenant.path)
    }

    /// `new`, given the tenant's code and materialised path.
    pub fn in_tenant(
        actor: Actor,
        client: Option<IpAddr>,
        tenant_code: &TenantCode,
        tenant_path: &str,
    ) -> Self {
        Self {
            actor,
            client,
            tenant_code: tenant_code.clone(),
            tenant_path: tenant_path.to_string(),
        }
    }

    /// The entry for one change, stamped now.
    pub fn entry(
        &self,
        action: AuditAction,
        resource_type: ResourceType,
        resource_id: impl fmt::Display,
    ) -> AuditEntry {
        AuditEntry {
            audit_entry_id: None,
            at: now(),
            tenant_code: self.tenant_code.clone(),
            tenant_path: self.tenant_path.clone(),
            actor: self.actor.as_str().to_string(),
            client_address: self.client.map(|c| c.to_string()),
            action,
            resource_type,
            resource_id: Some(resource_id.to_string()),
        }
    }
}

/// One entry of `GET /V2/{t}/auditlog`. Every field is set by the server.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct AuditEntry {
    // None until the entry is stored.
    #[schema(example = "42")]
    pub audit_entry_id: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub at: Timestamp,
    /// The tenant the change was made in (the request's path tenant; a login's home tenant).
    #[schema(value_type = Option<String>)]
    pub tenant_code: TenantCode,
    #[serde(skip)]
    pub tenant_path: String,
    /// A username, or `token:<Name>` for an API token.
    #[schema(value_type = Option<String>)]
    pub actor: String,
    /// The client's address (the TCP peer, or behind a `--trusted-proxy` the address it
    /// names).
    pub client_address: Option<String>,
    pub action: AuditAction,
    pub resource_type: ResourceType,
    /// The record's id (a tenant's code, a device's DeviceId, a number otherwise).
    pub resource_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for action in AuditAction::ALL {
            assert_eq!(action.as_str().parse::<AuditAction>(), Ok(*action));
            assert_eq!(
                serde_json::to_value(action).unwrap(),
                serde_json::json!(action.as_str())
            );
        }
        for kind in ResourceType::ALL {
            assert_eq!(kind.as_str().parse::<ResourceType>(), Ok(*kind));
        }
        assert!("create".parse::<AuditAction>().is_err());
    }

    #[test]
    fn an_entry_names_who_where_and_what() {
        let node = TenantNode {
            code: "1001".parse().unwrap(),
            parent_code: Some("1000".parse().unwrap()),
            path: "/1000/1001/".into(),
        };
        let audit = Audit::new(
            Actor::token("Deploy"),
            Some("10.1.2.3".parse().unwrap()),
            &node,
        );
        let entry = audit.entry(AuditAction::Delete, ResourceType::Geofence, 7);
        assert_eq!(entry.actor, "token:Deploy");
        assert_eq!(entry.client_address.as_deref(), Some("10.1.2.3"));
        assert_eq!(entry.tenant_path, "/1000/1001/");
        assert_eq!(entry.resource_id.as_deref(), Some("7"));
        let json = serde_json::to_value(&entry).unwrap();
        assert!(json.get("TenantPath").is_none());
        assert_eq!(json["ResourceType"], "Geofence");
    }
}
