//! How long MO messages are kept (DESIGN §15): a tenant's `MessageRetentionDays`
//! property, else the nearest ancestor's, else the server's `--message-retention-days`,
//! else for ever. Alerts, their timelines and the audit log keep their own retention.

use std::collections::HashMap;

use super::ids::TenantCode;
use super::tenant::Tenant;

/// The tenant property that sets it.
pub const PROPERTY: &str = "MessageRetentionDays";
/// A hundred years: anything longer is a typo, not a policy.
pub const MAX_DAYS: u32 = 36_500;

/// Days a message is kept, 1 to `MAX_DAYS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionDays(u32);

impl RetentionDays {
    pub fn new(days: u32) -> Option<Self> {
        (1..=MAX_DAYS).contains(&days).then_some(Self(days))
    }

    /// A property's value: a whole number of days within the limits.
    pub fn parse(text: &str) -> Result<Self, String> {
        text.trim()
            .parse::<u32>()
            .ok()
            .and_then(Self::new)
            .ok_or_else(|| format!("a whole number of days from 1 to {MAX_DAYS}"))
    }

    pub fn days(self) -> u32 {
        self.0
    }

    pub fn duration(self) -> jiff::SignedDuration {
        jiff::SignedDuration::from_hours(i64::from(self.0) * 24)
    }
}

/// The retention that applies to `code`'s messages among `tenants` (each by code): the
/// first of the tenant and its ancestors that sets the property, else `default`. A
/// stored value that does not parse (written before it was validated) is passed over.
pub fn effective(
    code: &TenantCode,
    tenants: &HashMap<TenantCode, Tenant>,
    default: Option<RetentionDays>,
) -> Option<RetentionDays> {
    let mut next = tenants.get(code);
    // The hierarchy is a tree; the bound only guards against a corrupt cycle.
    for _ in 0..tenants.len() {
        let Some(tenant) = next else { break };
        if let Some(days) = tenant
            .properties
            .get(PROPERTY)
            .and_then(|v| RetentionDays::parse(v).ok())
        {
            return Some(days);
        }
        next = tenant
            .parent_tenant_code
            .as_ref()
            .and_then(|parent| tenants.get(parent));
    }
    default
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::tenant::TenantFields;

    fn tenant(code: &str, parent: Option<&str>, days: Option<&str>) -> Tenant {
        let mut fields = TenantFields::default();
        if let Some(days) = days {
            fields.properties.insert(PROPERTY.into(), days.into());
        }
        Tenant::new(
            TenantCode::from_store(code.into()),
            parent.map(|p| TenantCode::from_store(p.into())),
            fields,
            None,
            String::new(),
        )
    }

    #[test]
    fn values_within_the_limits_parse() {
        assert_eq!(RetentionDays::parse("30").map(RetentionDays::days), Ok(30));
        assert_eq!(
            RetentionDays::parse(" 36500 ").map(RetentionDays::days),
            Ok(36_500)
        );
        for bad in ["0", "-5", "36501", "7.5", "thirty", "", "99999999999"] {
            assert!(RetentionDays::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_nearest_setting_wins_then_the_default() {
        let tenants: HashMap<_, _> = [
            tenant("1000", None, None),
            tenant("1001", Some("1000"), Some("30")),
            tenant("1002", Some("1001"), None),
            tenant("1003", Some("1001"), Some("365")),
            tenant("1004", Some("1000"), Some("not a number")),
        ]
        .into_iter()
        .map(|t| (t.tenant_code.clone(), t))
        .collect();
        let days = |code: &str, default| {
            effective(&TenantCode::from_store(code.into()), &tenants, default)
                .map(RetentionDays::days)
        };
        assert_eq!(days("1000", None), None);
        assert_eq!(days("1000", RetentionDays::new(90)), Some(90));
        assert_eq!(days("1001", None), Some(30));
        assert_eq!(days("1002", None), Some(30), "inherited");
        assert_eq!(days("1003", None), Some(365), "its own");
        assert_eq!(
            days("1004", RetentionDays::new(90)),
            Some(90),
            "unparsable passed over"
        );
    }
}
