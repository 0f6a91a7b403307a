//! XML input, second half. The body has been read into a small element tree (`tree.rs`),
//! and the typed record is deserialised from that tree by the serde `Deserializer`
//! below. Arrays arrive in two forms, and the record type decides which one it is:
//!
//! - repeated elements, as we write them: `<Recipients>…</Recipients><Recipients>…</Recipients>`;
//! - wrapped, as .NET serialisers write them: `<Recipients><Recipient>…</Recipient>…</Recipients>`.
//!
//! When a field is asked for as a sequence, each occurrence of its element is either one
//! item or a wrapper of items. The occurrence is left undecided until the item type asks
//! for what it is (serde's `deserialize_struct` names the fields, `deserialize_seq` says
//! it is an array, `deserialize_str` a scalar…); `wraps_items` then answers from that
//! request and the element's shape. An empty (or `xsi:nil`) occurrence holds no items.
//!
//! Everything else follows quick-xml's mapping: the root element's name is not checked,
//! element names are read without their namespace prefix, attributes are ignored except
//! `xsi:nil="true"` (null), text is trimmed, booleans are `true`/`false`/`1`/`0`.

use std::collections::HashMap;

use serde::de::value::{Error, StrDeserializer};

use super::tree::Element;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, Error as _, Expected, MapAccess, SeqAccess,
    Unexpected, Visitor,
};

/// Deserialises `T` from the root element; errors carry the path of the offending field.
pub fn deserialize<T: DeserializeOwned>(
    root: &Element,
) -> Result<T, serde_path_to_error::Error<Error>> {
    serde_path_to_error::deserialize(Node(root))
}

// ---- wrapped or repeated -------------------------------------------------------------

/// What an array's item type asked the deserializer for.
#[derive(Debug, Clone, Copy)]
enum Wants {
    /// A scalar (string, number, bool, enum name, …).
    Value,
    /// A record with these field names.
    Record(&'static [&'static str]),
    /// A map with keys of its own.
    Map,
    /// An array (an array of arrays).
    Array,
    /// Anything (`deserialize_any`): no way to tell, so the element is the item.
    Unknown,
}

/// Whether `node`, one occurrence of an array field, wraps several items rather than
/// being one item. Its children must all share one tag, and then:
/// - a scalar item has no child elements, so they are items (`<Ids><string>a</string>…`);
/// - a record: each child holds elements (not text), and the shared tag is not one of the
///   record's fields (`<Recipients><Recipient>…`, whereas `<Recipients><Type>…</Type>
///   </Recipients>` is one recipient), or each child holds only the record's fields
///   (`<Urls><Url><Url>…</Url><Device>…` wraps a URL);
/// - a map: each child holds elements, not text;
/// - an array: each child holds elements that all share a tag, i.e. is an array itself
///   (`<PolygonPositions><ArrayOfPosition><Position>…`), whereas the children of one ring
///   written as repeated elements are points with `Lat` and `Lon`.
fn wraps_items(node: &Element, wants: Wants) -> bool {
    let Some(first) = node.children.first() else {
        return false;
    };
    let tag = first.name.as_str();
    if !node.text.is_empty() || node.children.iter().any(|c| c.name != tag) {
        return false;
    }
    let containers = node.children.iter().all(|c| c.text.is_empty());
    match wants {
        Wants::Value => true,
        Wants::Record(fields) => {
            let is_field = |name: &str| fields.contains(&name);
            containers
                && (!is_field(tag)
                    || node.children.iter().all(|c| {
                        !c.children.is_empty() && c.children.iter().all(|g| is_field(&g.name))
                    }))
        }
        Wants::Map => containers,
        Wants::Array => {
            containers
                && node.children.iter().all(|c| match c.children.first() {
                    Some(g) => c.children.iter().all(|h| h.name == g.name),
                    None => true,
                })
        }
        Wants::Unknown => false,
    }
}

// ---- deserializers -------------------------------------------------------------------

type Result<T, E = Error> = std::result::Result<T, E>;

fn has_elements() -> Unexpected<'static> {
    Unexpected::Other("an element with child elements")
}

/// One element as a value: the root, an array item, or a field that occurs once.
#[derive(Clone, Copy)]
struct Node<'a>(&'a Element);

impl<'a> Node<'a> {
    /// The text of a leaf; an element with children is not a scalar.
    fn text(self, expected: &dyn Expected) -> Result<&'a str> {
        if self.0.children.is_empty() {
            Ok(&self.0.text)
        } else {
            Err(Error::invalid_type(has_elements(), expected))
        }
    }

    /// The children of an element read as a record or map.
    fn fields(self, expected: &dyn Expected) -> Result<Fields<'a>> {
        let node = self.0;
        if node.children.is_empty() && !node.text.is_empty() {
            return Err(Error::invalid_type(Unexpected::Str(&node.text), expected));
        }
        if !node.text.is_empty() {
            return Err(Error::custom(format!(
                "<{}> mixes text and child elements",
                node.name
            )));
        }
        Ok(Fields::new(node))
    }
}

macro_rules! parse_number {
    ($($method:ident => $visit:ident($ty:ty)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let text = self.text(&visitor)?;
            match text.parse::<$ty>() {
                Ok(n) => visitor.$visit(n),
                Err(_) => Err(Error::invalid_value(Unexpected::Str(text), &visitor)),
            }
        }
    )*};
}

impl<'de, 'a> Deserializer<'de> for Node<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.0.nil {
            visitor.visit_unit()
        } else if self.0.children.is_empty() {
            visitor.visit_str(&self.0.text)
        } else {
            let fields = self.fields(&visitor)?;
            visitor.visit_map(fields)
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.text(&visitor)? {
            "true" | "1" => visitor.visit_bool(true),
            "false" | "0" => visitor.visit_bool(false),
            other => Err(Error::invalid_value(Unexpected::Str(other), &visitor)),
        }
    }

    parse_number!(
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_f32 => visit_f32(f32),
        deserialize_f64 => visit_f64(f64),
    );

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let text = self.text(&visitor)?;
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => visitor.visit_char(c),
            _ => Err(Error::invalid_value(Unexpected::Str(text), &visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let text = self.text(&visitor)?;
        visitor.visit_str(text)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let text = self.text(&visitor)?;
        visitor.visit_bytes(text.as_bytes())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.0.nil {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    /// The element is the array: its children are the items, whatever their name.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let node = self.0;
        if node.children.is_empty() && !node.text.is_empty() {
            return Err(Error::invalid_type(Unexpected::Str(&node.text), &visitor));
        }
        visitor.visit_seq(Items(node.children.iter()))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let fields = self.fields(&visitor)?;
        visitor.visit_map(fields)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_map(visitor)
    }

    /// Enums are read by variant name (unit variants).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let text = self.text(&visitor)?;
        visitor.visit_enum(StrDeserializer::<Error>::new(text))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

/// The children of an element that is itself an array.
struct Items<'a>(std::slice::Iter<'a, Element>);

impl<'de, 'a> SeqAccess<'de> for Items<'a> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>> {
        self.0
            .next()
            .map(|item| seed.deserialize(Node(item)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// An element's children as a record: one key per tag, in order of first appearance,
/// with every element of that tag (a field given more than once is an array).
struct Fields<'a> {
    groups: std::vec::IntoIter<Field<'a>>,
    pending: Option<Field<'a>>,
}

struct Field<'a> {
    name: &'a str,
    nodes: Vec<&'a Element>,
}

impl<'a> Fields<'a> {
    fn new(node: &'a Element) -> Fields<'a> {
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut groups: Vec<Field<'a>> = Vec::new();
        for child in &node.children {
            match index.get(child.name.as_str()) {
                Some(&i) => groups[i].nodes.push(child),
                None => {
                    index.insert(&child.name, groups.len());
                    groups.push(Field {
                        name: &child.name,
                        nodes: vec![child],
                    });
                }
            }
        }
        Fields {
            groups: groups.into_iter(),
            pending: None,
        }
    }
}

impl<'de, 'a> MapAccess<'de> for Fields<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some(field) = self.groups.next() else {
            return Ok(None);
        };
        let name = field.name;
        self.pending = Some(field);
        seed.deserialize(StrDeserializer::<Error>::new(name))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value> {
        match self.pending.take() {
            Some(field) => seed.deserialize(field),
            None => Err(Error::custom("a value was asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.groups.len())
    }
}

impl<'a> Field<'a> {
    /// The one element of a field that is not an array.
    fn single(&self) -> Result<Node<'a>> {
        match self.nodes.as_slice() {
            [node] => Ok(Node(node)),
            nodes => Err(Error::custom(format!(
                "<{}> is given {} times, but is not an array",
                self.name,
                nodes.len()
            ))),
        }
    }

    fn occurrences(self) -> Occurrences<'a> {
        Occurrences {
            nodes: self.nodes.into_iter(),
            wrapped: [].iter(),
        }
    }
}

macro_rules! forward_to_single {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value> {
            self.single()?.$method($($arg,)* visitor)
        }
    )*};
}

/// A field of a record: every element with its tag.
impl<'de, 'a> Deserializer<'de> for Field<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.nodes.len() > 1 {
            visitor.visit_seq(self.occurrences())
        } else {
            self.single()?.deserialize_any(visitor)
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let [node] = self.nodes.as_slice()
            && node.nil
        {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_seq(self.occurrences())
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        visitor.visit_seq(self.occurrences())
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_seq(self.occurrences())
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    forward_to_single!(
        deserialize_bool(),
        deserialize_i8(),
        deserialize_i16(),
        deserialize_i32(),
        deserialize_i64(),
        deserialize_u8(),
        deserialize_u16(),
        deserialize_u32(),
        deserialize_u64(),
        deserialize_f32(),
        deserialize_f64(),
        deserialize_char(),
        deserialize_str(),
        deserialize_string(),
        deserialize_bytes(),
        deserialize_byte_buf(),
        deserialize_unit(),
        deserialize_unit_struct(name: &'static str),
        deserialize_map(),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
        deserialize_identifier(),
    );
}

/// The items of an array field: each occurrence is one item or wraps several; empty
/// and nil occurrences hold none.
struct Occurrences<'a> {
    nodes: std::vec::IntoIter<&'a Element>,
    /// Items still to come from the wrapper being read.
    wrapped: std::slice::Iter<'a, Element>,
}

impl<'de, 'a> SeqAccess<'de> for Occurrences<'a> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>> {
        if let Some(item) = self.wrapped.next() {
            return seed.deserialize(Node(item)).map(Some);
        }
        for node in self.nodes.by_ref() {
            if node.nil || node.is_empty() {
                continue;
            }
            return seed
                .deserialize(Occurrence {
                    node,
                    wrapped: &mut self.wrapped,
                })
                .map(Some);
        }
        Ok(None)
    }
}

/// One occurrence of an array field, undecided until the item type says what it wants.
struct Occurrence<'s, 'a> {
    node: &'a Element,
    wrapped: &'s mut std::slice::Iter<'a, Element>,
}

impl<'a> Occurrence<'_, 'a> {
    /// The item to read now; a wrapper's other items are left in `wrapped`.
    fn item(self, wants: Wants) -> Node<'a> {
        if wraps_items(self.node, wants)
            && let Some((first, rest)) = self.node.children.split_first()
        {
            *self.wrapped = rest.iter();
            Node(first)
        } else {
            Node(self.node)
        }
    }
}

macro_rules! decide_then {
    ($($wants:expr => $method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value> {
            self.item($wants).$method($($arg,)* visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for Occurrence<'_, '_> {
    type Error = Error;

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.item(Wants::Record(fields))
            .deserialize_struct(name, fields, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    decide_then!(
        Wants::Unknown => deserialize_any(),
        Wants::Value => deserialize_bool(),
        Wants::Value => deserialize_i8(),
        Wants::Value => deserialize_i16(),
        Wants::Value => deserialize_i32(),
        Wants::Value => deserialize_i64(),
        Wants::Value => deserialize_u8(),
        Wants::Value => deserialize_u16(),
        Wants::Value => deserialize_u32(),
        Wants::Value => deserialize_u64(),
        Wants::Value => deserialize_f32(),
        Wants::Value => deserialize_f64(),
        Wants::Value => deserialize_char(),
        Wants::Value => deserialize_str(),
        Wants::Value => deserialize_string(),
        Wants::Value => deserialize_bytes(),
        Wants::Value => deserialize_byte_buf(),
        Wants::Value => deserialize_unit(),
        Wants::Value => deserialize_unit_struct(name: &'static str),
        Wants::Value => deserialize_enum(name: &'static str, variants: &'static [&'static str]),
        Wants::Value => deserialize_identifier(),
        Wants::Array => deserialize_seq(),
        Wants::Array => deserialize_tuple(len: usize),
        Wants::Array => deserialize_tuple_struct(name: &'static str, len: usize),
        Wants::Map => deserialize_map(),
    );
}
