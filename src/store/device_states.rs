//! Device state (`device_states`, one row per device): read with the device, locked and
//! written by the transactions that store its messages or run its check-in schedule.

use sqlx::FromRow;

use super::device_rows::{DEVICE_COLUMNS, STATE_COLUMNS, device_from_row, state_from_row};
use super::{Float, Store, StoreError, StoreResult, WriteTx, to_micros};
use crate::domain::device::Device;
use crate::domain::device_state::DeviceState;
use crate::domain::ids::{DeviceId, TenantCode};
use crate::domain::mo_message::EmergencyState;

const SAVE_STATE: &str = "UPDATE device_states SET last_message_time = $1, last_message_id = $2,
    latitude = $3, longitude = $4, speed = $5, heading = $6, altitude = $7, gps_at = $8,
    emergency_state = $9, battery = $10, geofences = $11, check_in_interval_minutes = $12,
    check_in_paused = $13, next_check_in_at = $14, silent_due_at = $15, last_check_in_at = $16
    WHERE tenant_code = $17 AND device_id = $18";

/// A device and its state row, found by their key (one seek each: `devices_device_tenant`,
/// then the state's primary key).
pub(super) const DEVICE_AND_STATE_BY_KEY: &str = "FROM devices d JOIN device_states s
        ON s.tenant_code = d.tenant_code AND s.device_id = d.device_id
     WHERE d.device_id = $1 AND d.tenant_code = $2";

/// What ingesting a batch of a device needs, read in one statement with the state row
/// locked: the device, its state, the rules version, the tenant's webhook settings.
pub struct IngestContext {
    pub device: Device,
    pub state: DeviceState,
    pub rules_version: i64,
    pub webhooks: Option<crate::domain::webhook::WebhookSettings>,
}

/// What `ingest_context` reads besides the device and its state.
#[derive(sqlx::FromRow)]
struct IngestExtraRow {
    rules_version: i64,
    webhooks: Option<String>,
}

/// A device whose check-in is due, with its tenant (`due_check_ins`).
#[derive(sqlx::FromRow)]
struct DueCheckInRow {
    device_id: String,
    code: String,
    parent_code: Option<String>,
    path: String,
}

impl WriteTx {
    /// The ingest context of a device of `tenant_code` (`None`: no such device), its
    /// state row locked until commit.
    pub async fn ingest_context(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
    ) -> StoreResult<Option<IngestContext>> {
        let lock = self.backend.lock_rows_of("s");
        let sql = format!(
            "SELECT {}, {STATE_COLUMNS},
                (SELECT value FROM counters WHERE name = 'rules_version') AS rules_version,
                (SELECT w.doc FROM webhook_settings w WHERE w.tenant_code = d.tenant_code) AS webhooks
             {DEVICE_AND_STATE_BY_KEY}{lock}",
            DEVICE_COLUMNS
        );
        let row = sqlx::query(&sql)
            .bind(device_id.as_str())
            .bind(tenant_code.as_str())
            .fetch_optional(&mut *self.tx)
            .await?;
        let Some(row) = row else {
            // No state row yet (a device created by hand, or restored from an old
            // backup)? `lock_device` makes one; then read again.
            return match self.lock_device(tenant_code, device_id).await? {
                Some(_) => Box::pin(self.ingest_context(tenant_code, device_id)).await,
                None => Ok(None),
            };
        };
        let extra = IngestExtraRow::from_row(&row)?;
        let webhooks = extra
            .webhooks
            .map(|doc| serde_json::from_str(&doc))
            .transpose()
            .map_err(|e| StoreError::Corrupt(format!("webhook settings: {e}")))?;
        Ok(Some(IngestContext {
            device: device_from_row(&row)?,
            state: state_from_row(&row)?,
            rules_version: extra.rules_version,
            webhooks,
        }))
    }

    /// The device (of tenant `tenant_code`) with its state, the state row locked until
    /// commit: one unit of work per device at a time, in every process.
    pub async fn lock_device(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
    ) -> StoreResult<Option<(Device, DeviceState)>> {
        let lock = self.backend.lock_rows_of("s");
        let sql = format!(
            "SELECT {}, {STATE_COLUMNS} {DEVICE_AND_STATE_BY_KEY}{lock}",
            DEVICE_COLUMNS
        );
        for attempt in 0..2 {
            let row = sqlx::query(&sql)
                .bind(device_id.as_str())
                .bind(tenant_code.as_str())
                .fetch_optional(&mut *self.tx)
                .await?;
            if let Some(row) = row {
                return Ok(Some((device_from_row(&row)?, state_from_row(&row)?)));
            }
            if attempt == 0 {
                // A device without a state row (created by hand, or restored from an old
                // backup) gets one; an unknown device stays unknown.
                sqlx::query(
                    "INSERT INTO device_states (device_id, tenant_code)
                     SELECT device_id, tenant_code FROM devices WHERE device_id = $1 AND tenant_code = $2
                     ON CONFLICT (tenant_code, device_id) DO NOTHING",
                )
                .bind(device_id.as_str())
                .bind(tenant_code.as_str())
                .execute(&mut *self.tx)
                .await?;
            }
        }
        Ok(None)
    }

    /// Writes the state of the device `device_id` of `tenant_code`.
    pub async fn save_state(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        state: &DeviceState,
    ) -> StoreResult<()> {
        let position = state.last_position.as_ref();
        // Optional floats: not a cached statement (see `store/mod.rs`, NULL floats).
        sqlx::query(SAVE_STATE)
            .bind(state.last_message_time.map(to_micros))
            .bind(state.last_message_id)
            .bind(Float(position.map(|p| p.lat)))
            .bind(Float(position.map(|p| p.lon)))
            .bind(Float(position.and_then(|p| p.speed)))
            .bind(Float(position.and_then(|p| p.heading)))
            .bind(Float(position.and_then(|p| p.altitude)))
            .bind(position.and_then(|p| p.gps_timestamp).map(to_micros))
            .bind(state.emergency_state.map(EmergencyState::as_str))
            .bind(Float(state.battery_percentage))
            .bind(
                serde_json::to_string(&state.containing_geofences).unwrap_or_else(|_| "[]".into()),
            )
            .bind(state.check_in_interval_minutes)
            .bind(i64::from(state.check_in_paused))
            .bind(state.next_check_in_at.map(to_micros))
            .bind(state.silent_due_at.map(to_micros))
            .bind(state.last_check_in_at.map(to_micros))
            .bind(tenant_code.as_str())
            .bind(device_id.as_str())
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }
}

impl Store {
    /// Changes a device's state with `change` in one transaction (the row locked).
    pub async fn update_device_state(
        &self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        change: impl FnOnce(&mut DeviceState),
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let (_, mut state) = tx
            .lock_device(tenant_code, device_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        change(&mut state);
        tx.save_state(tenant_code, device_id, &state).await?;
        tx.commit().await
    }
}

impl Store {
    /// Devices whose standing check-in or silence is due at `at`, with their tenant.
    pub async fn due_check_ins(
        &self,
        at: jiff::Timestamp,
        limit: u32,
    ) -> StoreResult<Vec<(crate::domain::tenant::TenantNode, DeviceId)>> {
        let rows = sqlx::query(
            // Either timer, each branch on its partial index.
            "SELECT s.device_id, t.code, t.parent_code, t.path FROM device_states s
             JOIN tenants t ON t.code = s.tenant_code
             WHERE s.next_check_in_at IS NOT NULL AND s.next_check_in_at <= $1
             UNION
             SELECT s.device_id, t.code, t.parent_code, t.path FROM device_states s
             JOIN tenants t ON t.code = s.tenant_code
             WHERE s.silent_due_at IS NOT NULL AND s.silent_due_at <= $1
             LIMIT $2",
        )
        .bind(to_micros(at))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let due = DueCheckInRow::from_row(r)?;
                let node = crate::domain::tenant::TenantNode {
                    code: TenantCode::from_store(due.code),
                    parent_code: due.parent_code.map(TenantCode::from_store),
                    path: due.path,
                };
                Ok((node, DeviceId::from_store(due.device_id)))
            })
            .collect()
    }
}
