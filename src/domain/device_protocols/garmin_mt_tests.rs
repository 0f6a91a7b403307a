use super::*;

const IMEI: &str = "300434030112330";

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn mt(kind: MtType, message: Option<&str>, parameters: Value) -> GarminMt {
    GarminMt {
        mt_message_id: MtMessageId::new(1),
        device_id: DeviceId::from_store("d".into()),
        r#type: kind,
        message: message.map(str::to_string),
        parameters: parameters.as_object().cloned().unwrap_or_default(),
        queued_at: at("2026-03-01T10:00:00Z"),
    }
}

/// The bodies of the guide's IPCv2 examples, with our values.
#[test]
fn requests_are_the_guides_ipc_v2_bodies() {
    let text = inbound_text(
        IMEI,
        "ops@example.com",
        "Stay put, help is coming",
        at("2026-03-01T10:00:00Z"),
    )
    .unwrap();
    assert_eq!(text.path, "Messaging/Message");
    assert_eq!(
        text.body,
        json!({"Messages": [{
            "Recipients": [300434030112330u64],
            "Sender": "ops@example.com",
            "Timestamp": "/Date(1772359200000)/",
            "Message": "Stay put, help is coming",
        }]})
    );
    let locate = inbound_location_request(IMEI).unwrap();
    assert_eq!(locate.path, "Location/SendLocationRequest");
    assert_eq!(locate.body, json!({"IMEI": [300434030112330u64]}));
    let interval = inbound_tracking_interval(IMEI, 600).unwrap();
    assert_eq!(interval.path, "Tracking/Interval");
    assert_eq!(
        interval.body,
        json!({"Devices": [{"Imei": 300434030112330u64, "Interval": 600}]})
    );
}

#[test]
fn what_garmin_would_refuse_is_refused_here() {
    let t = at("2026-03-01T10:00:00Z");
    let sender = "ops@example.com";
    assert_eq!(
        inbound_text("12345", sender, "hi", t),
        Err(InboundError::Imei("12345".into()))
    );
    assert_eq!(
        inbound_location_request("30043403011233x"),
        Err(InboundError::Imei("30043403011233x".into()))
    );
    assert_eq!(
        inbound_text(IMEI, sender, "  ", t),
        Err(InboundError::EmptyText)
    );
    assert!(inbound_text(IMEI, sender, &"é".repeat(160), t).is_ok());
    assert_eq!(
        inbound_text(IMEI, sender, &"é".repeat(161), t),
        Err(InboundError::TextTooLong(161))
    );
    for bad in [
        "",
        "safetrack",
        "ops@",
        "@example.com",
        "ops@example",
        "o ps@example.com",
        "+12",
    ] {
        assert_eq!(
            inbound_text(IMEI, bad, "hi", t),
            Err(InboundError::Sender(bad.trim().into())),
            "{bad:?}"
        );
    }
    for good in [
        "+447700900123",
        "4477009001",
        "duty.officer@ops.example.co.uk",
    ] {
        assert!(inbound_text(IMEI, good, "hi", t).is_ok(), "{good}");
    }
    for seconds in [0, 29, 65_536] {
        assert_eq!(
            inbound_tracking_interval(IMEI, seconds),
            Err(InboundError::Interval)
        );
    }
    assert!(inbound_tracking_interval(IMEI, 30).is_ok());
    assert!(inbound_tracking_interval(IMEI, 65_535).is_ok());
}

#[test]
fn each_mt_type_has_its_request() {
    let text = mt(MtType::Text, Some("Come back"), json!({}))
        .request(IMEI, Some("ops@example.com"))
        .unwrap();
    assert_eq!(text.path, "Messaging/Message");
    assert_eq!(text.body["Messages"][0]["Sender"], "ops@example.com");
    // The MT message's own sender wins over the default.
    let own = mt(
        MtType::Text,
        Some("Come back"),
        json!({"sender": "+447700900123"}),
    )
    .request(IMEI, Some("ops@example.com"))
    .unwrap();
    assert_eq!(own.body["Messages"][0]["Sender"], "+447700900123");
    // No sender anywhere: Garmin would refuse it.
    let none = mt(MtType::Text, Some("Come back"), json!({})).request(IMEI, None);
    assert!(none.is_err_and(|e| e.contains("--garmin-inbound-sender")));

    let located = mt(MtType::LocationRequest, None, json!({}))
        .request(IMEI, None)
        .unwrap();
    assert_eq!(located.path, "Location/SendLocationRequest");

    // Minutes in the MT message, seconds to Garmin; the escalation's name for it too.
    for parameters in [
        json!({"Interval": "10"}),
        json!({"Interval": 10}),
        json!({"ReportingFrequency": 10}),
    ] {
        let interval = mt(MtType::ReportingFrequency, None, parameters)
            .request(IMEI, None)
            .unwrap();
        assert_eq!(interval.body["Devices"][0]["Interval"], 600);
    }
    for parameters in [
        json!({}),
        json!({"Interval": "often"}),
        json!({"Interval": 0}),
        json!({"Interval": 1093}),
        json!({"Interval": u64::MAX}),
    ] {
        assert!(
            mt(MtType::ReportingFrequency, None, parameters.clone())
                .request(IMEI, None)
                .is_err(),
            "{parameters}"
        );
    }
    assert!(
        mt(MtType::Call, None, json!({}))
            .request(IMEI, Some("ops@example.com"))
            .is_err()
    );
}

/// A delivery body keeps its form: the id a JSON number, the rest text.
#[test]
fn the_delivery_body_keeps_its_form() {
    let body = mt(
        MtType::Text,
        Some("Come back"),
        json!({"Sender": "ops@example.com"}),
    );
    let json = serde_json::to_value(&body).unwrap();
    assert_eq!(
        json,
        json!({
            "MtMessageId": 1,
            "DeviceId": "d",
            "Type": "Text",
            "Message": "Come back",
            "Parameters": {"Sender": "ops@example.com"},
            "QueuedAt": "2026-03-01T10:00:00Z",
        })
    );
    let read: GarminMt = serde_json::from_value(json).unwrap();
    assert_eq!(read.mt_message_id, MtMessageId::new(1));
    assert_eq!(read.device_id, "d");
    assert_eq!(read.r#type, MtType::Text);
}
