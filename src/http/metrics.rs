//! Prometheus metrics: request counts and latencies, rendered at `GET /metrics`.

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use super::AppState;
use crate::domain::delivery::{CHANNELS, PENDING, UNSENT_STATUSES};
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
    for channel in CHANNELS {
        for status in std::iter::once(PENDING).chain(UNSENT_STATUSES) {
            let n = counts
                .iter()
                .find(|c| c.channel == channel && c.status == status)
                .map_or(0, |c| c.count);
            metrics::gauge!("safetrack_deliveries", "channel" => channel, "status" => status)
                .set(n as f64);
        }
    }
    let age = match store.oldest_pending_delivery().await {
        Ok(Some(oldest)) => now().duration_since(oldest).as_secs_f64().max(0.0),
        _ => 0.0,
    };
    metrics::gauge!("safetrack_delivery_oldest_pending_seconds").set(age);
}
