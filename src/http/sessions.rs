//! Browser sessions: `POST /auth/session` logs in and sets the session cookie,
//! `GET /auth/session` answers who the caller is, `DELETE /auth/session` logs out
//! (docs/decisions.md, "API tokens and browser sessions"). The cookie then authenticates
//! every `/V2` route through the one `Caller` extractor, which also holds its unsafe
//! requests to the CSRF rule.

use std::net::{IpAddr, Ipv4Addr};

use axum::Json;
use axum::extract::State;
use axum::http::header::{self, HeaderValue};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::client_address::{ClientAddress, OverHttps};
use super::error::{ApiError, ApiResult, Problem};
use super::extract::{Caller, SESSION_COOKIE};
use super::negotiate::Body;
use crate::auth::{AuthError, Principal, Via};
use crate::domain::ids::TenantCode;
use crate::domain::user::UserRef;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(open_session, get_session, close_session))
}

/// `POST /auth/session`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct SessionLogin {
    /// The user's e-mail.
    #[schema(required = true, min_length = 1, example = "admin@safetrack.local")]
    pub username: Option<String>,
    #[schema(required = true, min_length = 1)]
    pub password: Option<String>,
}

/// Who the caller is, as the portal needs it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct SessionCaller {
    /// `null` for an API token.
    pub user_id: Option<String>,
    /// The username, or `token:<Name>` for an API token.
    pub username: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    #[schema(value_type = String)]
    pub tenant_code: TenantCode,
    /// `null` for an API token.
    pub user_role_id: Option<String>,
    pub permissions: Vec<String>,
    /// From the user's profile.
    pub time_zone_id: Option<String>,
    /// From the user's profile.
    pub culture_name: Option<String>,
    /// The profile's `UiLanguage`, else the tenant's `DefaultUiLanguage`.
    pub ui_language: Option<String>,
    /// In the answer to the login and to `GET` with the session cookie: send it as
    /// `X-CSRF-Token` with every unsafe request made with the cookie.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csrf_token: Option<String>,
}

/// Log in for a browser session: sets the `safetrack_session` cookie (`HttpOnly`,
/// `SameSite=Strict`, `Path=/`, `Secure` over HTTPS) and answers the caller with the
/// session's `CsrfToken`. Failed logins count towards the lockout as HTTP Basic ones do.
/// A user with `IsPortalEnabled = false` is refused (403) but keeps API access.
#[utoipa::path(post, path = "/auth/session", tag = "Sessions", security(()),
    request_body = SessionLogin,
    responses((status = 200, body = SessionCaller, description = "Logged in; the session cookie is set",
            headers(("Set-Cookie" = String, description = "The session cookie"))),
        (status = 400, body = Problem), (status = 401, body = Problem),
        (status = 403, body = Problem, description = "Portal access is disabled for this user"),
        (status = 413, body = Problem), (status = 415, body = Problem),
        (status = 429, body = Problem), (status = 500, body = Problem)))]
async fn open_session(
    State(app): State<AppState>,
    parts: Parts,
    Body(login): Body<SessionLogin>,
) -> ApiResult<Response> {
    let mut missing = crate::domain::validation::Validator::new();
    let username = missing.required("Username", login.username.as_deref());
    let password = missing.required("Password", login.password.as_deref());
    missing
        .finish()
        .map_err(|errors| ApiError::Validation(errors.0))?;
    let (username, password) = (username.unwrap_or_default(), password.unwrap_or_default());
    if password.len() > 1024 {
        return Err(AuthError::InvalidCredentials.into());
    }
    let client = parts.extensions.get::<ClientAddress>().map(|c| c.0);
    let mut principal = app
        .auth
        .login(
            username,
            password,
            client.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        )
        .await?;
    let user_id = principal.user().ok_or(AuthError::InvalidCredentials)?;
    let user = app
        .store
        .get_user(&principal.tenant_code, &UserRef::Id(user_id), false)
        .await?
        .ok_or(AuthError::InvalidCredentials)?;
    if !user.user.is_portal_enabled {
        return Err(AuthError::PortalDisabled.into());
    }
    // The session's audit entry names where it was opened from.
    principal.client = client;
    let (secret, mut session) = app.auth.open_session(&principal).await?;
    session.client = client;
    let mut body = describe(&app, &session).await?;
    body.csrf_token = Some(app.auth.csrf_token(&secret));
    let max_age = app.auth.session_max().as_secs();
    let cookie = format!(
        "{SESSION_COOKIE}={secret}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{}",
        secure(&parts)
    );
    Ok(with_cookie(Json(body).into_response(), &cookie))
}

/// Who the caller is: user, tenant, role, permissions, the profile's `TimeZoneId` and
/// `CultureName`, and the UI language. Answers for any credential (also Basic and API
/// tokens); 401 without one.
#[utoipa::path(get, path = "/auth/session", tag = "Sessions",
    responses((status = 200, body = SessionCaller), (status = 401, body = Problem),
        (status = 429, body = Problem), (status = 500, body = Problem)))]
async fn get_session(
    State(app): State<AppState>,
    headers: axum::http::HeaderMap,
    Caller(caller): Caller,
) -> ApiResult<Json<SessionCaller>> {
    let mut answer = describe(&app, &caller).await?;
    // A page reloaded (or a second tab) learns the token it must send again; only a
    // same-origin script can read this answer, as only it could read the login's.
    if let (Via::Session { .. }, Some(secret)) =
        (&caller.via, super::extract::session_cookie(&headers))
    {
        answer.csrf_token = Some(app.auth.csrf_token(secret));
    }
    Ok(Json(answer))
}

/// Log out: the session is deleted on the server and the cookie cleared. With the cookie
/// this is an unsafe request: it needs `X-CSRF-Token` and the server's own origin.
#[utoipa::path(delete, path = "/auth/session", tag = "Sessions",
    responses((status = 200, description = "Logged out; the cookie is cleared",
            headers(("Set-Cookie" = String, description = "The cleared session cookie"))),
        (status = 401, body = Problem), (status = 403, body = Problem),
        (status = 429, body = Problem), (status = 500, body = Problem)))]
async fn close_session(
    State(app): State<AppState>,
    parts: Parts,
    Caller(caller): Caller,
) -> ApiResult<Response> {
    if let Via::Session { id } = caller.via {
        let audit = super::audit_log::at_home(&caller);
        app.store.delete_session(id, Some(&audit)).await?;
    }
    let cookie = format!(
        "{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{}",
        secure(&parts)
    );
    Ok(with_cookie(
        axum::http::StatusCode::OK.into_response(),
        &cookie,
    ))
}

fn secure(parts: &Parts) -> &'static str {
    if parts.extensions.get::<OverHttps>().is_some() {
        "; Secure"
    } else {
        ""
    }
}

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The caller as `GET /auth/session` answers it.
async fn describe(app: &AppState, caller: &Principal) -> ApiResult<SessionCaller> {
    let tenant = app.store.get_tenant(&caller.tenant_code).await?;
    let tenant_language = tenant.and_then(|t| t.default_ui_language);
    let mut answer = SessionCaller {
        user_id: None,
        username: caller.actor_name(),
        first_name: None,
        last_name: None,
        tenant_code: caller.tenant_code.clone(),
        user_role_id: None,
        permissions: caller.permissions.names(),
        time_zone_id: None,
        culture_name: None,
        ui_language: tenant_language,
        csrf_token: None,
    };
    let Some(user_id) = caller.user() else {
        return Ok(answer);
    };
    let user = app
        .store
        .get_user(&caller.tenant_code, &UserRef::Id(user_id), false)
        .await?
        .ok_or(AuthError::InvalidCredentials)?;
    answer.user_id = Some(user_id.to_string());
    answer.first_name = user.user.first_name;
    answer.last_name = user.user.last_name;
    answer.user_role_id = Some(user.role.as_str().to_string());
    if let Some((_, profile)) = app
        .store
        .get_profile(&caller.tenant_code, &UserRef::Id(user_id))
        .await?
    {
        answer.time_zone_id = profile.time_zone_id;
        answer.culture_name = profile.culture_name;
        if profile.ui_language.is_some() {
            answer.ui_language = profile.ui_language;
        }
    }
    Ok(answer)
}
