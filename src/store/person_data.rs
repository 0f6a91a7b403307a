//! What a person's data export reads besides the usual listings
//! (`services/person_export.rs`).

use super::devices::{device_columns, device_with_state, with_state};
use super::{Store, StoreResult};
use crate::domain::device::Device;
use crate::domain::ids::UserId;

impl Store {
    /// The devices assigned to `user` (`Device.UserId`) in the subtree at `tenant_path`.
    pub async fn devices_of_person(
        &self,
        tenant_path: &str,
        user: UserId,
    ) -> StoreResult<Vec<Device>> {
        let sql = format!(
            "SELECT {} FROM {} WHERE t.path LIKE $1 AND d.user_id = $2 ORDER BY d.id",
            device_columns(),
            with_state()
        );
        let rows = sqlx::query(&sql)
            .bind(format!("{tenant_path}%"))
            .bind(user.get())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(device_with_state).collect()
    }
}
