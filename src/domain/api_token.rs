//! API tokens (`/V2/{t}/apitokens`): what a client asks for, the record it
//! reads back, and the secrets themselves.
//!
//! A secret is `st_` + 256 random bits (Base64url). Only its SHA-256 is stored: a fast
//! hash is right for a high-entropy secret (nothing to guess), so checking a token costs
//! one hash and one indexed read, never Argon2. The same kind of secret names a browser
//! session (its cookie), with no prefix.

use base64::Engine;
use jiff::Timestamp;
use serde::Serialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use super::access::{Permission, Permissions};
use super::ids::ApiTokenId;
use super::validation::ValidationErrors;

/// What every token secret starts with, so leaked ones are recognisable (secret scanners).
pub const TOKEN_PREFIX: &str = "st_";
/// Characters of the secret shown as `Prefix`: `st_` and 8 of the random part.
pub const SHOWN_PREFIX_CHARS: usize = 11;
/// Random bytes of a secret (256 bits).
const SECRET_BYTES: usize = 32;
/// Base64url characters of `SECRET_BYTES` without padding.
const SECRET_CHARS: usize = 43;
pub const MAX_NAME_CHARS: usize = 100;

/// A fresh random secret (Base64url, no padding).
pub fn random_secret() -> String {
    let bytes: [u8; SECRET_BYTES] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The stored form of a secret: its SHA-256, in hex.
pub fn secret_hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether two secrets (or their hashes) are equal, in time independent of where they differ.
pub fn hashes_equal(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// A new token's secret: `st_` + the random part.
pub fn new_token_secret() -> String {
    format!("{TOKEN_PREFIX}{}", random_secret())
}

/// Whether `presented` has the shape of a secret this server issues (else: malformed).
pub fn is_well_formed(presented: &str) -> bool {
    presented.strip_prefix(TOKEN_PREFIX).is_some_and(|random| {
        random.len() == SECRET_CHARS
            && random
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

/// Whether a random secret (a session id, a CSRF token) has the shape this server issues.
pub fn is_random_secret(presented: &str) -> bool {
    presented.len() == SECRET_CHARS
        && presented
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A token request made sense of, before it is stored.
#[derive(Debug, Clone)]
pub struct NewApiToken {
    pub name: String,
    pub permissions: Permissions,
    pub expires_at: Option<Timestamp>,
}

impl NewApiToken {
    /// The token as minted under a parent token expiring at `parent_expiry`: it may not
    /// outlive its parent, so it expires at the earlier of the two (a token asked for
    /// without an expiry takes the parent's).
    pub fn under_parent(mut self, parent_expiry: Option<Timestamp>) -> Self {
        self.expires_at = match (self.expires_at, parent_expiry) {
            (Some(own), Some(parent)) => Some(own.min(parent)),
            (own, parent) => own.or(parent),
        };
        self
    }
}

/// Why a token request was refused.
#[derive(Debug)]
pub enum TokenRequestError {
    Invalid(ValidationErrors),
    /// Asked for permissions the creator does not have (named).
    BeyondCreator(Vec<String>),
}

/// A token as clients read it. `Token` (the secret) is present only in the answer to
/// the POST that created it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct ApiToken {
    #[schema(value_type = String, example = "12")]
    pub token_id: ApiTokenId,
    pub name: String,
    /// The secret's first characters, to recognise it.
    #[schema(example = "st_Xq3vT0aB")]
    pub prefix: String,
    #[schema(value_type = Vec<String>, example = json!(["DeviceMessages"]))]
    pub permissions: Vec<Permission>,
    /// Username of the creator.
    pub created_by: String,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<Timestamp>,
    /// Kept to within a minute.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_used_at: Option<Timestamp>,
    /// The secret: shown once, in the POST's answer, and never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_token_expires_no_later_than_its_parent() {
        let at = |s: i64| Timestamp::from_second(s).ok();
        let token = |expires_at| NewApiToken {
            name: "child".into(),
            permissions: Permissions::default(),
            expires_at,
        };
        assert_eq!(token(None).under_parent(None).expires_at, None);
        assert_eq!(token(None).under_parent(at(100)).expires_at, at(100));
        assert_eq!(token(at(50)).under_parent(None).expires_at, at(50));
        assert_eq!(token(at(50)).under_parent(at(100)).expires_at, at(50));
        assert_eq!(token(at(500)).under_parent(at(100)).expires_at, at(100));
    }

    #[test]
    fn secrets_have_their_shape() {
        let secret = new_token_secret();
        assert!(is_well_formed(&secret), "{secret}");
        assert!(!is_well_formed("st_short"));
        assert!(!is_well_formed(&secret.replacen("st_", "xx_", 1)));
        assert_ne!(secret, new_token_secret());
        assert!(hashes_equal(&secret_hash(&secret), &secret_hash(&secret)));
        assert!(!hashes_equal(&secret_hash(&secret), &secret_hash("st_")));
    }

    #[test]
    fn a_token_serialises_in_the_api_form() {
        let token = ApiToken {
            token_id: ApiTokenId::new(12),
            name: "gw".into(),
            prefix: "st_Xq3vT0aB".into(),
            permissions: vec![Permission::Read, Permission::DeviceMessages],
            created_by: "a@example.com".into(),
            created_at: Timestamp::UNIX_EPOCH,
            expires_at: None,
            last_used_at: None,
            token: None,
        };
        assert_eq!(
            serde_json::to_string(&token).expect("serialises"),
            r#"{"TokenId":"12","Name":"gw","Prefix":"st_Xq3vT0aB","Permissions":["Read","DeviceMessages"],"CreatedBy":"a@example.com","CreatedAt":"1970-01-01T00:00:00Z","ExpiresAt":null,"LastUsedAt":null}"#
        );
    }
}
