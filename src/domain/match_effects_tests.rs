//! `plan_match` without a database: the cases the API tests of alerts, deliveries,
//! check-ins and webhook events cover, as effects.

use super::*;
use crate::domain::events::EventFacts;
use crate::domain::mo_message::GeofenceRef;
use crate::domain::profile::UserProfile;

const DEVICE: &str = "300234010753370";

fn at(text: &str) -> Timestamp {
    text.parse().expect("a timestamp")
}

fn notification(name: &str, raise_alert: bool) -> EventNotification {
    EventNotification {
        notification_id: None,
        notification_name: name.into(),
        notification_text: None,
        notification_disabled: false,
        recipients: Vec::new(),
        events_expression: "Emergency".into(),
        time_zone_id: None,
        raise_alert,
        severity: None,
        device_type: None,
        devices: None,
        escalation_policy_id: None,
        etag: None,
    }
}

fn van() -> Device {
    Device {
        friendly_name: Some("Van 3".into()),
        ..crate::domain::device::bare_device(DEVICE)
    }
}

fn sos_message() -> MoMessage {
    MoMessage {
        message_type: Some("ManualPositionReport".into()),
        emergency_state: Some(crate::domain::mo_message::EmergencyState::Active),
        ..Default::default()
    }
}

fn emergency_in_depot() -> Observation {
    Observation {
        facts: EventFacts {
            emergency: true,
            message_type: Some("ManualPositionReport".into()),
            ..Default::default()
        },
        late: false,
        containing: vec![GeofenceRef {
            geofence_id: "1".into(),
            geofence_name: "Depot".into(),
        }],
    }
}

struct Case {
    notification: EventNotification,
    severity: Severity,
    device: Device,
    message: MoMessage,
    observation: Observation,
}

impl Case {
    fn sos() -> Case {
        Case {
            notification: notification("SOS", true),
            severity: Severity::High,
            device: van(),
            message: sos_message(),
            observation: emergency_in_depot(),
        }
    }

    fn matched(&self) -> Matched<'_> {
        Matched {
            notification_id: NotificationId::new(4),
            notification: &self.notification,
            severity: self.severity,
            device: &self.device,
            message: Some((MoMessageId::new(17), &self.message)),
            time: at("2026-03-01T10:00:00Z"),
            observation: &self.observation,
            position: Some((51.5, -0.12)),
        }
    }
}

fn now() -> Timestamp {
    at("2026-03-01T10:00:02Z")
}

fn circumstances(targets: Vec<Target>) -> Circumstances<'static> {
    Circumstances {
        targets,
        tenant_zone: TimeZone::UTC,
        device_user: None,
        tenant_webhooks: false,
        channels: ServerChannels {
            escalation_after: Some(SignedDuration::from_secs(300)),
            ..Default::default()
        },
        now: now(),
        tenant_units: ReaderUnits::default(),
        readers: Vec::new(),
    }
}

fn deliveries(effects: &[Effect]) -> Vec<&PlannedDelivery> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Deliver(d) | Effect::QueueMt { delivery: d, .. } => Some(d),
            _ => None,
        })
        .collect()
}

#[test]
fn an_sos_raises_an_alert_that_escalates_and_writes_its_deliveries() {
    let case = Case::sos();
    let targets = vec![
        Target::Email("ops@example.com".into()),
        Target::Device {
            device_id: DEVICE.into(),
            kind: MtType::Text,
            parameters: Map::new(),
        },
    ];
    let effects = plan_match(&case.matched(), &circumstances(targets));
    assert_eq!(
        effects[0],
        Effect::RaiseOrJoinAlert(AlertRaise {
            at: now(),
            severity: Severity::High,
            notification_name: "SOS".into(),
            position: Some((51.5, -0.12)),
            geofences: vec!["Depot".into()],
            message_id: Some(MoMessageId::new(17)),
            late: false,
            escalate_at: Some(at("2026-03-01T10:05:02Z")),
        })
    );
    let Effect::Deliver(email) = &effects[1] else {
        panic!("{effects:?}")
    };
    assert_eq!(email.channel, Channel::Email);
    assert_eq!(email.target.as_deref(), Some("ops@example.com"));
    // No SMTP server is configured: recorded, never dropped.
    assert_eq!(email.status, DeliveryStatus::NotConfigured);
    assert_eq!(email.subject.as_deref(), Some("[High] SOS — Van 3"));
    for part in [
        "mlat=51.50000&mlon=-0.12000",
        "Notification: SOS",
        "Event: Emergency",
        "Device: Van 3 (300234010753370)",
        "Geofences: Depot",
        "2026-03-01T10:00:00Z",
    ] {
        assert!(email.body.contains(part), "{part}: {}", email.body);
    }
    let Effect::QueueMt {
        device_id,
        message,
        delivery,
    } = &effects[2]
    else {
        panic!("{effects:?}")
    };
    // Queued for the device in the same transaction: the delivery is Sent.
    assert_eq!(device_id, DEVICE);
    assert_eq!(message.r#type, MtType::Text);
    assert_eq!(message.message.as_deref(), Some("SOS: Emergency (Van 3)"));
    assert_eq!(delivery.channel, Channel::Mt);
    assert_eq!(delivery.status, DeliveryStatus::Sent);
    assert_eq!(delivery.sent_at, Some(now()));
    assert_eq!(delivery.body, "SOS: Emergency (Van 3)");
    assert_eq!(effects.len(), 3);
}

#[test]
fn configured_channels_queue_pending_deliveries_for_the_worker() {
    let case = Case::sos();
    let mut c = circumstances(vec![
        Target::Email("ops@example.com".into()),
        Target::Sms("+15005550006".into()),
        Target::Voice("+15005550006".into()),
    ]);
    c.channels.email = true;
    c.channels.sms = true;
    let effects = plan_match(&case.matched(), &c);
    let planned = deliveries(&effects);
    let statuses: Vec<DeliveryStatus> = planned.iter().map(|d| d.status).collect();
    use DeliveryStatus::{NotConfigured, Pending};
    assert_eq!(statuses, [Pending, Pending, NotConfigured]);
    assert!(planned.iter().all(|d| d.next_attempt_at == Some(now())));
    // Only the e-mail has a subject; SMS and calls say it all in their text.
    assert!(planned[1].subject.is_none() && planned[2].subject.is_none());
    assert!(
        planned[1]
            .body
            .starts_with("[High] SOS — Van 3: Emergency at 10:00 UTC")
    );
    assert!(
        planned[2]
            .body
            .starts_with("Safetrack alert. High. SOS. Device Van 3.")
    );
}

#[test]
fn a_recipient_without_an_address_is_recorded_and_no_alert_without_raise_alert() {
    let mut case = Case::sos();
    case.notification = notification("Lone worker", false);
    case.severity = Severity::Warning;
    let targets = vec![Target::Nobody {
        channel: Channel::Sms,
        why: "the device has no user".into(),
    }];
    let effects = plan_match(&case.matched(), &circumstances(targets));
    assert_eq!(
        effects,
        [Effect::Deliver(PlannedDelivery {
            channel: Channel::Sms,
            target: None,
            subject: Some("[Warning] Lone worker — Van 3".into()),
            body: "the device has no user".into(),
            status: DeliveryStatus::NoAddress,
            next_attempt_at: None,
            sent_at: None,
        })]
    );
}

#[test]
fn only_warning_and_high_alerts_escalate() {
    for (severity, escalates) in [
        (Severity::Info, false),
        (Severity::Warning, true),
        (Severity::High, true),
    ] {
        let mut case = Case::sos();
        case.severity = severity;
        let effects = plan_match(&case.matched(), &circumstances(Vec::new()));
        let [Effect::RaiseOrJoinAlert(raise)] = effects.as_slice() else {
            panic!("{effects:?}")
        };
        assert_eq!(raise.escalate_at.is_some(), escalates, "{severity:?}");
    }
    let mut never = circumstances(Vec::new());
    never.channels.escalation_after = None;
    let effects = plan_match(&Case::sos().matched(), &never);
    assert!(matches!(&effects[..], [Effect::RaiseOrJoinAlert(r)] if r.escalate_at.is_none()));
}

#[test]
fn with_webhooks_the_match_is_an_event_notification_carrying_its_alert() {
    let case = Case::sos();
    let mut c = circumstances(Vec::new());
    c.tenant_webhooks = true;
    let effects = plan_match(&case.matched(), &c);
    let [Effect::RaiseOrJoinAlert(_), Effect::Webhook(fired)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    let alert = crate::domain::alert::sample(12);
    let root = crate::domain::tenant::root_tenant_code();
    let event = fired.event(&root, Some(&alert));
    assert_eq!(event.notification_id, Some(NotificationId::new(4)));
    assert_eq!(event.device_id.as_deref(), Some(DEVICE));
    let body: Value = serde_json::from_str(&event.body).expect("JSON");
    let data = &body["Data"];
    assert_eq!(data["NotificationId"], "4");
    assert_eq!(data["Severity"], "2");
    assert_eq!(data["MessageId"], "17");
    assert_eq!(data["AlertId"], "12");
    assert_eq!(data["Alert"]["AlertId"], "12");
    assert_eq!(data["MissedCheckIn"], false);
    assert_eq!(data["Geofences"], json!(["Depot"]));
    assert_eq!(data["Latitude"], 51.5);
    // Without an alert (no RaiseAlert) the event says so.
    let data: Value = serde_json::from_str(&fired.event(&root, None).body).expect("JSON");
    assert!(data["Data"]["AlertId"].is_null() && data["Data"]["Alert"].is_null());
}

#[test]
fn commands_change_the_device_in_order() {
    let case = Case::sos();
    let targets = vec![
        Target::Device {
            device_id: DEVICE.into(),
            kind: MtType::CheckInRequest,
            parameters: json!({"Interval": 45.0})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        },
        Target::CheckInInterval(45),
        Target::PauseCheckIns(true),
        Target::MoveToGroup(12),
    ];
    let effects = plan_match(&case.matched(), &circumstances(targets));
    let Effect::QueueMt {
        message, delivery, ..
    } = &effects[1]
    else {
        panic!("{effects:?}")
    };
    assert_eq!(message.r#type, MtType::CheckInRequest);
    assert_eq!(message.parameters["Interval"], 45.0);
    assert_eq!(delivery.subject.as_deref(), Some("CheckInRequest"));
    assert_eq!(
        effects[2..],
        [
            Effect::SetCheckInInterval(45),
            Effect::PauseCheckIns(true),
            Effect::MoveToGroup(12)
        ]
    );
}

#[test]
fn a_missed_check_in_names_itself_and_has_no_message() {
    let mut case = Case::sos();
    case.observation = Observation {
        facts: EventFacts {
            missed_check_in: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let matched = Matched {
        message: None,
        ..case.matched()
    };
    let effects = plan_match(
        &matched,
        &circumstances(vec![Target::Email("o@example.com".into())]),
    );
    let Effect::RaiseOrJoinAlert(raise) = &effects[0] else {
        panic!("{effects:?}")
    };
    assert_eq!(raise.message_id, None);
    let Effect::Deliver(email) = &effects[1] else {
        panic!("{effects:?}")
    };
    assert!(
        email.body.contains("Event: MissedCheckIn"),
        "{}",
        email.body
    );
    assert!(!email.body.contains("Message type:"), "{}", email.body);
}

#[test]
fn an_emergencys_emails_list_the_device_users_emergency_contacts() {
    let case = Case::sos();
    let user = UserContact {
        username: "worker@example.com".into(),
        manager_user_id: None,
        profile: UserProfile {
            emergency_contact_name: Some("Jane Doe".into()),
            emergency_contact_telephone_number: Some("+447700900123".into()),
            emergency_contact_name2: Some(" ".into()),
            emergency_information: Some("Diabetic".into()),
            ..Default::default()
        },
    };
    let targets = vec![Target::Email("ops@example.com".into())];
    assert!(needs_device_user(&case.matched(), &targets));
    let mut c = circumstances(targets);
    c.device_user = Some(&user);
    let effects = plan_match(&case.matched(), &c);
    let Effect::Deliver(email) = &effects[1] else {
        panic!("{effects:?}")
    };
    assert!(
        email
            .body
            .contains("Emergency contacts:\n  Jane Doe, +447700900123\n"),
        "{}",
        email.body
    );
    assert!(
        email.body.contains("Emergency information: Diabetic"),
        "{}",
        email.body
    );
    // Not an emergency, or no e-mail: the user is not needed.
    assert!(!needs_device_user(
        &case.matched(),
        &[Target::Sms("+1".into())]
    ));
    let mut calm = Case::sos();
    calm.observation.facts.emergency = false;
    assert!(!needs_device_user(
        &calm.matched(),
        &[Target::Email("o@example.com".into())]
    ));
}

#[test]
fn a_match_joining_an_alert_tells_nobody_again_but_still_changes_the_device() {
    let case = Case::sos();
    let targets = vec![
        Target::Email("ops@example.com".into()),
        Target::Sms("+447700900123".into()),
        Target::Voice("+447700900123".into()),
        Target::Nobody {
            channel: Channel::Email,
            why: "no address".into(),
        },
        Target::Device {
            device_id: DEVICE.into(),
            kind: MtType::Text,
            parameters: Map::new(),
        },
        Target::MoveToGroup(7),
        Target::CheckInInterval(15),
        Target::PauseCheckIns(true),
    ];
    let mut c = circumstances(targets);
    c.tenant_webhooks = true;
    let effects = plan_match(&case.matched(), &c);
    assert_eq!(deliveries(&effects).len(), 5);
    let kept = joining(effects);
    assert!(deliveries(&kept).is_empty());
    assert!(kept.iter().all(|e| !e.notifies()));
    assert!(matches!(kept[0], Effect::RaiseOrJoinAlert(_)));
    assert!(matches!(kept[1], Effect::Webhook(_)));
    assert_eq!(
        kept[2..],
        [
            Effect::MoveToGroup(7),
            Effect::SetCheckInInterval(15),
            Effect::PauseCheckIns(true),
        ]
    );
}
