//! SQLite's one writing connection. SQLite runs one write transaction at a time, so
//! writers queue here (a fair async mutex: first come, first served) instead of polling
//! the database lock, whose busy handler sleeps and wrecks tail latency.
//!
//! The connection stays outside the pool: a pooled transaction pays for an acquire and,
//! on every release, a ping — round trips to the connection's thread in every turn of
//! the one writer, which every write waits for. One connection also keeps the writer's
//! prepared statements in one cache.
//!
//! Transactions are begun and ended by statement. One dropped without a commit (an error,
//! a cancelled request) is rolled back before the writer serves anyone else.
//!
//! The writer's commits are not fsynced by SQLite: `wal_sync.rs` flushes the log after
//! the turn, and a commit is acknowledged only then. Nor does a commit copy the log into
//! the database file (SQLite's automatic checkpoint): `checkpoint` does, mostly outside
//! the turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::{AnyConnection, AnyPool, Connection, Row};
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::wal_sync::{PendingCommit, WalSync};

pub(super) struct SqliteWriter {
    connection: Arc<Mutex<WriterConnection>>,
    sync: Arc<WalSync>,
    /// `sync.commits()` when the log was last checkpointed (set only once a checkpoint
    /// went through: a failed one is tried again at the next call).
    checkpointed_at: AtomicU64,
}

/// Log frames after which the writer's own commit copies the log into the database file
/// (SQLite's automatic checkpoint, inside the writer's turn). A backstop only: with the
/// server running, `checkpoint` does it far earlier, mostly outside the turn.
const BACKSTOP_CHECKPOINT_FRAMES: u32 = 16_384;
/// Log frames from which `checkpoint` finishes in the writer's turn, so that the log
/// starts over (32 MB of 4 KB pages, below the backstop): the pass in the turn costs two
/// fsyncs, paid about once a second under the heaviest ingest.
const RESTART_FRAMES: i64 = 8_192;
/// Outside the turn, `checkpoint` passes again (at most three more times) until a pass
/// sees fewer frames than this appended during the one before: the pass in the turn
/// copies only those.
const RESIDUAL_FRAMES: i64 = 256;

struct WriterConnection {
    connection: AnyConnection,
    /// A transaction was begun and not yet ended.
    in_transaction: bool,
}

impl WriterConnection {
    /// Ends a transaction left open by a `WriterTx` dropped without a commit. Whatever
    /// the ROLLBACK answers, the connection counts as out of a transaction afterwards:
    /// SQLite may already have ended it itself (a COMMIT that failed on an I/O error
    /// rolls back), and `begin` heals the opposite case.
    async fn end_abandoned(&mut self) {
        if self.in_transaction {
            self.in_transaction = false;
            if let Err(e) = sqlx::query("ROLLBACK").execute(&mut self.connection).await {
                tracing::warn!(error = %e, "rolling back an abandoned write transaction failed");
            }
        }
    }

    async fn begin_immediate(&mut self) -> Result<(), sqlx::Error> {
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut self.connection)
            .await?;
        self.in_transaction = true;
        Ok(())
    }
}

impl SqliteWriter {
    pub(super) async fn open(url: &str) -> Result<Self, sqlx::Error> {
        let mut connection = AnyConnection::connect(url).await?;
        super::configure_sqlite(&mut connection).await?;
        // Commits are flushed to disk by `WalSync`, after the writer's turn (see there).
        sqlx::query("PRAGMA synchronous = NORMAL")
            .execute(&mut connection)
            .await?;
        sqlx::query(&format!(
            "PRAGMA wal_autocheckpoint = {BACKSTOP_CHECKPOINT_FRAMES}"
        ))
        .execute(&mut connection)
        .await?;
        let file: String = sqlx::query("SELECT file FROM pragma_database_list WHERE name = 'main'")
            .fetch_one(&mut connection)
            .await?
            .try_get("file")?;
        let sync = if file.is_empty() {
            // An in-memory database: nothing on disk to flush.
            WalSync::with_flush(Arc::new(|| Ok(())))
        } else {
            WalSync::for_database(&file)
        };
        Ok(Self {
            connection: Arc::new(Mutex::new(WriterConnection {
                connection,
                in_transaction: false,
            })),
            sync: Arc::new(sync),
            checkpointed_at: AtomicU64::new(0),
        })
    }

    /// Copies the log into the database file, and lets the log start over once it is
    /// long (every read looks pages up in it, and it would grow without end). SQLite's
    /// automatic checkpoint runs in a commit — in the writer's turn — which then waits
    /// for the whole copy. Here the copying is done on `pool` while writers go on; only
    /// when the log is long does the last pass run in the turn, with nothing left to copy
    /// but what the writers appended during the pass before (a checkpoint that caught up
    /// completely is what lets the next writer start the log over). Returns whether
    /// anything had been committed since the last call (if not, nothing is done).
    pub(super) async fn checkpoint(&self, pool: &AnyPool) -> Result<bool, sqlx::Error> {
        self.checkpoint_with(pool, RESTART_FRAMES).await
    }

    async fn checkpoint_with(
        &self,
        pool: &AnyPool,
        restart_frames: i64,
    ) -> Result<bool, sqlx::Error> {
        let commits = self.sync.commits();
        if self.checkpointed_at.load(Ordering::Acquire) == commits {
            return Ok(false);
        }
        let mut log = passive_checkpoint(pool).await?;
        if log < restart_frames {
            self.checkpointed_at.store(commits, Ordering::Release);
            return Ok(true);
        }
        // Again while the writers appended much during the last pass.
        for _ in 0..3 {
            let now = passive_checkpoint(pool).await?;
            let appended = now - log;
            log = now;
            if appended <= RESIDUAL_FRAMES {
                break;
            }
        }
        let mut turn = self.connection.clone().lock_owned().await;
        turn.end_abandoned().await;
        sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut turn.connection)
            .await?;
        tracing::debug!(
            frames = log,
            "SQLite's log copied into the database file: it starts over"
        );
        self.checkpointed_at.store(commits, Ordering::Release);
        Ok(true)
    }

    /// Waits for the writer's turn and begins a write transaction (`BEGIN IMMEDIATE`:
    /// the write lock up front, so no statement inside meets SQLITE_BUSY).
    pub(super) async fn begin(&self) -> Result<WriterTx, sqlx::Error> {
        self.sync.check()?;
        let mut turn = self.connection.clone().lock_owned().await;
        turn.end_abandoned().await;
        if let Err(first) = turn.begin_immediate().await {
            // Perhaps a transaction is open that this side took for ended: end it and
            // try once more (a busy database fails again, and that error is returned).
            tracing::warn!(error = %first, "BEGIN failed: rolling back and trying again");
            let _ = sqlx::query("ROLLBACK").execute(&mut turn.connection).await;
            turn.begin_immediate().await?;
        }
        Ok(WriterTx {
            turn,
            writer: self.connection.clone(),
            sync: self.sync.clone(),
        })
    }
}

/// `PRAGMA wal_checkpoint(PASSIVE)` on a connection of `pool`; the frames in the log.
async fn passive_checkpoint(pool: &AnyPool) -> Result<i64, sqlx::Error> {
    let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(pool)
        .await?;
    row.try_get(1)
}

/// A write transaction on the writer's connection, holding the writer's turn.
pub(super) struct WriterTx {
    turn: OwnedMutexGuard<WriterConnection>,
    writer: Arc<Mutex<WriterConnection>>,
    sync: Arc<WalSync>,
}

impl WriterTx {
    /// Commits and returns once the commit is on disk.
    pub(super) async fn commit(self) -> Result<(), sqlx::Error> {
        Ok(self.commit_pending().await?.durable().await?)
    }

    /// Commits and releases the writer's turn; the commit is on disk once the returned
    /// `PendingCommit` says so.
    pub(super) async fn commit_pending(self) -> Result<PendingCommit, sqlx::Error> {
        self.commit_pending_then(|_| {}).await
    }

    /// `commit_pending`, calling `committed` with the commit's number while the turn is
    /// still held (so nothing of a later commit can come before what it does).
    pub(super) async fn commit_pending_then(
        mut self,
        committed: impl FnOnce(u64),
    ) -> Result<PendingCommit, sqlx::Error> {
        sqlx::query("COMMIT")
            .execute(&mut self.turn.connection)
            .await?;
        self.turn.in_transaction = false;
        let pending = self.sync.committed();
        committed(pending.number());
        Ok(pending)
    }

    pub(super) fn connection(&mut self) -> &mut AnyConnection {
        &mut self.turn.connection
    }

    pub(super) fn connection_ref(&self) -> &AnyConnection {
        &self.turn.connection
    }
}

impl Drop for WriterTx {
    fn drop(&mut self) {
        if !self.turn.in_transaction {
            return;
        }
        // Rolled back by the next holder of the turn: this task, which queues for it as
        // the guard is released, or a writer already waiting (`begin` ends it first).
        let writer = self.writer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { writer.lock().await.end_abandoned().await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_file::TempSqliteFile;
    use sqlx::Row;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    /// A writer and a second, separate connection on a fresh file.
    struct Scene {
        writer: Arc<SqliteWriter>,
        reader: AnyConnection,
        file: TempSqliteFile,
    }

    async fn scene() -> Scene {
        scene_flushing_with(None).await
    }

    /// The scene with `flush` standing in for the flush of the log to disk.
    async fn scene_flushing_with(flush: Option<super::super::wal_sync::Flush>) -> Scene {
        sqlx::any::install_default_drivers();
        let file = TempSqliteFile::new("safetrack-writer");
        let mut writer = SqliteWriter::open(&file.url()).await.expect("writer");
        if let Some(flush) = flush {
            writer.sync = Arc::new(WalSync::with_flush(flush));
        }
        let writer = Arc::new(writer);
        let mut reader = AnyConnection::connect(&file.url()).await.expect("reader");
        super::super::configure_sqlite(&mut reader)
            .await
            .expect("configure");
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&mut reader)
            .await
            .expect("create");
        Scene {
            writer,
            reader,
            file,
        }
    }

    /// A flush that waits until `open` is called, counting the flushes.
    #[derive(Clone, Default)]
    struct Gate(
        Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
        Arc<AtomicU64>,
    );

    impl Gate {
        fn flush(&self) -> super::super::wal_sync::Flush {
            let gate = self.clone();
            Arc::new(move || {
                let (open, opened) = &*gate.0;
                let mut is_open = open.lock().expect("gate");
                while !*is_open {
                    is_open = opened.wait(is_open).expect("gate");
                }
                gate.1.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
        }

        fn open(&self) {
            *self.0.0.lock().expect("gate") = true;
            self.0.1.notify_all();
        }
    }

    async fn synchronous_level(conn: &mut AnyConnection) -> i64 {
        sqlx::query("PRAGMA synchronous")
            .fetch_one(conn)
            .await
            .expect("pragma")
            .try_get(0)
            .expect("level")
    }

    #[tokio::test]
    async fn the_writer_leaves_flushing_to_disk_to_wal_sync_and_other_connections_do_not() {
        let mut scene = scene().await;
        let mut tx = scene.writer.begin().await.expect("begin");
        assert_eq!(synchronous_level(tx.connection()).await, 1, "NORMAL");
        tx.commit().await.expect("commit");
        assert_eq!(synchronous_level(&mut scene.reader).await, 2, "FULL");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_commit_is_durable_only_once_flushed_and_the_next_writer_does_not_wait_for_it() {
        let gate = Gate::default();
        let mut scene = scene_flushing_with(Some(gate.flush())).await;
        let mut first = scene.writer.begin().await.expect("begin");
        insert(&mut first, 1).await;
        let first = tokio::spawn(first.commit_pending().await.expect("commit").durable());
        // The next writer gets its turn while the first commit waits for its flush.
        let mut second = tokio::time::timeout(Duration::from_secs(5), scene.writer.begin())
            .await
            .expect("the turn is free while a commit is flushed")
            .expect("begin");
        insert(&mut second, 2).await;
        let second = tokio::spawn(second.commit_pending().await.expect("commit").durable());
        assert_eq!(
            values(&mut scene.reader).await,
            vec![1, 2],
            "both committed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !first.is_finished() && !second.is_finished(),
            "not flushed yet"
        );
        gate.open();
        first.await.expect("task").expect("durable");
        second.await.expect("task").expect("durable");
        let flushes = gate.1.load(Ordering::SeqCst);
        assert!((1..=2).contains(&flushes), "{flushes} flushes");
    }

    #[tokio::test]
    async fn a_failed_flush_fails_the_commit_and_every_later_write() {
        let mut scene =
            scene_flushing_with(Some(Arc::new(|| Err(std::io::Error::other("disk gone"))))).await;
        let mut tx = scene.writer.begin().await.expect("begin");
        insert(&mut tx, 1).await;
        let failed = tx.commit().await.expect_err("the flush failed");
        assert!(failed.to_string().contains("disk gone"), "{failed}");
        assert!(
            scene.writer.begin().await.is_err(),
            "no writes after a failed flush"
        );
        // Reads go on.
        assert_eq!(values(&mut scene.reader).await, vec![1]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn checkpoints_beside_a_busy_writer_keep_the_log_short() {
        // Flushes are not what this is about: they are skipped.
        let mut scene = scene_flushing_with(Some(Arc::new(|| Ok(())))).await;
        let pool = AnyPool::connect(&scene.file.url()).await.expect("pool");
        assert!(
            !scene.writer.checkpoint(&pool).await.expect("checkpoint"),
            "nothing committed yet"
        );
        const COMMITS: i64 = 1_500;
        let checkpoints = Arc::new(AtomicUsize::new(0));
        let writer = scene.writer.clone();
        let seen = checkpoints.clone();
        let writing = tokio::spawn(async move {
            // At least COMMITS, and on until a few checkpoints have run beside the
            // writer: on a loaded machine they get fewer turns per commit. Bounded, so
            // checkpoints that never run fail the assertion below instead of hanging.
            let mut x = 0;
            while (x < COMMITS || seen.load(Ordering::Relaxed) <= 5) && x < 20 * COMMITS {
                let mut tx = writer.begin().await.expect("begin");
                insert(&mut tx, x).await;
                tx.commit().await.expect("commit");
                x += 1;
            }
            x
        });
        while !writing.is_finished() {
            // A short restart length, so that every checkpoint ends in the writer's turn.
            if scene
                .writer
                .checkpoint_with(&pool, 1)
                .await
                .expect("checkpoint")
            {
                checkpoints.fetch_add(1, Ordering::Relaxed);
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let commits = writing.await.expect("writer");
        let checkpoints = checkpoints.load(Ordering::Relaxed);
        assert!(checkpoints > 5, "{checkpoints} checkpoints");
        // Without a new start the log would hold every commit: a frame (a page and a
        // 24-byte header) or more each. With starts over between commits, the file is as
        // long as the longest stretch between two, which is less than all of them. How
        // much less depends on how soon the checkpoints get their turns (under a third on
        // a quiet machine, near nine tenths with builds running beside the test), so the
        // assertion is only that the log did start over.
        let page: i64 = sqlx::query_scalar("PRAGMA page_size")
            .fetch_one(&mut scene.reader)
            .await
            .expect("page size");
        let every_commit = commits * (page + 24);
        let log = std::fs::metadata(format!("{}-wal", scene.file.path().display()))
            .expect("log")
            .len();
        assert!(
            (log as i64) < every_commit,
            "the log has {log} bytes; every commit's frame takes {every_commit}"
        );
        assert_eq!(
            values(&mut scene.reader).await,
            (0..commits).collect::<Vec<_>>()
        );
    }

    async fn insert(tx: &mut WriterTx, x: i64) {
        sqlx::query("INSERT INTO t (x) VALUES ($1)")
            .bind(x)
            .execute(tx.connection())
            .await
            .expect("insert");
    }

    async fn values(conn: &mut AnyConnection) -> Vec<i64> {
        sqlx::query("SELECT x FROM t ORDER BY x")
            .fetch_all(conn)
            .await
            .expect("select")
            .iter()
            .map(|row| row.try_get::<i64, _>("x").expect("x"))
            .collect()
    }

    #[tokio::test]
    async fn a_committed_transaction_is_seen_by_other_connections() {
        let mut scene = scene().await;
        let mut tx = scene.writer.begin().await.expect("begin");
        insert(&mut tx, 1).await;
        assert_eq!(values(&mut scene.reader).await, Vec::<i64>::new());
        tx.commit().await.expect("commit");
        assert_eq!(values(&mut scene.reader).await, vec![1]);
    }

    #[tokio::test]
    async fn a_transaction_dropped_without_commit_is_rolled_back_before_the_next_one() {
        let mut scene = scene().await;
        let mut abandoned = scene.writer.begin().await.expect("begin");
        insert(&mut abandoned, 1).await;
        drop(abandoned);
        let mut next = scene
            .writer
            .begin()
            .await
            .expect("begin after an abandoned one");
        insert(&mut next, 2).await;
        next.commit().await.expect("commit");
        assert_eq!(values(&mut scene.reader).await, vec![2]);
    }

    #[tokio::test]
    async fn a_transaction_dropped_without_commit_releases_the_database_lock() {
        let mut scene = scene().await;
        let mut abandoned = scene.writer.begin().await.expect("begin");
        insert(&mut abandoned, 1).await;
        drop(abandoned);
        // No writer comes: the rollback runs on its own, and another connection may
        // write (with a short busy timeout, so a lock still held fails the test).
        sqlx::query("PRAGMA busy_timeout = 2000")
            .execute(&mut scene.reader)
            .await
            .expect("busy timeout");
        tokio::time::sleep(Duration::from_millis(50)).await;
        sqlx::query("INSERT INTO t (x) VALUES (3)")
            .execute(&mut scene.reader)
            .await
            .expect("write from another connection");
        assert_eq!(values(&mut scene.reader).await, vec![3]);
    }

    #[tokio::test]
    async fn a_transaction_sqlite_ended_itself_does_not_wedge_the_writer() {
        let mut scene = scene().await;
        // Ended behind the writer's back, as SQLite does when a COMMIT fails on I/O.
        let mut ended = scene.writer.begin().await.expect("begin");
        insert(&mut ended, 1).await;
        sqlx::query("ROLLBACK")
            .execute(ended.connection())
            .await
            .expect("rollback");
        assert!(ended.commit().await.is_err(), "no transaction to commit");
        let mut next = scene.writer.begin().await.expect("begin after");
        insert(&mut next, 2).await;
        next.commit().await.expect("commit");
        // The opposite: a transaction open that the writer took for ended.
        let mut open = scene.writer.begin().await.expect("begin");
        sqlx::query("COMMIT")
            .execute(open.connection())
            .await
            .expect("commit behind its back");
        sqlx::query("BEGIN")
            .execute(open.connection())
            .await
            .expect("a stray transaction");
        insert(&mut open, 9).await;
        open.turn.in_transaction = false;
        drop(open);
        let mut last = scene
            .writer
            .begin()
            .await
            .expect("begin after a stray transaction");
        insert(&mut last, 3).await;
        last.commit().await.expect("commit");
        assert_eq!(values(&mut scene.reader).await, vec![2, 3]);
    }

    #[tokio::test]
    async fn writers_take_turns() {
        let mut scene = scene().await;
        let mut tasks = Vec::new();
        for x in 0..20 {
            let writer = scene.writer.clone();
            tasks.push(tokio::spawn(async move {
                let mut tx = writer.begin().await.expect("begin");
                insert(&mut tx, x).await;
                tokio::task::yield_now().await;
                tx.commit().await.expect("commit");
            }));
        }
        for task in tasks {
            task.await.expect("task");
        }
        assert_eq!(values(&mut scene.reader).await, (0..20).collect::<Vec<_>>());
    }
}
