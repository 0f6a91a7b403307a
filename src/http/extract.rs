//! Extractors: the authenticated caller with its tenant scope, query strings and
//! preconditions — each rejecting with `ApiError`, so every failure is problem+json.

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::header;
use axum::http::request::Parts;
use base64::Engine;
use serde::de::DeserializeOwned;

use std::net::{IpAddr, Ipv4Addr};

use super::AppState;
use super::client_address::ClientAddress;
use super::error::ApiError;
use crate::auth::Principal;
use crate::domain::access::Permission;
use crate::domain::tenant::TenantNode;

/// The authenticated caller (HTTP Basic).
pub struct Caller(pub Principal);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        // The same outcome for every malformed header: it is a wrong credential.
        let unauthorized = || ApiError::from(crate::auth::AuthError::InvalidCredentials);
        let header = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(unauthorized)?;
        let (scheme, encoded) = header.split_once(' ').ok_or_else(unauthorized)?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return Err(unauthorized());
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|_| unauthorized())?;
        let decoded = String::from_utf8(decoded).map_err(|_| unauthorized())?;
        let (username, password) = decoded.split_once(':').ok_or_else(unauthorized)?;
        if username.is_empty() || password.is_empty() || password.len() > 1024 {
            return Err(unauthorized());
        }
        let client = parts
            .extensions
            .get::<ClientAddress>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0);
        let principal = app.auth.authenticate(username, password, client).await?;
        Ok(Caller(principal))
    }
}

/// The caller plus the tenant named by `{tenantVarCode}`, which must lie within the
/// caller's home subtree. Anything else is a 404, exactly like a tenant that does not
/// exist, so tenant codes outside one's scope leak nothing.
pub struct TenantScope {
    pub caller: Principal,
    pub tenant: TenantNode,
    /// Where the request came from (`client_address.rs`), for the audit log.
    pub client: Option<IpAddr>,
}

impl TenantScope {
    pub fn require(&self, permission: Permission) -> Result<(), ApiError> {
        if self.caller.role.grants(permission) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "the {} role does not have the {permission:?} permission",
                self.caller.role
            )))
        }
    }

    /// Whether the path tenant is the caller's own home tenant.
    pub fn is_home(&self) -> bool {
        self.tenant.code == self.caller.tenant_code
    }

    pub fn code(&self) -> &str {
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
        let code = params
            .iter()
            .find(|(name, _)| *name == "tenantVarCode")
            .map(|(_, value)| value.to_string())
            .ok_or(ApiError::NotFound)?;
        let tenant = app
            .store
            .tenant_node(&code)
            .await?
            .filter(|node| node.is_within(&caller.tenant_path))
            .ok_or(ApiError::NotFound)?;
        let client = parts.extensions.get::<ClientAddress>().map(|c| c.0);
        Ok(TenantScope {
            caller,
            tenant,
            client,
        })
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
