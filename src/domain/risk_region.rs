//! Risk regions: a tenant's catalogue of areas with a risk level (1 to 5), attached to
//! itineraries or found by the positions of their segments (docs/api.md, "Itineraries").
//!
//! The polygon follows the geofence rules exactly (the same code checks it): the first
//! ring is the outline, further rings are holes, each ring has 3+ distinct points and
//! does not cross itself, open rings are closed by the server, at most 1,000 points.

use geo::{BoundingRect, Coord, Intersects, LineString, Point, Polygon};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::geofence::LatLon;
use super::ids::GeometryId;

pub const NAME_MAX_CHARS: usize = 200;
pub const MIN_RISK_LEVEL: i32 = 1;
pub const MAX_RISK_LEVEL: i32 = 5;

/// What a client sets on a risk region, its rules checked (name trimmed, rings closed).
#[derive(Debug, Clone, PartialEq)]
pub struct RiskRegionFields {
    pub geometry_id: GeometryId,
    pub name: String,
    pub risk_level: i32,
    pub polygon: Vec<Vec<LatLon>>,
    pub applies_to_subtenants: bool,
}

/// A risk region as stored. `GeometryId` is chosen by the client, unique within the
/// tenant and case-sensitive; it is the key in paths.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RiskRegion {
    pub geometry_id: GeometryId,
    pub name: String,
    /// 1 (low) to 5 (extreme).
    pub risk_level: i32,
    /// Rings of positions: the outline, then holes.
    pub polygon: Vec<Vec<LatLon>>,
    pub applies_to_subtenants: bool,
    pub timestamp: Timestamp,
    /// Record version: sent as the `ETag` header only.
    #[serde(skip)]
    pub etag: String,
}

/// A region's stored document: its polygon (the other fields have columns). Documents
/// that also carry the other fields (as null) read the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionPolygon {
    #[serde(rename = "Polygon")]
    pub polygon: Vec<Vec<LatLon>>,
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

impl RegionPolygon {
    /// The shape of a stored polygon, which was checked (rings closed) when written:
    /// built without checking again.
    pub fn stored_shape(&self) -> Option<RegionShape> {
        let mut rings = self.polygon.iter().map(|ring| {
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

    fn square() -> RegionPolygon {
        let p = |lat: f64, lon: f64| LatLon { lat, lon };
        RegionPolygon {
            polygon: vec![vec![
                p(0.0, 0.0),
                p(0.0, 2.0),
                p(2.0, 2.0),
                p(2.0, 0.0),
                p(0.0, 0.0),
            ]],
        }
    }

    #[test]
    fn stored_shape_contains() {
        let shape = square().stored_shape().expect("a polygon");
        assert_eq!(shape.bbox, [0.0, 2.0, 0.0, 2.0]);
        assert!(shape.contains(1.0, 1.0));
        assert!(shape.contains(0.0, 1.0), "boundary counts");
        assert!(!shape.contains(3.0, 1.0));
    }

    #[test]
    fn old_documents_read() {
        let doc = r#"{"GeometryId":null,"Name":null,"RiskLevel":null,"Polygon":[[{"Lat":0.0,"Lon":0.0}]],"AppliesToSubtenants":false,"Timestamp":null}"#;
        let read: RegionPolygon = serde_json::from_str(doc).expect("reads");
        assert_eq!(read.polygon[0].len(), 1);
    }

    #[test]
    fn overall_risk_is_the_highest() {
        let shape = square().stored_shape().expect("a polygon");
        let areas = [(2, &shape), (4, &shape)];
        assert_eq!(overall_risk(&[(9.0, 9.0), (1.0, 1.0)], &[], &areas), 4);
        assert_eq!(overall_risk(&[(9.0, 9.0)], &[3], &areas), 3);
        assert_eq!(overall_risk(&[], &[], &areas), 0);
    }
}
