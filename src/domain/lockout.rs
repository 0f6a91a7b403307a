//! Account lockout after repeated failed logins (DESIGN.md §2).

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
}
