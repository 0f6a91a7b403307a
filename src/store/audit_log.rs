//! The audit log (`domain/audit.rs`). Entries are written only inside the write
//! transaction of the change they describe (`write_audit`), so a write that rolls back
//! leaves none; they are read newest first and pruned by age.

use jiff::Timestamp;
use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::stored;
use super::stored_time;
use super::{Store, StoreResult, TenantSelection, WriteTx, to_micros};
use crate::domain::audit::{Audit, AuditAction, AuditEntry, ResourceType};
use crate::domain::ids::TenantCode;

/// A page of the audit log: the filters, newest first, strictly before `before`.
#[derive(Debug, Clone)]
pub struct AuditQuery<'a> {
    /// Whose entries.
    pub tenants: TenantSelection,
    /// At or after.
    pub from: Option<Timestamp>,
    /// Before (exclusive).
    pub to: Option<Timestamp>,
    pub actor: Option<&'a str>,
    pub action: Option<AuditAction>,
    pub resource_type: Option<ResourceType>,
    /// Entries with a smaller id only (`None`: from the newest).
    pub before: Option<i64>,
    pub limit: u32,
}

/// Entries removed per pruning statement, so one prune never holds the writer long.
const PRUNE_BATCH: i64 = 1000;

/// Writes one entry with the transaction's connection.
pub(super) async fn write_audit(
    conn: &mut sqlx::AnyConnection,
    entry: &AuditEntry,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO audit_log (tenant_code, tenant_path, at, actor, client, action,
            resource_type, resource_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(entry.tenant_code.as_str())
    .bind(&entry.tenant_path)
    .bind(to_micros(entry.at))
    .bind(entry.actor.as_str())
    .bind(entry.client_address.clone())
    .bind(entry.action.as_str())
    .bind(entry.resource_type.as_str())
    .bind(entry.resource_id.clone())
    .execute(conn)
    .await?;
    Ok(())
}

/// Records `action` on a record of `kind` as `audit`'s actor, with the transaction's
/// connection: the one line each audited write adds before its commit.
pub(super) async fn record(
    conn: &mut sqlx::AnyConnection,
    audit: &Audit,
    action: AuditAction,
    kind: ResourceType,
    id: impl std::fmt::Display,
) -> StoreResult<()> {
    write_audit(conn, &audit.entry(action, kind, id)).await
}

/// An `audit_log` row as `list_audit_log` selects it.
#[derive(sqlx::FromRow)]
struct AuditRow {
    id: i64,
    tenant_code: String,
    tenant_path: String,
    at: i64,
    actor: String,
    client: Option<String>,
    action: String,
    resource_type: String,
    resource_id: Option<String>,
}

impl AuditRow {
    fn into_entry(self) -> StoreResult<AuditEntry> {
        Ok(AuditEntry {
            audit_entry_id: Some(self.id.to_string()),
            at: stored_time(self.at)?,
            tenant_code: TenantCode::from_store(self.tenant_code),
            tenant_path: self.tenant_path,
            actor: self.actor,
            client_address: self.client,
            action: stored(&self.action)?,
            resource_type: stored(&self.resource_type)?,
            resource_id: self.resource_id,
        })
    }
}

fn entry_from_row(row: &AnyRow) -> StoreResult<AuditEntry> {
    AuditRow::from_row(row)?.into_entry()
}

impl WriteTx {
    /// Records a change made in this transaction (it commits, or vanishes, with it).
    pub async fn audit(&mut self, entry: &AuditEntry) -> StoreResult<()> {
        write_audit(&mut self.tx, entry).await
    }
}

impl Store {
    /// Records something that changes nothing else (a login refused once its password
    /// was verified), in a transaction of its own.
    pub async fn record_audit(&self, entry: &AuditEntry) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        write_audit(&mut tx, entry).await?;
        tx.commit().await?;
        Ok(())
    }

    /// One page of entries, newest first (by id: the order they were written in).
    pub async fn list_audit_log(&self, q: &AuditQuery<'_>) -> StoreResult<Vec<AuditEntry>> {
        let mut sql = String::from(
            "SELECT id, tenant_code, tenant_path, at, actor, client, action, resource_type,
                resource_id FROM audit_log WHERE ",
        );
        let tenants = match &q.tenants {
            TenantSelection::Tenant(code) => {
                sql.push_str("tenant_code = $1");
                code.to_string()
            }
            TenantSelection::Subtree(path) => {
                sql.push_str("tenant_path LIKE $1");
                format!("{path}%")
            }
        };
        // Each filter given adds a condition; they are bound below in the same order.
        let filters = [
            (q.from.is_some(), "at >="),
            (q.to.is_some(), "at <"),
            (q.actor.is_some(), "actor ="),
            (q.action.is_some(), "action ="),
            (q.resource_type.is_some(), "resource_type ="),
            (q.before.is_some(), "id <"),
        ];
        let mut n = 1;
        for (_, condition) in filters.iter().filter(|(given, _)| *given) {
            n += 1;
            sql.push_str(&format!(" AND {condition} ${n}"));
        }
        sql.push_str(&format!(" ORDER BY id DESC LIMIT ${}", n + 1));
        let mut query = sqlx::query(&sql).bind(tenants);
        if let Some(from) = q.from {
            query = query.bind(to_micros(from));
        }
        if let Some(to) = q.to {
            query = query.bind(to_micros(to));
        }
        if let Some(actor) = q.actor {
            query = query.bind(actor);
        }
        if let Some(action) = q.action {
            query = query.bind(action.as_str());
        }
        if let Some(kind) = q.resource_type {
            query = query.bind(kind.as_str());
        }
        if let Some(before) = q.before {
            query = query.bind(before);
        }
        let rows = query.bind(i64::from(q.limit)).fetch_all(&self.pool).await?;
        rows.iter().map(entry_from_row).collect()
    }

    /// Removes up to `PRUNE_BATCH` entries older than `cutoff`; returns how many. Looks
    /// first, through the pool, so that on SQLite a prune with nothing to do never takes
    /// the writer's turn.
    pub async fn prune_audit_log(&self, cutoff: Timestamp) -> StoreResult<u64> {
        let cutoff = to_micros(cutoff);
        let due = sqlx::query("SELECT id FROM audit_log WHERE at < $1 LIMIT 1")
            .bind(cutoff)
            .fetch_optional(&self.pool)
            .await?;
        if due.is_none() {
            return Ok(0);
        }
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "DELETE FROM audit_log WHERE id IN
                (SELECT id FROM audit_log WHERE at < $1 ORDER BY id LIMIT $2)",
        )
        .bind(cutoff)
        .bind(PRUNE_BATCH)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}
