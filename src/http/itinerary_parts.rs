//! The sub-resources of an itinerary, under `/V2/{t}/itineraries/{itineraryId}`:
//! `/flights`, `/journeys`, `/hotels` (GET list, POST, GET one, PUT one, DELETE one),
//! `/travelers` (GET list, POST, GET one, DELETE one; no PUT) and `/regions` (GET list;
//! POST and DELETE `/regions/{geometryId}` attach and detach a risk region).
//!
//! Reading needs the itinerary to be visible to the caller; changing it follows the
//! itinerary's own rule (`itineraries.rs`). Writes honour `If-Match` with the
//! itinerary's version, which every GET here carries as `ETag`.

use axum::extract::{Path, State};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::itineraries::{ItineraryPath, Viewer, find, int32_id, require_write};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::itinerary::TravelerRecord;
use super::records::itinerary_segments::{FlightRecord, HotelRecord, JourneyRecord, SegmentRecord};
use crate::domain::ids::GeometryId;
use crate::domain::itinerary::{Flight, Hotel, Journey, Region, Segment, Traveler};
use crate::store::{ItineraryKey, StoredItinerary};

impl Representable for Flight {
    const NAME: &'static str = "Flight";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}
impl Representable for Journey {
    const NAME: &'static str = "Journey";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}
impl Representable for Hotel {
    const NAME: &'static str = "Hotel";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}
impl Representable for Traveler {
    const NAME: &'static str = "Traveler";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}
impl Representable for Region {
    const NAME: &'static str = "Region";
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_flights, create_flight))
        .routes(routes!(get_flight, update_flight, delete_flight))
        .routes(routes!(list_journeys, create_journey))
        .routes(routes!(get_journey, update_journey, delete_journey))
        .routes(routes!(list_hotels, create_hotel))
        .routes(routes!(get_hotel, update_hotel, delete_hotel))
        .routes(routes!(list_travelers, create_traveler))
        .routes(routes!(get_traveler, delete_traveler))
        .routes(routes!(list_regions))
        .routes(routes!(attach_region, detach_region))
}

/// The itinerary a sub-resource request addresses, checked: ids parsed (400), the
/// itinerary visible to the caller (404).
async fn itinerary(
    app: &AppState,
    scope: &TenantScope,
    raw_id: &str,
) -> ApiResult<StoredItinerary> {
    let id = int32_id("itineraryId", raw_id)?;
    find(app, scope, &Viewer::of(scope), id).await
}

fn key<'a>(scope: &'a TenantScope, it: &StoredItinerary) -> ItineraryKey<'a> {
    ItineraryKey {
        id: it.id,
        tenant_code: scope.code(),
        tenant_path: &scope.tenant.path,
    }
}

// ---- segments: one implementation, three kinds ------------------------------------

async fn list_segments<T: Segment + DeserializeOwned>(
    app: &AppState,
    scope: &TenantScope,
    raw_itinerary: &str,
) -> ApiResult<RecordList<T>> {
    let it = itinerary(app, scope, raw_itinerary).await?;
    Ok(RecordList(app.store.list_segments::<T>(it.id).await?))
}

async fn create_segment<R: SegmentRecord<Segment: Serialize>>(
    app: &AppState,
    scope: &TenantScope,
    raw_itinerary: &str,
    if_match: Option<&str>,
    incoming: R,
    plural: &str,
) -> ApiResult<OkWithLocation> {
    let it = itinerary(app, scope, raw_itinerary).await?;
    require_write(scope)?;
    let segment = incoming.validated()?;
    let id = app
        .store
        .create_segment(key(scope, &it), &segment, if_match)
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/itineraries/{}/{plural}/{id}",
        scope.code(),
        it.id
    )))
}

async fn get_segment<T: Segment + DeserializeOwned + Representable>(
    app: &AppState,
    scope: &TenantScope,
    (raw_itinerary, raw_id, parameter): (&str, &str, &'static str),
) -> ApiResult<Record<T>> {
    let id = int32_id(parameter, raw_id)?;
    let it = itinerary(app, scope, raw_itinerary).await?;
    let segment = app
        .store
        .get_segment::<T>(it.id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(segment.with_etag(it.etag)))
}

async fn update_segment<R: SegmentRecord<Segment: Serialize>>(
    app: &AppState,
    scope: &TenantScope,
    (raw_itinerary, raw_id, parameter): (&str, &str, &'static str),
    if_match: Option<&str>,
    incoming: R,
) -> ApiResult<EmptyOk> {
    let id = int32_id(parameter, raw_id)?;
    let it = itinerary(app, scope, raw_itinerary).await?;
    require_write(scope)?;
    let segment = incoming.validated()?;
    app.store
        .update_segment(key(scope, &it), id, &segment, if_match)
        .await?;
    Ok(EmptyOk)
}

async fn delete_segment<T: Segment>(
    app: &AppState,
    scope: &TenantScope,
    (raw_itinerary, raw_id, parameter): (&str, &str, &'static str),
    if_match: Option<&str>,
) -> ApiResult<EmptyOk> {
    let id = int32_id(parameter, raw_id)?;
    let it = itinerary(app, scope, raw_itinerary).await?;
    require_write(scope)?;
    app.store
        .delete_segment(key(scope, &it), T::KIND, id, if_match)
        .await?;
    Ok(EmptyOk)
}

/// The five handlers of one segment kind, each with its OpenAPI description: a body is
/// the wire `record`, an answer the `domain` segment (whose JSON is the record's).
macro_rules! segment_handlers {
    (
        record: $record:ty, domain: $domain:ty, plural: $plural:literal, tag: $tag:literal,
        path: $path_struct:ident { $id:ident }, list_path: $list_path:literal, one_path: $one_path:literal,
        list: $list:ident, create: $create:ident, get: $get:ident, update: $update:ident, delete: $delete:ident,
        summaries: [$list_doc:literal, $create_doc:literal, $get_doc:literal, $update_doc:literal, $delete_doc:literal],
        rule: $rule:literal $(,)?
    ) => {
        #[derive(Debug, serde::Deserialize, IntoParams)]
        #[into_params(parameter_in = Path)]
        #[allow(non_snake_case, dead_code)]
        struct $path_struct {
            tenantVarCode: String,
            /// Itinerary id (int32).
            #[param(value_type = i32)]
            itineraryId: String,
            /// Id (int32).
            #[param(value_type = i32)]
            $id: String,
        }

        #[utoipa::path(get, path = $list_path, tag = $tag, summary = $list_doc,
            description = "In order of start time, then id.",
            params(ItineraryPath),
            responses((status = 200, body = [$record]), (status = 400, body = Problem),
                (status = 404, body = Problem)))]
        async fn $list(
            scope: TenantScope,
            State(app): State<AppState>,
            Path(path): Path<ItineraryPath>,
        ) -> ApiResult<RecordList<$domain>> {
            list_segments(&app, &scope, &path.itineraryId).await
        }

        #[utoipa::path(post, path = $list_path, tag = $tag, summary = $create_doc,
            description = $rule,
            params(ItineraryPath), request_body = $record,
            responses((status = 200, description = "Created; Location names the new record"),
                (status = 400, body = Problem), (status = 403, body = Problem),
                (status = 404, body = Problem), (status = 409, body = Problem),
                (status = 412, body = Problem)))]
        async fn $create(
            scope: TenantScope,
            State(app): State<AppState>,
            Path(path): Path<ItineraryPath>,
            IfMatch(if_match): IfMatch,
            Body(incoming): Body<$record>,
        ) -> ApiResult<OkWithLocation> {
            create_segment(&app, &scope, &path.itineraryId, if_match.as_deref(), incoming, $plural)
                .await
        }

        #[utoipa::path(get, path = $one_path, tag = $tag, summary = $get_doc,
            description = "The `ETag` header is the itinerary's version.",
            params($path_struct),
            responses((status = 200, body = $record, headers(("ETag" = String, description = "The itinerary's version"))),
                (status = 304, description = "Not modified (If-None-Match)"),
                (status = 400, body = Problem), (status = 404, body = Problem)))]
        async fn $get(
            scope: TenantScope,
            State(app): State<AppState>,
            Path(path): Path<$path_struct>,
        ) -> ApiResult<Record<$domain>> {
            get_segment(&app, &scope, (&path.itineraryId, &path.$id, stringify!($id))).await
        }

        #[utoipa::path(put, path = $one_path, tag = $tag, summary = $update_doc,
            description = $rule,
            params($path_struct), request_body = $record,
            responses((status = 200, description = "Updated"), (status = 400, body = Problem),
                (status = 403, body = Problem), (status = 404, body = Problem),
                (status = 412, body = Problem)))]
        async fn $update(
            scope: TenantScope,
            State(app): State<AppState>,
            Path(path): Path<$path_struct>,
            IfMatch(if_match): IfMatch,
            Body(incoming): Body<$record>,
        ) -> ApiResult<EmptyOk> {
            update_segment(
                &app,
                &scope,
                (&path.itineraryId, &path.$id, stringify!($id)),
                if_match.as_deref(),
                incoming,
            )
            .await
        }

        #[utoipa::path(delete, path = $one_path, tag = $tag, summary = $delete_doc,
            description = "Start, End and OverallRisk of the itinerary follow.",
            params($path_struct),
            responses((status = 200, description = "Deleted"), (status = 400, body = Problem),
                (status = 403, body = Problem), (status = 404, body = Problem),
                (status = 412, body = Problem)))]
        async fn $delete(
            scope: TenantScope,
            State(app): State<AppState>,
            Path(path): Path<$path_struct>,
            IfMatch(if_match): IfMatch,
        ) -> ApiResult<EmptyOk> {
            delete_segment::<$domain>(
                &app,
                &scope,
                (&path.itineraryId, &path.$id, stringify!($id)),
                if_match.as_deref(),
            )
            .await
        }
    };
}

segment_handlers! {
    record: FlightRecord, domain: Flight, plural: "flights", tag: "Itineraries",
    path: FlightPath { flightId },
    list_path: "/V2/{tenantVarCode}/itineraries/{itineraryId}/flights",
    one_path: "/V2/{tenantVarCode}/itineraries/{itineraryId}/flights/{flightId}",
    list: list_flights, create: create_flight, get: get_flight, update: update_flight,
    delete: delete_flight,
    summaries: ["List an itinerary's flights", "Add a flight", "Get a flight",
        "Replace a flight", "Delete a flight"],
    rule: "Of `DepartureTimeLocal`/`DepartureTime` and of `ArrivalTimeLocal`/`ArrivalTime` at \
        least one is required; the other is computed with `DepartureTimeZoneId`/`ArrivalTimeZoneId` \
        (IANA or Windows names). Local times are written without offset; one skipped by a \
        daylight-saving change is a 400, one repeated is the earlier instant; both given must \
        agree. Arrival before departure is a 400. Country codes are ISO 3166-1 alpha-2. \
        Start, End and OverallRisk of the itinerary follow.",
}

segment_handlers! {
    record: JourneyRecord, domain: Journey, plural: "journeys", tag: "Itineraries",
    path: JourneyPath { journeyId },
    list_path: "/V2/{tenantVarCode}/itineraries/{itineraryId}/journeys",
    one_path: "/V2/{tenantVarCode}/itineraries/{itineraryId}/journeys/{journeyId}",
    list: list_journeys, create: create_journey, get: get_journey, update: update_journey,
    delete: delete_journey,
    summaries: ["List an itinerary's journeys", "Add a journey", "Get a journey",
        "Replace a journey", "Delete a journey"],
    rule: "`JourneyType` is required: Walk, Car, Taxi, Bus, Train, Ferry, Bicycle, Motorcycle \
        or Other (any case). Times follow the flight rule: of each local/UTC pair at least one, \
        the other computed with the pair's time zone; arrival before departure is a 400. \
        Start, End and OverallRisk of the itinerary follow.",
}

segment_handlers! {
    record: HotelRecord, domain: Hotel, plural: "hotels", tag: "Itineraries",
    path: HotelPath { hotelId },
    list_path: "/V2/{tenantVarCode}/itineraries/{itineraryId}/hotels",
    one_path: "/V2/{tenantVarCode}/itineraries/{itineraryId}/hotels/{hotelId}",
    list: list_hotels, create: create_hotel, get: get_hotel, update: update_hotel,
    delete: delete_hotel,
    summaries: ["List an itinerary's hotel stays", "Add a hotel stay", "Get a hotel stay",
        "Replace a hotel stay", "Delete a hotel stay"],
    rule: "Of `CheckInTimeLocal`/`CheckInTime` and of `CheckOutTimeLocal`/`CheckOutTime` at \
        least one is required; the other is computed with `TimeZoneId`. Check-out before \
        check-in is a 400. Start, End and OverallRisk of the itinerary follow.",
}

// ---- travelers ---------------------------------------------------------------------

#[derive(Debug, serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct TravelerPath {
    tenantVarCode: String,
    /// Itinerary id (int32).
    #[param(value_type = i32)]
    itineraryId: String,
    /// Traveler id (int32).
    #[param(value_type = i32)]
    travelerId: String,
}

/// List an itinerary's travelers.
///
/// In id order. A traveler whose `EmailAddress` is the username of a user within the
/// caller's scope carries that user's profile fields (`Citizenship`, `Address`,
/// `CityStatePostalCode`, `Country`, `PhoneNumbersAll`, `EmergencyContact1`,
/// `EmergencyContact2`).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}/travelers",
    tag = "Itineraries", params(ItineraryPath),
    responses((status = 200, body = [TravelerRecord]), (status = 400, body = Problem),
        (status = 404, body = Problem)))]
async fn list_travelers(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ItineraryPath>,
) -> ApiResult<RecordList<Traveler>> {
    let it = itinerary(&app, &scope, &path.itineraryId).await?;
    let travelers = app
        .store
        .travelers(&[it.id], None, &scope.caller.tenant_path)
        .await?;
    Ok(RecordList(travelers.into_iter().map(|(_, t)| t).collect()))
}

/// Add a traveler.
///
/// `EmailAddress` is required and unique within the itinerary, ignoring case (409).
/// The profile fields are read-only: filled from the matching user when read.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}/travelers",
    tag = "Itineraries", params(ItineraryPath), request_body = TravelerRecord,
    responses((status = 200, description = "Created; Location names the new traveler"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem),
        (status = 412, body = Problem)))]
async fn create_traveler(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ItineraryPath>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<TravelerRecord>,
) -> ApiResult<OkWithLocation> {
    let it = itinerary(&app, &scope, &path.itineraryId).await?;
    require_write(&scope)?;
    let (traveler, email_key) = incoming.validated()?;
    let id = app
        .store
        .create_traveler(key(&scope, &it), &traveler, &email_key, if_match.as_deref())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/itineraries/{}/travelers/{id}",
        scope.code(),
        it.id
    )))
}

/// Get a traveler.
///
/// With the matching user's profile fields. The `ETag` header is the itinerary's
/// version.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}/travelers/{travelerId}",
    tag = "Itineraries", params(TravelerPath),
    responses((status = 200, body = TravelerRecord, headers(("ETag" = String, description = "The itinerary's version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn get_traveler(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<TravelerPath>,
) -> ApiResult<Record<Traveler>> {
    let id = int32_id("travelerId", &path.travelerId)?;
    let it = itinerary(&app, &scope, &path.itineraryId).await?;
    let traveler = app
        .store
        .travelers(&[it.id], Some(id), &scope.caller.tenant_path)
        .await?
        .pop()
        .map(|(_, t)| t)
        .ok_or(ApiError::NotFound)?;
    Ok(Record(Traveler {
        etag: Some(it.etag),
        ..traveler
    }))
}

/// Remove a traveler.
///
/// Travelers have no PUT (405): remove and add again.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}/travelers/{travelerId}",
    tag = "Itineraries", params(TravelerPath),
    responses((status = 200, description = "Deleted"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 412, body = Problem)))]
async fn delete_traveler(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<TravelerPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    let id = int32_id("travelerId", &path.travelerId)?;
    let it = itinerary(&app, &scope, &path.itineraryId).await?;
    require_write(&scope)?;
    app.store
        .delete_traveler(key(&scope, &it), id, if_match.as_deref())
        .await?;
    Ok(EmptyOk)
}

// ---- attached risk regions ---------------------------------------------------------

#[derive(Debug, serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct RegionPath {
    tenantVarCode: String,
    /// Itinerary id (int32).
    #[param(value_type = i32)]
    itineraryId: String,
    /// A risk region's `GeometryId` (case-sensitive).
    geometryId: String,
}

/// An id no region may have names nothing (404).
fn geometry_id(segment: &str) -> ApiResult<GeometryId> {
    segment.parse().map_err(|_| ApiError::NotFound)
}

/// List the risk regions attached to an itinerary.
///
/// By `GeometryId`. Regions that contain a segment's position without being attached
/// count towards `OverallRisk` but are not listed here.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}/regions",
    tag = "Itineraries", params(ItineraryPath),
    responses((status = 200, body = [Region]), (status = 400, body = Problem),
        (status = 404, body = Problem)))]
async fn list_regions(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ItineraryPath>,
) -> ApiResult<RecordList<Region>> {
    let it = itinerary(&app, &scope, &path.itineraryId).await?;
    Ok(RecordList(app.store.list_attached_regions(it.id).await?))
}

/// Attach a risk region.
///
/// No body. The region is one the itinerary's tenant sees (its own first, else the
/// nearest ancestor's shared one); an unknown `GeometryId` is a 404. Attaching an
/// attached region is idempotent: 200, nothing changes.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}/regions/{geometryId}",
    tag = "Itineraries", params(RegionPath),
    responses((status = 200, description = "Attached (or already attached)"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem),
        (status = 412, body = Problem)))]
async fn attach_region(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<RegionPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    let it = itinerary(&app, &scope, &path.itineraryId).await?;
    require_write(&scope)?;
    let region = geometry_id(&path.geometryId)?;
    app.store
        .attach_region(key(&scope, &it), &region, if_match.as_deref())
        .await?;
    Ok(EmptyOk)
}

/// Detach a risk region.
///
/// A region that is not attached is a 404.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/itineraries/{itineraryId}/regions/{geometryId}",
    tag = "Itineraries", params(RegionPath),
    responses((status = 200, description = "Detached"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 412, body = Problem)))]
async fn detach_region(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<RegionPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    let it = itinerary(&app, &scope, &path.itineraryId).await?;
    require_write(&scope)?;
    let region = geometry_id(&path.geometryId)?;
    app.store
        .detach_region(key(&scope, &it), &region, if_match.as_deref())
        .await?;
    Ok(EmptyOk)
}
