//! Devices and the deleted-devices log.

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log;
use super::device_rows::{
    ASSIGNED_USER_COLUMNS, ASSIGNED_USER_JOIN, DEVICE_COLUMNS, STATE_COLUMNS,
    assigned_user_from_row, device_doc, device_from_row, state_from_row,
};
use super::gateway_devices;
use super::webhook_events::emit;
use super::{
    Key, Store, StoreError, StoreResult, TenantSelection, VersionedRow, conflict_on_duplicate,
    from_doc, new_etag, to_doc, to_micros,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::device::{DeletedDevice, Device, DeviceFields, redact_email};
use crate::domain::device_protocols::identity::{DeviceIdentifiers, IdentifierConflict};
use crate::domain::device_state::DeviceState;
use crate::domain::ids::{TenantCode, UserId};
use crate::domain::time::now;
use crate::domain::webhook::Category;
use crate::domain::webhook_event::{EventType, event_data};

/// A device with its state (`s` may be missing: a LEFT JOIN) and its assigned user.
pub(super) fn device_columns() -> String {
    format!("{DEVICE_COLUMNS}, {STATE_COLUMNS}, {ASSIGNED_USER_COLUMNS}")
}

/// The device, its state, its tenant (`t`) and its user, in one query (a listing reads
/// no user per device).
pub(super) fn with_state() -> String {
    format!(
        "devices d LEFT JOIN device_states s
            ON s.tenant_code = d.tenant_code AND s.device_id = d.device_id
         JOIN tenants t ON t.code = d.tenant_code
         {ASSIGNED_USER_JOIN}"
    )
}

/// The device with its state and its user, as the API shows it.
pub(super) fn device_with_state(row: &AnyRow) -> StoreResult<Device> {
    let mut device = device_from_row(row)?.with_state(&state_from_row(row)?);
    device.assigned_user = assigned_user_from_row(row)?;
    Ok(device)
}

/// What `delete_device` reads besides the device: its owner's name and its tenant.
#[derive(sqlx::FromRow)]
struct DeletedDeviceRow {
    owner: Option<String>,
    tenant_doc: String,
}

fn device_row<'a>(keys: &'a [Key<'a>; 2]) -> VersionedRow<'a> {
    VersionedRow {
        table: "devices",
        column: "etag",
        filter: "device_id = $1 AND tenant_code = $2",
        keys,
    }
}

impl Store {
    pub async fn device_exists(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
    ) -> StoreResult<bool> {
        let row = sqlx::query("SELECT id FROM devices WHERE device_id = $1 AND tenant_code = $2")
            .bind(device_id)
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// Which of `device_ids` are devices of this tenant (one query per 500 ids).
    pub async fn existing_devices(
        &self,
        tenant_code: &TenantCode,
        device_ids: &[String],
    ) -> StoreResult<std::collections::HashSet<String>> {
        let mut found = std::collections::HashSet::new();
        for chunk in device_ids.chunks(500) {
            let sql = existing_devices_sql(chunk.len());
            let mut query = sqlx::query(&sql).bind(tenant_code.as_str());
            for id in chunk {
                query = query.bind(id.as_str());
            }
            for row in query.fetch_all(&self.pool).await? {
                found.insert(row.try_get("device_id")?);
            }
        }
        Ok(found)
    }

    /// A page of devices of `tenants` (only those assigned to `assigned_to`, when named),
    /// in insertion order after the row id `after`, each with its row id (the paging cursor).
    pub async fn list_devices(
        &self,
        tenants: &TenantSelection,
        assigned_to: Option<UserId>,
        after: i64,
        limit: u32,
    ) -> StoreResult<Vec<(i64, Device)>> {
        let (filter, key) = match tenants {
            TenantSelection::Tenant(code) => ("d.tenant_code = $1", code.to_string()),
            TenantSelection::Subtree(path) => ("t.path LIKE $1", format!("{path}%")),
        };
        let user_filter = if assigned_to.is_some() {
            " AND d.user_id = $4"
        } else {
            ""
        };
        let sql = format!(
            "SELECT d.id, {} FROM {} WHERE {filter}{user_filter} AND d.id > $2 ORDER BY d.id LIMIT $3",
            device_columns(),
            with_state()
        );
        let mut query = sqlx::query(&sql)
            .bind(key)
            .bind(after)
            .bind(i64::from(limit));
        if let Some(user) = assigned_to {
            query = query.bind(user.get());
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| Ok((row.try_get("id")?, device_with_state(row)?)))
            .collect()
    }

    /// The devices of `tenants` assigned to `user` (`Device.UserId`), in insertion order:
    /// a person's devices for their data export, and the worker app's device for a push
    /// subscription.
    pub async fn devices_assigned_to(
        &self,
        tenants: &TenantSelection,
        user: UserId,
    ) -> StoreResult<Vec<Device>> {
        let (filter, key) = match tenants {
            TenantSelection::Tenant(code) => ("d.tenant_code = $1", code.to_string()),
            TenantSelection::Subtree(path) => ("t.path LIKE $1", format!("{path}%")),
        };
        let sql = format!(
            "SELECT {} FROM {} WHERE {filter} AND d.user_id = $2 ORDER BY d.id",
            device_columns(),
            with_state()
        );
        let rows = sqlx::query(&sql)
            .bind(key)
            .bind(user.get())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(device_with_state).collect()
    }

    pub async fn get_device(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
    ) -> StoreResult<Option<Device>> {
        let sql = format!(
            "SELECT {} FROM {} WHERE d.device_id = $1 AND d.tenant_code = $2",
            device_columns(),
            with_state()
        );
        let row = sqlx::query(&sql)
            .bind(device_id)
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(device_with_state).transpose()
    }

    /// Inserts a validated device with its (empty) state; `Conflict` when the tenant has a
    /// device of this DeviceId (other tenants' devices are theirs: ids are per tenant). A
    /// clash of gateway identifiers is answered as the `IdentifierConflict`, storing
    /// nothing: what the caller may be told of it is the caller's to decide
    /// (`IdentifierConflict::detail`).
    pub async fn create_device(
        &self,
        tenant_code: &TenantCode,
        device: &DeviceFields,
        audit: &Audit,
    ) -> StoreResult<Result<(), IdentifierConflict>> {
        let mut tx = self.begin_write().await?;
        let ids = identifiers(device);
        let backend = tx.backend();
        if let Some(conflict) = gateway_devices::claim(&mut tx, backend, tenant_code, &ids).await? {
            return Ok(Err(conflict));
        }
        let (etag, at) = (new_etag(), now());
        sqlx::query(
            "INSERT INTO devices (device_id, tenant_code, group_id, user_id, device_type, status, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(device.device_id.as_str())
        .bind(tenant_code.as_str())
        .bind(device.group_id.map(|id| id.get()))
        .bind(device.user_id.map(|id| id.get()))
        .bind(device.device_type.as_str())
        .bind(device.status.as_str())
        .bind(device_doc(device)?)
        .bind(&etag)
        .bind(to_micros(at))
        .execute(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, "a device with this DeviceId"))?;
        gateway_devices::bind(&mut tx, tenant_code, &ids).await?;
        let mut state = DeviceState::default();
        state.set_check_in_interval(device.check_in_interval_minutes, now());
        sqlx::query(
            "INSERT INTO device_states (device_id, tenant_code, check_in_interval_minutes, next_check_in_at)
             VALUES ($1, $2, $3, $4)",
        )
        .bind(device.device_id.as_str())
        .bind(tenant_code.as_str())
        .bind(state.check_in_interval_minutes)
        .bind(state.next_check_in_at.map(to_micros))
        .execute(&mut *tx)
        .await?;
        let shown = Device::new(tenant_code.clone(), device.clone(), etag, at).with_state(&state);
        emit(
            &mut tx,
            tenant_code,
            Category::Device,
            EventType::Created,
            event_data(&shown),
        )
        .await?;
        let id = device.device_id.as_str();
        audit_log::record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::Device,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(Ok(()))
    }

    /// Replaces a device (`device.device_id`'s); a `CheckInIntervalMinutes` given (not
    /// null) reschedules its check-ins in the same transaction. Refused, changing
    /// nothing, when its gateway identifiers clash with another device's.
    pub async fn update_device(
        &self,
        tenant_code: &TenantCode,
        device: &DeviceFields,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<Result<(), IdentifierConflict>> {
        let device_id = &device.device_id;
        let mut tx = self.begin().await?;
        self.check_version(
            &mut tx.tx,
            device_row(&[Key::Text(device_id), Key::Text(tenant_code)]),
            if_match,
        )
        .await?;
        let ids = identifiers(device);
        let backend = tx.backend;
        if let Some(conflict) =
            gateway_devices::claim(&mut tx.tx, backend, tenant_code, &ids).await?
        {
            return Ok(Err(conflict));
        }
        let (etag, at) = (new_etag(), now());
        sqlx::query(
            "UPDATE devices SET group_id = $1, user_id = $2, device_type = $3, status = $4, doc = $5,
                etag = $6, updated_at = $7 WHERE device_id = $8 AND tenant_code = $9",
        )
        .bind(device.group_id.map(|id| id.get()))
        .bind(device.user_id.map(|id| id.get()))
        .bind(device.device_type.as_str())
        .bind(device.status.as_str())
        .bind(device_doc(device)?)
        .bind(&etag)
        .bind(to_micros(at))
        .bind(device_id.as_str())
        .bind(tenant_code.as_str())
        .execute(&mut *tx.tx)
        .await?;
        gateway_devices::bind(&mut tx.tx, tenant_code, &ids).await?;
        let (_, mut state) = tx
            .lock_device(tenant_code, device_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        if device.check_in_interval_minutes.is_some() {
            state.set_check_in_interval(device.check_in_interval_minutes, now());
            tx.save_state(tenant_code, device_id, &state).await?;
        }
        let shown = Device::new(tenant_code.clone(), device.clone(), etag, at).with_state(&state);
        emit(
            &mut tx.tx,
            tenant_code,
            Category::Device,
            EventType::Updated,
            event_data(&shown),
        )
        .await?;
        tx.audit(&audit.entry(AuditAction::Update, ResourceType::Device, device_id))
            .await?;
        tx.commit().await?;
        Ok(Ok(()))
    }

    /// Deletes a device and records it in the deleted-devices log, in one transaction.
    pub async fn delete_device(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        deleted_by: &str,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        self.check_version(
            &mut tx.tx,
            device_row(&[Key::Text(device_id), Key::Text(tenant_code)]),
            if_match,
        )
        .await?;
        let sql = format!(
            "SELECT {DEVICE_COLUMNS}, u.username AS owner, t.doc AS tenant_doc
             FROM devices d JOIN tenants t ON t.code = d.tenant_code
             LEFT JOIN users u ON u.id = d.user_id WHERE d.device_id = $1 AND d.tenant_code = $2"
        );
        let row = sqlx::query(&sql)
            .bind(device_id)
            .bind(tenant_code.as_str())
            .fetch_one(&mut *tx.tx)
            .await?;
        let device = device_from_row(&row)?;
        emit(
            &mut tx.tx,
            tenant_code,
            Category::Device,
            EventType::Deleted,
            event_data(&device),
        )
        .await?;
        let DeletedDeviceRow { owner, tenant_doc } = DeletedDeviceRow::from_row(&row)?;
        let tenant: crate::domain::tenant::TenantFields = serde_json::from_str(&tenant_doc)
            .map_err(|e| StoreError::Corrupt(format!("tenant document: {e}")))?;
        let at = now();
        let record = DeletedDevice {
            tenant_code: Some(tenant_code.clone()),
            tenant_description: Some(tenant.description),
            device_id: Some(device.device_id),
            device_type: Some(device.device_type),
            friendly_name: device.friendly_name,
            username: owner.as_deref().map(redact_email),
            secondary_device_id: device.secondary_device_id,
            iridium_imei: device.iridium_imei,
            sim_number: device.sim_number,
            phone_number: device.phone_number,
            date_deleted: at,
            deleted_by: Some(redact_email(deleted_by)),
        };
        sqlx::query("INSERT INTO deleted_devices (tenant_code, device_id, doc, deleted_at) VALUES ($1, $2, $3, $4)")
            .bind(tenant_code.as_str())
            .bind(device_id)
            .bind(to_doc(&record)?)
            .bind(to_micros(at))
            .execute(&mut *tx.tx)
            .await?;
        // Its session ends with it: nobody is watched through a device that is gone.
        let by = audit
            .entry(
                AuditAction::Delete,
                ResourceType::MonitoringSession,
                device_id,
            )
            .actor;
        tx.end_monitoring_of_deleted_device(tenant_code, device_id, (at, by))
            .await?;
        sqlx::query("DELETE FROM devices WHERE device_id = $1 AND tenant_code = $2")
            .bind(device_id)
            .bind(tenant_code.as_str())
            .execute(&mut *tx.tx)
            .await?;
        let (action, kind) = (AuditAction::Delete, ResourceType::Device);
        audit_log::record(&mut tx.tx, audit, action, kind, device_id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deleted devices, newest first, optionally of one device id.
    pub async fn list_deleted_devices(
        &self,
        tenants: &TenantSelection,
        device_id: Option<&str>,
    ) -> StoreResult<Vec<DeletedDevice>> {
        let (filter, key) = match tenants {
            TenantSelection::Tenant(code) => ("x.tenant_code = $1", code.to_string()),
            TenantSelection::Subtree(path) => ("t.path LIKE $1", format!("{path}%")),
        };
        let sql = format!(
            "SELECT x.doc FROM deleted_devices x JOIN tenants t ON t.code = x.tenant_code
             WHERE {filter} AND ($2 = '' OR x.device_id = $2) ORDER BY x.deleted_at DESC, x.id DESC"
        );
        let rows = sqlx::query(&sql)
            .bind(key)
            .bind(device_id.unwrap_or_default())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| from_doc(r, "doc")).collect()
    }
}

/// The gateway identifiers of a device as written.
fn identifiers(device: &DeviceFields) -> DeviceIdentifiers {
    DeviceIdentifiers {
        device_id: device.device_id.as_str().to_string(),
        iridium_imei: device.iridium_imei.clone(),
        secondary_device_id: device.secondary_device_id.clone(),
    }
}

/// `existing_devices`' statement for `count` device ids: each id and the tenant are one
/// key of `devices_device_tenant` (SQLite's planner, which has no statistics, took the
/// tenant index and read the tenant's every device from ten ids on when the tenant was
/// the only equality it could use).
pub(super) fn existing_devices_sql(count: usize) -> String {
    let placeholders: Vec<String> = (2..count + 2).map(|i| format!("${i}")).collect();
    format!(
        "SELECT device_id FROM devices WHERE tenant_code = $1 AND device_id IN ({})",
        placeholders.join(", ")
    )
}
