use super::*;
use crate::domain::mo_message::validated_batch;
use crate::domain::monitoring::check_in::{Confirmation, message_confirmation};

fn read(body: &str) -> (MoMessage, Option<String>) {
    match parse(body.as_bytes()) {
        Ok(Payload::Report { message, topic }) => (*message, topic),
        other => panic!("a report from {body}: {other:?}"),
    }
}

#[test]
fn locations_as_the_apps_send_them() {
    // Samples from Traccar's OwnTracksProtocolDecoderTest (Android, manual publish).
    let (m, topic) = read(
        r#"{"_type":"location","acc":15,"alt":440,"batt":46,"conn":"w","lat":46.0681247,"lon":11.1512805,"t":"u","tid":"5t","tst":1551874878,"vac":2,"vel":0}"#,
    );
    assert_eq!(topic, None);
    assert_eq!(m.message_type.as_deref(), Some("ManualPositionReport"));
    assert_eq!(
        message_confirmation(&m),
        Some(Confirmation::ManualPositionReport)
    );
    let at = Timestamp::from_second(1_551_874_878).unwrap();
    assert_eq!(m.sent_from_device, Some(at));
    assert_eq!(m.sequence_number, Some(1_551_874_878_000));
    let p = m.position.as_ref().unwrap();
    assert_eq!(
        (p.latitude, p.longitude),
        (Some(46.0681247), Some(11.1512805))
    );
    assert_eq!(p.accuracy.as_deref(), Some("15"));
    assert_eq!(p.altitude, Some(440.0));
    assert_eq!(p.speed, Some(0.0), "vel is km/h already");
    assert_eq!(p.gps_timestamp, Some(at));
    assert_eq!(m.battery_percent(), Some(46.0));
    assert_eq!(m.properties["tid"], "5t");
    assert_eq!(m.properties["conn"], "w");
    assert_eq!(m.properties["t"], "u");
    assert_eq!(m.properties["vac"], "2");
    assert!(!m.properties.contains_key("_type"));
    validated_batch(vec![m]).unwrap();

    let (m, topic) = read(
        r#"{"lon":-122,"acc":5,"created_at":1736161415,"lat":37,"topic":"owntracks/ckrey/22A67880-15C3-41A6-9157-25545C7993AC","t":"p","m":1,"tst":1736161169,"conn":"w","alt":0,"_type":"location","tid":"AC","inregions":["Home","Garage"]}"#,
    );
    assert_eq!(
        topic.as_deref(),
        Some("22A67880-15C3-41A6-9157-25545C7993AC")
    );
    assert_eq!(m.message_type.as_deref(), Some("AutomaticPositionReport"));
    assert_eq!(message_confirmation(&m), None, "a ping is no check-in");
    assert_eq!(m.properties["inregions"], r#"["Home","Garage"]"#);
    assert_eq!(m.properties["created_at"], "1736161415");

    let (m, _) = read(
        r#"{"cog":271,"lon":2.29513,"acc":5,"vel":61,"vac":21,"lat":48.85833,"tst":1497349316,"alt":167,"_type":"location","tid":"JJ","t":"r","batt":67}"#,
    );
    assert_eq!(m.message_type.as_deref(), Some("ResponseToLocationRequest"));
    let p = m.position.unwrap();
    assert_eq!((p.speed, p.heading), (Some(61.0), Some(271.0)));
}

#[test]
fn transitions_and_lwt() {
    let (m, _) = read(
        r#"{"_type":"transition","desc":"My favorite coffee shop (Delaville)","event":"enter","lat":48.87069,"lon":2.34916,"acc":10,"rid":"f7676c","tid":"j1","tst":1707057574,"wtst":1610104395,"t":"c"}"#,
    );
    assert_eq!(m.message_type.as_deref(), Some("GeofenceCrossed"));
    assert_eq!(m.properties["event"], "enter");
    assert_eq!(m.properties["desc"], "My favorite coffee shop (Delaville)");
    assert_eq!(m.properties["rid"], "f7676c");
    assert_eq!(m.properties["wtst"], "1610104395");
    assert_eq!(
        m.sequence_number,
        Some(1_707_057_574_001),
        "beside a location"
    );
    assert_eq!(m.position.unwrap().accuracy.as_deref(), Some("10"));
    let (leave, _) = read(r#"{"_type":"transition","event":"leave","tst":1707057600,"wtst":1}"#);
    assert_eq!(leave.position, None);

    let (m, _) = read(r#"{"_type":"lwt","tst":1707050000}"#);
    assert_eq!(m.message_type, None);
    assert_eq!(m.position, None);
    assert_eq!(m.properties["event"], "lwt");
    assert_eq!(m.sequence_number, Some(1_707_050_000_002));
}

#[test]
fn payloads_with_nothing_to_store() {
    for body in [
        "",
        "  ",
        r#"{"_type":"waypoint","desc":"Paris is lovely","lat":"48.858330","lon":"2.295130","rad":"50","tst":"1385997757"}"#,
        r#"{"_type":"card","name":"Jane","tid":"JJ"}"#,
        r#"{"_type":"status","iOS":{}}"#,
    ] {
        assert_eq!(parse(body.as_bytes()), Ok(Payload::Nothing), "{body}");
    }
}

#[test]
fn the_device_is_the_header_else_the_topic() {
    let (m, topic) =
        read(r#"{"_type":"location","lat":1,"lon":2,"tst":1,"topic":"owntracks/jane/phone"}"#);
    let from_topic = report(m.clone(), None, topic.clone()).unwrap();
    assert_eq!(from_topic.device, DeviceRef::app("phone"));
    let from_header = report(m.clone(), Some("jane-iphone"), topic).unwrap();
    assert_eq!(from_header.device, DeviceRef::app("jane-iphone"));
    assert_eq!(report(m, Some(" "), None), Err(OwnTracksError::NoDevice));
}

#[test]
fn answers() {
    assert_eq!(answer(None), "[]");
    let text: Value = serde_json::from_str(&answer(Some("Come back \"now\""))).unwrap();
    assert_eq!(
        text,
        serde_json::json!([{"_type": "cmd", "action": "action",
            "notification": "Come back \"now\"", "content": "Come back \"now\""}])
    );
}

#[test]
fn unreadable_payloads() {
    let error = |body: &str| parse(body.as_bytes()).unwrap_err();
    assert!(matches!(error("{not json"), OwnTracksError::Json(_)));
    assert!(matches!(error("[]"), OwnTracksError::Json(_)));
    assert_eq!(error(r#"{"lat":1}"#), field("_type", "is missing"));
    assert_eq!(
        error(r#"{"_type":"location","lat":1,"lon":2}"#),
        field("tst", "is missing")
    );
    assert_eq!(
        error(r#"{"_type":"location","lat":1,"tst":5}"#),
        field("lon", "is missing")
    );
    assert!(matches!(
        error(r#"{"_type":"location","lat":91,"lon":2,"tst":5}"#),
        OwnTracksError::Field { field: "lat", .. }
    ));
    assert_eq!(
        error(r#"{"_type":"location","lat":"north","lon":2,"tst":5}"#),
        field("lat", "is not a number")
    );
    assert_eq!(
        error(r#"{"_type":"location","lat":1,"lon":2,"tst":1.5}"#),
        field("tst", "must be whole Unix seconds")
    );
    assert_eq!(
        error(r#"{"_type":"encrypted","data":"c2VjcmV0"}"#),
        OwnTracksError::Encrypted
    );
}
