//! Password hashing (Argon2id, PHC string format) and the minimum password policy.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand::rngs::OsRng;

pub const MIN_PASSWORD_CHARS: usize = 10;
/// Hashing cost grows with input; refuse absurd lengths before hashing.
pub const MAX_PASSWORD_CHARS: usize = 256;

/// Checks the policy; returns the message for the `Password` field when it fails.
pub fn check_policy(password: &str) -> Result<(), String> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err(format!(
            "must be at least {MIN_PASSWORD_CHARS} characters long"
        ));
    }
    if n > MAX_PASSWORD_CHARS {
        return Err(format!(
            "must be at most {MAX_PASSWORD_CHARS} characters long"
        ));
    }
    if password.trim().is_empty() {
        return Err("must not be blank".into());
    }
    Ok(())
}

/// Argon2id with the crate's default (OWASP) parameters. CPU-heavy: call off the async runtime.
pub fn hash(password: &str) -> anyhow::Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("argon2 hashing failed: {e}"))
}

/// Verifies against a stored PHC string. A malformed hash never verifies.
pub fn verify(stored_hash: &str, password: &str) -> bool {
    match PasswordHash::new(stored_hash) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A hash of a random password, verified against when the username is unknown so that a
/// miss costs as much as a hit (no user enumeration by timing).
pub fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash(&uuid::Uuid::new_v4().to_string()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_and_verify() {
        let h = hash("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify(&h, "correct horse battery"));
        assert!(!verify(&h, "wrong"));
        assert!(!verify("garbage", "x"));
    }

    #[test]
    fn policy() {
        assert!(check_policy("short").is_err());
        assert!(check_policy("long enough!").is_ok());
        assert!(check_policy("          ").is_err());
    }
}
