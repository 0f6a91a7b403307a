use super::*;
use crate::domain::device_protocols::DeviceKey;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn query(q: &str) -> MoMessage {
    parse_query(q)
        .unwrap_or_else(|e| panic!("{q}: {e}"))
        .message
}

fn position(m: &MoMessage) -> &Position {
    m.position.as_ref().expect("a position")
}

fn field_of(err: OsmAndError) -> String {
    match err {
        OsmAndError::Field { field, .. } => field,
        other => panic!("not a field error: {other:?}"),
    }
}

fn json(body: &str) -> Vec<GatewayReport> {
    parse_json(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e}"))
}

#[test]
fn a_full_query_report() {
    let report = parse_query(
        "id=phone-7&lat=51.5007&lon=-0.1246&timestamp=1772359200&speed=10&bearing=90.5\
         &altitude=35&accuracy=12.5&hdop=0.9&batt=85&charge=true&valid=true&cell=234,15,1,2",
    )
    .unwrap();
    assert_eq!(report.device.id, "phone-7");
    assert_eq!(
        report.device.keys,
        [DeviceKey::DeviceId, DeviceKey::SecondaryDeviceId]
    );
    let m = report.message;
    assert_eq!(m.message_type.as_deref(), Some("AutomaticPositionReport"));
    let p = position(&m);
    assert_eq!((p.latitude, p.longitude), (Some(51.5007), Some(-0.1246)));
    assert_eq!(p.speed, Some(18.52), "10 knots in km/h");
    assert_eq!(p.heading, Some(90.5));
    assert_eq!(p.altitude, Some(35.0));
    assert_eq!(p.accuracy.as_deref(), Some("12.5"));
    assert_eq!(p.location_source.as_deref(), Some("Gps"));
    assert_eq!(p.gps_timestamp, Some(at("2026-03-01T10:00:00Z")));
    assert_eq!(m.sent_from_device, Some(at("2026-03-01T10:00:00Z")));
    assert_eq!(m.sequence_number, Some(1_772_359_200_000));
    assert_eq!(m.emergency_state, None);
    assert_eq!(m.battery_percent(), Some(85.0));
    let props: Vec<(&str, &str)> = m
        .properties
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        props,
        [
            ("battery", "85"),
            ("cell", "234,15,1,2"),
            ("charge", "true"),
            ("hdop", "0.9"),
            ("valid", "true"),
        ]
    );
}

#[test]
fn deviceid_heading_and_form_encoding() {
    let report = parse_query("deviceid=abc%20d&heading=270&lat=1&lon=2&note=a+b%26c").unwrap();
    assert_eq!(report.device.id, "abc d");
    assert_eq!(position(&report.message).heading, Some(270.0));
    assert_eq!(report.message.properties["note"], "a b&c");
}

#[test]
fn timestamps_in_all_four_formats() {
    let cases = [
        ("1772359200", "2026-03-01T10:00:00Z"),
        ("1772359200123", "2026-03-01T10:00:00.123Z"),
        ("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z"),
        ("2026-03-01T11:00:00.5%2B01:00", "2026-03-01T10:00:00.5Z"),
        ("2026-03-01T10:00:00", "2026-03-01T10:00:00Z"),
        ("2026-03-01%2010:00:00", "2026-03-01T10:00:00Z"),
        ("2026-03-01+10:00:00", "2026-03-01T10:00:00Z"),
    ];
    for (raw, expected) in cases {
        let m = query(&format!("id=1&timestamp={raw}"));
        assert_eq!(m.sent_from_device, Some(at(expected)), "{raw}");
        assert_eq!(
            m.sequence_number,
            Some(at(expected).as_millisecond()),
            "{raw}"
        );
    }
    // 2³¹ - 1 is still seconds; 2³¹ is milliseconds (early 1970).
    assert_eq!(parse_time("2147483647"), Ok(at("2038-01-19T03:14:07Z")));
    assert_eq!(parse_time("2147483648"), Ok(at("1970-01-25T20:31:23.648Z")));
    assert_eq!(
        field_of(parse_query("id=1&timestamp=yesterday").unwrap_err()),
        "timestamp"
    );
    assert_eq!(
        field_of(parse_query("id=1&timestamp=99999999999999999").unwrap_err()),
        "timestamp"
    );
}

#[test]
fn a_resend_has_the_same_dedupe_key() {
    let q = "id=1&lat=1&lon=2&timestamp=2026-03-01T10:00:00.123456Z";
    let (a, b) = (query(q), query(q));
    assert_eq!(
        (a.sequence_number, a.sent_from_device),
        (b.sequence_number, b.sent_from_device)
    );
    assert_eq!(a.sent_from_device, Some(at("2026-03-01T10:00:00.123Z")));
    // No time: no identity, so no dedupe (and no made-up time).
    let m = query("id=1&lat=1&lon=2");
    assert_eq!((m.sequence_number, m.sent_from_device), (None, None));
    assert_eq!(position(&m).gps_timestamp, None);
}

#[test]
fn location_parameter() {
    let m = query("id=1&location=-33.8688,151.2093");
    let p = position(&m);
    assert_eq!((p.latitude, p.longitude), (Some(-33.8688), Some(151.2093)));
    for bad in ["id=1&location=12", "id=1&location=a,2", "id=1&location=1,b"] {
        assert_eq!(field_of(parse_query(bad).unwrap_err()), "location", "{bad}");
    }
    assert_eq!(
        field_of(parse_query("id=1&location=91,0").unwrap_err()),
        "location"
    );
}

#[test]
fn negatives_mean_unknown() {
    let m = query("id=1&lat=1&lon=2&speed=-1&bearing=-1&accuracy=-1&batt=-1&altitude=-20");
    let p = position(&m);
    assert_eq!(
        (p.speed, p.heading, p.accuracy.as_deref()),
        (None, None, None)
    );
    assert_eq!(p.altitude, Some(-20.0), "altitude may be below sea level");
    assert!(!m.properties.contains_key("battery"));
}

#[test]
fn no_position_is_never_made_up() {
    for q in [
        "id=1",
        "id=1&cell=234,15,1,2&wifi=aa-bb-cc-dd-ee-ff,-60",
        "id=1&lat=51.5",
        "id=1&lon=-0.1",
    ] {
        assert_eq!(query(q).position, None, "{q}");
    }
}

#[test]
fn alarm_sos_is_an_emergency() {
    let m = query("id=1&alarm=sos");
    assert_eq!(m.emergency_state, Some(EmergencyState::Active));
    assert_eq!(m.properties["alarm"], "sos");
    assert_eq!(
        query("id=1&alarm=SOS").emergency_state,
        Some(EmergencyState::Active)
    );
    let other = query("id=1&alarm=lowBattery");
    assert_eq!(other.emergency_state, None);
    assert_eq!(other.properties["alarm"], "lowBattery");
}

#[test]
fn a_fall_alarm_is_a_fall() {
    for q in [
        "id=1&alarm=fall",
        "id=1&alarm=fallDown",
        "id=1&alarm=FALLDOWN",
        "id=1&alarm=lowBattery,fallDown",
    ] {
        assert_eq!(query(q).emergency_state, Some(EmergencyState::Fall), "{q}");
    }
    assert_eq!(
        query("id=1&alarm=removing,sos").emergency_state,
        Some(EmergencyState::Active)
    );
    let off = query("id=1&alarm=powerOff");
    assert_eq!(off.message_type.as_deref(), Some("PowerDown"));
    assert_eq!(off.emergency_state, None);
    let checked_in = query("id=1&alarm=powerOff&event=checkin");
    assert_eq!(checked_in.message_type.as_deref(), Some("CheckIn"));
    let reports = json(r#"{"device_id":"d","location":{"extras":{"alarm":"fallDown"}}}"#);
    assert_eq!(
        reports[0].message.emergency_state,
        Some(EmergencyState::Fall)
    );
}

/// Routine reports are never a person's check-in; the app's explicit event is.
#[test]
fn only_an_explicit_check_in_event_is_a_check_in() {
    let routine = query("id=1&lat=51.5&lon=-0.1");
    assert_eq!(
        routine.message_type.as_deref(),
        Some("AutomaticPositionReport")
    );
    let moving = query("id=1&lat=51.5&lon=-0.1&event=motionchange");
    assert_eq!(
        moving.message_type.as_deref(),
        Some("AutomaticPositionReport")
    );
    for event in ["checkin", "CheckIn", "check-in", "check_in"] {
        let m = query(&format!("id=1&lat=51.5&lon=-0.1&event={event}"));
        assert_eq!(m.message_type.as_deref(), Some("CheckIn"), "{event}");
    }
    let reports = json(r#"{"device_id":"d","location":{"event":"checkin"}}"#);
    assert_eq!(reports[0].message.message_type.as_deref(), Some("CheckIn"));
}

#[test]
fn bad_query_input_names_the_field() {
    assert_eq!(
        parse_query("lat=1&lon=2").unwrap_err(),
        OsmAndError::MissingDeviceId
    );
    assert_eq!(
        parse_query("id=&lat=1").unwrap_err(),
        OsmAndError::MissingDeviceId
    );
    for (q, field) in [
        ("id=1&lat=north&lon=2", "lat"),
        ("id=1&lat=1&lon=NaN", "lon"),
        ("id=1&lat=95&lon=2", "lat"),
        ("id=1&lat=1&lon=200", "lon"),
        ("id=1&speed=fast", "speed"),
        ("id=1&bearing=x", "bearing"),
        ("id=1&heading=x", "heading"),
        ("id=1&altitude=x", "altitude"),
        ("id=1&accuracy=x", "accuracy"),
        ("id=1&hdop=x", "hdop"),
        ("id=1&batt=full", "batt"),
    ] {
        let err = parse_query(q).unwrap_err();
        assert!(err.to_string().contains(field), "{q}: {err}");
        assert_eq!(field_of(err), field, "{q}");
    }
}

const CLIENT_9: &str = r#"{
  "location": {
    "timestamp": "2026-03-01T10:00:00.250Z",
    "coords": {"latitude": 51.5007, "longitude": -0.1246, "accuracy": 4.5,
               "speed": 10, "heading": 180, "altitude": 21.3},
    "is_moving": true,
    "odometer": 120,
    "event": "motionchange",
    "battery": {"level": 0.52, "is_charging": false},
    "activity": {"type": "walking"},
    "extras": {"shift": "night", "floor": 3}
  },
  "device_id": "phone-7"
}"#;

#[test]
fn traccar_client_9_json() {
    let reports = json(CLIENT_9);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].device, DeviceRef::app("phone-7"));
    let m = &reports[0].message;
    let p = position(m);
    assert_eq!((p.latitude, p.longitude), (Some(51.5007), Some(-0.1246)));
    assert_eq!(p.speed, Some(36.0), "10 m/s in km/h");
    assert_eq!(p.heading, Some(180.0));
    assert_eq!(p.altitude, Some(21.3));
    assert_eq!(p.accuracy.as_deref(), Some("4.5"));
    assert_eq!(m.sent_from_device, Some(at("2026-03-01T10:00:00.25Z")));
    assert_eq!(m.sequence_number, Some(1_772_359_200_250));
    assert_eq!(m.battery_percent(), Some(52.0));
    assert_eq!(m.emergency_state, None);
    for (key, value) in [
        ("battery", "52"),
        ("charge", "false"),
        ("is_moving", "true"),
        ("event", "motionchange"),
        ("activity", "walking"),
        ("shift", "night"),
        ("floor", "3"),
    ] {
        assert_eq!(
            m.properties.get(key).map(String::as_str),
            Some(value),
            "{key}"
        );
    }
}

#[test]
fn json_negatives_numbers_and_batches() {
    let reports = json(
        r#"{"device_id": 123456, "location": [
            {"timestamp": "2026-03-01T10:00:00Z",
             "coords": {"latitude": 1, "longitude": 2, "speed": -1, "heading": -1,
                        "accuracy": -1},
             "battery": {"level": -1, "is_charging": true}},
            {"timestamp": "2026-03-01T10:01:00Z", "coords": {"latitude": 3, "longitude": 4}}
        ]}"#,
    );
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0].device.id, "123456");
    let first = &reports[0].message;
    let p = position(first);
    assert_eq!(
        (p.speed, p.heading, p.accuracy.as_deref()),
        (None, None, None)
    );
    assert!(!first.properties.contains_key("battery"));
    assert_eq!(first.properties["charge"], "true");
    assert_eq!(
        reports[1].message.sent_from_device,
        Some(at("2026-03-01T10:01:00Z"))
    );
}

#[test]
fn json_extras_alarm_sos_is_an_emergency() {
    let reports = json(r#"{"device_id":"d","location":{"extras":{"alarm":"sos"}}}"#);
    let m = &reports[0].message;
    assert_eq!(m.emergency_state, Some(EmergencyState::Active));
    assert_eq!(m.properties["alarm"], "sos");
    assert_eq!(m.position, None, "no coords, no position");
}

#[test]
fn json_without_position_or_location() {
    let m = &json(r#"{"device_id":"d","location":{"timestamp":"2026-03-01T10:00:00Z"}}"#)[0];
    assert_eq!(m.message.position, None);
    let bare = json(r#"{"device_id":"d"}"#);
    assert_eq!(bare.len(), 1);
    assert_eq!(bare[0].message.position, None);
    assert_eq!(bare[0].message.sent_from_device, None);
}

#[test]
fn bad_json_is_refused_with_its_field() {
    assert!(matches!(
        parse_json(b"{not json").unwrap_err(),
        OsmAndError::Json(_)
    ));
    assert!(matches!(
        parse_json(b"[]").unwrap_err(),
        OsmAndError::Json(_)
    ));
    for body in [
        r#"{"location":{}}"#,
        r#"{"device_id":"","location":{}}"#,
        r#"{"device_id":null}"#,
    ] {
        assert_eq!(
            parse_json(body.as_bytes()).unwrap_err(),
            OsmAndError::MissingDeviceId,
            "{body}"
        );
    }
    for (body, field) in [
        (r#"{"device_id":true}"#, "device_id"),
        (r#"{"device_id":"d","location":5}"#, "location"),
        (
            r#"{"device_id":"d","location":[{},{"timestamp":"soon"}]}"#,
            "location[1].timestamp",
        ),
        (
            r#"{"device_id":"d","location":{"timestamp":12}}"#,
            "location.timestamp",
        ),
        (
            r#"{"device_id":"d","location":{"coords":{"latitude":"n","longitude":1}}}"#,
            "location.coords.latitude",
        ),
        (
            r#"{"device_id":"d","location":{"coords":{"latitude":1,"longitude":[]}}}"#,
            "location.coords.longitude",
        ),
        (
            r#"{"device_id":"d","location":{"coords":{"latitude":-91,"longitude":1}}}"#,
            "latitude",
        ),
        (
            r#"{"device_id":"d","location":{"battery":{"level":"x"}}}"#,
            "location.battery.level",
        ),
        (
            r#"{"device_id":"d","location":{"battery":{"is_charging":"yes"}}}"#,
            "location.battery.is_charging",
        ),
        (
            r#"{"device_id":"d","location":{"is_moving":1}}"#,
            "location.is_moving",
        ),
        (
            r#"{"device_id":"d","location":{"activity":{"type":1}}}"#,
            "location.activity.type",
        ),
        (
            r#"{"device_id":"d","location":{"extras":[]}}"#,
            "location.extras",
        ),
    ] {
        assert_eq!(
            field_of(parse_json(body.as_bytes()).unwrap_err()),
            field,
            "{body}"
        );
    }
}
