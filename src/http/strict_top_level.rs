//! serde's derived structs accept a JSON array as well as an object, reading the fields
//! by position: `["ops@example.com", "Ops", …]` posted as a user would be stored field by
//! field. A client that sends an array where the contract has an object has made a
//! mistake, and must hear so. `StrictTopLevel` wraps the body's deserializer and refuses
//! an array wherever the body type is a struct; every other request goes through as it
//! would without it (an array body for a list type, an object for a struct).
//!
//! Only the top level is checked: a nested record given as an array (a position as
//! `[51.5, -0.1]`) is still read by position (docs/decisions.md).

use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::forward_to_deserialize_any;

pub struct StrictTopLevel<D> {
    inner: D,
    /// Whether the body's JSON text is an array (its first non-blank byte is `[`).
    is_array: bool,
}

impl<D> StrictTopLevel<D> {
    pub fn new(inner: D, body: &[u8]) -> Self {
        let is_array = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        Self { inner, is_array }
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for StrictTopLevel<D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        if self.is_array {
            return Err(de::Error::invalid_type(Unexpected::Seq, &visitor));
        }
        self.inner.deserialize_struct(name, fields, visitor)
    }

    // The rest as the wrapped deserializer does them.

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.inner.deserialize_any(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.inner.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.inner.deserialize_map(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.inner.deserialize_option(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.inner.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.inner.deserialize_enum(name, variants, visitor)
    }

    // A JSON text says what it holds: the scalars need no hint.
    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct tuple tuple_struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::StrictTopLevel;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Pair {
        a: i64,
        b: Option<String>,
    }

    fn parse<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        T::deserialize(StrictTopLevel::new(&mut deserializer, text.as_bytes()))
    }

    #[test]
    fn an_object_is_read_and_an_array_refused_for_a_struct() {
        assert_eq!(
            parse::<Pair>(r#" {"a": 1, "b": "x"}"#).unwrap(),
            Pair {
                a: 1,
                b: Some("x".into())
            }
        );
        let refused = parse::<Pair>(r#" [1, "x"]"#).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("invalid type: sequence, expected struct Pair"),
            "{refused}"
        );
    }

    #[test]
    fn lists_maps_and_values_go_through() {
        assert_eq!(
            parse::<Vec<Pair>>(r#"[{"a": 1}, {"a": 2, "b": null}]"#).unwrap(),
            vec![Pair { a: 1, b: None }, Pair { a: 2, b: None }]
        );
        let map = parse::<std::collections::BTreeMap<String, i64>>(r#"{"x": 1}"#).unwrap();
        assert_eq!(map["x"], 1);
        let value = parse::<serde_json::Value>("[1, 2]").unwrap();
        assert_eq!(value, serde_json::json!([1, 2]));
        assert_eq!(parse::<Option<Pair>>("null").unwrap(), None);
    }
}
