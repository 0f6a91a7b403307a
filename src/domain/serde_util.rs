//! Small serde helpers shared by records.

use serde::{Deserialize, Deserializer};

tokio::task_local! {
    static IEEE754_COMPATIBLE: bool;
}

/// Runs `future` (a request's handling) with the `IEEE754Compatible` choice the client
/// made; serialisers of 64-bit fields read it with `ieee754_compatible()`.
pub async fn with_ieee754_compatible<F: std::future::Future>(
    enabled: bool,
    future: F,
) -> F::Output {
    IEEE754_COMPATIBLE.scope(enabled, future).await
}

/// Whether 64-bit integers are being written as strings (false outside a request).
pub fn ieee754_compatible() -> bool {
    IEEE754_COMPATIBLE.try_with(|v| *v).unwrap_or(false)
}

/// `null` (or absent, with `#[serde(default)]`) becomes the type's default, e.g. an empty map.
pub fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An optional 64-bit integer field: written as a string when the response was asked for
/// with `IEEE754Compatible=true` (docs/api.md, "HTTP"); read from a JSON number, an integral
/// string (what such clients send) or XML text. A fractional number is refused.
pub mod opt_int64 {
    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};
    use std::fmt;

    pub fn serialize<S: Serializer>(value: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            None => s.serialize_none(),
            Some(v) if super::ieee754_compatible() => s.serialize_str(&v.to_string()),
            Some(v) => s.serialize_i64(*v),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        d.deserialize_any(OptInt64)
    }

    struct OptInt64;

    impl<'de> Visitor<'de> for OptInt64 {
        type Value = Option<i64>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a whole number")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(OptInt64)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            i64::try_from(v)
                .map(Some)
                .map_err(|_| E::custom("number too large for a 64-bit integer"))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Err(E::invalid_type(de::Unexpected::Float(v), &self))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            let v = v.trim();
            if v.is_empty() {
                return Ok(None);
            }
            v.parse::<i64>()
                .map(Some)
                .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
        }
    }
}
