//! The HTTP/1.1 accept loop under `app::serve`, in place of plain `axum::serve`, so an
//! idle or slow client cannot hold descriptors for ever:
//!
//! - a connection must send a request's headers within `header_read_timeout` of opening or
//!   of its previous response (hyper's timer, so partial headers count too);
//! - a connection with no request in flight for `idle_timeout` is closed (a request is in
//!   flight until its response body has been sent, so a live event stream never is idle);
//! - a request's whole body must arrive within `body_read_timeout` of its headers
//!   (`body_deadline`): past it the reader gets a 408 and the connection closes after the
//!   answer, so a trickling body cannot hold its slot (a request without a body, such as
//!   a stream, has no deadline);
//! - at most `max_connections` are served at once: without a free slot the loop stops
//!   accepting and the kernel's listen backlog holds the rest.
//!
//! With `--tls-cert`/`--tls-key` (`tls`) every connection is a TLS handshake first, which
//! must end within `header_read_timeout` of the accept, in the connection's own task (a
//! slow handshake never holds the loop up) and holding its slot.
//!
//! Shutdown is axum's: stop accepting, let every connection finish its request in flight
//! (`graceful_shutdown`), return when the last one has closed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Request, header};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tower::ServiceExt;

mod body_deadline;
mod tls;

pub use body_deadline::{BodyTimeout, body_timeout};
use body_deadline::{DeadlineBody, Expired};
pub use tls::{DirectTls, Tls};

/// How long the loop waits after an accept error such as EMFILE (no descriptor left)
/// before trying again: the error repeats until a connection closes, and retrying at
/// once would spin a core.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Connections the kernel holds for us while every slot is taken (capped by
/// `net.core.somaxconn`); the default of 128 would leave clients past it retransmitting
/// their SYN for seconds.
const LISTEN_BACKLOG: u32 = 1024;

/// Binds a listener with a backlog that can hold what waits for a free connection slot.
pub fn bind(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if address.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The connection timeouts and cap (`--header-read-timeout-seconds`,
/// `--idle-timeout-seconds`, `--body-read-timeout-seconds`, `--max-connections`).
#[derive(Debug, Clone, Copy)]
pub struct ServeConfig {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    /// A request's whole body must arrive within this of its headers.
    pub body_read_timeout: Duration,
    /// 0: sized from the file-descriptor limit (`connection_cap`).
    pub max_connections: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 0,
        }
    }
}

impl ServeConfig {
    /// The cap in force: the configured one, else sized from the current soft limit.
    pub fn connection_cap(&self) -> usize {
        let cap = match self.max_connections {
            0 => connection_cap_for(descriptor_limits().map_or(1024, |l| l.soft)),
            n => n,
        };
        // `Semaphore::acquire_many` (with which shutdown waits for the last connection) takes a u32.
        cap.min(u32::MAX as usize)
    }
}

/// The process's file-descriptor limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptorLimits {
    pub soft: u64,
    pub hard: u64,
}

fn descriptor_limits() -> Option<DescriptorLimits> {
    rlimit::getrlimit(rlimit::Resource::NOFILE)
        .ok()
        .map(|(soft, hard)| DescriptorLimits { soft, hard })
}

/// Raises the soft file-descriptor limit to the hard one (the soft default, often 1,024,
/// is what idle clients exhausted); answers the limits before and after.
pub fn raise_descriptor_limit() -> std::io::Result<(DescriptorLimits, DescriptorLimits)> {
    let (soft, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE)?;
    let before = DescriptorLimits { soft, hard };
    rlimit::increase_nofile_limit(hard)?;
    let after = descriptor_limits().unwrap_or(before);
    Ok((before, after))
}

/// Client connections for a soft descriptor limit: the rest — at least 256, or a quarter
/// of a large limit — stays for the database pool (16 at most), outbound webhook, SMTP and
/// Twilio connections (one per attempt in flight, ~100 with the default delivery flags),
/// the SQLite files and the runtime's own; a small limit is shared half and half.
pub fn connection_cap_for(soft_limit: u64) -> usize {
    let reserve = (soft_limit / 4).max(256);
    let cap = soft_limit
        .saturating_sub(reserve)
        .max(soft_limit / 2)
        .max(1);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// Serves `router` on `listener` (HTTPS only, with `tls`) until `shutdown` turns true (or
/// its sender is dropped), then waits for the connections to finish their requests in
/// flight.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: ServeConfig,
    cap: usize,
    tls: Option<Tls>,
    mut shutdown: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(cap));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout)
        .keep_alive(true);
    let builder = Arc::new(builder);
    loop {
        // A free slot first: without one, nothing more is accepted (the backlog waits).
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        let (stream, remote) = tokio::select! {
            accepted = accept(&listener) => accepted,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        let connection = Connection {
            remote,
            router: router.clone(),
            builder: builder.clone(),
            config,
            shutdown: shutdown.clone(),
            _slot: permit,
        };
        match &tls {
            None => tokio::spawn(connection.serve(stream, None)),
            Some(tls) => tokio::spawn(connection.serve_tls(stream, tls.clone())),
        };
    }
    drop(listener);
    // Every connection holds a slot until it has closed.
    let _ = slots.acquire_many(cap as u32).await;
}

/// The next connection; accept errors are logged and retried (after a pause when the
/// process is out of descriptors or memory).
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            // The client gave up between SYN and accept: nothing of ours is wrong.
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                tracing::warn!(error = %e, "accept failed; retrying shortly");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}

/// An accepted connection, holding its slot until it has closed.
struct Connection {
    remote: SocketAddr,
    router: Router,
    builder: Arc<hyper::server::conn::http1::Builder>,
    config: ServeConfig,
    shutdown: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
}

impl Connection {
    /// The TLS handshake, within the header-read timeout (and given up at shutdown), then
    /// HTTP over it; a client that speaks no TLS (plain HTTP to this port) is closed
    /// unanswered.
    async fn serve_tls(mut self, stream: TcpStream, tls: Tls) {
        let handshake = tls.acceptor().accept(stream);
        let timeout = self.config.header_read_timeout;
        let stream = tokio::select! {
            done = tokio::time::timeout(timeout, handshake) => match done {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, remote = %self.remote, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(remote = %self.remote, "TLS handshake timed out");
                    return;
                }
            },
            _ = self.shutdown.wait_for(|stop| *stop) => return,
        };
        self.serve(stream, Some(DirectTls)).await;
    }

    async fn serve<S>(self, stream: S, tls: Option<DirectTls>)
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let Self {
            remote,
            router,
            builder,
            config,
            shutdown,
            _slot,
        } = self;
        serve_connection(stream, remote, router, builder, config, shutdown, tls).await;
    }
}

async fn serve_connection<S>(
    stream: S,
    remote: SocketAddr,
    router: Router,
    builder: Arc<hyper::server::conn::http1::Builder>,
    config: ServeConfig,
    mut shutdown: watch::Receiver<bool>,
    tls: Option<DirectTls>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (in_flight, activity) = watch::channel(0usize);
    let in_flight = Arc::new(in_flight);
    let body_limit = config.body_read_timeout;
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let guard = InFlight::start(in_flight.clone());
        let expired = Expired::default();
        let mut request =
            request.map(|body| Body::new(DeadlineBody::new(body, body_limit, expired.clone())));
        request.extensions_mut().insert(ConnectInfo(remote));
        if let Some(tls) = tls {
            request.extensions_mut().insert(tls);
        }
        let router = router.clone();
        async move {
            let mut response = router.oneshot(request).await?;
            if expired.get() {
                // The rest of the body is never read: this answer is the connection's last.
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            Ok::<_, Infallible>(response.map(|body| Tracked {
                body,
                _guard: guard,
            }))
        }
    });
    let connection = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let mut connection = pin!(connection);
    let mut idle = pin!(idle_for(activity, config.idle_timeout));
    let mut closing = false;
    loop {
        tokio::select! {
            served = connection.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!(error = %e, %remote, "connection ended with an error");
                }
                break;
            }
            _ = shutdown.wait_for(|stop| *stop), if !closing => {
                connection.as_mut().graceful_shutdown();
                closing = true;
            }
            () = &mut idle, if !closing => {
                connection.as_mut().graceful_shutdown();
                closing = true;
            }
        }
    }
}

/// Resolves once the connection has had no request in flight for `timeout` on end.
async fn idle_for(mut activity: watch::Receiver<usize>, timeout: Duration) {
    loop {
        let in_flight = *activity.borrow_and_update();
        if in_flight > 0 {
            if activity.changed().await.is_err() {
                return std::future::pending().await;
            }
            continue;
        }
        // Any request starting (or ending) in the meantime starts the wait over.
        tokio::select! {
            () = tokio::time::sleep(timeout) => return,
            changed = activity.changed() => {
                if changed.is_err() {
                    return std::future::pending().await;
                }
            }
        }
    }
}

/// A request in flight on its connection, from its headers until its response body has
/// been sent (or dropped).
struct InFlight(Arc<watch::Sender<usize>>);

impl InFlight {
    fn start(count: Arc<watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        Self(count)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A response body that keeps its request in flight until hyper is done with it.
struct Tracked {
    body: Body,
    _guard: InFlight,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_descriptors_for_the_rest() {
        assert_eq!(connection_cap_for(1024), 768);
        assert_eq!(connection_cap_for(65_536), 49_152);
        // A small limit is shared: half for clients.
        assert_eq!(connection_cap_for(300), 150);
        assert_eq!(connection_cap_for(1), 1);
        assert!(connection_cap_for(u64::MAX) > 0);
    }

    #[test]
    fn a_configured_cap_is_kept() {
        let config = ServeConfig {
            max_connections: 7,
            ..ServeConfig::default()
        };
        assert_eq!(config.connection_cap(), 7);
        assert!(ServeConfig::default().connection_cap() >= 1);
    }

    /// Real time (the crate's tokio has no paused clock), with margins of a second.
    #[tokio::test]
    async fn idle_means_nothing_in_flight_for_the_whole_timeout() {
        let ms = Duration::from_millis;
        let (count, activity) = watch::channel(0usize);
        let count = Arc::new(count);
        let request = InFlight::start(count.clone());
        let idle = tokio::spawn(idle_for(activity, ms(2000)));
        // In flight past the timeout: not idle.
        tokio::time::sleep(ms(3000)).await;
        assert!(!idle.is_finished());
        // The wait starts when the request ends; a request in between starts it over.
        drop(request);
        tokio::time::sleep(ms(800)).await;
        drop(InFlight::start(count.clone()));
        tokio::time::sleep(ms(800)).await;
        assert!(!idle.is_finished());
        tokio::time::timeout(ms(10_000), idle)
            .await
            .expect("idle in the end")
            .expect("no panic");
    }
}
