//! External links of a tenant.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::{Store, StoreError, StoreResult, to_doc, to_micros};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::external_link::{ExternalLink, NewExternalLink};
use crate::domain::ids::{ExternalLinkId, TenantCode};
use crate::domain::time::now;

/// An `external_links` row as selected: `id, doc`.
#[derive(sqlx::FromRow)]
struct LinkRow {
    id: i64,
    doc: String,
}

impl LinkRow {
    fn into_link(self) -> StoreResult<ExternalLink> {
        let doc: LinkDoc = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("external link document: {e}")))?;
        let fields = NewExternalLink {
            name: doc.name,
            link: doc.link,
            order: doc.order,
        };
        Ok(ExternalLink::new(ExternalLinkId::new(self.id), fields))
    }
}

/// The `doc` column: the link in the API's form, its id null (the row's `id` holds it).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct LinkDoc {
    #[serde(skip_deserializing)]
    link_id: Option<String>,
    name: String,
    link: String,
    order: i32,
}

fn link_from_row(row: &AnyRow) -> StoreResult<ExternalLink> {
    LinkRow::from_row(row)?.into_link()
}

impl Store {
    /// The tenant's links by `Order`, then id.
    pub async fn list_external_links(
        &self,
        tenant_code: &TenantCode,
    ) -> StoreResult<Vec<ExternalLink>> {
        let rows = sqlx::query(
            "SELECT id, doc FROM external_links WHERE tenant_code = $1 ORDER BY sort_order, id",
        )
        .bind(tenant_code.as_str())
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(link_from_row).collect()
    }

    pub async fn get_external_link(
        &self,
        tenant_code: &TenantCode,
        id: ExternalLinkId,
    ) -> StoreResult<Option<ExternalLink>> {
        let row =
            sqlx::query("SELECT id, doc FROM external_links WHERE tenant_code = $1 AND id = $2")
                .bind(tenant_code.as_str())
                .bind(id.get())
                .fetch_optional(&self.pool)
                .await?;
        row.as_ref().map(link_from_row).transpose()
    }

    pub async fn create_external_link(
        &self,
        tenant_code: &TenantCode,
        link: &NewExternalLink,
        audit: &Audit,
    ) -> StoreResult<ExternalLinkId> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "INSERT INTO external_links (tenant_code, sort_order, doc, updated_at)
             VALUES ($1, $2, $3, $4) RETURNING id",
        )
        .bind(tenant_code.as_str())
        .bind(i64::from(link.order))
        .bind(to_doc(&LinkDoc {
            link_id: None,
            name: link.name.clone(),
            link: link.link.clone(),
            order: link.order,
        })?)
        .bind(to_micros(now()))
        .fetch_one(&mut *tx)
        .await?;
        let id = ExternalLinkId::new(row.try_get("id")?);
        record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::ExternalLink,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    pub async fn delete_external_link(
        &self,
        tenant_code: &TenantCode,
        id: ExternalLinkId,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let result = sqlx::query("DELETE FROM external_links WHERE tenant_code = $1 AND id = $2")
            .bind(tenant_code.as_str())
            .bind(id.get())
            .execute(&mut *tx)
            .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        record(
            &mut tx,
            audit,
            AuditAction::Delete,
            ResourceType::ExternalLink,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
