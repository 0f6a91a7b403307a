//! Durability of SQLite commits, outside the writer's turn.
//!
//! The writer's connection runs with `synchronous = NORMAL`: a COMMIT appends its frames
//! to the write-ahead log and returns without an fsync (SQLite still keeps the database
//! consistent through a crash or power loss; only the latest commits could be lost).
//! A commit is durable once the log file has been flushed (`fdatasync`) after it; that is
//! done here, after the writer's turn is released, and a commit's caller is answered only
//! then. So a 200 still means on disk, as with `synchronous = FULL`, but the fsync no
//! longer holds the one writer: the next transaction runs while the last one is flushed,
//! and one flush covers every commit made before it began (commits ride along).
//!
//! A failed flush leaves what was written since the last good one in doubt (the kernel
//! may have dropped those pages and may not report it twice), so it is fatal for
//! writing: every commit waiting on it, and every later one, fails until the process is
//! restarted and SQLite recovers the log from disk.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::Mutex;

/// Flushes the log file to disk (`fdatasync` in production, a stand-in in tests).
pub(super) type Flush = Arc<dyn Fn() -> std::io::Result<()> + Send + Sync>;

pub(super) struct WalSync {
    flush: Flush,
    /// Commits made on the writer's connection (each numbered while it held the turn).
    committed: AtomicU64,
    /// Every commit up to this number is on disk.
    synced: AtomicU64,
    /// One flush at a time; a commit waiting here is often covered by the flush it waited
    /// for, and then does not flush again.
    flushing: Mutex<()>,
    /// A flush failed: nothing written since can be promised.
    failed: AtomicBool,
}

/// A commit made, not yet known to be on disk.
#[must_use = "a commit is durable only once `durable` returned Ok"]
pub(super) struct PendingCommit {
    sync: Arc<WalSync>,
    number: u64,
}

impl WalSync {
    /// The log file of the database at `database` (as `PRAGMA database_list` names it).
    pub(super) fn for_database(database: &str) -> Self {
        let log = PathBuf::from(format!("{database}-wal"));
        Self::with_flush(Arc::new(move || {
            match std::fs::OpenOptions::new().write(true).open(&log) {
                Ok(file) => file.sync_data(),
                // SQLite removes its log only once all of it is copied into the database
                // file and that is flushed: what it held is on disk.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            }
        }))
    }

    pub(super) fn with_flush(flush: Flush) -> Self {
        Self {
            flush,
            committed: AtomicU64::new(0),
            synced: AtomicU64::new(0),
            flushing: Mutex::new(()),
            failed: AtomicBool::new(false),
        }
    }

    /// Counts a commit just made; call while still holding the writer's turn, so the
    /// numbers follow the order of the commits in the log.
    pub(super) fn committed(self: &Arc<Self>) -> PendingCommit {
        PendingCommit {
            sync: self.clone(),
            number: self.committed.fetch_add(1, Ordering::AcqRel) + 1,
        }
    }

    /// Commits made so far.
    pub(super) fn commits(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// Err once a flush has failed: the writer takes no more work.
    pub(super) fn check(&self) -> std::io::Result<()> {
        if self.failed.load(Ordering::Acquire) {
            return Err(failed());
        }
        Ok(())
    }

    async fn wait_for(&self, number: u64) -> std::io::Result<()> {
        self.check()?;
        if self.synced.load(Ordering::Acquire) >= number {
            return Ok(());
        }
        let _flushing = self.flushing.lock().await;
        // The flush this one waited for may have covered it, or failed.
        self.check()?;
        if self.synced.load(Ordering::Acquire) >= number {
            return Ok(());
        }
        // Everything committed by now (this commit too) is in the file: the flush
        // covers it all.
        let upto = self.committed.load(Ordering::Acquire);
        let flush = self.flush.clone();
        let flushed = tokio::task::spawn_blocking(move || flush())
            .await
            .map_err(std::io::Error::other)
            .and_then(|result| result);
        if let Err(e) = flushed {
            self.failed.store(true, Ordering::Release);
            tracing::error!(
                error = %e,
                "flushing SQLite's log to disk failed: no further writes are accepted until a restart"
            );
            return Err(e);
        }
        self.synced.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }
}

impl PendingCommit {
    /// Its place in the order of the writer's commits (from 1).
    pub(super) fn number(&self) -> u64 {
        self.number
    }

    /// Returns once the commit is on disk.
    pub(super) async fn durable(self) -> std::io::Result<()> {
        self.sync.wait_for(self.number).await
    }
}

fn failed() -> std::io::Error {
    std::io::Error::other("an earlier flush of the database's log to disk failed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    fn counting(delay: Duration, fail: Arc<AtomicBool>) -> (Arc<WalSync>, Arc<AtomicUsize>) {
        let flushes = Arc::new(AtomicUsize::new(0));
        let counter = flushes.clone();
        let sync = WalSync::with_flush(Arc::new(move || {
            std::thread::sleep(delay);
            counter.fetch_add(1, Ordering::SeqCst);
            if fail.load(Ordering::SeqCst) {
                return Err(std::io::Error::other("disk gone"));
            }
            Ok(())
        }));
        (Arc::new(sync), flushes)
    }

    #[tokio::test]
    async fn a_commit_is_durable_only_after_a_flush_that_began_after_it() {
        let (sync, flushes) = counting(Duration::ZERO, Arc::default());
        sync.committed().durable().await.expect("durable");
        assert_eq!(flushes.load(Ordering::SeqCst), 1);
        // A later commit is not covered by the earlier flush.
        sync.committed().durable().await.expect("durable");
        assert_eq!(flushes.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn commits_waiting_together_share_flushes() {
        let (sync, flushes) = counting(Duration::from_millis(20), Arc::default());
        let pending: Vec<PendingCommit> = (0..20).map(|_| sync.committed()).collect();
        let waits: Vec<_> = pending
            .into_iter()
            .map(|p| tokio::spawn(p.durable()))
            .collect();
        for wait in waits {
            wait.await.expect("task").expect("durable");
        }
        // The first flush covers all twenty (they were all committed before it began).
        assert_eq!(flushes.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_failed_flush_fails_its_commits_and_every_later_one() {
        let fail = Arc::new(AtomicBool::new(true));
        let (sync, flushes) = counting(Duration::ZERO, fail.clone());
        assert!(sync.committed().durable().await.is_err());
        // The disk answering again changes nothing: what the failed flush held is in doubt.
        fail.store(false, Ordering::SeqCst);
        assert!(sync.check().is_err());
        assert!(sync.committed().durable().await.is_err());
        assert_eq!(
            flushes.load(Ordering::SeqCst),
            1,
            "no flush after the failure"
        );
    }
}
