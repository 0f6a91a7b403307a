//! Tenants: `/V2/{tenantVarCode}` and its subtenant list.

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, Record, RecordList, Representable};
use super::records::tenant::TenantRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::tenant::Tenant;
use crate::store::TenantDeletion;

impl Representable for Tenant {
    const NAME: &'static str = "Tenant";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(
            get_tenant,
            create_subtenant,
            update_tenant,
            delete_tenant
        ))
        .routes(routes!(list_subtenants))
}

/// The parent code is shown only when the caller can reach the parent.
fn visible(mut tenant: Tenant, scope: &TenantScope) -> Tenant {
    if scope.is_home() {
        tenant.parent_tenant_code = None;
    }
    tenant
}

/// Get a tenant.
#[utoipa::path(get, path = "/V2/{tenantVarCode}", tag = "Tenants", params(TenantParam),
    responses((status = 200, body = TenantRecord), (status = 404, body = Problem)))]
async fn get_tenant(scope: TenantScope, State(app): State<AppState>) -> ApiResult<Record<Tenant>> {
    let tenant = app
        .store
        .get_tenant(scope.code())
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(visible(tenant, &scope)))
}

/// Create a subtenant of the path tenant; the server assigns its code.
#[utoipa::path(post, path = "/V2/{tenantVarCode}", tag = "Tenants", params(TenantParam),
    request_body = TenantRecord,
    responses((status = 200, body = TenantRecord, description = "The created tenant"),
        (status = 400, body = Problem), (status = 403, body = Problem), (status = 404, body = Problem)))]
async fn create_subtenant(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(tenant): Body<TenantRecord>,
) -> ApiResult<Record<Tenant>> {
    scope.require(Permission::ManageTenants)?;
    let tenant = tenant.validated()?;
    let created = app
        .store
        .create_tenant(&scope.tenant, &tenant, &scope.audit())
        .await?;
    Ok(Record(created))
}

/// Replace a tenant's settings.
#[utoipa::path(put, path = "/V2/{tenantVarCode}", tag = "Tenants", params(TenantParam),
    request_body = TenantRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn update_tenant(
    scope: TenantScope,
    State(app): State<AppState>,
    IfMatch(if_match): IfMatch,
    Body(tenant): Body<TenantRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageTenants)?;
    let tenant = tenant.validated()?;
    app.store
        .update_tenant(scope.code(), &tenant, if_match.as_deref(), &scope.audit())
        .await?;
    Ok(EmptyOk)
}

/// Delete a tenant and everything it owns. Refused (409) while it has subtenants;
/// nobody can delete their own home tenant (403).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}", tag = "Tenants", params(TenantParam),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem)))]
async fn delete_tenant(
    scope: TenantScope,
    State(app): State<AppState>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageTenants)?;
    if scope.is_home() {
        return Err(ApiError::Forbidden(
            "you cannot delete your own home tenant".into(),
        ));
    }
    match app
        .store
        .delete_tenant(scope.code(), if_match.as_deref(), &scope.audit())
        .await?
    {
        TenantDeletion::Deleted => {
            // Its users are gone; so must their cached credentials be.
            app.auth.forget_all();
            Ok(EmptyOk)
        }
        TenantDeletion::HasSubtenants => Err(ApiError::Conflict(
            "the tenant still has subtenants; delete them first".into(),
        )),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListSubtenantsQuery {
    /// `true`: every descendant (subtenants of subtenants too), each after its parent;
    /// `ParentTenantCode` tells where each one sits.
    #[serde(default)]
    subtenants: bool,
}

/// List the direct subtenants of a tenant (with `subtenants=true`, all its descendants).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/tenants", tag = "Tenants",
    params(TenantParam, ListSubtenantsQuery),
    responses((status = 200, body = [TenantRecord]), (status = 400, body = Problem),
        (status = 404, body = Problem)))]
async fn list_subtenants(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListSubtenantsQuery>,
) -> ApiResult<RecordList<Tenant>> {
    Ok(RecordList(if query.subtenants {
        app.store
            .list_descendant_tenants(&scope.tenant.path)
            .await?
    } else {
        app.store.list_subtenants(scope.code()).await?
    }))
}
