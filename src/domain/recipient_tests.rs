//! Recipients' rules and their one parse: the cases the notification API tests cover.

use super::*;

fn fields_of(recipients: &[Recipient]) -> Vec<String> {
    let mut v = Validator::new();
    validate_recipients(recipients, &mut v);
    v.finish()
        .err()
        .map(|e| e.0.into_iter().map(|f| f.field).collect())
        .unwrap_or_default()
}

fn of(kind: RecipientType) -> Recipient {
    Recipient {
        r#type: Some(kind),
        ..Default::default()
    }
}

#[test]
fn each_type_allows_only_its_fields() {
    let r = Recipient {
        list_id: Some("1".into()),
        radius: Some("5".into()),
        ..of(RecipientType::DeviceList)
    };
    assert_eq!(fields_of(&[r]), ["Recipients[0].Radius"]);
    assert_eq!(
        fields_of(&[of(RecipientType::DeviceList)]),
        ["Recipients[0].ListId"]
    );
    assert!(fields_of(&[of(RecipientType::DeviceUserEmail)]).is_empty());
    let r = Recipient {
        group_id: Some("3".into()),
        ..of(RecipientType::SendLocationRequest)
    };
    assert_eq!(fields_of(&[r]), ["Recipients[0].GroupId"]);
    assert_eq!(fields_of(&[Recipient::default()]), ["Recipients[0].Type"]);
}

#[test]
fn messaging_addresses_and_numbers() {
    let ok = [
        Recipient {
            messaging_address: Some("mail:ops@example.com".into()),
            ..of(RecipientType::MessagingAddress)
        },
        Recipient {
            messaging_address: Some("sms:+447700900123".into()),
            ..of(RecipientType::MessagingAddress)
        },
        Recipient {
            radius: Some("2.5".into()),
            ..of(RecipientType::NearestDevices)
        },
    ];
    assert!(fields_of(&ok).is_empty());
    let bad = [
        Recipient {
            messaging_address: Some("ops@example.com".into()),
            ..of(RecipientType::MessagingAddress)
        },
        Recipient {
            messaging_address: Some("sms:07700".into()),
            ..of(RecipientType::MessagingAddress)
        },
        Recipient {
            radius: Some("-1".into()),
            ..of(RecipientType::NearestDevices)
        },
        Recipient {
            interval: Some("soon".into()),
            ..of(RecipientType::SendCheckInRequest)
        },
        Recipient {
            reporting_frequency: Some("0".into()),
            ..of(RecipientType::ChangeReportingFrequency)
        },
    ];
    assert_eq!(fields_of(&bad).len(), 5);
}

#[test]
fn numbers_have_a_range() {
    let interval = |v: &str| Recipient {
        interval: Some(v.into()),
        ..of(RecipientType::SendCheckInRequest)
    };
    let frequency = |v: &str| Recipient {
        reporting_frequency: Some(v.into()),
        ..of(RecipientType::ChangeReportingFrequency)
    };
    let radius = |v: &str| Recipient {
        radius: Some(v.into()),
        ..of(RecipientType::NearestDevices)
    };
    for ok in [
        interval("1"),
        interval("10080"),
        frequency("15"),
        radius("0.1"),
        radius("20000"),
    ] {
        assert!(fields_of(std::slice::from_ref(&ok)).is_empty(), "{ok:?}");
    }
    let bad = [
        (interval("1e18"), "Interval"),
        (interval("0.5"), "Interval"),
        (interval("10081"), "Interval"),
        (interval("NaN"), "Interval"),
        (frequency("1e308"), "ReportingFrequency"),
        (frequency("inf"), "ReportingFrequency"),
        (radius("0"), "Radius"),
        (radius("20000.5"), "Radius"),
    ];
    for (r, field) in bad {
        assert_eq!(
            fields_of(std::slice::from_ref(&r)),
            [format!("Recipients[0].{field}")]
        );
    }
    assert_eq!(
        ParsedRecipient::parse(&interval("90")),
        Ok(ParsedRecipient::SendCheckInRequest {
            interval_minutes: 90
        })
    );
    assert!(ParsedRecipient::parse(&interval("1e18")).is_err());
    assert!(ParsedRecipient::parse(&radius("1e9")).is_err());
}

#[test]
fn references_are_collected() {
    let mut v = Validator::new();
    let refs = validate_recipients(
        &[
            Recipient {
                list_id: Some("4".into()),
                ..of(RecipientType::TenantList)
            },
            Recipient {
                group_id: Some("x".into()),
                ..of(RecipientType::ChangeGroup)
            },
        ],
        &mut v,
    );
    assert_eq!(refs.len(), 1);
    assert_eq!(
        refs[0].target,
        RecipientTarget::List {
            id: DistributionListId::new(4),
            tenant_code: None
        }
    );
    assert!(!v.is_empty());
}

fn with(kind: RecipientType, fields: serde_json::Value) -> Recipient {
    let mut value = fields;
    value["Type"] = serde_json::json!(kind);
    serde_json::from_value(value).expect("a recipient")
}

fn parsed(kind: RecipientType, fields: serde_json::Value) -> ParsedRecipient {
    ParsedRecipient::parse(&with(kind, fields)).expect("parses")
}

/// The (field, message) pairs of a recipient that does not parse.
fn problems(kind: RecipientType, fields: serde_json::Value) -> Vec<(&'static str, String)> {
    let err = ParsedRecipient::parse(&with(kind, fields)).expect_err("does not parse");
    assert_eq!(err.kind, Some(kind));
    err.problems
        .into_iter()
        .map(|p| (p.field, p.message))
        .collect()
}

#[test]
fn each_type_parses_into_what_it_needs() {
    use ParsedRecipient as P;
    use RecipientType as R;
    use serde_json::json;
    assert_eq!(
        parsed(R::DeviceList, json!({"ListId": " 4 "})),
        P::DeviceList(DistributionListId::new(4))
    );
    assert_eq!(
        parsed(R::TenantList, json!({"ListId": "4", "TenantCode": "1001"})),
        P::TenantList {
            list_id: DistributionListId::new(4),
            tenant_code: Some("1001".parse().expect("a code")),
        }
    );
    assert_eq!(
        parsed(
            R::DeviceContact,
            json!({"ContactId": "9", "ContactDetailId": "e1"})
        ),
        P::DeviceContact {
            contact_id: ContactId::new(9),
            detail_id: Some("e1".into()),
        }
    );
    assert_eq!(
        parsed(R::TenantContact, json!({"ContactId": "9"})),
        P::TenantContact {
            contact_id: ContactId::new(9),
            tenant_code: None,
            detail_id: None,
        }
    );
    assert_eq!(
        parsed(
            R::MessagingAddress,
            json!({"MessagingAddress": "sms:+447700900123"})
        ),
        P::MessagingAddress(ContactAddress::Phone("+447700900123".into()))
    );
    assert_eq!(
        parsed(R::NearestDevices, json!({"Radius": "2.50"})),
        P::NearestDevices { radius_km: 2.5 }
    );
    assert_eq!(
        parsed(R::SendCheckInRequest, json!({"Interval": "45"})),
        P::SendCheckInRequest {
            interval_minutes: 45
        }
    );
    assert_eq!(
        parsed(
            R::ChangeReportingFrequency,
            json!({"ReportingFrequency": "1e1"})
        ),
        P::ChangeReportingFrequency { minutes: 10 }
    );
    assert_eq!(
        parsed(R::ChangeGroup, json!({"GroupId": "3"})),
        P::ChangeGroup(GroupId::new(3))
    );
    for kind in RecipientType::ALL {
        let fieldless = ParsedRecipient::without_fields(*kind);
        if let Some(p) = fieldless {
            assert_eq!(p.kind(), *kind);
            assert_eq!(parsed(*kind, json!({})), p);
            assert_eq!(p.target(), None);
        }
    }
}

#[test]
fn each_bad_input_names_its_field() {
    use RecipientType as R;
    use serde_json::json;
    let one = |field: &'static str, message: &str| vec![(field, message.to_string())];
    assert_eq!(
        problems(R::DeviceList, json!({"ListId": "x"})),
        one("ListId", "'x' is not an id")
    );
    assert_eq!(
        problems(R::DeviceList, json!({"ListId": ""})),
        [
            (
                "ListId",
                "is required on a DeviceList recipient".to_string()
            ),
            ("ListId", "'' is not an id".to_string()),
        ]
    );
    assert_eq!(
        problems(R::TenantList, json!({"ListId": "1", "TenantCode": "acme"})),
        one("TenantCode", "'acme' is no TenantCode")
    );
    assert_eq!(
        problems(
            R::DeviceContact,
            json!({"ContactId": "1", "TenantCode": "1001"})
        ),
        one("TenantCode", "is not allowed on a DeviceContact recipient")
    );
    assert_eq!(
        problems(R::TenantContact, json!({})),
        one("ContactId", "is required on a TenantContact recipient")
    );
    assert_eq!(
        problems(
            R::MessagingAddress,
            json!({"MessagingAddress": "ops@example.com"})
        )[0]
        .0,
        "MessagingAddress"
    );
    assert_eq!(
        problems(R::NearestDevices, json!({"Radius": "0"})),
        one(
            "Radius",
            "must be a number of kilometres above 0 and at most 20000"
        )
    );
    for bad in ["0.5", "10081", "NaN", "soon"] {
        assert_eq!(
            problems(R::SendCheckInRequest, json!({"Interval": bad})),
            one("Interval", "must be a number of minutes from 1 to 10080")
        );
    }
    assert_eq!(
        problems(
            R::ChangeReportingFrequency,
            json!({"ReportingFrequency": "inf"})
        )[0]
        .0,
        "ReportingFrequency"
    );
    assert_eq!(
        problems(R::ChangeGroup, json!({"GroupId": "g"})),
        one("GroupId", "'g' is not an id")
    );
    assert_eq!(
        problems(R::SendTextMessage, json!({"Interval": "5"})),
        one("Interval", "is not allowed on a SendTextMessage recipient")
    );
    let untyped = ParsedRecipient::parse(&Recipient::default()).expect_err("no type");
    assert_eq!(untyped.kind, None);
    assert_eq!(untyped.problems[0].field, "Type");
}
