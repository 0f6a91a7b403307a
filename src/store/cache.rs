//! In-process read cache for hot records (tenants, users by id).
//!
//! Enabled only on SQLite, where this process is the database's only writer: every write
//! goes through the `Store`, which updates or drops the entry in the same call, so a read
//! never sees a stale record. On PostgreSQL several processes share the database and no
//! process could know about another's writes, so the cache is off there.
//!
//! Why it exists: an SQLite query through sqlx costs tens of microseconds of thread
//! hand-offs, which dominated authenticated reads (see bench/README.md).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::RwLock;

/// Most entries kept; past this the cache starts over (a bound, not an LRU).
const CAPACITY: usize = 100_000;

pub struct RecordCache<K, V> {
    enabled: bool,
    entries: RwLock<HashMap<K, V>>,
}

impl<K: Eq + Hash, V: Clone> RecordCache<K, V> {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            entries: RwLock::new(HashMap::new()),
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        if !self.enabled {
            return None;
        }
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }

    pub fn put(&self, key: K, value: V) {
        if !self.enabled {
            return;
        }
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key, value);
    }

    pub fn remove(&self, key: &K) {
        if self.enabled {
            self.entries
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(key);
        }
    }

    /// Keeps the entries `keep` answers true for (it may change them).
    pub fn retain(&self, keep: impl FnMut(&K, &mut V) -> bool) {
        if self.enabled {
            self.entries
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .retain(keep);
        }
    }

    pub fn clear(&self) {
        if self.enabled {
            self.entries
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
    }
}
