//! The live event hub behind `GET /V2/{t}/stream`: ingest publishes what it committed
//! (`momessage`, `alert`, `device`); each subscriber gets what lies in its scope. The last
//! `CAPACITY` events are kept so a client reconnecting with `Last-Event-ID` resumes
//! without a gap; a subscriber that falls `LAG` events behind is dropped — publishing
//! never waits for anyone. `close` (called by `app::serve` when shutdown begins) ends
//! every stream, so graceful shutdown is not held up by open ones.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, watch};

use crate::domain::alert::Alert;
use crate::domain::device::Device;
use crate::domain::mo_message::MoMessage;

/// Events kept for resuming (more than the 10,000 promised).
pub const CAPACITY: usize = 16_384;
/// How far a subscriber may fall behind before it is dropped.
pub const LAG: usize = 4_096;

/// What happened.
#[derive(Debug, Clone)]
pub enum Payload {
    MoMessage(Arc<MoMessage>),
    Alert(Arc<Alert>),
    Device(Arc<Device>),
}

impl Payload {
    /// The SSE `event:` name.
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::MoMessage(_) => "momessage",
            Payload::Alert(_) => "alert",
            Payload::Device(_) => "device",
        }
    }

    /// The SSE `data:`: the record as the API shows it.
    pub fn to_json(&self) -> String {
        let json = match self {
            Payload::MoMessage(m) => serde_json::to_string(m.as_ref()),
            Payload::Alert(a) => serde_json::to_string(a.as_ref()),
            Payload::Device(d) => serde_json::to_string(d.as_ref()),
        };
        json.unwrap_or_default()
    }
}

/// One event, with the path of the tenant it belongs to.
#[derive(Debug, Clone)]
pub struct StreamEvent {
    pub id: u64,
    pub tenant_path: Arc<str>,
    pub payload: Payload,
}

impl StreamEvent {
    /// Whether a subscriber of tenant `path` (with its subtenants, or not) sees it.
    pub fn visible_to(&self, path: &str, subtenants: bool) -> bool {
        if subtenants {
            self.tenant_path.starts_with(path)
        } else {
            &*self.tenant_path == path
        }
    }
}

pub struct EventHub {
    recent: Mutex<VecDeque<Arc<StreamEvent>>>,
    next_id: Mutex<u64>,
    sender: broadcast::Sender<Arc<StreamEvent>>,
    /// `true` once the server shuts down.
    closing: watch::Sender<bool>,
}

impl Default for EventHub {
    fn default() -> Self {
        let (sender, _) = broadcast::channel(LAG);
        // Ids grow across restarts too (they start at the start-up time), so a client's
        // old Last-Event-ID never names a newer event.
        let start = u64::try_from(jiff::Timestamp::now().as_microsecond()).unwrap_or(1);
        Self {
            recent: Mutex::new(VecDeque::with_capacity(CAPACITY)),
            next_id: Mutex::new(start),
            sender,
            closing: watch::Sender::new(false),
        }
    }
}

impl EventHub {
    /// Publishes events of one tenant, in order.
    pub fn publish(&self, tenant_path: &str, payloads: Vec<Payload>) {
        if payloads.is_empty() {
            return;
        }
        let path: Arc<str> = Arc::from(tenant_path);
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let mut next_id = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
        for payload in payloads {
            *next_id += 1;
            let event = Arc::new(StreamEvent {
                id: *next_id,
                tenant_path: path.clone(),
                payload,
            });
            if recent.len() == CAPACITY {
                recent.pop_front();
            }
            recent.push_back(event.clone());
            // No subscriber is fine.
            let _ = self.sender.send(event);
        }
    }

    /// A live subscription, and the kept events after `last_id` (all kept ones are newer
    /// than what the client saw when `last_id` is older than the oldest kept).
    pub fn subscribe(
        &self,
        last_id: Option<u64>,
    ) -> (Vec<Arc<StreamEvent>>, broadcast::Receiver<Arc<StreamEvent>>) {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        // Subscribing under the lock: nothing published falls between backlog and live.
        let receiver = self.sender.subscribe();
        let backlog = match last_id {
            Some(id) => recent.iter().filter(|e| e.id > id).cloned().collect(),
            None => Vec::new(),
        };
        (backlog, receiver)
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
