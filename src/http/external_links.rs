//! External links: `/V2/{tenantVarCode}/tenantexternallinks` and `/{externalLinkId}`.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::TenantScope;
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::external_link::ExternalLink;
use crate::domain::ids::ExternalLinkId;
use crate::http::records::external_link::ExternalLinkRecord;

impl Representable for ExternalLink {
    const NAME: &'static str = "ExternalLink";
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_links, create_link))
        .routes(routes!(get_link, delete_link))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct LinkPath {
    tenantVarCode: String,
    /// Link id (numeric string).
    externalLinkId: String,
}

/// A non-numeric id names nothing.
fn link_id(segment: &str) -> ApiResult<ExternalLinkId> {
    segment.parse().map_err(|_| ApiError::NotFound)
}

/// List the tenant's links, sorted by `Order`, then `LinkId`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/tenantexternallinks", tag = "External links",
    params(TenantParam),
    responses((status = 200, body = [ExternalLinkRecord]), (status = 404, body = Problem)))]
async fn list_links(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<ExternalLink>> {
    Ok(RecordList(
        app.store.list_external_links(scope.code()).await?,
    ))
}

/// Add a link.
///
/// `Name` (1–200 characters), `Link` (absolute http(s) URL) and `Order` are required.
/// Answers 200 with `Location`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/tenantexternallinks", tag = "External links",
    params(TenantParam), request_body = ExternalLinkRecord,
    responses((status = 200, description = "Created; Location names the new link"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn create_link(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(incoming): Body<ExternalLinkRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageConfiguration)?;
    let link = incoming.validated()?;
    let id = app
        .store
        .create_external_link(scope.code(), &link, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/tenantexternallinks/{id}",
        scope.code()
    )))
}

/// Get a link.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/tenantexternallinks/{externalLinkId}",
    tag = "External links", params(LinkPath),
    responses((status = 200, body = ExternalLinkRecord), (status = 404, body = Problem)))]
async fn get_link(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<LinkPath>,
) -> ApiResult<Record<ExternalLink>> {
    let link = app
        .store
        .get_external_link(scope.code(), link_id(&path.externalLinkId)?)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(link))
}

/// Delete a link.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/tenantexternallinks/{externalLinkId}",
    tag = "External links", params(LinkPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn delete_link(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<LinkPath>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    app.store
        .delete_external_link(scope.code(), link_id(&path.externalLinkId)?, &scope.audit())
        .await?;
    Ok(EmptyOk)
}
