//! Web Push (issue 46 §2, DESIGN §12): `GET /V2/{tenantVarCode}/pushsubscriptions/vapidpublickey`,
//! the server's VAPID public key a browser subscribes with (`applicationServerKey`), and
//! the subscriptions themselves: `POST`/`GET /V2/{t}/pushsubscriptions`,
//! `DELETE /V2/{t}/pushsubscriptions/{pushSubscriptionId}`. A subscription is a user's
//! (an API token is nobody's person: 403) at a device assigned to them.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::TenantScope;
use super::negotiate::{Body, EmptyOk, Record, RecordList, Representable};
use super::{AppState, TenantParam};
use crate::domain::access::Role;
use crate::domain::ids::{DeviceId, PushSubscriptionId, UserId};
use crate::domain::push_subscription::{NewPushSubscription, PushSubscription};
use crate::store::{Subscriber, TenantSelection};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(vapid_public_key))
        .routes(routes!(list_subscriptions, subscribe))
        .routes(routes!(unsubscribe))
}

/// The server's VAPID public key.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct VapidPublicKey {
    /// The P-256 public key as an uncompressed point (65 bytes), base64url without
    /// padding: the `applicationServerKey` of `PushManager.subscribe`.
    #[schema(
        example = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    )]
    pub public_key: String,
}

impl Representable for VapidPublicKey {
    const NAME: &'static str = "VapidPublicKey";
}

impl Representable for PushSubscription {
    const NAME: &'static str = "PushSubscription";
}

/// A browser's `PushSubscription` (its `toJSON()`, in the API's PascalCase).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct PushSubscriptionRecord {
    /// The push service's URL: https (http only for a loopback host), at most 2,000
    /// characters.
    #[schema(
        required = true,
        min_length = 1,
        example = "https://push.example.net/send/abc123"
    )]
    pub endpoint: Option<String>,
    #[schema(required = true)]
    pub keys: Option<PushKeysRecord>,
    /// The device the pushes are about; default: the caller's one assigned device in
    /// this tenant.
    pub device_id: Option<String>,
}

/// The subscription's keys, base64url (padding optional).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct PushKeysRecord {
    /// The browser's P-256 public key, uncompressed (65 bytes, starting 0x04).
    #[schema(required = true, min_length = 1)]
    pub p256dh: Option<String>,
    /// The authentication secret (16 bytes).
    #[schema(required = true, min_length = 1)]
    pub auth: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct SubscriptionPath {
    tenantVarCode: String,
    /// Subscription id (numeric string).
    pushSubscriptionId: String,
}

/// Get the server's VAPID public key.
///
/// The same key for every tenant, every process sharing the database and across restarts
/// (generated at first start, kept in the database). Any caller in the tenant's scope.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/pushsubscriptions/vapidpublickey", tag = "Push subscriptions",
    params(TenantParam),
    responses((status = 200, body = VapidPublicKey), (status = 404, body = Problem)))]
async fn vapid_public_key(
    _scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<Record<VapidPublicKey>> {
    let key = app.store.vapid_key().await?;
    Ok(Record(VapidPublicKey {
        public_key: key.public_key_base64url(),
    }))
}

/// The calling user; an API token is nobody's person.
fn calling_user(scope: &TenantScope) -> ApiResult<UserId> {
    scope.caller.user().ok_or_else(|| {
        ApiError::Forbidden(
            "push subscriptions are a user's: an API token is nobody's person".into(),
        )
    })
}

/// Whose subscriptions the caller sees and deletes: everyone's in the tenant for an
/// Administrator, else the calling user's own.
fn whose(scope: &TenantScope) -> ApiResult<Option<UserId>> {
    if scope.caller.role == Role::Administrator {
        return Ok(None);
    }
    calling_user(scope).map(Some)
}

/// The device a subscription is for: the one named, which must be assigned to the
/// caller, else the caller's only assigned device in the tenant.
async fn subscribed_device(
    app: &AppState,
    scope: &TenantScope,
    user: UserId,
    named: Option<DeviceId>,
) -> ApiResult<DeviceId> {
    if let Some(id) = named {
        let device = app.store.get_device(scope.code(), &id).await?;
        return match device {
            Some(d) if d.user_id == Some(user) => Ok(id),
            _ => Err(ApiError::field(
                "DeviceId",
                "names no device of this tenant assigned to you",
            )),
        };
    }
    let tenant = TenantSelection::Tenant(scope.code().clone());
    let mut assigned = app.store.devices_assigned_to(&tenant, user).await?;
    match (assigned.pop(), assigned.is_empty()) {
        (Some(only), true) => Ok(only.device_id),
        (Some(_), false) => Err(ApiError::field(
            "DeviceId",
            "is required: several devices of this tenant are assigned to you",
        )),
        (None, _) => Err(ApiError::field(
            "DeviceId",
            "is required: no device of this tenant is assigned to you",
        )),
    }
}

/// Subscribe this browser to pushes.
///
/// The body is the browser's `PushSubscription` (`Endpoint`, `Keys.P256dh`, `Keys.Auth`)
/// and optionally the `DeviceId` (default: the caller's one assigned device; a named one
/// must be assigned to the caller). One subscription per endpoint: a new one answers
/// 201 with `Location`, the same endpoint again updates it (its keys, user and device)
/// and answers 200. A user holds at most 10 (409 past that). Reminders, operators' texts
/// and acknowledgements of the device are then pushed (`Push` deliveries).
#[utoipa::path(post, path = "/V2/{tenantVarCode}/pushsubscriptions", tag = "Push subscriptions",
    params(TenantParam), request_body = PushSubscriptionRecord,
    responses((status = 201, body = PushSubscription, description = "Created; Location names it"),
        (status = 200, body = PushSubscription, description = "The endpoint's subscription, updated"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem)))]
async fn subscribe(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(incoming): Body<PushSubscriptionRecord>,
) -> ApiResult<Response> {
    let user = calling_user(&scope)?;
    let keys = incoming.keys.unwrap_or_default();
    let parsed = NewPushSubscription::parse(
        incoming.endpoint.as_deref(),
        keys.p256dh.as_deref(),
        keys.auth.as_deref(),
        incoming.device_id.as_deref(),
    )?;
    let device_id = subscribed_device(&app, &scope, user, parsed.device_id.clone()).await?;
    let who = Subscriber {
        tenant_code: scope.code(),
        user_id: user,
        device_id: &device_id,
    };
    let (subscription, created) = app.store.put_push_subscription(who, &parsed).await?;
    let location = format!(
        "/V2/{}/pushsubscriptions/{}",
        scope.code(),
        subscription.push_subscription_id
    );
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, [(header::LOCATION, location)], Record(subscription)).into_response())
}

/// List push subscriptions.
///
/// The caller's own in this tenant; an Administrator's list is everyone's in the tenant.
/// `Endpoint` is shown only on the caller's own (others show `EndpointOrigin`); the keys
/// never.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/pushsubscriptions", tag = "Push subscriptions",
    params(TenantParam),
    responses((status = 200, body = [PushSubscription]), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn list_subscriptions(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<PushSubscription>> {
    let whose = whose(&scope)?;
    let caller = scope.caller.user();
    let list = app
        .store
        .list_push_subscriptions(scope.code(), whose)
        .await?;
    Ok(RecordList(
        list.into_iter().map(|s| s.shown_to(caller)).collect(),
    ))
}

/// Delete a push subscription (the caller's own; an Administrator any in the tenant).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/pushsubscriptions/{pushSubscriptionId}",
    tag = "Push subscriptions", params(SubscriptionPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn unsubscribe(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<SubscriptionPath>,
) -> ApiResult<EmptyOk> {
    let whose = whose(&scope)?;
    let id: PushSubscriptionId = path
        .pushSubscriptionId
        .parse()
        .map_err(|_| ApiError::NotFound)?;
    app.store
        .delete_push_subscription(scope.code(), id, whose)
        .await?;
    Ok(EmptyOk)
}
