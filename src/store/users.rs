//! Users and their profiles; their credentials and login bookkeeping are in
//! `users/logins.rs`.

mod logins;

pub use logins::Credentials;

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::stored;
use super::user_admin::keep_root_administrator;
use super::webhook_events::emit;
use super::{
    Key, Store, StoreError, StoreResult, TenantSelection, VersionedRow, conflict_on_duplicate,
    from_micros, new_etag, to_doc, to_micros,
};
use crate::domain::access::Role;
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{TenantCode, UserId};
use crate::domain::profile::UserProfile;
use crate::domain::time::now;
use crate::domain::user::{User, UserAccount, UserDetails, UserFields, UserRef};
use crate::domain::webhook::Category;
use crate::domain::webhook_event::{EventType, event_data};

/// A validated user ready to insert (its `password` is ignored: `password_hash` is
/// what is stored).
pub struct NewUser {
    pub tenant_code: TenantCode,
    pub user: UserFields,
    pub password_hash: String,
}

/// A user's record replaced (PUT): the new record, its photo as it is to be stored,
/// and the new password's hash when the password changes.
pub struct UserUpdate<'a> {
    pub tenant_code: &'a TenantCode,
    pub id: UserId,
    pub user: &'a UserFields,
    pub password_hash: Option<String>,
}

/// A user as stored, with the internal id.
#[derive(Debug, Clone)]
pub struct StoredUser {
    pub id: UserId,
    pub role: Role,
    pub user: User,
}

const USER_COLUMNS: &str = "u.id, u.tenant_code, u.username, u.role, u.is_disabled, u.failed_count, \
     u.failed_window_start, u.last_lockout, u.last_logged_in, u.doc, u.etag, u.updated_at";

fn user_columns(with_photo: bool) -> String {
    if with_photo {
        format!("{USER_COLUMNS}, u.photo")
    } else {
        USER_COLUMNS.to_string()
    }
}

/// A `users` row as selected by `user_columns` (`photo` only when asked for).
#[derive(sqlx::FromRow)]
struct UserRow {
    id: i64,
    tenant_code: String,
    username: String,
    role: String,
    is_disabled: i64,
    failed_count: i64,
    failed_window_start: Option<i64>,
    last_lockout: Option<i64>,
    last_logged_in: Option<i64>,
    doc: String,
    etag: String,
    updated_at: Option<i64>,
    #[sqlx(default)]
    photo: Option<String>,
}

impl UserRow {
    fn into_stored(self, with_photo: bool) -> StoreResult<StoredUser> {
        let role: Role = stored(&self.role)?;
        let details: UserDetails = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("user document: {e}")))?;
        let id = UserId::new(self.id);
        let account = UserAccount {
            tenant_code: TenantCode::from_store(self.tenant_code),
            username: self.username,
            user_id: id,
            role,
            is_disabled: self.is_disabled != 0,
            failed_password_attempt_count: i32::try_from(self.failed_count).unwrap_or(i32::MAX),
            failed_password_attempt_window_start: from_micros(self.failed_window_start)?,
            last_lockout_date: from_micros(self.last_lockout)?,
            last_logged_in: from_micros(self.last_logged_in)?,
            timestamp: from_micros(self.updated_at)?,
            photo: if with_photo { self.photo } else { None },
            etag: self.etag,
        };
        Ok(StoredUser {
            id,
            role,
            user: User::new(account, details),
        })
    }
}

fn user_from_row(row: &AnyRow, with_photo: bool) -> StoreResult<StoredUser> {
    UserRow::from_row(row)?.into_stored(with_photo)
}

/// The part of a user kept in `doc`: everything not held in its own column.
fn user_doc(user: &UserFields) -> StoreResult<String> {
    to_doc(&user.details)
}

fn user_filter(user: &UserRef) -> (&'static str, UserKey) {
    match user {
        UserRef::Id(id) => ("u.id = $2", UserKey::Id(id.get())),
        UserRef::Username(name) => ("u.username_key = $2", UserKey::Name(name.clone())),
        UserRef::Invalid => ("u.id = $2", UserKey::Id(-1)),
    }
}

enum UserKey {
    Id(i64),
    Name(String),
}

impl Store {
    pub async fn count_users(&self) -> StoreResult<i64> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM users")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("n")?)
    }

    /// Inserts a user with an empty profile; `Conflict` when the username is taken.
    /// `audit` is `None` only for the first administrator, made at startup.
    pub async fn create_user(&self, new: NewUser, audit: Option<&Audit>) -> StoreResult<UserId> {
        let username = &new.user.username;
        let now = to_micros(now());
        let profile = UserProfile {
            timestamp: None,
            ..Default::default()
        };
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "INSERT INTO users (tenant_code, username, username_key, password_hash, role,
                is_disabled, failed_count, doc, photo, profile_doc, profile_updated_at, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9, $10, $11, $10) RETURNING id",
        )
        .bind(new.tenant_code.as_str())
        .bind(username.trim())
        .bind(User::username_key(username))
        .bind(&new.password_hash)
        .bind(new.user.role.as_str())
        .bind(new.user.is_disabled as i64)
        .bind(user_doc(&new.user)?)
        .bind(new.user.photo.clone())
        .bind(to_doc(&profile)?)
        .bind(now)
        .bind(new_etag())
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, "a user with this Username"))?;
        let id = UserId::new(row.try_get("id")?);
        user_event(&mut tx, id, EventType::Created).await?;
        if let Some(audit) = audit {
            record(&mut tx, audit, AuditAction::Create, ResourceType::User, id).await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    /// A user of exactly this tenant.
    pub async fn get_user(
        &self,
        tenant_code: &TenantCode,
        user: &UserRef,
        with_photo: bool,
    ) -> StoreResult<Option<StoredUser>> {
        let cacheable = !with_photo && matches!(user, UserRef::Id(_));
        if cacheable
            && let UserRef::Id(id) = user
            && let Some(hit) = self.users.get(&id.get())
        {
            let same_tenant = hit.user.tenant_code == *tenant_code;
            return Ok(same_tenant.then_some(hit));
        }
        let (filter, key) = user_filter(user);
        let sql = format!(
            "SELECT {} FROM users u WHERE u.tenant_code = $1 AND {filter}",
            user_columns(with_photo)
        );
        let query = sqlx::query(&sql).bind(tenant_code.as_str());
        let query = match key {
            UserKey::Id(id) => query.bind(id),
            UserKey::Name(name) => query.bind(name),
        };
        let row = query.fetch_optional(&self.pool).await?;
        let found = row.map(|r| user_from_row(&r, with_photo)).transpose()?;
        if cacheable && let Some(u) = &found {
            self.users.put(u.id.get(), u.clone());
        }
        Ok(found)
    }

    /// Whether a user with this id lives in the subtree rooted at `tenant_path`.
    pub async fn user_exists_in_subtree(&self, tenant_path: &str, id: UserId) -> StoreResult<bool> {
        let row = sqlx::query(
            "SELECT u.id FROM users u JOIN tenants t ON t.code = u.tenant_code
             WHERE u.id = $1 AND t.path LIKE $2",
        )
        .bind(id.get())
        .bind(format!("{tenant_path}%"))
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    /// One page of users in id order, strictly after `after`.
    pub async fn list_users(
        &self,
        tenants: &TenantSelection,
        after: i64,
        limit: u32,
        with_photo: bool,
    ) -> StoreResult<Vec<StoredUser>> {
        let columns = user_columns(with_photo);
        let (sql, key) = match tenants {
            TenantSelection::Tenant(code) => (
                format!(
                    "SELECT {columns} FROM users u WHERE u.tenant_code = $1 AND u.id > $2 ORDER BY u.id LIMIT $3"
                ),
                code.to_string(),
            ),
            TenantSelection::Subtree(path) => (
                format!(
                    "SELECT {columns} FROM users u JOIN tenants t ON t.code = u.tenant_code
                     WHERE t.path LIKE $1 AND u.id > $2 ORDER BY u.id LIMIT $3"
                ),
                format!("{path}%"),
            ),
        };
        let rows = sqlx::query(&sql)
            .bind(key)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| user_from_row(r, with_photo)).collect()
    }

    /// Replaces a user's writable fields. `password_hash` of `None` keeps the stored one;
    /// `photo` is written as given (the caller decides whether to keep the old one).
    pub async fn update_user(
        &self,
        update: UserUpdate<'_>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let UserUpdate {
            tenant_code,
            id,
            user,
            password_hash,
        } = update;
        let role = user.role;
        let mut tx = self.begin_write().await?;
        let stays = role == Role::Administrator && !user.is_disabled;
        keep_root_administrator(&mut tx, id, stays).await?;
        let keys = [Key::Id(id.get()), Key::Text(tenant_code)];
        self.check_version(&mut tx, VersionedRow::by_id("users", &keys), if_match)
            .await?;
        // A new password, a disabled account, portal access taken away or another role
        // ends the user's sessions.
        let role_before: Option<String> = sqlx::query("SELECT role FROM users WHERE id = $1")
            .bind(id.get())
            .fetch_optional(&mut *tx)
            .await?
            .map(|row| row.try_get("role"))
            .transpose()?;
        let ends_sessions = password_hash.is_some()
            || user.is_disabled
            || !user.details.is_portal_enabled
            || role_before.is_some_and(|before| before != role.as_str());
        let username = &user.username;
        sqlx::query(
            "UPDATE users SET username = $1, username_key = $2,
                password_hash = COALESCE($3, password_hash), role = $4, is_disabled = $5,
                doc = $6, photo = $7, etag = $8, updated_at = $9
             WHERE id = $10",
        )
        .bind(username.trim())
        .bind(User::username_key(username))
        .bind(password_hash)
        .bind(role.as_str())
        .bind(user.is_disabled as i64)
        .bind(user_doc(user)?)
        .bind(user.photo.clone())
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(id.get())
        .execute(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, "a user with this Username"))?;
        if ends_sessions {
            sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                .bind(id.get())
                .execute(&mut *tx)
                .await?;
        }
        user_event(&mut tx, id, EventType::Updated).await?;
        record(&mut tx, audit, AuditAction::Update, ResourceType::User, id).await?;
        tx.commit().await?;
        self.users.remove(&id.get());
        self.forget_user_sessions(id);
        Ok(())
    }

    pub async fn delete_user(
        &self,
        tenant_code: &TenantCode,
        id: UserId,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        keep_root_administrator(&mut tx, id, false).await?;
        let keys = [Key::Id(id.get()), Key::Text(tenant_code)];
        self.check_version(&mut tx, VersionedRow::by_id("users", &keys), if_match)
            .await?;
        user_event(&mut tx, id, EventType::Deleted).await?;
        sqlx::query("DELETE FROM users WHERE id = $1")
            .bind(id.get())
            .execute(&mut *tx)
            .await?;
        record(&mut tx, audit, AuditAction::Delete, ResourceType::User, id).await?;
        tx.commit().await?;
        self.users.remove(&id.get());
        self.forget_user_sessions(id);
        Ok(())
    }

    // --- profiles -------------------------------------------------------------------

    /// A user's profile, with its version: (user id, profile).
    pub async fn get_profile(
        &self,
        tenant_code: &TenantCode,
        user: &UserRef,
    ) -> StoreResult<Option<(UserId, UserProfile)>> {
        let (filter, key) = user_filter(user);
        let sql = format!(
            "SELECT u.id, u.username, u.profile_doc, u.profile_updated_at, u.profile_etag
             FROM users u WHERE u.tenant_code = $1 AND {filter}"
        );
        let query = sqlx::query(&sql).bind(tenant_code.as_str());
        let query = match key {
            UserKey::Id(id) => query.bind(id),
            UserKey::Name(name) => query.bind(name),
        };
        let row = query.fetch_optional(&self.pool).await?;
        row.as_ref().map(profile_from_row).transpose()
    }

    pub async fn list_profiles(&self, tenant_code: &TenantCode) -> StoreResult<Vec<UserProfile>> {
        let rows = sqlx::query(
            "SELECT u.id, u.username, u.profile_doc, u.profile_updated_at, u.profile_etag
             FROM users u WHERE u.tenant_code = $1 ORDER BY u.id",
        )
        .bind(tenant_code.as_str())
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| Ok(profile_from_row(row)?.1))
            .collect()
    }

    pub async fn update_profile(
        &self,
        tenant_code: &TenantCode,
        id: UserId,
        profile: &UserProfile,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let keys = [Key::Id(id.get()), Key::Text(tenant_code)];
        let row = VersionedRow {
            column: "profile_etag",
            ..VersionedRow::by_id("users", &keys)
        };
        let change = sqlx::query(
            "UPDATE users SET profile_doc = $1, profile_updated_at = $2, profile_etag = $3 WHERE id = $4",
        )
        .bind(to_doc(profile)?)
        .bind(to_micros(now()))
        .bind(new_etag())
        .bind(id.get());
        let entry = audit.entry(AuditAction::Update, ResourceType::Profile, id);
        self.write_versioned(row, if_match, change, Some(&entry))
            .await
    }
}

/// A `User` webhook event for user `id` as it is now in the transaction.
pub(super) async fn user_event(tx: &mut super::Tx, id: UserId, kind: EventType) -> StoreResult<()> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1");
    let row = sqlx::query(&sql)
        .bind(id.get())
        .fetch_one(&mut **tx)
        .await?;
    let stored = user_from_row(&row, false)?;
    let tenant = &stored.user.tenant_code;
    emit(tx, tenant, Category::User, kind, event_data(&stored.user)).await
}

/// A user's profile columns (`u.id, u.username, u.profile_doc, u.profile_updated_at,
/// u.profile_etag`).
#[derive(sqlx::FromRow)]
struct ProfileRow {
    id: i64,
    username: String,
    profile_doc: String,
    profile_updated_at: Option<i64>,
    profile_etag: String,
}

impl ProfileRow {
    fn into_profile(self) -> StoreResult<(UserId, UserProfile)> {
        let mut profile: UserProfile = serde_json::from_str(&self.profile_doc)
            .map_err(|e| StoreError::Corrupt(format!("user profile document: {e}")))?;
        profile.username = Some(self.username);
        profile.timestamp = from_micros(self.profile_updated_at)?;
        profile.etag = Some(self.profile_etag);
        Ok((UserId::new(self.id), profile))
    }
}

fn profile_from_row(row: &AnyRow) -> StoreResult<(UserId, UserProfile)> {
    ProfileRow::from_row(row)?.into_profile()
}
