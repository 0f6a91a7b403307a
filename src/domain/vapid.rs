//! The server's VAPID key (RFC 8292): one P-256 key pair per installation, generated on
//! first start and kept in the database (`store/settings.rs`), so every process and every
//! restart signs Web Push requests with the same key, and browsers' subscriptions (made
//! with its public half as `applicationServerKey`) stay valid.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};

/// The key pair, read from its PKCS#8 form.
pub struct VapidKey {
    pair: EcdsaKeyPair,
}

#[derive(Debug, thiserror::Error)]
#[error("the stored VAPID key is not a P-256 PKCS#8 key: {0}")]
pub struct BadVapidKey(String);

impl VapidKey {
    /// A new key pair's PKCS#8 document, base64url (how it is kept).
    pub fn generate() -> Result<String, BadVapidKey> {
        let document =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| BadVapidKey("key generation failed".into()))?;
        Ok(URL_SAFE_NO_PAD.encode(document.as_ref()))
    }

    /// The key kept as `generate` wrote it.
    pub fn from_kept(kept: &str) -> Result<Self, BadVapidKey> {
        let pkcs8 = URL_SAFE_NO_PAD
            .decode(kept.trim())
            .map_err(|error| BadVapidKey(error.to_string()))?;
        let pair = EcdsaKeyPair::from_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &pkcs8,
            &SystemRandom::new(),
        )
        .map_err(|error| BadVapidKey(error.to_string()))?;
        Ok(Self { pair })
    }

    /// The public key as an uncompressed point (65 bytes, `0x04 ‖ X ‖ Y`).
    pub fn public_point(&self) -> &[u8] {
        self.pair.public_key().as_ref()
    }

    /// The public key as browsers take it for `applicationServerKey` and as the VAPID
    /// `k` parameter: the uncompressed point, base64url without padding.
    pub fn public_key_base64url(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.public_point())
    }

    /// The key pair, for signing the VAPID JWT (ES256, fixed-width `r ‖ s`).
    pub fn pair(&self) -> &EcdsaKeyPair {
        &self.pair
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_reads_back_with_an_uncompressed_public_point() {
        let kept = VapidKey::generate().expect("generate");
        let key = VapidKey::from_kept(&kept).expect("read back");
        assert_eq!(key.public_point().len(), 65);
        assert_eq!(key.public_point()[0], 0x04);
        let again = VapidKey::from_kept(&kept).expect("read again");
        assert_eq!(key.public_key_base64url(), again.public_key_base64url());
    }

    #[test]
    fn anything_else_is_refused() {
        assert!(VapidKey::from_kept("not base64!").is_err());
        assert!(VapidKey::from_kept("AAAA").is_err());
    }
}
