//! Extractors: the authenticated caller with its tenant scope, query strings and
//! preconditions — each rejecting with `ApiError`, so every failure is problem+json.

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use base64::Engine;
use serde::de::DeserializeOwned;

use std::net::{IpAddr, Ipv4Addr};

use super::AppState;
use super::client_address::ClientAddress;
use super::error::ApiError;
use crate::auth::Principal;
use crate::domain::access::{Permission, may_send_for_device};
use crate::domain::api_token::hashes_equal;
use crate::domain::ids::TenantCode;
use crate::domain::tenant::TenantNode;
use crate::store::TenantSelection;

/// The name of the browser session's cookie.
pub const SESSION_COOKIE: &str = "safetrack_session";
/// The header a cookie-authenticated unsafe request carries its session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The authenticated caller, by whichever credential the request carries:
/// `Authorization: Basic`, `Authorization: Bearer <API token>`, or — with no
/// `Authorization` header — the session cookie, whose unsafe requests must also pass
/// the CSRF check (same origin, `X-CSRF-Token`).
pub struct Caller(pub Principal);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        // The same outcome for every malformed header: it is a wrong credential.
        let unauthorized = || ApiError::from(crate::auth::AuthError::InvalidCredentials);
        let client = parts.extensions.get::<ClientAddress>().map(|c| c.0);
        let authorization = parts.headers.get(header::AUTHORIZATION);
        let mut principal = match authorization {
            Some(value) => {
                let value = value.to_str().map_err(|_| unauthorized())?;
                let (scheme, credentials) = value.split_once(' ').ok_or_else(unauthorized)?;
                if scheme.eq_ignore_ascii_case("basic") {
                    basic(app, credentials, client).await?
                } else if scheme.eq_ignore_ascii_case("bearer") {
                    app.auth.authenticate_token(credentials.trim()).await?
                } else {
                    return Err(unauthorized());
                }
            }
            None => {
                let secret = session_cookie(&parts.headers).ok_or_else(unauthorized)?;
                let principal = app.auth.authenticate_session(secret).await?;
                if !parts.method.is_safe() {
                    check_csrf(parts, app, secret)?;
                }
                principal
            }
        };
        principal.client = client;
        Ok(Caller(principal))
    }
}

async fn basic(
    app: &AppState,
    encoded: &str,
    client: Option<IpAddr>,
) -> Result<Principal, ApiError> {
    let unauthorized = || ApiError::from(crate::auth::AuthError::InvalidCredentials);
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| unauthorized())?;
    let decoded = String::from_utf8(decoded).map_err(|_| unauthorized())?;
    let (username, password) = decoded.split_once(':').ok_or_else(unauthorized)?;
    if username.is_empty() || password.is_empty() || password.len() > 1024 {
        return Err(unauthorized());
    }
    let client = client.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    Ok(app.auth.authenticate(username, password, client).await?)
}

/// The session cookie's value, if the request carries one.
pub fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.trim())
}

/// A cookie-authenticated unsafe request must come from this server's own origin
/// (`Sec-Fetch-Site: same-origin`, and `Origin`'s host the request's `Host`; at least
/// one of them present) and carry the session's CSRF token; else 403.
fn check_csrf(parts: &Parts, app: &AppState, session_secret: &str) -> Result<(), ApiError> {
    let forbidden = |why: &str| {
        ApiError::Forbidden(format!(
            "a request authenticated by the session cookie {why} (Basic and Bearer requests are not checked)"
        ))
    };
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let fetch_site = header("sec-fetch-site");
    if fetch_site.is_some_and(|site| !site.eq_ignore_ascii_case("same-origin")) {
        return Err(forbidden(
            "must come from this server's own pages (Sec-Fetch-Site)",
        ));
    }
    let origin = header("origin");
    if let Some(origin) = origin {
        let host = header("host").unwrap_or_default();
        let authority = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"));
        if authority.is_none_or(|authority| !authority.eq_ignore_ascii_case(host)) {
            return Err(forbidden(
                "must come from this server's own origin (Origin)",
            ));
        }
    }
    if fetch_site.is_none() && origin.is_none() {
        return Err(forbidden(
            "must say where it comes from (Origin or Sec-Fetch-Site)",
        ));
    }
    let expected = app.auth.csrf_token(session_secret);
    match header(CSRF_HEADER) {
        Some(token) if hashes_equal(token, &expected) => Ok(()),
        _ => Err(forbidden(
            "must carry the session's CsrfToken in X-CSRF-Token",
        )),
    }
}

/// The caller plus the tenant named by `{tenantVarCode}`, which must lie within the
/// caller's home subtree. Anything else is a 404, exactly like a tenant that does not
/// exist, so tenant codes outside one's scope leak nothing.
pub struct TenantScope {
    pub caller: Principal,
    pub tenant: TenantNode,
}

impl TenantScope {
    /// The path tenant alone, or with its subtenants.
    pub fn tenants(&self, subtenants: bool) -> TenantSelection {
        if subtenants {
            TenantSelection::Subtree(self.tenant.path.clone())
        } else {
            TenantSelection::Tenant(self.code().clone())
        }
    }

    pub fn require(&self, permission: Permission) -> Result<(), ApiError> {
        if self.caller.has(permission) {
            return Ok(());
        }
        Err(ApiError::Forbidden(match &self.caller.actor {
            crate::auth::Actor::User { .. } => format!(
                "the {} role does not have the {permission} permission",
                self.caller.role
            ),
            crate::auth::Actor::Token { name, .. } => {
                format!("the API token '{name}' does not have the {permission} permission")
            }
        }))
    }

    /// `DeviceMessages` for one device of the path tenant: granted by the caller's
    /// permissions, or because the device is assigned to the calling user
    /// (`access::may_send_for_device`, the one rule). The device is read only when the
    /// permissions do not settle it; an unknown device is then the same 403.
    pub async fn require_device_messages(
        &self,
        app: &AppState,
        device_id: &str,
    ) -> Result<(), ApiError> {
        if self.caller.has(Permission::DeviceMessages) {
            return Ok(());
        }
        let assigned_to = match self.caller.user() {
            Some(_) => app
                .store
                .get_device(self.code(), device_id)
                .await?
                .and_then(|d| d.user_id),
            None => None,
        };
        if may_send_for_device(self.caller.permissions, self.caller.user(), assigned_to) {
            return Ok(());
        }
        self.require(Permission::DeviceMessages)
    }

    /// Whether the path tenant is the caller's own home tenant.
    pub fn is_home(&self) -> bool {
        self.tenant.code == self.caller.tenant_code
    }

    pub fn code(&self) -> &TenantCode {
        &self.tenant.code
    }
}

impl FromRequestParts<AppState> for TenantScope {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        let Caller(caller) = Caller::from_request_parts(parts, app).await?;
        let params = RawPathParams::from_request_parts(parts, app)
            .await
            .map_err(|_| ApiError::NotFound)?;
        // No tenant or record has an id with NUL in it (and PostgreSQL cannot even be
        // asked: its text type cannot hold the character).
        if params.iter().any(|(_, value)| value.contains('\0')) {
            return Err(ApiError::NotFound);
        }
        // A code that does not parse names no tenant: 404, like an unknown one.
        let code: TenantCode = params
            .iter()
            .find(|(name, _)| *name == "tenantVarCode")
            .and_then(|(_, value)| value.parse().ok())
            .ok_or(ApiError::NotFound)?;
        let tenant = app
            .store
            .tenant_node(&code)
            .await?
            .filter(|node| node.is_within(&caller.tenant_path))
            .ok_or(ApiError::NotFound)?;
        let scope = TenantScope { caller, tenant };
        // Every read needs `Read`: every role has it, an API token only when given it.
        if parts.method.is_safe() {
            scope.require(Permission::Read)?;
        }
        Ok(scope)
    }
}

/// Query string deserialised into `T`; a bad value is a 400 naming the parameter.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        // No value may hold NUL: PostgreSQL's text type cannot, and no id or filter does.
        if let Some((name, _)) =
            form_urlencoded::parse(query.as_bytes()).find(|(_, value)| value.contains('\0'))
        {
            return Err(ApiError::field(
                name.into_owned(),
                "must not contain the NUL character (U+0000)",
            ));
        }
        let deserializer =
            serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(deserializer)
            .map(Query)
            .map_err(|e| {
                let field = e.path().to_string();
                ApiError::field(
                    if field == "." { "query".into() } else { field },
                    e.inner().to_string(),
                )
            })
    }
}

/// The ETag named by `If-Match` (`*` and absence both mean "any version").
pub struct IfMatch(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let Some(value) = parts.headers.get(header::IF_MATCH) else {
            return Ok(IfMatch(None));
        };
        let value = value
            .to_str()
            .map_err(|_| ApiError::bad_request("invalid_header", "If-Match is not valid text"))?
            .trim();
        if value == "*" {
            return Ok(IfMatch(None));
        }
        Ok(IfMatch(Some(unquote_etag(value).to_string())))
    }
}

/// `W/"abc"`, `"abc"` and `abc` all name the version `abc`.
pub fn unquote_etag(value: &str) -> &str {
    let v = value.trim();
    let v = v.strip_prefix("W/").unwrap_or(v);
    v.trim_matches('"')
}
