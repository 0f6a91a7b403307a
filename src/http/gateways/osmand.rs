//! OsmAnd / Traccar Client: `GET`/`POST /gateways/osmand/{token}` (the URL an operator
//! types into the phone app, which cannot set headers; also with the trailing slash
//! people type, `/gateways/osmand/{token}/`) and `/gateways/osmand` with
//! `Authorization: Bearer`. Fields and units: `domain::device_protocols::osmand`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{bearer, caller, read_body, service};
use crate::domain::device_protocols::osmand::{self, OsmAndError};
use crate::http::AppState;
use crate::http::error::{ApiError, ApiResult, Problem};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_with_path_token, post_with_path_token))
        .routes(routes!(get_with_slash, post_with_slash))
        .routes(routes!(get_with_bearer, post_with_bearer))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
struct TokenPath {
    /// The gateway's API token (a secret: logged and labelled as `{token}`).
    token: String,
}

/// How a report is answered, by all four routes (GET or POST, token in the path or in a
/// Bearer header). Never built: it only describes the answers in the OpenAPI document.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
enum ReportAnswer {
    /// Stored: empty, or the text of the oldest MT message queued for the device
    #[response(status = 200, content_type = "text/plain")]
    Stored(String),
    /// No device id, or a field that cannot be read
    #[response(status = 400)]
    Unreadable(Problem),
    /// Missing or wrong token
    #[response(status = 401)]
    Unauthorized(Problem),
    /// The token may not post MO messages
    #[response(status = 403)]
    Forbidden(Problem),
    /// No such device in the token's scope
    #[response(status = 404)]
    NoSuchDevice(Problem),
    /// The id names several devices in the token's scope
    #[response(status = 409)]
    AmbiguousDevice(Problem),
    #[response(status = 413)]
    TooLarge(Problem),
    #[response(status = 429)]
    TooManyRequests(Problem),
    #[response(status = 500)]
    Internal(Problem),
}

/// What a request carries, whichever route it came by; its body unread (`None`: a GET).
struct Input {
    token: Option<String>,
    query: Option<String>,
    headers: HeaderMap,
    body: Option<Request>,
}

/// A report with the query string (`id`, `lat`, `lon`, `timestamp`, …). Answers 200 with
/// an empty body, or with the text of the oldest MT `Text` message queued for the device
/// (marked `Sent`), which Traccar Client shows.
#[utoipa::path(get, path = "/gateways/osmand/{token}", tag = "Device gateways", security(()),
    params(TokenPath),
    responses(ReportAnswer))]
async fn get_with_path_token(
    State(app): State<AppState>,
    token: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    report(
        &app,
        Input {
            token: token.ok().map(|p| p.0),
            query,
            headers,
            body: None,
        },
    )
    .await
}

/// A report as a form body (`application/x-www-form-urlencoded`), the query string, or
/// Traccar Client 9's JSON (`application/json`). Answers as the GET does.
#[utoipa::path(post, path = "/gateways/osmand/{token}", tag = "Device gateways", security(()),
    request_body(description = "Form fields (as the query string's), or Traccar Client 9 JSON; may be empty (fields in the query)",
        content((String = "application/x-www-form-urlencoded"), (Object = "application/json"))),
    params(TokenPath),
    responses(ReportAnswer))]
async fn post_with_path_token(
    State(app): State<AppState>,
    token: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Request,
) -> ApiResult<Response> {
    report(
        &app,
        Input {
            token: token.ok().map(|p| p.0),
            query,
            headers,
            body: Some(body),
        },
    )
    .await
}

/// The GET report at the path-token URL typed with a trailing slash.
#[utoipa::path(get, path = "/gateways/osmand/{token}/", tag = "Device gateways", security(()),
    params(TokenPath),
    responses(ReportAnswer))]
async fn get_with_slash(
    state: State<AppState>,
    token: Result<Path<String>, PathRejection>,
    query: RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    get_with_path_token(state, token, query, headers).await
}

/// The POST report at the path-token URL typed with a trailing slash.
#[utoipa::path(post, path = "/gateways/osmand/{token}/", tag = "Device gateways", security(()),
    request_body(description = "As without the trailing slash",
        content((String = "application/x-www-form-urlencoded"), (Object = "application/json"))),
    params(TokenPath),
    responses(ReportAnswer))]
async fn post_with_slash(
    state: State<AppState>,
    token: Result<Path<String>, PathRejection>,
    query: RawQuery,
    headers: HeaderMap,
    body: Request,
) -> ApiResult<Response> {
    post_with_path_token(state, token, query, headers, body).await
}

/// The GET report, with the token in `Authorization: Bearer`.
#[utoipa::path(get, path = "/gateways/osmand", tag = "Device gateways", security(()),
    params(("Authorization" = Option<String>, Header, description = "`Bearer <token>`")),
    responses(ReportAnswer))]
async fn get_with_bearer(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let token = bearer(&headers).map(str::to_string);
    report(
        &app,
        Input {
            token,
            query,
            headers,
            body: None,
        },
    )
    .await
}

/// The POST report, with the token in `Authorization: Bearer`.
#[utoipa::path(post, path = "/gateways/osmand", tag = "Device gateways", security(()),
    request_body(description = "Form fields (as the query string's), or Traccar Client 9 JSON; may be empty (fields in the query)",
        content((String = "application/x-www-form-urlencoded"), (Object = "application/json"))),
    params(("Authorization" = Option<String>, Header, description = "`Bearer <token>`")),
    responses(ReportAnswer))]
async fn post_with_bearer(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Request,
) -> ApiResult<Response> {
    let token = bearer(&headers).map(str::to_string);
    report(
        &app,
        Input {
            token,
            query,
            headers,
            body: Some(body),
        },
    )
    .await
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            let v = v.trim().to_ascii_lowercase();
            v == "application/json" || v.ends_with("+json")
        })
}

impl From<OsmAndError> for ApiError {
    fn from(e: OsmAndError) -> Self {
        match e {
            OsmAndError::MissingDeviceId => ApiError::field("id", e.to_string()),
            OsmAndError::Field { field, message } => ApiError::field(field, message),
            OsmAndError::Json(detail) => ApiError::bad_request(
                "invalid_json",
                format!("the body is not valid JSON: {detail}"),
            ),
        }
    }
}

async fn report(app: &AppState, input: Input) -> ApiResult<Response> {
    // The token first: the body is read only for a known caller.
    let caller = caller(app, input.token.as_deref()).await?;
    let body = match input.body {
        Some(request) => read_body(request).await?,
        None => Default::default(),
    };
    let query = input.query.unwrap_or_default();
    let reports = if is_json(&input.headers) && !body.is_empty() {
        osmand::parse_json(&body)?
    } else {
        let form = std::str::from_utf8(&body)
            .map_err(|_| ApiError::bad_request("invalid_body", "the form body is not UTF-8"))?;
        // Fields in the query and in a form body both count; the body's win.
        let input = match (query.is_empty(), form.trim().is_empty()) {
            (_, true) => query,
            (true, false) => form.to_string(),
            (false, false) => format!("{query}&{form}"),
        };
        vec![osmand::parse_query(&input)?]
    };
    let gateways = service(app);
    let mut device = None;
    for outcome in gateways.ingest(&caller, reports).await {
        device = Some(outcome.result?.device);
    }
    let text = match device {
        Some(device) => gateways.take_text(&device).await?,
        None => None,
    };
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.unwrap_or_default(),
    )
        .into_response())
}
