//! Itineraries and their listing. An itinerary belongs to exactly one tenant; its
//! segments, travelers and attached regions live in their own tables
//! (`itinerary_parts.rs`), and its derived columns (`start_at`, `end_at`,
//! `overall_risk`) are rewritten in every transaction that changes what they derive
//! from (`itinerary_risk.rs`).

use std::collections::HashMap;

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::{
    Key, Store, StoreError, StoreResult, VersionedRow, from_micros, new_etag, to_doc, to_micros,
};
use crate::domain::ids::{TenantCode, UserId};
use crate::domain::itinerary::filter::{ListFilter, PageRequest};
use crate::domain::itinerary::{
    ApprovalState, Flight, Hotel, ItineraryFields, Journey, Region, Segment, SegmentKind, Traveler,
};
use crate::domain::profile::UserProfile;
use crate::domain::time::now;

/// Most ids one `IN (…)` list binds.
const CHUNK: usize = 500;

/// An itinerary row.
#[derive(Debug, Clone)]
pub struct StoredItinerary {
    pub id: i64,
    pub tenant_code: TenantCode,
    pub owner_user_id: Option<UserId>,
    pub approval_state: ApprovalState,
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    pub overall_risk: i64,
    pub fields: ItineraryFields,
    pub etag: String,
}

/// The sub-resources of one itinerary, each in its listing order (segments by start
/// time, travelers by id, regions by GeometryId).
#[derive(Debug, Clone, Default)]
pub struct ItineraryParts {
    pub flights: Vec<Flight>,
    pub journeys: Vec<Journey>,
    pub hotels: Vec<Hotel>,
    pub travelers: Vec<Traveler>,
    pub regions: Vec<Region>,
}

/// A user whose own itineraries are meant: those the user created, and those naming
/// the user's username (key) as a traveler's `EmailAddress`.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// `None` for an API token, which created none.
    pub user_id: Option<UserId>,
    pub username_key: &'a str,
}

impl Owner<'_> {
    /// The id to compare `owner_user_id` with: no user has id 0, so a token's own
    /// itineraries are none.
    fn id_or_none(&self) -> i64 {
        self.user_id.map_or(0, UserId::get)
    }
}

/// A listing: the path tenant (with its path, for `subtenants`), the filter, and
/// whose itineraries only (the reader's role or `byTravelerOnly`).
pub struct ItineraryQuery<'a> {
    pub tenant_code: &'a TenantCode,
    pub tenant_path: &'a str,
    pub filter: &'a ListFilter,
    pub own: Option<Owner<'a>>,
    pub page: Option<PageRequest>,
}

const COLUMNS: &str = "i.id, i.tenant_code, i.owner_user_id, i.approval_state, i.start_at, \
     i.end_at, i.overall_risk, i.doc, i.etag";

/// An `itineraries` row as selected by `COLUMNS`.
#[derive(sqlx::FromRow)]
struct ItineraryRow {
    id: i64,
    tenant_code: String,
    owner_user_id: Option<i64>,
    approval_state: i64,
    start_at: Option<i64>,
    end_at: Option<i64>,
    overall_risk: i64,
    doc: String,
    etag: String,
}

impl ItineraryRow {
    fn into_stored(self) -> StoreResult<StoredItinerary> {
        let state = self.approval_state;
        Ok(StoredItinerary {
            id: self.id,
            tenant_code: TenantCode::from_store(self.tenant_code),
            owner_user_id: self.owner_user_id.map(UserId::new),
            approval_state: ApprovalState::from_code(state)
                .ok_or_else(|| StoreError::Corrupt(format!("approval state {state}")))?,
            start: from_micros(self.start_at)?,
            end: from_micros(self.end_at)?,
            overall_risk: self.overall_risk,
            fields: parse_doc(&self.doc, "itinerary")?,
            etag: self.etag,
        })
    }
}

fn itinerary_from_row(row: &AnyRow) -> StoreResult<StoredItinerary> {
    ItineraryRow::from_row(row)?.into_stored()
}

/// A document column's record.
pub(super) fn parse_doc<T: DeserializeOwned>(text: &str, what: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{what} document: {e}")))
}

/// A sub-resource row (segment or traveler) as far as its record goes: `id, doc`.
#[derive(sqlx::FromRow)]
pub(super) struct PartRow {
    pub(super) id: i64,
    pub(super) doc: String,
}

impl PartRow {
    /// The id, int32 in the contract.
    pub(super) fn part_id(&self) -> StoreResult<i32> {
        let id = self.id;
        i32::try_from(id).map_err(|_| StoreError::Corrupt(format!("id {id} beyond int32")))
    }

    pub(super) fn into_segment<T: Segment + DeserializeOwned>(self) -> StoreResult<T> {
        let id = self.part_id()?;
        Ok(parse_doc::<T>(&self.doc, T::KIND.as_str())?.with_id(id))
    }

    pub(super) fn into_traveler(self) -> StoreResult<Traveler> {
        Ok(Traveler {
            id: Some(self.part_id()?),
            ..parse_doc(&self.doc, "traveler")?
        })
    }
}

/// An `itinerary_segments` row as listed for many itineraries.
#[derive(sqlx::FromRow)]
struct SegmentRow {
    id: i64,
    itinerary_id: i64,
    kind: String,
    doc: String,
}

/// The segment kind a `kind` column names.
fn segment_kind(text: &str) -> Option<SegmentKind> {
    [
        SegmentKind::Flight,
        SegmentKind::Journey,
        SegmentKind::Hotel,
    ]
    .into_iter()
    .find(|kind| kind.as_str() == text)
}

impl SegmentRow {
    /// Adds the segment to its itinerary's parts.
    fn add_to(self, parts: &mut HashMap<i64, ItineraryParts>) -> StoreResult<()> {
        let kind = segment_kind(&self.kind)
            .ok_or_else(|| StoreError::Corrupt(format!("segment kind {}", self.kind)))?;
        let entry = parts.entry(self.itinerary_id).or_default();
        let part = PartRow {
            id: self.id,
            doc: self.doc,
        };
        match kind {
            SegmentKind::Flight => entry.flights.push(part.into_segment::<Flight>()?),
            SegmentKind::Journey => entry.journeys.push(part.into_segment::<Journey>()?),
            SegmentKind::Hotel => entry.hotels.push(part.into_segment::<Hotel>()?),
        }
        Ok(())
    }
}

/// A region attached to an itinerary, as listed for many itineraries.
#[derive(sqlx::FromRow)]
struct AttachedRegionRow {
    itinerary_id: i64,
    geometry_id: String,
    name: String,
}

/// A traveler with the profile of the user it names, if within the reader's scope.
#[derive(sqlx::FromRow)]
struct TravelerRow {
    id: i64,
    itinerary_id: i64,
    doc: String,
    profile_doc: Option<String>,
}

impl TravelerRow {
    fn into_traveler(self) -> StoreResult<(i64, Traveler)> {
        let traveler = PartRow {
            id: self.id,
            doc: self.doc,
        }
        .into_traveler()?;
        let traveler = match self.profile_doc {
            Some(text) => {
                let profile: UserProfile = serde_json::from_str(&text)
                    .map_err(|e| StoreError::Corrupt(format!("profile_doc: {e}")))?;
                traveler.with_profile(&profile)
            }
            None => traveler,
        };
        Ok((self.itinerary_id, traveler))
    }
}

/// A value bound to a dynamically numbered placeholder.
pub(super) enum Bind {
    Int(i64),
    Text(String),
}

/// `$from, $from+1, …` for `n` values.
pub(super) fn placeholders(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Visibility as SQL: who may read an itinerary `i` ($n = user id, $n+1 = username key).
fn own_condition(n: usize) -> String {
    format!(
        "(i.owner_user_id = ${n} OR EXISTS (SELECT 1 FROM itinerary_travelers v
             WHERE v.itinerary_id = i.id AND v.email_key = ${}))",
        n + 1
    )
}

impl Store {
    /// Inserts an itinerary (no segments yet) created by `owner`.
    pub async fn create_itinerary(
        &self,
        tenant_code: &TenantCode,
        owner_user_id: Option<UserId>,
        fields: &ItineraryFields,
        state: ApprovalState,
    ) -> StoreResult<i64> {
        let now = to_micros(now());
        let row = sqlx::query(
            "INSERT INTO itineraries (tenant_code, owner_user_id, approval_state, pnr_key,
                overall_risk, doc, etag, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 0, $5, $6, $7, $7) RETURNING id",
        )
        .bind(tenant_code.as_str())
        .bind(owner_user_id.map(UserId::get))
        .bind(state.code())
        .bind(fields.pnr_key())
        .bind(to_doc(fields)?)
        .bind(new_etag())
        .bind(now)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get("id")?)
    }

    /// One itinerary of exactly this tenant; with `own`, only if it is that user's.
    pub async fn get_itinerary(
        &self,
        tenant_code: &TenantCode,
        id: i64,
        own: Option<Owner<'_>>,
    ) -> StoreResult<Option<StoredItinerary>> {
        let condition = match own {
            None => String::new(),
            Some(_) => format!(" AND {}", own_condition(3)),
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM itineraries i WHERE i.id = $1 AND i.tenant_code = $2{condition}"
        );
        let mut query = sqlx::query(&sql).bind(id).bind(tenant_code.as_str());
        if let Some(owner) = own {
            query = query.bind(owner.id_or_none()).bind(owner.username_key);
        }
        let row = query.fetch_optional(&self.pool).await?;
        row.as_ref().map(itinerary_from_row).transpose()
    }

    /// Itineraries matching the query, ordered by `Start` (itineraries without segments
    /// last) then id.
    pub async fn list_itineraries(
        &self,
        q: &ItineraryQuery<'_>,
    ) -> StoreResult<Vec<StoredItinerary>> {
        let mut binds = Vec::new();
        let mut conditions = Vec::new();
        let push = |binds: &mut Vec<Bind>, value: Bind| {
            binds.push(value);
            binds.len()
        };
        // Only the user's own: the (small) set from two indexed lookups drives the query,
        // each member then found by primary key and checked against the filters. (`CROSS
        // JOIN` keeps that order on SQLite, whose planner would otherwise scan the tenant's
        // itineraries in the window; PostgreSQL plans it as an inner join.)
        let mut from = String::from("itineraries i");
        if let Some(owner) = q.own {
            let n = push(&mut binds, Bind::Int(owner.id_or_none()));
            push(&mut binds, Bind::Text(owner.username_key.to_string()));
            from = format!(
                "(SELECT o.id FROM itineraries o WHERE o.owner_user_id = ${n}
                  UNION SELECT v.itinerary_id FROM itinerary_travelers v WHERE v.email_key = ${}) own
                 CROSS JOIN itineraries i",
                n + 1
            );
            conditions.push("i.id = own.id".to_string());
        }
        // `pnrNumber` replaces the other filters, and the tenant's descendants are only
        // included on request (a PNR search gives `subtenants` no value).
        if q.filter.subtenants && q.filter.pnr.is_none() {
            let n = push(&mut binds, Bind::Text(format!("{}%", q.tenant_path)));
            from.push_str(" JOIN tenants t ON t.code = i.tenant_code");
            conditions.push(format!("t.path LIKE ${n}"));
        } else {
            let n = push(&mut binds, Bind::Text(q.tenant_code.to_string()));
            conditions.push(format!("i.tenant_code = ${n}"));
        }
        if let Some(pnr) = &q.filter.pnr {
            let n = push(&mut binds, Bind::Text(pnr.clone()));
            conditions.push(format!("i.pnr_key = ${n}"));
        }
        if let Some(to) = q.filter.to {
            let n = push(&mut binds, Bind::Int(to_micros(to)));
            conditions.push(format!("i.start_at <= ${n}"));
        }
        if let Some(from) = q.filter.from {
            let n = push(&mut binds, Bind::Int(to_micros(from)));
            conditions.push(format!("i.end_at >= ${n}"));
        }
        if let Some(state) = q.filter.approval_state {
            let n = push(&mut binds, Bind::Int(state.code()));
            conditions.push(format!("i.approval_state = ${n}"));
        }
        let mut sql = format!(
            "SELECT {COLUMNS} FROM {from} WHERE {} ORDER BY i.start_at ASC NULLS LAST, i.id",
            conditions.join(" AND ")
        );
        if let Some(page) = q.page {
            let n = push(&mut binds, Bind::Int(page.size));
            push(&mut binds, Bind::Int(page.offset()));
            sql.push_str(&format!(" LIMIT ${n} OFFSET ${}", n + 1));
        }
        let mut query = sqlx::query(&sql);
        for bind in binds {
            query = match bind {
                Bind::Int(v) => query.bind(v),
                Bind::Text(v) => query.bind(v),
            };
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter().map(itinerary_from_row).collect()
    }

    /// The sub-resources of these itineraries, in three queries per 500 itineraries.
    /// Travelers whose `EmailAddress` is the username of a user within `scope_path` (the
    /// reader's subtree) get that user's profile fields.
    pub async fn itinerary_parts(
        &self,
        ids: &[i64],
        scope_path: &str,
    ) -> StoreResult<HashMap<i64, ItineraryParts>> {
        let mut parts: HashMap<i64, ItineraryParts> = ids
            .iter()
            .map(|id| (*id, ItineraryParts::default()))
            .collect();
        for chunk in ids.chunks(CHUNK) {
            let list = placeholders(1, chunk.len());
            let sql = format!(
                "SELECT id, itinerary_id, kind, doc FROM itinerary_segments
                 WHERE itinerary_id IN ({list}) ORDER BY itinerary_id, start_at, id"
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&self.pool).await? {
                SegmentRow::from_row(&row)?.add_to(&mut parts)?;
            }

            for (itinerary, traveler) in self.travelers(chunk, None, scope_path).await? {
                parts.entry(itinerary).or_default().travelers.push(traveler);
            }

            let list = placeholders(1, chunk.len());
            let sql = format!(
                "SELECT ir.itinerary_id, r.geometry_id, r.name FROM itinerary_regions ir
                 JOIN risk_regions r ON r.id = ir.region_id
                 WHERE ir.itinerary_id IN ({list}) ORDER BY ir.itinerary_id, r.geometry_id, r.id"
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&self.pool).await? {
                let row = AttachedRegionRow::from_row(&row)?;
                parts
                    .entry(row.itinerary_id)
                    .or_default()
                    .regions
                    .push(Region {
                        name: Some(row.name),
                        geometry_id: Some(crate::domain::ids::GeometryId::from_store(
                            row.geometry_id,
                        )),
                    });
            }
        }
        Ok(parts)
    }

    /// Travelers of these itineraries (or only the one with `traveler_id`) with their
    /// profile fields, as (itinerary id, traveler) in itinerary then traveler id order.
    pub async fn travelers(
        &self,
        itinerary_ids: &[i64],
        traveler_id: Option<i64>,
        scope_path: &str,
    ) -> StoreResult<Vec<(i64, Traveler)>> {
        let mut found = Vec::new();
        for chunk in itinerary_ids.chunks(CHUNK) {
            let list = placeholders(3, chunk.len());
            let only = if traveler_id.is_some() {
                "tr.id = $2"
            } else {
                "$2 = 0"
            };
            let sql = format!(
                "SELECT tr.id, tr.itinerary_id, tr.doc,
                        CASE WHEN ut.path LIKE $1 THEN u.profile_doc END AS profile_doc
                 FROM itinerary_travelers tr
                 LEFT JOIN users u ON u.username_key = tr.email_key
                 LEFT JOIN tenants ut ON ut.code = u.tenant_code
                 WHERE {only} AND tr.itinerary_id IN ({list}) ORDER BY tr.itinerary_id, tr.id"
            );
            let mut query = sqlx::query(&sql)
                .bind(format!("{scope_path}%"))
                .bind(traveler_id.unwrap_or(0));
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&self.pool).await? {
                found.push(TravelerRow::from_row(&row)?.into_traveler()?);
            }
        }
        Ok(found)
    }

    /// Replaces the itinerary's own fields; `state` of `None` keeps the approval state.
    pub async fn update_itinerary(
        &self,
        tenant_code: &TenantCode,
        id: i64,
        fields: &ItineraryFields,
        state: Option<ApprovalState>,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        let change = sqlx::query(
            "UPDATE itineraries SET approval_state = COALESCE($1, approval_state), pnr_key = $2,
                doc = $3, etag = $4, updated_at = $5
             WHERE id = $6",
        )
        .bind(state.map(ApprovalState::code))
        .bind(fields.pnr_key())
        .bind(to_doc(fields)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(id);
        self.write_versioned(
            VersionedRow::by_id("itineraries", &keys),
            if_match,
            change,
            None,
        )
        .await
    }

    /// Deletes an itinerary with its segments, travelers and region attachments.
    pub async fn delete_itinerary(
        &self,
        tenant_code: &TenantCode,
        id: i64,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        let delete = sqlx::query("DELETE FROM itineraries WHERE id = $1").bind(id);
        self.write_versioned(
            VersionedRow::by_id("itineraries", &keys),
            if_match,
            delete,
            None,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Segment documents as the store has written them: every field of the API's form,
    /// `Id` null (the row holds it).
    const FLIGHT: &str = r#"{"Id":null,"FlightNumber":"BA 304","Origin":null,"Destination":null,"OriginLatitude":51.47,"OriginLongitude":-0.45,"OriginCountryName":null,"OriginCountryCode":"GB","DepartureTimeZoneId":"Europe/London","DepartureTimeLocal":"2026-07-01T09:15:00","DepartureTime":"2026-07-01T08:15:00Z","DestinationLatitude":null,"DestinationLongitude":null,"DestinationCountryName":null,"DestinationCountryCode":null,"ArrivalTimeZoneId":null,"ArrivalTimeLocal":null,"ArrivalTime":"2026-07-01T09:30:00Z"}"#;
    const JOURNEY: &str = r#"{"Id":null,"JourneyType":"Train","Name":null,"Description":null,"OriginAddress":null,"OriginLatitude":null,"OriginLongitude":null,"OriginCountryName":null,"OriginCountryCode":null,"DepartureTimeZoneId":null,"DepartureTimeLocal":null,"DepartureTime":"2026-07-03T07:01:00Z","DestinationAddress":null,"DestinationLatitude":null,"DestinationLongitude":null,"DestinationCountryName":null,"DestinationCountryCode":null,"ArrivalTimeZoneId":"Europe/Paris","ArrivalTimeLocal":"2026-07-03T11:20:00","ArrivalTime":"2026-07-03T09:20:00Z"}"#;
    const HOTEL: &str = r#"{"Id":null,"Name":"Hotel du Louvre","Address":null,"Latitude":48.8625,"Longitude":2.3358,"CountryName":null,"CountryCode":"FR","TimeZoneId":"Europe/Paris","CheckInTimeLocal":"2026-07-03T15:00:00","CheckInTime":"2026-07-03T13:00:00Z","CheckOutTimeLocal":"2026-07-05T11:00:00","CheckOutTime":"2026-07-05T09:00:00Z"}"#;

    fn row(id: i64, kind: &str, doc: &str) -> SegmentRow {
        SegmentRow {
            id,
            itinerary_id: 1,
            kind: kind.into(),
            doc: doc.into(),
        }
    }

    /// The answer's form of a read segment: the document with the row's id.
    fn answered<T: serde::Serialize>(segment: &T, doc: &str, id: i64) -> bool {
        let mut expected: serde_json::Value = serde_json::from_str(doc).unwrap();
        expected["Id"] = id.into();
        serde_json::to_value(segment).unwrap() == expected
    }

    #[test]
    fn old_segment_documents_read_with_their_row_id() {
        let mut parts = HashMap::new();
        for (id, kind, doc) in [
            (4, "flight", FLIGHT),
            (5, "journey", JOURNEY),
            (6, "hotel", HOTEL),
        ] {
            row(id, kind, doc)
                .add_to(&mut parts)
                .expect("an old document reads");
        }
        let parts = &parts[&1];
        assert!(answered(&parts.flights[0], FLIGHT, 4));
        assert!(answered(&parts.journeys[0], JOURNEY, 5));
        assert!(answered(&parts.hotels[0], HOTEL, 6));
        assert_eq!(
            parts.hotels[0].span().points,
            [Some((48.8625, 2.3358)), None]
        );
        let broken = JOURNEY.replace("\"Train\"", "\"Rocket\"");
        assert!(matches!(
            row(7, "journey", &broken).add_to(&mut HashMap::new()),
            Err(StoreError::Corrupt(_))
        ));
    }
}
