//! MT messages: `/V2/{t}/devices/{deviceId}/mtmessages` and `/mtmessages/{messageId}` —
//! messages and commands queued for a device (docs/api.md, "Devices"), by the API or by a
//! notification's device-command recipients. A device gateway lists the `Queued` ones
//! and reports their progress with a JSON Patch of `Status`.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, Representable};
use super::paging::Page;
use super::patch::apply_patch;
use super::records::mt_message::MtMessageRecord;
use crate::domain::access::Permission;
use crate::domain::ids::{DeviceId, MtMessageId};
use crate::domain::mt_message::{MtMessage, MtStatus};

/// Most messages one page returns (and the default).
pub const MAX_PAGE_SIZE: u32 = 1000;

impl Representable for MtMessage {
    const NAME: &'static str = "MtMessage";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_mt_messages, post_mt_message))
        .routes(routes!(get_mt_message, patch_mt_message))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct DevicePath {
    tenantVarCode: String,
    deviceId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct MtMessagePath {
    tenantVarCode: String,
    deviceId: String,
    /// Numeric message id.
    messageId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only messages in this status (a gateway asks for `Queued`).
    #[param(value_type = Option<MtStatus>)]
    status: Option<String>,
    /// Newest first (by `MessageId`, descending).
    #[serde(default)]
    newest_first: bool,
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

/// The device must be the path tenant's (404 otherwise, like any record out of scope;
/// an id no device may have names none).
async fn require_device(app: &AppState, scope: &TenantScope, raw: &str) -> ApiResult<DeviceId> {
    let device_id = device_id(raw)?;
    if app.store.device_exists(scope.code(), &device_id).await? {
        Ok(device_id)
    } else {
        Err(ApiError::NotFound)
    }
}

/// A path device id that no device may have names nothing (404).
fn device_id(raw: &str) -> ApiResult<DeviceId> {
    raw.parse().map_err(|_| ApiError::NotFound)
}

/// A path id that is no `MtMessageId` names nothing (404).
fn message_id(raw: &str) -> ApiResult<MtMessageId> {
    raw.parse().map_err(|_| ApiError::NotFound)
}

async fn find_message(
    app: &AppState,
    scope: &TenantScope,
    path: &MtMessagePath,
) -> ApiResult<MtMessage> {
    let id = message_id(&path.messageId)?;
    let device_id = device_id(&path.deviceId)?;
    app.store
        .get_mt_message(scope.code(), &device_id, id)
        .await?
        .ok_or(ApiError::NotFound)
}

/// List a device's MT messages in `MessageId` order (oldest first, or newest first with
/// `newestFirst=true`), paged with `X-CONTINUATIONTOKEN`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices/{deviceId}/mtmessages", tag = "MT messages",
    params(DevicePath, ListQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [MtMessageRecord], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more messages exist"))),
        (status = 400, description = "A bad status, page size or continuation token", body = Problem),
        (status = 404, description = "No such device in this tenant", body = Problem)))]
async fn list_mt_messages(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Query(query): Query<ListQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<MtMessage>> {
    let status = query
        .status
        .as_deref()
        .map(str::parse::<MtStatus>)
        .transpose()
        .map_err(|_| {
            ApiError::field(
                "status",
                format!("must be one of {}", MtStatus::NAMES.join(", ")),
            )
        })?;
    let device_id = require_device(&app, &scope, &path.deviceId).await?;
    let listing = format!(
        "mtmessages:{}:{:?}:{:?}:{}",
        scope.code(),
        path.deviceId,
        query.status,
        query.newest_first
    );
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .list_mt_messages(
            scope.code(),
            &device_id,
            status,
            // The token's cursor is the last id shown (`Cursor for i64`).
            request.after.map(MtMessageId::new),
            query.newest_first,
            request.size + 1,
        )
        .await?;
    Ok(Page::from_fetched(
        fetched,
        request,
        &app.paging,
        &listing,
        |m| m.message_id.get(),
    ))
}

/// Queue a message or command for a device (needs DeviceMessages).
///
/// `Type` is required; `Message` is required for `Text`; `Parameters` carries a command's
/// settings. Read-only fields sent are ignored; the message starts `Queued`. Answers 200
/// with no body and `Location` naming the new message.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/devices/{deviceId}/mtmessages", tag = "MT messages",
    params(DevicePath), request_body = MtMessageRecord,
    responses((status = 200, description = "Queued; Location names the message"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, description = "No such device in this tenant", body = Problem)))]
async fn post_mt_message(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Body(message): Body<MtMessageRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::DeviceMessages)?;
    let device_id = require_device(&app, &scope, &path.deviceId).await?;
    let message = message.validated()?;
    let id = app
        .store
        .queue_mt_message(scope.code(), &device_id, &message)
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/devices/{device_id}/mtmessages/{id}",
        scope.code(),
    )))
}

/// Get one MT message (`ETag` header; `If-None-Match` answers 304).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices/{deviceId}/mtmessages/{messageId}", tag = "MT messages",
    params(MtMessagePath),
    responses((status = 200, body = MtMessageRecord, headers(("ETag" = String, description = "The message's version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, body = Problem)))]
async fn get_mt_message(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<MtMessagePath>,
) -> ApiResult<Record<MtMessage>> {
    Ok(Record(find_message(&app, &scope, &path).await?))
}

/// Report a message's progress with a JSON Patch of `Status` (needs DeviceMessages).
///
/// Every other field is read-only (400). The status moves forward only: `Queued` →
/// `Sent` → `Delivered` (`Sent` may be skipped), and any status that is not final →
/// `Failed`; `Delivered` and `Failed` are final. A refused step is a 409; reporting the
/// current status again changes nothing. `If-Match` is honoured, and without it a change
/// made since this request read the message is a 412.
#[utoipa::path(patch, path = "/V2/{tenantVarCode}/devices/{deviceId}/mtmessages/{messageId}", tag = "MT messages",
    params(MtMessagePath),
    request_body(content = Vec<super::openapi::PatchOperation>, content_type = "application/json-patch+json"),
    responses((status = 200, description = "Updated"),
        (status = 400, description = "A read-only field patched, or an unknown status", body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, description = "The workflow does not allow the step", body = Problem),
        (status = 412, description = "If-Match names another version", body = Problem)))]
async fn patch_mt_message(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<MtMessagePath>,
    IfMatch(if_match): IfMatch,
    Body(patch): Body<json_patch::Patch>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::DeviceMessages)?;
    let current = find_message(&app, &scope, &path).await?;
    let expected = if_match.unwrap_or_else(|| current.etag.clone());
    let status = apply_patch(&MtMessageRecord::from(&current), &patch)?.validated_status()?;
    app.store
        .set_mt_status(
            scope.code(),
            &current.device_id,
            current.message_id,
            status,
            Some(expected.as_str()),
        )
        .await?;
    Ok(EmptyOk)
}
