//! Alerts: `/V2/{t}/alerts` and `/alerts/{alertId}` with their workflow
//! (`Open` → `Acknowledged` → `Resolved`, docs/api.md), their notes and their timeline
//! (the shared record of who did what). Alerts are raised and joined by the events
//! engine; the API lists them and moves them along (`services::alerts`, which also puts
//! every change on the live stream).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use jiff::Timestamp;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, Record, RecordList, Representable};
use super::paging::Page;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::alert::{
    Acknowledgement, Alert, AlertStatus, NewNote, Outcome, Resolution, TimelineEntry,
};
use crate::domain::delivery::Channel;
use crate::domain::ids::AlertId;
use crate::domain::webhook::url_origin;
use crate::services::alerts::AlertDesk;
use crate::store::{AlertAction, AlertFilter};

/// Most alerts one page returns (and the default).
pub const MAX_PAGE_SIZE: u32 = 1000;

impl Representable for Alert {
    const NAME: &'static str = "Alert";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

impl Representable for TimelineEntry {
    const NAME: &'static str = "TimelineEntry";
}

/// Who the timeline and the alert record as having acted: the one place that names the
/// caller of an alert action.
/// Who acts: the username, or `token:<Name>` for an API token.
fn actor(scope: &TenantScope) -> String {
    scope.caller.actor_name()
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_alerts))
        .routes(routes!(get_alert))
        .routes(routes!(acknowledge_alert))
        .routes(routes!(resolve_alert))
        .routes(routes!(add_note))
        .routes(routes!(alert_timeline))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct AlertPath {
    tenantVarCode: String,
    /// Numeric alert id.
    alertId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListAlertsQuery {
    /// Only alerts in this status.
    #[param(value_type = Option<AlertStatus>)]
    status: Option<String>,
    /// Only resolved alerts with this outcome.
    #[param(value_type = Option<Outcome>)]
    outcome: Option<String>,
    /// Only alerts of this device.
    device_id: Option<String>,
    /// Alerts raised at or after this time.
    #[param(value_type = Option<String>, format = DateTime)]
    from_date: Option<Timestamp>,
    /// Alerts raised before this time (exclusive).
    #[param(value_type = Option<String>, format = DateTime)]
    to_date: Option<Timestamp>,
    /// Include the alerts of every subtenant.
    #[serde(default)]
    subtenants: bool,
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

const IF_MATCH: &str = "The alert's ETag the step is based on: 412 when the alert has changed \
     since (`*` or absent: any version)";

/// List alerts in `AlertId` order, paged with `X-CONTINUATIONTOKEN`.
///
/// `fromDate`/`toDate` filter on `RaisedAt`; `subtenants=true` covers the path tenant's
/// whole subtree (each alert names its `TenantCode`).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/alerts", tag = "Alerts",
    params(TenantParam, ListAlertsQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [Alert], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more alerts exist"))),
        (status = 400, description = "A bad filter, page size or continuation token", body = Problem),
        (status = 404, body = Problem)))]
async fn list_alerts(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListAlertsQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<Alert>> {
    let status = match query.status.as_deref() {
        None => None,
        Some(text) => Some(text.parse::<AlertStatus>().map_err(|_| {
            ApiError::field(
                "status",
                format!("must be one of {}", AlertStatus::NAMES.join(", ")),
            )
        })?),
    };
    let outcome = match query.outcome.as_deref() {
        None => None,
        Some(text) => Some(text.parse::<Outcome>().map_err(|_| {
            ApiError::field(
                "outcome",
                format!("must be one of {}", Outcome::NAMES.join(", ")),
            )
        })?),
    };
    if let (Some(from), Some(to)) = (query.from_date, query.to_date)
        && from > to
    {
        return Err(ApiError::field("fromDate", "must not be after toDate"));
    }
    let device_id = query.device_id.as_deref().filter(|d| !d.is_empty());
    let listing = format!(
        "alerts:{}:{}:{:?}:{:?}:{:?}:{:?}:{:?}",
        scope.code(),
        query.subtenants,
        status.map(AlertStatus::as_str),
        outcome.map(Outcome::as_str),
        device_id,
        query.from_date.map(|t| t.as_microsecond()),
        query.to_date.map(|t| t.as_microsecond()),
    );
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .list_alerts(&AlertFilter {
            tenant_code: scope.code(),
            subtree: query.subtenants.then_some(scope.tenant.path.as_str()),
            status,
            outcome,
            device_id,
            from: query.from_date,
            to: query.to_date,
            after: request.after.unwrap_or(0),
            limit: request.size + 1,
        })
        .await?;
    Ok(Page::from_fetched(
        fetched,
        request,
        &app.paging,
        &listing,
        |a| a.alert_id.get(),
    ))
}

/// Get an alert of the path tenant (an alert of a subtenant is addressed through the
/// subtenant's path).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/alerts/{alertId}", tag = "Alerts",
    params(AlertPath),
    responses((status = 200, body = Alert, headers(("ETag" = String, description = "The alert's version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, body = Problem)))]
async fn get_alert(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<AlertPath>,
) -> ApiResult<Record<Alert>> {
    let id = path
        .alertId
        .parse::<AlertId>()
        .map_err(|_| ApiError::NotFound)?;
    let alert = app
        .store
        .get_alert(scope.code(), id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(alert))
}

/// Acknowledge an `Open` alert (needs HandleAlerts: Administrator, Manager, User), with
/// an optional `{"Note": "…"}` for its timeline (at most 4,000 characters; blank is none;
/// the body may be absent).
///
/// The first acknowledgement wins: acknowledging an alert that is already acknowledged
/// or resolved is a 409. `AcknowledgedBy` is the caller's username. Answers the alert,
/// which is also an `alert` event on the live stream.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/alerts/{alertId}/acknowledge", tag = "Alerts",
    params(AlertPath, ("If-Match" = Option<String>, Header, description = IF_MATCH)),
    request_body(content = Option<Acknowledgement>, description = "Optional"),
    responses((status = 200, description = "Acknowledged", body = Alert),
        (status = 400, description = "Note is too long or not text", body = Problem),
        (status = 403, description = "The role may not handle alerts", body = Problem),
        (status = 404, body = Problem),
        (status = 409, description = "The alert is already acknowledged or resolved", body = Problem),
        (status = 412, description = "If-Match names another version", body = Problem)))]
async fn acknowledge_alert(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<AlertPath>,
    IfMatch(if_match): IfMatch,
    body: Option<Body<Option<Acknowledgement>>>,
) -> ApiResult<Record<Alert>> {
    scope.require(Permission::HandleAlerts)?;
    let id = path
        .alertId
        .parse::<AlertId>()
        .map_err(|_| ApiError::NotFound)?;
    let note = body.and_then(|Body(a)| a).unwrap_or_default().validated()?;
    let action = AlertAction::Acknowledge {
        note: note.as_deref(),
    };
    let (alert, _) = AlertDesk::new(&app.store)
        .act(
            &scope.tenant,
            id,
            &actor(&scope),
            action,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(Record(alert))
}

/// Resolve an `Open` or `Acknowledged` alert (needs HandleAlerts), with an optional
/// `{"Resolution": "…", "Outcome": "…"}` (Resolution at most 4,000 characters; Outcome
/// one of `Genuine`, `FalseAlarm`, `Test`, `Other`, or absent: the alert's `Outcome`
/// stays null; the body may be absent, empty or `null`).
///
/// Resolving a resolved alert is a 409. `ResolvedBy` is the caller's username; a
/// further match of the notification on the device then raises a new alert. Answers
/// the alert, which is also an `alert` event on the live stream.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/alerts/{alertId}/resolve", tag = "Alerts",
    params(AlertPath, ("If-Match" = Option<String>, Header, description = IF_MATCH)),
    request_body(content = Option<Resolution>, description = "Optional"),
    responses((status = 200, description = "Resolved", body = Alert),
        (status = 400, description = "Resolution is too long or not text, or Outcome is not one of the four", body = Problem),
        (status = 403, description = "The role may not handle alerts", body = Problem),
        (status = 404, body = Problem),
        (status = 409, description = "The alert is already resolved", body = Problem),
        (status = 412, description = "If-Match names another version", body = Problem)))]
async fn resolve_alert(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<AlertPath>,
    IfMatch(if_match): IfMatch,
    body: Option<Body<Option<Resolution>>>,
) -> ApiResult<Record<Alert>> {
    scope.require(Permission::HandleAlerts)?;
    let id = path
        .alertId
        .parse::<AlertId>()
        .map_err(|_| ApiError::NotFound)?;
    // No body, an empty one, JSON `null` and `{}` all mean no resolution text.
    let resolve = body.and_then(|Body(r)| r).unwrap_or_default().validated()?;
    let action = AlertAction::Resolve {
        resolution: resolve.resolution.as_deref(),
        outcome: resolve.outcome,
    };
    let (alert, _) = AlertDesk::new(&app.store)
        .act(
            &scope.tenant,
            id,
            &actor(&scope),
            action,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(Record(alert))
}

/// Add a note to an alert's timeline (needs HandleAlerts, as acknowledging does):
/// `{"Text": "…"}`, 1–4,000 characters, not only white space.
///
/// Allowed in every status — a note after resolution records the follow-up. The note
/// is `By` the caller's username; the alert's `NoteCount` (and so its `ETag`) moves on,
/// and the alert is an `alert` event on the live stream. Answers the note as its
/// timeline entry.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/alerts/{alertId}/notes", tag = "Alerts",
    params(AlertPath),
    request_body(content = NewNote),
    responses((status = 200, description = "The note, as the timeline shows it", body = TimelineEntry),
        (status = 400, description = "Text is missing, blank, longer than 4,000 characters or not text", body = Problem),
        (status = 403, description = "The role may not handle alerts", body = Problem),
        (status = 404, body = Problem)))]
async fn add_note(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<AlertPath>,
    Body(note): Body<NewNote>,
) -> ApiResult<Record<TimelineEntry>> {
    scope.require(Permission::HandleAlerts)?;
    let id = path
        .alertId
        .parse::<AlertId>()
        .map_err(|_| ApiError::NotFound)?;
    let text = note.validated()?;
    let action = AlertAction::Note { text: &text };
    let (_, entry) = AlertDesk::new(&app.store)
        .act(
            &scope.tenant,
            id,
            &actor(&scope),
            action,
            None,
            &scope.audit(),
        )
        .await?;
    Ok(Record(entry))
}

/// An alert's timeline, oldest first: raised (message and position), each further
/// match, each escalation round (who was notified), each delivery with its current
/// status and attempts, the acknowledgement (with its note), notes, the resolution
/// (with its outcome).
///
/// Every entry has `Kind`, `At` and `By` (the username; null for the system); the other
/// fields appear only on the kinds they describe. Steps taken at the same instant as a
/// delivery come first. Without the ManageConfiguration permission a webhook delivery's
/// `Target` is only its URL's origin, as in `GET …/deliveries`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/alerts/{alertId}/timeline", tag = "Alerts",
    params(AlertPath),
    responses((status = 200, body = [TimelineEntry]),
        (status = 404, body = Problem)))]
async fn alert_timeline(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<AlertPath>,
) -> ApiResult<RecordList<TimelineEntry>> {
    let id = path
        .alertId
        .parse::<AlertId>()
        .map_err(|_| ApiError::NotFound)?;
    let mut timeline = app
        .store
        .alert_timeline(scope.code(), id)
        .await?
        .ok_or(ApiError::NotFound)?;
    if !scope.caller.role.grants(Permission::ManageConfiguration) {
        for entry in &mut timeline {
            if entry.channel == Some(Channel::Webhook) {
                entry.target = entry.target.as_deref().and_then(url_origin);
            }
        }
    }
    Ok(RecordList(timeline))
}
