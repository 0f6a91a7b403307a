//! Authentication: verifies HTTP Basic credentials against stored Argon2id hashes,
//! with a short-lived cache of verified credentials and lockout bookkeeping.
//!
//! The cache key is an HMAC of (username, password) under the server secret, so the
//! cache never holds a password. Entries are dropped when the user changes (password,
//! role, disable, delete) and expire after `ttl` regardless — the bound on how long
//! another process sharing a PostgreSQL database may keep serving a stale entry.
//!
//! Lockout is per account and client address (`domain::lockout`). A lock is checked
//! before the cache is consulted, so a cached credential never opens a locked door: the
//! locks this process recorded are kept in memory, and on PostgreSQL (where another
//! process may have recorded one) a cache hit also asks the database.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::access::Role;
use crate::domain::lockout::LockoutPolicy;
use crate::domain::password;
use crate::domain::time::now;
use crate::domain::user::User;
use crate::store::{Backend, Store, StoreError};

/// The authenticated caller.
#[derive(Debug, Clone)]
pub struct Principal {
    pub user_id: i64,
    pub username: String,
    pub tenant_code: String,
    /// Materialised path of the home tenant; the caller's scope is this subtree.
    pub tenant_path: String,
    pub role: Role,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("wrong username or password")]
    InvalidCredentials,
    #[error("account locked until {0}")]
    Locked(jiff::Timestamp),
    #[error("account disabled")]
    Disabled,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("internal: {0}")]
    Internal(String),
}

#[derive(Debug, Clone, Copy)]
pub struct AuthConfig {
    pub lockout: LockoutPolicy,
    pub cache_ttl: Duration,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            lockout: LockoutPolicy::default(),
            cache_ttl: Duration::from_secs(60),
        }
    }
}

struct CacheEntry {
    principal: Principal,
    expires: Instant,
}

/// Most entries a cache holds before it is swept; a bound on memory under credential stuffing.
const CACHE_CAPACITY: usize = 50_000;

pub struct Authenticator {
    store: Store,
    config: AuthConfig,
    key: Vec<u8>,
    cache: RwLock<HashMap<[u8; 32], CacheEntry>>,
    /// Credentials being verified now, so concurrent requests verify each once.
    in_flight: Mutex<HashMap<[u8; 32], Arc<tokio::sync::Mutex<()>>>>,
    /// Locks this process recorded, by (user id, client address): until when.
    locks: RwLock<HashMap<(i64, IpAddr), jiff::Timestamp>>,
}

impl Authenticator {
    pub fn new(store: Store, config: AuthConfig, secret: &[u8]) -> Self {
        Self {
            store,
            config,
            key: secret.to_vec(),
            cache: RwLock::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            locks: RwLock::new(HashMap::new()),
        }
    }

    fn cache_key(&self, username_key: &str, password: &str) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .expect("HMAC accepts keys of any length");
        mac.update(b"credential-cache\0");
        mac.update(username_key.as_bytes());
        mac.update(b"\0");
        mac.update(password.as_bytes());
        mac.finalize().into_bytes().into()
    }

    pub async fn authenticate(
        &self,
        username: &str,
        password: &str,
        client: IpAddr,
    ) -> Result<Principal, AuthError> {
        let username_key = User::username_key(username);
        let key = self.cache_key(&username_key, password);
        if let Some(principal) = self.cached(&key) {
            self.refuse_if_locked(principal.user_id, client).await?;
            return Ok(principal);
        }
        // One verification per credential at a time. When a cached credential expires
        // under load every connection misses at once, and each Argon2id check holds
        // ~19 MB: eight at once added 150 MB to the RSS of the ingest benchmark. The
        // others wait for the first and then find the credential cached.
        let flight = self.in_flight_entry(key);
        let turn = flight.lock().await;
        let result = match self.cached(&key) {
            Some(principal) => self
                .refuse_if_locked(principal.user_id, client)
                .await
                .map(|()| principal),
            None => self.verify(&username_key, password, client, key).await,
        };
        drop(turn);
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        result
    }

    /// The verification queue of one credential (shared while it is being checked).
    fn in_flight_entry(&self, key: [u8; 32]) -> Arc<tokio::sync::Mutex<()>> {
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone()
    }

    /// The database and Argon2id check of a credential that is not cached.
    async fn verify(
        &self,
        username_key: &str,
        password: &str,
        client: IpAddr,
        key: [u8; 32],
    ) -> Result<Principal, AuthError> {
        let client_text = client.to_string();
        let Some(creds) = self.store.credentials(username_key, &client_text).await? else {
            // Pay the same price as a real check so timing does not reveal unknown users.
            verify_off_runtime(password::decoy_hash().to_string(), password.to_string()).await?;
            return Err(AuthError::InvalidCredentials);
        };
        let at = now();
        if let Some(until) = self.config.lockout.locked_until(&creds.login, at) {
            return Err(AuthError::Locked(until));
        }
        let hash = creds.password_hash.clone().unwrap_or_default();
        if !verify_off_runtime(hash, password.to_string()).await? {
            let state = self
                .store
                .record_login_failure(creds.id, &client_text, &self.config.lockout, at)
                .await?;
            return Err(match self.config.lockout.locked_until(&state, at) {
                Some(until) => {
                    self.remember_lock(creds.id, client, until);
                    AuthError::Locked(until)
                }
                None => AuthError::InvalidCredentials,
            });
        }
        if creds.is_disabled {
            return Err(AuthError::Disabled);
        }
        self.store
            .record_login_success(creds.id, &client_text, at)
            .await?;
        let principal = Principal {
            user_id: creds.id,
            username: creds.username,
            tenant_code: creds.tenant_code,
            tenant_path: creds.tenant_path,
            role: creds.role,
        };
        self.remember(key, principal.clone());
        Ok(principal)
    }

    /// `Locked` when this user is locked for this client address.
    async fn refuse_if_locked(&self, user_id: i64, client: IpAddr) -> Result<(), AuthError> {
        let at = now();
        let known = self
            .locks
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(user_id, client))
            .copied()
            .filter(|until| *until > at);
        if let Some(until) = known {
            return Err(AuthError::Locked(until));
        }
        if self.store.backend() == Backend::Postgres {
            let state = self
                .store
                .client_login_state(user_id, &client.to_string())
                .await?;
            if let Some(until) = self.config.lockout.locked_until(&state, at) {
                return Err(AuthError::Locked(until));
            }
        }
        Ok(())
    }

    fn remember_lock(&self, user_id: i64, client: IpAddr, until: jiff::Timestamp) {
        let mut locks = self.locks.write().unwrap_or_else(|e| e.into_inner());
        if locks.len() >= CACHE_CAPACITY {
            let at = now();
            locks.retain(|_, until| *until > at);
        }
        locks.insert((user_id, client), until);
    }

    fn cached(&self, key: &[u8; 32]) -> Option<Principal> {
        let cache = self.cache.read().unwrap_or_else(|e| e.into_inner());
        cache
            .get(key)
            .filter(|e| e.expires > Instant::now())
            .map(|e| e.principal.clone())
    }

    fn remember(&self, key: [u8; 32], principal: Principal) {
        let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_CAPACITY {
            let now = Instant::now();
            cache.retain(|_, e| e.expires > now);
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
        }
        cache.insert(
            key,
            CacheEntry {
                principal,
                expires: Instant::now() + self.config.cache_ttl,
            },
        );
    }

    /// Drops every cached credential of a user; call on any change to the user.
    pub fn forget_user(&self, user_id: i64) {
        let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
        cache.retain(|_, e| e.principal.user_id != user_id);
    }

    /// Drops every cached credential (e.g. after a tenant and its users were deleted).
    pub fn forget_all(&self) {
        self.cache
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

/// Argon2 takes tens of milliseconds of CPU: keep it off the async workers.
async fn verify_off_runtime(hash: String, password: String) -> Result<bool, AuthError> {
    tokio::task::spawn_blocking(move || password::verify(&hash, &password))
        .await
        .map_err(|e| AuthError::Internal(e.to_string()))
}

/// Hashes off the async workers.
pub async fn hash_password(password: String) -> anyhow::Result<String> {
    tokio::task::spawn_blocking(move || password::hash(&password)).await?
}
