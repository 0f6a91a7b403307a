//! serde's derived structs accept a JSON array as well as an object, reading the fields
//! by position: `["ops@example.com", "Ops", …]` posted as a user, or `"Position":
//! [51.5, -0.1]` inside a message, would be stored field by field. A client that sends
//! an array where the contract has an object has made a mistake, and must hear so.
//!
//! `StrictRecords` wraps the body's deserializer and every deserializer serde hands on
//! below it (map values, list elements, options, newtypes, enum variants): wherever the
//! target type is a struct, a sequence is refused with serde's own `invalid type:
//! sequence, expected struct …`. Everything else goes through as it would without it.
//! Types that buffer their input first (`#[serde(flatten)]`, untagged enums) read the
//! buffer without it; no request record uses them.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};

pub struct StrictRecords<D>(pub D);

/// Wraps a visitor: refuses a sequence when it visits a struct (`record`), and wraps
/// whatever it is handed to read further.
struct StrictVisitor<V> {
    inner: V,
    record: bool,
}

impl<V> StrictVisitor<V> {
    fn any(inner: V) -> Self {
        Self {
            inner,
            record: false,
        }
    }
}

/// Wraps a seed, so the deserializer it is given is wrapped.
struct StrictSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for StrictSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(StrictRecords(deserializer))
    }
}

macro_rules! forward_wrapped {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
                self.0.$method(StrictVisitor::any(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for StrictRecords<D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_struct(
            name,
            fields,
            StrictVisitor {
                inner: visitor,
                record: true,
            },
        )
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_newtype_struct(name, StrictVisitor::any(visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_unit_struct(name, StrictVisitor::any(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_tuple(len, StrictVisitor::any(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_tuple_struct(name, len, StrictVisitor::any(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_enum(name, variants, StrictVisitor::any(visitor))
    }

    forward_wrapped!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! forward_value {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, value: $ty) -> Result<V::Value, E> {
                self.inner.$method(value)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for StrictVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(formatter)
    }

    forward_value!(
        visit_bool(bool),
        visit_i8(i8),
        visit_i16(i16),
        visit_i32(i32),
        visit_i64(i64),
        visit_i128(i128),
        visit_u8(u8),
        visit_u16(u16),
        visit_u32(u32),
        visit_u64(u64),
        visit_u128(u128),
        visit_f32(f32),
        visit_f64(f64),
        visit_char(char),
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>),
    );

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(StrictRecords(deserializer))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(StrictRecords(deserializer))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if self.record {
            return Err(de::Error::invalid_type(Unexpected::Seq, &self.inner));
        }
        self.inner.visit_seq(StrictRecords(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(StrictRecords(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(StrictRecords(data))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for StrictRecords<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(StrictSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for StrictRecords<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(StrictSeed(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(StrictSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for StrictRecords<A> {
    type Error = A::Error;
    type Variant = StrictRecords<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(StrictSeed(seed))?;
        Ok((value, StrictRecords(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for StrictRecords<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(StrictSeed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, StrictVisitor::any(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(
            fields,
            StrictVisitor {
                inner: visitor,
                record: true,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::StrictRecords;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Pair {
        a: i64,
        b: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        pair: Option<Pair>,
        #[serde(default)]
        pairs: Vec<Pair>,
        #[serde(default)]
        named: BTreeMap<String, Pair>,
        #[serde(default)]
        kind: Option<Kind>,
        #[serde(default)]
        id: Option<Id>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Kind {
        Plain,
        Wrapped(Pair),
        Shaped { a: i64 },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Id(String);

    fn parse<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        T::deserialize(StrictRecords(&mut deserializer))
    }

    fn refused<T: for<'de> Deserialize<'de> + std::fmt::Debug>(text: &str, expected: &str) {
        let error = parse::<T>(text).expect_err(text).to_string();
        assert!(
            error.starts_with(&format!("invalid type: sequence, expected {expected}")),
            "{text}: {error}"
        );
    }

    #[test]
    fn objects_are_read_at_every_depth() {
        let outer: Outer = parse(
            r#"{"pair": {"a": 1, "b": "x"}, "pairs": [{"a": 2}], "named": {"k": {"a": 3}},
                "kind": {"Wrapped": {"a": 4}}, "id": "i-1"}"#,
        )
        .unwrap();
        assert_eq!(
            outer,
            Outer {
                pair: Some(Pair {
                    a: 1,
                    b: Some("x".into())
                }),
                pairs: vec![Pair { a: 2, b: None }],
                named: BTreeMap::from([("k".into(), Pair { a: 3, b: None })]),
                kind: Some(Kind::Wrapped(Pair { a: 4, b: None })),
                id: Some(Id("i-1".into())),
            }
        );
        let plain: Outer = parse(r#"{"pair": null, "kind": "Plain"}"#).unwrap();
        assert_eq!(plain.kind, Some(Kind::Plain));
        let shaped: Outer = parse(r#"{"pair": null, "kind": {"Shaped": {"a": 5}}}"#).unwrap();
        assert_eq!(shaped.kind, Some(Kind::Shaped { a: 5 }));
    }

    #[test]
    fn an_array_is_refused_wherever_a_record_is_expected() {
        refused::<Pair>(r#" [1, "x"]"#, "struct Pair");
        refused::<Outer>(r#"{"pair": [1, "x"]}"#, "struct Pair");
        refused::<Outer>(r#"{"pair": null, "pairs": [[1]]}"#, "struct Pair");
        refused::<Outer>(r#"{"pair": null, "named": {"k": [1]}}"#, "struct Pair");
        refused::<Outer>(r#"{"pair": null, "kind": {"Wrapped": [1]}}"#, "struct Pair");
        refused::<Outer>(
            r#"{"pair": null, "kind": {"Shaped": [5]}}"#,
            "struct variant",
        );
        refused::<Vec<Outer>>(r#"[{"pair": [1]}]"#, "struct Pair");
    }

    #[test]
    fn lists_maps_and_values_go_through() {
        assert_eq!(
            parse::<Vec<Pair>>(r#"[{"a": 1}, {"a": 2, "b": null}]"#).unwrap(),
            vec![Pair { a: 1, b: None }, Pair { a: 2, b: None }]
        );
        let map = parse::<BTreeMap<String, i64>>(r#"{"x": 1}"#).unwrap();
        assert_eq!(map["x"], 1);
        let value = parse::<serde_json::Value>(r#"[1, {"a": [2]}]"#).unwrap();
        assert_eq!(value, serde_json::json!([1, {"a": [2]}]));
        assert_eq!(parse::<Option<Pair>>("null").unwrap(), None);
        assert_eq!(
            parse::<(i64, String)>(r#"[1, "x"]"#).unwrap(),
            (1, "x".into())
        );
    }
}
