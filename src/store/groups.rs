//! Device groups.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::references::Named;
use super::stored_time;
use super::{
    Key, Store, StoreError, StoreResult, VersionedRow, conflict_on_duplicate, new_etag, to_doc,
    to_micros,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::device::{Group, GroupFields};
use crate::domain::ids::{GroupId, TenantCode};
use crate::domain::serde_util::null_as_default;
use crate::domain::time::now;

const GROUP_COLUMNS: &str = "id, name, doc, etag, updated_at";

/// A `device_groups` row as selected by `GROUP_COLUMNS`.
#[derive(sqlx::FromRow)]
struct GroupRow {
    id: i64,
    name: String,
    doc: String,
    etag: String,
    updated_at: i64,
}

/// What `device_groups.doc` holds: the fields without a column of their own. Documents
/// written with the other keys (null) read the same.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GroupDoc {
    description: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    properties: BTreeMap<String, String>,
}

impl GroupRow {
    fn into_group(self) -> StoreResult<Group> {
        let doc: GroupDoc = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("group document: {e}")))?;
        let timestamp = stored_time(self.updated_at)?;
        Ok(Group {
            group_id: GroupId::new(self.id),
            name: self.name,
            description: doc.description,
            properties: doc.properties,
            timestamp,
            etag: self.etag,
        })
    }
}

fn group_from_row(row: &AnyRow) -> StoreResult<Group> {
    GroupRow::from_row(row)?.into_group()
}

fn group_doc(group: &GroupFields) -> StoreResult<String> {
    to_doc(&GroupDoc {
        description: group.description.clone(),
        properties: group.properties.clone(),
    })
}

impl Store {
    /// Whether group `id` belongs to this tenant.
    pub async fn group_exists(&self, tenant_code: &TenantCode, id: i64) -> StoreResult<bool> {
        let row = sqlx::query("SELECT id FROM device_groups WHERE id = $1 AND tenant_code = $2")
            .bind(id)
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    pub async fn list_groups(&self, tenant_code: &TenantCode) -> StoreResult<Vec<Group>> {
        let sql =
            format!("SELECT {GROUP_COLUMNS} FROM device_groups WHERE tenant_code = $1 ORDER BY id");
        let rows = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(group_from_row).collect()
    }

    pub async fn get_group(
        &self,
        tenant_code: &TenantCode,
        id: GroupId,
    ) -> StoreResult<Option<Group>> {
        let sql =
            format!("SELECT {GROUP_COLUMNS} FROM device_groups WHERE id = $1 AND tenant_code = $2");
        let row = sqlx::query(&sql)
            .bind(id.get())
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(group_from_row).transpose()
    }

    pub async fn create_group(
        &self,
        tenant_code: &TenantCode,
        group: &GroupFields,
        audit: &Audit,
    ) -> StoreResult<GroupId> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "INSERT INTO device_groups (tenant_code, name, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(tenant_code.as_str())
        .bind(group.name.as_str())
        .bind(group_doc(group)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, "a group with this Name"))?;
        let id: i64 = row.try_get("id")?;
        record(&mut tx, audit, AuditAction::Create, ResourceType::Group, id).await?;
        tx.commit().await?;
        Ok(GroupId::new(id))
    }

    pub async fn update_group(
        &self,
        tenant_code: &TenantCode,
        id: GroupId,
        group: &GroupFields,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let id = id.get();
        let mut tx = self.begin_write().await?;
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        self.check_version(
            &mut tx,
            VersionedRow::by_id("device_groups", &keys),
            if_match,
        )
        .await?;
        sqlx::query("UPDATE device_groups SET name = $1, doc = $2, etag = $3, updated_at = $4 WHERE id = $5")
            .bind(group.name.as_str())
            .bind(group_doc(group)?)
            .bind(new_etag())
            .bind(to_micros(now()))
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(|e| conflict_on_duplicate(e, "a group with this Name"))?;
        record(&mut tx, audit, AuditAction::Update, ResourceType::Group, id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a group; `Conflict` while devices are still in it.
    pub async fn delete_group(
        &self,
        tenant_code: &TenantCode,
        id: GroupId,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let id = id.get();
        let mut tx = self.begin_write().await?;
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        self.check_version(
            &mut tx,
            VersionedRow::by_id("device_groups", &keys),
            if_match,
        )
        .await?;
        if let Some(referrer) = self.first_referrer(&mut tx, Named::Group(id), None).await? {
            return Err(StoreError::Conflict(format!(
                "the group is the ChangeGroup target of {referrer}; change that first"
            )));
        }
        let member = sqlx::query("SELECT device_id FROM devices WHERE group_id = $1 LIMIT 1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(member) = member {
            let device: String = member.try_get("device_id")?;
            return Err(StoreError::Conflict(format!(
                "the group still has devices (e.g. {device}); move or delete them first"
            )));
        }
        sqlx::query("DELETE FROM device_groups WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        record(&mut tx, audit, AuditAction::Delete, ResourceType::Group, id).await?;
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documents written with every key of the API form (the column-backed ones null)
    /// still read.
    #[test]
    fn documents_with_every_key_read_back() {
        let old = r#"{"GroupId":null,"Name":null,"Description":"Vans","Properties":{"A":"1"},
            "Timestamp":null,"ETag":null}"#;
        let doc: GroupDoc = serde_json::from_str(old).expect("reads");
        assert_eq!(doc.description.as_deref(), Some("Vans"));
        assert_eq!(doc.properties.get("A").map(String::as_str), Some("1"));
    }
}
