//! The live stream's way out of a write transaction, the same on both backends: a
//! transaction records what it announces in its outbox (`WriteTx::announce`), and once
//! it is committed — on disk — the announcement comes out of `StreamFeed`, numbered, in
//! commit order; the relay (`services/stream/relay.rs`) feeds every process's hub from
//! its feed. Only how an announcement travels differs, and only here:
//!
//! - **PostgreSQL** (several processes): the transaction announces just before its
//!   commit (`WriteTx::commit` does it): `pg_notify` on this schema's channel, which
//!   PostgreSQL delivers to every listening process when — and only if — the
//!   transaction commits, in commit order. The event ids come from a sequence read under
//!   a transaction-scoped advisory lock that is held through the commit, so ids grow in
//!   exactly the order listeners receive them: every process's hub holds the same events
//!   under the same ids, and a client resumes with `Last-Event-ID` on whichever process
//!   it reaches.
//! - **SQLite** (one process): the commit's announcements wait in this process's
//!   `LocalFeed` (`local_feed.rs`) until the commit is durable, and are then numbered and handed to its
//!   listeners in commit order (a flush covers every commit before it); they carry their
//!   records, so nothing is read back.
//!
//! A notification names the rows (message, alert and device ids), not their content:
//! PostgreSQL caps a payload at 8,000 bytes, and every notification waits in one queue
//! until the slowest listener has read it. When that queue is half full (a listener
//! stuck), the notification is skipped with a warning; ingest never fails because of it.
//!
//! The same announcement is also written to `stream_announcements` in the announcing
//! transaction (the log): ids are contiguous, so a listener that sees a jump — or lost
//! its connection — reads what it missed back from the log (`stream_log_after`), and a
//! process that starts fills its hub with the recent events (`recent_stream_log`). The
//! log keeps about the last `2 ×` the hub's events (`prune_stream_log`).
//!
//! A device event shows the device as that transaction left it, not as it is when a
//! process reads it (later messages move it on): the log row of the part that carries
//! the device event holds that record (`device`, not in the notification, whose payload
//! it could overflow), and the relay reads it from there.
//!
//! A `monitoring` event names a line of a session's history (`monitoring_session_events`);
//! it shows the session as it is when read, as a message or an alert does.
//!
//! A new kind of event is a `StreamRecord` variant (with its id in the announcement and
//! its read in the relay); neither backend's path changes.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sqlx::FromRow;
use sqlx::postgres::PgListener;
use tokio::sync::mpsc;

use super::local_feed::LocalFeed;
use super::{Store, StoreError, StoreResult, WriteTx};
use crate::domain::alert::Alert;
use crate::domain::device::Device;
use crate::domain::ids::TenantCode;
use crate::domain::mo_message::MoMessage;
use crate::domain::monitoring::view::MonitoringEvent;
use crate::domain::tenant::TenantNode;

/// Most events named by one notification (ids of up to 20 digits stay far below the
/// payload limit).
const EVENTS_PER_NOTIFICATION: usize = 300;

/// A record the live stream shows: one event each.
#[derive(Debug, Clone)]
pub enum StreamRecord {
    MoMessage(Arc<MoMessage>),
    Alert(Arc<Alert>),
    Device(Arc<Device>),
    /// A line of the device's monitoring session's history, with the session.
    Monitoring(Arc<MonitoringEvent>),
}

/// What one unit of work committed, as the stream shows it: the tenant's new messages
/// of one device, then the alerts raised or joined, then the device (when its state
/// changed), then its monitoring session's new history lines — one event each, numbered
/// in that order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamAnnouncement {
    #[serde(rename = "t")]
    pub tenant_code: TenantCode,
    #[serde(rename = "p")]
    pub tenant_path: String,
    #[serde(rename = "d")]
    pub device_id: String,
    #[serde(rename = "m", default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<i64>,
    #[serde(rename = "a", default, skip_serializing_if = "Vec::is_empty")]
    pub alerts: Vec<i64>,
    #[serde(rename = "s", default)]
    pub device: bool,
    /// Monitoring session history lines (`monitoring_session_events` ids).
    #[serde(rename = "n", default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<i64>,
    /// The device as this unit of work left it, when `device` (logged, never notified).
    #[serde(skip)]
    pub device_record: Option<Arc<Device>>,
    /// The events' records as the announcing transaction wrote them, in event order
    /// (within this process only: what the database hands on names rows).
    #[serde(skip)]
    pub records: Option<Arc<[StreamRecord]>>,
}

impl PartialEq for StreamAnnouncement {
    /// The announced rows (the records are those rows as written).
    fn eq(&self, other: &Self) -> bool {
        (
            &self.tenant_code,
            &self.tenant_path,
            &self.device_id,
            &self.messages,
            &self.alerts,
            self.device,
            &self.sessions,
        ) == (
            &other.tenant_code,
            &other.tenant_path,
            &other.device_id,
            &other.messages,
            &other.alerts,
            other.device,
            &other.sessions,
        ) && self.device_record.is_some() == other.device_record.is_some()
    }
}

impl StreamAnnouncement {
    /// What a unit of work of `device_id` in tenant `node` shows: `records` in the
    /// stream's order (messages, alerts, the device, session lines), each named by its row.
    /// A message without an id is not stored and shows nothing; at most one device record.
    pub fn of(node: &TenantNode, device_id: &str, records: Vec<StreamRecord>) -> Self {
        let rank = |record: &StreamRecord| match record {
            StreamRecord::MoMessage(_) => 0,
            StreamRecord::Alert(_) => 1,
            StreamRecord::Device(_) => 2,
            StreamRecord::Monitoring(_) => 3,
        };
        let mut records: Vec<StreamRecord> = records
            .into_iter()
            .filter(|r| !matches!(r, StreamRecord::MoMessage(m) if m.message_id.is_none()))
            .collect();
        records.sort_by_key(rank);
        let (mut messages, mut alerts, mut device_record) = (Vec::new(), Vec::new(), None);
        let mut sessions = Vec::new();
        for record in &records {
            match record {
                StreamRecord::MoMessage(m) => messages.extend(m.message_id.map(|id| id.get())),
                StreamRecord::Alert(a) => alerts.push(a.alert_id.get()),
                StreamRecord::Device(d) => device_record = Some(d.clone()),
                StreamRecord::Monitoring(e) => sessions.push(e.line.event_id.get()),
            }
        }
        Self {
            tenant_code: node.code.clone(),
            tenant_path: node.path.clone(),
            device_id: device_id.to_string(),
            messages,
            alerts,
            device: device_record.is_some(),
            sessions,
            device_record,
            records: Some(records.into()),
        }
    }

    pub fn event_count(&self) -> usize {
        self.messages.len() + self.alerts.len() + self.tail_count()
    }

    /// The events that travel in the last part: the device and the session lines.
    fn tail_count(&self) -> usize {
        usize::from(self.device) + self.sessions.len()
    }

    /// Consecutive parts of at most `max` events each (the tail — device and session
    /// lines, a handful — whole in the last part, alone if it is larger), with the offset
    /// of each part's first event.
    fn split(&self, max: usize) -> Vec<(usize, StreamAnnouncement)> {
        let part = |messages: &[i64], alerts: &[i64], tail: bool| StreamAnnouncement {
            tenant_code: self.tenant_code.clone(),
            tenant_path: self.tenant_path.clone(),
            device_id: self.device_id.clone(),
            messages: messages.to_vec(),
            alerts: alerts.to_vec(),
            device: tail && self.device,
            sessions: if tail {
                self.sessions.clone()
            } else {
                Vec::new()
            },
            device_record: self.device_record.clone().filter(|_| tail),
            records: None,
        };
        let tail = self.tail_count();
        let mut parts = Vec::new();
        let mut offset = 0;
        let (mut messages, mut alerts) = (&self.messages[..], &self.alerts[..]);
        loop {
            let from_messages = messages.len().min(max);
            let from_alerts = alerts.len().min(max - from_messages);
            let rest_taken = messages.len() == from_messages && alerts.len() == from_alerts;
            let room =
                from_messages + from_alerts + tail <= max || from_messages + from_alerts == 0;
            let with_tail = tail > 0 && rest_taken && room;
            let taken = part(
                &messages[..from_messages],
                &alerts[..from_alerts],
                with_tail,
            );
            let count = taken.event_count();
            if count > 0 {
                parts.push((offset, taken));
            }
            offset += count;
            messages = &messages[from_messages..];
            alerts = &alerts[from_alerts..];
            if messages.is_empty() && alerts.is_empty() && (with_tail || tail == 0) {
                return parts;
            }
        }
    }
}

/// What the feed brings next.
#[derive(Debug)]
pub enum FeedItem {
    /// Committed events, the first numbered `first_id`, the others after it in order.
    Announced {
        first_id: u64,
        announcement: StreamAnnouncement,
    },
    /// The listening connection was lost and has been re-established: notifications sent
    /// meanwhile are gone (their announcements are in the log).
    Interrupted,
}

/// This process's subscription to the announcements of every process writing the
/// database: the database's notifications (PostgreSQL), or this process's own durable
/// commits (SQLite, `LocalFeed`).
pub struct StreamFeed {
    source: Source,
}

enum Source {
    Database(PgListener),
    Local(mpsc::UnboundedReceiver<(u64, StreamAnnouncement)>),
}

impl StreamFeed {
    /// This process's own commits (SQLite).
    pub(super) fn local(local: &LocalFeed) -> Self {
        Self {
            source: Source::Local(local.listen()),
        }
    }
}

impl StreamFeed {
    /// The next announcement, in commit order.
    pub async fn next(&mut self) -> StoreResult<FeedItem> {
        let listener = match &mut self.source {
            Source::Database(listener) => listener,
            Source::Local(committed) => {
                return match committed.recv().await {
                    Some((first_id, announcement)) => Ok(FeedItem::Announced {
                        first_id,
                        announcement,
                    }),
                    // The store is gone, and with it every writer: nothing comes.
                    None => std::future::pending().await,
                };
            }
        };
        loop {
            let Some(notification) = listener.try_recv().await? else {
                // Listen again before saying so (the listener reconnects and re-listens
                // when used): the caller then reads the log with no window left in
                // which a commit's notification could be lost.
                sqlx::query("SELECT 1").execute(&mut *listener).await?;
                return Ok(FeedItem::Interrupted);
            };
            match parse_notification(notification.payload()) {
                Some((first_id, announcement)) => {
                    return Ok(FeedItem::Announced {
                        first_id,
                        announcement,
                    });
                }
                None => tracing::warn!(
                    payload_bytes = notification.payload().len(),
                    "ignored a malformed stream notification"
                ),
            }
        }
    }
}

fn parse_notification(payload: &str) -> Option<(u64, StreamAnnouncement)> {
    let (id, body) = payload.split_once(' ')?;
    Some((id.parse().ok()?, serde_json::from_str(body).ok()?))
}

/// The channel of this database schema: two deployments sharing a database in
/// different schemas (or parallel tests) do not hear each other.
pub(super) async fn channel_of(pool: &sqlx::AnyPool) -> StoreResult<Arc<str>> {
    let schema: String = sqlx::query_scalar("SELECT current_schema()::text AS s")
        .fetch_one(pool)
        .await?;
    let mut channel = format!("safetrack_stream_{schema}");
    // PostgreSQL names are at most 63 bytes.
    while channel.len() > 63 {
        channel.pop();
    }
    Ok(Arc::from(channel))
}

/// A `stream_announcements` row (the log).
#[derive(sqlx::FromRow)]
struct LoggedRow {
    first_id: i64,
    body: String,
    device: Option<String>,
}

impl LoggedRow {
    fn into_announced(self) -> StoreResult<(u64, StreamAnnouncement)> {
        let mut announcement: StreamAnnouncement = serde_json::from_str(&self.body)
            .map_err(|e| StoreError::Corrupt(format!("stream announcement: {e}")))?;
        announcement.device_record = self
            .device
            .as_deref()
            .map(logged_device)
            .transpose()?
            .map(Arc::new);
        Ok((u64::try_from(self.first_id).unwrap_or(0), announcement))
    }
}

/// Announcements read back from the log, in id order.
fn logged(rows: Vec<sqlx::any::AnyRow>) -> StoreResult<Vec<(u64, StreamAnnouncement)>> {
    rows.iter()
        .map(|row| LoggedRow::from_row(row)?.into_announced())
        .collect()
}

fn logged_device(json: &str) -> StoreResult<Device> {
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt(format!("stream device: {e}")))
}

impl Store {
    /// The device as the logged announcement `first_id` left it (PostgreSQL): `None`
    /// when that part carries no device event or was pruned from the log.
    pub async fn stream_logged_device(&self, first_id: u64) -> StoreResult<Option<Device>> {
        if self.stream_channel.is_none() {
            return Ok(None);
        }
        let device: Option<Option<String>> =
            sqlx::query_scalar("SELECT device FROM stream_announcements WHERE first_id = $1")
                .bind(i64::try_from(first_id).unwrap_or(i64::MAX))
                .fetch_optional(&self.pool)
                .await?;
        device.flatten().as_deref().map(logged_device).transpose()
    }

    /// The logged announcements whose first event comes after `after`, at most `limit`,
    /// in id order (PostgreSQL; empty on SQLite).
    pub async fn stream_log_after(
        &self,
        after: u64,
        limit: u32,
    ) -> StoreResult<Vec<(u64, StreamAnnouncement)>> {
        if self.stream_channel.is_none() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT first_id, body, device FROM stream_announcements WHERE first_id > $1
             ORDER BY first_id LIMIT $2",
        )
        .bind(i64::try_from(after).unwrap_or(i64::MAX))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        logged(rows)
    }

    /// The logged announcements of about the last `events` events, in id order
    /// (PostgreSQL; empty on SQLite): what a starting process's hub begins with.
    pub async fn recent_stream_log(
        &self,
        events: u64,
    ) -> StoreResult<Vec<(u64, StreamAnnouncement)>> {
        if self.stream_channel.is_none() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT first_id, body, device FROM stream_announcements
             WHERE first_id > (SELECT COALESCE(MAX(first_id), 0) FROM stream_announcements) - $1
             ORDER BY first_id",
        )
        .bind(i64::try_from(events).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await?;
        logged(rows)
    }

    /// Drops logged announcements older than about the last `events` events; returns how
    /// many. Any process may run it: it is idempotent.
    pub async fn prune_stream_log(&self, events: u64) -> StoreResult<u64> {
        if self.stream_channel.is_none() {
            return Ok(0);
        }
        let done = sqlx::query(
            "DELETE FROM stream_announcements
             WHERE first_id <= (SELECT MAX(first_id) FROM stream_announcements) - $1",
        )
        .bind(i64::try_from(events).unwrap_or(i64::MAX))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Listens to the announcements of every process on this database. Listening
    /// starts before this returns, so nothing committed afterwards is missed.
    pub async fn stream_feed(&self) -> StoreResult<StreamFeed> {
        if let Some(local) = &self.local_feed {
            return Ok(StreamFeed::local(local));
        }
        let (Some(channel), Some(url)) = (&self.stream_channel, &self.url) else {
            return Err(StoreError::Unavailable(
                "the database has no stream channel".into(),
            ));
        };
        let mut listener = PgListener::connect(url).await?;
        listener.listen(channel).await?;
        Ok(StreamFeed {
            source: Source::Database(listener),
        })
    }
}

impl WriteTx {
    /// Records what the live stream shows of this transaction, announced once it is
    /// committed and on disk (see the module's notes); nothing if it is not committed.
    pub fn announce(&mut self, announcement: StreamAnnouncement) {
        if announcement.event_count() > 0 {
            self.outbox.stream.push(announcement);
        }
    }

    /// PostgreSQL: announces to every process's listeners, in this transaction, at its
    /// very end (`commit` calls it): the advisory lock it takes orders the commits of
    /// announcing transactions.
    pub(super) async fn announce_in_database(
        &mut self,
        channel: &Arc<str>,
        announcement: &StreamAnnouncement,
    ) -> StoreResult<()> {
        let count = announcement.event_count();
        let parts = announcement.split(EVENTS_PER_NOTIFICATION);
        let rows = (0..parts.len())
            .map(|i| {
                let at = 3 + 3 * i;
                format!("(${at}::bigint, ${}::text, ${}::text)", at + 1, at + 2)
            })
            .collect::<Vec<_>>()
            .join(", ");
        // The lock (OFFSET 0 keeps that subquery whole, so it is taken first), then the
        // ids reserved as one range (a CTE with volatile functions runs once), the parts
        // logged, and one notification per part unless the queue is half full.
        let sql = format!(
            "WITH reserved AS (
                 SELECT setval('stream_event_ids', nextval('stream_event_ids') + $2 - 1) - $2 + 1
                     AS first_id
                 FROM (SELECT pg_advisory_xact_lock(hashtext($1)) OFFSET 0) AS locked),
             parts AS (
                 SELECT reserved.first_id + v.offset_id AS first_id, v.body, v.device
                 FROM reserved CROSS JOIN (VALUES {rows}) AS v(offset_id, body, device)),
             logged AS (
                 INSERT INTO stream_announcements (first_id, body, device)
                 SELECT first_id, body, device FROM parts)
             SELECT pg_notify($1, first_id::text || ' ' || body) IS NULL AS sent
             FROM parts WHERE pg_notification_queue_usage() < 0.5"
        );
        let mut query = sqlx::query(&sql)
            .bind(channel.to_string())
            .bind(count as i64);
        for (offset, part) in &parts {
            let body =
                serde_json::to_string(part).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let device = part
                .device_record
                .as_ref()
                .map(|device| serde_json::to_string(device.as_ref()))
                .transpose()
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            query = query.bind(*offset as i64).bind(body).bind(device);
        }
        let sent = query.fetch_all(&mut *self.tx).await?;
        if sent.is_empty() {
            tracing::warn!(
                events = count,
                "the notification queue is half full (a listener is not reading): \
                 these events are not notified; listeners read them from the log"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn announcement(messages: usize, alerts: usize, device: bool) -> StreamAnnouncement {
        with_sessions(messages, alerts, device, 0)
    }

    fn with_sessions(
        messages: usize,
        alerts: usize,
        device: bool,
        sessions: usize,
    ) -> StreamAnnouncement {
        StreamAnnouncement {
            tenant_code: crate::domain::tenant::root_tenant_code(),
            tenant_path: "/1000/".into(),
            device_id: "van-1".into(),
            messages: (1..=messages as i64).collect(),
            alerts: (1..=alerts as i64).map(|a| a * 1000).collect(),
            device,
            sessions: (1..=sessions as i64).map(|s| s * 7).collect(),
            device_record: None,
            records: None,
        }
    }

    #[test]
    fn split_keeps_every_event_once_in_order_with_offsets() {
        for (m, a, d, n) in [
            (0, 0, true, 0),
            (5, 2, true, 0),
            (300, 0, true, 0),
            (299, 1, true, 0),
            (1000, 3, false, 0),
            (600, 0, true, 0),
            (0, 0, false, 1),
            (298, 1, true, 1),
            (299, 0, false, 2),
            (10, 0, true, 400),
        ] {
            let mut whole = with_sessions(m, a, d, n);
            whole.device_record = d.then(|| Arc::new(crate::domain::device::bare_device("van-1")));
            let parts = whole.split(300);
            let mut joined = StreamAnnouncement {
                device: false,
                ..announcement(0, 0, false)
            };
            let mut expected_offset = 0;
            for (offset, part) in &parts {
                assert_eq!(*offset, expected_offset, "{m} {a} {d} {n}");
                let oversized_tail = part.messages.is_empty() && part.alerts.is_empty();
                assert!(part.event_count() <= 300 || oversized_tail);
                assert!(part.event_count() > 0);
                assert!(!joined.device, "the device comes last");
                assert!(joined.sessions.is_empty(), "the session lines come last");
                assert_eq!(
                    part.device_record.is_some(),
                    part.device,
                    "its record with it"
                );
                expected_offset += part.event_count();
                joined.messages.extend(&part.messages);
                joined.alerts.extend(&part.alerts);
                joined.device |= part.device;
                joined.sessions.extend(&part.sessions);
                joined.device_record = joined.device_record.or(part.device_record.clone());
            }
            assert_eq!(joined, whole, "{m} {a} {d} {n}");
        }
    }

    #[test]
    fn a_notification_stays_under_the_payload_limit() {
        let mut big = announcement(300, 0, false);
        big.messages = vec![i64::MAX; 300];
        big.device_id = "d".repeat(200);
        let body = serde_json::to_string(&big.split(300)[0].1).expect("json");
        assert!(body.len() + 21 < 8000, "{}", body.len());
    }

    #[test]
    fn notifications_round_trip() {
        let whole = with_sessions(3, 1, true, 2);
        let payload = format!("42 {}", serde_json::to_string(&whole).expect("json"));
        assert_eq!(parse_notification(&payload), Some((42, whole)));
        assert_eq!(parse_notification("x {}"), None);
        assert_eq!(parse_notification("42"), None);
    }
}
