//! The rules ingest evaluates for a tenant — its enabled notifications (expressions
//! parsed, time zones resolved) and the geofences visible from it (shapes built) —
//! cached per tenant and reloaded when the database's rules version moves (any process
//! changing a geofence or notification moves it, in the same transaction).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use jiff::tz::TimeZone;

use crate::domain::events::{Expression, parse_expression};
use crate::domain::geofence::Shape;
use crate::domain::ids::{DeviceId, GroupId, NotificationId, TenantCode};
use crate::domain::mo_message::GeofenceRef;
use crate::domain::notification::{EventNotification, Severity};
use crate::domain::tenant::TenantNode;
use crate::domain::time::resolve_time_zone;
use crate::store::{Store, StoreResult, StoredGeofence, StoredNotification, WriteTx};

/// A notification ready to evaluate.
#[derive(Debug, Clone)]
pub struct CompiledNotification {
    pub id: NotificationId,
    /// `None`: tenant level (applies by `DeviceType`/`Devices`); else this group's.
    pub group_id: Option<GroupId>,
    pub record: EventNotification,
    /// The record's `Severity` (`Info` when it names none).
    pub severity: Severity,
    pub expression: Expression,
    pub zone: TimeZone,
    devices: Option<HashSet<String>>,
}

impl CompiledNotification {
    /// Whether it applies to a device of this type and group.
    pub fn applies_to(
        &self,
        device_id: &DeviceId,
        device_type: &str,
        group_id: Option<GroupId>,
    ) -> bool {
        if self.record.notification_disabled {
            return false;
        }
        match self.group_id {
            Some(group) => group_id == Some(group),
            None => {
                let type_ok = self
                    .record
                    .device_type
                    .as_deref()
                    .filter(|t| !t.is_empty())
                    .is_none_or(|t| t == device_type);
                let device_ok = self
                    .devices
                    .as_ref()
                    .is_none_or(|d| d.contains(device_id.as_str()));
                type_ok && device_ok
            }
        }
    }
}

/// A geofence ready to test positions against.
#[derive(Debug, Clone)]
pub struct CompiledGeofence {
    pub reference: GeofenceRef,
    pub shape: Shape,
}

/// Everything ingest evaluates for one tenant's devices.
#[derive(Debug, Default)]
pub struct TenantRules {
    pub notifications: Vec<CompiledNotification>,
    pub geofences: Vec<CompiledGeofence>,
}

impl TenantRules {
    /// The geofences containing a position, in id order.
    pub fn containing(&self, lat: f64, lon: f64) -> Vec<GeofenceRef> {
        self.geofences
            .iter()
            .filter(|g| g.shape.contains(lat, lon))
            .map(|g| g.reference.clone())
            .collect()
    }
}

/// The per-tenant cache.
#[derive(Default)]
pub struct RulesCache {
    entries: RwLock<HashMap<TenantCode, (i64, Arc<TenantRules>)>>,
}

impl RulesCache {
    /// The rules of the tenant `node` as of now.
    pub async fn get(&self, store: &Store, node: &TenantNode) -> StoreResult<Arc<TenantRules>> {
        let version = store.rules_version().await?;
        if let Some(rules) = self.cached(node, version) {
            return Ok(rules);
        }
        let rules = compile(
            store.tenant_notifications(&node.code).await?,
            store.list_geofences(&node.code, &node.path).await?,
        );
        Ok(self.keep(node, version, rules))
    }

    /// The rules of the tenant `node` at rules version `version` (read by the caller in
    /// `tx`). A miss reads through `tx`'s own connection, never a second one from the
    /// pool: on PostgreSQL, as many concurrent batches as the pool has connections, each
    /// holding one in its transaction and asking for another (the first batches after a
    /// start or a rules change all miss), waited for each other until the pool's timeout.
    pub async fn get_at(
        &self,
        tx: &mut WriteTx,
        node: &TenantNode,
        version: i64,
    ) -> StoreResult<Arc<TenantRules>> {
        if let Some(rules) = self.cached(node, version) {
            return Ok(rules);
        }
        let rules = compile(
            tx.tenant_notifications(&node.code).await?,
            tx.list_geofences(&node.code, &node.path).await?,
        );
        Ok(self.keep(node, version, rules))
    }

    /// The tenant's rules as last cached, with their version, without reading the store:
    /// for work done before a transaction that checks the version inside it.
    pub fn latest(&self, node: &TenantNode) -> Option<(i64, Arc<TenantRules>)> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&node.code)
            .map(|(version, rules)| (*version, rules.clone()))
    }

    fn cached(&self, node: &TenantNode, version: i64) -> Option<Arc<TenantRules>> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&node.code)
            .filter(|(cached, _)| *cached == version)
            .map(|(_, rules)| rules.clone())
    }

    fn keep(&self, node: &TenantNode, version: i64, rules: TenantRules) -> Arc<TenantRules> {
        let rules = Arc::new(rules);
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(node.code.clone(), (version, rules.clone()));
        rules
    }
}

fn compile(notifications: Vec<StoredNotification>, geofences: Vec<StoredGeofence>) -> TenantRules {
    let notifications = notifications
        .into_iter()
        .filter_map(|n| {
            // Stored expressions parsed when written; one that no longer does (a grammar
            // change) is skipped rather than stopping every other rule.
            let expression = match parse_expression(&n.record.events_expression) {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!(notification = %n.id, error = %e, "stored expression does not parse");
                    return None;
                }
            };
            let zone = n
                .record
                .time_zone_id
                .as_deref()
                .and_then(resolve_time_zone)
                .unwrap_or(TimeZone::UTC);
            let ids = n.record.device_ids();
            Some(CompiledNotification {
                id: n.id,
                group_id: n.group_id,
                devices: (!ids.is_empty()).then(|| ids.into_iter().collect()),
                severity: n.record.severity(),
                expression,
                zone,
                record: n.record,
            })
        })
        .collect();
    let geofences = geofences
        .into_iter()
        .filter_map(|g| {
            let shape = g.geofence.shape()?;
            Some(CompiledGeofence {
                reference: GeofenceRef {
                    geofence_id: g.id.to_string(),
                    geofence_name: g.geofence.name.clone(),
                },
                shape,
            })
        })
        .collect();
    TenantRules {
        notifications,
        geofences,
    }
}
