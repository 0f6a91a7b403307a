//! Device gateways over HTTP (README, "Devices that speak other protocols"): thin adapters that read a protocol with
//! `domain::device_protocols` and hand the reports to `services::gateway_ingest`. Outside /V2:
//! devices speak their own formats, authenticate with an API token (in a header, or in
//! the path where the sender cannot set one) and get the answers their protocol expects.
//!
//! A body is read only once its caller is known: each handler takes the request unread,
//! checks the token from the headers or the path (401/403 before a byte of the body is
//! read, so an unauthenticated sender cannot make the server hold its upload), then
//! reads the body within the route's limit (`read_body`).

mod garmin;
mod osmand;
mod owntracks;
mod traccar;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use utoipa_axum::router::OpenApiRouter;

use super::AppState;
use super::error::ApiError;
use crate::services::gateway_ingest::{self, GatewayCaller, GatewayError, GatewayIngest};

pub fn router(limits: super::BodyLimits) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(osmand::router().layer(DefaultBodyLimit::max(limits.default)))
        .merge(traccar::router().layer(DefaultBodyLimit::max(limits.default)))
        .merge(owntracks::router().layer(DefaultBodyLimit::max(limits.default)))
        // Garmin 4.0 events may carry media.
        .merge(garmin::router().layer(DefaultBodyLimit::max(limits.mo_messages)))
}

/// The service, for a request.
fn service(app: &AppState) -> GatewayIngest {
    GatewayIngest::new(app.store.clone(), app.pipeline.clone())
}

/// The body of a request whose caller is known, within the route's limit
/// (`DefaultBodyLimit`): 413 over it, 400 for a body that cannot be read.
async fn read_body(request: Request) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, &()).await.map_err(|e| {
        if let Some(timeout) = crate::server::body_timeout(&e) {
            ApiError::RequestTimeout(timeout.to_string())
        } else if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::body_too_large("the body is over the request size limit")
        } else {
            ApiError::bad_request("invalid_body", e.body_text())
        }
    })
}

/// `Authorization: Bearer <token>`, if the request has one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

/// The caller a gateway token names, allowed to post MO messages: 401 for a missing or
/// refused token (saying why, as for any Bearer request), 403 for one without
/// `DeviceMessages`.
async fn caller(app: &AppState, token: Option<&str>) -> Result<GatewayCaller, ApiError> {
    let token = token.ok_or_else(|| ApiError::Unauthorized {
        code: "unauthorized",
        detail: "the gateway's API token is missing".into(),
    })?;
    let caller = gateway_ingest::authenticate(&app.auth, token).await?;
    if !caller.may_post {
        return Err(ApiError::Forbidden(
            "the API token does not have the DeviceMessages permission (posting MO messages)"
                .into(),
        ));
    }
    Ok(caller)
}

impl From<GatewayError> for ApiError {
    fn from(e: GatewayError) -> Self {
        match e {
            GatewayError::UnknownDevice(_) => ApiError::NotFound,
            e @ GatewayError::Ambiguous { .. } => ApiError::Conflict(e.to_string()),
            GatewayError::Invalid(fields) => ApiError::Validation(fields),
            GatewayError::TooLarge(fields) => ApiError::parts_too_large(fields),
            GatewayError::Store(e) => e.into(),
        }
    }
}
