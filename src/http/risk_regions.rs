//! Risk regions: `/V2/{tenantVarCode}/riskregions` and `/riskregions/{geometryId}`.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::risk_region::RiskRegionRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::ids::GeometryId;
use crate::domain::risk_region::RiskRegion;
use crate::domain::shared::ensure_owner;
use crate::store::{RiskRegionUpdate, StoredRiskRegion};

impl Representable for RiskRegion {
    const NAME: &'static str = "RiskRegion";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_risk_regions, create_risk_region))
        .routes(routes!(
            get_risk_region,
            update_risk_region,
            delete_risk_region
        ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct RiskRegionPath {
    tenantVarCode: String,
    /// The region's `GeometryId` (case-sensitive).
    geometryId: String,
}

/// The region the path tenant means by this GeometryId: its own, else the nearest
/// ancestor's shared one. An id no region may have names nothing.
async fn find(app: &AppState, scope: &TenantScope, id: &str) -> ApiResult<StoredRiskRegion> {
    let id: GeometryId = id.parse().map_err(|_| ApiError::NotFound)?;
    app.store
        .get_risk_region(scope.code(), &scope.tenant.path, &id)
        .await?
        .ok_or(ApiError::NotFound)
}

/// A region the path tenant may change: one it owns (inherited ones: 403).
async fn find_owned(app: &AppState, scope: &TenantScope, id: &str) -> ApiResult<StoredRiskRegion> {
    let found = find(app, scope, id).await?;
    ensure_owner(&found.tenant_code, scope.code(), "risk region")?;
    Ok(found)
}

/// List risk regions.
///
/// The tenant's own and, read-only, those of its ancestors marked
/// `AppliesToSubtenants`, in creation order.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/riskregions", tag = "Risk regions",
    params(TenantParam),
    responses((status = 200, body = [RiskRegionRecord]), (status = 404, body = Problem)))]
async fn list_risk_regions(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<RiskRegion>> {
    let list = app
        .store
        .list_risk_regions(scope.code(), &scope.tenant.path)
        .await?;
    Ok(RecordList(list.into_iter().map(|r| r.region).collect()))
}

/// Create a risk region.
///
/// `GeometryId` (chosen by the client, unique within the tenant, case-sensitive),
/// `Name`, `RiskLevel` 1 to 5 and `Polygon` (rings of `{Lat, Lon}`, checked like a
/// geofence's polygon) are required. The OverallRisk of itineraries it covers follows.
/// Answers 200 with `Location`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/riskregions", tag = "Risk regions",
    params(TenantParam), request_body = RiskRegionRecord,
    responses((status = 200, description = "Created; Location names the new region"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem)))]
async fn create_risk_region(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(incoming): Body<RiskRegionRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageConfiguration)?;
    let (region, shape) = incoming.validated()?;
    app.store
        .create_risk_region(
            scope.code(),
            &scope.tenant.path,
            &region,
            &shape,
            &scope.audit(),
        )
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/riskregions/{}",
        scope.code(),
        region.geometry_id
    )))
}

/// Get a risk region.
///
/// Own or inherited (the tenant's own first when both exist). The `ETag` header
/// carries its version.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/riskregions/{geometryId}", tag = "Risk regions",
    params(RiskRegionPath),
    responses((status = 200, body = RiskRegionRecord, headers(("ETag" = String, description = "Record version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, body = Problem)))]
async fn get_risk_region(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<RiskRegionPath>,
) -> ApiResult<Record<RiskRegion>> {
    Ok(Record(find(&app, &scope, &path.geometryId).await?.region))
}

/// Replace a risk region.
///
/// The `GeometryId` is the path's (one in the body is ignored). Only the owning tenant
/// may (403 below it). Turning `AppliesToSubtenants` off while a subtenant's itinerary
/// has the region attached is a 409. The OverallRisk of affected itineraries follows.
/// `If-Match` is honoured (412).
#[utoipa::path(put, path = "/V2/{tenantVarCode}/riskregions/{geometryId}", tag = "Risk regions",
    params(RiskRegionPath), request_body = RiskRegionRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn update_risk_region(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<RiskRegionPath>,
    IfMatch(if_match): IfMatch,
    Body(mut incoming): Body<RiskRegionRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let existing = find_owned(&app, &scope, &path.geometryId).await?;
    incoming.geometry_id = Some(existing.region.geometry_id.to_string());
    let (region, shape) = incoming.validated()?;
    app.store
        .update_risk_region(
            RiskRegionUpdate {
                tenant_code: scope.code(),
                tenant_path: &scope.tenant.path,
                id: existing.id,
                region: &region,
                shape: &shape,
            },
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// Delete a risk region.
///
/// Refused (409) while an itinerary has it attached. Only the owning tenant may (403
/// below it). `If-Match` is honoured (412).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/riskregions/{geometryId}", tag = "Risk regions",
    params(RiskRegionPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem),
        (status = 412, body = Problem)))]
async fn delete_risk_region(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<RiskRegionPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let existing = find_owned(&app, &scope, &path.geometryId).await?;
    app.store
        .delete_risk_region(
            scope.code(),
            &scope.tenant.path,
            existing.id,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
