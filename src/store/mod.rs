//! Persistence. One `Store` type over `sqlx::Any`: the backend (SQLite or PostgreSQL) is
//! chosen once, from the URL scheme, and every query is written in the SQL both accept
//! (`$n` placeholders, `RETURNING`, `ON CONFLICT`). The few dialect differences live in
//! `Backend`; schemas live in `migrations/<backend>/`. The whole test suite runs against
//! both, which is what keeps this honest.
//!
//! Column types are limited to what `Any` carries on both: TEXT, BIGINT (booleans are 0/1)
//! and DOUBLE PRECISION. Timestamps are RFC 3339 UTC text. Record bodies that no query
//! filters on are stored as a JSON document (`doc`), next to the columns that are queried.

mod address_book;
mod cache;
mod devices;
mod external_links;
mod geofences;
mod groups;
mod notifications;
mod settings;
mod tenants;
mod users;
mod webhooks;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use jiff::Timestamp;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};

use crate::domain::tenant::{Tenant, TenantNode};
use cache::RecordCache;

pub use address_book::{AddressBook, Owned};
pub use devices::DeletedDeviceScope;
pub use geofences::StoredGeofence;
pub use tenants::TenantDeletion;
pub use users::{Credentials, NewUser, StoredUser, UserListScope};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("conflict: {0}")]
    Conflict(String),
    /// The caller's `If-Match` (or our own read version) no longer matches.
    #[error("precondition failed")]
    PreconditionFailed,
    #[error("database error: {0}")]
    Database(sqlx::Error),
    #[error("corrupt record: {0}")]
    Corrupt(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match &err {
            // A row that refers to something deleted meanwhile (e.g. a tenant removed by
            // another process): the thing it names is gone.
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => StoreError::NotFound,
            _ => StoreError::Database(err),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Picks the backend from the URL scheme; anything else is refused rather than
    /// silently falling back to SQLite.
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        let scheme = url.split(':').next().unwrap_or_default();
        match scheme {
            "sqlite" => Ok(Backend::Sqlite),
            "postgres" | "postgresql" => Ok(Backend::Postgres),
            other => anyhow::bail!(
                "unsupported database URL scheme '{other}': use sqlite://… or postgres://…"
            ),
        }
    }
}

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// Where each tenant sits in the hierarchy. A tenant's code, parent and path never
    /// change after creation, so entries stay valid until the tenant is deleted (then they
    /// are dropped here; another process's stale entry only leads to empty results or a
    /// foreign-key refusal, mapped to not found).
    tenant_nodes: Arc<RwLock<HashMap<String, TenantNode>>>,
    /// Read caches (SQLite only; see `cache.rs`).
    tenants: Arc<RecordCache<String, Tenant>>,
    users: Arc<RecordCache<i64, StoredUser>>,
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

impl Store {
    /// Connects (creating the SQLite file if needed). Does not migrate.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url)?;
        let options = match backend {
            // SQLite: WAL for concurrent readers; a generous busy timeout because writers
            // queue on the single write lock (see `begin_write`).
            Backend::Sqlite => AnyPoolOptions::new()
                .max_connections(8)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        sqlx::query("PRAGMA journal_mode = WAL")
                            .execute(&mut *conn)
                            .await?;
                        // Every commit is fsynced: an SOS acknowledged is an SOS kept.
                        sqlx::query("PRAGMA synchronous = FULL")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA busy_timeout = 10000")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA foreign_keys = ON")
                            .execute(&mut *conn)
                            .await?;
                        Ok(())
                    })
                }),
            Backend::Postgres => AnyPoolOptions::new().max_connections(16),
        };
        let pool = options
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await
            .map_err(|e| anyhow::anyhow!("cannot open database: {e}"))?;
        let single_writer = backend == Backend::Sqlite;
        Ok(Self {
            pool,
            backend,
            tenant_nodes: Arc::default(),
            tenants: Arc::new(RecordCache::new(single_writer)),
            users: Arc::new(RecordCache::new(single_writer)),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Applies the backend's pending migrations.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.run(&self.pool).await?;
        Ok(())
    }

    pub async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Starts a write transaction. On SQLite it takes the write lock up front
    /// (`BEGIN IMMEDIATE`), so a read-then-write transaction cannot fail half way with
    /// SQLITE_BUSY when another writer got there first; it queues instead.
    async fn begin_write(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Any>> {
        Ok(match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        })
    }

    /// The common shape of an update or delete: in one write transaction, check the row's
    /// version (`select_etag`, see `check_version`), then run `change`.
    async fn write_versioned(
        &self,
        select_etag: AnyQuery<'_>,
        if_match: Option<&str>,
        change: AnyQuery<'_>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        check_version(&mut tx, select_etag, if_match).await?;
        change.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// A fresh opaque record version.
fn new_etag() -> String {
    format!("{:016x}", rand::random::<u64>())
}

fn parse_time(value: Option<String>) -> StoreResult<Option<Timestamp>> {
    value
        .map(|s| Timestamp::from_str(&s).map_err(|e| StoreError::Corrupt(format!("time {s}: {e}"))))
        .transpose()
}

fn time_text(t: Timestamp) -> String {
    t.to_string()
}

fn from_doc<T: serde::de::DeserializeOwned>(row: &AnyRow, column: &str) -> StoreResult<T> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(format!("{column}: {e}")))
}

fn to_doc<T: serde::Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Maps a unique-constraint violation to `Conflict`, leaving other errors alone.
fn conflict_on_duplicate(err: sqlx::Error, what: &str) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => {
            StoreError::Conflict(format!("{what} already exists"))
        }
        _ => StoreError::from(err),
    }
}

/// Optimistic concurrency: `expected` is the caller's If-Match value (if any).
fn check_etag(current: &str, expected: Option<&str>) -> StoreResult<()> {
    match expected {
        Some(e) if e != current => Err(StoreError::PreconditionFailed),
        _ => Ok(()),
    }
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

/// Inside a write transaction: runs `select_etag` (a `SELECT etag …` of the row about to
/// change), answers `NotFound` when there is no such row and `PreconditionFailed` when
/// `if_match` names another version.
async fn check_version(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    select_etag: AnyQuery<'_>,
    if_match: Option<&str>,
) -> StoreResult<()> {
    let row = select_etag
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
    check_etag(&row.try_get::<String, _>("etag")?, if_match)
}
