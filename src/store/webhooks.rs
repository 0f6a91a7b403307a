//! Webhook settings: one row per tenant that saved some.

use sqlx::Row;

use super::audit_log::record;
use super::{Store, StoreError, StoreResult, check_etag, new_etag, to_doc, to_micros};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::TenantCode;
use crate::domain::time::now;
use crate::domain::webhook::WebhookSettings;

/// A `webhook_settings` row as read: the document, the secret kept beside it, the version.
#[derive(sqlx::FromRow)]
struct WebhookRow {
    doc: String,
    password: Option<String>,
    etag: String,
}

impl WebhookRow {
    fn into_settings(self) -> StoreResult<WebhookSettings> {
        let mut settings: WebhookSettings = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("webhook settings document: {e}")))?;
        settings.password = self.password;
        settings.etag = Some(self.etag);
        Ok(settings)
    }
}

impl Store {
    /// The tenant's settings including the stored secret, or `None` if never saved.
    pub async fn get_webhooks(
        &self,
        tenant_code: &TenantCode,
    ) -> StoreResult<Option<WebhookSettings>> {
        let row: Option<WebhookRow> = sqlx::query_as(
            "SELECT doc, password, etag FROM webhook_settings WHERE tenant_code = $1",
        )
        .bind(tenant_code.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.map(WebhookRow::into_settings).transpose()
    }

    /// Saves validated settings. `expected` is the version the caller's decision was
    /// based on (`None`: none was stored); anything else stored meanwhile is a
    /// `PreconditionFailed`, so a kept secret is never one the caller did not see.
    pub async fn put_webhooks(
        &self,
        tenant_code: &TenantCode,
        settings: &WebhookSettings,
        expected: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let sql = format!(
            "SELECT etag FROM webhook_settings WHERE tenant_code = $1{}",
            self.backend.lock_rows()
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let (sql, first_save) = match (&row, expected) {
            (Some(row), _) => {
                check_etag(&row.try_get::<String, _>("etag")?, expected)?;
                (
                    "UPDATE webhook_settings SET doc = $2, password = $3, etag = $4, updated_at = $5
                     WHERE tenant_code = $1",
                    false,
                )
            }
            (None, Some(_)) => return Err(StoreError::PreconditionFailed),
            // A concurrent first save makes this insert fail: that caller did not see ours.
            (None, None) => (
                "INSERT INTO webhook_settings (tenant_code, doc, password, etag, updated_at)
                 VALUES ($1, $2, $3, $4, $5)",
                true,
            ),
        };
        sqlx::query(sql)
            .bind(tenant_code.as_str())
            .bind(to_doc(settings)?)
            .bind(settings.password.clone())
            .bind(new_etag())
            .bind(to_micros(now()))
            .execute(&mut *tx)
            .await
            .map_err(|e| match &e {
                sqlx::Error::Database(db) if first_save && db.is_unique_violation() => {
                    StoreError::PreconditionFailed
                }
                _ => StoreError::from(e),
            })?;
        let action = if first_save {
            AuditAction::Create
        } else {
            AuditAction::Update
        };
        record(&mut tx, audit, action, ResourceType::Webhooks, tenant_code).await?;
        tx.commit().await?;
        Ok(())
    }
}
