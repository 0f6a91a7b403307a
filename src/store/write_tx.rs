//! The write transaction services drive step by step (`Store::begin`), and its outbox:
//! what it announces to the live stream and which of this process's loops it wakes, both
//! handed on only once the commit is durable (`stream_feed.rs` says how, per backend).

use std::sync::Arc;

use tokio::sync::Notify;

use super::local_feed::LocalFeed;
use super::{Backend, Store, StoreResult, StreamAnnouncement, TenantNodes, Tx, wal_sync};

/// A write transaction services drive (see `Store::begin`); its methods live beside the
/// tables they touch. What it announces (`announce`) and wakes (`wake`) waits in its
/// outbox and goes out only once it is committed and on disk, the same way on both
/// backends (`stream_feed.rs`).
pub struct WriteTx {
    pub(super) tx: Tx,
    pub(super) backend: Backend,
    /// The store's `monitoring_minute`.
    pub(super) monitoring_minute: jiff::SignedDuration,
    pub(super) stream_channel: Option<Arc<str>>,
    local_feed: Option<Arc<LocalFeed>>,
    wakes: Arc<Wakes>,
    pub(super) outbox: Outbox,
    /// The store's tenant nodes (they never change once made), so a write that
    /// announces to a tenant's subtree need not read the tenant again.
    pub(super) tenant_nodes: TenantNodes,
}

/// Loops of this process a committed write wakes (besides their poll).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The delivery loops: `Pending` deliveries were queued.
    Deliveries,
    /// The alerting delivery loop: a match (or an escalation) queued `Pending`
    /// deliveries to people or its EventNotification webhooks.
    Alerting,
}

#[derive(Default)]
pub(super) struct Wakes {
    deliveries: Arc<Notify>,
    alerting: Arc<Notify>,
}

impl Wakes {
    pub(super) fn signal(&self, kind: Wake) -> &Arc<Notify> {
        match kind {
            Wake::Deliveries => &self.deliveries,
            Wake::Alerting => &self.alerting,
        }
    }

    /// Each wake asked for tells one loop (as many as asked, when several wait).
    fn fire(&self, asked: &[Wake]) {
        for kind in asked {
            self.signal(*kind).notify_one();
        }
    }
}

/// What a transaction announces and wakes once it is committed.
#[derive(Default)]
pub(super) struct Outbox {
    pub(super) stream: Vec<StreamAnnouncement>,
    wakes: Vec<Wake>,
}

impl WriteTx {
    pub(super) fn new(tx: Tx, store: &Store) -> Self {
        Self {
            tx,
            backend: store.backend,
            monitoring_minute: store.monitoring_minute,
            stream_channel: store.stream_channel.clone(),
            local_feed: store.local_feed.clone(),
            wakes: store.wakes.clone(),
            outbox: Outbox::default(),
            tenant_nodes: store.tenant_nodes.clone(),
        }
    }

    /// Wakes this process's loops of `kind` once the transaction is committed and on
    /// disk (never, if it is not). Each call tells one loop.
    pub fn wake(&mut self, kind: Wake) {
        self.outbox.wakes.push(kind);
    }

    /// Commits; returns once the commit is on disk (and what it announces is handed on).
    pub async fn commit(self) -> StoreResult<()> {
        self.commit_pending().await?.durable().await
    }

    /// Commits and lets the next writer in; the commit is on disk once
    /// `Committed::durable` returns (SQLite flushes its log after the writer's turn,
    /// `wal_sync.rs`; PostgreSQL's commit is durable when it returns). Nothing may be
    /// acknowledged before that, and nothing is announced or woken before it either.
    pub async fn commit_pending(mut self) -> StoreResult<Committed> {
        let Outbox { mut stream, wakes } = std::mem::take(&mut self.outbox);
        // A session's lines are written as they happen, before the batch announces its
        // messages: they go after them (a check-in's event follows its message's).
        stream.sort_by_key(|a| a.event_count() == a.sessions.len());
        if let Some(channel) = self.stream_channel.clone() {
            for announcement in &stream {
                self.announce_in_database(&channel, announcement).await?;
            }
        }
        let local_feed = self.local_feed.clone();
        let (pending, number) = match self.tx {
            Tx::Writer(tx) => {
                let mut number = 0;
                let pending = tx
                    .commit_pending_then(|committed| {
                        number = committed;
                        if let Some(feed) = &local_feed {
                            feed.committed(committed, stream);
                        }
                    })
                    .await?;
                (Some(pending), number)
            }
            Tx::Pooled(tx) => {
                tx.commit().await?;
                (None, 0)
            }
        };
        Ok(Committed {
            pending,
            number,
            local_feed,
            wakes: (self.wakes, wakes),
        })
    }
}

/// A commit made (visible to others), perhaps not yet on disk.
#[must_use = "a commit is durable only once `durable` returned Ok"]
pub struct Committed {
    pending: Option<wal_sync::PendingCommit>,
    number: u64,
    local_feed: Option<Arc<LocalFeed>>,
    wakes: (Arc<Wakes>, Vec<Wake>),
}

impl Committed {
    /// Returns once the commit is on disk; then what it announces is handed on and what
    /// it wakes is woken.
    pub async fn durable(self) -> StoreResult<()> {
        if let Some(pending) = self.pending {
            if let Err(e) = pending.durable().await {
                if let Some(feed) = &self.local_feed {
                    feed.failed(self.number);
                }
                return Err(sqlx::Error::Io(e).into());
            }
            if let Some(feed) = &self.local_feed {
                feed.durable(self.number);
            }
        }
        let (wakes, asked) = &self.wakes;
        wakes.fire(asked);
        Ok(())
    }
}
