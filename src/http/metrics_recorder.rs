//! The process's metrics recorder: request counts and latencies, recorded by the request
//! log (`request_context.rs`) and by the workers, rendered by `GET /metrics`
//! (`metrics.rs`). Every label comes from a closed set (`method_label`, the matched
//! route template), so no request can add series.

use std::sync::OnceLock;

use axum::http::Method;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

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

/// What has been recorded, in Prometheus text exposition format (empty without a
/// recorder).
pub fn render() -> String {
    handle().map(|h| h.render()).unwrap_or_default()
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
}
