//! Prometheus metrics: request counts and latencies, rendered at `GET /metrics`.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

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

pub fn record_request(method: &str, status: u16, seconds: f64) {
    let status_class = format!("{}xx", status / 100);
    metrics::counter!("safetrack_http_requests_total", "method" => method.to_string(), "status" => status_class.clone())
        .increment(1);
    metrics::histogram!("safetrack_http_request_duration_seconds", "method" => method.to_string(), "status" => status_class)
        .record(seconds);
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "Operations", security(()),
    responses((status = 200, body = String, content_type = "text/plain",
        description = "Prometheus text exposition format 0.0.4")))]
pub async fn metrics() -> impl IntoResponse {
    let body = handle().map(|h| h.render()).unwrap_or_default();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}
