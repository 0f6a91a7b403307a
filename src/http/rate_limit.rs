//! Per-client rate limiting of /V2 requests (429 with `Retry-After`). Off unless
//! `--rate-limit-per-second` is set. Keyed by `ClientAddress` (behind a reverse proxy,
//! name it with `--trusted-proxy`, or every client shares the proxy's address).
//!
//! The table of addresses is pruned every minute of the addresses whose limit has fully
//! recovered (they are let through exactly as if never seen), so its memory is bounded
//! by the clients active lately, not by every address that ever called.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

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
        let limiter = Self(Arc::new(RateLimiter::keyed(quota)));
        limiter.prune_in_background();
        Some(limiter)
    }

    /// Forgets the addresses whose limit has fully recovered.
    pub fn prune(&self) {
        self.0.retain_recent();
        self.0.shrink_to_fit();
    }

    /// Addresses in the table.
    pub fn tracked(&self) -> usize {
        self.0.len()
    }

    /// Prunes every `PRUNE_EVERY` for as long as the limiter lives (outside a runtime,
    /// e.g. in a plain unit test, nothing is spawned).
    fn prune_in_background(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let limiter = Arc::downgrade(&self.0);
        runtime.spawn(async move {
            let mut tick = tokio::time::interval(PRUNE_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tick.tick().await;
                let Some(limiter) = limiter.upgrade() else {
                    return;
                };
                Self(limiter).prune();
            }
        });
    }
}

const PRUNE_EVERY: Duration = Duration::from_secs(60);

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_forgets_the_clients_whose_limit_recovered() {
        let limiter = ClientLimiter::new(RateLimit {
            per_second: 1000,
            burst: 1000,
        })
        .unwrap();
        for i in 0..=255u8 {
            let ip = IpAddr::from([10, 0, 0, i]);
            assert!(limiter.0.check_key(&ip).is_ok());
        }
        assert_eq!(limiter.tracked(), 256);
        // A client still paying off a burst is kept: forgetting it would refill its burst.
        let busy = IpAddr::from([10, 0, 1, 1]);
        while limiter.0.check_key(&busy).is_ok() {}
        // One request recovers in 1 ms; the whole burst of the busy one in a second.
        std::thread::sleep(Duration::from_millis(20));
        limiter.prune();
        assert_eq!(limiter.tracked(), 1);
        let allowed = (0..1000)
            .take_while(|_| limiter.0.check_key(&busy).is_ok())
            .count();
        assert!(
            allowed < 500,
            "the busy client's burst came back: {allowed}"
        );
    }
}
