//! What happens after a delivery attempt: the outcome a channel reports, and the retry
//! policy that turns a retryable failure into the next attempt time or an expiry.
//! Pure: the clock and the jitter come in as arguments.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// No wait between attempts is longer than this.
pub const MAX_BACKOFF: Duration = Duration::from_secs(10 * 3600);
/// Jitter: each wait is the nominal one ±20 %.
pub const JITTER: f64 = 0.2;

/// What one attempt came to, as a channel sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptOutcome {
    /// Accepted by the receiver or provider (with its id for the message, if it gave one).
    Sent { provider_id: Option<String> },
    /// Worth trying again: a timeout, a refused connection, a 5xx, 408 or 429, an SMTP 4xx.
    /// `retry_after` is the receiver's own `Retry-After`, when it sent one.
    Retryable {
        error: String,
        retry_after: Option<Duration>,
    },
    /// No connection could be made to the receiver or provider at all (refused,
    /// unreachable): it is down as a whole, not failing this delivery. Retried like
    /// `Retryable`; when the receiver answers again, its waiting retries are brought
    /// forward (`Store::release_waiting_retries`). A timeout or a 5xx is `Retryable`:
    /// those can be one delivery's own (a payload the receiver chokes on), and bringing
    /// its retries forward on every other success would hammer it.
    Unreachable { error: String },
    /// Trying again cannot help: a 4xx (but 408/429), 410 on a webhook, an SMTP 5xx, a
    /// webhook URL that resolves to a refused address.
    Permanent { error: String },
    /// The channel is not configured in this process (e.g. started without `--smtp-url`).
    NotConfigured,
}

/// The settled state of a delivery after an attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Settlement {
    Sent {
        at: Timestamp,
        provider_id: Option<String>,
    },
    /// Back to `Pending`, due again at `next`.
    Retry {
        next: Timestamp,
        error: String,
    },
    Failed {
        error: String,
    },
    Expired {
        error: String,
    },
    NotConfigured,
}

/// How long retries go on, and how fast they back off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// The wait after the first failed attempt; attempt n waits initial × 4^(n−1).
    pub initial: Duration,
    /// A delivery still failing this long after it was queued expires.
    pub max_age: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(5),
            max_age: Duration::from_secs(24 * 3600),
        }
    }
}

impl RetryPolicy {
    /// The nominal wait after failed attempt `attempt` (1-based), before jitter, capped.
    pub fn nominal_wait(&self, attempt: u32) -> Duration {
        let factor = 4f64.powi(attempt.saturating_sub(1).min(30) as i32);
        let seconds = self.initial.as_secs_f64() * factor;
        Duration::from_secs_f64(seconds.min(MAX_BACKOFF.as_secs_f64()))
    }

    /// The wait after failed attempt `attempt`, `jitter` in [-1, 1] scaling the ±20 %.
    pub fn wait(&self, attempt: u32, jitter: f64) -> Duration {
        let nominal = self.nominal_wait(attempt).as_secs_f64();
        let scaled = nominal * (1.0 + JITTER * jitter.clamp(-1.0, 1.0));
        Duration::from_secs_f64(scaled.min(MAX_BACKOFF.as_secs_f64()))
    }

    /// Settles attempt number `attempt` of a delivery queued at `queued_at`, at `now`.
    /// A retryable failure waits its backoff (or the receiver's `Retry-After`, if that
    /// is longer), but never past the expiry time: the last attempt is made then, and a
    /// failure at or after it expires the delivery.
    pub fn settle(
        &self,
        outcome: AttemptOutcome,
        attempt: u32,
        queued_at: Timestamp,
        now: Timestamp,
        jitter: f64,
    ) -> Settlement {
        match outcome {
            AttemptOutcome::Sent { provider_id } => Settlement::Sent {
                at: now,
                provider_id,
            },
            AttemptOutcome::Permanent { error } => Settlement::Failed { error },
            AttemptOutcome::NotConfigured => Settlement::NotConfigured,
            AttemptOutcome::Unreachable { error } => {
                self.retry(error, None, attempt, queued_at, now, jitter)
            }
            AttemptOutcome::Retryable { error, retry_after } => {
                self.retry(error, retry_after, attempt, queued_at, now, jitter)
            }
        }
    }

    /// A retryable failure's settlement: its backoff, never past the expiry time.
    fn retry(
        &self,
        error: String,
        retry_after: Option<Duration>,
        attempt: u32,
        queued_at: Timestamp,
        now: Timestamp,
        jitter: f64,
    ) -> Settlement {
        let deadline = queued_at
            .checked_add(signed(self.max_age))
            .unwrap_or(Timestamp::MAX);
        if now >= deadline {
            return Settlement::Expired { error };
        }
        let mut wait = self.wait(attempt, jitter);
        if let Some(asked) = retry_after {
            wait = wait.max(asked.min(MAX_BACKOFF));
        }
        let next = now.checked_add(signed(wait)).unwrap_or(deadline);
        Settlement::Retry {
            next: next.min(deadline),
            error,
        }
    }
}

fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

/// A `Retry-After` header value: delay-seconds, or an HTTP date relative to `now`.
pub fn parse_retry_after(value: &str, now: Timestamp) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
    let ahead = at.duration_since(now);
    Some(Duration::try_from(ahead).unwrap_or(Duration::ZERO))
}

/// Classifies an HTTP status a receiver or provider answered: 2xx sent,
/// 408/429/5xx retryable, 410 and other 4xx permanent; anything else (1xx, 3xx — the
/// client does not follow redirects) is a permanent failure too.
pub fn classify_status(
    status: u16,
    provider_id: Option<String>,
    error: String,
    retry_after: Option<Duration>,
) -> AttemptOutcome {
    match status {
        200..=299 => AttemptOutcome::Sent { provider_id },
        408 | 429 | 500..=599 => AttemptOutcome::Retryable { error, retry_after },
        _ => AttemptOutcome::Permanent { error },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn backoff_is_initial_times_four_to_the_attempt_capped_at_ten_hours() {
        let policy = RetryPolicy::default();
        let waits: Vec<u64> = (1..=9).map(|n| policy.nominal_wait(n).as_secs()).collect();
        assert_eq!(
            waits,
            [5, 20, 80, 320, 1280, 5120, 20480, 36000, 36000],
            "5 s, 20 s, 80 s, 5 min, 21 min, 85 min, 5.7 h, 10 h, 10 h"
        );
        let fast = RetryPolicy {
            initial: Duration::from_secs(1),
            ..Default::default()
        };
        assert_eq!(fast.nominal_wait(3).as_secs(), 16);
        assert_eq!(policy.nominal_wait(1000), MAX_BACKOFF);
    }

    #[test]
    fn jitter_stays_within_twenty_percent() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.wait(2, -1.0).as_secs_f64(), 16.0);
        assert_eq!(policy.wait(2, 1.0).as_secs_f64(), 24.0);
        assert_eq!(policy.wait(2, 7.0).as_secs_f64(), 24.0, "clamped");
        assert!(policy.wait(20, 1.0) <= MAX_BACKOFF);
    }

    #[test]
    fn retryable_failures_wait_then_expire_at_the_deadline() {
        let policy = RetryPolicy::default();
        let queued = t("2026-01-01T00:00:00Z");
        let failure = || AttemptOutcome::Retryable {
            error: "503".into(),
            retry_after: None,
        };
        assert_eq!(
            policy.settle(failure(), 1, queued, t("2026-01-01T00:00:01Z"), 0.0),
            Settlement::Retry {
                next: t("2026-01-01T00:00:06Z"),
                error: "503".into()
            }
        );
        // Near the end the next attempt is the deadline itself, not past it.
        assert_eq!(
            policy.settle(failure(), 8, queued, t("2026-01-01T23:00:00Z"), 0.0),
            Settlement::Retry {
                next: t("2026-01-02T00:00:00Z"),
                error: "503".into()
            }
        );
        assert_eq!(
            policy.settle(failure(), 9, queued, t("2026-01-02T00:00:00Z"), 0.0),
            Settlement::Expired {
                error: "503".into()
            }
        );
    }

    #[test]
    fn an_unreachable_receiver_is_retried_like_any_retryable_failure() {
        let policy = RetryPolicy::default();
        let queued = t("2026-01-01T00:00:00Z");
        let at = t("2026-01-01T00:00:01Z");
        let unreachable = AttemptOutcome::Unreachable {
            error: "could not connect".into(),
        };
        let retryable = AttemptOutcome::Retryable {
            error: "could not connect".into(),
            retry_after: None,
        };
        assert_eq!(
            policy.settle(unreachable.clone(), 2, queued, at, 0.5),
            policy.settle(retryable, 2, queued, at, 0.5)
        );
        assert_eq!(
            policy.settle(unreachable, 9, queued, t("2026-01-02T00:00:00Z"), 0.0),
            Settlement::Expired {
                error: "could not connect".into()
            }
        );
    }

    #[test]
    fn retry_after_is_honoured_when_longer() {
        let policy = RetryPolicy::default();
        let queued = t("2026-01-01T00:00:00Z");
        let now = t("2026-01-01T00:00:00Z");
        let outcome = AttemptOutcome::Retryable {
            error: "429".into(),
            retry_after: Some(Duration::from_secs(120)),
        };
        assert_eq!(
            policy.settle(outcome, 1, queued, now, 0.0),
            Settlement::Retry {
                next: t("2026-01-01T00:02:00Z"),
                error: "429".into()
            }
        );
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 2026 00:01:00 GMT", now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn statuses_classify_as_the_issue_says() {
        let c = |s| classify_status(s, None, String::new(), None);
        assert!(matches!(c(200), AttemptOutcome::Sent { .. }));
        assert!(matches!(c(204), AttemptOutcome::Sent { .. }));
        for s in [408, 429, 500, 502, 503] {
            assert!(matches!(c(s), AttemptOutcome::Retryable { .. }), "{s}");
        }
        for s in [301, 400, 401, 404, 410, 422] {
            assert!(matches!(c(s), AttemptOutcome::Permanent { .. }), "{s}");
        }
    }
}
