//! Webhook settings (docs/api.md, "Events, alerts and deliveries") and the URL rules
//! shared with external links. The private-address check is also what delivery applies
//! to resolved addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize, Serializer};
use url::{Host, Origin, Url};

use super::closed_set::closed_set;

pub const MAX_URLS: usize = 10;
pub const MAX_URL_CHARS: usize = 2048;
pub const MAX_USERNAME_CHARS: usize = 256;
pub const MAX_SECRET_CHARS: usize = 1024;
pub const MIN_HMAC_KEY_CHARS: usize = 16;

closed_set! {
    /// How deliveries authenticate to the receiver.
    pub enum Authentication {
        None = "None",
        /// HTTP Basic with `Username` and `Password`.
        Basic = "Basic",
        /// `Authorization: Bearer <Password>`.
        Bearer = "Bearer",
        /// Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
        /// keyed with `Password` (see `webhook_event::sign`).
        HmacSha256 = "HmacSha256",
    }
}

impl Authentication {
    /// What a client may send: case-insensitive; null or empty means `None`.
    pub fn parse(value: Option<&str>) -> Option<Self> {
        match value.map(str::trim) {
            None | Some("") => Some(Authentication::None),
            Some(v) => Self::ALL
                .iter()
                .copied()
                .find(|a| a.as_str().eq_ignore_ascii_case(v)),
        }
    }
}

closed_set! {
    /// The kinds of change a webhook URL can subscribe to.
    pub enum Category {
        Device = "Device",
        EventNotification = "EventNotification",
        MoMessage = "MoMessage",
        MtMessage = "MtMessage",
        Tenant = "Tenant",
        User = "User",
    }
}

/// One receiver and the categories it wants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WebhookUrl {
    /// Trimmed; checked by `check_webhook_url` when saved.
    pub url: String,
    #[serde(default)]
    pub device: bool,
    #[serde(default)]
    pub event_notification: bool,
    #[serde(default)]
    pub mo_message: bool,
    #[serde(default)]
    pub mt_message: bool,
    #[serde(default)]
    pub tenant: bool,
    #[serde(default)]
    pub user: bool,
}

impl WebhookUrl {
    pub fn wants(&self, category: Category) -> bool {
        match category {
            Category::Device => self.device,
            Category::EventNotification => self.event_notification,
            Category::MoMessage => self.mo_message,
            Category::MtMessage => self.mt_message,
            Category::Tenant => self.tenant,
            Category::User => self.user,
        }
    }
}

/// A tenant's webhook settings, as stored: `Authentication` canonical, `Username` and
/// `Password` only where the type uses them. The secret (`Password`) is kept beside the
/// document, never in it, and is never serialised (always `null`): no response and no
/// stored document can carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WebhookSettings {
    #[serde(default)]
    pub urls: Vec<WebhookUrl>,
    pub authentication: Authentication,
    pub username: Option<String>,
    #[serde(serialize_with = "never_shown", skip_deserializing)]
    pub password: Option<String>,
    /// Record version: sent as the `ETag` header only (`None`: never saved).
    #[serde(skip)]
    pub etag: Option<String>,
}

/// Writes a secret as `null`.
fn never_shown<S: Serializer>(_: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_none()
}

impl WebhookSettings {
    /// What a tenant that never saved any has: no URLs, no authentication.
    pub fn none() -> Self {
        WebhookSettings {
            urls: Vec::new(),
            authentication: Authentication::None,
            username: None,
            password: None,
            etag: None,
        }
    }

    /// The origins (scheme, host, port) of the URLs: where the secret was sent.
    pub fn origins(&self) -> Vec<Origin> {
        self.urls
            .iter()
            .filter_map(|u| Url::parse(&u.url).ok())
            .map(|u| u.origin())
            .collect()
    }
}

/// What a caller without the ManageConfiguration permission sees of a webhook URL: its
/// origin with the port always written (`https://host:443`). The path and query often
/// hold a token of their own. Anything that is not an http(s) URL shows as nothing.
pub fn url_origin(raw: &str) -> Option<String> {
    let url = Url::parse(raw).ok()?;
    let host = url.host_str()?;
    let port = url.port_or_known_default()?;
    matches!(url.scheme(), "http" | "https").then(|| format!("{}://{host}:{port}", url.scheme()))
}

/// An absolute http(s) URL with a host and no embedded credentials.
pub fn parse_http_url(raw: &str) -> Result<Url, String> {
    if raw.chars().count() > MAX_URL_CHARS {
        return Err(format!("must be at most {MAX_URL_CHARS} characters"));
    }
    let url = Url::parse(raw).map_err(|e| format!("is not an absolute URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("must use http or https, not {}", url.scheme()));
    }
    if url.host().is_none() {
        return Err("must name a host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry credentials; use Username and Password".into());
    }
    Ok(url)
}

/// `parse_http_url` plus, unless allowed, no address on this machine or private network
/// given literally (names are not resolved here; delivery checks resolved addresses).
pub fn check_webhook_url(raw: &str, allow_private: bool) -> Result<Url, String> {
    let url = parse_http_url(raw)?;
    if allow_private {
        return Ok(url);
    }
    let refused = match url.host() {
        Some(Host::Ipv4(ip)) => is_private_address(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => is_private_address(IpAddr::V6(ip)),
        Some(Host::Domain(name)) => is_local_hostname(name),
        None => false,
    };
    if refused {
        return Err(
            "points to a loopback, private, link-local or unspecified address; \
             the server must run with --allow-private-webhooks to allow it"
                .into(),
        );
    }
    Ok(url)
}

/// `localhost` and any name under `.localhost` (RFC 6761), with or without a final dot.
pub fn is_local_hostname(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// Whether an address is one a webhook must not reach: loopback, private (RFC 1918,
/// unique local), carrier-grade NAT, link-local, unspecified, broadcast, multicast or
/// reserved — including IPv4 addresses embedded in IPv6 (mapped, compatible, NAT64's
/// well-known prefix, 6to4), and the IPv6 ranges that reach IPv4 hosts this check cannot
/// see (NAT64's local-use prefix, Teredo).
pub fn is_private_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => is_private_v6(v6),
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT, RFC 6598
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking, RFC 2544
        || a >= 240 // reserved
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_private_v4(v4);
    }
    // IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::/96) embed an IPv4 address.
    let embedded = Ipv4Addr::new(
        (segments[6] >> 8) as u8,
        segments[6] as u8,
        (segments[7] >> 8) as u8,
        segments[7] as u8,
    );
    if segments[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        return is_private_v4(embedded);
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_private_v4(embedded);
    }
    // NAT64 local-use prefix (RFC 8215): the translator is the operator's own, and where
    // the IPv4 address sits depends on its prefix length.
    if segments[..3] == [0x64, 0xff9b, 1] {
        return true;
    }
    // Teredo (2001::/32): a tunnel to whatever IPv4 host the relay is told of.
    if segments[..2] == [0x2001, 0] {
        return true;
    }
    // 6to4 (2002:a.b.c.d::/48).
    if segments[0] == 0x2002 {
        let v4 = Ipv4Addr::new(
            (segments[1] >> 8) as u8,
            segments[1] as u8,
            (segments[2] >> 8) as u8,
            segments[2] as u8,
        );
        return is_private_v4(v4);
    }
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (segments[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (segments[0] & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
        || segments[..4] == [0x100, 0, 0, 0] // discard-only 100::/64
        || segments[..2] == [0x2001, 0xdb8] // documentation 2001:db8::/32
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
