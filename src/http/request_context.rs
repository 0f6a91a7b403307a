//! Per-request context: the request id (taken from `X-Request-Id` or generated, echoed
//! back), one log line per request and its metrics.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

use crate::domain::api_token::TOKEN_PREFIX;

tokio::task_local! {
    static REQUEST_ID: String;
}

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The id of the request being handled, if called from within one.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

fn acceptable_id(value: &HeaderValue) -> Option<String> {
    let s = value.to_str().ok()?;
    let ok = !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    ok.then(|| s.to_string())
}

/// What a secret path segment (a gateway's `{token}`) is logged as.
pub const REDACTED: &str = "[redacted]";

/// `path` as logged: each segment the route template names `{token}` is redacted, and so
/// is any segment that reads as an API token (`st_…`, percent-encoded or not), whatever
/// route it came to: a mistyped gateway URL still carries a live secret.
fn loggable_path(path: &str, route: Option<&str>) -> String {
    let template = route.unwrap_or("");
    path.split('/')
        .zip(template.split('/').chain(std::iter::repeat("")))
        .map(|(segment, template)| {
            if template == "{token}" || looks_like_token(segment) {
                REDACTED
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a path segment starts like a token secret (any case, after percent-decoding).
fn looks_like_token(segment: &str) -> bool {
    let decoded = percent_decoded(segment);
    decoded
        .get(..TOKEN_PREFIX.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(TOKEN_PREFIX))
}

fn percent_decoded(segment: &str) -> String {
    form_urlencoded::parse(format!("s={}", segment.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

pub async fn request_context(request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(acceptable_id)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let method = request.method().clone();
    // The route template for metrics (the path itself would be a label per id).
    let route = request.extensions().get::<MatchedPath>().cloned();
    let path = loggable_path(
        request.uri().path(),
        route.as_ref().map(MatchedPath::as_str),
    );
    let started = Instant::now();

    let mut response = REQUEST_ID.scope(id.clone(), next.run(request)).await;

    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    super::metrics_recorder::record_request(
        &method,
        route.as_ref().map_or(
            super::metrics_recorder::UNMATCHED_ROUTE,
            MatchedPath::as_str,
        ),
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    tracing::info!(
        request_id = %id,
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        latency_us = started.elapsed().as_micros() as u64,
        "request"
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_segments_are_redacted() {
        assert_eq!(
            loggable_path(
                "/gateways/osmand/st_secret",
                Some("/gateways/osmand/{token}")
            ),
            "/gateways/osmand/[redacted]"
        );
        assert_eq!(
            loggable_path(
                "/V2/1000/devices/d1",
                Some("/V2/{tenantVarCode}/devices/{deviceId}")
            ),
            "/V2/1000/devices/d1"
        );
        assert_eq!(loggable_path("/nowhere/x", None), "/nowhere/x");
    }

    #[test]
    fn a_token_in_any_path_is_redacted() {
        for path in [
            "/gateways/osmand/st_secret/",
            "/gateways/osmand/st_secret/extra",
            "/gateways/osmnad/ST_secret",
            "/gateways/osmand/st%5Fsecret",
            "/gateways/osmand/%73t_secret",
        ] {
            let logged = loggable_path(path, None);
            assert!(
                !logged.to_lowercase().contains("secret"),
                "{path}: {logged}"
            );
            assert!(logged.contains(REDACTED), "{path}: {logged}");
        }
        assert_eq!(
            loggable_path("/V2/1000/devices/first", None),
            "/V2/1000/devices/first"
        );
        assert_eq!(
            loggable_path("/V2/1000/devices/s", None),
            "/V2/1000/devices/s"
        );
    }
}
