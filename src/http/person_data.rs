//! A person's data (DESIGN §15), for Administrators: `GET /V2/{t}/users/{userId}/export`,
//! one JSON document for a subject-access request (`services/person_export.rs`), and
//! `POST …/erase`, which removes their positions and messages and anonymises them
//! (`store/person_erasure.rs`).

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, ApiResult, Problem};
use super::extract::TenantScope;
use super::negotiate::{Body as Request, EmptyOk};
use crate::domain::access::Role;
use crate::domain::audit::{AuditAction, ResourceType};
use crate::domain::user::UserRef;
use crate::services::person_export::{self, Subject};
use crate::store::{Erasure, StoredUser, TenantSelection};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(export_user))
        .routes(routes!(erase_user))
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
    let stored = administrators_subject(&scope, &app, &path).await?;
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

/// The user the path names in the path tenant, when the caller is an Administrator.
async fn administrators_subject(
    scope: &TenantScope,
    app: &AppState,
    path: &ExportPath,
) -> ApiResult<StoredUser> {
    if scope.caller.role != Role::Administrator {
        return Err(ApiError::Forbidden(
            "only an Administrator may export or erase a person's data".into(),
        ));
    }
    app.store
        .get_user(scope.code(), &UserRef::parse(&path.userId), false)
        .await?
        .ok_or(ApiError::NotFound)
}

/// The body of `POST …/users/{userId}/erase`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
struct EraseRequest {
    /// The user's `Username`, typed again: the erasure cannot be undone.
    confirm: Option<String>,
}

/// Erase a person (Administrators only; audited as `Erase`, naming the user id): the
/// messages of the devices assigned to them go, their devices' last positions and their
/// alerts' positions are cleared, the bodies of those devices' deliveries become
/// `[erased]`, and their username, full name and phone numbers are replaced by
/// `[erased]` in alerts, timelines, deliveries, monitoring sessions and the audit log's
/// actors within their tenant's subtree. The account stays, disabled and anonymous
/// (`erased-<id>@erased.invalid`), so records that refer to it still resolve. `Confirm`
/// must be the user's `Username`. Refused (409) while one of their devices has an open
/// or acknowledged alert or a current monitoring session.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/users/{userId}/erase", tag = "Users",
    params(ExportPath), request_body = EraseRequest,
    responses((status = 200, description = "Erased"),
        (status = 400, description = "Confirm is not the user's Username", body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, description = "An open alert or a current session, or the last administrator", body = Problem)))]
async fn erase_user(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ExportPath>,
    Request(request): Request<EraseRequest>,
) -> ApiResult<EmptyOk> {
    let stored = administrators_subject(&scope, &app, &path).await?;
    if request.confirm.as_deref().map(str::trim) != Some(stored.user.username.as_str()) {
        return Err(ApiError::field(
            "Confirm",
            "must be the user's Username, typed again to confirm the erasure",
        ));
    }
    let devices: Vec<_> = app
        .store
        .devices_assigned_to(
            &TenantSelection::Subtree(scope.tenant.path.clone()),
            stored.id,
        )
        .await?
        .into_iter()
        .map(|d| (d.tenant_code, d.device_id.as_str().to_string()))
        .collect();
    let identifiers = identifiers(&app, &scope, &stored).await?;
    let erasure = Erasure {
        id: stored.id,
        tenant_path: &scope.tenant.path,
        devices: &devices,
        identifiers: &identifiers,
    };
    app.store.erase_person(erasure, &scope.audit()).await?;
    Ok(EmptyOk)
}

/// What names the person in free text: their username, full name and phone numbers.
async fn identifiers(
    app: &AppState,
    scope: &TenantScope,
    stored: &StoredUser,
) -> ApiResult<Vec<String>> {
    let user = &stored.user;
    let mut found = vec![user.username.clone()];
    if let (Some(first), Some(last)) = (&user.first_name, &user.last_name) {
        found.push(format!("{first} {last}"));
    }
    if let Some((_, profile)) = app
        .store
        .get_profile(scope.code(), &UserRef::Id(stored.id))
        .await?
    {
        found.extend(
            [
                profile.cell_phone,
                profile.daytime_phone,
                profile.evening_phone,
            ]
            .into_iter()
            .flatten(),
        );
    }
    found.retain(|i| !i.trim().is_empty());
    Ok(found)
}
