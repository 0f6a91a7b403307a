//! Whether a caller authenticated when a long response began still has that access: the
//! live stream checks it every `ACCESS_CHECK_EVERY` and ends once it is lost (the user
//! deleted or disabled, its role lowered, its credential changed, its session ended, its
//! API token revoked or expired). One check for every kind of credential: each has a
//! `Credential` variant and its own arm in `Grant::check`.

use std::time::Duration;

use std::sync::Arc;

use crate::auth::{Authenticator, Principal, Via};
use crate::domain::ids::ApiTokenId;
use crate::domain::time::now;
use crate::domain::user::{User, UserRef};
use crate::store::{Store, StoreResult};

/// How often an open stream re-checks its caller. The user read is cached on SQLite;
/// the credential is read again only when the user's record changed.
pub const ACCESS_CHECK_EVERY: Duration = Duration::from_secs(2);

/// What the caller authenticated with, as it was then.
#[derive(Debug, Clone)]
enum Credential {
    /// HTTP Basic: the stored password hash the password was verified against.
    Password { hash: Option<String> },
    /// A browser session (row id): it must still exist and be neither idle nor past its
    /// lifetime. An open stream counts as the session's use (a console watching alerts).
    Session { id: i64 },
    /// An API token (row id): it must be neither revoked nor expired.
    Token { id: ApiTokenId },
}

/// Why access was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    Deleted,
    Disabled,
    RoleLowered,
    CredentialChanged,
    SessionEnded,
    TokenEnded,
}

/// A caller's access as granted, to compare with the store's records later.
#[derive(Clone)]
pub struct Grant {
    principal: Principal,
    credential: Credential,
    /// The user record's version when last compared: the credential is read again only
    /// when it moved.
    user_etag: Option<String>,
    /// The session rules (idle timeout, lifetime).
    auth: Arc<Authenticator>,
}

impl Grant {
    /// The access of a caller authenticated just now; `Err(Revoked)` when it was lost
    /// in between.
    pub async fn of(
        store: &Store,
        auth: Arc<Authenticator>,
        principal: Principal,
    ) -> StoreResult<Result<Self, Revoked>> {
        let credential = match principal.via {
            Via::Bearer => {
                let Some(id) = principal.token_id() else {
                    return Ok(Err(Revoked::TokenEnded));
                };
                let grant = Self {
                    principal,
                    credential: Credential::Token { id },
                    user_etag: None,
                    auth,
                };
                return Ok(grant.token_live(store).await?.map(|()| grant));
            }
            Via::Session { id } => Credential::Session { id },
            Via::Basic => Credential::Password { hash: None },
        };
        // The user before the credential: a change after this read moves the version,
        // so the next check reads the credential again.
        let user_etag = match current_user(store, &principal).await? {
            Ok(etag) => etag,
            Err(revoked) => return Ok(Err(revoked)),
        };
        let credential = match credential {
            Credential::Password { .. } => match password_hash(store, &principal).await? {
                Ok(hash) => Credential::Password { hash },
                Err(revoked) => return Ok(Err(revoked)),
            },
            other => other,
        };
        let grant = Self {
            principal,
            credential,
            user_etag,
            auth,
        };
        if let Credential::Session { id } = grant.credential
            && let Err(revoked) = session_on(store, &grant.auth, id).await?
        {
            return Ok(Err(revoked));
        }
        Ok(Ok(grant))
    }

    async fn token_live(&self, store: &Store) -> StoreResult<Result<(), Revoked>> {
        let Credential::Token { id } = self.credential else {
            return Ok(Ok(()));
        };
        Ok(if store.api_token_live(id, now()).await? {
            Ok(())
        } else {
            Err(Revoked::TokenEnded)
        })
    }

    /// Whether the caller still has the access it was granted.
    pub async fn check(&mut self, store: &Store) -> StoreResult<Result<(), Revoked>> {
        match self.credential {
            Credential::Token { .. } => return self.token_live(store).await,
            Credential::Session { id } => {
                if let Err(revoked) = session_on(store, &self.auth, id).await? {
                    return Ok(Err(revoked));
                }
            }
            Credential::Password { .. } => {}
        }
        let user_etag = match current_user(store, &self.principal).await? {
            Ok(etag) => etag,
            Err(revoked) => return Ok(Err(revoked)),
        };
        if user_etag == self.user_etag {
            return Ok(Ok(()));
        }
        // The record changed: is the credential still the one granted? (A session was
        // read above: a change that ends it deletes it.)
        let still = match &self.credential {
            Credential::Password { hash } => {
                password_hash(store, &self.principal).await? == Ok(hash.clone())
            }
            Credential::Session { .. } | Credential::Token { .. } => true,
        };
        if !still {
            return Ok(Err(Revoked::CredentialChanged));
        }
        self.user_etag = user_etag;
        Ok(Ok(()))
    }
}

/// Whether session `id` is still on; an open stream counts as its use.
async fn session_on(
    store: &Store,
    auth: &Authenticator,
    id: i64,
) -> StoreResult<Result<(), Revoked>> {
    let Some((last_seen, expires_at)) = store.session_exists(id).await? else {
        return Ok(Err(Revoked::SessionEnded));
    };
    let at = now();
    if auth.session_state(last_seen, expires_at, at).is_err() {
        return Ok(Err(Revoked::SessionEnded));
    }
    auth.note_session_use(id, last_seen, at);
    Ok(Ok(()))
}

/// The principal's user record's version, unless it is gone, disabled or its role is
/// lower than the principal's.
async fn current_user(
    store: &Store,
    principal: &Principal,
) -> StoreResult<Result<Option<String>, Revoked>> {
    let Some(user_id) = principal.user() else {
        return Ok(Err(Revoked::Deleted));
    };
    let user = store
        .get_user(&principal.tenant_code, &UserRef::Id(user_id), false)
        .await?;
    Ok(match user {
        None => Err(Revoked::Deleted),
        Some(user) if user.user.is_disabled => Err(Revoked::Disabled),
        Some(user) if user.role != principal.role && principal.role.may_assign(user.role) => {
            Err(Revoked::RoleLowered)
        }
        Some(user) => Ok(Some(user.user.etag)),
    })
}

/// The stored password hash of the principal's username, if that username still names
/// the same user.
async fn password_hash(
    store: &Store,
    principal: &Principal,
) -> StoreResult<Result<Option<String>, Revoked>> {
    let key = User::username_key(principal.username().unwrap_or_default());
    Ok(match store.credentials(&key).await? {
        Some(credentials) if Some(credentials.id) == principal.user() => {
            Ok(credentials.password_hash)
        }
        _ => Err(Revoked::CredentialChanged),
    })
}
