//! The one error type of the HTTP layer, rendered once as RFC 9457 problem+json.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::AuthError;
use crate::domain::validation::{FieldError, ValidationErrors};
use crate::services::reports::ReportFailure;
use crate::store::StoreError;

use super::request_context::current_request_id;

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("{detail}")]
    BadRequest { code: &'static str, detail: String },
    #[error("{detail}")]
    Unauthorized { code: &'static str, detail: String },
    #[error("{0}")]
    Forbidden(String),
    #[error("not found")]
    NotFound,
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("not acceptable")]
    NotAcceptable(String),
    #[error("{0}")]
    Conflict(String),
    #[error("precondition failed")]
    PreconditionFailed,
    /// 413: the body over the request limit (`parts` empty), or parts of it over their
    /// own limits (each named in `parts`).
    #[error("{detail}")]
    TooLarge {
        detail: String,
        parts: Vec<FieldError>,
    },
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 408: the request body did not arrive within `--body-read-timeout-seconds`.
    #[error("{0}")]
    RequestTimeout(String),
    #[error("rate limited")]
    RateLimited { retry_after_secs: u64 },
    /// 503: the server is overloaded (no database connection came free in time); nothing
    /// was done, and the same request may be sent again after `Retry-After`.
    #[error("overloaded")]
    Overloaded { retry_after_secs: u64 },
    /// 503: the database cannot be reached or cannot take the write now; nothing was
    /// done, and the same request may be sent again after `Retry-After`.
    #[error("database unavailable: {cause}")]
    Unavailable {
        cause: String,
        retry_after_secs: u64,
    },
    #[error("internal error: {0}")]
    Internal(#[from] anyhow::Error),
    /// A report that failed before its first row.
    #[error("the report {report} failed: {failure}")]
    ReportFailed {
        report: &'static str,
        failure: ReportFailure,
    },
}

/// RFC 9457 problem details, as every error response carries them.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// A URI naming the problem type (`urn:safetrack:problem:<code>`).
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// Stable machine-readable word: validation_failed, not_found, conflict, …
    pub code: String,
    /// The offending fields, for validation errors.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ProblemField>,
    pub request_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProblemField {
    pub field: String,
    pub message: String,
}

impl ApiError {
    pub fn bad_request(code: &'static str, detail: impl Into<String>) -> Self {
        ApiError::BadRequest {
            code,
            detail: detail.into(),
        }
    }

    /// 413 for the body as a whole.
    pub fn body_too_large(detail: impl Into<String>) -> Self {
        ApiError::TooLarge {
            detail: detail.into(),
            parts: Vec::new(),
        }
    }

    /// 413 naming each part of the body over its own limit.
    pub fn parts_too_large(parts: Vec<FieldError>) -> Self {
        let detail = format!(
            "{} part(s) are too large: {}",
            parts.len(),
            field_list(&parts)
        );
        ApiError::TooLarge { detail, parts }
    }

    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation(ValidationErrors::single(field, message).0)
    }

    fn parts(&self) -> (StatusCode, &'static str, String) {
        use ApiError::*;
        match self {
            Validation(errors) => (
                StatusCode::BAD_REQUEST,
                "validation_failed",
                format!(
                    "{} field(s) are invalid: {}",
                    errors.len(),
                    field_list(errors)
                ),
            ),
            BadRequest { code, detail } => (StatusCode::BAD_REQUEST, code, detail.clone()),
            Unauthorized { code, detail } => (StatusCode::UNAUTHORIZED, code, detail.clone()),
            Forbidden(detail) => (StatusCode::FORBIDDEN, "forbidden", detail.clone()),
            NotFound => (
                StatusCode::NOT_FOUND,
                "not_found",
                "the resource does not exist or is outside your scope".into(),
            ),
            MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this method is not supported on this path".into(),
            ),
            NotAcceptable(detail) => (StatusCode::NOT_ACCEPTABLE, "not_acceptable", detail.clone()),
            Conflict(detail) => (StatusCode::CONFLICT, "conflict", detail.clone()),
            PreconditionFailed => (
                StatusCode::PRECONDITION_FAILED,
                "precondition_failed",
                "the record has changed since the ETag in If-Match was read".into(),
            ),
            TooLarge { detail, .. } => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                detail.clone(),
            ),
            UnsupportedMediaType(detail) => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                detail.clone(),
            ),
            RequestTimeout(detail) => (
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                detail.clone(),
            ),
            RateLimited { retry_after_secs } => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("too many requests; retry after {retry_after_secs} s"),
            ),
            Overloaded { retry_after_secs } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                format!(
                    "the server is overloaded and did nothing; retry after {retry_after_secs} s"
                ),
            ),
            Unavailable {
                retry_after_secs, ..
            } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "database_unavailable",
                format!(
                    "the database is unavailable and nothing was done; retry after {retry_after_secs} s"
                ),
            ),
            Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "an internal error occurred; quote the request id when reporting it".into(),
            ),
            ReportFailed { report, .. } => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "report_failed",
                format!("the report {report} failed; quote the request id when reporting it"),
            ),
        }
    }
}

/// The fields named, comma separated.
fn field_list(errors: &[FieldError]) -> String {
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    fields.join(", ")
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, detail) = self.parts();
        let request_id = current_request_id();
        match &self {
            ApiError::Internal(err) => {
                tracing::error!(request_id = request_id.as_deref().unwrap_or("-"), error = %format!("{err:#}"), "internal error");
            }
            ApiError::ReportFailed { report, failure } => {
                tracing::error!(request_id = request_id.as_deref().unwrap_or("-"), report, error = %failure, "report failed");
            }
            ApiError::Overloaded { .. } => {
                tracing::warn!(
                    request_id = request_id.as_deref().unwrap_or("-"),
                    "overloaded: no database connection came free in time"
                );
            }
            ApiError::Unavailable { cause, .. } => {
                tracing::warn!(
                    request_id = request_id.as_deref().unwrap_or("-"),
                    %cause,
                    "the database is unavailable"
                );
            }
            _ => {}
        }
        let errors = match &self {
            ApiError::Validation(errors) | ApiError::TooLarge { parts: errors, .. } => errors
                .iter()
                .map(|e| ProblemField {
                    field: e.field.clone(),
                    message: e.message.clone(),
                })
                .collect(),
            _ => Vec::new(),
        };
        let problem = Problem {
            kind: format!("urn:safetrack:problem:{code}"),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail,
            code: code.to_string(),
            errors,
            request_id,
        };
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        match &self {
            ApiError::Unauthorized { .. } => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"safetrack\", charset=\"UTF-8\""),
                );
            }
            ApiError::Overloaded { retry_after_secs }
            | ApiError::Unavailable {
                retry_after_secs, ..
            }
            | ApiError::RateLimited { retry_after_secs } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            _ => {}
        }
        response
    }
}

impl From<crate::domain::shared::SharedReadOnly> for ApiError {
    fn from(e: crate::domain::shared::SharedReadOnly) -> Self {
        ApiError::Forbidden(e.to_string())
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(e: ValidationErrors) -> Self {
        ApiError::Validation(e.0)
    }
}

/// How long an overloaded server asks a client to wait: a connection comes free within
/// a transaction's time, so a second is plenty and keeps an SOS's retry prompt.
pub const OVERLOADED_RETRY_AFTER_SECS: u64 = 1;

/// How long a client is asked to wait when the database cannot be reached: the pool
/// reconnects on the next request, so a retry soon finds it back without flooding it.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ApiError::NotFound,
            StoreError::Conflict(detail) => ApiError::Conflict(detail),
            StoreError::PreconditionFailed => ApiError::PreconditionFailed,
            StoreError::Database(err) => ApiError::Internal(err.into()),
            StoreError::Corrupt(detail) => ApiError::Internal(anyhow::anyhow!(detail)),
            StoreError::Invalid(errors) => ApiError::Validation(errors.0),
            StoreError::Unavailable(cause) => ApiError::Unavailable {
                cause,
                retry_after_secs: UNAVAILABLE_RETRY_AFTER_SECS,
            },
            StoreError::Busy => ApiError::Overloaded {
                retry_after_secs: OVERLOADED_RETRY_AFTER_SECS,
            },
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::InvalidCredentials => ApiError::Unauthorized {
                code: "unauthorized",
                detail:
                    "wrong or missing credentials (HTTP Basic with the user's e-mail and password)"
                        .into(),
            },
            AuthError::Locked(until) => ApiError::Unauthorized {
                code: "locked",
                detail: format!("account locked after repeated failed logins until {until}"),
            },
            AuthError::Disabled => ApiError::Unauthorized {
                code: "account_disabled",
                detail: "this account is disabled".into(),
            },
            AuthError::Token(refusal) => {
                use crate::auth::TokenRefusal::*;
                let (code, detail) = match refusal {
                    Malformed => ("token_malformed", "the bearer token is not an API token of this server (st_…)"),
                    Unknown => ("token_unknown", "no such API token"),
                    Revoked => ("token_revoked", "this API token was revoked"),
                    Expired => ("token_expired", "this API token has expired"),
                };
                ApiError::Unauthorized { code, detail: detail.into() }
            }
            AuthError::Session(refusal) => {
                use crate::auth::SessionRefusal::*;
                let (code, detail) = match refusal {
                    Unknown => ("session_unknown", "no such session (logged out or ended); log in again"),
                    Idle => ("session_idle", "the session ended after a time without use; log in again"),
                    Expired => ("session_expired", "the session reached its maximum lifetime; log in again"),
                };
                ApiError::Unauthorized { code, detail: detail.into() }
            }
            AuthError::PortalDisabled => ApiError::Forbidden(
                "portal access is disabled for this user (IsPortalEnabled = false); the API remains available with HTTP Basic or API tokens".into(),
            ),
            AuthError::Busy => ApiError::RateLimited {
                retry_after_secs: crate::auth::BUSY_RETRY_AFTER_SECS,
            },
            AuthError::Store(err) => err.into(),
            AuthError::Internal(msg) => ApiError::Internal(anyhow::anyhow!(msg)),
        }
    }
}

/// The field a serde error is about: its path, or for unknown fields the field's own name.
pub fn field_of(path: &str, message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((name, _)) = rest.split_once('`')
    {
        return match path {
            "." => name.to_string(),
            p if p == name || p.ends_with(&format!(".{name}")) => p.to_string(),
            p => format!("{p}.{name}"),
        };
    }
    if path == "." {
        "body".into()
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool that stays exhausted is the server overloaded (503, retry), not a fault
    /// (500): the client's request did nothing and may be sent again.
    #[test]
    fn an_exhausted_pool_answers_503_with_retry_after() {
        let error = ApiError::from(StoreError::from(sqlx::Error::PoolTimedOut));
        let response = error.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            response.headers().get(header::RETRY_AFTER),
            Some(&HeaderValue::from_static("1"))
        );
        assert_eq!(
            response.headers().get(header::CONTENT_TYPE),
            Some(&HeaderValue::from_static("application/problem+json"))
        );
    }

    /// A database that cannot be reached (its connection reset, its pool closed) is a
    /// 503 with `Retry-After` like an exhausted pool, not a fault of the server's (500).
    #[test]
    fn an_unreachable_database_answers_503_with_retry_after() {
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        for cause in [sqlx::Error::Io(reset), sqlx::Error::PoolClosed] {
            let response = ApiError::from(StoreError::from(cause)).into_response();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                response.headers().get(header::RETRY_AFTER),
                Some(&HeaderValue::from_static("2"))
            );
        }
    }
}
