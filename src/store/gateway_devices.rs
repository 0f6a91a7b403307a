//! What the device gateways look up, and the rule that keeps it unambiguous
//! (`domain::device_protocols::identity`; docs/decisions.md, "One device per gateway identifier").
//!
//! A gateway finds a device by any of its identifiers (`DeviceId`, `IridiumImei`,
//! `SecondaryDeviceId`) across a tenant subtree. The document fields are read with the
//! expression their index (migration 0046) is built on.
//!
//! `device_identifiers` (migration 0048) binds each physical identifier (IridiumImei,
//! SecondaryDeviceId) to the one device that has it: its primary key is the identifier.
//! A device write locks a row of every identifier it writes (DeviceId too, a row with no
//! device that the write removes again) before it checks the other devices, so two
//! writes that could clash take turns on PostgreSQL (SQLite's one writer already does),
//! and the second sees the first's device.

use sqlx::{AnyConnection, FromRow};

use super::{Backend, Store, StoreError, StoreResult};
use crate::domain::device_protocols::DeviceKey;
use crate::domain::device_protocols::identity::{DeviceIdentifiers, IdentifierConflict};
use crate::domain::ids::{DeviceId, TenantCode};
use crate::domain::tenant::TenantNode;

/// A device a gateway identifier names: its tenant and `DeviceId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayDevice {
    pub tenant_code: TenantCode,
    pub device_id: DeviceId,
}

/// A `GatewayDevice` as selected.
#[derive(sqlx::FromRow)]
struct GatewayDeviceRow {
    tenant_code: String,
    device_id: String,
}

impl From<GatewayDeviceRow> for GatewayDevice {
    fn from(row: GatewayDeviceRow) -> Self {
        Self {
            tenant_code: TenantCode::from_store(row.tenant_code),
            device_id: DeviceId::from_store(row.device_id),
        }
    }
}

/// Another device sharing one of a written device's identifiers, with its tenant.
#[derive(sqlx::FromRow)]
struct ClashRow {
    device_id: String,
    tenant_code: String,
    parent_code: Option<String>,
    path: String,
    iridium_imei: Option<String>,
    secondary_device_id: Option<String>,
}

/// The indexed expression of a lookup key, per backend.
fn key_expression(backend: Backend, key: DeviceKey) -> &'static str {
    match (backend, key) {
        (_, DeviceKey::DeviceId) => "d.device_id",
        (Backend::Sqlite, DeviceKey::IridiumImei) => "json_extract(d.doc, '$.IridiumImei')",
        (Backend::Sqlite, DeviceKey::SecondaryDeviceId) => {
            "json_extract(d.doc, '$.SecondaryDeviceId')"
        }
        (Backend::Postgres, DeviceKey::IridiumImei) => "((d.doc::jsonb) ->> 'IridiumImei')",
        (Backend::Postgres, DeviceKey::SecondaryDeviceId) => {
            "((d.doc::jsonb) ->> 'SecondaryDeviceId')"
        }
    }
}

impl Store {
    /// The devices of the subtree at `subtree_path` that `value` names in any of `keys`
    /// (each distinct device once; at most two: enough to tell one device from an
    /// ambiguous identifier).
    pub async fn gateway_devices(
        &self,
        subtree_path: &str,
        keys: &[DeviceKey],
        value: &str,
    ) -> StoreResult<Vec<GatewayDevice>> {
        let arms: Vec<String> = keys
            .iter()
            .map(|&key| {
                format!(
                    "SELECT d.device_id, d.tenant_code FROM devices d
                     JOIN tenants t ON t.code = d.tenant_code
                     WHERE {} = $1 AND t.path LIKE $2",
                    key_expression(self.backend(), key)
                )
            })
            .collect();
        if arms.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!("{} LIMIT 2", arms.join(" UNION "));
        let rows = sqlx::query(&sql)
            .bind(value)
            .bind(format!("{subtree_path}%"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| Ok(GatewayDeviceRow::from_row(row)?.into()))
            .collect()
    }
}

/// Before a device write: locks a `device_identifiers` row of each of `ids`' values (in
/// sorted order), then finds the first other device (any tenant) whose identifiers
/// clash with them. The device itself (`tenant_code`, its DeviceId) is not "other".
pub(super) async fn claim(
    conn: &mut AnyConnection,
    backend: Backend,
    tenant_code: &TenantCode,
    ids: &DeviceIdentifiers,
) -> StoreResult<Option<IdentifierConflict>> {
    for value in ids.all_values() {
        sqlx::query(
            "INSERT INTO device_identifiers (identifier) VALUES ($1)
             ON CONFLICT (identifier) DO UPDATE SET identifier = excluded.identifier",
        )
        .bind(value)
        .execute(&mut *conn)
        .await?;
    }
    let (sql, values) = clash_query(backend, ids);
    let mut query = sqlx::query(&sql)
        .bind(tenant_code.as_str())
        .bind(&ids.device_id);
    for value in values {
        query = query.bind(value);
    }
    let rows = query.fetch_all(&mut *conn).await?;
    for row in &rows {
        let row = ClashRow::from_row(row)?;
        let theirs = DeviceIdentifiers {
            device_id: row.device_id,
            iridium_imei: row.iridium_imei,
            secondary_device_id: row.secondary_device_id,
        };
        if let Some((field, value, other_field)) = ids.clash_with(&theirs) {
            return Ok(Some(IdentifierConflict {
                field,
                value,
                other_field,
                other_tenant: TenantNode {
                    code: TenantCode::from_store(row.tenant_code),
                    parent_code: row.parent_code.map(TenantCode::from_store),
                    path: row.path,
                },
                other_device: DeviceId::from_store(theirs.device_id),
            }));
        }
    }
    Ok(None)
}

/// After a device write (its row in place): binds its physical identifiers to it,
/// releases those it no longer has, and removes the rows `claim` locked that bind
/// nothing (their locks hold until commit).
pub(super) async fn bind(
    conn: &mut AnyConnection,
    tenant_code: &TenantCode,
    ids: &DeviceIdentifiers,
) -> StoreResult<()> {
    sqlx::query("DELETE FROM device_identifiers WHERE tenant_code = $1 AND device_id = $2")
        .bind(tenant_code.as_str())
        .bind(&ids.device_id)
        .execute(&mut *conn)
        .await?;
    for value in ids.physical_values() {
        let bound = sqlx::query(
            "INSERT INTO device_identifiers (identifier, tenant_code, device_id) VALUES ($1, $2, $3)
             ON CONFLICT (identifier) DO UPDATE
                SET tenant_code = excluded.tenant_code, device_id = excluded.device_id
                WHERE device_identifiers.tenant_code IS NULL",
        )
        .bind(value)
        .bind(tenant_code.as_str())
        .bind(&ids.device_id)
        .execute(&mut *conn)
        .await?;
        if bound.rows_affected() == 0 {
            // `claim` found no other device with it: a binding left behind would be a bug.
            return Err(StoreError::Conflict(format!(
                "the identifier `{value}` is bound to another device"
            )));
        }
    }
    for value in ids.all_values() {
        sqlx::query("DELETE FROM device_identifiers WHERE identifier = $1 AND tenant_code IS NULL")
            .bind(value)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The other devices (any tenant) sharing a value with `ids`: an IridiumImei or
/// SecondaryDeviceId that is any of its values, or a DeviceId that is one of its
/// physical identifiers. `$1`, `$2`: the device itself; then every value, then the
/// physical ones (the values to bind, in order). Each arm is an index seek.
fn clash_query(backend: Backend, ids: &DeviceIdentifiers) -> (String, Vec<&str>) {
    let (all, physical) = (ids.all_values(), ids.physical_values());
    let list = |first: usize, count: usize| {
        (first..first + count)
            .map(|i| format!("${i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let select = |filter: String| {
        format!(
            "SELECT d.device_id, d.tenant_code, t.parent_code, t.path,
                {} AS iridium_imei, {} AS secondary_device_id
             FROM devices d JOIN tenants t ON t.code = d.tenant_code
             WHERE {filter} AND NOT (d.tenant_code = $1 AND d.device_id = $2)",
            key_expression(backend, DeviceKey::IridiumImei),
            key_expression(backend, DeviceKey::SecondaryDeviceId),
        )
    };
    let mut arms = Vec::new();
    for key in [DeviceKey::IridiumImei, DeviceKey::SecondaryDeviceId] {
        let expression = key_expression(backend, key);
        arms.push(select(format!("{expression} IN ({})", list(3, all.len()))));
    }
    if !physical.is_empty() {
        let devices = list(3 + all.len(), physical.len());
        arms.push(select(format!("d.device_id IN ({devices})")));
    }
    let sql = format!("{} LIMIT 8", arms.join(" UNION "));
    (sql, all.into_iter().chain(physical).collect())
}
