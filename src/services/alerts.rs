//! The actions people take on an alert (acknowledge, resolve, add a note) and what the
//! live stream shows of every change to one: the alert as it now is, so a console
//! replaces its copy. Each change commits with its step on the alert's timeline and, on
//! PostgreSQL, the stream's announcement (`WriteTx::announce_alert`); on SQLite (one
//! process) it is published to this process's hub after the commit.

use crate::domain::audit::Audit;
use std::sync::Arc;

use super::stream::{EventHub, Payload};
use crate::domain::alert::{Alert, TimelineEntry};
use crate::domain::ids::AlertId;
use crate::domain::tenant::TenantNode;
use crate::store::{AlertAction, Backend, Store, StoreResult};

/// Acts on alerts for the API.
pub struct AlertDesk<'a> {
    store: &'a Store,
    hub: &'a EventHub,
}

impl<'a> AlertDesk<'a> {
    pub fn new(store: &'a Store, hub: &'a EventHub) -> Self {
        Self { store, hub }
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
        let (alert, entry) = self
            .store
            .act_on_alert(node, id, by, action, if_match, audit)
            .await?;
        publish_alert(self.store, self.hub, node, &alert);
        Ok((alert, entry))
    }
}

/// After the commit of a change to `alert`: SQLite publishes it to this process's hub;
/// on PostgreSQL the transaction announced it and every process's hub hears it from the
/// database, so nothing is published here.
pub fn publish_alert(store: &Store, hub: &EventHub, node: &TenantNode, alert: &Alert) {
    if store.backend() == Backend::Sqlite {
        hub.publish(&node.path, vec![Payload::Alert(Arc::new(alert.clone()))]);
    }
}
