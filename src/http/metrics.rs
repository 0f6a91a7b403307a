//! Prometheus metrics: request counts and latencies, rendered at `GET /metrics` — on the
//! API's listener or one of its own (`--metrics-listen`), behind an optional bearer token
//! (`--metrics-token`). Every label comes from a closed set (`method_label`, the matched
//! route template), so no request can add series.

use std::sync::{Arc, OnceLock};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::ApiError;
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::time::now;
use crate::store::Store;

/// Created → sent, in seconds: from an instant webhook to a retry hours later.
const DELIVERY_LATENCY_BUCKETS: [f64; 14] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0, 300.0, 1800.0, 3600.0,
];

/// Latency buckets in seconds: fixed buckets keep memory constant however many requests
/// are recorded.
const LATENCY_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// The process-wide recorder (a process can install only one; tests start many apps).
fn handle() -> Option<&'static PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new()
                .set_buckets(&LATENCY_BUCKETS)
                .ok()?
                .set_buckets_for_metric(
                    Matcher::Full("safetrack_delivery_latency_seconds".into()),
                    &DELIVERY_LATENCY_BUCKETS,
                )
                .ok()?
                .install_recorder()
                .ok()?;
            // Recorded samples wait in a queue until upkeep folds them into the buckets;
            // without it they would pile up between scrapes.
            let upkeep = handle.clone();
            std::thread::Builder::new()
                .name("metrics-upkeep".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(std::time::Duration::from_secs(5));
                        upkeep.run_upkeep();
                    }
                })
                .ok()?;
            Some(handle)
        })
        .as_ref()
}

/// Installs the recorder; call once at start-up.
pub fn init() {
    let _ = handle();
}

/// The route label of a request no route matched (404s): one label for any path.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// The method as a label: the standard ones by name, any other one `OTHER` (a method is
/// any token a client makes up).
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "OTHER",
    }
}

/// Records one request; `route` is the matched template (`/V2/{tenantVarCode}/devices`)
/// or `UNMATCHED_ROUTE`, never the request's path.
pub fn record_request(method: &Method, route: &str, status: u16, seconds: f64) {
    let method = method_label(method);
    let status_class = match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    };
    let route = route.to_string();
    metrics::counter!("safetrack_http_requests_total", "method" => method, "route" => route.clone(), "status" => status_class)
        .increment(1);
    metrics::histogram!("safetrack_http_request_duration_seconds", "method" => method, "route" => route, "status" => status_class)
        .record(seconds);
}

/// Where `/metrics` is served and who may read it.
#[derive(Debug, Clone, Default)]
pub struct MetricsConfig {
    /// Served on a listener of its own (`--metrics-listen`), not on the API's.
    pub own_listener: bool,
    /// Required as `Authorization: Bearer <token>` (`--metrics-token`).
    pub token: Option<MetricsToken>,
}

/// The token `/metrics` requires, kept as its SHA-256 (compared in constant time, and
/// never printed by `Debug`).
#[derive(Clone)]
pub struct MetricsToken(Arc<[u8; 32]>);

impl MetricsToken {
    pub fn new(token: &str) -> Self {
        Self(Arc::new(Sha256::digest(token.as_bytes()).into()))
    }

    /// Whether `presented` is the token; comparing digests takes the same time whatever
    /// the length or the first differing byte.
    fn admits(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        bool::from(digest.ct_eq(&*self.0))
    }
}

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsToken(<redacted>)")
    }
}

/// `/metrics` with its token check, if any (then its document says it answers 401).
pub fn router(config: &MetricsConfig) -> OpenApiRouter<AppState> {
    let router = OpenApiRouter::new().routes(routes!(metrics));
    let Some(token) = &config.token else {
        return router;
    };
    let mut router = router.layer(middleware::from_fn_with_state(token.clone(), require_token));
    if let Some(get) = router
        .get_openapi_mut()
        .paths
        .paths
        .get_mut("/metrics")
        .and_then(|item| item.get.as_mut())
    {
        let mut unauthorized = utoipa::openapi::Response::new(
            "The `Authorization: Bearer` token (`--metrics-token`) is missing or wrong",
        );
        unauthorized.content.insert(
            "application/problem+json".into(),
            utoipa::openapi::Content::new(Some(utoipa::openapi::Ref::from_schema_name("Problem"))),
        );
        get.responses
            .responses
            .insert("401".into(), unauthorized.into());
    }
    router
}

/// 401 unless the request carries `Authorization: Bearer <the token>`.
async fn require_token(
    State(token): State<MetricsToken>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, credentials)| credentials.trim());
    if presented.is_some_and(|p| token.admits(p)) {
        return next.run(request).await;
    }
    let mut response = ApiError::Unauthorized {
        code: "unauthorized",
        detail: "/metrics requires the bearer token set with --metrics-token".into(),
    }
    .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"metrics\""),
    );
    response
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "Operations", security(()),
    responses((status = 200, body = String, content_type = "text/plain",
        description = "Prometheus text exposition format 0.0.4")))]
pub async fn metrics(State(app): State<AppState>) -> impl IntoResponse {
    record_delivery_queue(&app.store).await;
    let body = handle().map(|h| h.render()).unwrap_or_default();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}

/// Queue depth by channel and status, and the age of the oldest pending delivery, read
/// from the database at scrape time (so they are right whichever process sent what).
async fn record_delivery_queue(store: &Store) {
    let counts = match store.delivery_queue_counts().await {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "cannot count the delivery queue");
            return;
        }
    };
    for channel in Channel::NAMES {
        for status in std::iter::once(DeliveryStatus::Pending)
            .chain(DeliveryStatus::UNSENT)
            .map(DeliveryStatus::as_str)
        {
            let n = counts
                .iter()
                .find(|c| c.channel.as_str() == *channel && c.status.as_str() == status)
                .map_or(0, |c| c.count);
            metrics::gauge!("safetrack_deliveries", "channel" => *channel, "status" => status)
                .set(n as f64);
        }
    }
    let age = match store.oldest_pending_delivery().await {
        Ok(Some(oldest)) => now().duration_since(oldest).as_secs_f64().max(0.0),
        _ => 0.0,
    };
    metrics::gauge!("safetrack_delivery_oldest_pending_seconds").set(age);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_outside_the_standard_set_are_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        for odd in ["FOO", "get", "PROPFIND", "X1234"] {
            let method = Method::from_bytes(odd.as_bytes()).expect("a token");
            assert_eq!(method_label(&method), "OTHER", "{odd}");
        }
    }

    #[test]
    fn the_token_is_compared_whole() {
        let token = MetricsToken::new("s3cret-token");
        assert!(token.admits("s3cret-token"));
        for wrong in [
            "",
            "s3cret",
            "s3cret-token ",
            "S3CRET-TOKEN",
            "s3cret-token2",
        ] {
            assert!(!token.admits(wrong), "{wrong:?}");
        }
        assert!(!format!("{token:?}").contains("s3cret"));
    }
}
