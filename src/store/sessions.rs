//! Browser sessions: stored by the hash of their id, read with their user on every
//! cookie request. On PostgreSQL from the database every time (a session ended by another
//! process is refused on the next request); on SQLite from a cache that every change to a
//! session or its user updates in the same call.

use jiff::Timestamp;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::{Store, StoreError, StoreResult, from_micros, to_micros};
use crate::domain::access::Role;
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{TenantCode, UserId};

/// A session with what authentication needs to know of its user.
#[derive(Debug, Clone)]
pub struct SessionCredentials {
    pub id: i64,
    pub id_hash: String,
    pub user_id: UserId,
    pub username: String,
    pub tenant_code: TenantCode,
    pub tenant_path: String,
    pub role: Role,
    pub is_disabled: bool,
    pub last_seen_at: Timestamp,
    pub expires_at: Timestamp,
}

/// A session joined with its user and tenant, as `session_credentials` selects it.
#[derive(sqlx::FromRow)]
struct SessionRow {
    id: i64,
    id_hash: String,
    user_id: i64,
    last_seen_at: Option<i64>,
    expires_at: Option<i64>,
    username: String,
    tenant_code: String,
    path: String,
    role: String,
    is_disabled: i64,
}

impl SessionRow {
    fn into_credentials(self) -> StoreResult<SessionCredentials> {
        Ok(SessionCredentials {
            id: self.id,
            id_hash: self.id_hash,
            user_id: UserId::new(self.user_id),
            username: self.username,
            tenant_code: TenantCode::from_store(self.tenant_code),
            tenant_path: self.path,
            role: self
                .role
                .parse()
                .map_err(|e| StoreError::Corrupt(format!("session's user: {e}")))?,
            is_disabled: self.is_disabled != 0,
            last_seen_at: from_micros(self.last_seen_at)?.unwrap_or_default(),
            expires_at: from_micros(self.expires_at)?.unwrap_or_default(),
        })
    }
}

impl Store {
    /// Opens a session for `user_id`; answers its row id. Also drops the user's sessions
    /// that ran out, so they do not pile up.
    pub async fn create_session(
        &self,
        user_id: UserId,
        id_hash: &str,
        at: Timestamp,
        expires_at: Timestamp,
        audit: &Audit,
    ) -> StoreResult<i64> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND expires_at <= $2")
            .bind(user_id.get())
            .bind(to_micros(at))
            .execute(&mut *tx)
            .await?;
        let row = sqlx::query(
            "INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at, expires_at)
             VALUES ($1, $2, $3, $3, $4) RETURNING id",
        )
        .bind(id_hash)
        .bind(user_id.get())
        .bind(to_micros(at))
        .bind(to_micros(expires_at))
        .fetch_one(&mut *tx)
        .await?;
        let id: i64 = row.try_get("id")?;
        record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::Session,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The session whose id hashes to `id_hash`, with its user.
    pub async fn session_credentials(
        &self,
        id_hash: &str,
    ) -> StoreResult<Option<SessionCredentials>> {
        let key = id_hash.to_string();
        if let Some(found) = self.session_cache.get(&key) {
            return Ok(Some(found));
        }
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
        let found = SessionRow::from_row(&row)?.into_credentials()?;
        self.session_cache.put(key, found.clone());
        Ok(Some(found))
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
        self.session_cache.retain(|_, s| {
            if s.id == id {
                s.last_seen_at = at;
            }
            true
        });
        Ok(())
    }

    /// Ends session `id`: a logout (audited as a revocation) or one found expired
    /// (`audit` `None`).
    pub async fn delete_session(&self, id: i64, audit: Option<&Audit>) -> StoreResult<()> {
        self.session_cache.retain(|_, s| s.id != id);
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if let Some(audit) = audit
            && done.rows_affected() > 0
        {
            record(
                &mut tx,
                audit,
                AuditAction::Revoke,
                ResourceType::Session,
                id,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Drops the cached sessions of a user (after any change to the user: the cache
    /// holds its username, role and state).
    pub(super) fn forget_user_sessions(&self, user_id: UserId) {
        self.session_cache.retain(|_, s| s.user_id != user_id);
    }

    /// Drops every cached token and session (a tenant and what it owned were deleted).
    pub(super) fn forget_credentials(&self) {
        self.session_cache.clear();
        self.token_cache.clear();
    }
}
