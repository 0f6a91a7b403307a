//! Geofences: `/V2/{tenantVarCode}/geofences` and `/geofences/{geofenceId}`.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::geofence::GeofenceRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::geofence::Geofence;
use crate::domain::ids::GeofenceId;
use crate::domain::shared::ensure_owner;
use crate::store::StoredGeofence;

impl Representable for Geofence {
    const NAME: &'static str = "Geofence";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_geofences, create_geofence))
        .routes(routes!(get_geofence, update_geofence, delete_geofence))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct GeofencePath {
    tenantVarCode: String,
    /// Geofence id (numeric string).
    geofenceId: String,
}

/// A geofence visible from the path tenant: its own, or an ancestor's marked
/// `AppliesToSubtenants`. Anything else (including a non-numeric id) is a 404.
async fn find(app: &AppState, scope: &TenantScope, id: &str) -> ApiResult<StoredGeofence> {
    let id: GeofenceId = id.parse().map_err(|_| ApiError::NotFound)?;
    app.store
        .get_geofence(scope.code(), &scope.tenant.path, id)
        .await?
        .ok_or(ApiError::NotFound)
}

/// A geofence the path tenant may change: one it owns. Inherited ones are read-only (403).
async fn find_owned(app: &AppState, scope: &TenantScope, id: &str) -> ApiResult<StoredGeofence> {
    let found = find(app, scope, id).await?;
    ensure_owner(&found.tenant_code, scope.code(), "geofence")?;
    Ok(found)
}

/// List geofences.
///
/// The tenant's own and, read-only, those of its ancestors marked `AppliesToSubtenants`,
/// in id order.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/geofences", tag = "Geofences",
    params(TenantParam),
    responses((status = 200, body = [GeofenceRecord]), (status = 404, body = Problem)))]
async fn list_geofences(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<Geofence>> {
    let list = app
        .store
        .list_geofences(scope.code(), &scope.tenant.path)
        .await?;
    Ok(RecordList(list.into_iter().map(|g| g.geofence).collect()))
}

/// Create a geofence.
///
/// The shape is checked by `GeofenceType` (circle: `CircleCentre` and `CircleRadius`;
/// polygon: `PolygonPositions`, rings of 3+ distinct points that do not cross
/// themselves, open rings closed by the server; polyline: `PolylinePositions` of 2+
/// points and `FenceWidth`); shape fields of another type are a 400 naming the field.
/// Names are unique within a tenant (409). Answers 200 with `Location`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/geofences", tag = "Geofences",
    params(TenantParam), request_body = GeofenceRecord,
    responses((status = 200, description = "Created; Location names the new geofence"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem)))]
async fn create_geofence(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(incoming): Body<GeofenceRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageConfiguration)?;
    let (geofence, _) = incoming.validated()?;
    let id = app
        .store
        .create_geofence(scope.code(), &geofence, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/geofences/{id}",
        scope.code()
    )))
}

/// Get a geofence.
///
/// Own or inherited. The `ETag` header carries its version.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/geofences/{geofenceId}", tag = "Geofences",
    params(GeofencePath),
    responses((status = 200, body = GeofenceRecord, headers(("ETag" = String, description = "Record version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, body = Problem)))]
async fn get_geofence(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GeofencePath>,
) -> ApiResult<Record<Geofence>> {
    Ok(Record(find(&app, &scope, &path.geofenceId).await?.geofence))
}

/// Replace a geofence.
///
/// Only the owning tenant may (same rules as POST); an inherited geofence answers 403.
/// `If-Match` is honoured (412).
#[utoipa::path(put, path = "/V2/{tenantVarCode}/geofences/{geofenceId}", tag = "Geofences",
    params(GeofencePath), request_body = GeofenceRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn update_geofence(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GeofencePath>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<GeofenceRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let existing = find_owned(&app, &scope, &path.geofenceId).await?;
    let (geofence, _) = incoming.validated()?;
    app.store
        .update_geofence(
            scope.code(),
            existing.id,
            &geofence,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// Delete a geofence (extension).
///
/// An extension: the contract lists no DELETE for geofences. Only the owning tenant
/// may; an inherited geofence answers 403. `If-Match` is honoured (412).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/geofences/{geofenceId}", tag = "Geofences",
    params(GeofencePath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn delete_geofence(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GeofencePath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let existing = find_owned(&app, &scope, &path.geofenceId).await?;
    app.store
        .delete_geofence(
            scope.code(),
            existing.id,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
