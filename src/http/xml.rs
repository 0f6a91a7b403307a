//! XML rendering and parsing. Root element = the record type name (`ArrayOf<Name>` for
//! lists, one `<Name>` per item), child elements = field names, arrays as repeated
//! elements, nulls omitted. On input arrays may also come wrapped, as .NET serialisers
//! write them (`<Recipients><Recipient>…</Recipient></Recipients>`); see `input`.
//! Parsing goes into the typed record, so XML in and JSON out round-trip.

mod input;
mod tree;

use std::io::Cursor;

use quick_xml::Writer;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{ApiError, field_of};

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

/// One element without the XML declaration: an item of a list written row by row.
pub fn element_to_xml(name: &str, value: &Value) -> anyhow::Result<String> {
    let mut writer = Writer::new(Cursor::new(Vec::new()));
    write_element(&mut writer, name, value)?;
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

/// Reads an XML body into `T`: 400 `malformed_xml` when it is not well-formed, 413 when
/// it is too deeply nested or has too many elements, 400 naming the field otherwise.
pub fn from_xml<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ApiError::bad_request("malformed_xml", "the XML body is not UTF-8"))?;
    let root = tree::parse(text).map_err(|e| match e {
        tree::TreeError::Malformed(message) => ApiError::bad_request(
            "malformed_xml",
            format!("the body is not well-formed XML: {message}"),
        ),
        tree::TreeError::TooLarge(message) => ApiError::body_too_large(message),
    })?;
    input::deserialize(&root).map_err(|e| {
        let message = e.inner().to_string();
        ApiError::field(field_of(&e.path().to_string(), &message), message)
    })
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::json;

    use super::*;
    use crate::http::records::contact::ContactRecord;
    use crate::http::records::distribution_list::DistributionListInputRecord;
    use crate::http::records::geofence::GeofenceRecord;
    use crate::http::records::user::UserRecord;
    use crate::http::records::webhook::WebhookSettingsRecord;

    fn read<T: DeserializeOwned>(xml: &str) -> T {
        from_xml(xml.as_bytes()).unwrap_or_else(|e| panic!("{xml}: {e:?}"))
    }

    /// The record read from `xml` equals the one read from `json`.
    fn same<T: DeserializeOwned + Serialize>(xml: &str, json: Value) {
        let from_xml = serde_json::to_value(read::<T>(xml)).unwrap();
        let from_json = serde_json::to_value(serde_json::from_value::<T>(json).unwrap()).unwrap();
        assert_eq!(from_xml, from_json, "{xml}");
    }

    /// (field, message) of a one-field validation error.
    fn field_error<T: DeserializeOwned + std::fmt::Debug>(xml: &str) -> (String, String) {
        match from_xml::<T>(xml.as_bytes()) {
            Err(ApiError::Validation(errors)) if errors.len() == 1 => {
                (errors[0].field.clone(), errors[0].message.clone())
            }
            other => panic!("{xml}: {other:?}"),
        }
    }

    fn code<T: DeserializeOwned + std::fmt::Debug>(xml: &str) -> &'static str {
        match from_xml::<T>(xml.as_bytes()) {
            Err(ApiError::BadRequest { code, .. }) => code,
            Err(ApiError::TooLarge { .. }) => "payload_too_large",
            other => panic!("{xml}: {other:?}"),
        }
    }

    fn list(recipients: &str) -> String {
        format!("<DistributionList><ListName>Ops</ListName>{recipients}</DistributionList>")
    }

    #[test]
    fn recipients_repeated_or_wrapped() {
        let two = json!({"ListName": "Ops", "Recipients": [
            {"Type": "TenantList", "ListId": "1"}, {"Type": "DeviceUserSms"}]});
        same::<DistributionListInputRecord>(
            &list(
                "<Recipients><Type>TenantList</Type><ListId>1</ListId></Recipients>\
                 <Recipients><Type>DeviceUserSms</Type></Recipients>",
            ),
            two.clone(),
        );
        same::<DistributionListInputRecord>(
            &list(
                "<Recipients><Recipient><Type>TenantList</Type><ListId>1</ListId></Recipient>\
                 <Recipient><Type>DeviceUserSms</Type></Recipient></Recipients>",
            ),
            two,
        );
    }

    #[test]
    fn a_single_recipient_in_either_form() {
        let one = json!({"ListName": "Ops", "Recipients": [{"Type": "TenantList", "ListId": "1"}]});
        for form in [
            "<Recipients><Type>TenantList</Type><ListId>1</ListId></Recipients>",
            "<Recipients><Recipient><Type>TenantList</Type><ListId>1</ListId></Recipient></Recipients>",
        ] {
            same::<DistributionListInputRecord>(&list(form), one.clone());
        }
        // One child, and its tag is a field of Recipient: one recipient, not a wrapper.
        same::<DistributionListInputRecord>(
            &list("<Recipients><Type>DeviceUserSms</Type></Recipients>"),
            json!({"ListName": "Ops", "Recipients": [{"Type": "DeviceUserSms"}]}),
        );
        same::<DistributionListInputRecord>(
            &list("<Recipients><Recipient><Type>DeviceUserSms</Type></Recipient></Recipients>"),
            json!({"ListName": "Ops", "Recipients": [{"Type": "DeviceUserSms"}]}),
        );
    }

    #[test]
    fn an_empty_wrapper_is_an_empty_array() {
        let empty = json!({"ListName": "Ops", "Recipients": []});
        for form in [
            "<Recipients/>",
            "<Recipients></Recipients>",
            "<Recipients>\n  </Recipients>",
        ] {
            same::<DistributionListInputRecord>(&list(form), empty.clone());
        }
        // Absent or nil is null, which a list refuses later (Recipients is required).
        for form in [
            "",
            r#"<Recipients xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:nil="true"/>"#,
        ] {
            assert_eq!(
                read::<DistributionListInputRecord>(&list(form)).recipients,
                None
            );
        }
        same::<ContactRecord>(
            "<Contact><ContactName>Sam</ContactName><ContactEntries/></Contact>",
            json!({"ContactName": "Sam", "ContactEntries": []}),
        );
    }

    #[test]
    fn contact_entries_and_webhook_urls() {
        let sam = json!({"ContactName": "Sam", "ContactEntries": [
            {"Address": "mail:sam@example.com"}, {"Address": "+447700900123"}]});
        same::<ContactRecord>(
            "<Contact><ContactName>Sam</ContactName><ContactEntries><ContactEntry>\
             <Address>mail:sam@example.com</Address></ContactEntry><ContactEntry>\
             <Address>+447700900123</Address></ContactEntry></ContactEntries></Contact>",
            sam.clone(),
        );
        same::<ContactRecord>(
            "<Contact><ContactName>Sam</ContactName>\
             <ContactEntries><Address>mail:sam@example.com</Address></ContactEntries>\
             <ContactEntries><Address>+447700900123</Address></ContactEntries></Contact>",
            sam,
        );
        let hook = json!({"Urls": [{"Url": "https://a.example.com/h", "Device": true}]});
        for form in [
            "<Urls><Url>https://a.example.com/h</Url><Device>true</Device></Urls>",
            "<Urls><WebhookUrl><Url>https://a.example.com/h</Url><Device>1</Device></WebhookUrl></Urls>",
            // The item tag is also a field name: its children tell it is a wrapper.
            "<Urls><Url><Url>https://a.example.com/h</Url><Device>true</Device></Url></Urls>",
        ] {
            same::<WebhookSettingsRecord>(
                &format!("<WebhookSettings>{form}</WebhookSettings>"),
                hook.clone(),
            );
        }
        same::<WebhookSettingsRecord>(
            "<WebhookSettings><Urls><Url>https://a.example.com/h</Url></Urls></WebhookSettings>",
            json!({"Urls": [{"Url": "https://a.example.com/h"}]}),
        );
    }

    #[test]
    fn scalar_arrays() {
        let ab = json!({"Username": "a@example.com", "SecondaryFacilityIds": ["a", "b"]});
        for form in [
            "<SecondaryFacilityIds><string>a</string><string>b</string></SecondaryFacilityIds>",
            "<SecondaryFacilityIds>a</SecondaryFacilityIds><SecondaryFacilityIds>b</SecondaryFacilityIds>",
        ] {
            same::<UserRecord>(
                &format!("<User><Username>a@example.com</Username>{form}</User>"),
                ab.clone(),
            );
        }
        for form in [
            "<SecondaryFacilityIds>a</SecondaryFacilityIds>",
            "<SecondaryFacilityIds><string>a</string></SecondaryFacilityIds>",
        ] {
            same::<UserRecord>(
                &format!("<User><Username>a@example.com</Username>{form}</User>"),
                json!({"Username": "a@example.com", "SecondaryFacilityIds": ["a"]}),
            );
        }
    }

    fn ring(points: &[(f64, f64)]) -> Value {
        Value::Array(
            points
                .iter()
                .map(|(lat, lon)| json!({"Lat": lat, "Lon": lon}))
                .collect(),
        )
    }

    fn dotnet_ring(points: &[(f64, f64)]) -> String {
        let points: String = points
            .iter()
            .map(|(lat, lon)| format!("<LatLon><Lat>{lat}</Lat><Lon>{lon}</Lon></LatLon>"))
            .collect();
        format!("<ArrayOfLatLon>{points}</ArrayOfLatLon>")
    }

    #[test]
    fn nested_arrays_of_positions() {
        let outline = [(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0)];
        let hole = [(0.2, 0.2), (0.2, 0.4), (0.4, 0.4)];
        let with_hole = json!({"Name": "Yard", "GeofenceType": "polygon",
            "PolygonPositions": [ring(&outline), ring(&hole)]});
        let one_ring = json!({"Name": "Yard", "GeofenceType": "polygon",
            "PolygonPositions": [ring(&outline)]});
        let dotnet = |rings: &[&[(f64, f64)]]| {
            let rings: String = rings.iter().map(|r| dotnet_ring(r)).collect();
            format!(
                "<Geofence><Name>Yard</Name><GeofenceType>polygon</GeofenceType>\
                 <PolygonPositions>{rings}</PolygonPositions></Geofence>"
            )
        };
        same::<GeofenceRecord>(&dotnet(&[&outline, &hole]), with_hole.clone());
        same::<GeofenceRecord>(&dotnet(&[&outline]), one_ring.clone());
        // Our own output: one element per ring, `Item` per point; one ring or two.
        for record in [with_hole, one_ring] {
            let written = to_xml("Geofence", false, &record).unwrap();
            assert!(
                written.contains("<PolygonPositions><Item><Lat>0"),
                "{written}"
            );
            same::<GeofenceRecord>(&written, record);
        }
        // Polylines: a wrapped or repeated array of positions.
        let road = json!({"Name": "Road", "GeofenceType": "polyline", "FenceWidth": 25,
            "PolylinePositions": ring(&[(0.0, 0.0), (1.0, 1.0)])});
        same::<GeofenceRecord>(
            &format!(
                "<Geofence><Name>Road</Name><GeofenceType>polyline</GeofenceType>\
                 <FenceWidth>25</FenceWidth><PolylinePositions>{}</PolylinePositions></Geofence>",
                dotnet_ring(&[(0.0, 0.0), (1.0, 1.0)])
                    .trim_start_matches("<ArrayOfLatLon>")
                    .trim_end_matches("</ArrayOfLatLon>")
            ),
            road.clone(),
        );
        same::<GeofenceRecord>(&to_xml("Geofence", false, &road).unwrap(), road.clone());
    }

    #[test]
    fn data_contract_namespaces_and_nil() {
        same::<UserRecord>(
            r#"<?xml version="1.0" encoding="utf-8"?>
            <User xmlns="http://schemas.datacontract.org/2004/07/Safetrack"
                  xmlns:i="http://www.w3.org/2001/XMLSchema-instance">
              <FirstName i:nil="true"/>
              <IsApproved>true</IsApproved>
              <SecondaryFacilityIds xmlns:d2p1="http://schemas.microsoft.com/2003/10/Serialization/Arrays">
                <d2p1:string>north</d2p1:string>
              </SecondaryFacilityIds>
              <Username> jane@example.com </Username>
            </User>"#,
            json!({"Username": "jane@example.com", "IsApproved": true,
                   "SecondaryFacilityIds": ["north"]}),
        );
        // A byte-order mark, CDATA and entities.
        same::<ContactRecord>(
            "\u{feff}<Contact><ContactName><![CDATA[ A & B ]]></ContactName>\
             <CultureName>en&#45;GB</CultureName></Contact>",
            json!({"ContactName": " A & B ", "CultureName": "en-GB"}),
        );
    }

    #[test]
    fn errors_name_the_field() {
        let (field, message) = field_error::<DistributionListInputRecord>(&list(
            "<Recipients><Recipient><Type>DeviceUserSms</Type></Recipient>\
             <Recipient><Type>Pigeon</Type></Recipient></Recipients>",
        ));
        assert_eq!(field, "Recipients[1].Type");
        assert!(
            message.contains("'Pigeon' is no RecipientType"),
            "{message}"
        );
        let (field, _) = field_error::<DistributionListInputRecord>(&list(
            "<Recipients><Recipient><Type>DeviceUserSms</Type><Colour>red</Colour></Recipient></Recipients>",
        ));
        assert_eq!(field, "Recipients[0].Colour");
        assert_eq!(
            field_error::<DistributionListInputRecord>(&list("<Recipients/><Colour>red</Colour>"))
                .0,
            "Colour"
        );
        assert_eq!(
            field_error::<GeofenceRecord>("<Geofence><CircleRadius>wide</CircleRadius></Geofence>")
                .0,
            "CircleRadius"
        );
        assert_eq!(
            field_error::<GeofenceRecord>(&format!(
                "<Geofence><PolygonPositions>{}</PolygonPositions></Geofence>",
                dotnet_ring(&[(0.0, 0.0)]).replace("<Lon>0</Lon>", "<Lon>east</Lon>")
            ))
            .0,
            "PolygonPositions[0][0].Lon"
        );
        let (field, message) = field_error::<ContactRecord>(
            "<Contact><ContactName>a</ContactName><ContactName>b</ContactName></Contact>",
        );
        assert_eq!(field, "ContactName");
        assert!(message.contains("is given 2 times"), "{message}");
        assert_eq!(
            field_error::<ContactRecord>("<Contact><ContactName><b>x</b></ContactName></Contact>")
                .0,
            "ContactName"
        );
        assert_eq!(
            field_error::<ContactRecord>(
                "<Contact><IsEscalationContact>yes</IsEscalationContact></Contact>"
            )
            .0,
            "IsEscalationContact"
        );
    }

    #[test]
    fn malformed_and_oversized_bodies() {
        for body in [
            "<Contact><ContactName>x</Recipients>",
            "<Contact><ContactName>x</ContactName>",
            "<Contact/><Contact/>",
            "<Contact>&nbsp;</Contact>",
            "text",
            "",
            "<Contact a='1' a='2'/>",
        ] {
            assert_eq!(code::<ContactRecord>(body), "malformed_xml", "{body}");
        }
        let deep = format!("{}{}", "<a>".repeat(100), "</a>".repeat(100));
        assert_eq!(code::<ContactRecord>(&deep), "payload_too_large");
        let many = format!("<Contact>{}</Contact>", "<x/>".repeat(tree::MAX_ELEMENTS));
        assert_eq!(code::<ContactRecord>(&many), "payload_too_large");
    }
}
