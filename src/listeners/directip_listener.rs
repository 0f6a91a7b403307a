//! The Iridium SBD DirectIP MO listener (`--directip-listen`): Iridium's gateway opens a
//! connection per message and sends it in binary information elements
//! (`domain::device_protocols::directip`). The message is read as its bytes arrive, within one
//! deadline for the whole message (a connection that stalls is closed); a message that
//! can never be valid (truncated, lengths that disagree, oversize, a failed session) is
//! closed with a log line and stores nothing. A stored message — or one already stored —
//! is answered with the MO confirmation (accepted); one whose device is unknown or
//! ambiguous, with the confirmation refused. A failure to store closes the connection
//! without a confirmation, so Iridium sends the message again.
//!
//! Idle peers cannot hold the listener (issue 42): a peer outside `allow` is closed at
//! once, unread; a connection must send its first byte within `first_byte_timeout`, and
//! until it has, it waits without a slot (at most `waiting_cap` of them wait at once).
//! Only then does it take one of the `max_connections` slots, and its whole message must
//! arrive within `read_timeout` of that. Past either cap, connections wait in the listen
//! backlog.
//!
//! The listener stores with the API token it was given (`--directip-token`), checked on
//! every connection like any request's: a revoked token stops it at once.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::auth::Authenticator;
use crate::domain::device_protocols::directip::{self, Frame};
use crate::listeners::allowed_source::{self, AllowedSource};
use crate::services::gateway_ingest::{self, GatewayError, GatewayIngest};

/// `--directip-*`.
#[derive(Debug, Clone)]
pub struct DirectIpConfig {
    pub listen: SocketAddr,
    pub token: String,
    pub max_connections: usize,
    /// The whole message must arrive within this of the connection taking its slot.
    pub read_timeout: Duration,
    /// A connection that sends nothing within this is closed; until its first byte it
    /// holds no slot.
    pub first_byte_timeout: Duration,
    /// The source addresses and networks served; empty: every source.
    pub allow: Vec<AllowedSource>,
}

/// Connections waiting for their first byte, at most: four per slot, and never fewer
/// than this, so a burst of silent peers does not keep real messages in the backlog for
/// long (each waits `first_byte_timeout` at most).
const MIN_WAITING: usize = 256;

/// Connections allowed to wait for their first byte at once.
pub fn waiting_cap(max_connections: usize) -> usize {
    max_connections.saturating_mul(4).max(MIN_WAITING)
}

/// What every connection needs.
struct Shared {
    token: String,
    read_timeout: Duration,
    first_byte_timeout: Duration,
    allow: Vec<AllowedSource>,
    auth: Arc<Authenticator>,
    service: GatewayIngest,
    /// Slots for connections that have sent their first byte.
    slots: Arc<Semaphore>,
}

/// Serves `listener` until `stopped` turns true. Connections in progress finish on their own.
pub async fn serve(
    listener: TcpListener,
    config: DirectIpConfig,
    auth: Arc<Authenticator>,
    service: GatewayIngest,
    mut stopped: watch::Receiver<bool>,
) {
    let max_connections = config.max_connections.max(1);
    let waiting = Arc::new(Semaphore::new(waiting_cap(max_connections)));
    let shared = Arc::new(Shared {
        token: config.token,
        read_timeout: config.read_timeout,
        first_byte_timeout: config.first_byte_timeout,
        allow: config.allow,
        auth,
        service,
        slots: Arc::new(Semaphore::new(max_connections)),
    });
    loop {
        // A place to wait for the first byte: past the cap, connections wait in the backlog.
        let waiting = tokio::select! {
            permit = waiting.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
            _ = stopped.wait_for(|stop| *stop) => return,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.wait_for(|stop| *stop) => return,
        };
        match accepted {
            Ok((stream, peer)) if allowed_source::admits(&shared.allow, peer.ip()) => {
                tokio::spawn(admit(shared.clone(), stream, peer, waiting));
            }
            Ok((stream, peer)) => {
                // Closed unread: nothing from it is logged but its address.
                drop(stream);
                tracing::warn!(gateway = "directip", %peer, "connection refused: source not in --directip-allow");
            }
            Err(e) => {
                // Out of descriptors and the like: pause rather than spin.
                tracing::warn!(gateway = "directip", error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Waits (without a slot) for the connection's first byte, then for a slot, and serves it.
async fn admit(
    shared: Arc<Shared>,
    stream: TcpStream,
    peer: SocketAddr,
    waiting: OwnedSemaphorePermit,
) {
    let mut first = [0u8; 1];
    let silence =
        match tokio::time::timeout(shared.first_byte_timeout, stream.peek(&mut first)).await {
            Ok(Ok(0)) => Refusal::Closed(0),
            Ok(Ok(_)) => return served(&shared, stream, peer, waiting).await,
            Ok(Err(e)) => Refusal::Io(e),
            Err(_) => Refusal::Silent(shared.first_byte_timeout),
        };
    // Port checks and silent peers: nothing was sent, so only a debug line.
    tracing::debug!(gateway = "directip", %peer, error = %silence, "connection closed before its first byte");
}

/// Takes a slot (giving up the place among the waiting), and serves the connection.
async fn served(
    shared: &Shared,
    stream: TcpStream,
    peer: SocketAddr,
    waiting: OwnedSemaphorePermit,
) {
    let Ok(slot) = shared.slots.clone().acquire_owned().await else {
        return;
    };
    drop(waiting);
    handle(shared, stream, peer).await;
    drop(slot);
}

/// Why a connection ended without storing.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error("nothing sent within {0:?}")]
    Silent(Duration),
    #[error("no complete message within {0:?}")]
    Stalled(Duration),
    #[error("the connection closed after {0} bytes, before the message was complete")]
    Closed(usize),
    #[error("{0}")]
    Frame(directip::DirectIpError),
    #[error("reading: {0}")]
    Io(std::io::Error),
}

async fn handle(shared: &Shared, mut stream: TcpStream, peer: SocketAddr) {
    let bytes = match tokio::time::timeout(shared.read_timeout, read_message(&mut stream)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(refusal)) => return refused(peer, &refusal),
        Err(_) => return refused(peer, &Refusal::Stalled(shared.read_timeout)),
    };
    let report = match directip::parse_report(&bytes) {
        Ok(report) => report,
        Err(e) => return refused(peer, &Refusal::Frame(e)),
    };
    let caller = match gateway_ingest::authenticate(&shared.auth, &shared.token).await {
        Ok(caller) if caller.may_post => caller,
        Ok(_) => {
            tracing::error!(
                gateway = "directip",
                "--directip-token may not post MO messages (DeviceMessages): nothing is stored"
            );
            return;
        }
        Err(e) => {
            tracing::error!(gateway = "directip", error = %e, "--directip-token is refused: nothing is stored");
            return;
        }
    };
    let imei = report.device.id.clone();
    let outcome = shared.service.ingest(&caller, vec![report]).await;
    let accepted = match outcome.into_iter().next().map(|o| o.result) {
        Some(Ok(_)) => true,
        Some(Err(GatewayError::Store(e))) => {
            // No confirmation: Iridium sends it again.
            tracing::error!(gateway = "directip", %peer, imei, error = %e, "message not stored");
            return;
        }
        Some(Err(e)) => {
            tracing::warn!(gateway = "directip", %peer, imei, error = %e, "message refused");
            false
        }
        None => false,
    };
    let answer = async {
        stream.write_all(&directip::confirmation(accepted)).await?;
        stream.shutdown().await
    };
    if let Err(e) = tokio::time::timeout(shared.read_timeout, answer)
        .await
        .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
    {
        tracing::warn!(gateway = "directip", %peer, imei, error = %e, "confirmation not sent");
    }
}

fn refused(peer: SocketAddr, refusal: &Refusal) {
    tracing::warn!(gateway = "directip", %peer, error = %refusal, "connection closed: nothing stored");
}

/// The message's bytes, read as the framing says more are needed (never past its end).
async fn read_message(stream: &mut TcpStream) -> Result<Vec<u8>, Refusal> {
    let mut bytes = Vec::with_capacity(64);
    loop {
        match directip::frame_status(&bytes) {
            Frame::Complete { length } => {
                bytes.truncate(length);
                return Ok(bytes);
            }
            Frame::Invalid(e) => return Err(Refusal::Frame(e)),
            Frame::Incomplete { needed } => {
                let start = bytes.len();
                bytes.resize(start + needed, 0);
                let read = stream
                    .read(&mut bytes[start..])
                    .await
                    .map_err(Refusal::Io)?;
                bytes.truncate(start + read);
                if read == 0 {
                    return Err(Refusal::Closed(start));
                }
            }
        }
    }
}
