//! The live event hub behind `GET /V2/{t}/stream`: what ingest and the alert desk
//! committed (`momessage`, `alert`, `device`, `monitoring`); each subscriber gets what lies in its
//! scope. One way in, on both backends: a write transaction announces in its outbox,
//! the store hands the announcement on once the commit is durable
//! (`store/stream_feed.rs`: PostgreSQL through the database, to every process; SQLite
//! within the process), and `relay` publishes it here, numbered by the store in commit
//! order (so on PostgreSQL all processes hold the same events under the same ids). An
//! announcement that carries its records (this process's SQLite commits) is ready; one
//! that names rows is read from the database when a subscriber first needs it (once per
//! batch, shared), so a process nobody follows reads nothing (a device as its batch left
//! it, from the log); what a process missed (a lost listening connection, a skipped
//! notification, events from before it started) it reads back from the database's log.
//! Each tenant's last `TENANT_CAPACITY` events are kept (`TOTAL_CAPACITY` in all) so a
//! client reconnecting with `Last-Event-ID` resumes without a gap; each subscriber has a
//! queue of the events in its scope only, and is dropped once `LAG` of them wait unread —
//! publishing never waits for anyone, and one tenant's burst neither drops nor pushes out
//! the events of a tenant it does not concern. `close` (called by `app::serve` when
//! shutdown begins) ends every stream, so graceful shutdown is not held up by open ones.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OnceCell, Semaphore, mpsc, watch};

use crate::store::{Store, StoreResult, StreamAnnouncement};

mod relay;

use relay::read_announced;
pub use relay::{load_recent, relay};

/// Events kept per tenant for resuming (more than the 10,000 promised): each tenant's
/// resume window counts only its own events.
pub const TENANT_CAPACITY: usize = 16_384;
/// Events kept across all tenants (about 64 MB at 1 kB a record); past it the largest
/// rings are trimmed first, down to `TRIM_TO`.
pub const TOTAL_CAPACITY: usize = 4 * TENANT_CAPACITY;
const TRIM_TO: usize = TOTAL_CAPACITY - TOTAL_CAPACITY / 16;
/// How many events of its scope a subscriber may leave unread before it is dropped
/// (events it does not see never count).
pub const LAG: usize = 4_096;
/// Announced batches read at once, ahead of the subscribers that will send them.
const READ_AHEAD: usize = 4;
/// The database's log of announcements keeps about this many events (twice the hub's).
const LOG_EVENTS: u64 = 2 * TOTAL_CAPACITY as u64;
/// How often a process prunes the log.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(30);
/// Logged announcements read per query when catching up.
const CATCH_UP_PAGE: u32 = 1_000;

/// What happened: the record an event shows (the store's, as announced).
pub use crate::store::StreamRecord as Payload;

impl Payload {
    /// The SSE `event:` name.
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::MoMessage(_) => "momessage",
            Payload::Alert(_) => "alert",
            Payload::Device(_) => "device",
            Payload::Monitoring(_) => "monitoring",
        }
    }

    /// The SSE `data:`: the record as the API shows it.
    pub fn to_json(&self) -> String {
        let json = match self {
            Payload::MoMessage(m) => serde_json::to_string(m.as_ref()),
            Payload::Alert(a) => serde_json::to_string(a.as_ref()),
            Payload::Device(d) => serde_json::to_string(d.as_ref()),
            Payload::Monitoring(e) => serde_json::to_string(e.as_ref()),
        };
        json.unwrap_or_default()
    }
}

/// One event, with the path of the tenant it belongs to.
#[derive(Debug)]
pub struct StreamEvent {
    pub id: u64,
    pub tenant_path: Arc<str>,
    content: Content,
}

#[derive(Debug)]
enum Content {
    /// Published with its record (`EventHub::publish`, in tests).
    #[cfg(test)]
    Ready(Payload),
    /// Event `index` of an announced batch.
    Announced(Arc<AnnouncedBatch>, usize),
}

/// The events of one announcement; their records are read on first use.
struct AnnouncedBatch {
    store: Store,
    /// The id of its first event: the key of its row in the database's log.
    first_id: u64,
    announcement: StreamAnnouncement,
    records: OnceCell<Vec<Option<Payload>>>,
}

impl AnnouncedBatch {
    /// The records, read by the first caller; the others wait for that read.
    async fn records(&self) -> StoreResult<&Vec<Option<Payload>>> {
        self.records
            .get_or_try_init(|| read_announced(&self.store, self.first_id, &self.announcement))
            .await
    }
}

impl std::fmt::Debug for AnnouncedBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnnouncedBatch")
            .field("announcement", &self.announcement)
            .field("read", &self.records.initialized())
            .finish()
    }
}

/// An event ready to send.
#[derive(Debug, Clone)]
pub struct ReadyEvent {
    pub id: u64,
    pub payload: Payload,
}

/// Whether events of tenant `event_path` are seen by a subscriber of tenant `path`.
fn visible(event_path: &str, path: &str, subtenants: bool) -> bool {
    if subtenants {
        event_path.starts_with(path)
    } else {
        event_path == path
    }
}

/// An open subscription: the kept events it asked for, then the live ones.
pub struct Subscription {
    pub backlog: Vec<Arc<StreamEvent>>,
    pub live: Live,
    /// Keep it as long as the subscription is followed.
    pub registration: Registration,
}

/// A subscription's queue of live events: only those in its scope, at most `LAG`.
pub struct Live {
    queue: mpsc::Receiver<Arc<StreamEvent>>,
    lagged: Arc<AtomicBool>,
}

/// Why a subscription's live events end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveEnd {
    /// `LAG` events of its scope were waiting when the next came: it was dropped.
    Lagged,
    /// The hub is gone.
    Closed,
}

impl Live {
    /// The next live event in scope.
    pub async fn recv(&mut self) -> Result<Arc<StreamEvent>, LiveEnd> {
        // Checked first: a dropped subscriber ends at once, not after what it queued.
        if self.lagged.load(Ordering::Acquire) {
            return Err(LiveEnd::Lagged);
        }
        match self.queue.recv().await {
            Some(event) => Ok(event),
            None if self.lagged.load(Ordering::Acquire) => Err(LiveEnd::Lagged),
            None => Err(LiveEnd::Closed),
        }
    }
}

/// Unregisters the subscription from the hub when dropped.
pub struct Registration {
    state: Arc<Mutex<HubState>>,
    path: String,
    subtenants: bool,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.unsubscribe(&self.path, self.subtenants, self.id);
    }
}

/// One open subscription's end of its queue.
struct Subscriber {
    queue: mpsc::Sender<Arc<StreamEvent>>,
    lagged: Arc<AtomicBool>,
}

/// The subscriptions of one tenant path: of that tenant alone, and of its subtree.
#[derive(Default)]
struct Followers {
    own: HashMap<u64, Subscriber>,
    subtree: HashMap<u64, Subscriber>,
}

impl Followers {
    fn is_empty(&self) -> bool {
        self.own.is_empty() && self.subtree.is_empty()
    }
}

/// `path` and its ancestors' paths, root first (`/1000/1001/` → `/1000/`, `/1000/1001/`).
fn path_and_ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/')
        .skip(1)
        .map(move |(end, _)| &path[..=end])
}

/// What the hub keeps: each tenant's recent events and the open subscriptions, under one
/// lock, so nothing published falls between a subscription's backlog and its queue.
#[derive(Default)]
struct HubState {
    /// Each tenant's recent events by tenant path, oldest first, at most
    /// `TENANT_CAPACITY` each.
    rings: HashMap<Arc<str>, VecDeque<Arc<StreamEvent>>>,
    /// Events in all rings, at most `TOTAL_CAPACITY`.
    kept: usize,
    /// Open subscriptions by the tenant path they follow.
    followers: HashMap<String, Followers>,
    next_subscriber: u64,
}

impl HubState {
    fn keep(&mut self, event: &Arc<StreamEvent>) {
        let ring = self.rings.entry(event.tenant_path.clone()).or_default();
        ring.push_back(event.clone());
        if ring.len() > TENANT_CAPACITY {
            ring.pop_front();
        } else {
            self.kept += 1;
        }
        if self.kept > TOTAL_CAPACITY {
            self.trim();
        }
    }

    /// Past `TOTAL_CAPACITY`: the largest rings lose their oldest events first (a
    /// quarter of the largest at a time, until `TRIM_TO` are kept), so a tenant's burst
    /// pushes out its own history before a quiet tenant's.
    fn trim(&mut self) {
        while self.kept > TRIM_TO {
            let Some((path, ring)) = self.rings.iter_mut().max_by_key(|(_, ring)| ring.len())
            else {
                return;
            };
            let dropped = (ring.len() / 4).clamp(1, self.kept - TRIM_TO);
            ring.drain(..dropped);
            self.kept -= dropped;
            if ring.is_empty() {
                let path = path.clone();
                self.rings.remove(&path);
            }
        }
    }

    /// Queues `event` for every subscription that sees it; one whose queue is full is
    /// dropped (marked lagged, its queue closed): publishing never waits.
    fn send(&mut self, event: &Arc<StreamEvent>) {
        let path = event.tenant_path.as_ref();
        for scope in path_and_ancestors(path) {
            let Some(followers) = self.followers.get_mut(scope) else {
                continue;
            };
            let mut dropped = false;
            for (subtenants, subscribers) in
                [(true, &mut followers.subtree), (false, &mut followers.own)]
            {
                if !subtenants && scope != path {
                    continue;
                }
                subscribers.retain(|_, subscriber| {
                    match subscriber.queue.try_send(event.clone()) {
                        Ok(()) => true,
                        Err(mpsc::error::TrySendError::Full(_)) => {
                            subscriber.lagged.store(true, Ordering::Release);
                            dropped = true;
                            false
                        }
                        Err(mpsc::error::TrySendError::Closed(_)) => {
                            dropped = true;
                            false
                        }
                    }
                });
            }
            if dropped && followers.is_empty() {
                self.followers.remove(scope);
            }
        }
    }

    fn unsubscribe(&mut self, path: &str, subtenants: bool, id: u64) {
        if let Some(followers) = self.followers.get_mut(path) {
            if subtenants {
                followers.subtree.remove(&id);
            } else {
                followers.own.remove(&id);
            }
            if followers.is_empty() {
                self.followers.remove(path);
            }
        }
    }

    /// The kept events after `last_id` that a subscriber of `path` sees, in id order.
    fn kept_after(&self, last_id: u64, path: &str, subtenants: bool) -> Vec<Arc<StreamEvent>> {
        let newer = |ring: &VecDeque<Arc<StreamEvent>>| {
            // Ids grow along a ring: skip the older ones by halving.
            let from = ring.partition_point(|e| e.id <= last_id);
            ring.range(from..).cloned().collect::<Vec<_>>()
        };
        if !subtenants {
            return self.rings.get(path).map(newer).unwrap_or_default();
        }
        let mut events: Vec<Arc<StreamEvent>> = self
            .rings
            .iter()
            .filter(|(ring_path, _)| visible(ring_path, path, true))
            .flat_map(|(_, ring)| newer(ring))
            .collect();
        events.sort_unstable_by_key(|e| e.id);
        events
    }

    /// Whether an open subscription sees events of tenant `path`.
    fn followed(&self, path: &str) -> bool {
        path_and_ancestors(path).any(|scope| {
            self.followers
                .get(scope)
                .is_some_and(|f| !f.subtree.is_empty() || (scope == path && !f.own.is_empty()))
        })
    }
}

impl StreamEvent {
    /// The event with its record: at hand, or read (once, for every subscriber) from the
    /// database. `None` when the record was deleted before anyone read it.
    pub async fn ready(&self) -> StoreResult<Option<ReadyEvent>> {
        let payload = match &self.content {
            #[cfg(test)]
            Content::Ready(payload) => Some(payload.clone()),
            Content::Announced(batch, index) => {
                batch.records().await?.get(*index).cloned().flatten()
            }
        };
        Ok(payload.map(|payload| ReadyEvent {
            id: self.id,
            payload,
        }))
    }

    /// Whether a subscriber of tenant `path` (with its subtenants, or not) sees it.
    pub fn visible_to(&self, path: &str, subtenants: bool) -> bool {
        visible(&self.tenant_path, path, subtenants)
    }
}

pub struct EventHub {
    state: Arc<Mutex<HubState>>,
    next_id: Mutex<u64>,
    /// `true` once the server shuts down.
    closing: watch::Sender<bool>,
    /// Announced batches read ahead of their followers at once (see `publish_announced`).
    read_ahead: Arc<Semaphore>,
}

/// A hub whose events the store numbers (`publish_announced`).
impl Default for EventHub {
    fn default() -> Self {
        Self {
            state: Arc::default(),
            next_id: Mutex::new(0),
            closing: watch::Sender::new(false),
            read_ahead: Arc::new(Semaphore::new(READ_AHEAD)),
        }
    }
}

impl EventHub {
    /// Publishes events of one tenant, in order, numbering them after the last (tests of
    /// the hub and of what reads it).
    #[cfg(test)]
    pub fn publish(&self, tenant_path: &str, payloads: Vec<Payload>) {
        let mut next_id = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
        let numbered = payloads
            .into_iter()
            .map(|payload| {
                *next_id += 1;
                (*next_id, Content::Ready(payload))
            })
            .collect();
        self.keep_and_send(tenant_path, numbered);
    }

    /// Publishes what the store announced, numbered from `first_id` (on PostgreSQL every
    /// process receives the same announcements in the same order). Ids only grow: one
    /// not above the last published is dropped.
    pub fn publish_announced(
        &self,
        store: &Store,
        first_id: u64,
        mut announcement: StreamAnnouncement,
    ) {
        let mut next_id = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
        let path = announcement.tenant_path.clone();
        let count = announcement.event_count();
        // Carried by the announcement (this process wrote them): nothing to read.
        let carried = announcement
            .records
            .take()
            .filter(|records| records.len() == count)
            .map(|records| records.iter().cloned().map(Some).collect());
        let batch = Arc::new(AnnouncedBatch {
            store: store.clone(),
            first_id,
            announcement,
            records: OnceCell::new_with(carried),
        });
        let numbered: Vec<(u64, Content)> = (0..count)
            .map(|index| (first_id + index as u64, index))
            .filter(|(id, _)| *id > *next_id)
            .map(|(id, index)| (id, Content::Announced(batch.clone(), index)))
            .collect();
        if let Some((last, _)) = numbered.last() {
            *next_id = *last;
        }
        // Someone follows this tenant: read now, beside the others in flight, rather
        // than when the first follower gets here (one read at a time falls behind a busy
        // ingest). At most READ_AHEAD at once; past that, the followers read.
        if !batch.records.initialized()
            && self.followed(&path)
            && let Ok(permit) = self.read_ahead.clone().try_acquire_owned()
        {
            tokio::spawn(async move {
                let _ = batch.records().await;
                drop(permit);
            });
        }
        self.keep_and_send(&path, numbered);
    }

    /// The id of the last announced event published (0: none yet).
    fn last_announced(&self) -> u64 {
        *self.next_id.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn keep_and_send(&self, tenant_path: &str, events: Vec<(u64, Content)>) {
        if events.is_empty() {
            return;
        }
        let path: Arc<str> = Arc::from(tenant_path);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for (id, content) in events {
            let event = Arc::new(StreamEvent {
                id,
                tenant_path: path.clone(),
                content,
            });
            state.keep(&event);
            state.send(&event);
        }
    }

    /// A live subscription for tenant `path` (with its subtenants, or not), and the
    /// kept events it sees after `last_id` (all kept ones are newer than what the client
    /// saw when `last_id` is older than the oldest kept).
    pub fn subscribe(&self, last_id: Option<u64>, path: &str, subtenants: bool) -> Subscription {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        // Under the lock: nothing published falls between backlog and live.
        let backlog = match last_id {
            Some(id) => state.kept_after(id, path, subtenants),
            None => Vec::new(),
        };
        let (queue, receiver) = mpsc::channel(LAG);
        let lagged = Arc::new(AtomicBool::new(false));
        state.next_subscriber += 1;
        let id = state.next_subscriber;
        let followers = state.followers.entry(path.to_string()).or_default();
        let subscriber = Subscriber {
            queue,
            lagged: lagged.clone(),
        };
        if subtenants {
            followers.subtree.insert(id, subscriber);
        } else {
            followers.own.insert(id, subscriber);
        }
        Subscription {
            backlog,
            live: Live {
                queue: receiver,
                lagged,
            },
            registration: Registration {
                state: self.state.clone(),
                path: path.to_string(),
                subtenants,
                id,
            },
        }
    }

    /// Whether an open subscription sees events of tenant `path`.
    fn followed(&self, path: &str) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.followed(path)
    }

    /// Events kept for resuming, in all tenants' rings.
    pub fn kept(&self) -> usize {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).kept
    }

    /// Ends every stream, open or opened later: the server is shutting down and waits
    /// for open responses to finish.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Watches for `close` (the value turns `true`).
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hub_knows_which_tenants_are_followed_while_streams_are_open() {
        let hub = EventHub::default();
        assert!(!hub.followed("/1000/"));
        let own = hub.subscribe(None, "/1000/1001/", false);
        let wide = hub.subscribe(None, "/1000/1002/", true);
        let again = hub.subscribe(None, "/1000/1001/", false);
        assert!(hub.followed("/1000/1001/"));
        assert!(hub.followed("/1000/1002/7/"));
        assert!(!hub.followed("/1000/1001/7/"));
        assert!(!hub.followed("/1000/"));
        drop(own);
        assert!(
            hub.followed("/1000/1001/"),
            "still followed by the other stream"
        );
        drop((again, wide));
        assert!(!hub.followed("/1000/1001/") && !hub.followed("/1000/1002/7/"));
    }

    fn device(id: usize) -> Payload {
        Payload::Device(Arc::new(crate::domain::device::bare_device(
            &id.to_string(),
        )))
    }

    #[test]
    fn each_tenant_keeps_its_own_window_and_the_largest_rings_are_trimmed_first() {
        let hub = EventHub::default();
        hub.publish("/1000/1/", vec![device(0)]);
        let quiet_id = hub.subscribe(Some(0), "/1000/1/", false).backlog[0].id;
        // One noisy tenant overflows only its own ring.
        for i in 0..TENANT_CAPACITY + 10 {
            hub.publish("/1000/2/", vec![device(i)]);
        }
        assert_eq!(hub.kept(), TENANT_CAPACITY + 1);
        // Five of them pass the overall cap: the largest rings give way.
        for tenant in 3..7 {
            for i in 0..TENANT_CAPACITY {
                hub.publish(&format!("/1000/{tenant}/"), vec![device(i)]);
            }
        }
        assert!(hub.kept() <= TOTAL_CAPACITY, "{}", hub.kept());
        let quiet = hub.subscribe(Some(0), "/1000/1/", false).backlog;
        assert_eq!(quiet.len(), 1);
        assert_eq!(quiet[0].id, quiet_id);
        // A subtree resume merges the rings in id order.
        let all = hub.subscribe(Some(0), "/1000/", true).backlog;
        assert_eq!(all.len(), hub.kept());
        assert!(all.windows(2).all(|w| w[0].id < w[1].id));
        assert_eq!(all[0].id, quiet_id);
    }

    #[test]
    fn ancestors_of_a_path() {
        let paths: Vec<&str> = path_and_ancestors("/1000/1001/7/").collect();
        assert_eq!(paths, ["/1000/", "/1000/1001/", "/1000/1001/7/"]);
    }
}
