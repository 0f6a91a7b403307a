//! Address book distribution lists: `/V2/{t}/addressbookdistributionlists`. The strict
//! one: unknown properties (including `SyncToDevices`, which is read-only) are a 400.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, Created, NoContent, RecordList, Representable, Tagged};
use super::recipients::{check_recipients, referenced_by, synced_to_devices};
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::address_book::{DistributionList, DistributionListInput};
use crate::domain::validation::Validator;
use crate::store::{AddressBook, Owned};

impl Representable for DistributionList {
    const NAME: &'static str = "DistributionList";
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
        list_id: Some(owned.id.to_string()),
        last_updated: owned.updated_at,
        sync_to_devices: synced,
        ..owned.record
    }
}

/// Validates a written list, its recipients against the store included.
async fn validated(
    app: &AppState,
    scope: &TenantScope,
    input: DistributionListInput,
    own_id: Option<i64>,
) -> ApiResult<DistributionList> {
    let mut v = Validator::new();
    input.validate(&mut v);
    let list = input.into_list();
    check_recipients(app, scope, &list.recipients, &mut v).await?;
    if let Some(id) = own_id {
        let id = id.to_string();
        for (i, r) in list.recipients.iter().enumerate() {
            if r.list_id.as_deref() == Some(id.as_str()) {
                v.add(
                    format!("Recipients[{i}].ListId"),
                    "a list cannot contain itself",
                );
            }
        }
    }
    v.finish()?;
    Ok(list)
}

async fn owned_list(
    app: &AppState,
    scope: &TenantScope,
    raw_id: &str,
) -> ApiResult<Owned<DistributionList>> {
    let id: i64 = raw_id.parse().map_err(|_| ApiError::NotFound)?;
    let list = app
        .store
        .get_address_book::<DistributionList>(AddressBook::Lists, &scope.tenant, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    if list.owner != scope.code() {
        return Err(ApiError::Forbidden(format!(
            "list {id} belongs to tenant {} and is shared read-only with subtenants",
            list.owner
        )));
    }
    Ok(list)
}

/// List distribution lists: the tenant's own, then those ancestors share with subtenants.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/addressbookdistributionlists", tag = "Address book distribution lists",
    params(TenantParam), responses((status = 200, content(([DistributionList] = "application/json"), ([DistributionList] = "application/xml"), ([DistributionList] = "text/xml"), ([DistributionList] = "text/plain"), ([DistributionList] = "text/json"), ([DistributionList] = "application/octet-stream"), ([DistributionList] = "text/csv"))),
        (status = 404, body = Problem), (status = 406, body = Problem)))]
async fn list_lists(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<DistributionList>> {
    let (_, synced) = synced_to_devices(&app, &scope).await?;
    let lists = app
        .store
        .list_address_book::<DistributionList>(AddressBook::Lists, &scope.tenant)
        .await?;
    Ok(RecordList(
        lists
            .into_iter()
            .map(|l| {
                let is_synced = synced.contains(&l.id.to_string());
                present(l, is_synced)
            })
            .collect(),
    ))
}

/// Create a distribution list (JSON, XML or text/plain JSON).
#[utoipa::path(post, path = "/V2/{tenantVarCode}/addressbookdistributionlists", tag = "Address book distribution lists",
    params(TenantParam),
    request_body(content((DistributionListInput = "application/json"), (DistributionListInput = "application/xml"), (DistributionListInput = "text/xml"), (DistributionListInput = "text/plain"), (DistributionListInput = "text/json"))),
    responses((status = 200, description = "Created; Location names the list"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 415, body = Problem)))]
async fn create_list(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(input): Body<DistributionListInput>,
) -> ApiResult<Created> {
    scope.require(Permission::ManageConfiguration)?;
    let list = validated(&app, &scope, input, None).await?;
    let id = app
        .store
        .create_address_book(
            AddressBook::Lists,
            scope.code(),
            list.applies_to_subtenants,
            &list,
        )
        .await?;
    Ok(Created(format!(
        "/V2/{}/addressbookdistributionlists/{id}",
        scope.code()
    )))
}

/// Get a distribution list.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/addressbookdistributionlists/{listId}", tag = "Address book distribution lists",
    params(ListPath), responses((status = 200, content((DistributionList = "application/json"), (DistributionList = "application/xml"), (DistributionList = "text/xml"), (DistributionList = "text/plain"), (DistributionList = "text/json"), (DistributionList = "application/octet-stream"))),
        (status = 404, body = Problem), (status = 406, body = Problem)))]
async fn get_list(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ListPath>,
) -> ApiResult<Tagged<DistributionList>> {
    let id: i64 = path.listId.parse().map_err(|_| ApiError::NotFound)?;
    let list = app
        .store
        .get_address_book::<DistributionList>(AddressBook::Lists, &scope.tenant, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let (_, synced) = synced_to_devices(&app, &scope).await?;
    let etag = list.etag.clone();
    Ok(Tagged(present(list, synced.contains(&path.listId)), etag))
}

/// Replace a distribution list.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/addressbookdistributionlists/{listId}", tag = "Address book distribution lists",
    params(ListPath),
    request_body(content((DistributionListInput = "application/json"), (DistributionListInput = "application/xml"), (DistributionListInput = "text/xml"), (DistributionListInput = "text/plain"), (DistributionListInput = "text/json"))),
    responses((status = 200, description = "Updated"), (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn update_list(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ListPath>,
    IfMatch(if_match): IfMatch,
    Body(input): Body<DistributionListInput>,
) -> ApiResult<NoContent> {
    scope.require(Permission::ManageConfiguration)?;
    let current = owned_list(&app, &scope, &path.listId).await?;
    let list = validated(&app, &scope, input, Some(current.id)).await?;
    app.store
        .update_address_book(
            AddressBook::Lists,
            scope.code(),
            current.id,
            list.applies_to_subtenants,
            &list,
            if_match.as_deref(),
        )
        .await?;
    Ok(NoContent)
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
) -> ApiResult<NoContent> {
    scope.require(Permission::ManageConfiguration)?;
    let current = owned_list(&app, &scope, &path.listId).await?;
    if let Some(list) =
        referenced_by(&app, &scope.tenant.path, AddressBook::Lists, current.id).await?
    {
        return Err(ApiError::Conflict(format!(
            "the list is a recipient of {list}; remove it there first"
        )));
    }
    app.store
        .delete_address_book(
            AddressBook::Lists,
            scope.code(),
            current.id,
            if_match.as_deref(),
        )
        .await?;
    Ok(NoContent)
}
