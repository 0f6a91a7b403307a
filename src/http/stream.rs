//! The live stream: `GET /V2/{t}/stream` — Server-Sent Events of the
//! `momessage`, `alert`, `device` and `monitoring` events writes publish to the hub
//! (`services::stream`), in the caller's scope.
//!
//! Each event is `event: <kind>`, `id: <event id>`, `data: <the JSON record>`. A client
//! reconnecting with `Last-Event-ID` first gets the kept events after that id, then the
//! live ones: no gap, no duplicate, as long as its last event is still among the kept
//! (`TENANT_CAPACITY` per tenant). A client that leaves `LAG` events of its scope unread
//! is dropped (it reconnects and resumes); publishing never waits for a client. Every stream ends when the server
//! begins shutting down (`EventHub::close`, called by `app::serve`).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio::sync::watch;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::access_check::{ACCESS_CHECK_EVERY, Grant, Revoked};
use super::error::{ApiError, ApiResult, Problem};
use super::extract::{Query, TenantScope};
use super::request_context::current_request_id;
use crate::services::stream::{EventHub, Live, LiveEnd, ReadyEvent, Registration, StreamEvent};
use crate::store::Store;

/// A comment line is sent after this long without an event, so proxies and clients
/// keep an idle stream open (and a vanished client is noticed).
pub const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(15);

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(live_stream))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct StreamQuery {
    /// Include the events of the tenant's subtenants (at any depth).
    #[serde(default)]
    subtenants: bool,
}

/// Follow the tenant's live events (Server-Sent Events).
///
/// `text/event-stream` of `momessage` (a stored MO message, as GET shows it without
/// `includeFile`), `alert` (an alert raised, joined, acknowledged, escalated or resolved),
/// `device` (a device whose state changed: position, emergency, battery, geofences) and
/// `monitoring` (a line of a monitoring session's history — started, check-in, changed,
/// reminder, missed check-in, overdue, ended — with `DeviceId` and the `Session` as it is
/// then, docs/monitoring.md) events. Each event has
/// `event: <kind>`, `id: <event id>` and `data: <the JSON record>` on one line; a comment
/// line keeps an idle stream open every 15 s.
///
/// Reconnecting with `Last-Event-ID` (what EventSource sends) first replays the events
/// after that id, then continues live: no gap and no duplicate while the last event seen
/// is among the last 16,384 events of its tenant this server process kept. A client
/// that leaves 4,096 events of its scope unread is disconnected (a final comment says
/// so) and resumes the same way. The stream ends when the server shuts down, and within
/// a few seconds of its caller losing access (user deleted or disabled, role lowered,
/// password changed). Any role may follow its tenant; events of
/// subtenants only with `subtenants=true`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/stream", tag = "Live stream",
    params(super::TenantParam, StreamQuery,
        ("Last-Event-ID" = Option<u64>, Header,
            description = "The `id` of the last event received: resume after it")),
    responses(
        (status = 200, description = "An endless stream of events: `event: momessage|alert|device|monitoring`, \
            `id: <event id>`, `data: <MoMessage|Alert|Device|MonitoringEvent as JSON>`",
            body = String, content_type = "text/event-stream",
            example = "event: momessage\nid: 1767225600000001\ndata: {\"MessageId\":\"1\",\"DeviceId\":\"van-3\",\"MessageType\":\"CheckIn\"}\n\n"),
        (status = 400, description = "`Last-Event-ID` is not an event id", body = Problem),
        (status = 404, body = Problem),
        (status = 406, description = "`Accept` excludes text/event-stream", body = Problem)))]
async fn live_stream(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<StreamQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    if !accepts_event_stream(&headers) {
        return Err(ApiError::NotAcceptable(
            "this resource is only available as text/event-stream".into(),
        ));
    }
    let last_id = last_event_id(&headers)?;
    let grant = Grant::of(&app.store, app.auth.clone(), scope.caller.clone())
        .await?
        .map_err(|_| ApiError::from(crate::auth::AuthError::InvalidCredentials))?;
    let follower = Follower::new(
        app.pipeline.hub(),
        last_id,
        scope.tenant.path.clone(),
        query.subtenants,
    )
    .checking(app.store.clone(), grant);
    let events = futures::stream::unfold(Some(follower), |follower| async move {
        let mut follower = follower?;
        match follower.next().await {
            Ok(event) => Some((Ok::<_, Infallible>(sse_event(&event)), Some(follower))),
            // A last comment saying why, then the end of the response.
            Err(end) => {
                follower.log_end(end);
                Some((Ok(Event::default().comment(end.comment())), None))
            }
        }
    });
    let mut response = Sse::new(events)
        .keep_alive(
            KeepAlive::new()
                .interval(KEEP_ALIVE_INTERVAL)
                .text("keep-alive"),
        )
        .into_response();
    // Reverse proxies (nginx) must pass events on as they come.
    response.headers_mut().insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    Ok(response)
}

fn sse_event(event: &ReadyEvent) -> Event {
    Event::default()
        .event(event.payload.kind())
        .id(event.id.to_string())
        .data(event.payload.to_json())
}

/// Whether `Accept` (absent: anything) admits `text/event-stream`.
fn accepts_event_stream(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT) else {
        return true;
    };
    let Ok(accept) = accept.to_str() else {
        return false;
    };
    accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let essence = parts.next().unwrap_or_default().trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        !refused
            && ["text/event-stream", "text/*", "*/*"]
                .iter()
                .any(|m| essence.eq_ignore_ascii_case(m))
    })
}

/// The `Last-Event-ID` header: absent or empty is none; anything but an event id is a 400.
fn last_event_id(headers: &HeaderMap) -> ApiResult<Option<u64>> {
    let Some(value) = headers.get(LAST_EVENT_ID) else {
        return Ok(None);
    };
    let invalid = || {
        ApiError::bad_request(
            "invalid_header",
            "Last-Event-ID must be the id of an event this stream sent (a non-negative integer)",
        )
    };
    let text = value.to_str().map_err(|_| invalid())?.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| invalid())
}

/// Why a stream ended (other than the client going away, which drops it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The client fell more than `LAG` events behind.
    Lagged,
    /// The server is shutting down.
    ShuttingDown,
    /// An event's record (PostgreSQL) or the caller's access could not be read: the
    /// client resumes from the last event it got.
    Unavailable,
    /// The caller lost the access it opened the stream with.
    Revoked(Revoked),
}

impl End {
    fn comment(self) -> &'static str {
        match self {
            End::Lagged => "too far behind: reconnect with Last-Event-ID to resume",
            End::ShuttingDown => "server shutting down: reconnect with Last-Event-ID to resume",
            End::Unavailable => "database unavailable: reconnect with Last-Event-ID to resume",
            End::Revoked(_) => "access revoked",
        }
    }
}

/// One client's position in the hub: the kept events it missed, then the live ones,
/// each sent once, in id order, and only those in its scope.
struct Follower {
    backlog: std::vec::IntoIter<Arc<StreamEvent>>,
    live: Live,
    closing: watch::Receiver<bool>,
    tenant_path: String,
    subtenants: bool,
    /// The newest event id already considered (sent, or out of scope).
    last_id: u64,
    /// For the log lines: the request that opened the stream.
    request_id: Option<String>,
    /// Tells the hub what this stream follows while it is open.
    _registration: Registration,
    /// The caller's access, re-checked every `ACCESS_CHECK_EVERY` (`None`: not checked).
    access: Option<(Store, Grant)>,
    recheck: tokio::time::Interval,
}

impl Follower {
    fn new(hub: &EventHub, last_id: Option<u64>, tenant_path: String, subtenants: bool) -> Self {
        let closing = hub.closing();
        let subscription = hub.subscribe(last_id, &tenant_path, subtenants);
        Self {
            backlog: subscription.backlog.into_iter(),
            live: subscription.live,
            _registration: subscription.registration,
            closing,
            tenant_path,
            subtenants,
            last_id: last_id.unwrap_or(0),
            request_id: current_request_id(),
            access: None,
            recheck: tokio::time::interval(ACCESS_CHECK_EVERY),
        }
    }

    /// Ends the stream once the caller no longer has `grant`'s access.
    fn checking(mut self, store: Store, grant: Grant) -> Self {
        let first = tokio::time::Instant::now() + ACCESS_CHECK_EVERY;
        self.recheck = tokio::time::interval_at(first, ACCESS_CHECK_EVERY);
        self.recheck
            .set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.access = Some((store, grant));
        self
    }

    /// Whether the caller still has its access (`Ok` when nothing is checked).
    async fn check_access(&mut self) -> Result<(), End> {
        let Some((store, grant)) = &mut self.access else {
            return Ok(());
        };
        match grant.check(store).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(revoked)) => Err(End::Revoked(revoked)),
            Err(e) => {
                tracing::error!(error = %e, "could not re-check a live stream's caller");
                Err(End::Unavailable)
            }
        }
    }

    /// The next event to send, or why the stream ends.
    async fn next(&mut self) -> Result<ReadyEvent, End> {
        loop {
            if *self.closing.borrow() {
                return Err(End::ShuttingDown);
            }
            let checked = self.access.is_some();
            let next = match self.backlog.next() {
                Some(event) => Some(event),
                None => tokio::select! {
                    biased;
                    _ = self.closing.wait_for(|closed| *closed) => return Err(End::ShuttingDown),
                    _ = self.recheck.tick(), if checked => None,
                    received = self.live.recv() => match received {
                        Ok(event) => Some(event),
                        Err(LiveEnd::Lagged) => return Err(End::Lagged),
                        // The hub is gone: the application is being dropped.
                        Err(LiveEnd::Closed) => return Err(End::ShuttingDown),
                    },
                },
            };
            let Some(event) = next else {
                self.check_access().await?;
                continue;
            };
            if event.id <= self.last_id || !event.visible_to(&self.tenant_path, self.subtenants) {
                self.last_id = self.last_id.max(event.id);
                continue;
            }
            match event.ready().await {
                Ok(Some(ready)) => {
                    self.last_id = event.id;
                    return Ok(ready);
                }
                // Deleted before it was read: nothing to send.
                Ok(None) => self.last_id = event.id,
                Err(e) => {
                    tracing::error!(error = %e, event_id = event.id, "could not read a stream event");
                    return Err(End::Unavailable);
                }
            }
        }
    }

    fn log_end(&self, end: End) {
        tracing::info!(
            request_id = self.request_id.as_deref().unwrap_or_default(),
            reason = ?end,
            last_event_id = self.last_id,
            "live stream ended"
        );
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        // Also when the client went away (hyper drops the response body).
        tracing::debug!(
            request_id = self.request_id.as_deref().unwrap_or_default(),
            last_event_id = self.last_id,
            "live stream closed"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::domain::device::bare_device;
    use crate::services::stream::{LAG, Payload};

    fn device(id: &str) -> Payload {
        Payload::Device(Arc::new(bare_device(id)))
    }

    fn device_id(event: &ReadyEvent) -> String {
        match &event.payload {
            Payload::Device(d) => d.device_id.to_string(),
            other => panic!("unexpected {other:?}"),
        }
    }

    async fn next(follower: &mut Follower) -> Result<ReadyEvent, End> {
        tokio::time::timeout(Duration::from_secs(5), follower.next())
            .await
            .expect("an event or the end in time")
    }

    async fn nothing_pending(follower: &mut Follower) {
        let waited = tokio::time::timeout(Duration::from_millis(50), follower.next()).await;
        assert!(waited.is_err(), "expected nothing, got {waited:?}");
    }

    fn follow(hub: &EventHub, last_id: Option<u64>, path: &str, subtenants: bool) -> Follower {
        Follower::new(hub, last_id, path.to_string(), subtenants)
    }

    #[tokio::test]
    async fn scope_filters_live_events() {
        let hub = EventHub::default();
        let mut own = follow(&hub, None, "/1000/1001/", false);
        let mut parent = follow(&hub, None, "/1000/", false);
        let mut parent_wide = follow(&hub, None, "/1000/", true);
        let mut sibling = follow(&hub, None, "/1000/1002/", true);
        hub.publish("/1000/1001/", vec![device("a"), device("b")]);
        for follower in [&mut own, &mut parent_wide] {
            assert_eq!(device_id(&next(follower).await.unwrap()), "a");
            assert_eq!(device_id(&next(follower).await.unwrap()), "b");
        }
        nothing_pending(&mut parent).await;
        nothing_pending(&mut sibling).await;
        // A tenant code that is a prefix of another's is not its parent.
        let mut similar = follow(&hub, None, "/1000/100/", true);
        hub.publish("/1000/1001/", vec![device("c")]);
        nothing_pending(&mut similar).await;
    }

    #[tokio::test]
    async fn resume_replays_kept_events_then_live_without_duplicates() {
        let hub = EventHub::default();
        let mut first = follow(&hub, None, "/1000/", true);
        hub.publish("/1000/", vec![device("a"), device("b"), device("c")]);
        let a = next(&mut first).await.unwrap();
        drop(first);
        let mut resumed = follow(&hub, Some(a.id), "/1000/", true);
        hub.publish("/1000/", vec![device("d")]);
        let ids: Vec<String> = [
            next(&mut resumed).await.unwrap(),
            next(&mut resumed).await.unwrap(),
            next(&mut resumed).await.unwrap(),
        ]
        .iter()
        .map(device_id)
        .collect();
        assert_eq!(ids, ["b", "c", "d"]);
        nothing_pending(&mut resumed).await;
        // Without Last-Event-ID: live events only.
        let mut fresh = follow(&hub, None, "/1000/", true);
        nothing_pending(&mut fresh).await;
    }

    #[tokio::test]
    async fn a_client_that_falls_behind_is_dropped_and_publishing_never_waits() {
        let hub = EventHub::default();
        let mut slow = follow(&hub, None, "/1000/", true);
        let started = std::time::Instant::now();
        for i in 0..=LAG {
            hub.publish("/1000/", vec![device(&i.to_string())]);
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(next(&mut slow).await.unwrap_err(), End::Lagged);
        // It resumes from the kept events.
        let mut resumed = follow(&hub, Some(0), "/1000/", true);
        assert_eq!(device_id(&next(&mut resumed).await.unwrap()), "0");
    }

    #[tokio::test]
    async fn only_events_in_scope_count_towards_a_subscribers_lag() {
        let hub = EventHub::default();
        let mut quiet = follow(&hub, None, "/1000/1001/", false);
        let mut quiet_parent = follow(&hub, None, "/1000/", false);
        let mut noisy = follow(&hub, None, "/1000/1002/", true);
        for i in 0..=2 * LAG {
            hub.publish("/1000/1002/", vec![device(&i.to_string())]);
        }
        hub.publish("/1000/1001/", vec![device("mine")]);
        hub.publish("/1000/", vec![device("parent's")]);
        assert_eq!(device_id(&next(&mut quiet).await.unwrap()), "mine");
        assert_eq!(
            device_id(&next(&mut quiet_parent).await.unwrap()),
            "parent's"
        );
        assert_eq!(next(&mut noisy).await.unwrap_err(), End::Lagged);
    }

    #[tokio::test]
    async fn closing_the_hub_ends_every_stream() {
        let hub = EventHub::default();
        hub.publish("/1000/", vec![device("a")]);
        let mut open = follow(&hub, None, "/1000/", true);
        let waiting = tokio::spawn(async move { open.next().await.map(|e| e.id) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        hub.close();
        let ended = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("ended in time")
            .expect("task");
        assert_eq!(ended, Err(End::ShuttingDown));
        // A stream opened afterwards ends at once, even with a backlog to send.
        let mut late = follow(&hub, Some(0), "/1000/", true);
        assert_eq!(next(&mut late).await.unwrap_err(), End::ShuttingDown);
    }

    #[test]
    fn accept_and_last_event_id() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (k, v) in pairs {
                map.insert(*k, HeaderValue::from_static(v));
            }
            map
        };
        assert!(accepts_event_stream(&headers(&[])));
        assert!(accepts_event_stream(&headers(&[(
            "accept",
            "text/event-stream"
        )])));
        assert!(accepts_event_stream(&headers(&[("accept", "*/*")])));
        assert!(accepts_event_stream(&headers(&[(
            "accept",
            "application/json, text/*;q=0.5"
        )])));
        assert!(!accepts_event_stream(&headers(&[(
            "accept",
            "application/json"
        )])));
        assert!(!accepts_event_stream(&headers(&[(
            "accept",
            "text/event-stream;q=0"
        )])));

        assert_eq!(last_event_id(&headers(&[])).unwrap(), None);
        assert_eq!(
            last_event_id(&headers(&[("last-event-id", " ")])).unwrap(),
            None
        );
        assert_eq!(
            last_event_id(&headers(&[("last-event-id", "42")])).unwrap(),
            Some(42)
        );
        for bad in ["-1", "abc", "1.5", "99999999999999999999999"] {
            let map = {
                let mut map = HeaderMap::new();
                map.insert("last-event-id", HeaderValue::from_static(bad));
                map
            };
            assert!(last_event_id(&map).is_err(), "{bad}");
        }
    }
}
