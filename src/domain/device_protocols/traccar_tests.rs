use serde_json::{Value, json};

use super::*;
use crate::domain::mo_message::{EmergencyState, validated_batch};

/// A position forwarding body as Traccar 6 writes it (PositionData: `position` and
/// `device`, Jackson's ISO dates), from a watch speaking the "Watch" protocol.
fn forwarded(attributes: Value) -> Value {
    json!({
        "position": {
            "id": 0, "attributes": attributes, "deviceId": 7, "protocol": "watch",
            "serverTime": "2026-03-01T10:00:02.120+00:00",
            "deviceTime": "2026-03-01T10:00:01.000+00:00",
            "fixTime": "2026-03-01T10:00:00.000+00:00",
            "valid": true, "latitude": 51.5007, "longitude": -0.1246, "altitude": 12.5,
            "speed": 10.0, "course": 271.0, "address": null, "accuracy": 0.0,
            "network": null, "geofenceIds": null
        },
        "device": {
            "id": 7, "attributes": {}, "groupId": 0, "calendarId": 0, "name": "Jane's watch",
            "uniqueId": "4209917484", "status": "online",
            "lastUpdate": "2026-03-01T10:00:02.120+00:00", "positionId": 41, "phone": null,
            "model": null, "contact": null, "category": null, "disabled": false,
            "expirationTime": null
        }
    })
}

fn report(body: &Value) -> GatewayReport {
    match parse(body.to_string().as_bytes()) {
        Ok(Forwarded::Report(report)) => *report,
        other => panic!("a report: {other:?}"),
    }
}

#[test]
fn a_forwarded_position() {
    let report = report(&forwarded(json!({
        "batteryLevel": 84, "battery": 3.98, "steps": 1200, "sat": 7, "motion": true,
        "distance": 12.3
    })));
    assert_eq!(report.device, device_ref("4209917484"));
    let m = &report.message;
    assert_eq!(m.message_type.as_deref(), Some("AutomaticPositionReport"));
    let sent: Timestamp = "2026-03-01T10:00:01Z".parse().unwrap();
    let fixed: Timestamp = "2026-03-01T10:00:00Z".parse().unwrap();
    assert_eq!(m.sent_from_device, Some(sent));
    assert_eq!(m.sequence_number, Some(fixed.as_millisecond()));
    let p = m.position.as_ref().unwrap();
    assert_eq!((p.latitude, p.longitude), (Some(51.5007), Some(-0.1246)));
    assert_eq!(p.speed, Some(18.52), "knots to km/h");
    assert_eq!(p.heading, Some(271.0));
    assert_eq!(p.altitude, Some(12.5));
    assert_eq!(p.gps_timestamp, Some(fixed));
    assert_eq!(p.accuracy, None, "Traccar's 0 is unknown");
    assert_eq!(m.properties["battery"], "84");
    assert_eq!(m.properties["batteryVoltage"], "3.98");
    assert_eq!(m.properties["steps"], "1200");
    assert_eq!(m.properties["motion"], "true");
    assert_eq!(m.properties["protocol"], "watch");
    assert!(!m.properties.contains_key("address"), "null is nothing");
    assert_eq!(m.emergency_state, None);
    assert_eq!(m.battery_percent(), Some(84.0));
    validated_batch(vec![m.clone()]).unwrap();
}

#[test]
fn alarms_become_the_platforms_events() {
    for (alarms, state, kind) in [
        (
            "sos",
            Some(EmergencyState::Active),
            "AutomaticPositionReport",
        ),
        (
            "fallDown",
            Some(EmergencyState::Fall),
            "AutomaticPositionReport",
        ),
        (
            "sos,fallDown",
            Some(EmergencyState::Fall),
            "AutomaticPositionReport",
        ),
        ("removing", None, "AutomaticPositionReport"),
        ("lowBattery,powerOff", None, "PowerDown"),
        ("overspeed", None, "AutomaticPositionReport"),
    ] {
        let m = report(&forwarded(json!({"alarm": alarms}))).message;
        assert_eq!(m.emergency_state, state, "{alarms}");
        assert_eq!(m.message_type.as_deref(), Some(kind), "{alarms}");
        assert_eq!(m.properties["alarm"], alarms);
    }
    let tamper = report(&forwarded(json!({"alarm": "tampering"}))).message;
    assert!(alarm::is_tamper(&tamper.properties));
    let low = report(&forwarded(json!({"alarm": "lowPower"}))).message;
    assert!(alarm::is_low_battery(&low.properties));
}

#[test]
fn an_invalid_fix_keeps_no_position() {
    let mut body = forwarded(json!({"alarm": "sos"}));
    body["position"]["valid"] = json!(false);
    body["position"]["latitude"] = json!(0.0);
    body["position"]["longitude"] = json!(0.0);
    let m = report(&body).message;
    assert_eq!(m.position, None);
    assert_eq!(m.emergency_state, Some(EmergencyState::Active));
    assert!(m.sent_from_device.is_some());
}

#[test]
fn event_forwarding() {
    let mut body = forwarded(json!({"alarm": "fallDown", "batteryLevel": 40}));
    body["position"]["id"] = json!(41);
    body["event"] = json!({"id": 9, "attributes": {"alarm": "fallDown"}, "deviceId": 7,
        "type": "alarm", "eventTime": "2026-03-01T10:00:01.000+00:00", "positionId": 41,
        "geofenceId": 0, "maintenanceId": 0});
    let from_event = report(&body).message;
    assert_eq!(from_event.emergency_state, Some(EmergencyState::Fall));
    assert_eq!(from_event.properties["event"], "alarm");
    // The same position forwarded (before Traccar stored it: id 0) has the same key.
    let positional = report(&forwarded(json!({"alarm": "fallDown"}))).message;
    assert_eq!(positional.sequence_number, from_event.sequence_number);
    assert_eq!(positional.sent_from_device, from_event.sent_from_device);

    let offline = json!({"event": {"id": 10, "attributes": {}, "deviceId": 7,
        "type": "deviceOffline", "eventTime": "2026-03-01T11:00:00.000+00:00",
        "positionId": 0, "geofenceId": 0, "maintenanceId": 0},
        "device": forwarded(json!({}))["device"]});
    assert_eq!(
        parse(offline.to_string().as_bytes()),
        Ok(Forwarded::Nothing(device_ref("4209917484")))
    );
}

#[test]
fn dates_and_numbers_as_jackson_may_write_them() {
    let mut body = forwarded(json!({}));
    body["position"]["fixTime"] = json!(1_772_359_200_000i64);
    body["position"]["deviceTime"] = json!("2026-03-01T11:00:00.000+01:00");
    body["device"]["uniqueId"] = json!(123456);
    let r = report(&body);
    assert_eq!(r.device.id, "123456");
    let ten: Timestamp = "2026-03-01T10:00:00Z".parse().unwrap();
    assert_eq!(r.message.sent_from_device, Some(ten));
    assert_eq!(r.message.sequence_number, Some(ten.as_millisecond()));
}

#[test]
fn unreadable_bodies() {
    let parsed = |body: &Value| parse(body.to_string().as_bytes());
    assert!(matches!(parse(b"{not json"), Err(TraccarError::Json(_))));
    assert!(matches!(parse(b"[]"), Err(TraccarError::Json(_))));
    let mut no_device = forwarded(json!({}));
    no_device["device"]["uniqueId"] = json!(" ");
    assert_eq!(
        parsed(&no_device),
        Err(field("device.uniqueId", "is missing"))
    );
    let mut lat = forwarded(json!({}));
    lat["position"]["latitude"] = json!(91.0);
    assert!(matches!(
        parsed(&lat),
        Err(TraccarError::Field {
            field: "position.latitude",
            ..
        })
    ));
    let mut when = forwarded(json!({}));
    when["position"]["fixTime"] = json!("yesterday");
    assert!(matches!(
        parsed(&when),
        Err(TraccarError::Field {
            field: "position.fixTime",
            ..
        })
    ));
    let only_device = json!({"device": {"uniqueId": "1"}});
    assert!(matches!(
        parsed(&only_device),
        Err(TraccarError::Field {
            field: "position",
            ..
        })
    ));
}
