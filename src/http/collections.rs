//! Cross-tenant collections: `/V2/{t}/collections` and `/collections/{collectionId}`.
//! A collection names devices of any tenants the caller can access; reports take one as
//! `CollectionId` (docs/reports.md).

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::report::collection::Collection;
use crate::domain::validation::Validator;

impl Representable for Collection {
    const NAME: &'static str = "Collection";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_collections, create_collection))
        .routes(routes!(
            get_collection,
            update_collection,
            delete_collection
        ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct CollectionPath {
    tenantVarCode: String,
    /// Numeric collection id.
    collectionId: String,
}

fn collection_id(raw: &str) -> ApiResult<i64> {
    raw.parse().map_err(|_| ApiError::NotFound)
}

/// Validates the collection and checks that every device lies in the caller's subtree
/// (400 naming each one that does not) and is one device there (409 for an id two
/// tenants there share).
async fn checked(app: &AppState, scope: &TenantScope, c: Collection) -> ApiResult<Collection> {
    let c = c.validated()?;
    let found = app
        .store
        .devices_in_subtree(&scope.caller.tenant_path, &c.device_ids)
        .await?;
    let mut v = Validator::new();
    for (i, id) in c.device_ids.iter().enumerate() {
        if !found.contains(id) {
            v.add(
                format!("DeviceIds[{i}]"),
                format!("'{id}' is not a device of a tenant you can access"),
            );
        }
    }
    v.finish()?;
    Ok(c)
}

/// List the tenant's collections.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/collections", tag = "Collections", params(TenantParam),
    responses((status = 200, body = [Collection]), (status = 404, body = Problem)))]
async fn list_collections(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<Collection>> {
    Ok(RecordList(app.store.list_collections(scope.code()).await?))
}

/// Create a collection (needs AccessAllDevices).
#[utoipa::path(post, path = "/V2/{tenantVarCode}/collections", tag = "Collections", params(TenantParam),
    request_body = Collection,
    responses((status = 200, description = "Created; Location names the collection"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 409, body = Problem)))]
async fn create_collection(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(collection): Body<Collection>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::AccessAllDevices)?;
    let collection = checked(&app, &scope, collection).await?;
    let id = app
        .store
        .create_collection(scope.code(), &collection, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/collections/{id}",
        scope.code()
    )))
}

/// Get a collection.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/collections/{collectionId}", tag = "Collections",
    params(CollectionPath),
    responses((status = 200, body = Collection), (status = 404, body = Problem)))]
async fn get_collection(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<CollectionPath>,
) -> ApiResult<Record<Collection>> {
    let collection = app
        .store
        .get_collection(scope.code(), collection_id(&path.collectionId)?)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(collection))
}

/// Replace a collection (needs AccessAllDevices).
#[utoipa::path(put, path = "/V2/{tenantVarCode}/collections/{collectionId}", tag = "Collections",
    params(CollectionPath), request_body = Collection,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem), (status = 412, body = Problem),
        (status = 409, body = Problem)))]
async fn update_collection(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<CollectionPath>,
    IfMatch(if_match): IfMatch,
    Body(collection): Body<Collection>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    let id = collection_id(&path.collectionId)?;
    let collection = checked(&app, &scope, collection).await?;
    app.store
        .update_collection(
            scope.code(),
            id,
            &collection,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// Delete a collection (needs AccessAllDevices).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/collections/{collectionId}", tag = "Collections",
    params(CollectionPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn delete_collection(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<CollectionPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    app.store
        .delete_collection(
            scope.code(),
            collection_id(&path.collectionId)?,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
