//! SQLite's way out for the live stream's announcements (one process): a commit's
//! announcements wait here until it is on disk, then go to this process's feed
//! (`StreamFeed`) in commit order. See `stream_feed.rs`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::mpsc;

use super::StreamAnnouncement;

/// SQLite: the announcements of commits not yet on disk, handed to the listeners once
/// they are, in commit order, numbered from the process's start-up time in
/// microseconds (so ids grow across restarts too, and a client's old `Last-Event-ID`
/// never names a newer event).
pub(super) struct LocalFeed {
    state: Mutex<LocalState>,
}

struct LocalState {
    /// By commit number (`wal_sync`): committed, not yet known to be on disk.
    waiting: BTreeMap<u64, Vec<StreamAnnouncement>>,
    /// The id of the last event handed on.
    last_id: u64,
    listeners: Vec<mpsc::UnboundedSender<(u64, StreamAnnouncement)>>,
}

impl LocalFeed {
    pub(super) fn new() -> Self {
        let start = u64::try_from(jiff::Timestamp::now().as_microsecond()).unwrap_or(1);
        Self {
            state: Mutex::new(LocalState {
                waiting: BTreeMap::new(),
                last_id: start,
                listeners: Vec::new(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, LocalState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Commit `number`'s announcements; call while the commit still holds the writer's
    /// turn, so a later commit's durability cannot hand on before these are here.
    pub(super) fn committed(&self, number: u64, announcements: Vec<StreamAnnouncement>) {
        if !announcements.is_empty() {
            self.state().waiting.insert(number, announcements);
        }
    }

    /// Commit `number` is on disk, and so is every commit before it: their
    /// announcements go to the listeners, in commit order.
    pub(super) fn durable(&self, number: u64) {
        let mut state = self.state();
        if state
            .waiting
            .first_key_value()
            .is_none_or(|(n, _)| *n > number)
        {
            return;
        }
        let later = state.waiting.split_off(&(number + 1));
        let ready = std::mem::replace(&mut state.waiting, later);
        for announcement in ready.into_values().flatten() {
            let first_id = state.last_id + 1;
            state.last_id += announcement.event_count() as u64;
            state
                .listeners
                .retain(|listener| listener.send((first_id, announcement.clone())).is_ok());
        }
    }

    /// Commit `number` failed to reach the disk: it announces nothing.
    pub(super) fn failed(&self, number: u64) {
        self.state().waiting.remove(&number);
    }

    pub(super) fn listen(&self) -> mpsc::UnboundedReceiver<(u64, StreamAnnouncement)> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.state().listeners.push(sender);
        receiver
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_messages(id: i64) -> StreamAnnouncement {
        StreamAnnouncement {
            tenant_code: crate::domain::tenant::root_tenant_code(),
            tenant_path: "/1000/".into(),
            device_id: "van-1".into(),
            messages: vec![id, id + 1],
            alerts: Vec::new(),
            device: false,
            sessions: Vec::new(),
            device_record: None,
            records: None,
        }
    }

    #[test]
    fn commits_are_handed_on_once_durable_in_commit_order_with_contiguous_ids() {
        let feed = LocalFeed::new();
        let mut heard = feed.listen();
        feed.committed(1, vec![two_messages(10)]);
        feed.committed(2, vec![two_messages(20)]);
        feed.committed(3, vec![two_messages(30)]);
        assert!(heard.try_recv().is_err(), "nothing before it is on disk");
        // A flush covers every commit before it: 2 durable hands on 1 and 2, in order.
        feed.durable(2);
        let (first, a) = heard.try_recv().expect("commit 1");
        let (second, b) = heard.try_recv().expect("commit 2");
        assert_eq!((a.messages[0], b.messages[0]), (10, 20));
        assert_eq!(second, first + 2, "ids follow on, two events each");
        assert!(heard.try_recv().is_err(), "commit 3 is not on disk yet");
        feed.failed(3);
        feed.durable(3);
        assert!(
            heard.try_recv().is_err(),
            "a failed commit announces nothing"
        );
    }
}
