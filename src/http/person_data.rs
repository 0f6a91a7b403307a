//! `GET /V2/{t}/users/{userId}/export`: a person's data in one JSON document, for a
//! subject-access request (DESIGN §15; the document is `services/person_export.rs`'s).

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, ApiResult, Problem};
use super::extract::TenantScope;
use crate::domain::access::Role;
use crate::domain::audit::{AuditAction, ResourceType};
use crate::domain::user::UserRef;
use crate::services::person_export::{self, Subject};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(export_user))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct ExportPath {
    tenantVarCode: String,
    /// A user id, or a username (anything containing `@`).
    userId: String,
}

/// Everything held about a person, as one JSON document (Administrators only; audited
/// as `Export`): their user record (no secret), profile, the devices assigned to them
/// now, those devices' MO messages (with files), alerts with their timelines, monitoring
/// sessions, and the audit entries about them. Streamed; a download, not a page.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/users/{userId}/export", tag = "Users",
    params(ExportPath),
    responses((status = 200, description = "The person's data", content_type = "application/json"),
        (status = 403, body = Problem), (status = 404, body = Problem)))]
async fn export_user(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ExportPath>,
) -> ApiResult<Response> {
    if scope.caller.role != Role::Administrator {
        return Err(ApiError::Forbidden(
            "only an Administrator may export a person's data".into(),
        ));
    }
    let stored = app
        .store
        .get_user(scope.code(), &UserRef::parse(&path.userId), false)
        .await?
        .ok_or(ApiError::NotFound)?;
    let entry = scope
        .audit()
        .entry(AuditAction::Export, ResourceType::User, stored.id);
    app.store.record_audit(&entry).await?;
    let subject = Subject {
        id: stored.id,
        user: stored.user,
        tenant_code: scope.code().clone(),
        tenant_path: scope.tenant.path.clone(),
    };
    let filename = format!("attachment; filename=\"user-{}-export.json\"", stored.id);
    let chunks =
        person_export::export(app.store.clone(), subject, scope.caller.actor_name()).map(|chunk| {
            chunk
                .map(Bytes::from)
                .map_err(|_| std::io::Error::other("the export failed"))
        });
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_DISPOSITION, filename),
        ],
        Body::from_stream(chunks),
    )
        .into_response())
}
