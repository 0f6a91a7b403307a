//! Event notifications, at tenant level (`/V2/{t}/eventnotifications`) and at group level
//! (`/V2/{t}/groups/{groupId}/eventnotifications`). Both levels share one implementation;
//! the handlers below only say which level a path addresses.

use std::collections::HashSet;

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::groups::{GroupPath, group_id};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::notification::EventNotificationRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::device::device_type_list;
use crate::domain::ids::NotificationId;
use crate::domain::notification::{EventNotification, MAX_DEVICES, NotificationLevel};
use crate::domain::recipient::RecipientReference;
use crate::store::{NotificationUpdate, Owned};

impl Representable for EventNotification {
    const NAME: &'static str = "EventNotification";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(
            list_tenant_notifications,
            create_tenant_notification
        ))
        .routes(routes!(validate_tenant_notification))
        .routes(routes!(
            get_tenant_notification,
            update_tenant_notification,
            delete_tenant_notification
        ))
        .routes(routes!(list_group_notifications, create_group_notification))
        .routes(routes!(
            get_group_notification,
            update_group_notification,
            delete_group_notification
        ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct NotificationPath {
    tenantVarCode: String,
    notificationId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct GroupNotificationPath {
    tenantVarCode: String,
    groupId: String,
    notificationId: String,
}

// ---- the shared implementation --------------------------------------------------------

/// The level a group path addresses; an unknown group is a 404.
async fn group_level(
    app: &AppState,
    scope: &TenantScope,
    raw_group: &str,
) -> ApiResult<NotificationLevel> {
    let id = group_id(raw_group)?;
    if !app.store.group_exists(scope.code(), id.get()).await? {
        return Err(ApiError::NotFound);
    }
    Ok(NotificationLevel::Group(id))
}

fn present(owned: Owned<EventNotification>) -> EventNotification {
    EventNotification {
        notification_id: Some(owned.id),
        etag: Some(owned.etag),
        ..owned.record
    }
}

/// The notification with its rules checked (devices looked up in one query), and the
/// references its recipients make (the store resolves them in the writing transaction).
async fn validated(
    app: &AppState,
    scope: &TenantScope,
    level: NotificationLevel,
    notification: EventNotificationRecord,
) -> ApiResult<(EventNotification, Vec<RecipientReference>)> {
    let device_types = match level {
        NotificationLevel::Tenant => {
            let tenant = app
                .store
                .get_tenant(scope.code())
                .await?
                .ok_or(ApiError::NotFound)?;
            device_type_list(tenant.device_types.as_deref())
        }
        // Group level refuses `DeviceType` outright: no list to check against.
        NotificationLevel::Group(_) => Vec::new(),
    };
    // On group level `Devices` is refused outright, and an oversized list is already an
    // error: neither is looked up.
    let devices = match level {
        NotificationLevel::Tenant => notification.device_ids(),
        NotificationLevel::Group(_) => Vec::new(),
    };
    let known = if devices.len() <= MAX_DEVICES {
        app.store.existing_devices(scope.code(), &devices).await?
    } else {
        HashSet::new()
    };
    Ok(notification.validated(level, &device_types, &known)?)
}

fn notification_id(raw: &str) -> ApiResult<NotificationId> {
    raw.parse().map_err(|_| ApiError::NotFound)
}

async fn list(
    app: &AppState,
    scope: &TenantScope,
    level: NotificationLevel,
) -> ApiResult<RecordList<EventNotification>> {
    let found = app.store.list_notifications(scope.code(), level).await?;
    Ok(RecordList(found.into_iter().map(present).collect()))
}

async fn create(
    app: &AppState,
    scope: &TenantScope,
    level: NotificationLevel,
    notification: EventNotificationRecord,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageConfiguration)?;
    let (notification, references) = validated(app, scope, level, notification).await?;
    let id = app
        .store
        .create_notification(
            &scope.tenant,
            level,
            &notification,
            &references,
            &scope.audit(),
        )
        .await?;
    let base = match level {
        NotificationLevel::Tenant => format!("/V2/{}", scope.code()),
        NotificationLevel::Group(g) => format!("/V2/{}/groups/{g}", scope.code()),
    };
    Ok(OkWithLocation(format!("{base}/eventnotifications/{id}")))
}

async fn get(
    app: &AppState,
    scope: &TenantScope,
    level: NotificationLevel,
    raw_id: &str,
) -> ApiResult<Record<EventNotification>> {
    let found = app
        .store
        .get_notification(scope.code(), level, notification_id(raw_id)?)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(present(found)))
}

async fn update(
    app: &AppState,
    scope: &TenantScope,
    level: NotificationLevel,
    raw_id: &str,
    if_match: Option<String>,
    notification: EventNotificationRecord,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let id = notification_id(raw_id)?;
    app.store
        .get_notification(scope.code(), level, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let (notification, references) = validated(app, scope, level, notification).await?;
    app.store
        .update_notification(
            NotificationUpdate {
                node: &scope.tenant,
                level,
                id,
                notification: &notification,
                references: &references,
            },
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

async fn delete(
    app: &AppState,
    scope: &TenantScope,
    level: NotificationLevel,
    raw_id: &str,
    if_match: Option<String>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    app.store
        .delete_notification(
            scope.code(),
            level,
            notification_id(raw_id)?,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

// ---- tenant level ---------------------------------------------------------------------

/// List the tenant's notifications.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/eventnotifications", tag = "Event notifications",
    params(TenantParam), responses((status = 200, body = [EventNotificationRecord]), (status = 404, body = Problem)))]
async fn list_tenant_notifications(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<EventNotification>> {
    list(&app, &scope, NotificationLevel::Tenant).await
}

/// Create a tenant-level notification. `EventsExpression` is parsed; a failure names the
/// position and what was expected.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/eventnotifications", tag = "Event notifications",
    params(TenantParam), request_body = EventNotificationRecord,
    responses((status = 200, description = "Created; Location names it"), (status = 400, body = Problem), (status = 403, body = Problem)))]
async fn create_tenant_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(notification): Body<EventNotificationRecord>,
) -> ApiResult<OkWithLocation> {
    create(&app, &scope, NotificationLevel::Tenant, notification).await
}

/// Check a tenant-level notification without saving it (extension).
///
/// Every rule a POST checks, with the same answer: 200 with no body when the
/// notification would be accepted, else the 400 (problem+json, each offending field in
/// `errors[]`, an `EventsExpression` message naming the position) that saving it would
/// get. Nothing is written. For editors that check an expression as it is typed.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/eventnotifications/validate", tag = "Event notifications",
    params(TenantParam), request_body = EventNotificationRecord,
    responses((status = 200, description = "Valid; nothing stored"), (status = 400, body = Problem), (status = 403, body = Problem), (status = 404, body = Problem)))]
async fn validate_tenant_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(notification): Body<EventNotificationRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let (notification, references) =
        validated(&app, &scope, NotificationLevel::Tenant, notification).await?;
    app.store
        .check_references_now(&scope.tenant, &references)
        .await?;
    app.store
        .check_escalation_policy_now(&scope.tenant, notification.escalation_policy_id)
        .await?;
    Ok(EmptyOk)
}

/// Get a tenant-level notification.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/eventnotifications/{notificationId}", tag = "Event notifications",
    params(NotificationPath), responses((status = 200, body = EventNotificationRecord), (status = 404, body = Problem)))]
async fn get_tenant_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<NotificationPath>,
) -> ApiResult<Record<EventNotification>> {
    get(
        &app,
        &scope,
        NotificationLevel::Tenant,
        &path.notificationId,
    )
    .await
}

/// Replace a tenant-level notification.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/eventnotifications/{notificationId}", tag = "Event notifications",
    params(NotificationPath), request_body = EventNotificationRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem), (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn update_tenant_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<NotificationPath>,
    IfMatch(if_match): IfMatch,
    Body(notification): Body<EventNotificationRecord>,
) -> ApiResult<EmptyOk> {
    update(
        &app,
        &scope,
        NotificationLevel::Tenant,
        &path.notificationId,
        if_match,
        notification,
    )
    .await
}

/// Delete a tenant-level notification.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/eventnotifications/{notificationId}", tag = "Event notifications",
    params(NotificationPath),
    responses((status = 200, description = "Deleted"), (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn delete_tenant_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<NotificationPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    delete(
        &app,
        &scope,
        NotificationLevel::Tenant,
        &path.notificationId,
        if_match,
    )
    .await
}

// ---- group level ----------------------------------------------------------------------

/// List a group's notifications.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/groups/{groupId}/eventnotifications", tag = "Event notifications",
    params(GroupPath), responses((status = 200, body = [EventNotificationRecord]), (status = 404, body = Problem)))]
async fn list_group_notifications(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupPath>,
) -> ApiResult<RecordList<EventNotification>> {
    let level = group_level(&app, &scope, &path.groupId).await?;
    list(&app, &scope, level).await
}

/// Create a group-level notification (`DeviceType` and `Devices` are not allowed here).
#[utoipa::path(post, path = "/V2/{tenantVarCode}/groups/{groupId}/eventnotifications", tag = "Event notifications",
    params(GroupPath), request_body = EventNotificationRecord,
    responses((status = 200, description = "Created; Location names it"), (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn create_group_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupPath>,
    Body(notification): Body<EventNotificationRecord>,
) -> ApiResult<OkWithLocation> {
    let level = group_level(&app, &scope, &path.groupId).await?;
    create(&app, &scope, level, notification).await
}

/// Get a group-level notification.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/groups/{groupId}/eventnotifications/{notificationId}", tag = "Event notifications",
    params(GroupNotificationPath), responses((status = 200, body = EventNotificationRecord), (status = 404, body = Problem)))]
async fn get_group_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupNotificationPath>,
) -> ApiResult<Record<EventNotification>> {
    let level = group_level(&app, &scope, &path.groupId).await?;
    get(&app, &scope, level, &path.notificationId).await
}

/// Replace a group-level notification.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/groups/{groupId}/eventnotifications/{notificationId}", tag = "Event notifications",
    params(GroupNotificationPath), request_body = EventNotificationRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem), (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn update_group_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupNotificationPath>,
    IfMatch(if_match): IfMatch,
    Body(notification): Body<EventNotificationRecord>,
) -> ApiResult<EmptyOk> {
    let level = group_level(&app, &scope, &path.groupId).await?;
    update(
        &app,
        &scope,
        level,
        &path.notificationId,
        if_match,
        notification,
    )
    .await
}

/// Delete a group-level notification.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/groups/{groupId}/eventnotifications/{notificationId}", tag = "Event notifications",
    params(GroupNotificationPath),
    responses((status = 200, description = "Deleted"), (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn delete_group_notification(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<GroupNotificationPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    let level = group_level(&app, &scope, &path.groupId).await?;
    delete(&app, &scope, level, &path.notificationId, if_match).await
}
