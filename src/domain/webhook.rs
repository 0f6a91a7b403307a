//! Webhook settings (docs/api.md, "Events, alerts and deliveries") and the URL rules
//! shared with external links. The private-address check is also what delivery applies
//! to resolved addresses.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};
use url::{Host, Origin, Url};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::serde_util::null_as_default;
use super::validation::{ValidationErrors, Validator};

pub const MAX_URLS: usize = 10;
pub const MAX_URL_CHARS: usize = 2048;
pub const MAX_USERNAME_CHARS: usize = 256;
pub const MAX_SECRET_CHARS: usize = 1024;
pub const MIN_HMAC_KEY_CHARS: usize = 16;

/// How deliveries authenticate to the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authentication {
    None,
    /// HTTP Basic with `Username` and `Password`.
    Basic,
    /// `Authorization: Bearer <Password>`.
    Bearer,
    /// Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
    /// keyed with `Password` (see `webhook_event::sign`).
    HmacSha256,
}

impl Authentication {
    pub const ALL: [Authentication; 4] = [
        Authentication::None,
        Authentication::Basic,
        Authentication::Bearer,
        Authentication::HmacSha256,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Authentication::None => "None",
            Authentication::Basic => "Basic",
            Authentication::Bearer => "Bearer",
            Authentication::HmacSha256 => "HmacSha256",
        }
    }

    /// Case-insensitive; null or empty means `None`.
    pub fn parse(value: Option<&str>) -> Option<Self> {
        match value.map(str::trim) {
            None | Some("") => Some(Authentication::None),
            Some(v) => Self::ALL
                .into_iter()
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct WebhookUrl {
    /// Absolute http(s) URL. Loopback, private, link-local and unspecified IP literals
    /// and `localhost` are refused unless the server runs with `--allow-private-webhooks`.
    #[schema(required = true, example = "https://hooks.example.com/safetrack")]
    pub url: Option<String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub device: bool,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub event_notification: bool,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub mo_message: bool,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub mt_message: bool,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub tenant: bool,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
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

/// A tenant's webhook settings. `Password` is write-only (always null on GET); a PUT
/// with a null or empty `Password` keeps the stored secret, for URLs of the origins it
/// was already sent to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct WebhookSettings {
    /// At most 10, no two alike.
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub urls: Vec<WebhookUrl>,
    /// `None` (also null), `Basic`, `Bearer` or `HmacSha256`.
    #[schema(example = "HmacSha256")]
    pub authentication: Option<String>,
    /// Basic only; ignored (and not kept) for the other types.
    pub username: Option<String>,
    /// Basic: the password. Bearer: the token. HmacSha256: the signing key (at least 16
    /// characters). Not kept when `Authentication` is `None`. Always `null` on read.
    pub password: Option<String>,
    /// Record version: sent as the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

impl WebhookSettings {
    /// Checks every rule against the incoming settings; `stored` is what was saved
    /// before, whose secret is kept when `Password` is null — but only while every URL
    /// has an origin among the stored URLs' (a kept secret never goes anywhere the
    /// caller did not prove they may send it). Returns what to store: the canonical
    /// `Authentication`, and `Username`/`Password` only where the type uses them.
    pub fn validated(
        self,
        stored: Option<&WebhookSettings>,
        allow_private: bool,
    ) -> Result<WebhookSettings, ValidationErrors> {
        let mut v = Validator::new();
        if self.urls.len() > MAX_URLS {
            v.add(
                "Urls",
                format!("at most {MAX_URLS} URLs (got {})", self.urls.len()),
            );
        }
        let (urls, origins) = checked_urls(self.urls, allow_private, &mut v);

        let auth = Authentication::parse(self.authentication.as_deref());
        if auth.is_none() {
            v.add(
                "Authentication",
                "must be one of None, Basic, Bearer, HmacSha256",
            );
        }
        let given = self.password.filter(|p| !p.is_empty());
        let stored_password = stored.and_then(|s| s.password.as_deref());
        if given.is_none()
            && stored_password.is_some()
            && auth.is_some_and(|a| a != Authentication::None)
        {
            let known = stored.map(stored_origins).unwrap_or_default();
            if let Some((i, origin)) = origins.iter().find(|(_, o)| !known.contains(o)) {
                v.add(
                    "Password",
                    format!(
                        "must be sent again: Urls[{i}].Url is on {}, which the stored \
                         secret was never sent to",
                        origin.ascii_serialization()
                    ),
                );
            }
        }
        let secret = given.or_else(|| stored_password.map(str::to_string));
        let username = self.username.filter(|u| !u.trim().is_empty());
        let (username, password) = credentials(auth, username, secret, &mut v);
        v.finish()?;
        Ok(WebhookSettings {
            urls,
            authentication: auth.map(|a| a.as_str().to_string()),
            username,
            password,
            etag: None,
        })
    }

    /// As GET shows it: without the secret.
    pub fn public(mut self) -> Self {
        self.password = None;
        self
    }
}

/// The origins (scheme, host, port) of the stored settings' URLs.
/// The URLs with their text trimmed, each checked (and no two alike), and the origin of
/// each valid one by its index.
fn checked_urls(
    entries: Vec<WebhookUrl>,
    allow_private: bool,
    v: &mut Validator,
) -> (Vec<WebhookUrl>, Vec<(usize, Origin)>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut urls = Vec::with_capacity(entries.len());
    let mut origins = Vec::with_capacity(entries.len());
    for (i, mut entry) in entries.into_iter().enumerate() {
        let field = format!("Urls[{i}].Url");
        let Some(raw) = v.required(&field, entry.url.as_deref()).map(str::trim) else {
            continue;
        };
        match check_webhook_url(raw, allow_private) {
            Ok(url) => {
                if let Some(first) = seen.insert(url.as_str().to_string(), i) {
                    v.add(&field, format!("duplicates Urls[{first}].Url"));
                }
                origins.push((i, url.origin()));
            }
            Err(message) => v.add(&field, message),
        }
        entry.url = Some(raw.to_string());
        urls.push(entry);
    }
    (urls, origins)
}

/// The `Username` and secret kept for `auth` (only what the type uses), each checked.
fn credentials(
    auth: Option<Authentication>,
    username: Option<String>,
    secret: Option<String>,
    v: &mut Validator,
) -> (Option<String>, Option<String>) {
    match auth {
        Some(Authentication::Basic) => {
            match username.as_deref() {
                None => v.add("Username", "is required for Basic authentication"),
                Some(u) => {
                    v.length("Username", Some(u), 1, MAX_USERNAME_CHARS);
                    if u.contains(':') || u.chars().any(char::is_control) {
                        v.add("Username", "must not contain ':' or control characters");
                    }
                }
            }
            check_secret(v, secret.as_deref(), "Basic authentication", 1);
            (username, secret)
        }
        Some(Authentication::Bearer) => {
            check_secret(v, secret.as_deref(), "Bearer authentication", 1);
            (None, secret)
        }
        Some(Authentication::HmacSha256) => {
            let what = "HmacSha256 authentication";
            check_secret(v, secret.as_deref(), what, MIN_HMAC_KEY_CHARS);
            (None, secret)
        }
        Some(Authentication::None) | None => (None, None),
    }
}

fn stored_origins(stored: &WebhookSettings) -> Vec<Origin> {
    stored
        .urls
        .iter()
        .filter_map(|u| Url::parse(u.url.as_deref()?).ok())
        .map(|u| u.origin())
        .collect()
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

fn check_secret(v: &mut Validator, secret: Option<&str>, what: &str, min: usize) {
    let Some(secret) = secret else {
        v.add("Password", format!("is required for {what}"));
        return;
    };
    let n = secret.chars().count();
    if n < min || n > MAX_SECRET_CHARS {
        v.add(
            "Password",
            format!("must be between {min} and {MAX_SECRET_CHARS} characters for {what}"),
        );
    }
    // It travels in a header (Basic, Bearer): no line breaks or other control characters.
    if secret.chars().any(char::is_control) {
        v.add("Password", "must not contain control characters");
    }
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
