//! The thread SQLite's writer's turns run on. A write transaction holds the one writer
//! from BEGIN to COMMIT, and between its statements it waits for its own task to be
//! polled again: on the shared request threads, busy parsing ingest's bodies and sending
//! webhooks, each of those waits stretches the turn every other write queues behind.
//! So the frequent writes — ingest's group commit, the monitoring timers' steps, API
//! check-ins — run their transactions here, on a thread of their own for the life of
//! the process, where the next poll comes at once.

use std::future::Future;
use std::sync::OnceLock;

use super::{Store, StoreError, StoreResult};

/// The writer thread's runtime (`None` if it could not be started: writes then run on
/// the caller's runtime, as before).
pub fn writer_runtime() -> Option<tokio::runtime::Handle> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("safetrack-writer")
                .enable_all()
                .build()
                .inspect_err(|e| tracing::warn!(error = %e, "writes run on the shared threads"))
                .ok()
        })
        .as_ref()
        .map(|runtime| runtime.handle().clone())
}

impl Store {
    /// Runs `work` (a write transaction, begun and ended inside it) on the writer thread
    /// where writes take turns on one writer (SQLite); elsewhere, here. It runs to its end
    /// even if the caller stops waiting (a request cancelled mid-write changes nothing
    /// about what is committed). A panic inside is resumed here.
    pub async fn on_writer_thread<T, F>(&self, work: F) -> StoreResult<T>
    where
        F: Future<Output = StoreResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        let runtime = match writer_runtime() {
            Some(runtime) if self.writes_take_turns() => runtime,
            _ => return work.await,
        };
        match runtime.spawn(work).await {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(StoreError::Unavailable("the writer thread stopped".into())),
        }
    }
}
