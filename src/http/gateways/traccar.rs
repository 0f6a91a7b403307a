//! Traccar forwarding: `POST /gateways/traccar`, where a Traccar server's JSON position
//! forwarding (`forward.type=json`, `forward.url`) and event forwarding
//! (`event.forward.url`) point, the token in `Authorization: Bearer` (Traccar's
//! `forward.header` / `event.forward.header`). Fields, alarms and the dedupe key:
//! `domain::device_protocols::traccar`.
//!
//! Traccar resends a position it got no 2xx for (`forward.retry.*`): 200 means the
//! report is stored (or already was, which the dedupe recognises); a device of no
//! device in the token's scope (404) or a body that cannot be read (400) stores nothing.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{bearer, caller, read_body, service};
use crate::domain::device_protocols::traccar::{self, Forwarded, TraccarError};
use crate::http::AppState;
use crate::http::error::{ApiError, ApiResult, Problem};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(traccar_forwarded))
}

impl From<TraccarError> for ApiError {
    fn from(e: TraccarError) -> Self {
        match e {
            TraccarError::Json(detail) => ApiError::bad_request(
                "invalid_json",
                format!("the body is not valid JSON: {detail}"),
            ),
            TraccarError::Field { field, message } => ApiError::field(field, message),
        }
    }
}

/// A forwarded position (`{"position", "device"}`) or event (`{"event", "position",
/// "device"}`).
#[utoipa::path(post, path = "/gateways/traccar", tag = "Device gateways", security(()),
    params(("Authorization" = Option<String>, Header, description = "`Bearer <token>`")),
    request_body(content = Object, content_type = "application/json",
        description = "Traccar's JSON position forwarding `{\"position\": {...}, \"device\": {...}}` or event forwarding `{\"event\": {...}, \"position\": {...}, \"device\": {...}}`"),
    responses((status = 200, description = "Stored (or already stored); an event without a position stores nothing"),
        (status = 400, body = Problem, description = "The body is not a Traccar forwarding body"),
        (status = 401, body = Problem, description = "Missing or wrong token"),
        (status = 403, body = Problem, description = "The token may not post MO messages"),
        (status = 404, body = Problem, description = "No device `uniqueId` in the token's scope"),
        (status = 409, body = Problem, description = "`uniqueId` names several devices in the token's scope"),
        (status = 413, body = Problem), (status = 429, body = Problem),
        (status = 500, body = Problem, description = "Not stored: Traccar retries")))]
async fn traccar_forwarded(
    State(app): State<AppState>,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<Response> {
    // The token first: the body is read only for a known caller.
    let caller = caller(&app, bearer(&headers)).await?;
    let body = read_body(request).await?;
    let gateways = service(&app);
    match traccar::parse(&body)? {
        Forwarded::Report(report) => {
            for outcome in gateways.ingest(&caller, vec![*report]).await {
                outcome.result?;
            }
        }
        // Nothing to store, but the device must be one of the token's.
        Forwarded::Nothing(device) => {
            gateways.find_device(&caller.tenant_path, &device).await?;
        }
    }
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "",
    )
        .into_response())
}
