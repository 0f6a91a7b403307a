//! Server-wide settings kept in the database so every process sharing it agrees.

use sqlx::Row;

use super::{Store, StoreResult};

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
