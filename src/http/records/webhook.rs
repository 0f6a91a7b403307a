//! A tenant's webhook settings as clients write them (`PUT /V2/{t}/webhooks`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use url::Origin;
use utoipa::ToSchema;

use crate::domain::serde_util::null_as_default;
use crate::domain::validation::{ValidationErrors, Validator};
use crate::domain::webhook::{
    Authentication, MAX_SECRET_CHARS, MAX_URLS, MAX_USERNAME_CHARS, MIN_HMAC_KEY_CHARS,
    WebhookSettings, WebhookUrl, check_webhook_url,
};

/// One receiver and the categories it wants.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "WebhookUrl", rename_all = "PascalCase")]
#[schema(as = WebhookUrl)]
pub struct WebhookUrlRecord {
    /// Absolute http(s) URL. Loopback, private, link-local and unspecified IP literals
    /// and `localhost` are refused unless the server runs with `--allow-private-webhooks`.
    #[schema(
        required = true,
        min_length = 1,
        example = "https://hooks.example.com/safetrack"
    )]
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

/// A tenant's webhook settings. `Password` is write-only (always null on GET); a PUT
/// with a null or empty `Password` keeps the stored secret, for URLs of the origins it
/// was already sent to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "WebhookSettings", rename_all = "PascalCase")]
#[schema(as = WebhookSettings)]
pub struct WebhookSettingsRecord {
    /// At most 10, no two alike.
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub urls: Vec<WebhookUrlRecord>,
    /// `None` (also null), `Basic`, `Bearer` or `HmacSha256`.
    #[schema(example = "HmacSha256")]
    pub authentication: Option<String>,
    /// Basic only; ignored (and not kept) for the other types.
    pub username: Option<String>,
    /// Basic: the password. Bearer: the token. HmacSha256: the signing key (at least 16
    /// characters). Not kept when `Authentication` is `None`. Always `null` on read.
    pub password: Option<String>,
}

impl WebhookSettingsRecord {
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
            let known = stored.map(WebhookSettings::origins).unwrap_or_default();
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
        match auth {
            Some(authentication) => Ok(WebhookSettings {
                urls,
                authentication,
                username,
                password,
                etag: None,
            }),
            // Added its error above, so `finish` returned it.
            None => Err(ValidationErrors::single(
                "Authentication",
                "must be one of None, Basic, Bearer, HmacSha256",
            )),
        }
    }
}

/// The URLs with their text trimmed, each checked (and no two alike), and the origin of
/// each valid one by its index.
fn checked_urls(
    entries: Vec<WebhookUrlRecord>,
    allow_private: bool,
    v: &mut Validator,
) -> (Vec<WebhookUrl>, Vec<(usize, Origin)>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut urls = Vec::with_capacity(entries.len());
    let mut origins = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
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
        urls.push(WebhookUrl {
            url: raw.to_string(),
            device: entry.device,
            event_notification: entry.event_notification,
            mo_message: entry.mo_message,
            mt_message: entry.mt_message,
            tenant: entry.tenant,
            user: entry.user,
        });
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

impl From<&WebhookUrl> for WebhookUrlRecord {
    fn from(u: &WebhookUrl) -> Self {
        WebhookUrlRecord {
            url: Some(u.url.clone()),
            device: u.device,
            event_notification: u.event_notification,
            mo_message: u.mo_message,
            mt_message: u.mt_message,
            tenant: u.tenant,
            user: u.user,
        }
    }
}

/// The settings as a client reads them: without the secret.
impl From<&WebhookSettings> for WebhookSettingsRecord {
    fn from(s: &WebhookSettings) -> Self {
        WebhookSettingsRecord {
            urls: s.urls.iter().map(WebhookUrlRecord::from).collect(),
            authentication: Some(s.authentication.to_string()),
            username: s.username.clone(),
            password: None,
        }
    }
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
