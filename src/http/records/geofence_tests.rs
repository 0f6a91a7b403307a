use super::*;
use crate::domain::geofence::MAX_POINTS;
use crate::domain::ids::GeofenceId;

fn p(lat: f64, lon: f64) -> LatLon {
    LatLon { lat, lon }
}

fn fields(g: GeofenceRecord) -> Vec<String> {
    g.validated()
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| e.field)
        .collect()
}

fn circle() -> GeofenceRecord {
    GeofenceRecord {
        name: Some("Depot".into()),
        geofence_type: Some("circle".into()),
        circle_centre: Some(p(51.5, -0.12)),
        circle_radius: Some(100.0),
        ..Default::default()
    }
}

fn square() -> Vec<LatLon> {
    vec![p(0.0, 0.0), p(0.0, 1.0), p(1.0, 1.0), p(1.0, 0.0)]
}

fn polygon(rings: Vec<Vec<LatLon>>) -> GeofenceRecord {
    GeofenceRecord {
        name: Some("Area".into()),
        geofence_type: Some("polygon".into()),
        polygon_positions: Some(rings),
        ..Default::default()
    }
}

fn polyline(points: Vec<LatLon>, width: Option<i64>) -> GeofenceRecord {
    GeofenceRecord {
        name: Some("Road".into()),
        geofence_type: Some("polyline".into()),
        polyline_positions: Some(points),
        fence_width: width,
        ..Default::default()
    }
}

#[test]
fn valid_circle_contains_its_centre_only_within_radius() {
    let (g, shape) = circle().validated().unwrap();
    assert_eq!(g.geofence_type, GeofenceShape::Circle);
    assert!(shape.contains(51.5, -0.12));
    // ~111 m per 0.001° of latitude.
    assert!(shape.contains(51.5008, -0.12));
    assert!(!shape.contains(51.5011, -0.12));
}

#[test]
fn type_is_case_insensitive_and_required() {
    let mut g = circle();
    g.geofence_type = Some("Circle".into());
    assert_eq!(
        g.validated().unwrap().0.geofence_type,
        GeofenceShape::Circle
    );
    let mut g = circle();
    g.geofence_type = None;
    assert_eq!(fields(g), ["GeofenceType"]);
    let mut g = circle();
    g.geofence_type = Some("square".into());
    assert_eq!(fields(g), ["GeofenceType"]);
}

#[test]
fn circle_needs_centre_and_positive_radius() {
    let mut g = circle();
    g.circle_radius = None;
    g.circle_centre = None;
    assert_eq!(fields(g), ["CircleCentre", "CircleRadius"]);
    for bad in [0.0, -5.0, f64::NAN, 3.0e7] {
        let mut g = circle();
        g.circle_radius = Some(bad);
        assert_eq!(fields(g), ["CircleRadius"], "{bad}");
    }
}

#[test]
fn coordinates_are_range_checked() {
    let mut g = circle();
    g.circle_centre = Some(p(91.0, 181.0));
    assert_eq!(fields(g), ["CircleCentre.Lat", "CircleCentre.Lon"]);
    let mut g = circle();
    g.circle_centre = Some(p(-90.0, -180.0));
    assert!(g.validated().is_ok());
    let g = polygon(vec![vec![p(0.0, 0.0), p(0.0, 1.0), p(f64::NAN, 1.0)]]);
    assert_eq!(fields(g), ["PolygonPositions[0][2].Lat"]);
}

#[test]
fn name_is_required_and_bounded() {
    let mut g = circle();
    g.name = Some("  ".into());
    assert_eq!(fields(g), ["Name"]);
    let mut g = circle();
    g.name = Some("x".repeat(201));
    assert_eq!(fields(g), ["Name"]);
    let mut g = circle();
    g.name = Some(" Depot ".into());
    assert_eq!(g.validated().unwrap().0.name, "Depot");
}

#[test]
fn zoom_levels() {
    let mut g = circle();
    g.min_zoom = Some(12.0);
    g.max_zoom = Some(3.0);
    assert_eq!(fields(g), ["MinZoom"]);
    let mut g = circle();
    g.min_zoom = Some(-1.0);
    assert_eq!(fields(g), ["MinZoom"]);
    let mut g = circle();
    g.min_zoom = Some(3.0);
    g.max_zoom = Some(3.0);
    assert!(g.validated().is_ok());
}

#[test]
fn fields_of_another_shape_are_refused() {
    let mut g = circle();
    g.polygon_positions = Some(vec![square()]);
    g.fence_width = Some(5);
    assert_eq!(fields(g), ["PolygonPositions", "FenceWidth"]);
    // Empty arrays count as absent.
    let mut g = circle();
    g.polygon_positions = Some(vec![]);
    g.polyline_positions = Some(vec![]);
    let (stored, _) = g.validated().unwrap();
    assert!(stored.polygon_positions.is_none());
    let mut g = polygon(vec![square()]);
    g.circle_radius = Some(5.0);
    assert_eq!(fields(g), ["CircleRadius"]);
}

#[test]
fn open_polygon_ring_is_closed() {
    let (g, shape) = polygon(vec![square()]).validated().unwrap();
    let ring = &g.polygon_positions.unwrap()[0];
    assert_eq!(ring.len(), 5);
    assert_eq!(ring.first(), ring.last());
    assert!(shape.contains(0.5, 0.5));
    assert!(shape.contains(0.0, 0.5), "boundary counts as inside");
    assert!(!shape.contains(1.5, 0.5));
}

#[test]
fn closed_polygon_ring_is_kept() {
    let mut ring = square();
    ring.push(p(0.0, 0.0));
    let (g, _) = polygon(vec![ring.clone()]).validated().unwrap();
    assert_eq!(g.polygon_positions.unwrap()[0], ring);
}

#[test]
fn polygon_needs_three_distinct_points() {
    let g = polygon(vec![vec![p(0.0, 0.0), p(1.0, 1.0)]]);
    assert_eq!(fields(g), ["PolygonPositions[0]"]);
    let g = polygon(vec![vec![p(0.0, 0.0), p(1.0, 1.0), p(0.0, 0.0)]]);
    assert_eq!(fields(g), ["PolygonPositions[0]"]);
    let g = polygon(vec![]);
    assert_eq!(fields(g), ["PolygonPositions"]);
}

#[test]
fn collinear_polygon_is_refused() {
    let g = polygon(vec![vec![p(0.0, 0.0), p(1.0, 1.0), p(2.0, 2.0)]]);
    assert_eq!(fields(g), ["PolygonPositions[0]"]);
}

#[test]
fn bow_tie_polygon_is_refused() {
    let g = polygon(vec![vec![
        p(0.0, 0.0),
        p(1.0, 1.0),
        p(1.0, 0.0),
        p(0.0, 1.0),
    ]]);
    let errors = g.validated().unwrap_err().0;
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, "PolygonPositions[0]");
    assert!(errors[0].message.contains("crosses itself"));
}

#[test]
fn holes_must_lie_inside() {
    let hole = vec![p(0.2, 0.2), p(0.2, 0.4), p(0.4, 0.4), p(0.4, 0.2)];
    let (_, shape) = polygon(vec![square(), hole]).validated().unwrap();
    assert!(!shape.contains(0.3, 0.3), "inside the hole is outside");
    assert!(shape.contains(0.7, 0.7));
    let outside = vec![p(5.0, 5.0), p(5.0, 6.0), p(6.0, 6.0)];
    assert_eq!(
        fields(polygon(vec![square(), outside])),
        ["PolygonPositions[1]"]
    );
}

#[test]
fn too_many_points() {
    let ring: Vec<LatLon> = (0..=MAX_POINTS)
        .map(|i| p((i as f64 / 10_000.0).sin(), i as f64 / 10_000.0))
        .collect();
    assert_eq!(fields(polygon(vec![ring])), ["PolygonPositions"]);
}

#[test]
fn polyline_rules() {
    let line = vec![p(0.0, 0.0), p(0.0, 0.01)];
    let (_, shape) = polyline(line.clone(), Some(100)).validated().unwrap();
    // 0.0004° of latitude ≈ 44 m: inside a 100 m wide corridor, 0.0006° ≈ 67 m is not.
    assert!(shape.contains(0.0004, 0.005));
    assert!(!shape.contains(0.0006, 0.005));
    assert_eq!(fields(polyline(line.clone(), None)), ["FenceWidth"]);
    assert_eq!(fields(polyline(line.clone(), Some(0))), ["FenceWidth"]);
    assert_eq!(
        fields(polyline(vec![p(0.0, 0.0)], Some(10))),
        ["PolylinePositions"]
    );
    assert_eq!(
        fields(polyline(vec![p(0.0, 0.0), p(0.0, 0.0)], Some(10))),
        ["PolylinePositions"]
    );
    let mut g = polyline(line, Some(10));
    g.circle_centre = Some(p(0.0, 0.0));
    assert_eq!(fields(g), ["CircleCentre"]);
}

#[test]
fn every_error_is_listed_at_once() {
    let g = GeofenceRecord {
        geofence_type: Some("circle".into()),
        min_zoom: Some(5.0),
        max_zoom: Some(1.0),
        circle_centre: Some(p(95.0, 0.0)),
        ..Default::default()
    };
    assert_eq!(
        fields(g),
        ["Name", "MinZoom", "CircleCentre.Lat", "CircleRadius"]
    );
}

#[test]
fn wire_form_matches_the_domain_form() {
    let (fields, _) = polygon(vec![square()]).validated().unwrap();
    let geofence = Geofence::new(
        GeofenceId::new(17),
        GeofenceFields {
            fence_width: Some(40),
            min_zoom: Some(2.0),
            max_zoom: Some(9.5),
            circle_radius: Some(12.5),
            circle_centre: Some(p(1.0, 2.0)),
            polyline_positions: Some(vec![p(3.0, 4.0), p(5.0, 6.0)]),
            properties: [("Colour".to_string(), "red".to_string())].into(),
            applies_to_subtenants: true,
            ..fields
        },
        "W/\"1\"".to_string(),
        Timestamp::from_second(1_700_000_000).unwrap(),
    );
    let domain = serde_json::to_string(&geofence).unwrap();
    let wire: GeofenceRecord = serde_json::from_str(&domain).unwrap();
    assert_eq!(serde_json::to_string(&wire).unwrap(), domain);
    assert_eq!(GeofenceRecord::from(&geofence), wire);
    let keys: Vec<String> =
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&domain)
            .unwrap()
            .keys()
            .cloned()
            .collect();
    assert_eq!(keys.first().map(String::as_str), Some("GeofenceId"));
}

#[test]
fn a_stored_geofence_has_the_checked_shape() {
    for record in [
        circle(),
        polygon(vec![square()]),
        polyline(vec![p(0.0, 0.0), p(1.0, 1.0)], Some(10)),
    ] {
        let (fields, shape) = record.validated().unwrap();
        let stored = Geofence::new(
            GeofenceId::new(1),
            fields,
            String::new(),
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(stored.shape(), Some(shape));
    }
}
