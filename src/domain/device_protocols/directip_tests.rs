use super::*;
use crate::domain::device_protocols::DeviceKey;

const IMEI: &str = "300234063904190";
/// 2026-03-01T10:00:00Z
const SESSION_TIME: u32 = 1_772_359_200;

fn element(iei: u8, data: &[u8]) -> Vec<u8> {
    let mut e = vec![iei];
    e.extend_from_slice(&u16::try_from(data.len()).unwrap().to_be_bytes());
    e.extend_from_slice(data);
    e
}

fn header_data(status: u8, momsn: u16) -> Vec<u8> {
    let mut h = 0x1234_5678u32.to_be_bytes().to_vec();
    h.extend_from_slice(IMEI.as_bytes());
    h.push(status);
    h.extend_from_slice(&momsn.to_be_bytes());
    h.extend_from_slice(&7u16.to_be_bytes());
    h.extend_from_slice(&SESSION_TIME.to_be_bytes());
    h
}

fn location_data(flags: u8, lat: (u8, u16), lon: (u8, u16), cep_km: u32) -> Vec<u8> {
    let mut l = vec![flags, lat.0];
    l.extend_from_slice(&lat.1.to_be_bytes());
    l.push(lon.0);
    l.extend_from_slice(&lon.1.to_be_bytes());
    l.extend_from_slice(&cep_km.to_be_bytes());
    l
}

fn message(elements: &[Vec<u8>]) -> Vec<u8> {
    let body: Vec<u8> = elements.concat();
    let mut m = vec![PROTOCOL_REVISION];
    m.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    m.extend_from_slice(&body);
    m
}

fn header(status: u8, momsn: u16) -> Vec<u8> {
    element(IEI_MO_HEADER, &header_data(status, momsn))
}

/// 51°30.042' N, 0°7.476' W (Westminster), CEP 3 km.
fn westminster() -> Vec<u8> {
    element(
        IEI_MO_LOCATION,
        &location_data(WEST, (51, 30_042), (0, 7_476), 3),
    )
}

/// A header-only message written out byte by byte, as the gateway sends it.
const HEADER_ONLY: [u8; 34] = [
    0x01, 0x00, 0x1f, // revision 1, 31 bytes follow
    0x01, 0x00, 0x1c, // MO header, 28 bytes
    0x12, 0x34, 0x56, 0x78, // CDR reference
    b'3', b'0', b'0', b'2', b'3', b'4', b'0', b'6', b'3', b'9', b'0', b'4', b'1', b'9', b'0',
    0x00, // session status: success
    0x00, 0x2a, // MOMSN 42
    0x00, 0x07, // MTMSN 7
    0x69, 0xa4, 0x0e, 0x20, // 1772359200
];

#[test]
fn header_only() {
    assert_eq!(HEADER_ONLY.to_vec(), message(&[header(0, 42)]));
    let m = parse_message(&HEADER_ONLY).unwrap();
    assert_eq!(
        m.header,
        MoHeader {
            cdr_reference: 0x1234_5678,
            imei: IMEI.into(),
            session_status: 0,
            momsn: 42,
            mtmsn: 7,
            session_time: "2026-03-01T10:00:00Z".parse().unwrap(),
        }
    );
    let report = m.report();
    assert_eq!(report.device.id, IMEI);
    assert_eq!(
        report.device.keys,
        [
            DeviceKey::IridiumImei,
            DeviceKey::DeviceId,
            DeviceKey::SecondaryDeviceId
        ]
    );
    let msg = report.message;
    assert_eq!(msg.message_type.as_deref(), Some("MailCheck"));
    assert_eq!(msg.sequence_number, Some(42));
    assert_eq!(
        msg.sent_from_device,
        Some("2026-03-01T10:00:00Z".parse().unwrap())
    );
    assert_eq!((msg.position, msg.file, msg.message), (None, None, None));
    let props: Vec<(&str, &str)> = msg
        .properties
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        props,
        [
            ("cdrReference", "305419896"),
            ("momsn", "42"),
            ("mtmsn", "7"),
            ("sessionStatus", "0"),
        ]
    );
}

#[test]
fn a_check_in_word_is_a_check_in() {
    for word in [&b"CHECKIN"[..], b"check in", b" Check-In ", b"ok\0"] {
        let bytes = message(&[header(0, 43), element(IEI_MO_PAYLOAD, word)]);
        let msg = parse_report(&bytes).unwrap().message;
        assert_eq!(msg.message_type.as_deref(), Some("CheckIn"), "{word:?}");
    }
    let bytes = message(&[header(0, 43), element(IEI_MO_PAYLOAD, b"ok, leaving now")]);
    let msg = parse_report(&bytes).unwrap().message;
    assert_eq!(msg.message_type.as_deref(), Some("FreeText"));
}

#[test]
fn header_and_text_payload() {
    let bytes = message(&[
        header(0, 43),
        element(IEI_MO_PAYLOAD, b"Need help at gate 3\0\0"),
    ]);
    let msg = parse_report(&bytes).unwrap().message;
    assert_eq!(msg.message_type.as_deref(), Some("FreeText"));
    assert_eq!(msg.message.as_deref(), Some("Need help at gate 3"));
    assert_eq!(
        msg.file.as_deref(),
        Some("TmVlZCBoZWxwIGF0IGdhdGUgMwAA"),
        "the payload is kept whole"
    );
    assert_eq!(msg.mime_type.as_deref(), Some("application/octet-stream"));
    assert_eq!(msg.filename.as_deref(), Some("300234063904190-43.sbd"));
    assert_eq!(msg.position, None);
}

#[test]
fn header_location_and_binary_payload() {
    let bytes = message(&[
        header(0, 44),
        westminster(),
        element(IEI_MO_PAYLOAD, &[0x00, 0x01, 0xff, 0x7f]),
    ]);
    let m = parse_message(&bytes).unwrap();
    assert_eq!(
        m.location,
        Some(MoLocation {
            latitude: 51.5007,
            longitude: -0.1246,
            cep_radius_km: 3
        })
    );
    let msg = m.report().message;
    assert_eq!(msg.message_type.as_deref(), Some("BinaryMessage"));
    assert_eq!(msg.message, None, "binary is not text");
    assert_eq!(msg.file.as_deref(), Some("AAH/fw=="));
    let p = msg.position.unwrap();
    assert_eq!((p.latitude, p.longitude), (Some(51.5007), Some(-0.1246)));
    assert_eq!(p.accuracy.as_deref(), Some("3000"), "CEP radius in metres");
    assert_eq!(p.location_source.as_deref(), Some("Iridium"));
    assert_eq!(msg.properties["cepRadiusKm"], "3");
}

#[test]
fn location_hemispheres_and_order_of_elements() {
    // 33°52.128' S, 151°12.558' E (Sydney), location after the payload.
    let sydney = element(
        IEI_MO_LOCATION,
        &location_data(SOUTH, (33, 52_128), (151, 12_558), 10),
    );
    let msg = parse_report(&message(&[header(0, 1), element(0x02, b"ok"), sydney]))
        .unwrap()
        .message;
    let p = msg.position.unwrap();
    assert_eq!((p.latitude, p.longitude), (Some(-33.8688), Some(151.2093)));
    let both = element(
        IEI_MO_LOCATION,
        &location_data(SOUTH | WEST, (0, 30_000), (179, 59_999), 1),
    );
    let p = parse_message(&message(&[header(0, 1), both]))
        .unwrap()
        .location
        .unwrap();
    assert_eq!(
        (p.latitude, p.longitude),
        (-0.5, -180.0),
        "rounded to 4 decimals"
    );
    let msg = parse_report(&message(&[header(0, 2), westminster()]))
        .unwrap()
        .message;
    assert_eq!(msg.message_type.as_deref(), Some("AutomaticPositionReport"));
}

#[test]
fn session_status() {
    for ok in [0, 1] {
        assert!(parse_message(&message(&[header(ok, 1), westminster()])).is_ok());
    }
    // Success with an unacceptable location: stored without it.
    let m = parse_message(&message(&[header(2, 1), westminster()])).unwrap();
    assert_eq!(m.location, None);
    for failed in [10, 11, 12, 13, 14, 15, 3, 255] {
        let err = parse_message(&message(&[header(failed, 1), westminster()])).unwrap_err();
        assert!(
            matches!(err, DirectIpError::SessionFailed { status, .. } if status == failed),
            "{failed}: {err}"
        );
    }
    assert_eq!(
        parse_message(&message(&[header(13, 1)]))
            .unwrap_err()
            .to_string(),
        "the session failed (status 13: the RF link was lost)"
    );
}

#[test]
fn missing_header() {
    assert_eq!(
        parse_message(&message(&[element(IEI_MO_PAYLOAD, b"hi"), westminster()])),
        Err(DirectIpError::MissingHeader)
    );
    assert_eq!(
        parse_message(&message(&[])),
        Err(DirectIpError::MissingHeader)
    );
}

#[test]
fn truncated_and_disagreeing_lengths() {
    let whole = message(&[header(0, 1), element(IEI_MO_PAYLOAD, b"hello")]);
    for cut in [0, 1, 2, 10, whole.len() - 1] {
        let err = parse_message(&whole[..cut]).unwrap_err();
        assert!(
            matches!(err, DirectIpError::Truncated { got, .. } if got == cut),
            "{cut}: {err}"
        );
    }
    let mut longer = whole.clone();
    longer.push(0);
    assert_eq!(
        parse_message(&longer),
        Err(DirectIpError::LengthMismatch {
            expected: whole.len(),
            got: whole.len() + 1
        })
    );
    // An element longer than what is left of the message.
    let mut overrun = message(&[header(0, 1), element(IEI_MO_PAYLOAD, b"hello")]);
    let payload_length_at = 3 + 31 + 1;
    overrun[payload_length_at + 1] = 9;
    assert_eq!(
        parse_message(&overrun),
        Err(DirectIpError::ElementTruncated {
            iei: IEI_MO_PAYLOAD,
            offset: 34
        })
    );
    // Two bytes left: not even an element's IEI and length.
    let mut short = message(&[header(0, 1)]);
    short.extend_from_slice(&[0x02, 0x00]);
    short[2] += 2;
    assert_eq!(
        parse_message(&short),
        Err(DirectIpError::ElementTruncated {
            iei: IEI_MO_PAYLOAD,
            offset: 34
        })
    );
    // Fixed-size elements of the wrong size.
    let mut long_header = header_data(0, 1);
    long_header.push(0);
    assert_eq!(
        parse_message(&message(&[element(IEI_MO_HEADER, &long_header)])),
        Err(DirectIpError::ElementLength {
            iei: IEI_MO_HEADER,
            expected: 28,
            got: 29
        })
    );
    assert_eq!(
        parse_message(&message(&[
            header(0, 1),
            element(IEI_MO_LOCATION, &[0; 10])
        ])),
        Err(DirectIpError::ElementLength {
            iei: IEI_MO_LOCATION,
            expected: 11,
            got: 10
        })
    );
}

#[test]
fn oversize() {
    let biggest = message(&[header(0, 1), westminster(), element(0x02, &[b'a'; 1960])]);
    assert!(parse_message(&biggest).is_ok());
    let too_big = message(&[header(0, 1), element(0x02, &[b'a'; 1961])]);
    assert_eq!(
        parse_message(&too_big),
        Err(DirectIpError::PayloadTooLong(1961))
    );
    let mut overall = vec![1];
    overall.extend_from_slice(&u16::try_from(MAX_OVERALL_LENGTH + 1).unwrap().to_be_bytes());
    assert_eq!(
        parse_message(&overall),
        Err(DirectIpError::TooLong(MAX_OVERALL_LENGTH + 1))
    );
    assert_eq!(MAX_OVERALL_LENGTH, 2012);
}

#[test]
fn other_bad_input() {
    let mut wrong_revision = HEADER_ONLY;
    wrong_revision[0] = 2;
    assert_eq!(
        parse_message(&wrong_revision),
        Err(DirectIpError::UnsupportedRevision(2))
    );
    assert_eq!(
        parse_message(&message(&[header(0, 1), header(0, 2)])),
        Err(DirectIpError::DuplicateElement(IEI_MO_HEADER))
    );
    assert_eq!(
        parse_message(&message(&[header(0, 1), element(0x02, b"")])),
        Err(DirectIpError::EmptyPayload)
    );
    let mut bad_imei = header_data(0, 1);
    bad_imei[5] = b'x';
    assert_eq!(
        parse_message(&message(&[element(IEI_MO_HEADER, &bad_imei)])),
        Err(DirectIpError::BadImei)
    );
    for (data, what) in [
        (location_data(0, (91, 0), (0, 0), 1), "latitude"),
        (location_data(0, (90, 1), (0, 0), 1), "latitude"),
        (location_data(0, (10, 60_000), (0, 0), 1), "latitude"),
        (location_data(0, (10, 0), (181, 0), 1), "longitude"),
        (location_data(0x04, (10, 0), (1, 0), 1), "format code"),
    ] {
        assert_eq!(
            parse_message(&message(&[header(0, 1), element(IEI_MO_LOCATION, &data)])),
            Err(DirectIpError::BadLocation(what))
        );
    }
    // An unknown element is skipped.
    let m = parse_message(&message(&[
        header(0, 1),
        element(0x7f, b"future"),
        westminster(),
    ]));
    assert!(m.unwrap().location.is_some());
}

#[test]
fn frames_as_bytes_arrive() {
    let whole = message(&[header(0, 1), westminster(), element(0x02, b"hi")]);
    assert_eq!(frame_status(&[]), Frame::Incomplete { needed: 3 });
    assert_eq!(frame_status(&whole[..1]), Frame::Incomplete { needed: 2 });
    assert_eq!(frame_status(&whole[..2]), Frame::Incomplete { needed: 1 });
    assert_eq!(
        frame_status(&whole[..3]),
        Frame::Incomplete {
            needed: whole.len() - 3
        }
    );
    assert_eq!(
        frame_status(&whole[..whole.len() - 1]),
        Frame::Incomplete { needed: 1 }
    );
    assert_eq!(
        frame_status(&whole),
        Frame::Complete {
            length: whole.len()
        }
    );
    let mut more = whole.clone();
    more.extend_from_slice(&[1, 2, 3]);
    assert_eq!(
        frame_status(&more),
        Frame::Complete {
            length: whole.len()
        }
    );
    assert_eq!(
        frame_status(&[9]),
        Frame::Invalid(DirectIpError::UnsupportedRevision(9))
    );
    assert_eq!(
        frame_status(&[1, 0xff, 0xff]),
        Frame::Invalid(DirectIpError::TooLong(65535))
    );
}

#[test]
fn confirmations_and_dedupe_identity() {
    assert_eq!(confirmation(true), [1, 0, 4, 5, 0, 1, 1]);
    assert_eq!(confirmation(false), [1, 0, 4, 5, 0, 1, 0]);
    let first = parse_report(&message(&[header(0, 65_535)]))
        .unwrap()
        .message;
    let resent = parse_report(&message(&[header(0, 65_535)]))
        .unwrap()
        .message;
    assert_eq!(
        (first.sequence_number, first.sent_from_device),
        (resent.sequence_number, resent.sent_from_device)
    );
    assert_eq!(first.sequence_number, Some(65_535));
}
