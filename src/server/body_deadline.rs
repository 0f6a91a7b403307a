//! The request body's deadline (`--body-read-timeout-seconds`): the whole body must have
//! arrived within it of the request's headers. One deadline for the whole body, not a
//! timer per frame, so a body trickling a byte a second cannot stretch it. A request
//! without a body (a `GET`, a live event stream) has no deadline.
//!
//! Past the deadline the body answers [`BodyTimeout`] to whoever reads it (the handler's
//! extractor answers 408), and the connection is marked to close after its response: the
//! rest of the body will never be read, and the slot goes to the next client.

use std::error::Error;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use http_body::Body as _;
use hyper::body::{Frame, Incoming, SizeHint};
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn Error + Send + Sync>;

/// The request body did not arrive within its deadline.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the request body did not arrive within {} s of its headers", .limit.as_secs_f64())]
pub struct BodyTimeout {
    pub limit: Duration,
}

/// The [`BodyTimeout`] somewhere in `error`'s chain of sources (a body error reaches a
/// handler wrapped in the extractor's rejection and axum's errors).
pub fn body_timeout(error: &(dyn Error + 'static)) -> Option<BodyTimeout> {
    std::iter::successors(Some(error), |&e| e.source())
        .find_map(|e| e.downcast_ref::<BodyTimeout>())
        .copied()
}

/// Whether a request's body ran past its deadline; shared between the body and the
/// connection that answers for it.
#[derive(Debug, Clone, Default)]
pub(super) struct Expired(Arc<AtomicBool>);

impl Expired {
    pub(super) fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// A request body that must end within `limit` of its headers.
pub(super) struct DeadlineBody {
    inner: Incoming,
    /// Until the body has ended (none for a request without a body).
    deadline: Option<Pin<Box<Sleep>>>,
    limit: Duration,
    expired: Expired,
}

impl DeadlineBody {
    /// Starts the deadline now (when the headers have been read).
    pub(super) fn new(inner: Incoming, limit: Duration, expired: Expired) -> Self {
        let deadline = (!inner.is_end_stream()).then(|| Box::pin(tokio::time::sleep(limit)));
        Self {
            inner,
            deadline,
            limit,
            expired,
        }
    }

    fn timed_out(&mut self) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if !self.expired.get() {
            tracing::debug!(
                limit_s = self.limit.as_secs_f64(),
                "request body past its deadline"
            );
        }
        self.expired.set();
        self.deadline = None;
        Poll::Ready(Some(Err(Box::new(BodyTimeout { limit: self.limit }))))
    }
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.expired.get() {
            return this.timed_out();
        }
        // Checked before each frame too: a body arriving steadily but too slowly may never
        // leave the reader waiting.
        if let Some(deadline) = &this.deadline
            && Instant::now() >= deadline.deadline()
        {
            return this.timed_out();
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Pending => match this.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => this.timed_out(),
                _ => Poll::Pending,
            },
            Poll::Ready(frame) => {
                if frame.is_none() || this.inner.is_end_stream() {
                    this.deadline = None;
                }
                Poll::Ready(frame.map(|f| f.map_err(BoxError::from)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_found_however_deeply_it_is_wrapped() {
        let timeout = BodyTimeout {
            limit: Duration::from_secs(3),
        };
        let wrapped = axum::Error::new(axum::Error::new(Box::new(timeout) as BoxError));
        assert_eq!(
            body_timeout(&wrapped).map(|t| t.limit),
            Some(Duration::from_secs(3))
        );
        let other = axum::Error::new(std::io::Error::other("reset"));
        assert!(body_timeout(&other).is_none());
        assert_eq!(
            timeout.to_string(),
            "the request body did not arrive within 3 s of its headers"
        );
    }
}
