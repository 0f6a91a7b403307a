//! Headers every response carries, whichever route (or none) answered it: browsers must
//! never sniff a type (a gateway's `text/plain` answer echoes text that devices and
//! users wrote, which a browser could otherwise run as a same-origin script), and
//! nothing but the console and the API documentation is a page: every other answer gets
//! a policy under which a browser fetches, runs and frames nothing. Over HTTPS served
//! directly (`--tls-cert`), every answer also tells the browser to use nothing but HTTPS
//! for this host for a year (`Strict-Transport-Security`, without `includeSubDomains`:
//! other hosts of the domain are not ours to decide); behind a TLS-terminating proxy
//! that header is the proxy's to send.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::{
    CONTENT_SECURITY_POLICY, STRICT_TRANSPORT_SECURITY, X_CONTENT_TYPE_OPTIONS,
};
use axum::middleware::Next;
use axum::response::Response;

use crate::server::DirectTls;

/// The policy of every answer that sets none of its own (the console sets its own).
pub const NOTHING_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; sandbox";

/// Sent on every answer over a TLS connection this process terminated: a year.
pub const HSTS_POLICY: &str = "max-age=31536000";

/// The interactive API documentation (Swagger UI) is a page with scripts of its own.
fn is_documentation(path: &str) -> bool {
    path == "/docs" || path.starts_with("/docs/")
}

pub async fn security_headers(request: Request, next: Next) -> Response {
    let documentation = is_documentation(request.uri().path());
    let direct_tls = request.extensions().get::<DirectTls>().is_some();
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if direct_tls {
        headers.insert(
            STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(HSTS_POLICY),
        );
    }
    if !documentation && !headers.contains_key(CONTENT_SECURITY_POLICY) {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(NOTHING_POLICY),
        );
    }
    response
}
