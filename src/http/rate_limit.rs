//! Per-client rate limiting of /V2 requests (429 with `Retry-After`). Off unless
//! `--rate-limit-per-second` is set. Keyed by `ClientAddress` (behind a reverse proxy,
//! name it with `--trusted-proxy`, or every client shares the proxy's address).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::client_address::ClientAddress;
use super::error::ApiError;

#[derive(Debug, Clone, Copy, Default)]
pub struct RateLimit {
    /// Sustained requests per second per client address; 0 disables limiting.
    pub per_second: u32,
    /// Requests a client may make at once above the sustained rate.
    pub burst: u32,
}

#[derive(Clone)]
pub struct ClientLimiter(Arc<DefaultKeyedRateLimiter<IpAddr>>);

impl ClientLimiter {
    pub fn new(limit: RateLimit) -> Option<Self> {
        let per_second = NonZeroU32::new(limit.per_second)?;
        let burst = NonZeroU32::new(limit.burst.max(limit.per_second)).unwrap_or(per_second);
        let quota = Quota::per_second(per_second).allow_burst(burst);
        Some(Self(Arc::new(RateLimiter::keyed(quota))))
    }
}

pub async fn rate_limit(
    State(limiter): State<ClientLimiter>,
    request: Request,
    next: Next,
) -> Response {
    let client = request
        .extensions()
        .get::<ClientAddress>()
        .map(|ClientAddress(ip)| *ip);
    if let Some(ip) = client
        && let Err(not_until) = limiter.0.check_key(&ip)
    {
        let wait = not_until.wait_time_from(DefaultClock::default().now());
        let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        return ApiError::RateLimited {
            retry_after_secs: retry_after_secs.max(1),
        }
        .into_response();
    }
    next.run(request).await
}
