//! OwnTracks in HTTP mode: `POST /gateways/owntracks`, the URL set in the app (Mode
//! HTTP), with HTTP Basic as the app sends it: the username is free (the token's name or
//! the device's, shown in the app), the password is the gateway's API token
//! (`Authorization: Bearer` works too, for a proxy). The device is the app's Device ID,
//! which it sends as `X-Limit-D`, else the payload's `topic`. Payloads, fields and the
//! answer: `domain::device_protocols::owntracks`.
//!
//! The app takes any answer as posted (even a 5xx) and queues only what it could not
//! send, so every refusal says why in its problem body and in the request log.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{bearer, caller, read_body, service};
use crate::domain::device_protocols::owntracks::{self, OwnTracksError, Payload};
use crate::http::AppState;
use crate::http::error::{ApiError, ApiResult, Problem};

/// The header the app names its Device ID in.
const DEVICE_HEADER: &str = "x-limit-d";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(owntracks_payload))
}

impl From<OwnTracksError> for ApiError {
    fn from(e: OwnTracksError) -> Self {
        match e {
            OwnTracksError::Json(detail) => ApiError::bad_request(
                "invalid_json",
                format!("the body is not valid JSON: {detail}"),
            ),
            OwnTracksError::Field { field, message } => ApiError::field(field, message),
            e @ OwnTracksError::NoDevice => ApiError::field("X-Limit-D", e.to_string()),
            e @ OwnTracksError::Encrypted => {
                ApiError::bad_request("encrypted_payload", e.to_string())
            }
        }
    }
}

/// The token of `Authorization: Basic` (its password) or `Bearer`.
fn token(headers: &HeaderMap) -> Option<String> {
    if let Some(token) = bearer(headers) {
        return Some(token.to_string());
    }
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let credentials = String::from_utf8(decoded).ok()?;
    let (_username, password) = credentials.split_once(':')?;
    Some(password.trim().to_string()).filter(|p| !p.is_empty())
}

fn device_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(DEVICE_HEADER)?.to_str().ok()
}

/// One payload of the app (`_type` `location`, `transition`, `lwt`, or one with nothing
/// to store). Answers the JSON array the app reads: `[]`, or the oldest MT `Text`
/// message queued for the device (then `Sent`) as a `cmd` the app shows.
#[utoipa::path(post, path = "/gateways/owntracks", tag = "Device gateways", security(()),
    params(("Authorization" = Option<String>, Header, description = "`Basic` with the token as the password, or `Bearer <token>`"),
        ("X-Limit-D" = Option<String>, Header, description = "The app's Device ID: the device's `DeviceId` or `SecondaryDeviceId` (else the payload's `topic` names it)")),
    request_body(content = Object, content_type = "application/json",
        description = "An OwnTracks payload (`{\"_type\": \"location\", \"tst\", \"lat\", \"lon\", ...}`); may be empty"),
    responses((status = 200, description = "Stored (or nothing to store): `[]` or a `cmd` carrying the queued text", content_type = "application/json", body = Object),
        (status = 400, body = Problem, description = "Not an OwnTracks payload, no device named, or encrypted"),
        (status = 401, body = Problem, description = "Missing or wrong token"),
        (status = 403, body = Problem, description = "The token may not post MO messages"),
        (status = 404, body = Problem, description = "No such device in the token's scope"),
        (status = 409, body = Problem, description = "The Device ID names several devices in the token's scope"),
        (status = 413, body = Problem), (status = 429, body = Problem),
        (status = 500, body = Problem)))]
async fn owntracks_payload(
    State(app): State<AppState>,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<Response> {
    // The token first: the body is read only for a known caller.
    let caller = caller(&app, token(&headers).as_deref()).await?;
    let body = read_body(request).await?;
    let mut text = None;
    if let Payload::Report { message, topic } = owntracks::parse(&body)? {
        let report = owntracks::report(*message, device_header(&headers), topic)?;
        let gateways = service(&app);
        let mut device = None;
        for outcome in gateways.ingest(&caller, vec![report]).await {
            device = Some(outcome.result?.device);
        }
        if let Some(device) = device {
            text = gateways.take_text(&device).await?;
        }
    }
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        owntracks::answer(text.as_deref()),
    )
        .into_response())
}
