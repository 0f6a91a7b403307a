//! Browser sessions: stored by the hash of their id, read with their user on every
//! cookie request (no cache: a session ended anywhere is refused on the next request).

use jiff::Timestamp;
use sqlx::Row;

use super::{Store, StoreError, StoreResult, from_micros, to_micros};
use crate::domain::access::Role;

/// A session with what authentication needs to know of its user.
#[derive(Debug, Clone)]
pub struct SessionCredentials {
    pub id: i64,
    pub id_hash: String,
    pub user_id: i64,
    pub username: String,
    pub tenant_code: String,
    pub tenant_path: String,
    pub role: Role,
    pub is_disabled: bool,
    pub last_seen_at: Timestamp,
    pub expires_at: Timestamp,
}

impl Store {
    /// Opens a session for `user_id`; answers its row id. Also drops the user's sessions
    /// that ran out, so they do not pile up.
    pub async fn create_session(
        &self,
        user_id: i64,
        id_hash: &str,
        at: Timestamp,
        expires_at: Timestamp,
    ) -> StoreResult<i64> {
        sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND expires_at <= $2")
            .bind(user_id)
            .bind(to_micros(at))
            .execute(&self.pool)
            .await?;
        let row = sqlx::query(
            "INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at, expires_at)
             VALUES ($1, $2, $3, $3, $4) RETURNING id",
        )
        .bind(id_hash)
        .bind(user_id)
        .bind(to_micros(at))
        .bind(to_micros(expires_at))
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get("id")?)
    }

    /// The session whose id hashes to `id_hash`, with its user.
    pub async fn session_credentials(
        &self,
        id_hash: &str,
    ) -> StoreResult<Option<SessionCredentials>> {
        let row = sqlx::query(
            "SELECT s.id, s.id_hash, s.user_id, s.last_seen_at, s.expires_at, u.username,
                u.tenant_code, t.path, u.role, u.is_disabled
             FROM sessions s JOIN users u ON u.id = s.user_id
                JOIN tenants t ON t.code = u.tenant_code
             WHERE s.id_hash = $1",
        )
        .bind(id_hash)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let role: String = row.try_get("role")?;
        Ok(Some(SessionCredentials {
            id: row.try_get("id")?,
            id_hash: row.try_get("id_hash")?,
            user_id: row.try_get("user_id")?,
            username: row.try_get("username")?,
            tenant_code: row.try_get("tenant_code")?,
            tenant_path: row.try_get("path")?,
            role: role
                .parse()
                .map_err(|_| StoreError::Corrupt(format!("role {role}")))?,
            is_disabled: row.try_get::<i64, _>("is_disabled")? != 0,
            last_seen_at: from_micros(row.try_get("last_seen_at")?)?.unwrap_or_default(),
            expires_at: from_micros(row.try_get("expires_at")?)?.unwrap_or_default(),
        }))
    }

    /// Whether session `id` still exists (not logged out, not ended by a user change).
    pub async fn session_exists(&self, id: i64) -> StoreResult<Option<(Timestamp, Timestamp)>> {
        let row = sqlx::query("SELECT last_seen_at, expires_at FROM sessions WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some((
            from_micros(row.try_get("last_seen_at")?)?.unwrap_or_default(),
            from_micros(row.try_get("expires_at")?)?.unwrap_or_default(),
        )))
    }

    /// Records activity on session `id` (called only when the last record is old).
    pub async fn touch_session(&self, id: i64, at: Timestamp) -> StoreResult<()> {
        sqlx::query("UPDATE sessions SET last_seen_at = $1 WHERE id = $2")
            .bind(to_micros(at))
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Ends session `id` (logout, or found expired).
    pub async fn delete_session(&self, id: i64) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Ends every session of a user (offline password change).
    pub async fn end_user_sessions(&self, user_id: i64) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
