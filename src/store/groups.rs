//! Device groups.

use super::{Store, StoreResult};

impl Store {
    /// Whether group `id` belongs to this tenant.
    pub async fn group_exists(&self, tenant_code: &str, id: i64) -> StoreResult<bool> {
        let row = sqlx::query("SELECT id FROM device_groups WHERE id = $1 AND tenant_code = $2")
            .bind(id)
            .bind(tenant_code)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }
}
