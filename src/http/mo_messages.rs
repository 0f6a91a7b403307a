//! MO messages: `/V2/{t}/devices/{deviceId}/momessages` (docs/api.md,
//! "HTTP" and "Devices"). Posting stores and processes a batch through the pipeline; listing pages
//! by message time.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, Record, RecordList, Representable};
use super::paging::{Cursor, Page};
use super::records::mo_message::{MoMessageRecord, ProcessedMessageRecord, validated_posted_batch};
use crate::domain::access::Permission;
use crate::domain::ids::{DeviceId, MoMessageId};
use crate::domain::mo_message::{BatchRejection, MoMessage};
use crate::store::{MessageCursor, MessageQuery};

/// Most messages one page returns (the contract's limit).
pub const MAX_PAGE_SIZE: u32 = 1000;
/// A page with files ends early once it holds this many bytes of them (the token
/// continues where it stopped): memory stays bounded whatever the page size.
pub const PAGE_FILE_BUDGET: usize = 32 * 1024 * 1024;
/// Rows fetched at a time while filling a page with files.
const FILE_CHUNK: u32 = 8;

impl Representable for MoMessage {
    const NAME: &'static str = "MoMessage";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

impl Representable for ProcessedMessageRecord {
    const NAME: &'static str = "MoMessage";
}

impl Cursor for MessageCursor {
    fn encode(&self) -> String {
        format!("{}:{}", self.time, self.id)
    }
    fn decode(text: &str) -> Option<Self> {
        let (time, id) = text.split_once(':')?;
        Some(MessageCursor {
            time: time.parse().ok()?,
            id: id.parse().ok()?,
        })
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_messages, post_messages))
        .routes(routes!(get_message, delete_message))
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
struct MessagePath {
    tenantVarCode: String,
    deviceId: String,
    /// Numeric message id.
    messageId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct PostQuery {
    /// Answer with the stored messages as processed (ids, geofences, what they
    /// triggered) instead of an empty 200.
    #[serde(default)]
    process: bool,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Messages at or after this time (message time: SentFromDevice, else ReceivedAtServer).
    #[param(value_type = Option<String>, format = DateTime)]
    from_date: Option<jiff::Timestamp>,
    /// Messages before this time (exclusive).
    #[param(value_type = Option<String>, format = DateTime)]
    to_date: Option<jiff::Timestamp>,
    /// Include `File` and `Attachment` (Base64).
    #[serde(default)]
    include_file: bool,
    /// Newest first (by message time, then `MessageId`, both descending).
    #[serde(default)]
    newest_first: bool,
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct FileQuery {
    /// Include `File` and `Attachment` (Base64).
    #[serde(default)]
    include_file: bool,
}

/// The device must be the path tenant's (404 otherwise, like any record out of scope).
async fn require_device(app: &AppState, scope: &TenantScope, device_id: &str) -> ApiResult<()> {
    if app.store.device_exists(scope.code(), device_id).await? {
        Ok(())
    } else {
        Err(ApiError::NotFound)
    }
}

/// A path id that is no `MoMessageId` names nothing (404).
fn message_id(raw: &str) -> ApiResult<MoMessageId> {
    raw.parse().map_err(|_| ApiError::NotFound)
}

/// Post a batch of 1 to 1,000 messages from a device.
///
/// The whole batch is stored in one transaction, or nothing is; the answer comes after
/// it is on disk. A retry (same `SequenceNumber` and `SentFromDevice`) is not stored or
/// processed twice. With `process=true` the answer lists every message as processed.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/devices/{deviceId}/momessages", tag = "MO messages",
    params(DevicePath, PostQuery), request_body = Vec<MoMessageRecord>,
    responses((status = 200, description = "Stored (with process=true: the processed messages)", body = [ProcessedMessageRecord]),
        (status = 400, body = Problem), (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 413, body = Problem)))]
async fn post_messages(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Query(query): Query<PostQuery>,
    Body(batch): Body<Vec<MoMessageRecord>>,
) -> ApiResult<Response> {
    scope.require_device_messages(&app, &path.deviceId).await?;
    // An unknown device is found out inside the ingest transaction (404).
    let batch = validated_posted_batch(batch).map_err(|rejection| match rejection {
        BatchRejection::TooLarge(fields) => ApiError::parts_too_large(fields),
        BatchRejection::Invalid(errors) => ApiError::from(errors),
    })?;
    // An id no device may have names none.
    let device_id = path
        .deviceId
        .parse::<DeviceId>()
        .map_err(|_| ApiError::NotFound)?;
    let processed = app.pipeline.ingest(&scope.tenant, device_id, batch).await?;
    Ok(if query.process {
        let answered: Vec<ProcessedMessageRecord> = processed.into_iter().map(Into::into).collect();
        RecordList(answered).into_response()
    } else {
        EmptyOk.into_response()
    })
}

/// The listing a continuation token belongs to: the device's messages under these
/// filters. 400 for a window that ends before it starts.
fn message_listing(scope: &TenantScope, device_id: &str, query: &ListQuery) -> ApiResult<String> {
    if let (Some(from), Some(to)) = (query.from_date, query.to_date)
        && from > to
    {
        return Err(ApiError::field("fromDate", "must not be after toDate"));
    }
    Ok(format!(
        "momessages:{}:{}:{:?}:{:?}:{}:{}",
        scope.code(),
        device_id,
        query.from_date.map(|t| t.as_microsecond()),
        query.to_date.map(|t| t.as_microsecond()),
        query.include_file,
        query.newest_first
    ))
}

/// List a device's messages, by message time then `MessageId` (oldest first, or newest
/// first with `newestFirst=true`), paged with `X-CONTINUATIONTOKEN`. A page with files ends early past 32 MB of them.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices/{deviceId}/momessages", tag = "MO messages",
    params(DevicePath, ListQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [MoMessageRecord], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more messages exist"))),
        (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn list_messages(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Query(query): Query<ListQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<MoMessage>> {
    require_device(&app, &scope, &path.deviceId).await?;
    let listing = message_listing(&scope, &path.deviceId, &query)?;
    let request = app.paging.page_request::<MessageCursor>(
        &headers,
        &listing,
        query.page_size,
        MAX_PAGE_SIZE,
    )?;
    let query_from = |after: Option<MessageCursor>, limit: u32, include_file: bool| MessageQuery {
        tenant_code: scope.code(),
        device_id: &path.deviceId,
        from: query.from_date,
        to: query.to_date,
        after,
        limit,
        include_file,
        newest_first: query.newest_first,
    };
    let size = request.size as usize;
    let mut items: Vec<(MoMessage, MessageCursor)> = Vec::new();
    let mut file_bytes = 0usize;
    // Without files: one query for the page plus one row that says whether more exist.
    // With files: a few rows at a time, ending the page early past the byte budget.
    let more = 'fill: loop {
        let limit = if query.include_file {
            FILE_CHUNK
        } else {
            request.size + 1
        };
        let after = items.last().map(|(_, c)| *c).or(request.after);
        let rows = app
            .store
            .list_messages(query_from(after, limit, query.include_file))
            .await?;
        let exhausted = (rows.len() as u32) < limit;
        for row in rows {
            if items.len() == size || file_bytes >= PAGE_FILE_BUDGET {
                break 'fill true;
            }
            file_bytes += row.0.file.as_ref().map_or(0, String::len)
                + row.0.attachment.as_ref().map_or(0, String::len);
            items.push(row);
        }
        if exhausted {
            break false;
        }
        if items.len() == size || file_bytes >= PAGE_FILE_BUDGET {
            let after = items.last().map(|(_, c)| *c);
            let probe = app.store.list_messages(query_from(after, 1, false)).await?;
            break !probe.is_empty();
        }
    };
    let next = if more {
        items
            .last()
            .map(|(_, cursor)| app.paging.issue(&listing, cursor))
    } else {
        None
    };
    Ok(Page {
        items: items.into_iter().map(|(m, _)| m).collect(),
        next,
    })
}

/// Get one message.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices/{deviceId}/momessages/{messageId}", tag = "MO messages",
    params(MessagePath, FileQuery),
    responses((status = 200, body = MoMessageRecord), (status = 404, body = Problem)))]
async fn get_message(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<MessagePath>,
    Query(query): Query<FileQuery>,
) -> ApiResult<Record<MoMessage>> {
    let id = message_id(&path.messageId)?;
    let message = app
        .store
        .get_message(scope.code(), &path.deviceId, id, query.include_file)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(message))
}

/// Delete one message (needs AccessAllDevices). Alerts and deliveries it caused stay.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/devices/{deviceId}/momessages/{messageId}", tag = "MO messages",
    params(MessagePath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn delete_message(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<MessagePath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::AccessAllDevices)?;
    let id = message_id(&path.messageId)?;
    app.store
        .delete_message(scope.code(), &path.deviceId, id, if_match.as_deref())
        .await?;
    Ok(EmptyOk)
}
