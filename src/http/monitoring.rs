//! Lone-worker monitoring sessions (issue 45 §1; docs/monitoring.md):
//! `/V2/{t}/devices/{deviceId}/monitoring` (the device's current session: start, read,
//! change or extend, end), `…/monitoring/forcestop` (an operator's force stop),
//! `…/monitoring/checkins`, `…/monitoring/history` and
//! `/V2/{t}/monitoring` (the active sessions). The timers and the ingest hook are not
//! here: this is the record and its API.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, Representable};
use super::paging::Page;
use super::patch::apply_patch;
use super::records::monitoring::{
    CheckInRecord, ForceStopRecord, MonitoringSessionEventView, MonitoringSessionView,
    MonitoringSettingsRecord,
};
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::ids::DeviceId;
use crate::domain::monitoring::settings::NOTE_MAX_CHARS;
use crate::domain::monitoring::{DefaultSources, EndKind, MonitoringSession};
use crate::domain::time::now;
use crate::domain::validation::Validator;
use crate::store::{ApiCheckIn, SessionEnding};

impl Representable for MonitoringSessionEventView {
    const NAME: &'static str = "MonitoringSessionEvent";
}

impl Representable for MonitoringSessionView {
    const NAME: &'static str = "MonitoringSession";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(
            get_session,
            start_session,
            change_session,
            end_session
        ))
        .routes(routes!(force_stop))
        .routes(routes!(check_in))
        .routes(routes!(history))
        .routes(routes!(list_sessions))
        .routes(routes!(session_events))
}

/// Most sessions one page returns (and the default).
const MAX_PAGE_SIZE: u32 = 1000;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct DevicePath {
    tenantVarCode: String,
    deviceId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Include every subtenant's sessions (each names its `TenantCode`).
    #[serde(default)]
    subtenants: bool,
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct HistoryQuery {
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct SessionPath {
    tenantVarCode: String,
    monitoringSessionId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct EndQuery {
    /// Why it ended (optional), at most 500 characters, no NUL character.
    #[param(max_length = 500, pattern = "^[^\\x00]*$")]
    reason: Option<String>,
    /// No longer a parameter: a force stop is `POST …/monitoring/forcestop`. Refused (400
    /// naming it), so an old client's force stop is never taken for a normal end.
    #[param(ignore)]
    force: Option<String>,
}

/// The `If-Match` of a write on the session that is not a PUT, PATCH or DELETE.
const IF_MATCH: &str = "The session's ETag the change is based on: 412 when the session has \
     changed since (`*` or absent: any version)";

/// The device's current session; 404 when it has none (or there is no such device).
async fn current(
    app: &AppState,
    scope: &TenantScope,
    device_id: &str,
) -> ApiResult<MonitoringSession> {
    app.store
        .current_monitoring_session(scope.code(), device_id)
        .await?
        .ok_or(ApiError::NotFound)
}

fn view(session: MonitoringSession) -> MonitoringSessionView {
    MonitoringSessionView::at(session, now())
}

/// Get the device's current monitoring session.
///
/// `State`, `NextDueAt`, `NextDueAct` and `ReminderAt` are computed when read. 404 when
/// the device has no current session. The `ETag` header carries its version.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices/{deviceId}/monitoring", tag = "Monitoring",
    params(DevicePath),
    responses((status = 200, body = MonitoringSessionView, headers(("ETag" = String, description = "Record version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, body = Problem)))]
async fn get_session(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
) -> ApiResult<Record<MonitoringSessionView>> {
    Ok(Record(view(current(&app, &scope, &path.deviceId).await?)))
}

/// Start monitoring the device's user.
///
/// Every field is optional: a value not sent comes from the device's `Properties`, then
/// the tenant's (same name), then the built-in default (docs/monitoring.md). 409 when the
/// device already has a current session. Answers 200 with `Location`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/devices/{deviceId}/monitoring", tag = "Monitoring",
    params(DevicePath), request_body = MonitoringSettingsRecord,
    responses((status = 200, description = "Started; Location names the session"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem)))]
async fn start_session(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Body(incoming): Body<MonitoringSettingsRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require_device_messages(&app, &path.deviceId).await?;
    let device = app
        .store
        .get_device(scope.code(), &path.deviceId)
        .await?
        .ok_or(ApiError::NotFound)?;
    let tenant = app.store.get_tenant(scope.code()).await?;
    let sources = DefaultSources {
        message: None,
        device: Some(&device.properties),
        tenant: tenant.as_ref().map(|t| &t.properties),
    };
    let settings = incoming.validated(sources)?;
    app.store
        .start_monitoring_session(scope.code(), &path.deviceId, &settings, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/devices/{}/monitoring",
        scope.code(),
        path.deviceId
    )))
}

/// Change or extend the current session with a JSON Patch.
///
/// Applied to the session's settings (`DurationMinutes`, `CheckInIntervalMinutes`,
/// `GraceMinutes`, `ReminderMinutes`, `NoMotionMinutes`, `Note`), then checked as at the
/// start. `DurationMinutes` counts from the start: extending is a larger duration, and
/// the planned end moves. Without `If-Match` the patch applies to the version it was
/// computed on (412 if it moved).
#[utoipa::path(patch, path = "/V2/{tenantVarCode}/devices/{deviceId}/monitoring", tag = "Monitoring",
    params(DevicePath),
    request_body(content = Vec<super::openapi::PatchOperation>, content_type = "application/json-patch+json"),
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 412, body = Problem)))]
async fn change_session(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    IfMatch(if_match): IfMatch,
    Body(patch): Body<json_patch::Patch>,
) -> ApiResult<EmptyOk> {
    scope.require_device_messages(&app, &path.deviceId).await?;
    let session = current(&app, &scope, &path.deviceId).await?;
    let expected = if_match.unwrap_or_else(|| session.etag.clone());
    let patched = apply_patch(&MonitoringSettingsRecord::from(&session.settings), &patch)?;
    let settings = patched.validated(DefaultSources::default())?;
    app.store
        .change_monitoring_session(
            scope.code(),
            &path.deviceId,
            &settings,
            Some(&expected),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// End the current session.
///
/// The worker's normal end (`EndKind` `Normal`; `reason` optional). An operator's force
/// stop is `POST …/monitoring/forcestop`. The session then shows in
/// `…/monitoring/history` with its `EndKind`. `If-Match` is honoured (412).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/devices/{deviceId}/monitoring", tag = "Monitoring",
    params(DevicePath, EndQuery),
    responses((status = 200, description = "Ended"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 412, body = Problem)))]
async fn end_session(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    IfMatch(if_match): IfMatch,
    Query(query): Query<EndQuery>,
) -> ApiResult<EmptyOk> {
    scope.require_device_messages(&app, &path.deviceId).await?;
    if query.force.is_some() {
        return Err(ApiError::field(
            "force",
            "is not a parameter: an operator's force stop is POST …/monitoring/forcestop \
             with a Reason",
        ));
    }
    let reason = query.reason.filter(|r| !r.trim().is_empty());
    let mut v = Validator::new();
    v.length("reason", reason.as_deref(), 0, NOTE_MAX_CHARS);
    v.finish()?;
    current(&app, &scope, &path.deviceId).await?;
    let ending = SessionEnding {
        kind: EndKind::Normal,
        reason: reason.as_deref(),
        if_match: if_match.as_deref(),
    };
    app.store
        .end_monitoring_session(scope.code(), &path.deviceId, ending, &scope.audit())
        .await?;
    Ok(EmptyOk)
}

/// Force-stop the current session.
///
/// An operator's `ForceStopMonitoring`: the session ends at once as `EndKind`
/// `ForceStop`, with the `Reason` (required, 1 to 500 characters, not blank) as its
/// `EndReason`, on its history and in the audit log. Needs `ManageConfiguration`. 404
/// when the device has no current session; `If-Match` is honoured (412).
#[utoipa::path(post, path = "/V2/{tenantVarCode}/devices/{deviceId}/monitoring/forcestop", tag = "Monitoring",
    params(DevicePath, ("If-Match" = Option<String>, Header, description = IF_MATCH)),
    request_body = ForceStopRecord,
    responses((status = 200, description = "Ended as a force stop"),
        (status = 400, description = "Reason is missing, blank, too long or not text", body = Problem),
        (status = 403, description = "The caller may not manage the configuration", body = Problem),
        (status = 404, description = "No such device, or it has no current session", body = Problem),
        (status = 412, body = Problem)))]
async fn force_stop(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<ForceStopRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let stop = incoming.validated()?;
    current(&app, &scope, &path.deviceId).await?;
    let ending = SessionEnding {
        kind: EndKind::ForceStop,
        reason: Some(&stop.reason),
        if_match: if_match.as_deref(),
    };
    app.store
        .end_monitoring_session(scope.code(), &path.deviceId, ending, &scope.audit())
        .await?;
    Ok(EmptyOk)
}

/// Record a check-in through the API.
///
/// An operator or an integration records that the person called in (`ApiCheckIn`, now):
/// the next check-in is due an interval from now. 404 without a current session.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/devices/{deviceId}/monitoring/checkins", tag = "Monitoring",
    params(DevicePath), request_body = CheckInRecord,
    responses((status = 200, description = "Checked in"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem)))]
async fn check_in(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Body(incoming): Body<CheckInRecord>,
) -> ApiResult<EmptyOk> {
    scope.require_device_messages(&app, &path.deviceId).await?;
    let note = incoming.validated()?;
    // An id no device may have has no session.
    let device_id = path
        .deviceId
        .parse::<DeviceId>()
        .map_err(|_| ApiError::NotFound)?;
    let check_in = ApiCheckIn {
        tenant_code: scope.code().clone(),
        device_id,
        note,
        audit: scope.audit(),
    };
    app.pipeline.check_in(check_in).await?;
    Ok(EmptyOk)
}

/// List the device's ended sessions.
///
/// In id order (oldest first), paged with `X-CONTINUATIONTOKEN`. 404 for an unknown
/// device.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/devices/{deviceId}/monitoring/history", tag = "Monitoring",
    params(DevicePath, HistoryQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [MonitoringSessionView], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more sessions exist"))),
        (status = 400, description = "A bad page size or continuation token", body = Problem),
        (status = 404, body = Problem)))]
async fn history(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DevicePath>,
    Query(query): Query<HistoryQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<MonitoringSessionView>> {
    app.store
        .get_device(scope.code(), &path.deviceId)
        .await?
        .ok_or(ApiError::NotFound)?;
    let listing = format!("monitoringhistory:{}:{}", scope.code(), path.deviceId);
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .monitoring_session_history(
            scope.code(),
            &path.deviceId,
            request.after.unwrap_or(0),
            request.size + 1,
        )
        .await?;
    let fetched = fetched.into_iter().map(view).collect();
    Ok(Page::from_fetched(
        fetched,
        request,
        &app.paging,
        &listing,
        |s: &MonitoringSessionView| s.monitoring_session_id.get(),
    ))
}

/// List the active monitoring sessions.
///
/// The tenant's current sessions, with `subtenants=true` its whole subtree's, each with
/// its `State` and next due time computed when read. In id order, paged with
/// `X-CONTINUATIONTOKEN`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/monitoring", tag = "Monitoring",
    params(TenantParam, ListQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [MonitoringSessionView], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more sessions exist"))),
        (status = 400, description = "A bad page size or continuation token", body = Problem),
        (status = 404, body = Problem)))]
async fn list_sessions(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<MonitoringSessionView>> {
    let listing = format!("monitoring:{}:{}", scope.code(), query.subtenants);
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .list_active_monitoring_sessions(
            &scope.tenants(query.subtenants),
            request.after.unwrap_or(0),
            request.size + 1,
        )
        .await?;
    let fetched = fetched.into_iter().map(view).collect();
    Ok(Page::from_fetched(
        fetched,
        request,
        &app.paging,
        &listing,
        |s: &MonitoringSessionView| s.monitoring_session_id.get(),
    ))
}

/// List a session's history.
///
/// The lines of a session of the tenant, current or ended, oldest first: `Started`, each
/// `CheckIn` (with the device message that made it), `Reminder`, `MissedCheckIn`,
/// `Changed`, `Overdue`, `NoMotion`, `EscalationStep`, `Ended` — who and when. Paged with
/// `X-CONTINUATIONTOKEN`. 404 for another tenant's or an unknown session.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/monitoring/{monitoringSessionId}/events", tag = "Monitoring",
    params(SessionPath, HistoryQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [MonitoringSessionEventView], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more lines exist"))),
        (status = 400, description = "A bad page size or continuation token", body = Problem),
        (status = 404, body = Problem)))]
async fn session_events(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<SessionPath>,
    Query(query): Query<HistoryQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<MonitoringSessionEventView>> {
    let id = path
        .monitoringSessionId
        .parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .map(crate::domain::ids::MonitoringSessionId::new)
        .ok_or(ApiError::NotFound)?;
    let listing = format!("monitoringevents:{}:{}", scope.code(), id.get());
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .monitoring_session_events(
            scope.code(),
            id,
            request.after.unwrap_or(0),
            request.size + 1,
        )
        .await?;
    let fetched = fetched
        .into_iter()
        .map(MonitoringSessionEventView::from)
        .collect();
    Ok(Page::from_fetched(
        fetched,
        request,
        &app.paging,
        &listing,
        |e: &MonitoringSessionEventView| e.event_id.get(),
    ))
}
