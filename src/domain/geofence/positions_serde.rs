//! Reading positions from every input format. A position is read only as an object with
//! `Lat` and `Lon`; asking for a struct (with its field names) rather than any map lets
//! the XML reader tell a wrapped array of positions from a single position.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::LatLon;

impl<'de> Deserialize<'de> for LatLon {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("LatLon", &["Lat", "Lon"], LatLonVisitor)
    }
}

struct LatLonVisitor;

impl<'de> Visitor<'de> for LatLonVisitor {
    type Value = LatLon;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with Lat and Lon")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LatLon, A::Error> {
        let (mut lat, mut lon) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "Lat" => lat = Some(map.next_value::<f64>()?),
                "Lon" => lon = Some(map.next_value::<f64>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(LatLon {
            lat: lat.ok_or_else(|| de::Error::missing_field("Lat"))?,
            lon: lon.ok_or_else(|| de::Error::missing_field("Lon"))?,
        })
    }
}

/// `PolygonPositions`: null, or a list of rings (XML: repeated or wrapped, see
/// `http::xml`).
pub fn rings<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Vec<LatLon>>>, D::Error> {
    Option::<Vec<Vec<LatLon>>>::deserialize(d)
}
