//! Known answers: places around the world in words (GeoNames' cities1000 as the
//! `reverse_geocoder` crate ships it), compass points, distances in both systems,
//! positions in the three formats (UTM against published grid references) and the links.

use super::*;

fn at(lat: f64, lon: f64) -> Position {
    Position::new(lat, lon).expect("a valid position")
}

fn words(lat: f64, lon: f64) -> String {
    nearest(at(lat, lon)).text(DistanceUnits::Metres)
}

#[test]
fn a_town_centre_is_the_town() {
    // Keswick's market square, 139 m from GeoNames' point for it.
    assert_eq!(words(54.60039, -3.13401), "Keswick, England, GB");
    assert_eq!(words(40.7831, -73.9712), "Manhattan, New York, US");
    // Southern hemisphere; an admin1 repeating the name is left out.
    assert_eq!(words(-33.92487, 18.42406), "Cape Town, Western Cape, ZA");
    assert_eq!(words(35.6895, 139.69171), "Tokyo, JP");
}

#[test]
fn outside_a_town_says_how_far_and_which_way() {
    // DESIGN §14's example.
    assert_eq!(words(54.6141, -3.1075), "2.3 km NE of Keswick, England, GB");
    assert_eq!(words(54.68, -3.25), "7.4 km E of Cockermouth, England, GB");
    assert_eq!(words(54.42, -3.13), "11 km W of Ambleside, England, GB");
    // Just past 500 m: the distance to 10 m.
    assert_eq!(
        words(51.5007, -0.1246),
        "550 m W of City of Westminster, England, GB"
    );
}

#[test]
fn the_readers_unit_is_used() {
    let near = nearest(at(54.6141, -3.1075));
    assert_eq!(
        near.text(DistanceUnits::Feet),
        "1.4 mi NE of Keswick, England, GB"
    );
    let westminster = nearest(at(51.5007, -0.1246));
    assert_eq!(
        westminster.text(DistanceUnits::Feet),
        "0.3 mi W of City of Westminster, England, GB"
    );
    assert_eq!(
        near.spoken(DistanceUnits::Metres),
        "2.3 kilometres north-east of Keswick, England, GB"
    );
    assert_eq!(
        nearest(at(54.60039, -3.13401)).spoken(DistanceUnits::Feet),
        "at Keswick, England, GB"
    );
}

#[test]
fn at_sea_the_nearest_place_with_its_distance() {
    assert_eq!(words(45.0, -30.0), "682 km N of Lagoa, Azores, PT");
    assert_eq!(
        words(0.0, -140.0),
        "991 km N of Taiohae, Iles Marquises, PF"
    );
}

#[test]
fn across_the_antimeridian_the_nearest_is_on_the_other_side() {
    // Labasa (Fiji) is at 179.38° E: points just east and just west of 180° both find it.
    assert_eq!(words(-16.5, 179.99), "65 km E of Lambasa, Northern, FJ");
    assert_eq!(words(-16.5, -179.99), "67 km E of Lambasa, Northern, FJ");
    let east = nearest(at(65.0, 180.0));
    let west = nearest(at(65.0, -180.0));
    assert_eq!(
        east.text(DistanceUnits::Metres),
        west.text(DistanceUnits::Metres)
    );
    assert_eq!(
        east.text(DistanceUnits::Metres),
        "121 km E of Anadyr, Chukotskiy Avtonomnyy Okrug, RU"
    );
}

#[test]
fn the_poles_find_the_farthest_settlements() {
    assert_eq!(words(90.0, 0.0), "1310 km N of Longyearbyen, Svalbard, SJ");
    assert_eq!(words(90.0, 123.0), words(90.0, 0.0));
    assert_eq!(words(-90.0, 0.0), "1351 km S of McMurdo Station, AQ");
}

#[test]
fn an_address_is_the_geofences_then_the_place() {
    let depot = vec!["Depot".to_string(), "Yard".to_string()];
    let keswick = Some(at(54.60039, -3.13401));
    assert_eq!(
        address(keswick, &depot, DistanceUnits::Metres).as_deref(),
        Some("Depot, Yard; Keswick, England, GB")
    );
    assert_eq!(
        address(Some(at(54.6141, -3.1075)), &[], DistanceUnits::Feet).as_deref(),
        Some("1.4 mi NE of Keswick, England, GB")
    );
    // No position, no place.
    assert_eq!(address(None, &[], DistanceUnits::Metres), None);
    assert_eq!(
        address(None, &depot, DistanceUnits::Metres).as_deref(),
        Some("Depot, Yard")
    );
}

#[test]
fn positions_that_cannot_be_placed_are_refused() {
    for (lat, lon) in [
        (f64::NAN, 0.0),
        (0.0, f64::INFINITY),
        (90.5, 0.0),
        (-91.0, 0.0),
        (0.0, 180.5),
        (0.0, -181.0),
    ] {
        assert_eq!(Position::new(lat, lon), None, "{lat}, {lon}");
    }
    assert_eq!(Position::of(Some(1.0), None), None);
    assert!(Position::of(Some(90.0), Some(-180.0)).is_some());
}

#[test]
fn compass_points() {
    let cases = [
        (0.0, Compass::N),
        (22.4, Compass::N),
        (22.5, Compass::NE),
        (90.0, Compass::E),
        (135.0, Compass::SE),
        (180.0, Compass::S),
        (225.0, Compass::SW),
        (270.0, Compass::W),
        (315.0, Compass::NW),
        (337.6, Compass::N),
        (-45.0, Compass::NW),
        (360.0, Compass::N),
    ];
    for (bearing, point) in cases {
        assert_eq!(Compass::of_bearing(bearing), point, "{bearing}°");
    }
}

#[test]
fn distances_in_both_systems() {
    let metric = |m| distance_text(m, DistanceUnits::Metres);
    let imperial = |m| distance_text(m, DistanceUnits::Feet);
    assert_eq!(metric(501.0), "500 m");
    assert_eq!(metric(994.0), "990 m");
    assert_eq!(metric(1000.0), "1.0 km");
    assert_eq!(metric(9_949.0), "9.9 km");
    assert_eq!(metric(9_950.0), "10 km");
    assert_eq!(metric(412_400.0), "412 km");
    // 1 ft = 0.3048 m, 1 mi = 1,609.344 m.
    assert_eq!(imperial(152.4), "500 ft");
    assert_eq!(imperial(304.8), "0.2 mi");
    assert_eq!(imperial(1_609.344), "1.0 mi");
    assert_eq!(imperial(16_093.44), "10 mi");
}

#[test]
fn positions_in_decimal_and_degrees_minutes() {
    let keswick = at(54.60039, -3.13401);
    assert_eq!(
        position_text(keswick, PositionFormat::Decimal),
        "54.60039, -3.13401"
    );
    assert_eq!(
        position_text(keswick, PositionFormat::DegreeMinute),
        "54° 36.023' N, 3° 08.041' W"
    );
    assert_eq!(
        position_text(at(-33.92487, 18.42406), PositionFormat::DegreeMinute),
        "33° 55.492' S, 18° 25.444' E"
    );
    // 59.99999° is 59° 59.9994': shown to the thousandth; 0.9999999° carries over.
    assert_eq!(
        position_text(at(59.99999, 0.9999999), PositionFormat::DegreeMinute),
        "59° 59.999' N, 1° 00.000' E"
    );
}

#[test]
fn utm_against_published_references() {
    // Wikipedia, "Universal Transverse Mercator coordinate system": the CN Tower at
    // 43°38′33.24″N 79°23′13.7″W is 17T 630084 4833438.
    let cn_tower = at(
        43.0 + 38.0 / 60.0 + 33.24 / 3600.0,
        -(79.0 + 23.0 / 60.0 + 13.7 / 3600.0),
    );
    assert_eq!(
        position_text(cn_tower, PositionFormat::Utm),
        "17T 630084E 4833438N"
    );
    // The definition: the central meridian is easting 500,000 m; the equator is
    // northing 0 in the north and 10,000,000 m in the south.
    assert_eq!(utm_text(at(0.0, -3.0)).as_deref(), Some("30N 500000E 0N"));
    let south = utm_grid(at(-0.000001, -3.0)).expect("in UTM");
    assert_eq!((south.zone, south.band), (30, 'M'));
    assert!((south.northing - 10_000_000.0).abs() < 1.0, "{south:?}");
    // The exceptions: south-west Norway is zone 32, Svalbard's 15° E is zone 33's centre.
    let bergen = utm_grid(at(60.39, 5.32)).expect("in UTM");
    assert_eq!((bergen.zone, bergen.band), (32, 'V'));
    assert_eq!(
        utm_text(at(79.0, 15.0)).as_deref(),
        Some("33X 500000E 8769974N")
    );
    // 180° is zone 60's edge, written as zone 1 like −180°.
    assert_eq!(utm_text(at(65.0, 180.0)), utm_text(at(65.0, -180.0)));
    // Beyond 84° N and 80° S there is no UTM: decimal degrees instead.
    assert_eq!(utm_grid(at(84.5, 0.0)), None);
    assert_eq!(
        position_text(at(-90.0, 0.0), PositionFormat::Utm),
        "-90.00000, 0.00000"
    );
}

#[test]
fn map_links_open_at_the_position() {
    let keswick = at(54.60039, -3.13401);
    assert_eq!(
        osm_link(keswick),
        "https://www.openstreetmap.org/?mlat=54.60039&mlon=-3.13401#map=17/54.60039/-3.13401"
    );
    assert_eq!(geo_uri(keswick), "geo:54.60039,-3.13401");
}

#[test]
fn a_readers_units_are_theirs_else_the_tenants() {
    let mut properties = BTreeMap::new();
    assert_eq!(ReaderUnits::of_tenant(&properties), ReaderUnits::default());
    properties.insert("PositionFormat".to_string(), " utm ".to_string());
    properties.insert("DistanceUnits".to_string(), "miles".to_string());
    let tenant = ReaderUnits::of_tenant(&properties);
    assert_eq!(
        tenant,
        ReaderUnits {
            position: PositionFormat::Utm,
            // Not one of the profile's values: the default.
            distance: DistanceUnits::Metres,
        }
    );
    let profile = UserProfile {
        distance_units: Some(DistanceUnits::Feet),
        ..UserProfile::default()
    };
    assert_eq!(
        ReaderUnits::of_user(&profile, tenant),
        ReaderUnits {
            position: PositionFormat::Utm,
            distance: DistanceUnits::Feet,
        }
    );
}
