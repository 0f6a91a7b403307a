//! Tenants and the hierarchy.

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::webhook_events::{emit, emit_events};
use super::{
    Key, Store, StoreError, StoreResult, VersionedRow, WriteTx, from_micros, new_etag, to_doc,
    to_micros,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::TenantCode;
use crate::domain::tenant::{Tenant, TenantFields, TenantNode};
use crate::domain::time::now;
use crate::domain::webhook::Category;
use crate::domain::webhook_event::{EventType, event_data};

/// Outcome of a delete that the store refuses for a business reason.
#[derive(Debug, PartialEq, Eq)]
pub enum TenantDeletion {
    Deleted,
    HasSubtenants,
}

const TENANT_COLUMNS: &str = "code, parent_code, path, doc, etag, updated_at";

/// A `tenants` row as selected by `TENANT_COLUMNS`.
#[derive(sqlx::FromRow)]
struct TenantRow {
    code: String,
    parent_code: Option<String>,
    doc: String,
    etag: String,
    updated_at: Option<i64>,
}

impl TenantRow {
    fn into_tenant(self) -> StoreResult<Tenant> {
        let fields: TenantFields = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("tenant document: {e}")))?;
        Ok(Tenant::new(
            TenantCode::from_store(self.code),
            self.parent_code.map(TenantCode::from_store),
            fields,
            from_micros(self.updated_at)?,
            self.etag,
        ))
    }
}

fn tenant_from_row(row: &AnyRow) -> StoreResult<Tenant> {
    TenantRow::from_row(row)?.into_tenant()
}

/// A tenant's place in the hierarchy (`code, parent_code, path`).
#[derive(sqlx::FromRow)]
struct TenantNodeRow {
    code: String,
    parent_code: Option<String>,
    path: String,
}

fn node_from_row(row: &AnyRow) -> StoreResult<TenantNode> {
    let TenantNodeRow {
        code,
        parent_code,
        path,
    } = TenantNodeRow::from_row(row)?;
    Ok(TenantNode {
        code: TenantCode::from_store(code),
        parent_code: parent_code.map(TenantCode::from_store),
        path,
    })
}

fn tenant_row<'a>(keys: &'a [Key<'a>; 1]) -> VersionedRow<'a> {
    VersionedRow {
        table: "tenants",
        column: "etag",
        filter: "code = $1",
        keys,
    }
}

impl WriteTx {
    /// A tenant, read through this transaction's connection.
    pub async fn tenant(&mut self, code: &TenantCode) -> StoreResult<Option<Tenant>> {
        let sql = format!("SELECT {TENANT_COLUMNS} FROM tenants WHERE code = $1");
        let row = sqlx::query(&sql)
            .bind(code.as_str())
            .fetch_optional(&mut *self.tx)
            .await?;
        row.as_ref().map(tenant_from_row).transpose()
    }

    /// A tenant's place in the hierarchy: the store's node when it has one (a node never
    /// changes), else read through this transaction's connection.
    pub async fn tenant_node(&mut self, code: &TenantCode) -> StoreResult<Option<TenantNode>> {
        if let Some(node) = self
            .tenant_nodes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(code)
        {
            return Ok(Some(node.clone()));
        }
        let row = sqlx::query("SELECT code, parent_code, path FROM tenants WHERE code = $1")
            .bind(code.as_str())
            .fetch_optional(&mut *self.tx)
            .await?;
        row.as_ref().map(node_from_row).transpose()
    }
}

/// Which tenants a listing or a report covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TenantSelection {
    /// Exactly the tenant of this code.
    Tenant(TenantCode),
    /// The tenant of this path and every tenant below it.
    Subtree(String),
}

impl Store {
    pub async fn tenant_node(&self, code: &TenantCode) -> StoreResult<Option<TenantNode>> {
        if let Some(node) = self
            .tenant_nodes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(code)
        {
            return Ok(Some(node.clone()));
        }
        let row = sqlx::query("SELECT code, parent_code, path FROM tenants WHERE code = $1")
            .bind(code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        let node = row.as_ref().map(node_from_row).transpose()?;
        if let Some(node) = &node {
            self.tenant_nodes
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(node.code.clone(), node.clone());
        }
        Ok(node)
    }

    /// The tenant if the read cache holds it (SQLite; never on PostgreSQL), without a read.
    pub fn cached_tenant(&self, code: &TenantCode) -> Option<Tenant> {
        self.tenants.get(code)
    }

    pub async fn get_tenant(&self, code: &TenantCode) -> StoreResult<Option<Tenant>> {
        if let Some(tenant) = self.cached_tenant(code) {
            return Ok(Some(tenant));
        }
        let sql = format!("SELECT {TENANT_COLUMNS} FROM tenants WHERE code = $1");
        let row = sqlx::query(&sql)
            .bind(code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        let tenant = row.as_ref().map(tenant_from_row).transpose()?;
        if let Some(t) = &tenant {
            self.tenants.put(code.clone(), t.clone());
        }
        Ok(tenant)
    }

    pub async fn list_subtenants(&self, parent_code: &TenantCode) -> StoreResult<Vec<Tenant>> {
        let sql = format!(
            "SELECT {TENANT_COLUMNS} FROM tenants WHERE parent_code = $1 ORDER BY LENGTH(code), code"
        );
        let rows = sqlx::query(&sql)
            .bind(parent_code.as_str())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(tenant_from_row).collect()
    }

    /// Every descendant of the tenant whose path is `path` (not the tenant itself), each
    /// after its parent (path order).
    pub async fn list_descendant_tenants(&self, path: &str) -> StoreResult<Vec<Tenant>> {
        let sql = format!(
            "SELECT {TENANT_COLUMNS} FROM tenants WHERE path LIKE $1 AND path <> $2 ORDER BY path"
        );
        let rows = sqlx::query(&sql)
            .bind(format!("{path}%"))
            .bind(path)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(tenant_from_row).collect()
    }

    /// Creates the root tenant with the given code if it does not exist yet.
    pub async fn ensure_root_tenant(
        &self,
        code: &TenantCode,
        tenant: &TenantFields,
    ) -> StoreResult<bool> {
        let result = sqlx::query(
            "INSERT INTO tenants (code, parent_code, path, doc, etag, updated_at)
             VALUES ($1, NULL, $2, $3, $4, $5) ON CONFLICT (code) DO NOTHING",
        )
        .bind(code.as_str())
        .bind(format!("/{code}/"))
        .bind(to_doc(tenant)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .execute(&self.pool)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Creates a subtenant of `parent` with the next free code.
    pub async fn create_tenant(
        &self,
        parent: &TenantNode,
        tenant: &TenantFields,
        audit: &Audit,
    ) -> StoreResult<Tenant> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "UPDATE counters SET value = value + 1 WHERE name = 'tenant_code' RETURNING value",
        )
        .fetch_one(&mut *tx)
        .await?;
        let code = TenantCode::from_store(row.try_get::<i64, _>("value")?.to_string());
        let sql = format!(
            "INSERT INTO tenants ({TENANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) RETURNING {TENANT_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(code.as_str())
            .bind(parent.code.as_str())
            .bind(parent.child_path(&code))
            .bind(to_doc(tenant)?)
            .bind(new_etag())
            .bind(to_micros(now()))
            .fetch_one(&mut *tx)
            .await?;
        let created = tenant_from_row(&row)?;
        // A new tenant has no settings yet: its parent hears of it.
        emit_events(
            &mut tx,
            &parent.code,
            &code,
            Category::Tenant,
            EventType::Created,
            vec![event_data(&created)],
        )
        .await?;
        record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::Tenant,
            &code,
        )
        .await?;
        tx.commit().await?;
        Ok(created)
    }

    pub async fn update_tenant(
        &self,
        code: &TenantCode,
        tenant: &TenantFields,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<Tenant> {
        let mut tx = self.begin_write().await?;
        self.check_version(&mut tx, tenant_row(&[Key::Text(code)]), if_match)
            .await?;
        let sql = format!(
            "UPDATE tenants SET doc = $1, etag = $2, updated_at = $3 WHERE code = $4 RETURNING {TENANT_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(to_doc(tenant)?)
            .bind(new_etag())
            .bind(to_micros(now()))
            .bind(code.as_str())
            .fetch_one(&mut *tx)
            .await?;
        let updated = tenant_from_row(&row)?;
        emit(
            &mut tx,
            code,
            Category::Tenant,
            EventType::Updated,
            event_data(&updated),
        )
        .await?;
        record(
            &mut tx,
            audit,
            AuditAction::Update,
            ResourceType::Tenant,
            code,
        )
        .await?;
        tx.commit().await?;
        self.tenants.put(code.clone(), updated.clone());
        Ok(updated)
    }

    /// Deletes a tenant and, through `ON DELETE CASCADE`, everything it owns.
    /// Refused while it has subtenants.
    pub async fn delete_tenant(
        &self,
        code: &TenantCode,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<TenantDeletion> {
        let mut tx = self.begin_write().await?;
        self.check_version(&mut tx, tenant_row(&[Key::Text(code)]), if_match)
            .await?;
        let child = sqlx::query("SELECT code FROM tenants WHERE parent_code = $1 LIMIT 1")
            .bind(code.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        if child.is_some() {
            return Ok(TenantDeletion::HasSubtenants);
        }
        // Its own settings (and outbox) go with it: its parent hears of it.
        let sql = format!("SELECT {TENANT_COLUMNS} FROM tenants WHERE code = $1");
        let row = sqlx::query(&sql)
            .bind(code.as_str())
            .fetch_one(&mut *tx)
            .await?;
        let deleted = tenant_from_row(&row)?;
        if let Some(parent) = deleted.parent_tenant_code.clone() {
            emit_events(
                &mut tx,
                &parent,
                code,
                Category::Tenant,
                EventType::Deleted,
                vec![event_data(&deleted)],
            )
            .await?;
        }
        sqlx::query("DELETE FROM tenants WHERE code = $1")
            .bind(code.as_str())
            .execute(&mut *tx)
            .await?;
        // Listed under the deleted tenant's path: its ancestors read it with subtenants.
        record(
            &mut tx,
            audit,
            AuditAction::Delete,
            ResourceType::Tenant,
            code,
        )
        .await?;
        tx.commit().await?;
        self.tenant_nodes
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(code);
        self.tenants.remove(code);
        self.forget_credentials();
        // Its users went with it (cascade).
        self.users.clear();
        Ok(TenantDeletion::Deleted)
    }
}
