//! The risk region as clients write it (`POST /V2/{t}/riskregions`, `PUT …/{geometryId}`).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::geofence::{LatLon, check_point_count, check_polygon};
use crate::domain::ids::{GEOMETRY_ID_MAX_CHARS, GeometryId};
use crate::domain::record::ServerFields;
use crate::domain::risk_region::{
    MAX_RISK_LEVEL, MIN_RISK_LEVEL, NAME_MAX_CHARS, RegionShape, RiskRegion, RiskRegionFields,
};
use crate::domain::serde_util::null_as_default;
use crate::domain::validation::{ValidationErrors, Validator};

/// A risk region. `GeometryId` is chosen by the client, unique within the tenant and
/// case-sensitive; it is the key in paths (`PUT` takes it from the path).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "RiskRegion", rename_all = "PascalCase")]
#[schema(as = RiskRegion)]
pub struct RiskRegionRecord {
    /// 1 to 64 characters of A-Z, a-z, 0-9, `.`, `_`, `:` or `-` (case-sensitive).
    #[schema(
        required = true,
        min_length = 1,
        max_length = 64,
        pattern = "^[A-Za-z0-9._:-]{1,64}$",
        example = "border-north"
    )]
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
}

impl ServerFields for RiskRegionRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["Timestamp"];

    fn without_read_only(mut self) -> Self {
        self.timestamp = None;
        self
    }
}

impl RiskRegionRecord {
    /// Checks every rule (the polygon's are a geofence polygon's); returns what the
    /// client set, as stored (name trimmed, rings closed), and its shape.
    pub fn validated(mut self) -> Result<(RiskRegionFields, RegionShape), ValidationErrors> {
        let mut v = Validator::new();
        let geometry_id = match self.geometry_id.as_deref().map(str::parse::<GeometryId>) {
            None => {
                v.add("GeometryId", "is required");
                None
            }
            Some(Err(_)) => {
                v.add(
                    "GeometryId",
                    format!(
                        "must be 1 to {GEOMETRY_ID_MAX_CHARS} characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"
                    ),
                );
                None
            }
            Some(Ok(id)) => Some(id),
        };
        if let Some(name) = v.required("Name", self.name.as_deref()) {
            v.length("Name", Some(name.trim()), 1, NAME_MAX_CHARS);
        }
        match self.risk_level {
            None => v.add("RiskLevel", "is required: 1 to 5"),
            Some(level) if !(MIN_RISK_LEVEL..=MAX_RISK_LEVEL).contains(&level) => {
                v.add("RiskLevel", "must be from 1 to 5")
            }
            Some(_) => {}
        }
        let polygon = match self.polygon.as_mut().filter(|rings| !rings.is_empty()) {
            None => {
                v.add("Polygon", "is required: rings of {Lat, Lon} positions");
                None
            }
            Some(rings) => {
                let total = rings.iter().flatten().count();
                if check_point_count(&mut v, "Polygon", total) {
                    check_polygon(&mut v, "Polygon", rings)
                } else {
                    None
                }
            }
        };
        v.finish()?;
        let polygon = polygon.ok_or_else(|| ValidationErrors::single("Polygon", "is invalid"))?;
        let shape = RegionShape::new(polygon)
            .ok_or_else(|| ValidationErrors::single("Polygon", "encloses no area"))?;
        match (geometry_id, self.name, self.risk_level, self.polygon) {
            (Some(geometry_id), Some(name), Some(risk_level), Some(polygon)) => {
                let fields = RiskRegionFields {
                    geometry_id,
                    name: name.trim().to_string(),
                    risk_level,
                    polygon,
                    applies_to_subtenants: self.applies_to_subtenants,
                };
                Ok((fields, shape))
            }
            // Each missing field was reported above, so `finish` returned it.
            _ => Err(ValidationErrors::single("GeometryId", "is required")),
        }
    }
}

impl From<&RiskRegion> for RiskRegionRecord {
    fn from(region: &RiskRegion) -> Self {
        RiskRegionRecord {
            geometry_id: Some(region.geometry_id.to_string()),
            name: Some(region.name.clone()),
            risk_level: Some(region.risk_level),
            polygon: Some(region.polygon.clone()),
            applies_to_subtenants: region.applies_to_subtenants,
            timestamp: Some(region.timestamp),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::risk_region::RegionPolygon;

    fn square(level: i32) -> RiskRegionRecord {
        let p = |lat: f64, lon: f64| LatLon { lat, lon };
        RiskRegionRecord {
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

    fn error_fields(record: RiskRegionRecord) -> Vec<String> {
        record
            .validated()
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    #[test]
    fn valid_region_is_closed_and_contains() {
        let (region, shape) = square(3).validated().unwrap();
        assert_eq!(region.name, "Square");
        assert_eq!(region.polygon[0].len(), 5);
        assert_eq!(shape.bbox, [0.0, 2.0, 0.0, 2.0]);
        assert!(shape.contains(1.0, 1.0));
        assert!(shape.contains(0.0, 1.0), "boundary counts");
        assert!(!shape.contains(3.0, 1.0));
        let doc = RegionPolygon {
            polygon: region.polygon,
        };
        assert_eq!(doc.stored_shape(), Some(shape));
    }

    #[test]
    fn refusals_name_the_field() {
        let mut bad = square(6);
        bad.geometry_id = Some("has space".into());
        bad.polygon = Some(vec![vec![
            LatLon { lat: 0.0, lon: 0.0 },
            LatLon { lat: 1.0, lon: 1.0 },
        ]]);
        assert_eq!(error_fields(bad), ["GeometryId", "RiskLevel", "Polygon[0]"]);
        let mut missing = square(1);
        missing.polygon = Some(vec![]);
        missing.name = None;
        assert_eq!(error_fields(missing), ["Name", "Polygon"]);
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let (fields, _) = square(4).validated().unwrap();
        let region = RiskRegion {
            geometry_id: fields.geometry_id,
            name: fields.name,
            risk_level: fields.risk_level,
            polygon: fields.polygon,
            applies_to_subtenants: true,
            timestamp: Timestamp::from_second(1_700_000_000).unwrap(),
            etag: "W/\"1\"".to_string(),
        };
        let domain = serde_json::to_string(&region).unwrap();
        let wire: RiskRegionRecord = serde_json::from_str(&domain).unwrap();
        assert_eq!(serde_json::to_string(&wire).unwrap(), domain);
        assert_eq!(RiskRegionRecord::from(&region), wire);
    }
}
