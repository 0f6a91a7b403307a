//! Web Push (RFC 8030) to a browser's subscription: the payload encrypted for the
//! subscription's keys as `aes128gcm` (RFC 8291, by the `web-push-native` crate), the
//! request signed with the server's VAPID key (RFC 8292: an ES256 JWT for the endpoint's
//! origin, signed by `ring` with `domain/vapid.rs`'s key, sent as
//! `Authorization: vapid t=…, k=…`). A 404 or 410 says the subscription is gone: the
//! caller drops it (`PushSent::gone`).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use web_push_native::p256::PublicKey;
use web_push_native::{Auth, WebPushBuilder};

use super::{no_answer, retry_after};
use crate::domain::push_subscription::{PushEndpoint, PushKeys};
use crate::domain::retry::{AttemptOutcome, classify_status};
use crate::domain::vapid::VapidKey;

const TIMEOUT: Duration = Duration::from_secs(15);
/// How long a push service keeps a push for a browser that is offline (`TTL`): a
/// reminder or a text older than this is no use.
const TIME_TO_LIVE: Duration = Duration::from_secs(3600);
/// How long the VAPID JWT is valid (RFC 8292 allows at most 24 h).
const JWT_VALID_SECS: i64 = 12 * 3600;

/// What a push attempt came to; `gone`: the push service no longer knows the
/// subscription (404/410) and it is to be dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct PushSent {
    pub outcome: AttemptOutcome,
    pub gone: bool,
}

pub struct PushChannel {
    client: reqwest::Client,
    key: Arc<VapidKey>,
    /// The VAPID `sub` claim: how a push service reaches the operator (`--push-contact`).
    subject: Option<String>,
}

impl PushChannel {
    pub fn new(key: Arc<VapidKey>, subject: Option<String>) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(super::USER_AGENT)
            .build()?;
        Ok(Self {
            client,
            key,
            subject,
        })
    }

    /// Pushes `payload` (the JSON the service worker shows) to the subscription.
    pub async fn send(&self, endpoint: &PushEndpoint, keys: &PushKeys, payload: &str) -> PushSent {
        let request = match self.request(endpoint, keys, payload) {
            Ok(request) => request,
            Err(error) => return permanent(error),
        };
        let response = match self.client.execute(request).await {
            Ok(response) => response,
            Err(e) => return kept(no_answer("push service", e)),
        };
        let status = response.status().as_u16();
        let wait = retry_after(&response);
        if matches!(status, 404 | 410) {
            return PushSent {
                outcome: AttemptOutcome::Permanent {
                    error: format!(
                        "the push service answered {status}: the subscription is gone (dropped)"
                    ),
                },
                gone: true,
            };
        }
        let error = format!("the push service answered {status}");
        kept(classify_status(status, None, error, wait))
    }

    /// The encrypted, signed request.
    fn request(
        &self,
        endpoint: &PushEndpoint,
        keys: &PushKeys,
        payload: &str,
    ) -> Result<reqwest::Request, String> {
        let uri: http::Uri = endpoint
            .as_str()
            .parse()
            .map_err(|e| format!("the endpoint is no URI: {e}"))?;
        let public = PublicKey::from_sec1_bytes(&keys.p256dh)
            .map_err(|_| "the subscription's P256dh is no point on P-256".to_string())?;
        let auth = Auth::clone_from_slice(&keys.auth);
        let mut request = WebPushBuilder::new(uri, public, auth)
            .with_valid_duration(TIME_TO_LIVE)
            .build(payload.as_bytes())
            .map_err(|e| format!("the payload could not be encrypted: {e}"))?;
        let authorization = self.vapid_authorization(&endpoint.origin())?;
        let headers = request.headers_mut();
        headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_str(&authorization).map_err(|e| e.to_string())?,
        );
        headers.insert("urgency", http::HeaderValue::from_static("high"));
        reqwest::Request::try_from(request).map_err(|e| e.without_url().to_string())
    }

    /// `vapid t=<ES256 JWT for the audience>, k=<the public key>` (RFC 8292 §3).
    fn vapid_authorization(&self, audience: &str) -> Result<String, String> {
        let expires = jiff::Timestamp::now().as_second() + JWT_VALID_SECS;
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let mut claims = serde_json::json!({"aud": audience, "exp": expires});
        if let Some(subject) = &self.subject {
            claims["sub"] = serde_json::json!(subject);
        }
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signing_input = format!("{header}.{claims}");
        let signature = self
            .key
            .pair()
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| "the VAPID token could not be signed".to_string())?;
        Ok(format!(
            "vapid t={signing_input}.{}, k={}",
            URL_SAFE_NO_PAD.encode(signature.as_ref()),
            self.key.public_key_base64url()
        ))
    }
}

fn kept(outcome: AttemptOutcome) -> PushSent {
    PushSent {
        outcome,
        gone: false,
    }
}

fn permanent(error: String) -> PushSent {
    kept(AttemptOutcome::Permanent { error })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel() -> PushChannel {
        let key = VapidKey::from_kept(&VapidKey::generate().unwrap()).unwrap();
        PushChannel::new(Arc::new(key), Some("mailto:ops@example.com".into())).unwrap()
    }

    #[test]
    fn the_vapid_token_is_a_verifiable_es256_jwt_for_the_origin() {
        let channel = channel();
        let header = channel
            .vapid_authorization("https://push.example.net")
            .unwrap();
        let rest = header.strip_prefix("vapid t=").unwrap();
        let (jwt, k) = rest.split_once(", k=").unwrap();
        assert_eq!(k, channel.key.public_key_base64url());
        let (signed, signature) = jwt.rsplit_once('.').unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            URL_SAFE_NO_PAD.decode(k).unwrap(),
        );
        public
            .verify(
                signed.as_bytes(),
                &URL_SAFE_NO_PAD.decode(signature).unwrap(),
            )
            .expect("the signature verifies with k");
        let claims = signed.split('.').nth(1).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example.net");
        assert_eq!(claims["sub"], "mailto:ops@example.com");
    }

    #[tokio::test]
    async fn an_unreachable_push_service_is_retried() {
        let endpoint = PushEndpoint::parse(&format!(
            "http://127.0.0.1:{}/p",
            super::super::closed_port()
        ))
        .unwrap();
        let keys = PushKeys::from_kept(
            "BLn9b-VR0ca83knDNZ32dCHGyjJp-1riX9ZTN40MqV8K_LpQmLqxC_DoHvqvFXO_nGdAB4W9dogZb_sM-uV4JbY",
            "_ordMnz7uTCmrpBTeUV4Bw",
        )
        .unwrap();
        let sent = channel().send(&endpoint, &keys, "{}").await;
        assert!(!sent.gone);
        assert!(
            matches!(sent.outcome, AttemptOutcome::Unreachable { .. }),
            "{sent:?}"
        );
    }
}
