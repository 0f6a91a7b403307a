//! Roles and the permissions they grant (docs/api.md, "Access").

use super::closed_set::{NotInSet, closed_set};
use super::ids::UserId;

closed_set! {
    /// A user's role (`UserRoleId`). Ordered from most to least privileged.
    pub enum Role {
        Administrator = "Administrator",
        Manager = "Manager",
        User = "User",
        ReadOnly = "ReadOnly",
    }
}

closed_set! {
    /// Something a request may need to be allowed to do. Named so handlers read as
    /// policy; the text is what clients use (API tokens' `Permissions`).
    pub enum Permission {
        /// Create, update and delete subtenants.
        ManageTenants = "ManageTenants",
        /// Create, update and delete users and their profiles.
        ManageUsers = "ManageUsers",
        /// Tenant configuration: address book, geofences, notifications, webhooks, links.
        ManageConfiguration = "ManageConfiguration",
        /// Devices and groups, including the deleted-devices log.
        AccessAllDevices = "AccessAllDevices",
        /// Device traffic: post MO messages, queue MT messages and report their progress.
        DeviceMessages = "DeviceMessages",
        /// Acknowledge and resolve alerts.
        HandleAlerts = "HandleAlerts",
        /// Every itinerary in scope: read, change, delete, and decide `ApprovalState`.
        ManageItineraries = "ManageItineraries",
        /// One's own itineraries (created by the caller or naming the caller as a
        /// traveler): create, change, delete. Reading one's own needs only `Read`.
        KeepOwnItineraries = "KeepOwnItineraries",
        /// Read anything in scope.
        Read = "Read",
        /// Read the audit log (Administrators only).
        ReadAuditLog = "ReadAuditLog",
    }
}

impl Permission {
    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of permissions: what a caller may do (a role's, or an API token's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Permissions(u16);

impl Permissions {
    pub fn contains(self, permission: Permission) -> bool {
        self.0 & permission.bit() != 0
    }

    pub fn with(self, permission: Permission) -> Self {
        Permissions(self.0 | permission.bit())
    }

    pub fn without(self, permission: Permission) -> Self {
        Permissions(self.0 & !permission.bit())
    }

    pub fn is_subset_of(self, other: Permissions) -> bool {
        self.0 & !other.0 == 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// In the order of `Permission::ALL`.
    pub fn iter(self) -> impl Iterator<Item = Permission> {
        Permission::ALL
            .iter()
            .copied()
            .filter(move |p| self.contains(*p))
    }

    pub fn names(self) -> Vec<String> {
        self.iter().map(|p| p.as_str().to_string()).collect()
    }

    /// The least privileged role granting all of these: a token's rank when it manages
    /// users (it never assigns a role above it), never above its creator's role.
    pub fn least_role(self) -> Role {
        Role::ALL
            .iter()
            .copied()
            .rev()
            .find(|role| self.is_subset_of(role.permissions()))
            .unwrap_or(Role::Administrator)
    }
}

impl FromIterator<Permission> for Permissions {
    fn from_iter<I: IntoIterator<Item = Permission>>(iter: I) -> Self {
        iter.into_iter()
            .fold(Permissions::default(), Permissions::with)
    }
}

impl Role {
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

    pub fn permissions(self) -> Permissions {
        Permission::ALL
            .iter()
            .copied()
            .filter(|p| self.grants(*p))
            .collect()
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

    /// A role as a client writes it (`UserRoleId`): any letter case, as the API has
    /// always accepted. What is stored and sent back is the exact text.
    pub fn from_client(text: &str) -> Result<Role, NotInSet> {
        Role::ALL
            .iter()
            .copied()
            .find(|r| r.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| NotInSet {
                set: "Role",
                text: text.to_string(),
                members: Role::NAMES,
            })
    }
}

/// Whether a caller may send one device's traffic (its MO messages; its monitoring
/// session's start, change, end and check-ins): anyone with `DeviceMessages`, for any
/// device in their scope; and a user, whatever their role, for a device assigned to them
/// (`Device.UserId`): the person using the worker app acts for their own device (DESIGN
/// §12), an SOS included, even as `ReadOnly`. An API token (`caller` `None`) is never
/// that person. Scope is not decided here: the device is the path tenant's, found
/// within the caller's subtree.
pub fn may_send_for_device(
    permissions: Permissions,
    caller: Option<UserId>,
    assigned_to: Option<UserId>,
) -> bool {
    permissions.contains(Permission::DeviceMessages) || (caller.is_some() && caller == assigned_to)
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
    fn a_user_may_send_for_the_device_assigned_to_them() {
        let read_only = Role::ReadOnly.permissions();
        let me = Some(UserId::new(7));
        assert!(may_send_for_device(read_only, me, me));
        assert!(!may_send_for_device(read_only, me, Some(UserId::new(8))));
        assert!(!may_send_for_device(read_only, me, None));
        assert!(
            !may_send_for_device(read_only, None, None),
            "a token is nobody's"
        );
        assert!(may_send_for_device(Role::User.permissions(), me, None));
    }

    #[test]
    fn permission_sets() {
        let posting: Permissions = [Permission::DeviceMessages].into_iter().collect();
        assert!(posting.contains(Permission::DeviceMessages));
        assert!(!posting.contains(Permission::Read));
        assert!(posting.is_subset_of(Role::User.permissions()));
        assert_eq!(posting.least_role(), Role::User);
        assert_eq!(Role::Manager.permissions().least_role(), Role::Manager);
        assert_eq!(Permissions::default().least_role(), Role::ReadOnly);
        assert_eq!(
            [Permission::ManageTenants]
                .into_iter()
                .collect::<Permissions>()
                .least_role(),
            Role::Administrator
        );
        assert_eq!(
            "HandleAlerts".parse::<Permission>(),
            Ok(Permission::HandleAlerts)
        );
        assert!("handlealerts".parse::<Permission>().is_err());
    }

    #[test]
    fn no_escalation() {
        assert!(Role::Manager.may_assign(Role::User));
        assert!(!Role::Manager.may_assign(Role::Administrator));
        assert_eq!(Role::from_client("readonly").unwrap(), Role::ReadOnly);
        assert!("readonly".parse::<Role>().is_err());
    }
}
