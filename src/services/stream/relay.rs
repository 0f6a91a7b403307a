//! Feeding a process's hub from the store's feed, the one way into it on both backends:
//! the recent events when it starts (PostgreSQL's log; none on SQLite), then the
//! announcements as their commits become durable (every process's on PostgreSQL, this
//! process's own on SQLite), with what a lost notification or connection missed read
//! back from the log; and an announced batch's records, read when a subscriber first
//! needs them unless the announcement carried them.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::watch;

use super::{CATCH_UP_PAGE, EventHub, LOG_EVENTS, PRUNE_EVERY, Payload, TOTAL_CAPACITY};
use crate::domain::alert::Alert;
use crate::domain::device::Device;
use crate::domain::ids::{AlertId, MoMessageId};
use crate::store::{FeedItem, Store, StoreResult, StreamAnnouncement, StreamFeed};

/// Fills a starting process's hub with the recent events from the database's log
/// (PostgreSQL; SQLite keeps none), so a client may resume with `Last-Event-ID` here
/// whichever process it followed before. Call it after the feed listens and before the
/// server answers.
pub async fn load_recent(store: &Store, hub: &EventHub) -> StoreResult<()> {
    for (first_id, announcement) in store.recent_stream_log(TOTAL_CAPACITY as u64).await? {
        hub.publish_announced(store, first_id, announcement);
    }
    Ok(())
}

/// Feeds `hub` from the store's announcements until `stop` turns true.
/// Event ids are contiguous: a jump, or a lost listening connection (re-established by
/// the feed), means notifications were missed, and those announcements are read back
/// from the log before going on (PostgreSQL: SQLite's feed loses nothing). Prunes the
/// log now and then.
pub async fn relay(
    store: Store,
    mut feed: StreamFeed,
    hub: Arc<EventHub>,
    mut stop: watch::Receiver<bool>,
) {
    let mut prune = tokio::time::interval(PRUNE_EVERY);
    loop {
        let item = tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return,
            _ = prune.tick() => None,
            item = feed.next() => Some(item),
        };
        let Some(item) = item else {
            if let Err(e) = store.prune_stream_log(LOG_EVENTS).await {
                tracing::warn!(error = %e, "could not prune the live stream's log");
            }
            continue;
        };
        match item {
            Ok(FeedItem::Announced {
                first_id,
                announcement,
            }) => {
                let last = hub.last_announced();
                if last > 0 && first_id > last + 1 {
                    catch_up(&store, &hub, Some(first_id)).await;
                }
                hub.publish_announced(&store, first_id, announcement);
            }
            Ok(FeedItem::Interrupted) => {
                tracing::warn!(
                    "the live stream's database connection was lost: reconnecting, and \
                     reading what was announced meanwhile from the log"
                );
                catch_up(&store, &hub, None).await;
            }
            Err(e) => {
                tracing::error!(error = %e, "the live stream's database connection failed");
                tokio::select! {
                    _ = stop.wait_for(|stopped| *stopped) => return,
                    _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
                }
                catch_up(&store, &hub, None).await;
            }
        }
    }
}

/// Publishes the logged announcements after the hub's last event (and before `until`,
/// the first id of a notification about to be published), in order. A failed read is
/// logged: those events are missing from this process's stream.
async fn catch_up(store: &Store, hub: &EventHub, until: Option<u64>) {
    loop {
        let after = hub.last_announced();
        let page = match store.stream_log_after(after, CATCH_UP_PAGE).await {
            Ok(page) => page,
            Err(e) => {
                tracing::error!(error = %e, after, "could not read the live stream's log");
                return;
            }
        };
        let full = page.len() == CATCH_UP_PAGE as usize;
        let mut published = false;
        for (first_id, announcement) in page {
            if until.is_some_and(|until| first_id >= until) {
                return;
            }
            hub.publish_announced(store, first_id, announcement);
            published = true;
        }
        if !full || !published {
            return;
        }
    }
}

/// The announced records, one per event: messages, alerts and session lines (with their
/// session) as the API shows them now (`None`: deleted), the device as the announcing transaction left it (from the log;
/// as it is now only when that part was pruned from the log before anyone read it).
pub(super) async fn read_announced(
    store: &Store,
    first_id: u64,
    announced: &StreamAnnouncement,
) -> StoreResult<Vec<Option<Payload>>> {
    let code = &announced.tenant_code;
    let mut records = Vec::with_capacity(announced.event_count());
    let message_ids: Vec<MoMessageId> = announced
        .messages
        .iter()
        .map(|id| MoMessageId::new(*id))
        .collect();
    let mut messages = store
        .get_messages(code, Some(&announced.device_id), &message_ids)
        .await?;
    for id in &message_ids {
        let message = messages.remove(id);
        records.push(message.map(|m| Payload::MoMessage(Arc::new(m))));
    }
    // One alert raised and joined by one batch is announced twice: read once.
    let mut alerts: HashMap<i64, Option<Arc<Alert>>> = HashMap::new();
    for id in &announced.alerts {
        let alert = match alerts.get(id) {
            Some(alert) => alert.clone(),
            None => {
                let alert = store
                    .get_alert(code, AlertId::new(*id))
                    .await?
                    .map(Arc::new);
                alerts.insert(*id, alert.clone());
                alert
            }
        };
        records.push(alert.map(Payload::Alert));
    }
    if announced.device {
        let device = match announced.device_record.clone() {
            Some(device) => Some(device),
            None => announced_device(store, first_id, announced).await?,
        };
        records.push(device.map(Payload::Device));
    }
    let mut lines = store
        .monitoring_stream_events(code, &announced.sessions)
        .await?;
    for id in &announced.sessions {
        records.push(lines.remove(id).map(|e| Payload::Monitoring(Arc::new(e))));
    }
    Ok(records)
}

/// A notified device event's record: as its batch left it (the log), or as it is now
/// when the log no longer holds that batch.
async fn announced_device(
    store: &Store,
    first_id: u64,
    announced: &StreamAnnouncement,
) -> StoreResult<Option<Arc<Device>>> {
    let device = match store.stream_logged_device(first_id).await? {
        Some(device) => Some(device),
        None => {
            let code = &announced.tenant_code;
            store.get_device(code, &announced.device_id).await?
        }
    };
    Ok(device.map(Arc::new))
}
