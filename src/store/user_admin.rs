//! What keeps the platform administrable: the root tenant always keeps an active
//! Administrator, and the operator's offline password reset and unlock (`safetrack admin
//! set-password`, `safetrack admin unlock`).

use sqlx::Row;

use super::{Store, StoreError, StoreResult, Tx, new_etag, to_micros};
use crate::domain::access::Role;
use crate::domain::ids::UserId;
use crate::domain::tenant::ROOT_TENANT_CODE;
use crate::domain::time::now;

/// Why a change that would leave nobody able to administer the platform is refused.
pub const LAST_ADMINISTRATOR: &str = "this user is the last active Administrator of the root \
    tenant: demoting, disabling or deleting it would leave nobody able to administer the \
    platform; make another user of tenant 1000 an active Administrator first";

/// Refuses (`Conflict`) a change to user `id` that leaves it no longer an active
/// Administrator (`stays_active_administrator` false) when it is the root tenant's last
/// one. Called first in the writing transaction: the root's active Administrators are
/// locked in id order, so two of them demoting each other at once take turns (the
/// second then sees it is the last) instead of both succeeding or deadlocking.
pub(super) async fn keep_root_administrator(
    tx: &mut Tx,
    id: UserId,
    stays_active_administrator: bool,
) -> StoreResult<()> {
    if stays_active_administrator {
        return Ok(());
    }
    let sql = format!(
        "SELECT id FROM users WHERE tenant_code = $1 AND role = {}
         AND is_disabled = 0 ORDER BY id{}",
        Role::Administrator.sql(),
        tx.backend().lock_rows()
    );
    let rows = sqlx::query(&sql)
        .bind(ROOT_TENANT_CODE)
        .fetch_all(&mut **tx)
        .await?;
    let active: Vec<i64> = rows
        .iter()
        .map(|r| r.try_get("id"))
        .collect::<Result<_, _>>()?;
    if active == [id.get()] {
        return Err(StoreError::Conflict(LAST_ADMINISTRATOR.into()));
    }
    Ok(())
}

impl Store {
    /// Replaces the password hash of the user with this username key; `false` when there
    /// is no such user. For the operator (`safetrack admin set-password`).
    pub async fn set_password_hash(&self, username_key: &str, hash: &str) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "UPDATE users SET password_hash = $1, etag = $2, updated_at = $3
             WHERE username_key = $4 RETURNING id",
        )
        .bind(hash)
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(username_key)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(row) = &row {
            // A new password ends the user's browser sessions.
            sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                .bind(row.try_get::<i64, _>("id")?)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        let Some(row) = row else { return Ok(false) };
        let id = row.try_get::<i64, _>("id")?;
        self.users.remove(&id);
        self.forget_user_sessions(UserId::new(id));
        Ok(true)
    }

    /// Ends the lockout of the user with this username key, for every client address,
    /// and clears its failure count; `false` when there is no such user. For the
    /// operator (`safetrack admin unlock`).
    pub async fn unlock_user(&self, username_key: &str) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "UPDATE users SET failed_count = 0, failed_window_start = NULL, last_lockout = NULL
             WHERE username_key = $1 RETURNING id",
        )
        .bind(username_key)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else { return Ok(false) };
        let id: i64 = row.try_get("id")?;
        sqlx::query("DELETE FROM login_failures WHERE user_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.users.remove(&id);
        Ok(true)
    }
}
