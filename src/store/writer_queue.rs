//! "Writer busy": the writes declared waiting for SQLite's one writer (ingest's batches
//! queued for their group commit), which a write that can wait lets go first
//! (`Store::writer_lull`). Nothing is declared where writes do not take turns.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// The writes declared waiting for the writer's turn (`Store::waiting_for_writer`: ingest's
/// batches queued for its group commit). While there are any, a write that can wait — a
/// webhook claim of the general delivery loops — lets them go first (`lull`).
#[derive(Default)]
pub(super) struct WriterQueue {
    waiting: AtomicUsize,
    /// Told when the last declared write was taken.
    emptied: Notify,
}

impl WriterQueue {
    fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Returns once no declared write waits (at once if none does), or after `at_most`:
    /// what waits here is never starved, only put behind.
    pub(super) async fn lull(&self, at_most: Duration) {
        let emptied = self.emptied.notified();
        tokio::pin!(emptied);
        // Registered before the check: an emptying in between is not missed.
        emptied.as_mut().enable();
        if self.waiting() == 0 {
            return;
        }
        tokio::select! {
            _ = emptied => {}
            _ = tokio::time::sleep(at_most) => {}
        }
    }

    pub(super) fn declare(self: &Arc<Self>) -> WaitingForWriter {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        WaitingForWriter(Some(self.clone()))
    }
}

/// A write declared waiting for the writer's turn, until `taken` (or dropped).
#[derive(Default)]
pub struct WaitingForWriter(Option<Arc<WriterQueue>>);

impl WaitingForWriter {
    /// The write has the writer (or gave up waiting).
    pub fn taken(&mut self) {
        if let Some(queue) = self.0.take()
            && queue.waiting.fetch_sub(1, Ordering::AcqRel) == 1
        {
            queue.emptied.notify_waiters();
        }
    }
}

impl Drop for WaitingForWriter {
    fn drop(&mut self) {
        self.taken();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_lull_is_at_once_without_waiting_writes() {
        let queue = WriterQueue::default();
        let started = std::time::Instant::now();
        queue.lull(Duration::from_secs(5)).await;
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_lull_comes_when_every_waiting_write_was_taken() {
        let queue = Arc::new(WriterQueue::default());
        let (mut first, mut second) = (queue.declare(), queue.declare());
        let started = std::time::Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            first.taken();
            tokio::time::sleep(Duration::from_millis(100)).await;
            second.taken();
        });
        queue.lull(Duration::from_secs(5)).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(190), "{waited:?}");
        assert!(waited < Duration::from_secs(4), "{waited:?}");
        assert_eq!(queue.waiting(), 0);
    }

    #[tokio::test]
    async fn a_lull_is_never_longer_than_asked_and_a_dropped_ticket_counts_as_taken() {
        let queue = Arc::new(WriterQueue::default());
        let ticket = queue.declare();
        let started = std::time::Instant::now();
        queue.lull(Duration::from_millis(200)).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(190), "{waited:?}");
        assert!(waited < Duration::from_secs(4), "{waited:?}");
        assert_eq!(
            queue.waiting(),
            1,
            "still waiting: the lull was only given up"
        );
        drop(ticket);
        assert_eq!(queue.waiting(), 0);
    }
}
