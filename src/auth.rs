//! Authentication: the three credentials (HTTP Basic, API tokens, browser sessions), each producing a `Principal`.
//! HTTP Basic is verified against stored Argon2id hashes, with a short-lived cache of
//! verified credentials and lockout bookkeeping; a browser session's login takes that
//! same path. API tokens and session cookies are random secrets looked up by their
//! SHA-256 (`domain::api_token`) on every request — from the database on PostgreSQL, so
//! revocation, logout and the end of a session hold on the next request on every process;
//! from the store's cache on SQLite, which every such change updates in the same call.
//!
//! The cache key is an HMAC of (username, password) under the server secret, so the
//! cache never holds a password. Entries are dropped when the user changes (password,
//! role, disable, delete) and expire after `ttl` regardless — the bound on how long
//! another process sharing a PostgreSQL database may keep serving a stale entry.
//!
//! Lockout is per account and client address (`domain::lockout`). A lock is checked
//! before the cache is consulted, so a cached credential never opens a locked door: the
//! locks this process recorded are kept in memory, and on PostgreSQL (where another
//! process may have recorded one) a cache hit also asks the database. A credential not
//! in the cache is admitted by the store (a place in the address's window) before its
//! password is verified; past the threshold nothing more is verified.
//!
//! Every verification — the user's hash, or the decoy for unknown users and refused
//! attempts, so that neither is told apart by timing — holds a permit of a semaphore
//! sized to the cores (`--max-concurrent-password-checks`). With none free the request
//! is answered at once (`Busy`, 429) before anything is read or stored: a burst costs
//! memory for its permits only. A credential served from the cache takes no permit.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::domain::access::{Permission, Permissions, Role};
use crate::domain::api_token::{hashes_equal, is_random_secret, is_well_formed, secret_hash};
use crate::domain::audit::{self, Audit, AuditAction, ResourceType};
use crate::domain::ids::{ApiTokenId, TenantCode, UserId};
use crate::domain::lockout::{Admission, LockoutPolicy};
use crate::domain::password;
use crate::domain::time::now;
use crate::domain::user::User;
use crate::store::{Credentials, SessionCredentials, Store, StoreError};

/// Who acts: a user, or one of a tenant's API tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    User { id: UserId, username: String },
    Token { id: ApiTokenId, name: String },
}

/// How the caller proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// HTTP Basic (username and password).
    Basic,
    /// `Authorization: Bearer <API token>`.
    Bearer,
    /// The browser session cookie (row `id` of the sessions table).
    Session { id: i64 },
}

/// The authenticated caller: the same shape whichever credential it came with.
#[derive(Debug, Clone)]
pub struct Principal {
    pub actor: Actor,
    pub via: Via,
    pub tenant_code: TenantCode,
    /// Materialised path of the home tenant; the caller's scope is this subtree.
    pub tenant_path: String,
    /// A user's role; for a token, the least role granting its permissions (the most it
    /// may assign when it manages users — never above its creator's).
    pub role: Role,
    /// What the caller may do: its role's, or the token's own.
    pub permissions: Permissions,
    /// The client's address (`http::client_address`), when the request had one.
    pub client: Option<IpAddr>,
}

impl Principal {
    fn of_user(creds: &Credentials, via: Via) -> Self {
        Principal {
            actor: Actor::User {
                id: creds.id,
                username: creds.username.clone(),
            },
            via,
            tenant_code: creds.tenant_code.clone(),
            tenant_path: creds.tenant_path.clone(),
            role: creds.role,
            permissions: creds.role.permissions(),
            client: None,
        }
    }

    /// What is recorded as having acted (`AcknowledgedBy`, `DeletedBy`, …): the username,
    /// or `token:<Name>`.
    pub fn actor_name(&self) -> String {
        match &self.actor {
            Actor::User { username, .. } => username.clone(),
            Actor::Token { name, .. } => format!("token:{name}"),
        }
    }

    /// The user's id (`None` for a token).
    pub fn user(&self) -> Option<UserId> {
        match &self.actor {
            Actor::User { id, .. } => Some(*id),
            Actor::Token { .. } => None,
        }
    }

    /// The user's username (`None` for a token).
    pub fn username(&self) -> Option<&str> {
        match &self.actor {
            Actor::User { username, .. } => Some(username),
            Actor::Token { .. } => None,
        }
    }

    /// The API token's id (`None` for a user).
    pub fn token_id(&self) -> Option<ApiTokenId> {
        match &self.actor {
            Actor::Token { id, .. } => Some(*id),
            Actor::User { .. } => None,
        }
    }

    pub fn has(&self, permission: Permission) -> bool {
        self.permissions.contains(permission)
    }
}

/// Why a presented API token was refused (each a 401 saying so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefusal {
    Malformed,
    Unknown,
    Revoked,
    Expired,
}

/// Why a session cookie was refused (each a 401 saying so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRefusal {
    /// Never issued, logged out, or ended by a change to its user.
    Unknown,
    Idle,
    Expired,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("wrong username or password")]
    InvalidCredentials,
    #[error("account locked until {0}")]
    Locked(jiff::Timestamp),
    #[error("account disabled")]
    Disabled,
    /// Every permit to verify a password is taken: try again in a moment.
    #[error("too many password checks at once")]
    Busy,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("internal: {0}")]
    Internal(String),
    #[error("API token refused: {0:?}")]
    Token(TokenRefusal),
    #[error("session refused: {0:?}")]
    Session(SessionRefusal),
    /// `IsPortalEnabled = false`: no browser session (API access is kept).
    #[error("portal access is disabled for this user")]
    PortalDisabled,
}

#[derive(Debug, Clone, Copy)]
pub struct AuthConfig {
    pub lockout: LockoutPolicy,
    pub cache_ttl: Duration,
    /// Password verifications at once (0: one per core).
    pub max_concurrent_checks: usize,
    /// A session unused this long ends (`--session-idle-seconds`).
    pub session_idle: Duration,
    /// A session ends this long after it was opened, used or not (`--session-max-hours`).
    pub session_max: Duration,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            lockout: LockoutPolicy::default(),
            cache_ttl: Duration::from_secs(60),
            max_concurrent_checks: 0,
            session_idle: Duration::from_secs(1800),
            session_max: Duration::from_secs(12 * 3600),
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
    locks: Arc<Locks>,
    /// Right passwords told of a lock, by (cache key, client address): (user id, until).
    /// They are told again without a verification, and the credential is not cached
    /// (its first use elsewhere is a login to record).
    told_locked: RwLock<HashMap<([u8; 32], IpAddr), ToldLocked>>,
    /// One permit per password verification running.
    checks: Arc<Semaphore>,
    /// When this process last recorded a use, by token id (`LastUsedAt` is coalesced).
    token_uses: Mutex<HashMap<ApiTokenId, Instant>>,
}

/// `LastUsedAt` is written at most this often per token (and per process).
const TOKEN_USE_EVERY: Duration = Duration::from_secs(60);

/// (user id, until when) of a right password told of its address's lock.
type ToldLocked = (UserId, jiff::Timestamp);

/// Locks this process recorded, by (user id, client address): until when.
#[derive(Default)]
struct Locks(RwLock<HashMap<(UserId, IpAddr), jiff::Timestamp>>);

impl Locks {
    fn until(
        &self,
        user_id: UserId,
        client: IpAddr,
        at: jiff::Timestamp,
    ) -> Option<jiff::Timestamp> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(user_id, client))
            .copied()
            .filter(|until| *until > at)
    }

    fn remember(&self, user_id: UserId, client: IpAddr, until: jiff::Timestamp) {
        let mut locks = self.0.write().unwrap_or_else(|e| e.into_inner());
        if locks.len() >= CACHE_CAPACITY {
            let at = now();
            locks.retain(|_, until| *until > at);
        }
        locks.insert((user_id, client), until);
    }
}

/// Seconds a request refused for want of a permit is told to wait: a verification
/// takes tens of milliseconds, so one is free again well within it.
pub const BUSY_RETRY_AFTER_SECS: u64 = 1;

/// How a verified (or refused) attempt ended, for the caller to cache or answer.
enum Outcome {
    LoggedIn(Principal),
    /// Locked for this address; the right password was given (by `user_id`, unless the
    /// account is disabled: nothing to remember then).
    Locked {
        until: jiff::Timestamp,
        user_id: Option<UserId>,
    },
    Refused(AuthError),
}

/// One attempt's verification and bookkeeping, owning all it needs: it runs as a task
/// of its own, so a client that hangs up cannot leave its place in the window taken
/// (nor its permit held past the check).
struct Attempt {
    store: Store,
    policy: LockoutPolicy,
    locks: Arc<Locks>,
    username_key: String,
    password: String,
    client: IpAddr,
    _permit: OwnedSemaphorePermit,
}

impl Attempt {
    async fn run(self) -> Result<Outcome, AuthError> {
        let Some(creds) = self.store.credentials(&self.username_key).await? else {
            // Pay the same price as a real check so timing does not reveal unknown users.
            verify_off_runtime(password::decoy_hash().to_string(), self.password).await?;
            return Ok(Outcome::Refused(AuthError::InvalidCredentials));
        };
        let client_text = self.client.to_string();
        // Listed in the user's home tenant, named by the username tried.
        let audit = Audit::in_tenant(
            audit::Actor::user(&creds.username),
            Some(self.client),
            &creds.tenant_code,
            &creds.tenant_path,
        );
        let admission = self
            .store
            .admit_login_attempt(creds.id, &client_text, &self.policy, now(), &audit)
            .await?;
        let hash = creds.password_hash.clone().unwrap_or_default();
        match admission {
            Admission::Refuse { locked_until } => {
                if let Some(until) = locked_until {
                    self.locks.remember(creds.id, self.client, until);
                }
                // As long as a verification, so a refusal looks like a wrong password.
                verify_off_runtime(password::decoy_hash().to_string(), self.password).await?;
                Ok(Outcome::Refused(AuthError::InvalidCredentials))
            }
            Admission::Probe { until } => {
                self.locks.remember(creds.id, self.client, until);
                if verify_off_runtime(hash, self.password).await? {
                    let entry = audit.entry(AuditAction::LoginFailed, ResourceType::User, creds.id);
                    self.store.record_audit(&entry).await?;
                    let user_id = (!creds.is_disabled).then_some(creds.id);
                    return Ok(Outcome::Locked { until, user_id });
                }
                self.store
                    .record_login_failure(creds.id, &client_text, None, &self.policy, now(), &audit)
                    .await?;
                Ok(Outcome::Refused(AuthError::InvalidCredentials))
            }
            Admission::Verify { window } => {
                if !verify_off_runtime(hash, self.password).await? {
                    let at = now();
                    let state = self
                        .store
                        .record_login_failure(
                            creds.id,
                            &client_text,
                            Some(window),
                            &self.policy,
                            at,
                            &audit,
                        )
                        .await?;
                    if let Some(until) = self.policy.locked_until(&state, at) {
                        self.locks.remember(creds.id, self.client, until);
                    }
                    return Ok(Outcome::Refused(AuthError::InvalidCredentials));
                }
                let logged_in = (!creds.is_disabled).then(now);
                self.store
                    .release_login_attempt(
                        creds.id,
                        &client_text,
                        window,
                        &self.policy,
                        logged_in,
                        &audit,
                    )
                    .await?;
                if creds.is_disabled {
                    return Ok(Outcome::Refused(AuthError::Disabled));
                }
                Ok(Outcome::LoggedIn(principal_of(creds)))
            }
        }
    }
}

fn principal_of(creds: Credentials) -> Principal {
    Principal::of_user(&creds, Via::Basic)
}

impl Authenticator {
    pub fn new(store: Store, config: AuthConfig, secret: &[u8]) -> Self {
        let permits = match config.max_concurrent_checks {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Self {
            store,
            config,
            key: secret.to_vec(),
            cache: RwLock::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            locks: Arc::default(),
            told_locked: RwLock::new(HashMap::new()),
            checks: Arc::new(Semaphore::new(permits)),
            token_uses: Mutex::new(HashMap::new()),
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
            self.refuse_if_locked(&principal, client).await?;
            return Ok(principal);
        }
        // One verification per credential at a time. When a cached credential expires
        // under load every connection misses at once, and each Argon2id check holds
        // ~19 MB, so memory would grow by that much per connection. The others wait for
        // the first and then find the credential cached.
        let flight = self.in_flight_entry(key);
        let turn = flight.lock().await;
        let result = match self.cached(&key) {
            Some(principal) => self
                .refuse_if_locked(&principal, client)
                .await
                .map(|()| principal),
            None => self.verify(username_key, password, client, key).await,
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

    /// A credential that is not cached: with a permit, or `Busy` at once.
    async fn verify(
        &self,
        username_key: String,
        password: &str,
        client: IpAddr,
        key: [u8; 32],
    ) -> Result<Principal, AuthError> {
        if let Some(until) = self.told_locked(key, client) {
            return Err(AuthError::Locked(until));
        }
        let permit = self
            .checks
            .clone()
            .try_acquire_owned()
            .map_err(|_| AuthError::Busy)?;
        let attempt = Attempt {
            store: self.store.clone(),
            policy: self.config.lockout,
            locks: self.locks.clone(),
            username_key,
            password: password.to_string(),
            client,
            _permit: permit,
        };
        let outcome = tokio::spawn(attempt.run())
            .await
            .map_err(|e| AuthError::Internal(e.to_string()))??;
        match outcome {
            Outcome::LoggedIn(principal) => {
                self.remember(key, principal.clone());
                Ok(principal)
            }
            Outcome::Locked { until, user_id } => {
                // The owner's retries are then told without another verification.
                if let Some(user_id) = user_id {
                    self.remember_told_locked(key, client, user_id, until);
                }
                Err(AuthError::Locked(until))
            }
            Outcome::Refused(error) => Err(error),
        }
    }

    /// `Locked` when this user is locked for this client address.
    async fn refuse_if_locked(
        &self,
        principal: &Principal,
        client: IpAddr,
    ) -> Result<(), AuthError> {
        let Some(user_id) = principal.user() else {
            return Ok(());
        };
        let at = now();
        if let Some(until) = self.locks.until(user_id, client, at) {
            return Err(AuthError::Locked(until));
        }
        // Another process may have locked it (PostgreSQL); on SQLite nothing is read.
        let shared = self
            .store
            .shared_login_state(user_id, &client.to_string())
            .await?;
        if let Some(until) = shared.and_then(|state| self.config.lockout.locked_until(&state, at)) {
            return Err(AuthError::Locked(until));
        }
        Ok(())
    }

    fn told_locked(&self, key: [u8; 32], client: IpAddr) -> Option<jiff::Timestamp> {
        self.told_locked
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(key, client))
            .map(|(_, until)| *until)
            .filter(|until| *until > now())
    }

    fn remember_told_locked(
        &self,
        key: [u8; 32],
        client: IpAddr,
        user_id: UserId,
        until: jiff::Timestamp,
    ) {
        let mut told = self.told_locked.write().unwrap_or_else(|e| e.into_inner());
        if told.len() >= CACHE_CAPACITY {
            let at = now();
            told.retain(|_, (_, until)| *until > at);
        }
        told.insert((key, client), (user_id, until));
    }

    fn cached(&self, key: &[u8; 32]) -> Option<Principal> {
        let cache = self.cache.read().unwrap_or_else(|e| e.into_inner());
        cache
            .get(key)
            .filter(|e| e.expires > Instant::now())
            .map(|e| e.principal.clone())
    }

    /// A session's absolute lifetime (the cookie's `Max-Age`).
    pub fn session_max(&self) -> Duration {
        self.config.session_max
    }

    // --- API tokens ---------------------------------------------------------------------

    /// The caller presenting API token `presented`: one SHA-256 and one lookup by it
    /// (see the module docs), never Argon2.
    pub async fn authenticate_token(&self, presented: &str) -> Result<Principal, AuthError> {
        if !is_well_formed(presented) {
            return Err(AuthError::Token(TokenRefusal::Malformed));
        }
        let hash = secret_hash(presented);
        let token = self
            .store
            .token_credentials(&hash)
            .await?
            .filter(|t| hashes_equal(&t.secret_hash, &hash))
            .ok_or(AuthError::Token(TokenRefusal::Unknown))?;
        let at = now();
        if token.revoked_at.is_some() {
            return Err(AuthError::Token(TokenRefusal::Revoked));
        }
        if token.expires_at.is_some_and(|until| until <= at) {
            return Err(AuthError::Token(TokenRefusal::Expired));
        }
        self.note_token_use(token.id, token.last_used_at, at);
        Ok(Principal {
            actor: Actor::Token {
                id: token.id,
                name: token.name,
            },
            via: Via::Bearer,
            tenant_code: token.tenant_code,
            tenant_path: token.tenant_path,
            role: token.permissions.least_role(),
            permissions: token.permissions,
            client: None,
        })
    }

    /// Records a token's use in the background, unless it was recorded (here or by
    /// another process) within `TOKEN_USE_EVERY`.
    fn note_token_use(&self, id: ApiTokenId, stored: Option<jiff::Timestamp>, at: jiff::Timestamp) {
        let every = jiff::SignedDuration::try_from(TOKEN_USE_EVERY).unwrap_or_default();
        if stored.is_some_and(|last| at.duration_since(last) < every) {
            return;
        }
        {
            let mut uses = self.token_uses.lock().unwrap_or_else(|e| e.into_inner());
            let instant = Instant::now();
            if uses
                .get(&id)
                .is_some_and(|last| instant.duration_since(*last) < TOKEN_USE_EVERY)
            {
                return;
            }
            if uses.len() >= CACHE_CAPACITY {
                uses.retain(|_, last| instant.duration_since(*last) < TOKEN_USE_EVERY);
            }
            uses.insert(id, instant);
        }
        let store = self.store.clone();
        tokio::spawn(async move {
            if let Err(e) = store.touch_api_token(id, at).await {
                tracing::warn!(error = %e, token = id.get(), "could not record a token's LastUsedAt");
            }
        });
    }

    // --- browser sessions ---------------------------------------------------------------

    /// Logs in for a browser session: the same path as HTTP Basic (lockout reservation,
    /// password-check cap, credential cache), then the portal check.
    pub async fn login(
        &self,
        username: &str,
        password: &str,
        client: IpAddr,
    ) -> Result<Principal, AuthError> {
        self.authenticate(username, password, client).await
    }

    /// Opens a session for a logged-in user: answers the cookie's secret and the caller
    /// as the session makes it.
    pub async fn open_session(
        &self,
        principal: &Principal,
    ) -> Result<(String, Principal), AuthError> {
        let Some(user_id) = principal.user() else {
            return Err(AuthError::InvalidCredentials);
        };
        let secret = crate::domain::api_token::random_secret();
        let at = now();
        let max = jiff::SignedDuration::try_from(self.config.session_max)
            .map_err(|e| AuthError::Internal(e.to_string()))?;
        let until = at
            .checked_add(max)
            .map_err(|e| AuthError::Internal(e.to_string()))?;
        let id = self
            .store
            .create_session(
                user_id,
                &secret_hash(&secret),
                at,
                until,
                &Audit::in_tenant(
                    audit::Actor::named(principal.actor_name()),
                    principal.client,
                    &principal.tenant_code,
                    &principal.tenant_path,
                ),
            )
            .await?;
        let mut session = principal.clone();
        session.via = Via::Session { id };
        Ok((secret, session))
    }

    /// The caller presenting session cookie `presented`. An idle or expired session is
    /// deleted when it is found so.
    pub async fn authenticate_session(&self, presented: &str) -> Result<Principal, AuthError> {
        if !is_random_secret(presented) {
            return Err(AuthError::Session(SessionRefusal::Unknown));
        }
        let hash = secret_hash(presented);
        let session = self
            .store
            .session_credentials(&hash)
            .await?
            .filter(|s| hashes_equal(&s.id_hash, &hash))
            .ok_or(AuthError::Session(SessionRefusal::Unknown))?;
        let at = now();
        if let Err(refusal) = self.session_state(session.last_seen_at, session.expires_at, at) {
            self.store.delete_session(session.id, None).await?;
            return Err(AuthError::Session(refusal));
        }
        if session.is_disabled {
            return Err(AuthError::Disabled);
        }
        self.note_session_use(session.id, session.last_seen_at, at);
        Ok(session_principal(session))
    }

    /// Whether a session last seen at `last_seen` and ending at `expires_at` is still on.
    pub fn session_state(
        &self,
        last_seen: jiff::Timestamp,
        expires_at: jiff::Timestamp,
        at: jiff::Timestamp,
    ) -> Result<(), SessionRefusal> {
        if expires_at <= at {
            return Err(SessionRefusal::Expired);
        }
        let idle = jiff::SignedDuration::try_from(self.config.session_idle).unwrap_or_default();
        if at.duration_since(last_seen) >= idle {
            return Err(SessionRefusal::Idle);
        }
        Ok(())
    }

    /// Records activity on a session, at most every `min(60 s, idle / 4)`: the idle
    /// timeout is kept to within that.
    pub fn note_session_use(&self, id: i64, last_seen: jiff::Timestamp, at: jiff::Timestamp) {
        let every = (self.config.session_idle / 4).min(Duration::from_secs(60));
        let every = jiff::SignedDuration::try_from(every).unwrap_or_default();
        if at.duration_since(last_seen) < every {
            return;
        }
        let store = self.store.clone();
        tokio::spawn(async move {
            if let Err(e) = store.touch_session(id, at).await {
                tracing::warn!(error = %e, "could not record a session's activity");
            }
        });
    }

    /// Ends the session presented as `presented` (logout); nothing when there is none.
    pub async fn end_session(&self, presented: &str) -> Result<(), AuthError> {
        if !is_random_secret(presented) {
            return Ok(());
        }
        if let Some(session) = self
            .store
            .session_credentials(&secret_hash(presented))
            .await?
        {
            self.store.delete_session(session.id, None).await?;
        }
        Ok(())
    }

    /// The CSRF token of the session whose cookie holds `session_secret`: derived from
    /// it under the server secret, so nothing more is stored.
    pub fn csrf_token(&self, session_secret: &str) -> String {
        use base64::Engine;
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .expect("HMAC accepts keys of any length");
        mac.update(b"csrf\0");
        mac.update(session_secret.as_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
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
    pub fn forget_user(&self, user_id: UserId) {
        let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
        cache.retain(|_, e| e.principal.user() != Some(user_id));
        drop(cache);
        self.told_locked
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, (id, _)| *id != user_id);
    }

    /// Drops every cached credential (e.g. after a tenant and its users were deleted).
    pub fn forget_all(&self) {
        self.cache
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.told_locked
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

fn session_principal(session: SessionCredentials) -> Principal {
    Principal {
        actor: Actor::User {
            id: session.user_id,
            username: session.username,
        },
        via: Via::Session { id: session.id },
        tenant_code: session.tenant_code,
        tenant_path: session.tenant_path,
        role: session.role,
        permissions: session.role.permissions(),
        client: None,
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
