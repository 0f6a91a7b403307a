//! Garmin inReach IPC Outbound: `POST /gateways/garmin`, the token in
//! `X-Outbound-Auth-Token` (what Garmin's portal sends) or `Authorization: Bearer`.
//! Events and codes: `domain::device_protocols::garmin`.
//!
//! Garmin resends a post until it is answered 200, so 200 means every event of it is
//! stored or already was (a device's events in batches of at most 1,000, the MO limit,
//! in order: a post of more is stored whole, never dropped). An event that can never be stored — one that does not parse,
//! or names no device of the token's scope (a device removed), or names several — is
//! logged and skipped: refusing the post would have Garmin resend it for ever and hold
//! back every other device's events (an SOS among them). A failure to store is a 500, and
//! the resend stores what is missing (the rest dedupes).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{bearer, caller, read_body, service};
use crate::domain::device_protocols::garmin;
use crate::http::AppState;
use crate::http::error::{ApiError, ApiResult, Problem};
use crate::services::gateway_ingest::GatewayError;

/// The header Garmin's IPC Outbound sends the configured token in.
pub const TOKEN_HEADER: &str = "x-outbound-auth-token";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(post_events))
}

fn token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .or_else(|| bearer(headers))
}

/// An IPC Outbound post: `{"Version", "Events": [...]}`, events of several devices.
#[utoipa::path(post, path = "/gateways/garmin", tag = "Device gateways", security(()),
    params(("X-Outbound-Auth-Token" = Option<String>, Header,
            description = "The gateway's API token (or `Authorization: Bearer <token>`)")),
    request_body(content = Object, content_type = "application/json",
        description = "IPC Outbound `{\"Version\": \"2.0\", \"Events\": [...]}`"),
    responses((status = 200, description = "Every event is stored, already stored, or can never be (logged and skipped)"),
        (status = 400, body = Problem, description = "The body is not an IPC Outbound post"),
        (status = 401, body = Problem, description = "Missing or wrong token"),
        (status = 403, body = Problem, description = "The token may not post MO messages"),
        (status = 413, body = Problem), (status = 429, body = Problem),
        (status = 500, body = Problem, description = "Not all stored: Garmin resends the post")))]
async fn post_events(
    State(app): State<AppState>,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<Response> {
    // The token first: the body is read only for a known caller.
    let caller = caller(&app, token(&headers)).await?;
    let body = read_body(request).await?;
    let post = garmin::parse_post(&body)
        .map_err(|e| ApiError::bad_request("invalid_post", e.to_string()))?;
    let mut reports = Vec::with_capacity(post.events.len());
    for event in post.events {
        match event {
            Ok(report) => reports.push(report),
            Err(e) => tracing::warn!(
                gateway = "garmin",
                imei = e.imei.as_deref().unwrap_or("-"),
                error = %e,
                "event skipped: it cannot be read"
            ),
        }
    }
    let mut failure = None;
    for outcome in service(&app).ingest(&caller, reports).await {
        match outcome.result {
            Ok(_) => {}
            Err(GatewayError::Store(e)) => failure = Some(e),
            Err(e) => tracing::warn!(
                gateway = "garmin",
                imei = %outcome.id,
                events = outcome.reports.len(),
                error = %e,
                "events skipped"
            ),
        }
    }
    if let Some(e) = failure {
        return Err(e.into());
    }
    Ok(StatusCode::OK.into_response())
}
