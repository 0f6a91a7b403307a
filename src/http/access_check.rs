//! Whether a caller authenticated when a long response began still has that access: the
//! live stream checks it every `ACCESS_CHECK_EVERY` and ends once it is lost (the user
//! deleted or disabled, its role lowered, its credential changed). One check for every
//! kind of credential: HTTP Basic today; a later kind (sessions, API tokens) adds a
//! `Credential` variant and its own arm in `Grant::check`.

use std::time::Duration;

use crate::auth::Principal;
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
}

/// Why access was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    Deleted,
    Disabled,
    RoleLowered,
    CredentialChanged,
}

/// A caller's access as granted, to compare with the store's records later.
#[derive(Debug, Clone)]
pub struct Grant {
    principal: Principal,
    credential: Credential,
    /// The user record's version when last compared: the credential is read again only
    /// when it moved.
    user_etag: Option<String>,
}

impl Grant {
    /// The access of a caller authenticated with HTTP Basic just now; `Err(Revoked)`
    /// when it was lost in between.
    pub async fn basic(store: &Store, principal: Principal) -> StoreResult<Result<Self, Revoked>> {
        // The user before the hash: a change after this read moves the version, so the
        // next check reads the credential again.
        let user_etag = match current_user(store, &principal).await? {
            Ok(etag) => etag,
            Err(revoked) => return Ok(Err(revoked)),
        };
        Ok(password_hash(store, &principal).await?.map(|hash| Self {
            principal,
            credential: Credential::Password { hash },
            user_etag,
        }))
    }

    /// Whether the caller still has the access it was granted.
    pub async fn check(&mut self, store: &Store) -> StoreResult<Result<(), Revoked>> {
        let user_etag = match current_user(store, &self.principal).await? {
            Ok(etag) => etag,
            Err(revoked) => return Ok(Err(revoked)),
        };
        if user_etag == self.user_etag {
            return Ok(Ok(()));
        }
        // The record changed: is the credential still the one granted?
        let still = match &self.credential {
            Credential::Password { hash } => {
                password_hash(store, &self.principal).await? == Ok(hash.clone())
            }
        };
        if !still {
            return Ok(Err(Revoked::CredentialChanged));
        }
        self.user_etag = user_etag;
        Ok(Ok(()))
    }
}

/// The principal's user record's version, unless it is gone, disabled or its role is
/// lower than the principal's.
async fn current_user(
    store: &Store,
    principal: &Principal,
) -> StoreResult<Result<Option<String>, Revoked>> {
    let user = store
        .get_user(
            &principal.tenant_code,
            &UserRef::Id(principal.user_id),
            false,
        )
        .await?;
    Ok(match user {
        None => Err(Revoked::Deleted),
        Some(user) if user.user.is_disabled => Err(Revoked::Disabled),
        Some(user) if user.role != principal.role && principal.role.may_assign(user.role) => {
            Err(Revoked::RoleLowered)
        }
        Some(user) => Ok(user.user.etag),
    })
}

/// The stored password hash of the principal's username, if that username still names
/// the same user.
async fn password_hash(
    store: &Store,
    principal: &Principal,
) -> StoreResult<Result<Option<String>, Revoked>> {
    let key = User::username_key(&principal.username);
    Ok(match store.credentials(&key).await? {
        Some(credentials) if credentials.id == principal.user_id => Ok(credentials.password_hash),
        _ => Err(Revoked::CredentialChanged),
    })
}
