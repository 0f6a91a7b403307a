//! `GET /metrics`: what the recorder (`metrics_recorder.rs`) holds, rendered for
//! Prometheus — on the API's listener or one of its own (`--metrics-listen`), behind an
//! optional bearer token (`--metrics-token`) — with the delivery queue read at scrape
//! time.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::ApiError;
use super::metrics_recorder;
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::time::now;
use crate::store::Store;

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
    let body = metrics_recorder::render();
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
