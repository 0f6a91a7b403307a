//! Records an ancestor shares with its subtenants (`AppliesToSubtenants`: address book
//! contacts and lists, geofences) are visible below it but read-only there. One rule for
//! all of them, with one message that does not name the owner (the caller may have no
//! access to that tenant).

/// A write to a record the tenant only inherits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this {0} is shared by an ancestor tenant (AppliesToSubtenants) and is read-only here; \
     only that tenant can change it"
)]
pub struct SharedReadOnly(pub &'static str);

/// `Ok` when `tenant_code` owns the record (`owner`); a `what` names the record kind.
pub fn ensure_owner(
    owner: &str,
    tenant_code: &str,
    what: &'static str,
) -> Result<(), SharedReadOnly> {
    if owner == tenant_code {
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
        assert!(ensure_owner("1001", "1001", "contact").is_ok());
        let refused = ensure_owner("1000", "1001", "contact").unwrap_err();
        assert!(!refused.to_string().contains("1000"));
        assert!(refused.to_string().contains("contact"));
    }
}
