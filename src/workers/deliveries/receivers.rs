//! What the delivery worker knows of its receivers: which could not be reached (until
//! one answers), and which URLs have slow attempts running.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Attempted, Heard};
use crate::domain::delivery::Receiver;

/// Receivers this process could not reach, until one answers: that attempt releases its
/// receiver's waiting retries, once per outage. A receiver this process has not seen
/// down (it started since, or another process made the failing attempts) is not
/// released: its retries keep their own times.
#[derive(Default, Clone)]
pub(super) struct Outages(Arc<Mutex<HashSet<Receiver>>>);

impl Outages {
    /// Notes that `receiver`'s deliveries were held back: the next attempt to it that
    /// goes through releases them with its waiting retries.
    pub(super) fn held_back(&self, receiver: Receiver) {
        let mut down = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        down.insert(receiver);
    }

    /// Notes what `attempts` say of their receivers; returns those that are back.
    pub(super) fn hear(&self, attempts: &[Attempted]) -> Vec<Receiver> {
        let mut down = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut back = Vec::new();
        for a in attempts {
            match a.heard {
                Heard::Unreachable => {
                    down.insert(a.receiver.clone());
                }
                Heard::Answered => {
                    if down.remove(&a.receiver) {
                        back.push(a.receiver.clone());
                    }
                }
                Heard::Nothing => {}
            }
        }
        back
    }
}

/// Slow webhook attempts by URL (how many, and since when the URL has had any), shared
/// by a worker's loops and its background tasks.
#[derive(Default, Clone)]
pub(super) struct SlowAttempts(Arc<Mutex<HashMap<String, (usize, Instant)>>>);

impl SlowAttempts {
    /// Counts an attempt to `url` until the returned slot is dropped.
    pub(super) fn enter(&self, url: String) -> UrlSlot {
        self.lock()
            .entry(url.clone())
            .or_insert_with(|| (0, Instant::now()))
            .0 += 1;
        // Across the process's workers: a receiver hanging shows here first.
        metrics::gauge!("safetrack_delivery_slow_attempts").increment(1.0);
        UrlSlot {
            urls: self.clone(),
            url,
        }
    }

    /// The URLs with at least `limit` slow attempts.
    pub(super) fn at_least(&self, limit: usize) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, (n, _))| *n >= limit)
            .map(|(url, _)| url.clone())
            .collect()
    }

    /// How long the longest of `urls` has had slow attempts without a break.
    pub(super) fn slow_for(&self, urls: &[String]) -> Duration {
        let counts = self.lock();
        urls.iter()
            .filter_map(|url| counts.get(url))
            .map(|(_, since)| since.elapsed())
            .max()
            .unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (usize, Instant)>> {
        // A panic while counting leaves the counts usable.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One slow attempt to a URL, counted until dropped.
pub(super) struct UrlSlot {
    urls: SlowAttempts,
    url: String,
}

impl Drop for UrlSlot {
    fn drop(&mut self) {
        metrics::gauge!("safetrack_delivery_slow_attempts").decrement(1.0);
        let mut counts = self.urls.lock();
        if let Some((n, _)) = counts.get_mut(&self.url) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(&self.url);
            }
        }
    }
}
