//! API tokens: the records clients manage, and the lookup by secret hash that every
//! Bearer request makes. On PostgreSQL it is read every time (a token revoked by another
//! process is refused on the next request); on SQLite, where this process is the only
//! writer, it is cached and the cache dropped on every revocation.

use jiff::Timestamp;
use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::audit_log::record;
use super::stored;
use super::{Store, StoreError, StoreResult, Tx, conflict_on_duplicate, from_micros, to_micros};
use crate::domain::access::{Permission, Permissions};
use crate::domain::api_token::{ApiToken, NewApiToken};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{ApiTokenId, TenantCode};

/// What authentication needs to know about the token with a given secret hash.
#[derive(Debug, Clone)]
pub struct TokenCredentials {
    pub id: ApiTokenId,
    pub name: String,
    pub tenant_code: TenantCode,
    pub tenant_path: String,
    pub permissions: Permissions,
    pub secret_hash: String,
    pub expires_at: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
    pub last_used_at: Option<Timestamp>,
}

const TOKEN_COLUMNS: &str =
    "id, name, prefix, permissions, created_by, created_at, expires_at, last_used_at";

fn permissions_from_text(text: &str) -> StoreResult<Permissions> {
    text.split(',')
        .filter(|name| !name.is_empty())
        .map(stored::<Permission>)
        .collect()
}

fn permissions_text(permissions: Permissions) -> String {
    permissions.names().join(",")
}

/// An `api_tokens` row as selected by `TOKEN_COLUMNS`.
#[derive(sqlx::FromRow)]
struct TokenRow {
    id: i64,
    name: String,
    prefix: String,
    permissions: String,
    created_by: String,
    created_at: Option<i64>,
    expires_at: Option<i64>,
    last_used_at: Option<i64>,
}

impl TokenRow {
    fn into_token(self) -> StoreResult<ApiToken> {
        Ok(ApiToken {
            token_id: ApiTokenId::new(self.id),
            name: self.name,
            prefix: self.prefix,
            permissions: permissions_from_text(&self.permissions)?.iter().collect(),
            created_by: self.created_by,
            created_at: from_micros(self.created_at)?.unwrap_or_default(),
            expires_at: from_micros(self.expires_at)?,
            last_used_at: from_micros(self.last_used_at)?,
            token: None,
        })
    }
}

fn token_from_row(row: &AnyRow) -> StoreResult<ApiToken> {
    TokenRow::from_row(row)?.into_token()
}

/// A token with its tenant's path, as authentication reads it.
#[derive(sqlx::FromRow)]
struct TokenCredentialsRow {
    id: i64,
    name: String,
    tenant_code: String,
    path: String,
    permissions: String,
    secret_hash: String,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
    last_used_at: Option<i64>,
}

impl TokenCredentialsRow {
    fn into_credentials(self) -> StoreResult<TokenCredentials> {
        Ok(TokenCredentials {
            id: ApiTokenId::new(self.id),
            name: self.name,
            tenant_code: TenantCode::from_store(self.tenant_code),
            tenant_path: self.path,
            permissions: permissions_from_text(&self.permissions)?,
            secret_hash: self.secret_hash,
            expires_at: from_micros(self.expires_at)?,
            revoked_at: from_micros(self.revoked_at)?,
            last_used_at: from_micros(self.last_used_at)?,
        })
    }
}

/// A token being issued: the request, what is kept of its secret (`secret_hash`, and
/// `prefix`, the characters shown to tell tokens apart), who issued it and when.
pub struct IssuedToken<'a> {
    pub tenant_code: &'a TenantCode,
    pub token: &'a NewApiToken,
    pub secret_hash: &'a str,
    pub prefix: &'a str,
    pub created_by: &'a str,
    pub at: Timestamp,
    /// The token the request authenticated with, when a token mints a token: the new one
    /// is its child (expiry capped at the parent's; revoked with it).
    pub parent: Option<ApiTokenId>,
}

impl Store {
    /// Stores a new token (its secret only as `secret_hash`); answers the record.
    pub async fn create_api_token(
        &self,
        issued: IssuedToken<'_>,
        audit: &Audit,
    ) -> StoreResult<ApiToken> {
        let IssuedToken {
            tenant_code,
            token,
            secret_hash,
            prefix,
            created_by,
            at,
            parent,
        } = issued;
        let mut tx = self.begin_write().await?;
        let token = &match parent {
            Some(parent) => token
                .clone()
                .under_parent(live_parent_expiry(&mut tx, parent, at).await?),
            None => token.clone(),
        };
        let sql = format!(
            "INSERT INTO api_tokens (tenant_code, name, secret_hash, prefix, permissions,
                created_by, created_at, expires_at, parent_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {TOKEN_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(&token.name)
            .bind(secret_hash)
            .bind(prefix)
            .bind(permissions_text(token.permissions))
            .bind(created_by)
            .bind(to_micros(at))
            .bind(token.expires_at.map(to_micros))
            .bind(parent.map(|p| p.get()))
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| conflict_on_duplicate(e, "a live token with this Name"))?;
        let created = token_from_row(&row)?;
        let (action, kind) = (AuditAction::Create, ResourceType::ApiToken);
        record(&mut tx, audit, action, kind, &created.token_id).await?;
        tx.commit().await?;
        // Known in full now: its first use is served like any other (SQLite).
        if let Some(node) = self.tenant_node(tenant_code).await? {
            self.token_cache.put(
                secret_hash.to_string(),
                TokenCredentials {
                    id: created.token_id,
                    name: created.name.clone(),
                    tenant_code: tenant_code.clone(),
                    tenant_path: node.path,
                    permissions: token.permissions,
                    secret_hash: secret_hash.to_string(),
                    expires_at: token.expires_at,
                    revoked_at: None,
                    last_used_at: None,
                },
            );
        }
        Ok(created)
    }

    /// The tenant's live (not revoked) tokens, expired ones included, by id.
    pub async fn list_api_tokens(&self, tenant_code: &TenantCode) -> StoreResult<Vec<ApiToken>> {
        let sql = format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens
             WHERE tenant_code = $1 AND revoked_at IS NULL ORDER BY id"
        );
        let rows = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(token_from_row).collect()
    }

    pub async fn get_api_token(
        &self,
        tenant_code: &TenantCode,
        id: ApiTokenId,
    ) -> StoreResult<Option<ApiToken>> {
        let sql = format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens
             WHERE id = $1 AND tenant_code = $2 AND revoked_at IS NULL"
        );
        let row = sqlx::query(&sql)
            .bind(id.get())
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(token_from_row).transpose()
    }

    /// Revokes a live token of the tenant, and every live token minted from it (down the
    /// line), each with its audit entry; `false` when there is none.
    pub async fn revoke_api_token(
        &self,
        tenant_code: &TenantCode,
        id: ApiTokenId,
        at: Timestamp,
        audit: &Audit,
    ) -> StoreResult<bool> {
        self.token_cache.clear();
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "UPDATE api_tokens SET revoked_at = $1
             WHERE id = $2 AND tenant_code = $3 AND revoked_at IS NULL",
        )
        .bind(to_micros(at))
        .bind(id.get())
        .bind(tenant_code.as_str())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        record(
            &mut tx,
            audit,
            AuditAction::Revoke,
            ResourceType::ApiToken,
            id,
        )
        .await?;
        for child in live_descendants(&mut tx, id).await? {
            sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2")
                .bind(to_micros(at))
                .bind(child.get())
                .execute(&mut *tx)
                .await?;
            let (action, kind) = (AuditAction::Revoke, ResourceType::ApiToken);
            record(&mut tx, audit, action, kind, child).await?;
        }
        tx.commit().await?;
        // Again: a request may have cached the token while this transaction was open.
        self.token_cache.clear();
        Ok(true)
    }

    /// The token whose secret hashes to `secret_hash`, revoked or not.
    pub async fn token_credentials(
        &self,
        secret_hash: &str,
    ) -> StoreResult<Option<TokenCredentials>> {
        let key = secret_hash.to_string();
        if let Some(found) = self.token_cache.get(&key) {
            return Ok(Some(found));
        }
        let row = sqlx::query(
            "SELECT k.id, k.name, k.tenant_code, t.path, k.permissions, k.secret_hash,
                k.expires_at, k.revoked_at, k.last_used_at
             FROM api_tokens k JOIN tenants t ON t.code = k.tenant_code
             WHERE k.secret_hash = $1",
        )
        .bind(secret_hash)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let found = TokenCredentialsRow::from_row(&row)?.into_credentials()?;
        self.token_cache.put(key, found.clone());
        Ok(Some(found))
    }

    /// Whether token `id` is still live at `at` (neither revoked nor expired nor gone).
    pub async fn api_token_live(&self, id: ApiTokenId, at: Timestamp) -> StoreResult<bool> {
        let row = sqlx::query(
            "SELECT id FROM api_tokens WHERE id = $1 AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > $2)",
        )
        .bind(id.get())
        .bind(to_micros(at))
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    /// Records that token `id` was used at `at` (called at most once a minute per token).
    pub async fn touch_api_token(&self, id: ApiTokenId, at: Timestamp) -> StoreResult<()> {
        sqlx::query("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2")
            .bind(to_micros(at))
            .bind(id.get())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// The expiry of the live parent token `parent` a child is minted under; a conflict when
/// the parent was revoked or expired meanwhile (the request authenticated with it).
async fn live_parent_expiry(
    tx: &mut Tx,
    parent: ApiTokenId,
    at: Timestamp,
) -> StoreResult<Option<Timestamp>> {
    // Locked (PostgreSQL): a revocation of the parent waits for this issue, or this for it.
    let sql = format!(
        "SELECT expires_at, revoked_at FROM api_tokens WHERE id = $1{}",
        tx.backend().lock_rows()
    );
    let row: Option<(Option<i64>, Option<i64>)> = sqlx::query_as(&sql)
        .bind(parent.get())
        .fetch_optional(&mut **tx)
        .await?;
    let (expires_at, revoked_at) = row.ok_or_else(parent_gone)?;
    let expires_at = from_micros(expires_at)?;
    if revoked_at.is_some() || expires_at.is_some_and(|until| until <= at) {
        return Err(parent_gone());
    }
    Ok(expires_at)
}

fn parent_gone() -> StoreError {
    StoreError::Conflict("the token this request authenticated with is no longer live".into())
}

/// The live tokens minted from `id`, from its children down.
async fn live_descendants(tx: &mut Tx, id: ApiTokenId) -> StoreResult<Vec<ApiTokenId>> {
    let rows: Vec<(i64,)> = sqlx::query_as(
        "WITH RECURSIVE line (id) AS (
             SELECT id FROM api_tokens WHERE parent_id = $1
             UNION
             SELECT k.id FROM api_tokens k JOIN line ON k.parent_id = line.id
         )
         SELECT k.id FROM api_tokens k JOIN line ON line.id = k.id
         WHERE k.revoked_at IS NULL ORDER BY k.id",
    )
    .bind(id.get())
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|(id,)| ApiTokenId::new(id)).collect())
}
