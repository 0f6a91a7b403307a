//! Geofences (circle, polygon, polyline) and their geometry rules. Coordinates are WGS 84
//! degrees; distances are metres. The rules here are checked on what a client sends
//! (`http::records::geofence`); a checked geofence has a `Shape` that answers "is this
//! point inside".

use std::collections::{BTreeMap, HashSet};

use geo::algorithm::validation::{InvalidPolygon, RingRole};
use geo::{
    Area, Closest, Coord, Distance, Haversine, HaversineClosestPoint, Intersects, LineString,
    Point, Polygon, Validation,
};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::ids::GeofenceId;
use super::serde_util::{null_as_default, opt_int64};
use super::validation::Validator;

pub const NAME_MAX_CHARS: usize = 200;
/// Most points one geofence may have, over all its rings. Keeps the self-intersection
/// check (quadratic per ring) and later containment tests cheap.
pub const MAX_POINTS: usize = 1000;
/// Half the Earth's circumference: a larger circle covers the whole globe.
pub const MAX_CIRCLE_RADIUS_M: f64 = 20_000_000.0;
pub const MAX_FENCE_WIDTH_M: i64 = 1_000_000;

closed_set! {
    /// A geofence's kind of shape (`GeofenceType`, the `geofence_type` column). Clients
    /// may send any case; the record is stored with this text.
    pub enum GeofenceShape {
        Circle = "circle",
        Polygon = "polygon",
        Polyline = "polyline",
    }
}

/// A position in WGS 84 degrees. Only the object form is read: an array such as
/// `[51.5, -0.12]` is refused, since GeoJSON's `[lon, lat]` order would silently swap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct LatLon {
    /// Latitude, -90 to 90.
    #[schema(example = 51.5)]
    pub lat: f64,
    /// Longitude, -180 to 180.
    #[schema(example = -0.12)]
    pub lon: f64,
}

impl LatLon {
    fn coord(self) -> Coord<f64> {
        Coord {
            x: self.lon,
            y: self.lat,
        }
    }

    /// Bit-exact identity (with -0.0 = 0.0), for counting distinct points.
    fn key(self) -> (u64, u64) {
        ((self.lat + 0.0).to_bits(), (self.lon + 0.0).to_bits())
    }
}

/// What a client sets on a geofence, its rules checked: type in lower case, polygon
/// rings closed, shape fields of other types absent. The store keeps it as the
/// geofence's document (in this form, which also reads documents that carry the
/// read-only fields as null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GeofenceFields {
    pub name: String,
    #[serde(default, with = "opt_int64")]
    pub fence_width: Option<i64>,
    pub min_zoom: Option<f64>,
    pub max_zoom: Option<f64>,
    pub circle_radius: Option<f64>,
    pub circle_centre: Option<LatLon>,
    pub polygon_positions: Option<Vec<Vec<LatLon>>>,
    pub polyline_positions: Option<Vec<LatLon>>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    pub geofence_type: GeofenceShape,
    #[serde(default, deserialize_with = "null_as_default")]
    pub applies_to_subtenants: bool,
}

/// A geofence as stored. `GeofenceType` decides which shape fields are used: `circle`
/// has `CircleCentre` and `CircleRadius`; `polygon` has `PolygonPositions` (the first
/// ring is the outline, further rings are holes); `polyline` has `PolylinePositions`
/// and `FenceWidth`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Geofence {
    pub geofence_id: GeofenceId,
    pub name: String,
    #[serde(serialize_with = "opt_int64::serialize")]
    pub fence_width: Option<i64>,
    pub min_zoom: Option<f64>,
    pub max_zoom: Option<f64>,
    pub circle_radius: Option<f64>,
    pub circle_centre: Option<LatLon>,
    pub polygon_positions: Option<Vec<Vec<LatLon>>>,
    pub polyline_positions: Option<Vec<LatLon>>,
    pub properties: BTreeMap<String, String>,
    pub geofence_type: GeofenceShape,
    pub timestamp: Timestamp,
    pub applies_to_subtenants: bool,
    /// Record version: sent as the `ETag` header only (the contract's record has no
    /// such field).
    #[serde(skip)]
    pub etag: String,
}

impl Geofence {
    /// The geofence `fields` as stored under `geofence_id`, at version `etag`.
    pub fn new(
        geofence_id: GeofenceId,
        fields: GeofenceFields,
        etag: String,
        timestamp: Timestamp,
    ) -> Self {
        Geofence {
            geofence_id,
            name: fields.name,
            fence_width: fields.fence_width,
            min_zoom: fields.min_zoom,
            max_zoom: fields.max_zoom,
            circle_radius: fields.circle_radius,
            circle_centre: fields.circle_centre,
            polygon_positions: fields.polygon_positions,
            polyline_positions: fields.polyline_positions,
            properties: fields.properties,
            geofence_type: fields.geofence_type,
            timestamp,
            applies_to_subtenants: fields.applies_to_subtenants,
            etag,
        }
    }

    /// The shape of a stored record, which was checked (rings closed) when written:
    /// built without checking again. `None` when the record lacks its shape's fields.
    pub fn shape(&self) -> Option<Shape> {
        let coords = |points: &[LatLon]| points.iter().map(|p| p.coord()).collect();
        match self.geofence_type {
            GeofenceShape::Circle => Some(Shape::Circle {
                centre: Point::from(self.circle_centre?.coord()),
                radius_m: self.circle_radius?,
            }),
            GeofenceShape::Polygon => {
                let mut rings = self.polygon_positions.as_ref()?.iter().map(|r| coords(r));
                let exterior = rings.next()?;
                Some(Shape::Polygon(Polygon::new(exterior, rings.collect())))
            }
            GeofenceShape::Polyline => Some(Shape::Polyline {
                line: coords(self.polyline_positions.as_ref()?),
                width_m: self.fence_width? as f64,
            }),
        }
    }
}

/// A validated geometry.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Circle { centre: Point<f64>, radius_m: f64 },
    Polygon(Polygon<f64>),
    Polyline { line: LineString<f64>, width_m: f64 },
}

impl Shape {
    /// Which kind of shape this is.
    pub fn kind(&self) -> GeofenceShape {
        match self {
            Shape::Circle { .. } => GeofenceShape::Circle,
            Shape::Polygon(_) => GeofenceShape::Polygon,
            Shape::Polyline { .. } => GeofenceShape::Polyline,
        }
    }

    /// Whether a position lies inside (boundaries count as inside). Circles and corridors
    /// use great-circle distances; polygons are tested in plain lon/lat (fine for
    /// geofence-sized areas that do not cross the antimeridian).
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        let p = Point::new(lon, lat);
        match self {
            Shape::Circle { centre, radius_m } => Haversine.distance(*centre, p) <= *radius_m,
            Shape::Polygon(polygon) => polygon.intersects(&p),
            Shape::Polyline { line, width_m } => match line.haversine_closest_point(&p) {
                Closest::Intersection(_) => true,
                Closest::SinglePoint(q) => Haversine.distance(q, p) <= width_m / 2.0,
                Closest::Indeterminate => false,
            },
        }
    }
}

/// Whether `total` points (over all rings) are few enough; reports `field` when not.
pub fn check_point_count(v: &mut Validator, field: &str, total: usize) -> bool {
    if total > MAX_POINTS {
        v.add(
            field,
            format!("at most {MAX_POINTS} points per geofence (got {total})"),
        );
        return false;
    }
    true
}

/// A circle's rules: a centre in range and a radius within bounds.
pub fn check_circle(
    v: &mut Validator,
    centre: Option<LatLon>,
    radius: Option<f64>,
) -> Option<Shape> {
    let centre = match centre {
        Some(c) => check_position(v, "CircleCentre", c).then_some(c),
        None => {
            v.add("CircleCentre", "is required for a circle");
            None
        }
    };
    let radius = match radius {
        Some(r) if r > 0.0 && r <= MAX_CIRCLE_RADIUS_M => Some(r),
        Some(_) => {
            v.add(
                "CircleRadius",
                format!("must be more than 0 and at most {MAX_CIRCLE_RADIUS_M} metres"),
            );
            None
        }
        None => {
            v.add("CircleRadius", "is required for a circle");
            None
        }
    };
    Some(Shape::Circle {
        centre: Point::from(centre?.coord()),
        radius_m: radius?,
    })
}

/// A polyline's rules: a width within bounds and 2+ distinct points in range.
pub fn check_polyline(
    v: &mut Validator,
    width: Option<i64>,
    points: Option<&[LatLon]>,
) -> Option<Shape> {
    let width = match width {
        Some(w) if w > 0 && w <= MAX_FENCE_WIDTH_M => Some(w as f64),
        Some(_) => {
            v.add(
                "FenceWidth",
                format!("must be more than 0 and at most {MAX_FENCE_WIDTH_M} metres"),
            );
            None
        }
        None => {
            v.add("FenceWidth", "is required for a polyline");
            None
        }
    };
    let Some(points) = points else {
        v.add("PolylinePositions", "is required for a polyline");
        return None;
    };
    let positions_ok = check_positions(v, "PolylinePositions", points);
    if distinct(points) < 2 {
        v.add("PolylinePositions", "needs at least 2 distinct points");
        return None;
    }
    let line: LineString<f64> = points.iter().map(|p| p.coord()).collect();
    positions_ok.then_some(())?;
    Some(Shape::Polyline {
        line,
        width_m: width?,
    })
}

/// A polygon's rules (reported as `field[ring]`): each ring of 3+ distinct points in
/// range, not crossing itself and enclosing an area; holes inside the outline. Closes
/// open rings in place, as stored and as geo expects.
pub fn check_polygon(
    v: &mut Validator,
    field: &str,
    rings: &mut [Vec<LatLon>],
) -> Option<Polygon<f64>> {
    let mut ok = true;
    for (i, ring) in rings.iter_mut().enumerate() {
        let ring_field = format!("{field}[{i}]");
        ok &= check_positions(v, &ring_field, ring);
        if distinct(ring) < 3 {
            v.add(&ring_field, "a ring needs at least 3 distinct points");
            ok = false;
            continue;
        }
        if let (Some(first), Some(last)) = (ring.first().copied(), ring.last().copied())
            && first != last
        {
            ring.push(first);
        }
    }
    if !ok {
        return None;
    }
    let mut line_strings = rings
        .iter()
        .map(|ring| ring.iter().map(|p| p.coord()).collect::<LineString<f64>>());
    let exterior = line_strings.next()?;
    let polygon = Polygon::new(exterior, line_strings.collect());
    let mut reported = HashSet::new();
    for problem in polygon.validation_errors() {
        let (ring, message) = describe(&problem);
        v.add(format!("{field}[{ring}]"), message);
        reported.insert(ring);
        ok = false;
    }
    // A ring that crosses itself may also have zero net area: one message is enough.
    for (i, ring) in std::iter::once(polygon.exterior())
        .chain(polygon.interiors())
        .enumerate()
    {
        if !reported.contains(&i) && Polygon::new(ring.clone(), vec![]).unsigned_area() == 0.0 {
            v.add(
                format!("{field}[{i}]"),
                "the ring encloses no area (its points are collinear)",
            );
            ok = false;
        }
    }
    ok.then_some(polygon)
}
pub fn check_zoom(v: &mut Validator, min: Option<f64>, max: Option<f64>) {
    for (field, zoom) in [("MinZoom", min), ("MaxZoom", max)] {
        if let Some(z) = zoom
            && !(z.is_finite() && z >= 0.0)
        {
            v.add(field, "must be a number of at least 0");
        }
    }
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        v.add(
            "MinZoom",
            format!("must not be greater than MaxZoom ({max})"),
        );
    }
}

/// Latitude and longitude within range; reports each bad one and returns whether both are fine.
pub fn check_position(v: &mut Validator, field: &str, p: LatLon) -> bool {
    let mut ok = true;
    if !(-90.0..=90.0).contains(&p.lat) {
        v.add(format!("{field}.Lat"), "must be between -90 and 90");
        ok = false;
    }
    if !(-180.0..=180.0).contains(&p.lon) {
        v.add(format!("{field}.Lon"), "must be between -180 and 180");
        ok = false;
    }
    ok
}

pub fn check_positions(v: &mut Validator, field: &str, points: &[LatLon]) -> bool {
    let mut ok = true;
    for (i, p) in points.iter().enumerate() {
        ok &= check_position(v, &format!("{field}[{i}]"), *p);
    }
    ok
}

pub fn distinct(points: &[LatLon]) -> usize {
    points.iter().map(|p| p.key()).collect::<HashSet<_>>().len()
}

/// Which ring a geo validation problem is about (index into `PolygonPositions`), and why.
fn describe(problem: &InvalidPolygon) -> (usize, String) {
    let index = |role: &RingRole| match role {
        RingRole::Exterior => 0,
        RingRole::Interior(i) => i + 1,
    };
    let ring = match problem {
        InvalidPolygon::TooFewPointsInRing(r)
        | InvalidPolygon::SelfIntersection(r)
        | InvalidPolygon::NonFiniteCoord(r, _)
        | InvalidPolygon::InteriorRingNotContainedInExteriorRing(r) => index(r),
        InvalidPolygon::IntersectingRingsOnALine(_, r)
        | InvalidPolygon::IntersectingRingsOnAnArea(_, r) => index(r),
    };
    let message = match problem {
        InvalidPolygon::SelfIntersection(_) => "the ring crosses itself".to_string(),
        InvalidPolygon::InteriorRingNotContainedInExteriorRing(_) => {
            "a hole must lie inside the outline (the first ring)".to_string()
        }
        other => other.to_string(),
    };
    (ring, message)
}

pub mod positions_serde;
