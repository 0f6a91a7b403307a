//! Persistence. One `Store` type over `sqlx::Any`: the backend (SQLite or PostgreSQL) is
//! chosen once, from the URL scheme, and every query is written in the SQL both accept
//! (`$n` placeholders, `RETURNING`, `ON CONFLICT`). The whole test suite runs against
//! both, which is what keeps this honest (docs/decisions.md, "Storage").
//!
//! Where the backends differ, all of it:
//! - starting a write transaction (`Store::begin_write`: `BEGIN IMMEDIATE` on SQLite, so
//!   the one writer queues instead of failing half way);
//! - row locks (`Backend::lock_rows`, `Backend::share_rows`: PostgreSQL only — SQLite's
//!   single writer already excludes every other);
//! - placeholders of statements with many parameters (`Backend::placeholders`: `?` on
//!   SQLite, `$n` on PostgreSQL);
//! - identity columns and JSON functions in the schemas (`migrations/<backend>/`).
//!
//! NULL floats: sqlx-core 0.8.6's `Any` sends a NULL `Option<f64>` to PostgreSQL typed
//! `real` (float4) instead of `double precision`. A cached (named) prepared statement
//! keeps the parameter types of its first execution, so a statement first run with a NULL
//! float fails on that connection once a value comes ("incorrect binary data format in
//! bind parameter"). Optional floats are therefore bound as `Float`, whose NULL is typed
//! `double precision` on PostgreSQL.
//!
//! Column types are limited to what `Any` carries on both: TEXT, BIGINT (booleans are
//! 0/1) and DOUBLE PRECISION. Times are BIGINT microseconds since the Unix epoch (UTC).
//! Record bodies that no query filters on are stored as a JSON document (`doc`), next to
//! the columns that are queried.

mod address_book;
mod alert_events;
mod alerts;
mod api_tokens;
mod audit_log;
pub mod backup;
mod cache;
mod collections;
mod deliveries;
mod delivery_queue;
mod device_rows;
mod device_states;
mod devices;
mod escalation_policies;
mod escalation_steps;
mod external_links;
mod gateway_devices;
mod geofences;
mod groups;
mod itineraries;
mod itinerary_parts;
mod itinerary_risk;
mod local_feed;
mod lookups;
mod message_retention;
mod mo_message_inserts;
mod mo_messages;
mod monitoring_check_ins;
mod monitoring_device;
mod monitoring_events;
mod monitoring_history;
mod monitoring_rows;
mod monitoring_sessions;
mod monitoring_timers;
mod mt_messages;
mod notifications;
mod person_erasure;
mod push_subscriptions;
#[cfg(test)]
mod query_plans;
mod receiver_backlog;
mod references;
pub mod reports;
mod risk_regions;
mod sessions;
mod settings;
mod sqlite_writer;
mod stream_feed;
#[cfg(test)]
mod temp_file;
mod tenants;
mod user_admin;
mod users;
mod wal_sync;
mod webhook_events;
mod webhooks;
mod write_tx;
mod writer_queue;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::Notify;

use jiff::Timestamp;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};

use crate::domain::audit::AuditEntry;
use crate::domain::closed_set::NotInSet;
use crate::domain::ids::TenantCode;
use crate::domain::tenant::{Tenant, TenantNode};
use cache::RecordCache;
use local_feed::LocalFeed;
use sqlite_writer::{SqliteWriter, WriterTx};
use write_tx::Wakes;
use writer_queue::WriterQueue;

pub use address_book::{AddressBook, AddressBookWrite, BookRecord, Owned, OwnedRecord};
pub use alert_events::{AlertAction, AlertEvent};
pub use alerts::{AlertFilter, AlertMatch, DueEscalation, MatchedAlert};
pub use api_tokens::{IssuedToken, TokenCredentials};
pub use audit_log::AuditQuery;
pub use deliveries::{DeliveryFilter, NewDelivery};
pub use delivery_queue::{ClaimFilter, ClaimRequest, ClaimedDelivery, QueueCount};
pub use device_states::IngestContext;
pub use escalation_policies::EscalationPolicyWrite;
pub use escalation_steps::StepDevice;
pub use gateway_devices::GatewayDevice;
pub use geofences::StoredGeofence;
pub use itineraries::{ItineraryParts, ItineraryQuery, Owner, StoredItinerary};
pub use itinerary_parts::ItineraryKey;
pub use lookups::{DevicePosition, StoredNotification, UserContact};
pub use mo_message_inserts::{Inserted, NewMessage};
pub use mo_messages::{MessageCursor, MessageQuery};
pub use monitoring_check_ins::ApiCheckIn;
pub use monitoring_device::DEVICE_ACTOR;
pub use monitoring_sessions::SessionEnding;
pub use monitoring_timers::DueTimers;
pub use notifications::NotificationUpdate;
pub use person_erasure::Erasure;
pub use push_subscriptions::{PushCause, PushTarget, Subscriber};
pub use risk_regions::{RiskRegionUpdate, StoredRiskRegion};
pub use sessions::SessionCredentials;
pub use stream_feed::{FeedItem, StreamAnnouncement, StreamFeed, StreamRecord};
pub use tenants::TenantDeletion;
pub use tenants::TenantSelection;
pub use users::{Credentials, NewUser, StoredUser, UserUpdate};
pub use write_tx::{Committed, Wake, WriteTx};
pub use writer_queue::WaitingForWriter;

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
    /// The database could not be reached, or could not take the write now (the
    /// connection broke, the transaction or its writer failed): 503 with `Retry-After`.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Every connection of the pool stayed in use for the acquire timeout: the database
    /// is overloaded, and nothing of this request was done.
    #[error("busy: no database connection came free in time")]
    Busy,
    /// The write names records that do not resolve (found inside its transaction).
    #[error("invalid: {0:?}")]
    Invalid(crate::domain::validation::ValidationErrors),
}

pub type StoreResult<T> = Result<T, StoreError>;

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match &err {
            // A row that refers to something deleted meanwhile (e.g. a tenant removed by
            // another process): the thing it names is gone.
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => StoreError::NotFound,
            // PostgreSQL broke a lock cycle between two writers (e.g. two lists naming
            // each other, updated at once): this one lost and changed nothing.
            sqlx::Error::Database(db) if db.code().as_deref() == Some("40P01") => {
                StoreError::Conflict("a concurrent change got in the way; retry".into())
            }
            sqlx::Error::PoolTimedOut => StoreError::Busy,
            // The database cannot be reached (its connection broke, or the pool is shut):
            // nothing was done, and the pool reconnects for a later request.
            sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolClosed => {
                StoreError::Unavailable(err.to_string())
            }
            sqlx::Error::Database(db) if db.code().is_some_and(|c| connection_lost(&c)) => {
                StoreError::Unavailable(err.to_string())
            }
            _ => StoreError::Database(err),
        }
    }
}

/// PostgreSQL's words for a session it ended or would not start: SQLSTATE class 08
/// (connection exception) and 57P01–57P03 (administrator or crash shutdown, cannot
/// connect now).
fn connection_lost(sqlstate: &str) -> bool {
    sqlstate.starts_with("08") || matches!(sqlstate, "57P01" | "57P02" | "57P03")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Appended to a `SELECT` inside a write transaction to lock what it read until
    /// commit. SQLite needs nothing: `BEGIN IMMEDIATE` holds the database's write lock.
    fn lock_rows(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        }
    }

    /// The placeholders of a statement's parameters `first..first + count`, comma
    /// separated, for statements with many of them (multi-row inserts, `IN` lists).
    /// SQLite gets anonymous `?`s, bound in order: sqlx looks each named parameter up by
    /// index, which SQLite answers by scanning the whole list — quadratic, and for a
    /// 1,700-parameter insert the single largest cost of ingest. The statement must then
    /// use `?` throughout (SQLite numbers anonymous parameters in order of appearance).
    fn placeholders(self, first: usize, count: usize) -> String {
        match self {
            Backend::Sqlite => vec!["?"; count].join(", "),
            Backend::Postgres => (first..first + count)
                .map(|i| format!("${i}"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The `VALUES` rows of a multi-row insert: `rows` groups of `columns` parameters,
    /// `(…), (…)`, numbered from 1 in row order (bind row by row, column by column).
    fn value_rows(self, rows: usize, columns: usize) -> String {
        (0..rows)
            .map(|r| format!("({})", self.placeholders(r * columns + 1, columns)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Like `lock_rows`, for the rows of one table (`alias`) of a join.
    fn lock_rows_of(self, alias: &str) -> String {
        match self {
            Backend::Sqlite => String::new(),
            Backend::Postgres => format!(" FOR UPDATE OF {alias}"),
        }
    }

    /// Appended to a `SELECT … FROM {table} x JOIN …` to keep the `x` rows read from
    /// being changed or deleted until commit, while others may read-lock them too.
    fn share_rows(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR SHARE OF x",
        }
    }

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

/// Tenants' places in the hierarchy by code (`Store::tenant_nodes`).
type TenantNodes = Arc<RwLock<HashMap<TenantCode, TenantNode>>>;

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// Where each tenant sits in the hierarchy. A tenant's code, parent and path never
    /// change after creation, so entries stay valid until the tenant is deleted (then they
    /// are dropped here; another process's stale entry only leads to empty results or a
    /// foreign-key refusal, mapped to not found).
    tenant_nodes: TenantNodes,
    /// Read caches (SQLite only; see `cache.rs`).
    tenants: Arc<RecordCache<TenantCode, Tenant>>,
    users: Arc<RecordCache<i64, StoredUser>>,
    /// API tokens and sessions by secret hash (SQLite only, like the others: on PostgreSQL
    /// every request reads them, so a revocation elsewhere holds at once).
    token_cache: Arc<RecordCache<String, TokenCredentials>>,
    session_cache: Arc<RecordCache<String, SessionCredentials>>,
    /// SQLite's one writing connection, which writers queue for (`sqlite_writer.rs`),
    /// and the writes declared waiting for it.
    writer: Option<Arc<SqliteWriter>>,
    writer_queue: Option<Arc<WriterQueue>>,
    /// SQLite: the announcements of this process's commits, handed on once durable.
    local_feed: Option<Arc<LocalFeed>>,
    /// What committed write transactions wake in this process (`Wake`).
    wakes: Arc<Wakes>,
    /// PostgreSQL: where the live stream's announcements go (`stream_feed.rs`), and the
    /// URL its listening connection opens (never logged: it may hold a password).
    stream_channel: Option<Arc<str>>,
    url: Option<Arc<str>>,
    /// How long a monitoring session's minute lasts: a minute, except in tests
    /// (`with_monitoring_minute`), so its timers fire within seconds.
    monitoring_minute: jiff::SignedDuration,
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

impl Store {
    /// Connects (creating the SQLite file if needed). Does not migrate.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url)?;
        if backend == Backend::Sqlite && (url.contains(":memory:") || url.contains("mode=memory")) {
            // Each connection (the pool's and the writer's) would see its own database.
            anyhow::bail!(
                "an in-memory SQLite database is not supported: use a file, e.g. sqlite://safetrack.db?mode=rwc"
            );
        }
        let options = match backend {
            Backend::Sqlite => AnyPoolOptions::new()
                .max_connections(8)
                .after_connect(|conn, _| Box::pin(async move { configure_sqlite(conn).await })),
            Backend::Postgres => AnyPoolOptions::new().max_connections(16),
        };
        let pool = options
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await
            .map_err(|e| anyhow::anyhow!("cannot open database: {e}"))?;
        let writer = match backend {
            Backend::Sqlite => Some(Arc::new(
                SqliteWriter::open(url)
                    .await
                    .map_err(|e| anyhow::anyhow!("cannot open database: {e}"))?,
            )),
            Backend::Postgres => None,
        };
        let single_writer = backend == Backend::Sqlite;
        let (stream_channel, url) = match backend {
            Backend::Sqlite => (None, None),
            Backend::Postgres => (
                Some(stream_feed::channel_of(&pool).await?),
                Some(Arc::from(url)),
            ),
        };
        Ok(Self {
            pool,
            backend,
            tenant_nodes: Arc::default(),
            tenants: Arc::new(RecordCache::new(single_writer)),
            users: Arc::new(RecordCache::new(single_writer)),
            token_cache: Arc::new(RecordCache::new(single_writer)),
            session_cache: Arc::new(RecordCache::new(single_writer)),
            writer_queue: writer.as_ref().map(|_| Arc::default()),
            local_feed: writer.as_ref().map(|_| Arc::new(LocalFeed::new())),
            writer,
            wakes: Arc::default(),
            stream_channel,
            url,
            monitoring_minute: jiff::SignedDuration::from_mins(1),
        })
    }

    /// This store with sessions' minutes lasting `minute` (in-process, for tests).
    pub fn with_monitoring_minute(mut self, minute: jiff::SignedDuration) -> Self {
        self.monitoring_minute = minute;
        self
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether write transactions take turns on one writer (SQLite): many small ones
    /// then gain by sharing one transaction (ingest's group commit); elsewhere each
    /// commits on its own.
    pub fn writes_take_turns(&self) -> bool {
        self.writer.is_some()
    }

    /// Declares a write waiting for the writer's turn until the ticket is `taken`
    /// (ingest's batches queued for their group): `writer_lull` waits for them. Nothing
    /// is counted where writes do not take turns.
    pub fn waiting_for_writer(&self) -> WaitingForWriter {
        match &self.writer_queue {
            Some(queue) => queue.declare(),
            None => WaitingForWriter::default(),
        }
    }

    /// Returns once no declared write waits for the writer (at once if none does, or
    /// writes do not take turns), or after `at_most`: a write that can wait lets them go
    /// first.
    pub async fn writer_lull(&self, at_most: Duration) {
        if let Some(queue) = &self.writer_queue {
            queue.lull(at_most).await;
        }
    }

    /// What wakes this process's loops of `kind` when a committed transaction asked
    /// for it (`WriteTx::wake`); other processes find the work at their next poll.
    pub fn wake_signal(&self, kind: Wake) -> Arc<Notify> {
        self.wakes.signal(kind).clone()
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
    async fn begin_write(&self) -> StoreResult<Tx> {
        Ok(match &self.writer {
            Some(writer) => Tx::Writer(writer.begin().await?),
            None => Tx::Pooled(self.pool.begin().await?),
        })
    }

    /// The common shape of an update or delete: in one write transaction, check the
    /// row's version (see `check_version`), then run `change` and record `audit`.
    async fn write_versioned(
        &self,
        row: VersionedRow<'_>,
        if_match: Option<&str>,
        change: AnyQuery<'_>,
        audit: Option<&AuditEntry>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        self.check_version(&mut tx, row, if_match).await?;
        change.execute(&mut *tx).await?;
        if let Some(entry) = audit {
            audit_log::write_audit(&mut tx, entry).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Inside a write transaction: reads and locks the row's `etag` (PostgreSQL: `FOR
    /// UPDATE`, so a concurrent writer waits and then sees the new version; SQLite:
    /// `BEGIN IMMEDIATE` already excludes other writers). `NotFound` when there is no such
    /// row, `PreconditionFailed` when `if_match` names another version. This is the one
    /// compare-and-set every versioned write goes through.
    async fn check_version(
        &self,
        tx: &mut Tx,
        row: VersionedRow<'_>,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let sql = format!(
            "SELECT {} AS etag FROM {} WHERE {}{}",
            row.column,
            row.table,
            row.filter,
            self.backend.lock_rows()
        );
        let mut query = sqlx::query(&sql);
        for key in row.keys {
            query = match key {
                Key::Id(id) => query.bind(*id),
                Key::Text(text) => query.bind(*text),
            };
        }
        let found = query
            .fetch_optional(&mut **tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        check_etag(&found.try_get::<String, _>("etag")?, if_match)
    }

    /// A write transaction for a service to drive step by step (ingest, the scheduler):
    /// everything it does commits together or not at all.
    pub async fn begin(&self) -> StoreResult<WriteTx> {
        let tx = self.begin_write().await?;
        Ok(WriteTx::new(tx, self))
    }

    /// SQLite: copies the write-ahead log into the database file, mostly outside the
    /// writer's turn (`SqliteWriter::checkpoint`); true when there was anything to copy.
    /// PostgreSQL checkpoints itself: false.
    pub async fn checkpoint_log(&self) -> StoreResult<bool> {
        match &self.writer {
            Some(writer) => Ok(writer.checkpoint(&self.pool).await?),
            None => Ok(false),
        }
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// A fresh opaque record version.
fn new_etag() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// Times are stored as microseconds since the Unix epoch (UTC): they sort and compare
/// exactly on both backends (see migration 0008).
/// A time column the server always sets (microseconds since the epoch).
fn stored_time(micros: i64) -> StoreResult<Timestamp> {
    Timestamp::from_microsecond(micros)
        .map_err(|e| StoreError::Corrupt(format!("time {micros}: {e}")))
}

fn from_micros(value: Option<i64>) -> StoreResult<Option<Timestamp>> {
    value
        .map(|us| {
            Timestamp::from_microsecond(us)
                .map_err(|e| StoreError::Corrupt(format!("time {us}: {e}")))
        })
        .transpose()
}

fn to_micros(t: Timestamp) -> i64 {
    t.as_microsecond()
}

fn from_doc<T: serde::de::DeserializeOwned>(row: &AnyRow, column: &str) -> StoreResult<T> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(format!("{column}: {e}")))
}

/// A stored text as a member of its closed set (`Channel`, `Role`, …): any other text
/// was not written by this server, so the record is corrupt (the error names the set).
fn stored<T: std::str::FromStr<Err = NotInSet>>(text: &str) -> StoreResult<T> {
    text.parse()
        .map_err(|e: NotInSet| StoreError::Corrupt(e.to_string()))
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

/// A nullable DOUBLE PRECISION parameter. sqlx-core 0.8.6's `Any` swaps the types of
/// NULL `f32` and `f64` when it hands them to a driver, so a plain `None::<f64>` reaches
/// PostgreSQL as `real` and poisons the cached statement for later values (see the top
/// of this file); a NULL is bound here as an `f32` one, which arrives as `double precision`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Float(pub Option<f64>);

impl sqlx::Type<sqlx::Any> for Float {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <f64 as sqlx::Type<sqlx::Any>>::type_info()
    }
}

impl<'q> sqlx::Encode<'q, sqlx::Any> for Float {
    fn encode_by_ref(
        &self,
        buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        match self.0 {
            Some(value) => <f64 as sqlx::Encode<'q, sqlx::Any>>::encode_by_ref(&value, buf),
            None => <Option<f32> as sqlx::Encode<'q, sqlx::Any>>::encode_by_ref(&None, buf),
        }
    }
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;
/// A write transaction: on SQLite the writer's, holding its turn until it ends; on
/// PostgreSQL a pooled connection's.
enum Tx {
    Writer(WriterTx),
    Pooled(sqlx::Transaction<'static, sqlx::Any>),
}

impl Tx {
    fn backend(&self) -> Backend {
        match self {
            Tx::Writer(_) => Backend::Sqlite,
            Tx::Pooled(_) => Backend::Postgres,
        }
    }

    async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Writer(tx) => tx.commit().await,
            Tx::Pooled(tx) => tx.commit().await,
        }
    }
}

impl std::ops::Deref for Tx {
    type Target = sqlx::AnyConnection;
    fn deref(&self) -> &Self::Target {
        match self {
            Tx::Writer(tx) => tx.connection_ref(),
            Tx::Pooled(tx) => tx,
        }
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Tx::Writer(tx) => tx.connection(),
            Tx::Pooled(tx) => tx,
        }
    }
}

/// Every SQLite connection's settings: WAL for concurrent readers; every commit fsynced
/// (an SOS acknowledged is an SOS kept); a generous busy timeout for the few writes that
/// do not queue for the writer; foreign keys enforced.
async fn configure_sqlite(conn: &mut sqlx::AnyConnection) -> Result<(), sqlx::Error> {
    for pragma in [
        "PRAGMA journal_mode = WAL",
        "PRAGMA synchronous = FULL",
        "PRAGMA busy_timeout = 10000",
        "PRAGMA foreign_keys = ON",
    ] {
        sqlx::query(pragma).execute(&mut *conn).await?;
    }
    Ok(())
}

/// A value in a row's key.
#[derive(Clone, Copy)]
enum Key<'a> {
    Id(i64),
    Text(&'a str),
}

/// The row a versioned write changes: `filter` uses `$1…` for `keys`, in order;
/// `column` holds the row's version (usually `etag`).
struct VersionedRow<'a> {
    table: &'static str,
    column: &'static str,
    filter: &'static str,
    keys: &'a [Key<'a>],
}

impl<'a> VersionedRow<'a> {
    /// The common key: a tenant's record by id.
    fn by_id(table: &'static str, keys: &'a [Key<'a>; 2]) -> Self {
        VersionedRow {
            table,
            column: "etag",
            filter: "id = $1 AND tenant_code = $2",
            keys,
        }
    }
}
