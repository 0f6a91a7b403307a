//! Roles and the permissions they grant (docs/api.md, "Access").

use std::fmt;
use std::str::FromStr;

/// A user's role (`UserRoleId`). Ordered from most to least privileged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Administrator,
    Manager,
    User,
    ReadOnly,
}

/// Something a request may need to be allowed to do. Named so handlers read as policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Create, update and delete subtenants.
    ManageTenants,
    /// Create, update and delete users and their profiles.
    ManageUsers,
    /// Tenant configuration: address book, geofences, notifications, webhooks, links.
    ManageConfiguration,
    /// Devices and groups, including the deleted-devices log.
    AccessAllDevices,
    /// Device traffic: post MO messages, queue MT messages and report their progress.
    DeviceMessages,
    /// Acknowledge and resolve alerts.
    HandleAlerts,
    /// Every itinerary in scope: read, change, delete, and decide `ApprovalState`.
    ManageItineraries,
    /// One's own itineraries (created by the caller or naming the caller as a traveler):
    /// create, change, delete. Reading one's own needs only `Read`.
    KeepOwnItineraries,
    /// Read anything in scope.
    Read,
    /// Read the audit log (Administrators only).
    ReadAuditLog,
}

impl Role {
    pub const ALL: [Role; 4] = [
        Role::Administrator,
        Role::Manager,
        Role::User,
        Role::ReadOnly,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Administrator => "Administrator",
            Role::Manager => "Manager",
            Role::User => "User",
            Role::ReadOnly => "ReadOnly",
        }
    }

    pub fn grants(self, permission: Permission) -> bool {
        use Permission::*;
        match self {
            Role::Administrator => true,
            Role::Manager => !matches!(permission, ManageTenants | ReadAuditLog),
            Role::User => matches!(
                permission,
                Read | DeviceMessages | HandleAlerts | KeepOwnItineraries
            ),
            Role::ReadOnly => matches!(permission, Read),
        }
    }

    /// Whether a holder of `self` may give `other` to somebody: never a role above one's own.
    pub fn may_assign(self, other: Role) -> bool {
        self.rank() <= other.rank()
    }

    /// Whether `self` is strictly above `other`.
    pub fn outranks(self, other: Role) -> bool {
        self.rank() < other.rank()
    }

    fn rank(self) -> u8 {
        match self {
            Role::Administrator => 0,
            Role::Manager => 1,
            Role::User => 2,
            Role::ReadOnly => 3,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown role '{0}'")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownRole(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_permissions() {
        assert!(Role::Administrator.grants(Permission::ManageTenants));
        assert!(!Role::Manager.grants(Permission::ManageTenants));
        assert!(Role::Manager.grants(Permission::AccessAllDevices));
        assert!(!Role::User.grants(Permission::ManageUsers));
        assert!(Role::ReadOnly.grants(Permission::Read));
        assert!(!Role::ReadOnly.grants(Permission::DeviceMessages));
        assert!(Role::Manager.grants(Permission::ManageItineraries));
        assert!(!Role::User.grants(Permission::ManageItineraries));
        assert!(Role::User.grants(Permission::KeepOwnItineraries));
        assert!(!Role::ReadOnly.grants(Permission::KeepOwnItineraries));
    }

    #[test]
    fn no_escalation() {
        assert!(Role::Manager.may_assign(Role::User));
        assert!(!Role::Manager.may_assign(Role::Administrator));
        assert_eq!("readonly".parse::<Role>().unwrap(), Role::ReadOnly);
    }
}
