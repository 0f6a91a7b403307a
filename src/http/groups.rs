//! Device groups: `/V2/{t}/groups` and `/V2/{t}/groups/{groupId}`.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::group::GroupRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::device::Group;
use crate::domain::ids::GroupId;

impl Representable for Group {
    const NAME: &'static str = "Group";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_groups, create_group))
        .routes(routes!(get_group, update_group, delete_group))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
pub struct GroupPath {
    pub tenantVarCode: String,
    pub groupId: String,
}

/// A numeric group id of the path tenant, or 404.
pub fn group_id(raw: &str) -> ApiResult<GroupId> {
    raw.parse().map_err(|_| ApiError::NotFound)
}

/// List the tenant's groups.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/groups", tag = "Groups", params(TenantParam),
    responses((status = 200, body = [GroupRecord]), (status = 404, body = Problem)))]
async fn list_groups(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<Group>> {
    Ok(RecordList(app.store.list_groups(scope.code()).await?))
}

/// Create a group (`Name` unique within the tenant).
#[utoipa::path(post, path = "/V2/{tenantVarCode}/groups", tag = "Groups", params(TenantParam),
    request_body = GroupRecord,
    responses((status = 200, description = "Created; Location names the group"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 409, body = Problem)))]
async fn create_group(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(group): Body<GroupRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::AccessAllDevices)?;
    let group = group.validated()?;
    let id = app
        .store
        .create_group(scope.code(), &group, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!("/V2/{}/groups/{id}", scope.code())))
}

/// Get a group.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/groups/{groupId}", tag = "Groups", params(GroupPath),
    responses((status = 200, body = GroupRecord), (status = 404, body = Problem)))]
async fn get_group(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupPath>,
) -> ApiResult<Record<Group>> {
    let group = app
        .store
        .get_group(scope.code(), group_id(&path.groupId)?)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(group))
}

/// Replace a group.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/groups/{groupId}", tag = "Groups", params(GroupPath),
    request_body = GroupRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn update_group(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupPath>,
    IfMatch(if_match): IfMatch,
    Body(group): Body<GroupRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    let id = group_id(&path.groupId)?;
    let group = group.validated()?;
    app.store
        .update_group(
            scope.code(),
            id,
            &group,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// Delete a group; refused (409) while devices are in it.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/groups/{groupId}", tag = "Groups", params(GroupPath),
    responses((status = 200, description = "Deleted"), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn delete_group(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    app.store
        .delete_group(
            scope.code(),
            group_id(&path.groupId)?,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
