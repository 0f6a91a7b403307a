//! Reading positions from every input format. JSON nests rings as arrays of arrays; the
//! XML form (one `<PolygonPositions>` element per ring holding `<Item>` points) reaches
//! us as a map with repeated `Item` keys, so a ring accepts both shapes.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::LatLon;

impl<'de> Deserialize<'de> for LatLon {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(LatLonVisitor)
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

struct Ring(Vec<LatLon>);

impl<'de> Deserialize<'de> for Ring {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RingVisitor)
    }
}

struct RingVisitor;

impl<'de> Visitor<'de> for RingVisitor {
    type Value = Ring;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of {Lat, Lon} objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ring, A::Error> {
        let mut points = Vec::new();
        while let Some(p) = seq.next_element::<LatLon>()? {
            points.push(p);
        }
        Ok(Ring(points))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ring, A::Error> {
        let mut points = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "Item" {
                points.extend(map.next_value::<Vec<LatLon>>()?);
            } else {
                return Err(de::Error::unknown_field(&key, &["Item"]));
            }
        }
        Ok(Ring(points))
    }

    /// An empty XML element.
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Ring, E> {
        if v.trim().is_empty() {
            Ok(Ring(Vec::new()))
        } else {
            Err(E::invalid_type(de::Unexpected::Str(v), &self))
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<Ring, E> {
        Ok(Ring(Vec::new()))
    }
}

/// `PolygonPositions`: null, or a list of rings.
pub fn rings<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Vec<LatLon>>>, D::Error> {
    let rings = Option::<Vec<Ring>>::deserialize(d)?;
    Ok(rings.map(|r| r.into_iter().map(|ring| ring.0).collect()))
}
