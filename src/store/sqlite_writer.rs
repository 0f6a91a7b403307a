//! SQLite's one writing connection. SQLite runs one write transaction at a time, so
//! writers queue here (a fair async mutex: first come, first served) instead of polling
//! the database lock, whose busy handler sleeps and wrecks tail latency.
//!
//! The connection stays outside the pool: a pooled transaction paid for an acquire and,
//! on every release, a ping — round trips to the connection's thread that took ≈1 ms of
//! each turn of the writer under the ingest load (bench/README.md). One connection also
//! keeps the writer's prepared statements in one cache.
//!
//! Transactions are begun and ended by statement. One dropped without a commit (an error,
//! a cancelled request) is rolled back before the writer serves anyone else.

use std::sync::Arc;

use sqlx::{AnyConnection, Connection};
use tokio::sync::{Mutex, OwnedMutexGuard};

pub(super) struct SqliteWriter {
    connection: Arc<Mutex<WriterConnection>>,
}

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
        Ok(Self {
            connection: Arc::new(Mutex::new(WriterConnection {
                connection,
                in_transaction: false,
            })),
        })
    }

    /// Waits for the writer's turn and begins a write transaction (`BEGIN IMMEDIATE`:
    /// the write lock up front, so no statement inside meets SQLITE_BUSY).
    pub(super) async fn begin(&self) -> Result<WriterTx, sqlx::Error> {
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
        })
    }
}

/// A write transaction on the writer's connection, holding the writer's turn.
pub(super) struct WriterTx {
    turn: OwnedMutexGuard<WriterConnection>,
    writer: Arc<Mutex<WriterConnection>>,
}

impl WriterTx {
    pub(super) async fn commit(mut self) -> Result<(), sqlx::Error> {
        sqlx::query("COMMIT")
            .execute(&mut self.turn.connection)
            .await?;
        self.turn.in_transaction = false;
        Ok(())
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
    use std::time::Duration;

    /// A writer and a second, separate connection on a fresh file.
    struct Scene {
        writer: Arc<SqliteWriter>,
        reader: AnyConnection,
        _file: TempSqliteFile,
    }

    async fn scene() -> Scene {
        sqlx::any::install_default_drivers();
        let file = TempSqliteFile::new("safetrack-writer");
        let writer = Arc::new(SqliteWriter::open(&file.url()).await.expect("writer"));
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
            _file: file,
        }
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
