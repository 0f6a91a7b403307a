//! Devices (`/V2/{t}/devices`) and the deleted-devices log (`/V2/{t}/deleteddevices`).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::paging::Page;
use super::patch::apply_patch;
use super::records::device::DeviceRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::device::{DeletedDevice, Device, DeviceFields, device_type_list};
use crate::domain::device_protocols::identity::IdentifierConflict;
use crate::domain::ids::UserId;

impl Representable for Device {
    const NAME: &'static str = "Device";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

impl Representable for DeletedDevice {
    const NAME: &'static str = "DeletedDevice";
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_devices, create_device))
        .routes(routes!(
            get_device,
            update_device,
            patch_device,
            delete_device
        ))
        .routes(routes!(list_deleted_devices))
        .routes(routes!(get_deleted_device))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct DevicePath {
    tenantVarCode: String,
    deviceId: String,
}

/// Most devices one page returns (and the default).
pub const MAX_PAGE_SIZE: u32 = 10_000;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListDevicesQuery {
    /// Include the devices of every subtenant (each names its `TenantCode`).
    #[serde(default)]
    subtenants: bool,
    /// At most 10,000 (the default).
    #[param(minimum = 1, maximum = 10000)]
    page_size: Option<u32>,
    /// Only the devices assigned to this user (`Device.UserId`): the worker app's
    /// devices, without reading the whole tenant (an extension beyond the spec).
    #[param(value_type = Option<String>, pattern = "^[0-9]+$")]
    user_id: Option<UserId>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct SubtenantsQuery {
    /// Include the subtenants' deleted devices.
    #[serde(default)]
    subtenants: bool,
}

/// What the client set, its rules checked against the tenant's device types, and the
/// group and assigned user looked up.
async fn validated(
    app: &AppState,
    scope: &TenantScope,
    device: DeviceRecord,
) -> ApiResult<DeviceFields> {
    let tenant = app
        .store
        .get_tenant(scope.code())
        .await?
        .ok_or(ApiError::NotFound)?;
    let device = device.validated(&device_type_list(tenant.device_types.as_deref()))?;
    if let Some(group) = device.group_id
        && !app.store.group_exists(scope.code(), group.get()).await?
    {
        return Err(ApiError::field(
            "GroupId",
            format!("no group {group} in this tenant"),
        ));
    }
    if let Some(user) = device.user_id
        && !app
            .store
            .user_exists_in_subtree(&scope.tenant.path, user)
            .await?
    {
        return Err(ApiError::field(
            "UserId",
            format!("no user {user} in this tenant or its subtenants"),
        ));
    }
    Ok(device)
}

/// A write refused for a gateway identifier another device has (`domain::device_protocols::
/// identity`): 409 naming the field, and the other device only when the caller's scope
/// holds its tenant.
fn identifier_refusal(
    scope: &TenantScope,
    written: Result<(), IdentifierConflict>,
) -> ApiResult<()> {
    written.map_err(|conflict| ApiError::Conflict(conflict.detail(&scope.caller.tenant_path)))
}

async fn find_device(app: &AppState, scope: &TenantScope, device_id: &str) -> ApiResult<Device> {
    app.store
        .get_device(scope.code(), device_id)
        .await?
        .ok_or(ApiError::NotFound)
}

/// List the tenant's devices in the order they were registered, paged with
/// `X-CONTINUATIONTOKEN`; `subtenants=true` covers the path tenant's whole subtree.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices", tag = "Devices",
    params(TenantParam, ListDevicesQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [DeviceRecord], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more devices exist"))),
        (status = 400, description = "A bad page size or continuation token", body = Problem),
        (status = 404, body = Problem)))]
async fn list_devices(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListDevicesQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<Device>> {
    let assigned_to = query
        .user_id
        .map(|user| user.to_string())
        .unwrap_or_default();
    let listing = format!(
        "devices:{}:{}:{assigned_to}",
        scope.code(),
        query.subtenants
    );
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .list_devices(
            &scope.tenants(query.subtenants),
            query.user_id,
            request.after.unwrap_or(0),
            request.size + 1,
        )
        .await?;
    let page = Page::from_fetched(fetched, request, &app.paging, &listing, |(id, _)| *id);
    Ok(Page {
        items: page.items.into_iter().map(|(_, device)| device).collect(),
        next: page.next,
    })
}

/// Register a device. `DeviceId` is unique within the tenant (409 for a second device of
/// the id here); another tenant's device of the same id is that tenant's own. An
/// `IridiumImei` or `SecondaryDeviceId` names one device in the whole installation: 409
/// when another device (any tenant) has it as any identifier, or has this `DeviceId` as
/// its `IridiumImei` or `SecondaryDeviceId`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/devices", tag = "Devices", params(TenantParam),
    request_body = DeviceRecord,
    responses((status = 200, description = "Created; Location names the device"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 409, body = Problem)))]
async fn create_device(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(device): Body<DeviceRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::AccessAllDevices)?;
    let device = validated(&app, &scope, device).await?;
    let written = app
        .store
        .create_device(scope.code(), &device, &scope.audit())
        .await?;
    identifier_refusal(&scope, written)?;
    let id = device.device_id;
    Ok(OkWithLocation(format!("/V2/{}/devices/{id}", scope.code())))
}

/// Get a device.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices/{deviceId}", tag = "Devices", params(DevicePath),
    responses((status = 200, body = DeviceRecord), (status = 404, body = Problem)))]
async fn get_device(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
) -> ApiResult<Record<Device>> {
    Ok(Record(find_device(&app, &scope, &path.deviceId).await?))
}

/// Replace a device (its `DeviceId` is the path's); 409 as for a new device when its
/// identifiers clash with another device's.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/devices/{deviceId}", tag = "Devices", params(DevicePath),
    request_body = DeviceRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem),
        (status = 412, body = Problem)))]
async fn update_device(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    IfMatch(if_match): IfMatch,
    Body(mut device): Body<DeviceRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    find_device(&app, &scope, &path.deviceId).await?;
    device.device_id = Some(path.deviceId.clone());
    let device = validated(&app, &scope, device).await?;
    let written = app
        .store
        .update_device(scope.code(), &device, if_match.as_deref(), &scope.audit())
        .await?;
    identifier_refusal(&scope, written)?;
    Ok(EmptyOk)
}

/// Patch a device with a JSON Patch.
#[utoipa::path(patch, path = "/V2/{tenantVarCode}/devices/{deviceId}", tag = "Devices", params(DevicePath),
    request_body(content = Vec<super::openapi::PatchOperation>, content_type = "application/json-patch+json"),
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem),
        (status = 412, body = Problem)))]
async fn patch_device(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    IfMatch(if_match): IfMatch,
    Body(patch): Body<json_patch::Patch>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    let current = find_device(&app, &scope, &path.deviceId).await?;
    let expected = if_match.unwrap_or_else(|| current.etag.clone());
    let patched = apply_patch(&DeviceRecord::from(&current), &patch)?;
    let mut patched = validated(&app, &scope, patched).await?;
    patched.device_id = current.device_id;
    let written = app
        .store
        .update_device(scope.code(), &patched, Some(&expected), &scope.audit())
        .await?;
    identifier_refusal(&scope, written)?;
    Ok(EmptyOk)
}

/// Delete a device; it is recorded in the deleted-devices log.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/devices/{deviceId}", tag = "Devices", params(DevicePath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn delete_device(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    app.store
        .delete_device(
            scope.code(),
            &path.deviceId,
            &scope.caller.actor_name(),
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// List deleted devices (needs AccessAllDevices).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/deleteddevices", tag = "Deleted devices",
    params(TenantParam, SubtenantsQuery),
    responses((status = 200, body = [DeletedDevice]), (status = 403, body = Problem), (status = 404, body = Problem)))]
async fn list_deleted_devices(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<SubtenantsQuery>,
) -> ApiResult<RecordList<DeletedDevice>> {
    scope.require(Permission::AccessAllDevices)?;
    let tenants = scope.tenants(query.subtenants);
    Ok(RecordList(
        app.store.list_deleted_devices(&tenants, None).await?,
    ))
}

/// The deletions of one device id, newest first (needs AccessAllDevices).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/deleteddevices/{deviceId}", tag = "Deleted devices",
    params(DevicePath, SubtenantsQuery),
    responses((status = 200, body = [DeletedDevice]), (status = 403, body = Problem), (status = 404, body = Problem)))]
async fn get_deleted_device(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Query(query): Query<SubtenantsQuery>,
) -> ApiResult<RecordList<DeletedDevice>> {
    scope.require(Permission::AccessAllDevices)?;
    let tenants = scope.tenants(query.subtenants);
    Ok(RecordList(
        app.store
            .list_deleted_devices(&tenants, Some(&path.deviceId))
            .await?,
    ))
}
