//! XML rendering and parsing. Root element = the record type name (`ArrayOf<Name>` for
//! lists, one `<Name>` per item), child elements = field names, arrays as repeated
//! elements, nulls omitted. Parsing goes straight into the typed record, so XML in and
//! JSON out round-trip.

use std::io::Cursor;

use quick_xml::Writer;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::ApiError;

pub fn to_xml(name: &str, list: bool, value: &Value) -> anyhow::Result<String> {
    let mut writer = Writer::new(Cursor::new(Vec::new()));
    writer.write_event(Event::Decl(quick_xml::events::BytesDecl::new(
        "1.0",
        Some("utf-8"),
        None,
    )))?;
    if list {
        let root = format!("ArrayOf{name}");
        writer.write_event(Event::Start(BytesStart::new(root.as_str())))?;
        if let Value::Array(items) = value {
            for item in items {
                write_element(&mut writer, name, item)?;
            }
        }
        writer.write_event(Event::End(BytesEnd::new(root.as_str())))?;
    } else {
        write_element(&mut writer, name, value)?;
    }
    Ok(String::from_utf8(writer.into_inner().into_inner())?)
}

fn write_element(
    writer: &mut Writer<Cursor<Vec<u8>>>,
    tag: &str,
    value: &Value,
) -> anyhow::Result<()> {
    let tag = element_name(tag);
    match value {
        Value::Null => {}
        Value::Array(items) => {
            for item in items {
                match item {
                    // An array inside an array has no field name of its own.
                    Value::Array(_) => {
                        writer.write_event(Event::Start(BytesStart::new(tag.as_str())))?;
                        write_element(writer, "Item", item)?;
                        writer.write_event(Event::End(BytesEnd::new(tag.as_str())))?;
                    }
                    _ => write_element(writer, &tag, item)?,
                }
            }
        }
        Value::Object(fields) => {
            writer.write_event(Event::Start(BytesStart::new(tag.as_str())))?;
            for (key, field) in fields {
                write_element(writer, key, field)?;
            }
            writer.write_event(Event::End(BytesEnd::new(tag.as_str())))?;
        }
        scalar => {
            let text = match scalar {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            writer.write_event(Event::Start(BytesStart::new(tag.as_str())))?;
            writer.write_event(Event::Text(BytesText::new(&text)))?;
            writer.write_event(Event::End(BytesEnd::new(tag.as_str())))?;
        }
    }
    Ok(())
}

/// Map keys (e.g. `Properties`) may hold characters XML names cannot; replace them.
fn element_name(key: &str) -> String {
    let mut name: String = key
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    name
}

pub fn from_xml<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ApiError::bad_request("malformed_xml", "the XML body is not UTF-8"))?;
    quick_xml::de::from_str(text).map_err(|e| match e {
        quick_xml::DeError::InvalidXml(_) | quick_xml::DeError::UnexpectedEof => {
            ApiError::bad_request(
                "malformed_xml",
                format!("the body is not well-formed XML: {e}"),
            )
        }
        other => {
            let message = other.to_string();
            ApiError::field(super::negotiate::field_of(".", &message), message)
        }
    })
}
