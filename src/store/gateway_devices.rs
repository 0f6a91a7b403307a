//! What the device gateways look up: a device by one of its identifiers across a tenant
//! subtree (`DeviceId`, `IridiumImei`, `SecondaryDeviceId`). The document fields are read
//! with the expression their index (migration 0046) is built on.

use sqlx::FromRow;

use super::{Backend, Store, StoreResult};
use crate::domain::gateways::DeviceKey;
use crate::domain::ids::{DeviceId, TenantCode};

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
    /// The devices whose `key` is `value` in the subtree at `subtree_path` (at most two:
    /// enough to tell one device from an ambiguous identifier).
    pub async fn gateway_devices(
        &self,
        subtree_path: &str,
        key: DeviceKey,
        value: &str,
    ) -> StoreResult<Vec<GatewayDevice>> {
        let sql = format!(
            "SELECT d.device_id, d.tenant_code FROM devices d JOIN tenants t ON t.code = d.tenant_code
             WHERE {} = $1 AND t.path LIKE $2 ORDER BY d.id LIMIT 2",
            key_expression(self.backend(), key)
        );
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
