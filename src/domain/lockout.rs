//! Account lockout after repeated failed logins (docs/api.md, "Access").
//!
//! Failures are counted per account *and client address*: `threshold` failures from one
//! address within `window` lock the account for that address only, for `duration`. A
//! stranger who knows someone's e-mail can lock only themselves out; the owner, from
//! their own address, still gets in (docs/decisions.md). The account keeps a summary of
//! all its failures for display (`account_after_failure`).
//!
//! An attempt takes its place in the window *before* its password is verified (`admit`),
//! counted as a failure until it turns out right (`after_success` gives back that one
//! place, never another attempt's): however many arrive at once, at most `threshold`
//! passwords are verified per address and window. A locked address allows one more
//! verification per lock (the probe), so the owner's right password learns of the lock.

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

/// The login bookkeeping of one user (account summary) or one of its client addresses,
/// as stored. `pending` and `probed_at` are kept per address only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoginState {
    /// Failures in the window; per address including the attempts being verified.
    pub failed_count: i32,
    pub window_start: Option<Timestamp>,
    pub last_lockout: Option<Timestamp>,
    /// Attempts admitted and not yet verified.
    pub pending: i32,
    /// The lock (its `last_lockout`) whose one verification has been taken.
    pub probed_at: Option<Timestamp>,
}

/// What an attempt from a client address may do, decided before any password is verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Verify the password; the attempt holds a place in the window that began then.
    Verify { window: Timestamp },
    /// Locked until `until`; this attempt is the lock's one verification. A right
    /// password is told it is locked, a wrong one is an ordinary failure.
    Probe { until: Timestamp },
    /// Verify nothing: every place of the window is taken, or the lock was probed.
    Refuse { locked_until: Option<Timestamp> },
}

impl LockoutPolicy {
    /// When locked, the instant the lock ends.
    pub fn locked_until(&self, state: &LoginState, now: Timestamp) -> Option<Timestamp> {
        let until = state.last_lockout?.checked_add(self.duration).ok()?;
        (until > now).then_some(until)
    }

    /// Whether a new attempt at `now` may verify a password, and the address's state
    /// with its place taken.
    pub fn admit(&self, state: &LoginState, now: Timestamp) -> (Admission, LoginState) {
        if let Some(until) = self.locked_until(state, now) {
            let probed = state
                .probed_at
                .is_some_and(|at| state.last_lockout.is_some_and(|lock| at >= lock));
            if probed {
                return (
                    Admission::Refuse {
                        locked_until: Some(until),
                    },
                    state.clone(),
                );
            }
            // The probe names the lock it took, not its own clock: an attempt whose `now`
            // was read before the lock was written (it waited for a core or the row) must
            // not look as if it came before the lock and let a second probe through.
            let probing = LoginState {
                probed_at: state.last_lockout,
                ..state.clone()
            };
            return (Admission::Probe { until }, probing);
        }
        let fresh = match state.window_start {
            None => true,
            Some(start) => {
                now.duration_since(start) >= self.window
                    // A lock that has run out starts a fresh window.
                    || state.last_lockout.is_some_and(|lock| lock >= start)
            }
        };
        if fresh {
            let admitted = LoginState {
                failed_count: 1,
                window_start: Some(now),
                pending: 1,
                ..state.clone()
            };
            return (Admission::Verify { window: now }, admitted);
        }
        match state.window_start {
            Some(window) if state.failed_count < self.threshold as i32 => {
                let admitted = LoginState {
                    failed_count: state.failed_count + 1,
                    pending: state.pending + 1,
                    ..state.clone()
                };
                (Admission::Verify { window }, admitted)
            }
            _ => (Admission::Refuse { locked_until: None }, state.clone()),
        }
    }

    /// The address's state once an attempt admitted in `window` proved wrong at `now`: it
    /// stays counted, and the failure that completes the threshold locks. An attempt
    /// whose window has since been replaced changes nothing here.
    pub fn after_failure(
        &self,
        state: &LoginState,
        window: Timestamp,
        now: Timestamp,
    ) -> LoginState {
        if state.window_start != Some(window) || state.pending <= 0 {
            return state.clone();
        }
        let pending = state.pending - 1;
        let locked_in_window = state.last_lockout.is_some_and(|lock| lock >= window);
        let last_lockout =
            if state.failed_count - pending >= self.threshold as i32 && !locked_in_window {
                Some(now)
            } else {
                state.last_lockout
            };
        LoginState {
            pending,
            last_lockout,
            ..state.clone()
        }
    }

    /// The address's state once an attempt admitted in `window` proved right: its own
    /// place is given back; failures of other attempts, before or during, stay.
    pub fn after_success(&self, state: &LoginState, window: Timestamp) -> LoginState {
        if state.window_start != Some(window) || state.pending <= 0 {
            return state.clone();
        }
        LoginState {
            failed_count: state.failed_count - 1,
            pending: state.pending - 1,
            ..state.clone()
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
            ..LoginState::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    /// One attempt admitted and verified wrong at `at`.
    fn fail(policy: &LockoutPolicy, s: &LoginState, at: Timestamp) -> LoginState {
        let (admission, s) = policy.admit(s, at);
        let Admission::Verify { window } = admission else {
            panic!("not admitted: {admission:?}");
        };
        policy.after_failure(&s, window, at)
    }

    #[test]
    fn locks_on_fifth_failure_within_window_and_unlocks_later() {
        let policy = LockoutPolicy::default();
        let t0 = t0();
        let mut s = LoginState::default();
        for i in 0..4 {
            s = fail(&policy, &s, t0 + SignedDuration::from_mins(i));
            assert!(
                policy
                    .locked_until(&s, t0 + SignedDuration::from_mins(i))
                    .is_none()
            );
        }
        let t5 = t0 + SignedDuration::from_mins(5);
        s = fail(&policy, &s, t5);
        assert_eq!((s.failed_count, s.pending), (5, 0));
        assert_eq!(s.last_lockout, Some(t5));
        assert!(
            policy
                .locked_until(&s, t5 + SignedDuration::from_mins(14))
                .is_some()
        );
        let later = t5 + SignedDuration::from_mins(16);
        assert!(policy.locked_until(&s, later).is_none());
        let s = fail(&policy, &s, later);
        assert_eq!(s.failed_count, 1);
        assert_eq!(s.window_start, Some(later));
    }

    #[test]
    fn failures_outside_the_window_start_over() {
        let policy = LockoutPolicy::default();
        let t0 = t0();
        let mut s = LoginState::default();
        for _ in 0..4 {
            s = fail(&policy, &s, t0);
        }
        let s = fail(&policy, &s, t0 + SignedDuration::from_mins(20));
        assert_eq!(s.failed_count, 1);
        assert_eq!(s.last_lockout, None);
    }

    #[test]
    fn places_are_taken_before_verifying_and_run_out_at_the_threshold() {
        let policy = LockoutPolicy::default();
        let t0 = t0();
        let mut s = LoginState::default();
        let mut windows = Vec::new();
        for _ in 0..5 {
            let (admission, next) = policy.admit(&s, t0);
            let Admission::Verify { window } = admission else {
                panic!("{admission:?}")
            };
            windows.push(window);
            s = next;
        }
        assert_eq!((s.failed_count, s.pending), (5, 5));
        // A sixth attempt while five are being verified verifies nothing.
        assert_eq!(
            policy.admit(&s, t0).0,
            Admission::Refuse { locked_until: None }
        );
        // One turns out right: it gives back its own place, nothing else.
        s = policy.after_success(&s, windows[0]);
        assert_eq!((s.failed_count, s.pending), (4, 4));
        for window in &windows[1..4] {
            s = policy.after_failure(&s, *window, t0);
        }
        assert_eq!(s.last_lockout, None);
        // The freed place is taken by the next attempt; the fifth failure locks.
        let (admission, next) = policy.admit(&s, t0);
        assert_eq!(admission, Admission::Verify { window: t0 });
        s = policy.after_failure(&next, t0, t0);
        assert_eq!(s.last_lockout, None, "one attempt is still being verified");
        s = policy.after_failure(&s, windows[4], t0);
        assert_eq!(
            (s.failed_count, s.pending, s.last_lockout),
            (5, 0, Some(t0))
        );
    }

    #[test]
    fn a_probe_with_a_clock_read_before_the_lock_is_still_the_only_one() {
        let policy = LockoutPolicy::default();
        let t0 = t0();
        let mut s = LoginState::default();
        for _ in 0..5 {
            s = fail(&policy, &s, t0 + SignedDuration::from_secs(10));
        }
        // Both attempts read their clock before the lock was written.
        let (first, s) = policy.admit(&s, t0);
        assert!(matches!(first, Admission::Probe { .. }));
        let (second, _) = policy.admit(&s, t0);
        assert!(matches!(second, Admission::Refuse { .. }), "{second:?}");
    }

    #[test]
    fn a_lock_allows_one_probe() {
        let policy = LockoutPolicy::default();
        let t0 = t0();
        let mut s = LoginState::default();
        for _ in 0..5 {
            s = fail(&policy, &s, t0);
        }
        let until = t0 + policy.duration;
        let t1 = t0 + SignedDuration::from_mins(1);
        let (admission, s) = policy.admit(&s, t1);
        assert_eq!(admission, Admission::Probe { until });
        assert_eq!(s.probed_at, Some(t0));
        let (admission, _) = policy.admit(&s, t1);
        assert_eq!(
            admission,
            Admission::Refuse {
                locked_until: Some(until)
            }
        );
        // The next lock has a probe of its own.
        let later = until + SignedDuration::from_mins(1);
        let mut s = s;
        for _ in 0..5 {
            s = fail(&policy, &s, later);
        }
        assert!(matches!(policy.admit(&s, later).0, Admission::Probe { .. }));
    }

    #[test]
    fn an_attempt_from_a_replaced_window_changes_nothing() {
        let policy = LockoutPolicy::default();
        let t0 = t0();
        let (_, s) = policy.admit(&LoginState::default(), t0);
        let later = t0 + SignedDuration::from_mins(20);
        let (_, s) = policy.admit(&s, later);
        assert_eq!((s.failed_count, s.pending), (1, 1));
        assert_eq!(policy.after_failure(&s, t0, later), s);
        assert_eq!(policy.after_success(&s, t0), s);
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
