//! Liveness and readiness, outside /V2 and without authentication.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, Problem};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "Operations", security(()),
    responses((status = 200, body = String, content_type = "text/plain", description = "`ok`")))]
async fn healthz() -> &'static str {
    "ok"
}

/// The database answers.
#[utoipa::path(get, path = "/readyz", tag = "Operations", security(()),
    responses((status = 200, body = String, content_type = "text/plain", description = "`ready`"),
        (status = 503, body = Problem, description = "The database does not answer")))]
async fn readyz(State(app): State<AppState>) -> axum::response::Response {
    match app.store.ping().await {
        Ok(()) => (StatusCode::OK, "ready").into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            let mut response =
                ApiError::Internal(anyhow::anyhow!("database unreachable")).into_response();
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            response
        }
    }
}
