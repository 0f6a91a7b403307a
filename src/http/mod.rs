//! HTTP: routing, extractors, negotiation, errors. Handlers validate through the domain
//! and persist through the store; no SQL here.

mod access_check;
mod alerts;
mod api_tokens;
mod audit_log;
pub mod client_address;
mod collections;
pub mod console;
mod contacts;
pub mod csv_out;
mod deliveries;
mod devices;
mod distribution_lists;
pub mod error;
mod escalation_policies;
mod external_links;
pub mod extract;
mod gateways;
mod geofences;
mod groups;
mod health;
mod itineraries;
mod itinerary_parts;
pub mod metrics;
mod metrics_recorder;
mod mo_messages;
mod monitoring;
mod mt_messages;
pub mod negotiate;
mod notifications;
pub mod openapi;
pub mod paging;
mod patch;
mod person_data;
mod profiles;
mod push_subscriptions;
pub mod rate_limit;
pub(crate) mod records;
mod reports;
pub mod request_context;
mod risk_regions;
pub mod security_headers;
mod sessions;
mod stream;
mod strict_records;
mod tenants;
mod users;
mod webhooks;
pub mod xml;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::auth::Authenticator;
use crate::services::ingest::Pipeline;
use crate::store::Store;
use error::ApiError;
pub use openapi::TenantParam;
use paging::TokenSigner;

/// Request body limits (docs/api.md, "HTTP").
#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    pub default: usize,
    /// User bodies carry a Base64 photo.
    pub users: usize,
    /// MO message batches carry files (4 MB each).
    pub mo_messages: usize,
}

impl Default for BodyLimits {
    fn default() -> Self {
        Self {
            default: 1024 * 1024,
            users: 4 * 1024 * 1024 + 64 * 1024,
            mo_messages: 64 * 1024 * 1024,
        }
    }
}

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub auth: Arc<Authenticator>,
    pub paging: Arc<TokenSigner>,
    /// Webhook URLs may point at loopback/private addresses (operator's choice).
    pub allow_private_webhooks: bool,
    /// Ingest, the events engine and the live event hub.
    pub pipeline: Arc<Pipeline>,
    /// Runs reports (thresholds from `--report-*`).
    pub reports: crate::services::reports::ReportService,
}

/// Every route with its OpenAPI description. The /V2 routes get content negotiation
/// (except the live stream, which only speaks text/event-stream).
/// `/metrics` is among them unless it has a listener of its own, when it comes back apart
/// (and out of the document).
fn routes(
    limits: BodyLimits,
    limiter: Option<rate_limit::ClientLimiter>,
    metrics: &metrics::MetricsConfig,
) -> (
    Router<AppState>,
    Option<Router<AppState>>,
    utoipa::openapi::OpenApi,
) {
    let (v2, mut api) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(tenants::router())
        .merge(users::router().layer(DefaultBodyLimit::max(limits.users)))
        .merge(person_data::router())
        .merge(profiles::router().layer(DefaultBodyLimit::max(limits.users)))
        .merge(groups::router())
        .merge(devices::router())
        .merge(mo_messages::router().layer(DefaultBodyLimit::max(limits.mo_messages)))
        .merge(mt_messages::router())
        .merge(alerts::router())
        .merge(deliveries::router())
        .merge(contacts::router())
        .merge(distribution_lists::router())
        .merge(notifications::router())
        .merge(escalation_policies::router())
        .merge(monitoring::router())
        .merge(push_subscriptions::router())
        .merge(geofences::router())
        .merge(webhooks::router())
        .merge(external_links::router())
        .merge(api_tokens::router())
        .merge(itineraries::router())
        .merge(itinerary_parts::router())
        .merge(risk_regions::router())
        .merge(reports::router().merge(collections::router()))
        .merge(audit_log::router())
        .layer(middleware::from_fn(negotiate::negotiate))
        // The live stream has one representation (text/event-stream): no negotiation.
        .merge(stream::router())
        .split_for_parts();
    let (mut operations, operations_api) = health::router()
        .merge(gateways::router(limits))
        .split_for_parts();
    api.merge(operations_api);
    let (session_routes, sessions_api) = sessions::router().split_for_parts();
    operations = operations.merge(session_routes.layer(DefaultBodyLimit::max(limits.default)));
    api.merge(sessions_api);
    let (metrics_routes, metrics_api) = metrics::router(metrics).split_for_parts();
    let metrics_apart = if metrics.own_listener {
        Some(metrics_routes)
    } else {
        operations = operations.merge(metrics_routes);
        api.merge(metrics_api);
        None
    };
    openapi::complete(&mut api);
    let mut v2 = v2.layer(DefaultBodyLimit::max(limits.default));
    if let Some(limiter) = limiter {
        v2 = v2.layer(middleware::from_fn_with_state(
            limiter,
            rate_limit::rate_limit,
        ));
    }
    (v2.merge(operations), metrics_apart, api)
}

/// The OpenAPI document (what `/openapi.json` serves and `safetrack openapi` prints).
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    routes(
        BodyLimits::default(),
        None,
        &metrics::MetricsConfig::default(),
    )
    .2
}

/// The routers to serve: the API's, and `/metrics`'s when it has a listener of its own.
pub struct Routers {
    pub api: Router,
    pub metrics: Option<Router>,
}

pub fn router(
    state: AppState,
    limits: BodyLimits,
    rate_limit: rate_limit::RateLimit,
    trusted_proxies: client_address::TrustedProxies,
    metrics_config: &metrics::MetricsConfig,
    console_config: console::ConsoleConfig,
) -> Routers {
    metrics_recorder::init();
    let (routes, metrics_apart, api) = routes(
        limits,
        rate_limit::ClientLimiter::new(rate_limit),
        metrics_config,
    );
    let metrics = metrics_apart.map(|routes| {
        routes
            .fallback(|| async { ApiError::NotFound })
            .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
            .layer(middleware::from_fn(request_context::request_context))
            .layer(middleware::from_fn(security_headers::security_headers))
            .with_state(state.clone())
    });
    let console_config = Arc::new(console_config);
    let api = routes
        .merge(SwaggerUi::new("/docs").url("/openapi.json", api))
        // The console at `/` and its routes; elsewhere the API's 404.
        .fallback(move |request| console::fallback(console_config.clone(), request))
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(CatchPanicLayer::custom(|_| panic_response()))
        .layer(middleware::from_fn(console::no_challenge_for_own_scripts))
        .layer(middleware::from_fn_with_state(
            trusted_proxies,
            client_address::client_address,
        ))
        .layer(middleware::from_fn(request_context::request_context))
        .layer(middleware::from_fn(security_headers::security_headers))
        .with_state(state);
    Routers { api, metrics }
}

fn panic_response() -> Response {
    ApiError::Internal(anyhow::anyhow!("handler panicked")).into_response()
}
