//! Server-wide settings kept in the database so every process sharing it agrees.

use sqlx::Row;

use super::{Store, StoreError, StoreResult};
use crate::domain::vapid::VapidKey;

impl Store {
    /// The secret that signs paging tokens and keys the credential cache. Created once,
    /// at first start, so tokens survive restarts and work across processes.
    pub async fn server_secret(&self) -> StoreResult<Vec<u8>> {
        let candidate = format!(
            "{:032x}{:032x}",
            rand::random::<u128>(),
            rand::random::<u128>()
        );
        sqlx::query("INSERT INTO settings (name, value) VALUES ('server_secret', $1) ON CONFLICT (name) DO NOTHING")
            .bind(candidate)
            .execute(&self.pool)
            .await?;
        let row = sqlx::query("SELECT value FROM settings WHERE name = 'server_secret'")
            .fetch_one(&self.pool)
            .await?;
        let value: String = row.try_get("value")?;
        Ok(value.into_bytes())
    }
}

impl Store {
    /// The server's VAPID key (Web Push, RFC 8292). Generated at first start and kept as
    /// the `vapid_key` setting (PKCS#8, base64url); when processes start together, the
    /// first insert wins and every one reads the winner's.
    pub async fn vapid_key(&self) -> StoreResult<VapidKey> {
        if let Some(kept) = self.kept_vapid_key().await? {
            return VapidKey::from_kept(&kept).map_err(|e| StoreError::Corrupt(e.to_string()));
        }
        let candidate = VapidKey::generate().map_err(|e| StoreError::Corrupt(e.to_string()))?;
        sqlx::query("INSERT INTO settings (name, value) VALUES ('vapid_key', $1) ON CONFLICT (name) DO NOTHING")
            .bind(candidate)
            .execute(&self.pool)
            .await?;
        let kept = self
            .kept_vapid_key()
            .await?
            .ok_or_else(|| StoreError::Corrupt("the VAPID key was not kept".into()))?;
        VapidKey::from_kept(&kept).map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    async fn kept_vapid_key(&self) -> StoreResult<Option<String>> {
        let row = sqlx::query("SELECT value FROM settings WHERE name = 'vapid_key'")
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(row) => Some(row.try_get("value")?),
            None => None,
        })
    }
}
