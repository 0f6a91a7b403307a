//! Account lockout after repeated failed logins (docs/api.md, "Access").
//!
//! Failures are counted per account *and client address*: `threshold` failures from one
//! address within `window` lock the account for that address only, for `duration`. A
//! stranger who knows someone's e-mail can lock only themselves out; the owner, from
//! their own address, still gets in (docs/decisions.md). The account keeps a summary of
//! all its failures for display (`account_after_failure`).

use jiff::{SignedDuration, Timestamp};

#[derive(Debug, Clone, Copy)]
pub struct LockoutPolicy {
    /// Failures within `window` that lock the account.
    pub threshold: u32,
    pub window: SignedDuration,
    /// How long a lock lasts.
    pub duration: SignedDuration,
}

impl Default for LockoutPolicy {
    fn default() -> Self {
        Self {
            threshold: 5,
            window: SignedDuration::from_mins(15),
            duration: SignedDuration::from_mins(15),
        }
    }
}

/// The login bookkeeping of one user, as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoginState {
    pub failed_count: i32,
    pub window_start: Option<Timestamp>,
    pub last_lockout: Option<Timestamp>,
}

impl LockoutPolicy {
    /// When locked, the instant the lock ends.
    pub fn locked_until(&self, state: &LoginState, now: Timestamp) -> Option<Timestamp> {
        let until = state.last_lockout?.checked_add(self.duration).ok()?;
        (until > now).then_some(until)
    }

    /// The state after one more failed attempt at `now`.
    pub fn after_failure(&self, state: &LoginState, now: Timestamp) -> LoginState {
        let window_open = state.window_start.is_some_and(|start| {
            now.duration_since(start) < self.window
                // A lock that has run out starts a fresh window.
                && !(state.failed_count >= self.threshold as i32
                    && self.locked_until(state, now).is_none())
        });
        let (failed_count, window_start) = if window_open {
            (state.failed_count.saturating_add(1), state.window_start)
        } else {
            (1, Some(now))
        };
        let last_lockout = if failed_count == self.threshold as i32 {
            Some(now)
        } else {
            state.last_lockout
        };
        LoginState {
            failed_count,
            window_start,
            last_lockout,
        }
    }
}

impl LockoutPolicy {
    /// The account-wide summary after a failure from any address: failures within a
    /// rolling window, and `last_lockout` = when an address last got locked (`client_locked`).
    pub fn account_after_failure(
        &self,
        account: &LoginState,
        client_locked: Option<Timestamp>,
        now: Timestamp,
    ) -> LoginState {
        let window_open = account
            .window_start
            .is_some_and(|start| now.duration_since(start) < self.window);
        let (failed_count, window_start) = if window_open {
            (account.failed_count.saturating_add(1), account.window_start)
        } else {
            (1, Some(now))
        };
        LoginState {
            failed_count,
            window_start,
            last_lockout: client_locked.or(account.last_lockout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_on_fifth_failure_within_window_and_unlocks_later() {
        let policy = LockoutPolicy::default();
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let mut s = LoginState::default();
        for i in 0..4 {
            s = policy.after_failure(&s, t0 + SignedDuration::from_mins(i));
            assert!(
                policy
                    .locked_until(&s, t0 + SignedDuration::from_mins(i))
                    .is_none()
            );
        }
        let t5 = t0 + SignedDuration::from_mins(5);
        s = policy.after_failure(&s, t5);
        assert_eq!(s.failed_count, 5);
        assert_eq!(s.last_lockout, Some(t5));
        assert!(
            policy
                .locked_until(&s, t5 + SignedDuration::from_mins(14))
                .is_some()
        );
        let later = t5 + SignedDuration::from_mins(16);
        assert!(policy.locked_until(&s, later).is_none());
        let s = policy.after_failure(&s, later);
        assert_eq!(s.failed_count, 1);
    }

    #[test]
    fn failures_outside_the_window_start_over() {
        let policy = LockoutPolicy::default();
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let mut s = LoginState::default();
        for _ in 0..4 {
            s = policy.after_failure(&s, t0);
        }
        let s = policy.after_failure(&s, t0 + SignedDuration::from_mins(20));
        assert_eq!(s.failed_count, 1);
        assert_eq!(s.last_lockout, None);
    }

    #[test]
    fn the_account_summary_counts_every_address_and_records_locks() {
        let policy = LockoutPolicy::default();
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let mut account = LoginState::default();
        for i in 0..7 {
            account =
                policy.account_after_failure(&account, None, t0 + SignedDuration::from_secs(i));
        }
        assert_eq!(account.failed_count, 7);
        assert_eq!(account.last_lockout, None);
        let t1 = t0 + SignedDuration::from_mins(1);
        account = policy.account_after_failure(&account, Some(t1), t1);
        assert_eq!((account.failed_count, account.last_lockout), (8, Some(t1)));
        let later = t0 + SignedDuration::from_mins(20);
        account = policy.account_after_failure(&account, None, later);
        assert_eq!(
            (account.failed_count, account.window_start),
            (1, Some(later))
        );
        assert_eq!(account.last_lockout, Some(t1));
    }
}
