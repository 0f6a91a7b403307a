//! The geofence as clients write it (`POST`/`PUT /V2/{t}/geofences`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::geofence::{
    Geofence, GeofenceFields, GeofenceShape, LatLon, NAME_MAX_CHARS, Shape, check_circle,
    check_point_count, check_polygon, check_polyline, check_zoom, positions_serde,
};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::{null_as_default, opt_int64};
use crate::domain::validation::{ValidationErrors, Validator};

/// A geofence. `GeofenceType` decides which shape fields are used: `circle` needs
/// `CircleCentre` and `CircleRadius`; `polygon` needs `PolygonPositions` (the first ring
/// is the outline, further rings are holes); `polyline` needs `PolylinePositions` and
/// `FenceWidth`. Shape fields of another type must be null (or an empty array).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Geofence", rename_all = "PascalCase")]
#[schema(as = Geofence)]
pub struct GeofenceRecord {
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
    #[schema(required = true, min_length = 1, example = "circle")]
    pub geofence_type: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    /// Shown (read-only) to every descendant tenant as well.
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub applies_to_subtenants: bool,
}

impl ServerFields for GeofenceRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["GeofenceId", "Timestamp"];

    fn without_read_only(mut self) -> Self {
        self.geofence_id = None;
        self.timestamp = None;
        self
    }
}

impl GeofenceRecord {
    /// Checks every rule and returns what the client set, as stored (type in lower
    /// case, polygon rings closed), with its shape.
    pub fn validated(mut self) -> Result<(GeofenceFields, Shape), ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("Name", self.name.as_deref()) {
            v.length("Name", Some(name.trim()), 1, NAME_MAX_CHARS);
        }
        check_zoom(&mut v, self.min_zoom, self.max_zoom);
        let kind = self.checked_kind(&mut v);
        // Empty arrays count as absent: some clients always send every collection.
        if self.polygon_positions.as_ref().is_some_and(Vec::is_empty) {
            self.polygon_positions = None;
        }
        if self.polyline_positions.as_ref().is_some_and(Vec::is_empty) {
            self.polyline_positions = None;
        }
        let total_points = self.polygon_positions.iter().flatten().flatten().count()
            + self.polyline_positions.iter().flatten().count();
        let counted_field = if self.polygon_positions.is_some() {
            "PolygonPositions"
        } else {
            "PolylinePositions"
        };
        if !check_point_count(&mut v, counted_field, total_points) {
            return Err(finish_err(v));
        }
        let shape = kind.and_then(|kind| self.checked_shape(&mut v, kind));
        v.finish()?;
        let (Some(name), Some(geofence_type), Some(shape)) = (self.name, kind, shape) else {
            // Unreachable in practice: every missing part was reported above.
            return Err(ValidationErrors::single(
                "GeofenceType",
                "the shape is invalid",
            ));
        };
        let fields = GeofenceFields {
            name: name.trim().to_string(),
            fence_width: self.fence_width,
            min_zoom: self.min_zoom,
            max_zoom: self.max_zoom,
            circle_radius: self.circle_radius,
            circle_centre: self.circle_centre,
            polygon_positions: self.polygon_positions,
            polyline_positions: self.polyline_positions,
            properties: self.properties,
            geofence_type,
            applies_to_subtenants: self.applies_to_subtenants,
        };
        Ok((fields, shape))
    }

    fn checked_kind(&self, v: &mut Validator) -> Option<GeofenceShape> {
        let text = v.required("GeofenceType", self.geofence_type.as_deref())?;
        let kind = GeofenceShape::parse_any_case(text);
        if kind.is_none() {
            let names = GeofenceShape::NAMES.join(", ");
            v.add("GeofenceType", format!("must be one of {names}"));
        }
        kind
    }

    fn checked_shape(&mut self, v: &mut Validator, kind: GeofenceShape) -> Option<Shape> {
        self.refuse_other_fields(v, kind);
        match kind {
            GeofenceShape::Circle => check_circle(v, self.circle_centre, self.circle_radius),
            GeofenceShape::Polyline => {
                check_polyline(v, self.fence_width, self.polyline_positions.as_deref())
            }
            GeofenceShape::Polygon => {
                let Some(rings) = &mut self.polygon_positions else {
                    v.add("PolygonPositions", "is required for a polygon");
                    return None;
                };
                check_polygon(v, "PolygonPositions", rings).map(Shape::Polygon)
            }
        }
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
}

fn finish_err(v: Validator) -> ValidationErrors {
    match v.finish() {
        Err(e) => e,
        Ok(()) => ValidationErrors::single("body", "invalid geofence"),
    }
}

impl From<&Geofence> for GeofenceRecord {
    fn from(geofence: &Geofence) -> Self {
        GeofenceRecord {
            geofence_id: Some(geofence.geofence_id.to_string()),
            name: Some(geofence.name.clone()),
            fence_width: geofence.fence_width,
            min_zoom: geofence.min_zoom,
            max_zoom: geofence.max_zoom,
            circle_radius: geofence.circle_radius,
            circle_centre: geofence.circle_centre,
            polygon_positions: geofence.polygon_positions.clone(),
            polyline_positions: geofence.polyline_positions.clone(),
            properties: geofence.properties.clone(),
            geofence_type: Some(geofence.geofence_type.to_string()),
            timestamp: Some(geofence.timestamp),
            applies_to_subtenants: geofence.applies_to_subtenants,
        }
    }
}

#[cfg(test)]
#[path = "geofence_tests.rs"]
mod tests;
