//! Risk regions: a tenant's catalogue of areas with a risk level (1 to 5), attached to
//! itineraries or found by the positions of their segments (docs/api.md, "Itineraries").
//!
//! The polygon follows the geofence rules exactly (the same code checks it): the first
//! ring is the outline, further rings are holes, each ring has 3+ distinct points and
//! does not cross itself, open rings are closed by the server, at most 1,000 points.

use geo::{BoundingRect, Coord, Intersects, LineString, Point, Polygon};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::geofence::{Geofence, GeofenceShape, LatLon, Shape};
use super::serde_util::null_as_default;
use super::validation::{FieldError, ValidationErrors, Validator};

pub const GEOMETRY_ID_MAX_CHARS: usize = 64;
pub const NAME_MAX_CHARS: usize = 200;
pub const MIN_RISK_LEVEL: i32 = 1;
pub const MAX_RISK_LEVEL: i32 = 5;

/// A risk region. `GeometryId` is chosen by the client, unique within the tenant and
/// case-sensitive; it is the key in paths (`PUT` takes it from the path).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct RiskRegion {
    /// 1 to 64 characters of A-Z, a-z, 0-9, `.`, `_`, `:` or `-` (case-sensitive).
    #[schema(required = true, example = "border-north")]
    pub geometry_id: Option<String>,
    #[schema(
        required = true,
        min_length = 1,
        max_length = 200,
        example = "Northern border area"
    )]
    pub name: Option<String>,
    /// 1 (low) to 5 (extreme).
    #[schema(required = true, minimum = 1, maximum = 5, example = 4)]
    pub risk_level: Option<i32>,
    /// Rings of positions: the outline, then holes.
    #[schema(required = true)]
    pub polygon: Option<Vec<Vec<LatLon>>>,
    /// Visible (read-only) in every descendant tenant, where itineraries may attach it.
    #[serde(default, deserialize_with = "null_as_default")]
    pub applies_to_subtenants: bool,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    /// Record version: sent as the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

/// A region's polygon and bounding box (min lat, max lat, min lon, max lon).
#[derive(Debug, Clone, PartialEq)]
pub struct RegionShape {
    pub polygon: Polygon<f64>,
    pub bbox: [f64; 4],
}

impl RegionShape {
    /// Boundaries count as inside; plain lon/lat (like geofences: fine for regions that
    /// do not cross the antimeridian).
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        let [min_lat, max_lat, min_lon, max_lon] = self.bbox;
        (min_lat..=max_lat).contains(&lat)
            && (min_lon..=max_lon).contains(&lon)
            && self.polygon.intersects(&Point::new(lon, lat))
    }
}

/// Whether a GeometryId is well formed.
pub fn is_geometry_id(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= GEOMETRY_ID_MAX_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
}

impl RiskRegion {
    /// Checks every rule; returns the record as stored (read-only fields cleared, rings
    /// closed) and its shape.
    pub fn validated(mut self) -> Result<(RiskRegion, RegionShape), ValidationErrors> {
        let mut v = Validator::new();
        match self.geometry_id.as_deref() {
            None => v.add("GeometryId", "is required"),
            Some(id) if !is_geometry_id(id) => v.add(
                "GeometryId",
                format!(
                    "must be 1 to {GEOMETRY_ID_MAX_CHARS} characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"
                ),
            ),
            Some(_) => {}
        }
        if let Some(name) = v.required("Name", self.name.as_deref()) {
            v.length("Name", Some(name.trim()), 1, NAME_MAX_CHARS);
        }
        self.name = self.name.map(|n| n.trim().to_string());
        match self.risk_level {
            None => v.add("RiskLevel", "is required: 1 to 5"),
            Some(level) if !(MIN_RISK_LEVEL..=MAX_RISK_LEVEL).contains(&level) => {
                v.add("RiskLevel", "must be from 1 to 5")
            }
            Some(_) => {}
        }
        let shape = if self.polygon.as_ref().is_none_or(Vec::is_empty) {
            v.add("Polygon", "is required: rings of {Lat, Lon} positions");
            None
        } else {
            let fence = Geofence {
                name: Some("risk region".into()),
                geofence_type: Some(GeofenceShape::Polygon.to_string()),
                polygon_positions: self.polygon.take(),
                ..Default::default()
            };
            match fence.validated() {
                Ok((fence, Shape::Polygon(polygon))) => {
                    self.polygon = fence.polygon_positions;
                    Some(polygon)
                }
                Ok(_) => None,
                Err(errors) => {
                    for FieldError { field, message } in errors.0 {
                        let field = match field.strip_prefix("PolygonPositions") {
                            Some(rest) => format!("Polygon{rest}"),
                            None => field,
                        };
                        v.add(field, message);
                    }
                    None
                }
            }
        };
        v.finish()?;
        let polygon = shape.ok_or_else(|| ValidationErrors::single("Polygon", "is invalid"))?;
        let shape = RegionShape::new(polygon)
            .ok_or_else(|| ValidationErrors::single("Polygon", "encloses no area"))?;
        self.timestamp = None;
        self.etag = None;
        Ok((self, shape))
    }

    /// The shape of a stored record, which was validated (rings closed) when written:
    /// built without checking again.
    pub fn stored_shape(&self) -> Option<RegionShape> {
        let mut rings = self.polygon.as_ref()?.iter().map(|ring| {
            ring.iter()
                .map(|p| Coord { x: p.lon, y: p.lat })
                .collect::<LineString<f64>>()
        });
        let exterior = rings.next()?;
        RegionShape::new(Polygon::new(exterior, rings.collect()))
    }
}

impl RegionShape {
    pub fn new(polygon: Polygon<f64>) -> Option<RegionShape> {
        let rect = polygon.bounding_rect()?;
        Some(RegionShape {
            bbox: [rect.min().y, rect.max().y, rect.min().x, rect.max().x],
            polygon,
        })
    }
}

/// The highest level among `attached` levels and `areas` (level, shape) containing any
/// of `points` (latitude, longitude); 0 when none.
pub fn overall_risk(points: &[(f64, f64)], attached: &[i32], areas: &[(i32, &RegionShape)]) -> i32 {
    let mut risk = attached.iter().copied().max().unwrap_or(0);
    for &(level, shape) in areas {
        if level > risk && points.iter().any(|&(lat, lon)| shape.contains(lat, lon)) {
            risk = level;
        }
    }
    risk
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(level: i32) -> RiskRegion {
        let p = |lat: f64, lon: f64| LatLon { lat, lon };
        RiskRegion {
            geometry_id: Some("sq-1".into()),
            name: Some(" Square ".into()),
            risk_level: Some(level),
            polygon: Some(vec![vec![
                p(0.0, 0.0),
                p(0.0, 2.0),
                p(2.0, 2.0),
                p(2.0, 0.0),
            ]]),
            ..Default::default()
        }
    }

    #[test]
    fn valid_region_is_closed_and_contains() {
        let (region, shape) = square(3).validated().unwrap();
        assert_eq!(region.name.as_deref(), Some("Square"));
        assert_eq!(region.polygon.as_ref().unwrap()[0].len(), 5);
        assert_eq!(shape.bbox, [0.0, 2.0, 0.0, 2.0]);
        assert!(shape.contains(1.0, 1.0));
        assert!(shape.contains(0.0, 1.0), "boundary counts");
        assert!(!shape.contains(3.0, 1.0));
        assert_eq!(region.stored_shape(), Some(shape));
    }

    #[test]
    fn refusals_name_the_field() {
        let mut bad = square(6);
        bad.geometry_id = Some("has space".into());
        bad.polygon = Some(vec![vec![
            LatLon { lat: 0.0, lon: 0.0 },
            LatLon { lat: 1.0, lon: 1.0 },
        ]]);
        let fields: Vec<String> = bad
            .validated()
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["GeometryId", "RiskLevel", "Polygon[0]"]);
        let mut missing = square(1);
        missing.polygon = Some(vec![]);
        missing.name = None;
        let fields: Vec<String> = missing
            .validated()
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["Name", "Polygon"]);
    }

    #[test]
    fn overall_risk_is_the_highest() {
        let (_, shape) = square(2).validated().unwrap();
        let areas = [(2, &shape), (4, &shape)];
        assert_eq!(overall_risk(&[(9.0, 9.0), (1.0, 1.0)], &[], &areas), 4);
        assert_eq!(overall_risk(&[(9.0, 9.0)], &[3], &areas), 3);
        assert_eq!(overall_risk(&[], &[], &areas), 0);
    }
}
