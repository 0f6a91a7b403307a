//! Deliveries: `/V2/{t}/deliveries` and `/deliveries/{deliveryId}` — the outbox rows the
//! events engine writes for each resolved target of a match, with their status
//! (docs/api.md, "Events, alerts and deliveries"). The delivery worker settles them; an
//! operator can re-queue one that failed, expired or found its channel unconfigured
//! (`POST …/retry`).

use std::str::FromStr;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{Query, TenantScope};
use super::negotiate::{Record, Representable};
use super::paging::Page;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::delivery::{Channel, Delivery, DeliveryStatus};
use crate::domain::ids::{AlertId, DeliveryId};
use crate::domain::time::now;
use crate::domain::webhook::url_origin;
use crate::store::DeliveryFilter;

/// Most deliveries one page returns (and the default).
pub const MAX_PAGE_SIZE: u32 = 1000;

impl Representable for Delivery {
    const NAME: &'static str = "Delivery";
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_deliveries))
        .routes(routes!(get_delivery))
        .routes(routes!(retry_delivery))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct DeliveryPath {
    tenantVarCode: String,
    /// Numeric delivery id.
    deliveryId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListDeliveriesQuery {
    /// Only deliveries in this status.
    #[param(value_type = Option<DeliveryStatus>)]
    status: Option<String>,
    /// Only deliveries on this channel.
    #[param(value_type = Option<Channel>)]
    channel: Option<String>,
    /// Only deliveries of this alert.
    #[param(minimum = 1)]
    alert_id: Option<i64>,
    /// Only deliveries about this device.
    device_id: Option<String>,
    /// Only deliveries to exactly this target (a webhook URL, an e-mail address, …).
    target: Option<String>,
    /// Deliveries created at or after this time.
    #[param(value_type = Option<String>, format = DateTime)]
    from: Option<jiff::Timestamp>,
    /// Deliveries created before this time (exclusive).
    #[param(value_type = Option<String>, format = DateTime)]
    to: Option<jiff::Timestamp>,
    /// `true`: newest first (descending `DeliveryId`).
    #[serde(default)]
    newest_first: bool,
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

/// A delivery as `scope`'s caller may see it: a webhook URL's path and query often hold
/// a token, so without ManageConfiguration (what reading the webhook settings needs) a
/// webhook delivery's `Target` is only the URL's origin.
fn shown(scope: &TenantScope, mut d: Delivery) -> Delivery {
    if d.channel == Channel::Webhook && !scope.caller.has(Permission::ManageConfiguration) {
        d.target = d.target.as_deref().and_then(url_origin);
    }
    d
}

/// `value` as a member of a closed set whose texts are `names` (400 naming `field`
/// otherwise).
fn one_of<T: FromStr>(field: &str, value: Option<&str>, names: &[&str]) -> ApiResult<Option<T>> {
    value
        .map(|v| {
            v.parse()
                .map_err(|_| ApiError::field(field, format!("must be one of {}", names.join(", "))))
        })
        .transpose()
}

/// List the tenant's deliveries in `DeliveryId` order (`newestFirst=true`: the newest
/// first), paged with `X-CONTINUATIONTOKEN`. Filters combine with AND; `from`/`to` bound
/// `CreatedAt` (`[from, to)`, RFC 3339); `target` needs ManageConfiguration.
///
/// Without the ManageConfiguration permission a webhook delivery's `Target` is only its
/// URL's origin (`https://host:port`).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/deliveries", tag = "Deliveries",
    params(TenantParam, ListDeliveriesQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [Delivery], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more deliveries exist"))),
        (status = 400, description = "A bad filter, page size or continuation token", body = Problem),
        (status = 403, description = "`target` without ManageConfiguration", body = Problem),
        (status = 404, body = Problem)))]
async fn list_deliveries(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListDeliveriesQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<Delivery>> {
    let status: Option<DeliveryStatus> =
        one_of("status", query.status.as_deref(), DeliveryStatus::NAMES)?;
    let channel: Option<Channel> = one_of("channel", query.channel.as_deref(), Channel::NAMES)?;
    if query.alert_id.is_some_and(|id| id < 1) {
        return Err(ApiError::field("alertId", "must be a positive alert id"));
    }
    let device_id = query.device_id.as_deref().filter(|d| !d.is_empty());
    let target = query.target.as_deref().filter(|t| !t.is_empty());
    // A webhook URL is shown only as its origin without ManageConfiguration: matching the
    // whole URL would let such a caller guess at its path and query.
    if target.is_some() {
        scope.require(Permission::ManageConfiguration)?;
    }
    if let (Some(from), Some(to)) = (query.from, query.to)
        && from > to
    {
        return Err(ApiError::field("from", "must not be after to"));
    }
    let listing = format!(
        "deliveries:{}:{:?}:{:?}:{:?}:{device_id:?}:{target:?}:{:?}:{:?}:{}",
        scope.code(),
        status.map(DeliveryStatus::as_str),
        channel.map(Channel::as_str),
        query.alert_id,
        query.from,
        query.to,
        query.newest_first,
    );
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .list_deliveries(&DeliveryFilter {
            tenant_code: scope.code(),
            status,
            channel,
            alert_id: query.alert_id.map(AlertId::new),
            device_id,
            target,
            from: query.from,
            to: query.to,
            newest_first: query.newest_first,
            after: request.after.map(DeliveryId::new),
            limit: request.size + 1,
        })
        .await?;
    let page = Page::from_fetched(fetched, request, &app.paging, &listing, |d| {
        d.delivery_id.get()
    });
    Ok(Page {
        items: page.items.into_iter().map(|d| shown(&scope, d)).collect(),
        next: page.next,
    })
}

/// Get one of the tenant's deliveries (a webhook `Target` as the listing shows it).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/deliveries/{deliveryId}", tag = "Deliveries",
    params(DeliveryPath),
    responses((status = 200, body = Delivery), (status = 404, body = Problem)))]
async fn get_delivery(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DeliveryPath>,
) -> ApiResult<Record<Delivery>> {
    let id: DeliveryId = path.deliveryId.parse().map_err(|_| ApiError::NotFound)?;
    let delivery = app
        .store
        .get_delivery(scope.code(), id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(shown(&scope, delivery)))
}

/// Re-queue a `Failed`, `Expired` or `NotConfigured` delivery: due at once, its retry
/// period (`--retry-max-hours`) starting again. Answers the delivery as re-queued.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/deliveries/{deliveryId}/retry", tag = "Deliveries",
    params(DeliveryPath),
    responses((status = 200, body = Delivery, description = "Re-queued (`Pending`)"),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, description = "The delivery is Pending, Sent or NoAddress", body = Problem)))]
async fn retry_delivery(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<DeliveryPath>,
) -> ApiResult<Record<Delivery>> {
    scope.require(Permission::ManageConfiguration)?;
    let id: DeliveryId = path.deliveryId.parse().map_err(|_| ApiError::NotFound)?;
    let delivery = app
        .store
        .requeue_delivery(scope.code(), id, now(), &scope.audit())
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(delivery))
}
