//! Itineraries: `/V2/{t}/itineraries`, `/V2/{t}/itinerariesList` and
//! `/itineraries/{itineraryId}`. The sub-resources are in `itinerary_parts.rs`.
//!
//! Who sees what (docs/decisions.md): `Manager` and `Administrator` every itinerary in
//! scope; `User` and `ReadOnly` only their own — created by them, or naming their
//! username as a traveler's `EmailAddress`. `User` changes its own, `ReadOnly` nothing,
//! and only `Manager`/`Administrator` decide `ApprovalState`. An itinerary is addressed
//! under its own tenant (like users); lists widen to descendants with `subtenants=true`.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::itinerary::ItineraryWriteRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::ids::UserId;
use crate::domain::itinerary::filter::{ListFilter, PageRequest, RawFilter};
use crate::domain::itinerary::{ApprovalState, Itinerary, UserZone};
use crate::domain::user::{User, UserRef};
use crate::store::{ItineraryParts, ItineraryQuery, Owner, StoredItinerary};

impl Representable for Itinerary {
    const NAME: &'static str = "Itinerary";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_itineraries, create_itinerary))
        .routes(routes!(list_itineraries_paged))
        .routes(routes!(get_itinerary, update_itinerary, delete_itinerary))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
pub(super) struct ItineraryPath {
    tenantVarCode: String,
    /// Itinerary id (int32).
    #[param(value_type = i32)]
    pub itineraryId: String,
}

/// The query of both listings; each value is read as text so that a bad one is a 400
/// naming it (and so `pnrNumber` can make the others irrelevant).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Itineraries whose Start–End overlaps [startDate, endDate] (inclusive): RFC 3339;
    /// without an offset the time is UTC. Itineraries without segments match no window.
    #[param(value_type = Option<String>, format = DateTime)]
    start_date: Option<String>,
    #[param(value_type = Option<String>, format = DateTime)]
    end_date: Option<String>,
    /// -1 (default, any), 0 NoDecision, 1 Approved, 2 Declined.
    #[param(value_type = Option<i32>, minimum = -1, maximum = 2)]
    approval_state: Option<String>,
    /// Include the path tenant's descendants.
    #[param(value_type = Option<bool>)]
    subtenants: Option<String>,
    /// Only the caller's own: created by the caller or naming the caller (by e-mail) as
    /// a traveler.
    #[param(value_type = Option<bool>)]
    by_traveler_only: Option<String>,
    /// When given, only the path tenant's itineraries with this PNR (ignoring case), and
    /// the other filter parameters are ignored.
    pnr_number: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct PageQuery {
    /// Page number, from 1 (default 1).
    #[param(value_type = Option<i32>, minimum = 1)]
    page: Option<String>,
    /// Itineraries per page, 1 to 1,000 (default 100).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 1000)]
    page_size: Option<String>,
}

impl ListQuery {
    fn filter(&self) -> ApiResult<ListFilter> {
        Ok(ListFilter::parse(&RawFilter {
            start_date: self.start_date.as_deref(),
            end_date: self.end_date.as_deref(),
            approval_state: self.approval_state.as_deref(),
            subtenants: self.subtenants.as_deref(),
            by_traveler_only: self.by_traveler_only.as_deref(),
            pnr_number: self.pnr_number.as_deref(),
        })?)
    }
}

/// The caller as itineraries see it: whose own ones are theirs, and whether they manage all.
pub(super) struct Viewer {
    /// `None` for an API token: it owns no itineraries.
    pub user_id: Option<UserId>,
    pub username_key: String,
    /// Sees and changes every itinerary in scope, and decides approvals.
    pub manages: bool,
}

impl Viewer {
    pub fn of(scope: &TenantScope) -> Viewer {
        Viewer {
            user_id: scope.caller.user(),
            username_key: User::username_key(scope.caller.username().unwrap_or_default()),
            manages: scope.caller.has(Permission::ManageItineraries),
        }
    }

    pub fn owner(&self) -> Owner<'_> {
        Owner {
            user_id: self.user_id,
            username_key: &self.username_key,
        }
    }

    /// Whose itineraries this caller reads: every one, or only its own.
    pub fn visibility(&self) -> Option<Owner<'_>> {
        (!self.manages).then(|| self.owner())
    }
}

/// An int32 id from a path; anything else is a 400 naming the parameter.
pub(super) fn int32_id(parameter: &'static str, raw: &str) -> ApiResult<i64> {
    raw.parse::<i32>()
        .map(i64::from)
        .map_err(|_| ApiError::field(parameter, format!("'{raw}' is not an int32 id")))
}

/// Itinerary `id` of exactly the path tenant, if the caller may see it (else 404).
pub(super) async fn find(
    app: &AppState,
    scope: &TenantScope,
    caller: &Viewer,
    id: i64,
) -> ApiResult<StoredItinerary> {
    app.store
        .get_itinerary(scope.code(), id, caller.visibility())
        .await?
        .ok_or(ApiError::NotFound)
}

/// Changing an itinerary the caller can see: `Manager`+ any, `User` its own.
pub(super) fn require_write(scope: &TenantScope) -> ApiResult<()> {
    if scope.caller.has(Permission::ManageItineraries) {
        Ok(())
    } else {
        scope.require(Permission::KeepOwnItineraries)
    }
}

/// The caller's profile time zone (UTC when none).
async fn caller_zone(app: &AppState, scope: &TenantScope) -> ApiResult<UserZone> {
    // A token has no profile: UTC.
    let profile = match scope.caller.user() {
        Some(id) => {
            let user = UserRef::Id(id);
            app.store
                .get_profile(&scope.caller.tenant_code, &user)
                .await?
        }
        None => None,
    };
    Ok(UserZone::from_profile(
        profile
            .as_ref()
            .and_then(|(_, p)| p.time_zone_id.as_deref()),
    ))
}

fn assemble(it: StoredItinerary, parts: ItineraryParts, zone: &UserZone) -> ApiResult<Itinerary> {
    let id = i32::try_from(it.id)
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("itinerary id {} beyond int32", it.id)))?;
    Ok(Itinerary {
        id,
        tenant_code: it.tenant_code,
        start: it.start,
        end: it.end,
        start_user_time_zone: zone.local(it.start),
        end_user_time_zone: zone.local(it.end),
        user_time_zone_id: Some(zone.name.clone()),
        summary: it.fields.summary,
        approval_state: it.approval_state,
        overall_risk: it.overall_risk as i32,
        external_id: it.fields.external_id,
        external_status: it.fields.external_status,
        pnr_number: it.fields.pnr_number,
        notes: it.fields.notes,
        travelers: parts.travelers,
        hotels: parts.hotels,
        flights: parts.flights,
        journeys: parts.journeys,
        regions: parts.regions,
        etag: Some(it.etag),
    })
}

/// Full itineraries: their parts in a few batched queries, times in the caller's zone.
async fn present(
    app: &AppState,
    scope: &TenantScope,
    list: Vec<StoredItinerary>,
) -> ApiResult<Vec<Itinerary>> {
    let ids: Vec<i64> = list.iter().map(|i| i.id).collect();
    let mut parts = app
        .store
        .itinerary_parts(&ids, &scope.caller.tenant_path)
        .await?;
    let zone = caller_zone(app, scope).await?;
    list.into_iter()
        .map(|it| {
            let own = parts.remove(&it.id).unwrap_or_default();
            assemble(it, own, &zone)
        })
        .collect()
}

async fn listing(
    app: &AppState,
    scope: &TenantScope,
    filter: &ListFilter,
    page: Option<PageRequest>,
) -> ApiResult<Vec<Itinerary>> {
    let caller = Viewer::of(scope);
    let own = if filter.by_traveler_only {
        Some(caller.owner())
    } else {
        caller.visibility()
    };
    let list = app
        .store
        .list_itineraries(&ItineraryQuery {
            tenant_code: scope.code(),
            tenant_path: &scope.tenant.path,
            filter,
            own,
            page,
        })
        .await?;
    present(app, scope, list).await
}

/// List itineraries.
///
/// Full itineraries (with travelers, hotels, flights, journeys and regions) ordered by
/// `Start` (those without segments last), then `Id`. `User` and `ReadOnly` callers see
/// only their own.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/itineraries", tag = "Itineraries",
    params(TenantParam, ListQuery),
    responses((status = 200, body = [Itinerary]), (status = 400, body = Problem),
        (status = 404, body = Problem)))]
async fn list_itineraries(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListQuery>,
) -> ApiResult<RecordList<Itinerary>> {
    let filter = query.filter()?;
    Ok(RecordList(listing(&app, &scope, &filter, None).await?))
}

/// List itineraries by page.
///
/// The filters of `GET /itineraries` with `page` (from 1, default 1) and `pageSize`
/// (1 to 1,000, default 100), ordered by `Start` then `Id`. With `pnrNumber` the other
/// filters are ignored; paging still applies.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/itinerariesList", tag = "Itineraries",
    params(TenantParam, ListQuery, PageQuery),
    responses((status = 200, body = [Itinerary]), (status = 400, body = Problem),
        (status = 404, body = Problem)))]
async fn list_itineraries_paged(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListQuery>,
    Query(paging): Query<PageQuery>,
) -> ApiResult<RecordList<Itinerary>> {
    let filter = query.filter();
    let page = PageRequest::parse(paging.page.as_deref(), paging.page_size.as_deref());
    let (filter, page) = match (filter, page) {
        (Ok(f), Ok(p)) => (f, p),
        (Err(ApiError::Validation(mut a)), Err(b)) => {
            a.extend(b.0);
            return Err(ApiError::Validation(a));
        }
        (Err(e), _) => return Err(e),
        (_, Err(e)) => return Err(e.into()),
    };
    Ok(RecordList(
        listing(&app, &scope, &filter, Some(page)).await?,
    ))
}

/// Create an itinerary.
///
/// Body: `PnrNumber`, `Notes` (and, as extensions, `Summary`, `ExternalId`,
/// `ExternalStatus`; an `ApprovalState` other than `NoDecision` needs `Manager` or
/// `Administrator`). The caller becomes its owner. Answers 200 with no body and a
/// `Location` header naming the new `Id`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/itineraries", tag = "Itineraries",
    params(TenantParam), request_body = ItineraryWriteRecord,
    responses((status = 200, description = "Created; Location names the new itinerary"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn create_itinerary(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(incoming): Body<ItineraryWriteRecord>,
) -> ApiResult<OkWithLocation> {
    require_write(&scope)?;
    let caller = Viewer::of(&scope);
    let (fields, state) = incoming.validated()?;
    let state = state.unwrap_or_default();
    if state != ApprovalState::NoDecision && !caller.manages {
        return Err(approval_forbidden(&scope));
    }
    let id = app
        .store
        .create_itinerary(scope.code(), caller.user_id, &fields, state)
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/itineraries/{id}",
        scope.code()
    )))
}

fn approval_forbidden(scope: &TenantScope) -> ApiError {
    ApiError::Forbidden(format!(
        "only Manager and Administrator decide ApprovalState (the caller is {})",
        scope.caller.role
    ))
}

/// Get an itinerary.
///
/// The full itinerary; the `ETag` header is its version, which changes with any change
/// to it or its sub-resources.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}", tag = "Itineraries",
    params(ItineraryPath),
    responses((status = 200, body = Itinerary, headers(("ETag" = String, description = "Record version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn get_itinerary(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ItineraryPath>,
) -> ApiResult<Record<Itinerary>> {
    let id = int32_id("itineraryId", &path.itineraryId)?;
    let found = find(&app, &scope, &Viewer::of(&scope), id).await?;
    let mut list = present(&app, &scope, vec![found]).await?;
    list.pop().map(Record).ok_or(ApiError::NotFound)
}

/// Update an itinerary.
///
/// Body: `ApprovalState` (by name or as 0, 1, 2; null keeps it), `PnrNumber`, `Notes`
/// (and the extensions of POST); the other fields of a read itinerary are ignored.
/// Changing `ApprovalState` needs `Manager` or `Administrator` (403). `If-Match` is
/// honoured (412).
#[utoipa::path(put, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}", tag = "Itineraries",
    params(ItineraryPath), request_body = ItineraryWriteRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 412, body = Problem)))]
async fn update_itinerary(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ItineraryPath>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<ItineraryWriteRecord>,
) -> ApiResult<EmptyOk> {
    let id = int32_id("itineraryId", &path.itineraryId)?;
    let caller = Viewer::of(&scope);
    let existing = find(&app, &scope, &caller, id).await?;
    require_write(&scope)?;
    let (fields, state) = incoming.validated()?;
    let state = match state {
        Some(s) if caller.manages => Some(s),
        // Sending the state back unchanged is fine; it is kept, not written, so a
        // decision made meanwhile is not undone.
        Some(s) if s == existing.approval_state => None,
        Some(_) => return Err(approval_forbidden(&scope)),
        None => None,
    };
    app.store
        .update_itinerary(scope.code(), id, &fields, state, if_match.as_deref())
        .await?;
    Ok(EmptyOk)
}

/// Delete an itinerary.
///
/// With its flights, journeys, hotels, travelers and region attachments. `If-Match` is
/// honoured (412).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}", tag = "Itineraries",
    params(ItineraryPath),
    responses((status = 200, description = "Deleted"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 412, body = Problem)))]
async fn delete_itinerary(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ItineraryPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    let id = int32_id("itineraryId", &path.itineraryId)?;
    find(&app, &scope, &Viewer::of(&scope), id).await?;
    require_write(&scope)?;
    app.store
        .delete_itinerary(scope.code(), id, if_match.as_deref())
        .await?;
    Ok(EmptyOk)
}
