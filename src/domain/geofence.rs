//! Geofences (circle, polygon, polyline) and their geometry rules. Coordinates are WGS 84
//! degrees; distances are metres. Validation turns a record into a normalised one (type
//! in lower case, polygon rings closed) plus a `Shape` that answers "is this point inside".

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
use super::record::ServerFields;
use super::serde_util::{null_as_default, opt_int64};
use super::validation::{ValidationErrors, Validator};

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

impl GeofenceShape {
    /// The shape a client's `GeofenceType` names, in any case and with spaces around.
    pub fn parse_any_case(text: &str) -> Option<Self> {
        let text = text.trim();
        Self::ALL
            .iter()
            .copied()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text))
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

/// A geofence. `GeofenceType` decides which shape fields are used: `circle` needs
/// `CircleCentre` and `CircleRadius`; `polygon` needs `PolygonPositions` (the first ring
/// is the outline, further rings are holes); `polyline` needs `PolylinePositions` and
/// `FenceWidth`. Shape fields of another type must be null (or an empty array).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Geofence {
    /// Assigned by the server.
    #[schema(read_only, example = "17")]
    pub geofence_id: Option<String>,
    /// Unique within the tenant (case-insensitively).
    #[schema(required = true, min_length = 1, max_length = 200, example = "Depot")]
    pub name: Option<String>,
    /// Width of a polyline's corridor in metres (whole number, 1 to 1,000,000); a point
    /// is inside when it is within half the width of the line. Polyline only.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, example = 50)]
    pub fence_width: Option<i64>,
    /// Lowest map zoom level at which the geofence is shown (at least 0).
    pub min_zoom: Option<f64>,
    /// Highest map zoom level at which the geofence is shown (at least `MinZoom`).
    pub max_zoom: Option<f64>,
    /// Radius in metres (more than 0, at most 20,000,000). Circle only.
    #[schema(example = 250.0)]
    pub circle_radius: Option<f64>,
    /// Centre of a circle. Circle only.
    pub circle_centre: Option<LatLon>,
    /// Polygon rings, each of at least 3 distinct points; an open ring is closed by the
    /// server. Rings must not cross themselves; holes must lie inside the outline.
    #[serde(default, deserialize_with = "positions_serde::rings")]
    pub polygon_positions: Option<Vec<Vec<LatLon>>>,
    /// At least 2 distinct points. Polyline only.
    pub polyline_positions: Option<Vec<LatLon>>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    /// `circle`, `polygon` or `polyline` (any case; stored in lower case).
    #[schema(required = true, example = "circle")]
    pub geofence_type: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    /// Shown (read-only) to every descendant tenant as well.
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub applies_to_subtenants: bool,
    /// Record version: sent as the `ETag` header only (the contract's record has no
    /// such field).
    #[serde(skip)]
    pub etag: Option<String>,
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

impl ServerFields for Geofence {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["GeofenceId", "Timestamp"];

    fn without_read_only(mut self) -> Self {
        self.geofence_id = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

impl Geofence {
    /// Checks every rule and returns the record as it is stored (read-only fields
    /// cleared, type in lower case, polygon rings closed) with its shape.
    pub fn validated(mut self) -> Result<(Geofence, Shape), ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("Name", self.name.as_deref()) {
            v.length("Name", Some(name.trim()), 1, NAME_MAX_CHARS);
        }
        self.name = self.name.map(|n| n.trim().to_string());
        check_zoom(&mut v, self.min_zoom, self.max_zoom);
        let kind = match v.required("GeofenceType", self.geofence_type.as_deref()) {
            Some(t) => match GeofenceShape::parse_any_case(t) {
                Some(kind) => Some(kind),
                None => {
                    let names = GeofenceShape::NAMES.join(", ");
                    v.add("GeofenceType", format!("must be one of {names}"));
                    None
                }
            },
            None => None,
        };
        // Empty arrays count as absent: some clients always send every collection.
        if self.polygon_positions.as_ref().is_some_and(Vec::is_empty) {
            self.polygon_positions = None;
        }
        if self.polyline_positions.as_ref().is_some_and(Vec::is_empty) {
            self.polyline_positions = None;
        }
        let total_points = self.polygon_positions.iter().flatten().flatten().count()
            + self.polyline_positions.iter().flatten().count();
        if total_points > MAX_POINTS {
            v.add(
                if self.polygon_positions.is_some() {
                    "PolygonPositions"
                } else {
                    "PolylinePositions"
                },
                format!("at most {MAX_POINTS} points per geofence (got {total_points})"),
            );
            return Err(finish_err(v));
        }
        let shape = match kind {
            Some(GeofenceShape::Circle) => self.circle(&mut v),
            Some(GeofenceShape::Polygon) => self.polygon(&mut v),
            Some(GeofenceShape::Polyline) => self.polyline(&mut v),
            None => None,
        };
        v.finish()?;
        let shape = shape.ok_or_else(|| {
            // Unreachable in practice: every shape error was reported above.
            ValidationErrors::single("GeofenceType", "the shape is invalid")
        })?;
        self.geofence_type = kind.map(|k| k.to_string());
        Ok((self.without_read_only(), shape))
    }

    /// The shape of a stored (already validated) record.
    pub fn shape(&self) -> Option<Shape> {
        self.clone().validated().ok().map(|(_, shape)| shape)
    }

    fn refuse_other_fields(&self, v: &mut Validator, kind: GeofenceShape) {
        use GeofenceShape::{Circle, Polygon, Polyline};
        let present = [
            ("CircleCentre", self.circle_centre.is_some(), Circle),
            ("CircleRadius", self.circle_radius.is_some(), Circle),
            (
                "PolygonPositions",
                self.polygon_positions.is_some(),
                Polygon,
            ),
            (
                "PolylinePositions",
                self.polyline_positions.is_some(),
                Polyline,
            ),
            ("FenceWidth", self.fence_width.is_some(), Polyline),
        ];
        for (field, is_present, owner) in present {
            if is_present && owner != kind {
                v.add(
                    field,
                    format!("is only used by {owner} geofences; send null for a {kind}"),
                );
            }
        }
    }

    fn circle(&self, v: &mut Validator) -> Option<Shape> {
        self.refuse_other_fields(v, GeofenceShape::Circle);
        let centre = match self.circle_centre {
            Some(c) => check_position(v, "CircleCentre", c).then_some(c),
            None => {
                v.add("CircleCentre", "is required for a circle");
                None
            }
        };
        let radius = match self.circle_radius {
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

    fn polyline(&self, v: &mut Validator) -> Option<Shape> {
        self.refuse_other_fields(v, GeofenceShape::Polyline);
        let width = match self.fence_width {
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
        let Some(points) = &self.polyline_positions else {
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

    fn polygon(&mut self, v: &mut Validator) -> Option<Shape> {
        self.refuse_other_fields(v, GeofenceShape::Polygon);
        let Some(rings) = &mut self.polygon_positions else {
            v.add("PolygonPositions", "is required for a polygon");
            return None;
        };
        let mut ok = true;
        for (i, ring) in rings.iter_mut().enumerate() {
            let field = format!("PolygonPositions[{i}]");
            ok &= check_positions(v, &field, ring);
            if distinct(ring) < 3 {
                v.add(&field, "a ring needs at least 3 distinct points");
                ok = false;
                continue;
            }
            // Close an open ring, as stored and as geo expects.
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
            v.add(format!("PolygonPositions[{ring}]"), message);
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
                    format!("PolygonPositions[{i}]"),
                    "the ring encloses no area (its points are collinear)",
                );
                ok = false;
            }
        }
        ok.then_some(Shape::Polygon(polygon))
    }
}

fn finish_err(v: Validator) -> ValidationErrors {
    match v.finish() {
        Err(e) => e,
        Ok(()) => ValidationErrors::single("body", "invalid geofence"),
    }
}

fn check_zoom(v: &mut Validator, min: Option<f64>, max: Option<f64>) {
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
fn check_position(v: &mut Validator, field: &str, p: LatLon) -> bool {
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

fn check_positions(v: &mut Validator, field: &str, points: &[LatLon]) -> bool {
    let mut ok = true;
    for (i, p) in points.iter().enumerate() {
        ok &= check_position(v, &format!("{field}[{i}]"), *p);
    }
    ok
}

fn distinct(points: &[LatLon]) -> usize {
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

#[path = "geofence_serde.rs"]
mod positions_serde;

#[cfg(test)]
#[path = "geofence_tests.rs"]
mod tests;
