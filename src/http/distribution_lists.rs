//! Address book distribution lists: `/V2/{t}/addressbookdistributionlists`. The strict
//! one: unknown properties (including `SyncToDevices`, which is read-only) are a 400.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::distribution_list::{DistributionListInputRecord, DistributionListRecord};
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::address_book::DistributionList;
use crate::domain::ids::DistributionListId;
use crate::domain::shared::ensure_owner;
use crate::store::{AddressBookWrite, Owned};

impl Representable for DistributionList {
    const NAME: &'static str = "DistributionList";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_lists, create_list))
        .routes(routes!(get_list, update_list, delete_list))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct ListPath {
    tenantVarCode: String,
    listId: String,
}

fn present(owned: Owned<DistributionList>, synced: bool) -> DistributionList {
    DistributionList {
        list_id: Some(owned.id),
        last_updated: owned.updated_at,
        sync_to_devices: synced,
        etag: Some(owned.etag),
        ..owned.record
    }
}

/// Validates a written list, its recipients against the store included.
async fn owned_list(
    app: &AppState,
    scope: &TenantScope,
    raw_id: &str,
) -> ApiResult<Owned<DistributionList>> {
    let id: DistributionListId = raw_id.parse().map_err(|_| ApiError::NotFound)?;
    let list = app
        .store
        .get_address_book::<DistributionList>(&scope.tenant, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    ensure_owner(&list.owner, scope.code(), "list")?;
    Ok(list)
}

/// List distribution lists: the tenant's own, then those ancestors share with subtenants.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/addressbookdistributionlists", tag = "Address book distribution lists",
    params(TenantParam), responses((status = 200, content(([DistributionListRecord] = "application/json"), ([DistributionListRecord] = "application/xml"), ([DistributionListRecord] = "text/xml"), ([DistributionListRecord] = "text/plain"), ([DistributionListRecord] = "text/json"), ([DistributionListRecord] = "application/octet-stream"), ([DistributionListRecord] = "text/csv"))),
        (status = 404, body = Problem), (status = 406, body = Problem)))]
async fn list_lists(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<DistributionList>> {
    let (_, synced) = app.store.synced_to_devices(&scope.tenant).await?;
    let lists = app
        .store
        .list_address_book::<DistributionList>(&scope.tenant)
        .await?;
    Ok(RecordList(
        lists
            .into_iter()
            .map(|l| {
                let is_synced = synced.contains(&l.id);
                present(l, is_synced)
            })
            .collect(),
    ))
}

/// Create a distribution list (JSON, XML or text/plain JSON).
#[utoipa::path(post, path = "/V2/{tenantVarCode}/addressbookdistributionlists", tag = "Address book distribution lists",
    params(TenantParam),
    request_body(content((DistributionListInputRecord = "application/json"), (DistributionListInputRecord = "application/xml"), (DistributionListInputRecord = "text/xml"), (DistributionListInputRecord = "text/plain"), (DistributionListInputRecord = "text/json"))),
    responses((status = 200, description = "Created; Location names the list"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 415, body = Problem)))]
async fn create_list(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(input): Body<DistributionListInputRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageConfiguration)?;
    let (list, references) = input.validated(None)?;
    let write = AddressBookWrite {
        record: &list,
        applies_to_subtenants: list.applies_to_subtenants,
        references: &references,
        removed_entries: &[],
    };
    let id = app
        .store
        .create_address_book(&scope.tenant, write, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/addressbookdistributionlists/{id}",
        scope.code()
    )))
}

/// Get a distribution list.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/addressbookdistributionlists/{listId}", tag = "Address book distribution lists",
    params(ListPath), responses((status = 200, content((DistributionListRecord = "application/json"), (DistributionListRecord = "application/xml"), (DistributionListRecord = "text/xml"), (DistributionListRecord = "text/plain"), (DistributionListRecord = "text/json"), (DistributionListRecord = "application/octet-stream"))),
        (status = 404, body = Problem), (status = 406, body = Problem)))]
async fn get_list(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ListPath>,
) -> ApiResult<Record<DistributionList>> {
    let id: DistributionListId = path.listId.parse().map_err(|_| ApiError::NotFound)?;
    let list = app
        .store
        .get_address_book::<DistributionList>(&scope.tenant, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let (_, synced) = app.store.synced_to_devices(&scope.tenant).await?;
    let is_synced = synced.contains(&list.id);
    Ok(Record(present(list, is_synced)))
}

/// Replace a distribution list.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/addressbookdistributionlists/{listId}", tag = "Address book distribution lists",
    params(ListPath),
    request_body(content((DistributionListInputRecord = "application/json"), (DistributionListInputRecord = "application/xml"), (DistributionListInputRecord = "text/xml"), (DistributionListInputRecord = "text/plain"), (DistributionListInputRecord = "text/json"))),
    responses((status = 200, description = "Updated"), (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn update_list(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ListPath>,
    IfMatch(if_match): IfMatch,
    Body(input): Body<DistributionListInputRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let current = owned_list(&app, &scope, &path.listId).await?;
    let (list, references) = input.validated(Some(current.id))?;
    let write = AddressBookWrite {
        record: &list,
        applies_to_subtenants: list.applies_to_subtenants,
        references: &references,
        removed_entries: &[],
    };
    app.store
        .update_address_book(
            &scope.tenant,
            current.id,
            write,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// Delete a distribution list; refused (409) while another list names it.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/addressbookdistributionlists/{listId}", tag = "Address book distribution lists",
    params(ListPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn delete_list(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ListPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let current = owned_list(&app, &scope, &path.listId).await?;
    app.store
        .delete_address_book::<DistributionList>(
            scope.code(),
            current.id,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
