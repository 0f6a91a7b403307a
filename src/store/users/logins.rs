//! What authentication reads of a user (`Credentials`) and the login bookkeeping of
//! each client address (`login_failures`, `domain/lockout.rs`).

use jiff::Timestamp;
use sqlx::FromRow;
use sqlx::any::AnyRow;

use crate::domain::access::Role;
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{TenantCode, UserId};
use crate::domain::lockout::{Admission, LockoutPolicy, LoginState};
use crate::store::audit_log::record;
use crate::store::stored;
use crate::store::{Backend, Store, StoreError, StoreResult, Tx, from_micros, to_micros};

/// What authentication needs to know about a user.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub id: UserId,
    pub username: String,
    pub tenant_code: TenantCode,
    pub tenant_path: String,
    pub role: Role,
    pub is_disabled: bool,
    pub password_hash: Option<String>,
}

/// A user with its tenant's path, as authentication reads it.
#[derive(sqlx::FromRow)]
struct CredentialsRow {
    id: i64,
    username: String,
    tenant_code: String,
    path: String,
    role: String,
    is_disabled: i64,
    password_hash: Option<String>,
}

impl CredentialsRow {
    fn into_credentials(self) -> StoreResult<Credentials> {
        Ok(Credentials {
            id: UserId::new(self.id),
            username: self.username,
            tenant_code: TenantCode::from_store(self.tenant_code),
            tenant_path: self.path,
            role: stored(&self.role)?,
            is_disabled: self.is_disabled != 0,
            password_hash: self.password_hash,
        })
    }
}

impl Store {
    /// What authentication needs to know about the user with this username key.
    pub async fn credentials(&self, username_key: &str) -> StoreResult<Option<Credentials>> {
        let row = sqlx::query(
            "SELECT u.id, u.username, u.tenant_code, t.path, u.role, u.is_disabled, u.password_hash
             FROM users u JOIN tenants t ON t.code = u.tenant_code
             WHERE u.username_key = $1",
        )
        .bind(username_key)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(CredentialsRow::from_row(&row)?.into_credentials()?))
    }

    /// The client's login state as other processes may have left it: `None` when no
    /// other process writes this database (SQLite: the caller's own bookkeeping of the
    /// locks it decided is the whole story, and nothing need be read).
    pub async fn shared_login_state(
        &self,
        id: UserId,
        client: &str,
    ) -> StoreResult<Option<LoginState>> {
        if self.backend == Backend::Sqlite {
            return Ok(None);
        }
        self.client_login_state(id, client).await.map(Some)
    }

    /// The login state of one client address of a user (default when it never failed).
    pub async fn client_login_state(&self, id: UserId, client: &str) -> StoreResult<LoginState> {
        let row = sqlx::query(
            "SELECT failed_count, window_start, locked_at, pending, probed_at FROM login_failures
             WHERE user_id = $1 AND client = $2",
        )
        .bind(id.get())
        .bind(client)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| client_state_from_row(&r))
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// Decides, before any password is verified, whether an attempt from `client` may
    /// verify one (`LockoutPolicy::admit`), and takes its place: read locked and written
    /// in one transaction, so of any number of parallel attempts at most the threshold
    /// are admitted. A refused attempt is a failed login in the audit log.
    pub async fn admit_login_attempt(
        &self,
        id: UserId,
        client: &str,
        policy: &LockoutPolicy,
        at: Timestamp,
        audit: &Audit,
    ) -> StoreResult<Admission> {
        let mut tx = self.begin_write().await?;
        let before = client_state_locked(&mut tx, self.backend, id, client).await?;
        let (admission, after) = policy.admit(&before, at);
        if after != before {
            write_client_state(&mut tx, id, client, &after).await?;
        }
        if matches!(admission, Admission::Refuse { .. }) {
            record(
                &mut tx,
                audit,
                AuditAction::LoginFailed,
                ResourceType::User,
                id,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(admission)
    }

    /// Counts a wrong password from `client`: in the address's state when it was admitted
    /// in `window` (`None`: the lock's probe, already taken) and in the account's summary,
    /// both read locked and written in one transaction, with its audit entry. Returns
    /// the address's new state.
    pub async fn record_login_failure(
        &self,
        id: UserId,
        client: &str,
        window: Option<Timestamp>,
        policy: &LockoutPolicy,
        at: Timestamp,
        audit: &Audit,
    ) -> StoreResult<LoginState> {
        let mut tx = self.begin_write().await?;
        let before = client_state_locked(&mut tx, self.backend, id, client).await?;
        let client_state = match window {
            Some(window) => policy.after_failure(&before, window, at),
            None => before.clone(),
        };
        if client_state != before {
            write_client_state(&mut tx, id, client, &client_state).await?;
        }
        let lock = self.backend.lock_rows();
        let sql = format!(
            "SELECT failed_count, failed_window_start, last_lockout FROM users WHERE id = $1{lock}"
        );
        let row = sqlx::query(&sql)
            .bind(id.get())
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        let account = AccountFailuresRow::from_row(&row)?.into_state()?;
        let locked_now = (client_state.last_lockout != before.last_lockout)
            .then_some(client_state.last_lockout)
            .flatten();
        let account = policy.account_after_failure(&account, locked_now, at);
        sqlx::query(
            "UPDATE users SET failed_count = $1, failed_window_start = $2, last_lockout = $3 WHERE id = $4",
        )
        .bind(i64::from(account.failed_count))
        .bind(account.window_start.map(to_micros))
        .bind(account.last_lockout.map(to_micros))
        .bind(id.get())
        .execute(&mut *tx)
        .await?;
        record(
            &mut tx,
            audit,
            AuditAction::LoginFailed,
            ResourceType::User,
            id,
        )
        .await?;
        tx.commit().await?;
        self.users.remove(&id.get());
        Ok(client_state)
    }

    /// A right password from `client`, admitted in `window`: gives back its own place
    /// (failures of other attempts stay until their window passes) and, when `logged_in`,
    /// records the login (else it was a disabled account's: a failed login). An address
    /// left with nothing to remember loses its row.
    pub async fn release_login_attempt(
        &self,
        id: UserId,
        client: &str,
        window: Timestamp,
        policy: &LockoutPolicy,
        logged_in: Option<Timestamp>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let before = client_state_locked(&mut tx, self.backend, id, client).await?;
        let after = policy.after_success(&before, window);
        let blank = LoginState {
            window_start: after.window_start,
            ..LoginState::default()
        };
        if after == blank {
            sqlx::query("DELETE FROM login_failures WHERE user_id = $1 AND client = $2")
                .bind(id.get())
                .bind(client)
                .execute(&mut *tx)
                .await?;
        } else if after != before {
            write_client_state(&mut tx, id, client, &after).await?;
        }
        if let Some(at) = logged_in {
            sqlx::query("UPDATE users SET last_logged_in = $1 WHERE id = $2")
                .bind(to_micros(at))
                .bind(id.get())
                .execute(&mut *tx)
                .await?;
        }
        let action = match logged_in {
            Some(_) => AuditAction::Login,
            None => AuditAction::LoginFailed,
        };
        record(&mut tx, audit, action, ResourceType::User, id).await?;
        tx.commit().await?;
        if logged_in.is_some() {
            self.users.remove(&id.get());
        }
        Ok(())
    }
}

/// A `login_failures` row (its counters are NULL until the first failure).
#[derive(sqlx::FromRow)]
struct LoginFailureRow {
    failed_count: Option<i64>,
    window_start: Option<i64>,
    locked_at: Option<i64>,
    pending: Option<i64>,
    probed_at: Option<i64>,
}

fn client_state_from_row(row: &AnyRow) -> StoreResult<LoginState> {
    let row = LoginFailureRow::from_row(row)?;
    Ok(LoginState {
        failed_count: row.failed_count.unwrap_or(0) as i32,
        window_start: from_micros(row.window_start)?,
        last_lockout: from_micros(row.locked_at)?,
        pending: row.pending.unwrap_or(0) as i32,
        probed_at: from_micros(row.probed_at)?,
    })
}

/// A user's account-wide failure summary (`users.failed_count, failed_window_start,
/// last_lockout`).
#[derive(sqlx::FromRow)]
struct AccountFailuresRow {
    failed_count: i64,
    failed_window_start: Option<i64>,
    last_lockout: Option<i64>,
}

impl AccountFailuresRow {
    fn into_state(self) -> StoreResult<LoginState> {
        Ok(LoginState {
            failed_count: self.failed_count as i32,
            window_start: from_micros(self.failed_window_start)?,
            last_lockout: from_micros(self.last_lockout)?,
            ..LoginState::default()
        })
    }
}

/// Inside a write transaction: the state of one client address of a user, its row
/// created when missing and locked until commit (PostgreSQL; SQLite's one writer
/// already excludes every other).
async fn client_state_locked(
    tx: &mut Tx,
    backend: Backend,
    id: UserId,
    client: &str,
) -> StoreResult<LoginState> {
    sqlx::query(
        "INSERT INTO login_failures (user_id, client) VALUES ($1, $2)
         ON CONFLICT (user_id, client) DO NOTHING",
    )
    .bind(id.get())
    .bind(client)
    .execute(&mut **tx)
    .await?;
    let sql = format!(
        "SELECT failed_count, window_start, locked_at, pending, probed_at FROM login_failures
         WHERE user_id = $1 AND client = $2{}",
        backend.lock_rows()
    );
    let row = sqlx::query(&sql)
        .bind(id.get())
        .bind(client)
        .fetch_one(&mut **tx)
        .await?;
    client_state_from_row(&row)
}

async fn write_client_state(
    tx: &mut Tx,
    id: UserId,
    client: &str,
    state: &LoginState,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE login_failures SET failed_count = $1, window_start = $2, locked_at = $3,
            pending = $4, probed_at = $5
         WHERE user_id = $6 AND client = $7",
    )
    .bind(i64::from(state.failed_count))
    .bind(state.window_start.map(to_micros))
    .bind(state.last_lockout.map(to_micros))
    .bind(i64::from(state.pending))
    .bind(state.probed_at.map(to_micros))
    .bind(id.get())
    .bind(client)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
