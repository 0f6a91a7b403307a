//! Where a position is, in words (DESIGN §14, docs/reports.md "Addresses"): the nearest
//! GeoNames place of 1,000 or more people (the `reverse_geocoder` crate carries the data
//! and its k-d tree: nothing is read or downloaded at run time), its distance and compass
//! direction when farther than 500 m ("2.3 km NE of Keswick, England, GB"), in the
//! reader's distance unit; a position written in the reader's `PositionFormat`; and the
//! links a phone opens in its maps app. No HTTP, no SQL.
//!
//! The index (144,563 places) is built once, on first use or by `warm` (about 0.1 s and
//! 50 MB; bench/README.md, "Where, in words").

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::LazyLock;

use geo::{Bearing, Distance, Haversine, Point};
use reverse_geocoder::ReverseGeocoder;

use super::profile::{DistanceUnits, PositionFormat, UserProfile};

/// Within this of the nearest place, a position is simply "at" it (no distance).
pub const AT_PLACE_METRES: f64 = 500.0;

static PLACES: LazyLock<ReverseGeocoder> = LazyLock::new(ReverseGeocoder::new);

/// Builds the index now (the server calls it at start, off the request path), so the
/// first alert does not wait for it.
pub fn warm() {
    LazyLock::force(&PLACES);
}

/// A position that can be placed: finite, latitude within ±90°, longitude within ±180°.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    lat: f64,
    lon: f64,
}

impl Position {
    /// None for a latitude or longitude out of range or not a number.
    pub fn new(lat: f64, lon: f64) -> Option<Position> {
        let valid = lat.is_finite()
            && lon.is_finite()
            && (-90.0..=90.0).contains(&lat)
            && (-180.0..=180.0).contains(&lon);
        valid.then_some(Position { lat, lon })
    }

    /// From an optional pair, as records hold them.
    pub fn of(lat: Option<f64>, lon: Option<f64>) -> Option<Position> {
        Position::new(lat?, lon?)
    }

    pub fn lat(self) -> f64 {
        self.lat
    }

    pub fn lon(self) -> f64 {
        self.lon
    }

    fn point(self) -> Point<f64> {
        Point::new(self.lon, self.lat)
    }
}

/// The eight points of the compass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compass {
    N,
    NE,
    E,
    SE,
    S,
    SW,
    W,
    NW,
}

impl Compass {
    const ALL: [Compass; 8] = [
        Compass::N,
        Compass::NE,
        Compass::E,
        Compass::SE,
        Compass::S,
        Compass::SW,
        Compass::W,
        Compass::NW,
    ];

    /// The point nearest a bearing in degrees (0 north, 90 east; any value, wrapped).
    pub fn of_bearing(degrees: f64) -> Compass {
        let sector = ((degrees.rem_euclid(360.0) + 22.5) / 45.0).floor() as usize;
        Self::ALL[sector % 8]
    }

    /// `NE`
    pub fn abbreviation(self) -> &'static str {
        match self {
            Compass::N => "N",
            Compass::NE => "NE",
            Compass::E => "E",
            Compass::SE => "SE",
            Compass::S => "S",
            Compass::SW => "SW",
            Compass::W => "W",
            Compass::NW => "NW",
        }
    }

    /// `north-east`, for a voice to say.
    pub fn words(self) -> &'static str {
        match self {
            Compass::N => "north",
            Compass::NE => "north-east",
            Compass::E => "east",
            Compass::SE => "south-east",
            Compass::S => "south",
            Compass::SW => "south-west",
            Compass::W => "west",
            Compass::NW => "north-west",
        }
    }
}

/// The nearest place to a position, how far and in which direction the position lies
/// from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    pub name: &'static str,
    /// The first administrative division (`England`, `New York`); may be empty.
    pub admin1: &'static str,
    /// ISO 3166 country code (`GB`).
    pub country: &'static str,
    /// Great-circle (haversine) distance from the place to the position.
    pub metres: f64,
    /// Where the position lies seen from the place.
    pub direction: Compass,
}

/// The nearest place to `position` (never None: the index is never empty).
pub fn nearest(position: Position) -> Nearest {
    let found = PLACES.search((position.lat, position.lon)).record;
    let place = Point::new(found.lon, found.lat);
    Nearest {
        name: &found.name,
        admin1: &found.admin1,
        country: &found.cc,
        metres: Haversine.distance(place, position.point()),
        direction: Compass::of_bearing(Haversine.bearing(place, position.point())),
    }
}

impl Nearest {
    /// `Keswick, England, GB` (empty parts and an admin1 repeating the name left out).
    pub fn place_name(&self) -> String {
        let mut name = self.name.to_string();
        for part in [self.admin1, self.country] {
            if !part.trim().is_empty() && part != self.name {
                let _ = write!(name, ", {part}");
            }
        }
        name
    }

    /// Whether the position is far enough from the place to say how far.
    pub fn is_away(&self) -> bool {
        self.metres > AT_PLACE_METRES
    }

    /// `2.3 km NE of Keswick, England, GB`, or `Keswick, England, GB` within 500 m.
    pub fn text(&self, units: DistanceUnits) -> String {
        if !self.is_away() {
            return self.place_name();
        }
        format!(
            "{} {} of {}",
            distance_text(self.metres, units),
            self.direction.abbreviation(),
            self.place_name()
        )
    }

    /// The same, for a voice: `2.3 kilometres north-east of Keswick, England, GB`.
    pub fn spoken(&self, units: DistanceUnits) -> String {
        if !self.is_away() {
            return format!("at {}", self.place_name());
        }
        let (value, unit) = distance_parts(self.metres, units);
        let unit = match unit {
            "m" => "metres",
            "km" => "kilometres",
            "ft" => "feet",
            _ => "miles",
        };
        format!(
            "{value} {unit} {} of {}",
            self.direction.words(),
            self.place_name()
        )
    }
}

/// A distance and its unit as shown: metres below 1 km (to 10 m), kilometres with one
/// decimal below 10 km, whole kilometres beyond; feet below 1,000 ft (to 10 ft), miles
/// with one decimal below 10 mi, whole miles beyond.
fn distance_parts(metres: f64, units: DistanceUnits) -> (String, &'static str) {
    let (small, large, small_unit, large_unit) = match units {
        DistanceUnits::Metres => (metres, metres / 1000.0, "m", "km"),
        DistanceUnits::Feet => (metres / 0.3048, metres / 1609.344, "ft", "mi"),
    };
    if small < 1000.0 {
        let tens = (small / 10.0).round() * 10.0;
        (format!("{tens:.0}"), small_unit)
    } else if large < 9.95 {
        (format!("{large:.1}"), large_unit)
    } else {
        (format!("{large:.0}"), large_unit)
    }
}

/// `850 m`, `2.3 km`, `412 km`; `990 ft`, `1.4 mi`, `256 mi`.
pub fn distance_text(metres: f64, units: DistanceUnits) -> String {
    let (value, unit) = distance_parts(metres, units);
    format!("{value} {unit}")
}

/// A report's or a message's `Address`: the containing geofences' names (`, `-joined),
/// then `; ` and the nearest place in words. No position: the geofence names alone (None
/// when there are none either).
pub fn address(
    position: Option<Position>,
    geofences: &[String],
    units: DistanceUnits,
) -> Option<String> {
    let names = (!geofences.is_empty()).then(|| geofences.join(", "));
    let Some(position) = position else {
        return names;
    };
    let place = nearest(position).text(units);
    Some(match names {
        Some(names) => format!("{names}; {place}"),
        None => place,
    })
}

/// A position in a `PositionFormat`: `54.60422, -3.13400`; `54° 36.253' N, 3° 08.040' W`;
/// `30U 505230E 6050925N` (UTM is not defined north of 84° N or south of 80° S: there
/// the position is written in decimal degrees).
pub fn position_text(position: Position, format: PositionFormat) -> String {
    match format {
        PositionFormat::Decimal => decimal(position),
        PositionFormat::DegreeMinute => degree_minute(position),
        PositionFormat::Utm => utm_text(position).unwrap_or_else(|| decimal(position)),
    }
}

fn decimal(position: Position) -> String {
    format!("{:.5}, {:.5}", position.lat, position.lon)
}

fn degree_minute(position: Position) -> String {
    let part = |value: f64, positive: char, negative: char| {
        let hemisphere = if value < 0.0 { negative } else { positive };
        // Thousandths of a minute, rounded once, so 59.9996' carries into the degree.
        let thousandths = (value.abs() * 60_000.0).round() as u64;
        let (degrees, rest) = (thousandths / 60_000, thousandths % 60_000);
        format!(
            "{degrees}° {:02}.{:03}' {hemisphere}",
            rest / 1000,
            rest % 1000
        )
    };
    format!(
        "{}, {}",
        part(position.lat, 'N', 'S'),
        part(position.lon, 'E', 'W')
    )
}

/// A UTM grid reference: zone number and latitude band, easting and northing in whole
/// metres (truncated, as grid references are: the metre square the position is in).
pub fn utm_text(position: Position) -> Option<String> {
    let grid = utm_grid(position)?;
    Some(format!(
        "{}{} {}E {}N",
        grid.zone,
        grid.band,
        grid.easting.floor(),
        grid.northing.floor()
    ))
}

/// A UTM position: zone (1–60, with Norway's and Svalbard's exceptions), latitude band
/// letter, easting and northing in metres (WGS 84).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UtmGrid {
    pub zone: u8,
    pub band: char,
    pub easting: f64,
    pub northing: f64,
}

/// None outside UTM's latitudes (84° N to 80° S).
pub fn utm_grid(position: Position) -> Option<UtmGrid> {
    let band = utm::lat_to_zone_letter(position.lat)?;
    // 180° is −180° (zone 1), as the zone formula expects.
    let lon = if position.lon >= 180.0 {
        position.lon - 360.0
    } else {
        position.lon
    };
    let zone = utm::lat_lon_to_zone_number(position.lat, lon);
    let (mut northing, easting, _) = utm::to_utm_wgs84(position.lat, lon, zone);
    // The crate adds the southern false northing on the equator itself.
    if position.lat >= 0.0 && northing >= 10_000_000.0 {
        northing -= 10_000_000.0;
    }
    Some(UtmGrid {
        zone,
        band,
        easting,
        northing,
    })
}

/// The OpenStreetMap page with a marker at the position.
pub fn osm_link(position: Position) -> String {
    let (lat, lon) = (position.lat, position.lon);
    format!("https://www.openstreetmap.org/?mlat={lat:.5}&mlon={lon:.5}#map=17/{lat:.5}/{lon:.5}")
}

/// The `geo:` URI (RFC 5870) a phone opens in its maps app.
pub fn geo_uri(position: Position) -> String {
    format!("geo:{:.5},{:.5}", position.lat, position.lon)
}

/// How a reader is shown positions and distances: their profile's choices, else their
/// tenant's defaults (tenant properties `PositionFormat` and `DistanceUnits`, written as
/// the profile's are), else decimal degrees and metres.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderUnits {
    pub position: PositionFormat,
    pub distance: DistanceUnits,
}

impl Default for ReaderUnits {
    fn default() -> Self {
        ReaderUnits {
            position: PositionFormat::Decimal,
            distance: DistanceUnits::Metres,
        }
    }
}

impl ReaderUnits {
    /// A tenant's defaults, for outside contacts and callers without a profile (a value
    /// that is not one of the profile's is ignored).
    pub fn of_tenant(properties: &BTreeMap<String, String>) -> ReaderUnits {
        let fallback = ReaderUnits::default();
        let read = |key: &str| properties.get(key).map(|v| v.trim());
        ReaderUnits {
            position: read("PositionFormat")
                .and_then(PositionFormat::parse_any_case)
                .unwrap_or(fallback.position),
            distance: read("DistanceUnits")
                .and_then(DistanceUnits::parse_any_case)
                .unwrap_or(fallback.distance),
        }
    }

    /// A platform user's: each choice their profile makes, else the tenant's.
    pub fn of_user(profile: &UserProfile, tenant: ReaderUnits) -> ReaderUnits {
        ReaderUnits {
            position: profile.position_format.unwrap_or(tenant.position),
            distance: profile.distance_units.unwrap_or(tenant.distance),
        }
    }
}

#[cfg(test)]
#[path = "place_tests.rs"]
mod tests;
