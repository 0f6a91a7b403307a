//! The actions people take on an alert (acknowledge, resolve, add a note). Each change
//! commits with its step on the alert's timeline and the alert as it now is on the live
//! stream (`WriteTx::announce_alert`), so a console replaces its copy.

use crate::domain::alert::{Alert, TimelineEntry};
use crate::domain::audit::Audit;
use crate::domain::ids::AlertId;
use crate::domain::tenant::TenantNode;
use crate::store::{AlertAction, Store, StoreResult};

/// Acts on alerts for the API.
pub struct AlertDesk<'a> {
    store: &'a Store,
}

impl<'a> AlertDesk<'a> {
    pub fn new(store: &'a Store) -> Self {
        Self { store }
    }

    /// Does `action` to alert `id` of `node` as `by`; answers the alert as it now is and
    /// the step recorded on its timeline.
    pub async fn act(
        &self,
        node: &TenantNode,
        id: AlertId,
        by: &str,
        action: AlertAction<'_>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<(Alert, TimelineEntry)> {
        self.store
            .act_on_alert(node, id, by, action, if_match, audit)
            .await
    }
}
