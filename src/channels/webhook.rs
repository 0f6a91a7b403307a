//! Webhooks, per Standard Webhooks: the envelope POSTed with `webhook-id`,
//! `webhook-timestamp` and, for `HmacSha256`, `webhook-signature`; `Basic` and `Bearer`
//! as `Authorization`. 15 s timeout, redirects not followed, no proxy (`HTTP(S)_PROXY`
//! and `ALL_PROXY` are ignored), 2xx is success.
//!
//! SSRF: unless the operator allows private webhooks, the host's resolved addresses are
//! checked by the client's own resolver — the addresses checked are the ones connected
//! to, so a name cannot resolve to a public address for the check and a private one for
//! the connection — and IP-literal hosts (which skip resolution) before sending.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::retry_after;
use crate::domain::retry::{AttemptOutcome, classify_status};
use crate::domain::time::now;
use crate::domain::webhook::{Authentication, WebhookSettings, is_private_address};
use crate::domain::webhook_event::sign;

const TIMEOUT: Duration = Duration::from_secs(15);

/// How a delivery authenticates, from the tenant's settings at the time of the attempt.
#[derive(Clone)]
pub enum WebhookAuth {
    None,
    Basic { username: String, password: String },
    Bearer(String),
    HmacSha256(String),
}

impl std::fmt::Debug for WebhookAuth {
    // Secrets never reach a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            WebhookAuth::None => "None",
            WebhookAuth::Basic { .. } => "Basic",
            WebhookAuth::Bearer(_) => "Bearer",
            WebhookAuth::HmacSha256(_) => "HmacSha256",
        };
        f.write_str(kind)
    }
}

impl WebhookAuth {
    /// The authentication the tenant's settings give, or `None` when the URL is no
    /// longer among them (the delivery then fails: nobody asked for it any more).
    pub fn for_url(settings: &WebhookSettings, url: &str) -> Option<WebhookAuth> {
        settings.urls.iter().find(|u| u.url == url)?;
        let password = settings.password.clone().unwrap_or_default();
        Some(match settings.authentication {
            Authentication::Basic => WebhookAuth::Basic {
                username: settings.username.clone().unwrap_or_default(),
                password,
            },
            Authentication::Bearer => WebhookAuth::Bearer(password),
            Authentication::HmacSha256 => WebhookAuth::HmacSha256(password),
            Authentication::None => WebhookAuth::None,
        })
    }
}

/// The resolver refused every address a name resolved to.
#[derive(Debug)]
struct RefusedAddresses(String);

impl std::fmt::Display for RefusedAddresses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} resolves only to loopback, private or reserved addresses \
             (the server must run with --allow-private-webhooks to allow them)",
            self.0
        )
    }
}

impl std::error::Error for RefusedAddresses {}

/// System resolution, keeping only the addresses a webhook may reach.
struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| !is_private_address(a.ip()))
                .collect();
            if found.is_empty() {
                return Err(Box::new(RefusedAddresses(host)) as _);
            }
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

pub struct WebhookChannel {
    client: reqwest::Client,
    allow_private: bool,
}

impl WebhookChannel {
    pub fn new(allow_private: bool) -> anyhow::Result<Self> {
        let mut builder = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            // Never an environment proxy: the resolver's check must see the receiver's
            // address, not the proxy's, and the proxy must not see the secrets.
            .no_proxy()
            .user_agent(super::USER_AGENT);
        if !allow_private {
            builder = builder.dns_resolver(std::sync::Arc::new(PublicOnlyResolver));
        }
        Ok(Self {
            client: builder.build()?,
            allow_private,
        })
    }

    /// One attempt: POST `body` (the envelope) to `url` as event `event_id`.
    pub async fn send(
        &self,
        url: &str,
        event_id: &str,
        body: &str,
        auth: &WebhookAuth,
    ) -> AttemptOutcome {
        let parsed = match Url::parse(url) {
            Ok(u) => u,
            Err(e) => {
                return AttemptOutcome::Permanent {
                    error: format!("not a URL: {e}"),
                };
            }
        };
        if !self.allow_private {
            let literal = match parsed.host() {
                Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
                Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
                _ => None,
            };
            if literal.is_some_and(is_private_address) {
                return AttemptOutcome::Permanent {
                    error: "the URL points to a loopback, private or reserved address".into(),
                };
            }
        }
        let timestamp = now().as_second();
        let mut request = self
            .client
            .post(parsed)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", event_id)
            .header("webhook-timestamp", timestamp.to_string());
        request = match auth {
            WebhookAuth::None => request,
            WebhookAuth::Basic { username, password } => {
                request.basic_auth(username, Some(password))
            }
            WebhookAuth::Bearer(token) => request.bearer_auth(token),
            WebhookAuth::HmacSha256(secret) => {
                request.header("webhook-signature", sign(secret, event_id, timestamp, body))
            }
        };
        let response = match request.body(body.to_string()).send().await {
            Ok(r) => r,
            Err(e) => return failure(&e),
        };
        let status = response.status();
        let retry_after = retry_after(&response);
        let error = if status.is_redirection() {
            format!("HTTP {status} (redirects are not followed)")
        } else {
            format!("HTTP {status}")
        };
        classify_status(status.as_u16(), None, error, retry_after)
    }
}

/// A request that got no answer: refused addresses are permanent, no connection at all
/// (refused, unreachable, DNS) is an unreachable receiver, the rest (timeouts, a broken
/// exchange) retryable.
fn failure(e: &reqwest::Error) -> AttemptOutcome {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(refused) = err.downcast_ref::<RefusedAddresses>() {
            return AttemptOutcome::Permanent {
                error: refused.to_string(),
            };
        }
        source = err.source();
    }
    if e.is_connect() {
        return AttemptOutcome::Unreachable {
            error: format!("could not connect: {}", root_cause(e)),
        };
    }
    let kind = if e.is_timeout() {
        "timed out"
    } else {
        "request failed"
    };
    // The URL is the delivery's Target already; the error text without it stays short.
    AttemptOutcome::Retryable {
        error: format!("{kind}: {}", root_cause(e)),
        retry_after: None,
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IP-literal hosts skip the resolver: they are checked before sending, NAT64 and
    /// Teredo included.
    #[tokio::test]
    async fn private_literals_are_refused_before_sending() {
        let channel = WebhookChannel::new(false).expect("client");
        for url in [
            "http://127.0.0.1:9/hook",
            "http://[64:ff9b::7f00:1]:9/hook",
            "http://[64:ff9b:1::808:808]:9/hook",
            "http://[2001::1]:9/hook",
        ] {
            let outcome = channel.send(url, "evt", "{}", &WebhookAuth::None).await;
            assert!(
                matches!(&outcome, AttemptOutcome::Permanent { error } if error.contains("private")),
                "{url}: {outcome:?}"
            );
        }
    }
}
