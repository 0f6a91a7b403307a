//! Records an ancestor shares with its subtenants (`AppliesToSubtenants`: address book
//! contacts and lists, geofences) are visible below it but read-only there. One rule for
//! all of them, with one message that does not name the owner (the caller may have no
//! access to that tenant).

use crate::domain::ids::TenantCode;

/// A write to a record the tenant only inherits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this {0} is shared by an ancestor tenant (AppliesToSubtenants) and is read-only here; \
     only that tenant can change it"
)]
pub struct SharedReadOnly(pub &'static str);

/// `Ok` when `tenant_code` owns the record (`owner`); a `what` names the record kind.
pub fn ensure_owner(
    owner: &TenantCode,
    tenant_code: &TenantCode,
    what: &'static str,
) -> Result<(), SharedReadOnly> {
    if tenant_code == owner {
        Ok(())
    } else {
        Err(SharedReadOnly(what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_writes_and_the_refusal_names_no_tenant() {
        let (root, code): (TenantCode, TenantCode) =
            ("1000".parse().unwrap(), "1001".parse().unwrap());
        assert!(ensure_owner(&code, &code, "contact").is_ok());
        let refused = ensure_owner(&root, &code, "contact").unwrap_err();
        assert!(!refused.to_string().contains("1000"));
        assert!(refused.to_string().contains("contact"));
    }
}
