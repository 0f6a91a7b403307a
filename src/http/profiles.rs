//! User profiles: `/V2/{tenantVarCode}/userprofile` and `/userprofile/{userId or username}`.
//! A user may edit their own profile; editing others' needs `ManageUsers`.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, Record, RecordList, Representable};
use super::patch::apply_patch;
use super::records::profile::UserProfileRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::ids::UserId;
use crate::domain::profile::UserProfile;
use crate::domain::user::UserRef;

impl Representable for UserProfile {
    const NAME: &'static str = "UserProfile";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_profiles))
        .routes(routes!(get_profile, update_profile, patch_profile))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct ProfilePath {
    tenantVarCode: String,
    /// A user id, or a username (anything containing `@`).
    userId: String,
}

/// (user id, profile).
async fn find_profile(
    app: &AppState,
    scope: &TenantScope,
    user_ref: &str,
) -> ApiResult<(UserId, UserProfile)> {
    app.store
        .get_profile(scope.code(), &UserRef::parse(user_ref))
        .await?
        .ok_or(ApiError::NotFound)
}

fn require_self_or_manager(scope: &TenantScope, user_id: UserId) -> ApiResult<()> {
    if scope.caller.user() == Some(user_id) {
        Ok(())
    } else {
        scope.require(Permission::ManageUsers)
    }
}

/// List the profiles of the tenant's users.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/userprofile", tag = "User profiles",
    params(TenantParam), responses((status = 200, body = [UserProfileRecord]), (status = 404, body = Problem)))]
async fn list_profiles(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<UserProfile>> {
    Ok(RecordList(app.store.list_profiles(scope.code()).await?))
}

/// Get a user's profile by user id or username.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/userprofile/{userId}", tag = "User profiles",
    params(ProfilePath), responses((status = 200, body = UserProfileRecord), (status = 404, body = Problem)))]
async fn get_profile(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ProfilePath>,
) -> ApiResult<Record<UserProfile>> {
    Ok(Record(find_profile(&app, &scope, &path.userId).await?.1))
}

/// Replace a user's profile.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/userprofile/{userId}", tag = "User profiles",
    params(ProfilePath), request_body = UserProfileRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn update_profile(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ProfilePath>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<UserProfileRecord>,
) -> ApiResult<EmptyOk> {
    let (id, _) = find_profile(&app, &scope, &path.userId).await?;
    require_self_or_manager(&scope, id)?;
    let profile = incoming.validated()?;
    app.store
        .update_profile(
            scope.code(),
            id,
            &profile,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// Patch a user's profile with a JSON Patch.
#[utoipa::path(patch, path = "/V2/{tenantVarCode}/userprofile/{userId}", tag = "User profiles",
    params(ProfilePath),
    request_body(content = Vec<super::openapi::PatchOperation>, content_type = "application/json-patch+json"),
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn patch_profile(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ProfilePath>,
    IfMatch(if_match): IfMatch,
    Body(patch): Body<json_patch::Patch>,
) -> ApiResult<EmptyOk> {
    let (id, current) = find_profile(&app, &scope, &path.userId).await?;
    require_self_or_manager(&scope, id)?;
    let patched = apply_patch(&UserProfileRecord::from(&current), &patch)?.validated()?;
    // The patch was applied to the version read: refuse if another write came between.
    let expected = if_match.or(current.etag);
    app.store
        .update_profile(
            scope.code(),
            id,
            &patched,
            expected.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
