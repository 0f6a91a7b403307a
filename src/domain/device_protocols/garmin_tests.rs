use super::*;
use crate::domain::device_protocols::DeviceKey;
use crate::domain::device_state::DeviceState;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// Garmin's documented example event (schema 2.0).
const EXAMPLE: &str = r#"{
  "Version": "2.0",
  "Events": [{
    "imei": "300434030112330",
    "messageCode": 3,
    "freeText": "On my way.",
    "timeStamp": 1323784607376,
    "pingbackReceived": null,
    "pingbackResponded": null,
    "addresses": [{"address": "2075752244"}, {"address": "product.support@garmin.com"}],
    "point": {"latitude": 43.8078653812408, "longitude": -70.1636695861816,
              "altitude": 45, "gpsFix": 2, "course": 45, "speed": 50},
    "status": {"autonomous": 0, "lowBattery": 1, "intervalChange": 0, "resetDetected": 0}
  }]
}"#;

fn event(code: i64, extra: &str) -> String {
    format!(
        r#"{{"imei":"300434030112330","messageCode":{code},"timeStamp":1772359200000,
            "point":{{"latitude":51.5,"longitude":-0.12,"altitude":10,"gpsFix":2,
                      "course":90,"speed":4}}{extra}}}"#
    )
}

fn one(event: &str) -> Result<GatewayReport, EventError> {
    let body = format!(r#"{{"Version":"3.0","Events":[{event}]}}"#);
    let mut post = parse_post(body.as_bytes()).unwrap();
    assert_eq!(post.events.len(), 1);
    post.events.remove(0)
}

fn message(code: i64) -> MoMessage {
    one(&event(code, "")).unwrap().message
}

#[test]
fn the_documented_example() {
    let post = parse_post(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(post.version, "2.0");
    let report = post.events[0].clone().unwrap();
    assert_eq!(report.device.id, "300434030112330");
    assert_eq!(
        report.device.keys,
        [DeviceKey::IridiumImei, DeviceKey::DeviceId]
    );
    let m = report.message;
    assert_eq!(m.message_type.as_deref(), Some("FreeText"));
    assert_eq!(m.message.as_deref(), Some("On my way."));
    assert_eq!(m.sent_from_device, Some(at("2011-12-13T13:56:47.376Z")));
    assert_eq!(m.sequence_number, Some(1_323_784_607_376));
    let p = m.position.unwrap();
    assert_eq!(p.latitude, Some(43.8078653812408));
    assert_eq!(p.longitude, Some(-70.1636695861816));
    assert_eq!(
        (p.altitude, p.heading, p.speed),
        (Some(45.0), Some(45.0), Some(50.0))
    );
    assert_eq!(p.gps_timestamp, m.sent_from_device);
    assert_eq!(p.location_source.as_deref(), Some("Gps"));
    assert_eq!(m.emergency_state, None);
    let props: Vec<(&str, &str)> = m
        .properties
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        props,
        [
            ("addresses", "2075752244,product.support@garmin.com"),
            ("autonomous", "false"),
            ("gpsFix", "2"),
            ("intervalChange", "false"),
            ("lowBattery", "true"),
            ("messageCode", "3"),
            ("resetDetected", "false"),
        ]
    );
}

#[test]
fn every_code_class_maps_to_its_type() {
    let cases: [(i64, Option<&str>); 22] = [
        (0, Some("AutomaticPositionReport")),
        (1, None),
        (2, Some("ResponseToLocationRequest")),
        (3, Some("FreeText")),
        (4, Some("DeclareSos")),
        (5, None),
        (6, Some("ConfirmSos")),
        (7, Some("CancelSos")),
        (8, Some("Waypoint")),
        (10, Some("BeginMonitoring")),
        (11, Some("AutomaticPositionReport")),
        (12, Some("EndMonitoring")),
        (14, Some("CannedMessageSend")),
        (17, Some("FreeText")),
        (20, Some("MailCheck")),
        (21, Some("AmIAlive")),
        (24, Some("CannedMessageSend")),
        (63, Some("CannedMessageSend")),
        (64, Some("BinaryMessage")),
        (67, Some("BinaryMessage")),
        (3099, Some("CannedMessageSend")),
        (68, None),
    ];
    for (code, expected) in cases {
        let m = message(code);
        assert_eq!(m.message_type.as_deref(), expected, "code {code}");
        assert_eq!(m.properties["messageCode"], code.to_string());
        let emergency = match code {
            4 | 6 => Some(EmergencyState::Active),
            7 => Some(EmergencyState::Clear),
            _ => None,
        };
        assert_eq!(m.emergency_state, emergency, "code {code}");
    }
}

#[test]
fn sos_declare_confirm_cancel_drive_the_emergency_events() {
    let mut state = DeviceState::default();
    let t = |s: &str| at(s);
    let o = state.observe(&message(0), 1, t("2026-03-01T10:00:00Z"), None);
    assert!(!o.facts.emergency);
    let o = state.observe(&message(4), 2, t("2026-03-01T10:01:00Z"), None);
    assert!(o.facts.emergency);
    let o = state.observe(&message(6), 3, t("2026-03-01T10:02:00Z"), None);
    assert!(o.facts.emergency && !o.facts.emergency_cancelled);
    // Tracking during the SOS keeps the emergency.
    let o = state.observe(&message(11), 4, t("2026-03-01T10:03:00Z"), None);
    assert!(o.facts.emergency);
    let o = state.observe(&message(7), 5, t("2026-03-01T10:04:00Z"), None);
    assert!(!o.facts.emergency && o.facts.emergency_cancelled);
}

#[test]
fn gps_fix_zero_is_no_position() {
    let m = one(
        r#"{"imei":"300434030112330","messageCode":0,"timeStamp":1772359200000,
            "point":{"latitude":0,"longitude":0,"altitude":0,"gpsFix":0,"course":0,"speed":0}}"#,
    )
    .unwrap()
    .message;
    assert_eq!(m.position, None);
    assert_eq!(m.properties["gpsFix"], "0");
    // No point at all: no position either.
    let m = one(r#"{"imei":"300434030112330","messageCode":21}"#)
        .unwrap()
        .message;
    assert_eq!(m.position, None);
    assert_eq!((m.sent_from_device, m.sequence_number), (None, None));
}

#[test]
fn a_reference_point_is_not_the_device_position() {
    let m = message(8);
    assert_eq!(m.position, None);
    assert_eq!(m.properties["referenceLatitude"], "51.5");
    assert_eq!(m.properties["referenceLongitude"], "-0.12");
}

#[test]
fn binary_and_media_become_the_file() {
    let v2 = one(r#"{"payload":"aGVsbG8=","imei":"300234010571020","messageCode":64,"status":{"lowBattery":0}}"#)
        .unwrap()
        .message;
    assert_eq!(v2.file.as_deref(), Some("aGVsbG8="));
    assert_eq!(v2.mime_type.as_deref(), Some("application/octet-stream"));
    assert_eq!(v2.message_type.as_deref(), Some("BinaryMessage"));
    assert_eq!(v2.properties["lowBattery"], "false");
    assert_eq!(v2.sent_from_device, None, "2.0 binary events carry no time");
    let v4 = one(
        r#"{"transportMode":"Satellite","payload":"aGVsbG8=","imei":"300052030105900",
            "messageCode":66,"timeStamp":1740406683953,"status":{"lowBattery":0}}"#,
    )
    .unwrap()
    .message;
    assert_eq!(v4.sequence_number, Some(1_740_406_683_953));
    assert_eq!(v4.properties["transportMode"], "Satellite");
    let media = one(
        r#"{"imei":"300434030112330","mediaBytes":"b2dn","mediaId":"m-1",
            "mediaType":"audio/ogg","transcription":"on my way","messageCode":3,
            "freeText":"","timeStamp":1323784607376}"#,
    )
    .unwrap()
    .message;
    assert_eq!(media.file.as_deref(), Some("b2dn"));
    assert_eq!(media.mime_type.as_deref(), Some("audio/ogg"));
    assert_eq!(media.message, None, "an empty freeText is no text");
    assert_eq!(media.properties["transcription"], "on my way");
    assert_eq!(media.properties["mediaId"], "m-1");
}

#[test]
fn a_resent_event_has_the_same_identity() {
    let a = message(0);
    let b = message(0);
    assert_eq!(a.sequence_number, Some(1_772_359_200_000));
    assert_eq!(
        (a.sequence_number, a.sent_from_device),
        (b.sequence_number, b.sent_from_device)
    );
}

#[test]
fn a_bad_event_is_reported_alone() {
    let body = format!(
        r#"{{"Version":"4.0","Events":[{},{{"imei":"300434030112331"}},
            {{"imei":"300434030112332","messageCode":"three"}},
            {{"messageCode":0}}, {{"imei":" ","messageCode":0}},
            {{"imei":"300434030112333","messageCode":0,"point":{{"latitude":95,"longitude":0,"gpsFix":2}}}},
            {{"imei":"300434030112334","messageCode":64,"payload":"%%%"}},
            {{"imei":"300434030112335","messageCode":0,"timeStamp":9223372036854775807}},
            "not an event", {}]}}"#,
        event(0, ""),
        event(3, r#","freeText":"ok""#)
    );
    let post = parse_post(body.as_bytes()).unwrap();
    assert_eq!(post.events.len(), 10);
    assert!(post.events[0].is_ok());
    assert!(post.events[9].is_ok());
    let errors: Vec<&EventError> = post.events[1..9]
        .iter()
        .map(|e| e.as_ref().unwrap_err())
        .collect();
    assert_eq!(
        errors.iter().map(|e| e.index).collect::<Vec<_>>(),
        (1..9).collect::<Vec<_>>()
    );
    assert_eq!(errors[0].imei.as_deref(), Some("300434030112331"));
    assert!(errors[0].message.contains("messageCode"), "{}", errors[0]);
    assert!(errors[1].message.contains("messageCode"), "{}", errors[1]);
    assert!(errors[2].message.contains("imei"), "{}", errors[2]);
    assert_eq!(errors[2].imei, None);
    assert!(errors[3].message.contains("imei"), "{}", errors[3]);
    assert!(
        errors[4].message.contains("point.latitude"),
        "{}",
        errors[4]
    );
    assert!(errors[5].message.contains("payload"), "{}", errors[5]);
    assert!(errors[6].message.contains("timeStamp"), "{}", errors[6]);
    assert!(
        errors[7].to_string().starts_with("Events[8]"),
        "{}",
        errors[7]
    );
}

#[test]
fn a_body_that_is_not_a_post_is_an_error() {
    for body in [
        "not json",
        "[]",
        r#"{"Version":"2.0"}"#,
        r#"{"Events":[]}"#,
        r#"{"Version":"2.0","Events":{}}"#,
        r#"{"Version":" ","Events":[]}"#,
    ] {
        assert!(parse_post(body.as_bytes()).is_err(), "{body}");
    }
    let empty = parse_post(br#"{"Version":"5.0","Events":[]}"#).unwrap();
    assert!(empty.events.is_empty());
}
