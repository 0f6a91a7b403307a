//! `plan_targets` against facts given by hand: each recipient type, and the lookups it
//! asks for one at a time.

use super::*;
use crate::domain::address_book::ContactEntry;
use crate::domain::ids::{ContactId, DistributionListId};

const OWN: &str = "300234010753370";

fn recipient(value: Value) -> Recipient {
    serde_json::from_value(value).expect("a recipient")
}

fn device() -> MatchedDevice<'static> {
    MatchedDevice {
        device_id: OWN,
        group_id: Some(7),
        user_id: Some(1),
        position: Some((51.5, -0.12)),
    }
}

fn user(username: &str, manager: Option<i64>, profile: Value) -> UserContact {
    UserContact {
        username: username.into(),
        manager_user_id: manager,
        profile: serde_json::from_value(profile).expect("a profile"),
    }
}

fn contact(name: &str, entries: &[(&str, &str)]) -> Contact {
    Contact {
        contact_id: None,
        contact_name: name.into(),
        is_escalation_contact: false,
        applies_to_subtenants: false,
        sync_to_devices: None,
        culture_name: None,
        contact_entries: entries
            .iter()
            .map(|(id, address)| ContactEntry {
                entry_id: Some(id.to_string()),
                address: address.to_string(),
                last_updated: None,
            })
            .collect(),
        etag: None,
    }
}

fn email(a: &str) -> Target {
    Target::Email(a.into())
}

fn sms(a: &str) -> Target {
    Target::Sms(a.into())
}

fn nobody(channel: Channel, why: &str) -> Target {
    Target::Nobody {
        channel,
        why: why.into(),
    }
}

fn text_to(device_id: &str) -> Target {
    Target::Device {
        device_id: device_id.into(),
        kind: MtType::Text,
        parameters: Map::new(),
    }
}

/// Answers each lookup from `world` until the plan is complete, as the ingest
/// transaction does; returns the resolution and the lookups asked, in order.
fn resolve(
    recipients: &[Value],
    device: &MatchedDevice<'_>,
    world: &RecipientFacts,
) -> (Resolution, Vec<Lookup>) {
    let recipients: Vec<Recipient> = recipients.iter().cloned().map(recipient).collect();
    let mut facts = RecipientFacts::default();
    let mut asked = Vec::new();
    loop {
        match plan_targets(&recipients, device, &facts) {
            Ok(resolution) => return (resolution, asked),
            Err(lookup) => {
                assert!(!asked.contains(&lookup), "asked twice for {lookup:?}");
                asked.push(lookup);
                match lookup {
                    Lookup::List(id) => {
                        let list = world.lists.get(&id).cloned().flatten();
                        facts.lists.insert(id, list);
                    }
                    Lookup::Contact(id) => {
                        let c = world.contacts.get(&id).cloned().flatten();
                        facts.contacts.insert(id, c);
                    }
                    Lookup::User(id) => {
                        let u = world.users.get(&id).cloned().flatten();
                        facts.users.insert(id, u);
                    }
                    Lookup::GroupDevices(id) => {
                        let d = world.group_devices.get(&id).cloned().unwrap_or_default();
                        facts.group_devices.insert(id, d);
                    }
                    Lookup::DevicesNear { radius_km } => {
                        let key = radius_km.to_bits();
                        let d = world.devices_near.get(&key).cloned().unwrap_or_default();
                        facts.devices_near.insert(key, d);
                    }
                }
            }
        }
    }
}

fn targets(recipients: &[Value], world: &RecipientFacts) -> Vec<Target> {
    resolve(recipients, &device(), world).0.targets
}

#[test]
fn messaging_addresses_resolve_without_lookups() {
    let (resolution, asked) = resolve(
        &[
            json!({"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}),
            json!({"Type": "MessagingAddress", "MessagingAddress": "sms:+447700900123"}),
            json!({"Type": "MessagingAddress", "MessagingAddress": "pigeon:loft 3"}),
        ],
        &device(),
        &RecipientFacts::default(),
    );
    assert!(asked.is_empty());
    assert_eq!(
        resolution.targets,
        [
            email("ops@example.com"),
            sms("+447700900123"),
            nobody(Channel::Email, "invalid messaging address"),
        ]
    );
}

#[test]
fn lists_expand_in_order_once_each_and_a_missing_one_is_recorded() {
    let mut world = RecipientFacts::default();
    let address = |a: &str| recipient(json!({"Type": "MessagingAddress", "MessagingAddress": a}));
    let names = |id: &str| recipient(json!({"Type": "TenantList", "ListId": id}));
    // List 1 names list 2, which names list 1 back.
    world.lists.insert(
        DistributionListId::new(1),
        Some(vec![
            address("mail:a@example.com"),
            names("2"),
            address("mail:c@example.com"),
        ]),
    );
    world.lists.insert(
        DistributionListId::new(2),
        Some(vec![address("mail:b@example.com"), names("1")]),
    );
    let (resolution, asked) = resolve(
        &[
            json!({"Type": "DeviceList", "ListId": "1"}),
            json!({"Type": "DeviceList", "ListId": "9"}),
            json!({"Type": "MessagingAddress", "MessagingAddress": "mail:a@example.com"}),
        ],
        &device(),
        &world,
    );
    let list = |id| Lookup::List(DistributionListId::new(id));
    assert_eq!(asked, [list(1), list(2), list(9)]);
    assert_eq!(
        resolution.targets,
        [
            email("a@example.com"),
            email("b@example.com"),
            email("c@example.com"),
            nobody(Channel::Email, "list 9 no longer exists"),
        ],
        "depth first, duplicates dropped"
    );
}

#[test]
fn contacts_resolve_every_entry_or_the_one_named() {
    let mut world = RecipientFacts::default();
    world.contacts.insert(
        ContactId::new(3),
        Some(contact(
            "Jane",
            &[("1", "jane@example.com"), ("2", "+447700900123")],
        )),
    );
    world.contacts.insert(
        ContactId::new(4),
        Some(contact("Postal", &[("1", "1 High Street")])),
    );
    assert_eq!(
        targets(
            &[json!({"Type": "TenantContact", "ContactId": "3"})],
            &world
        ),
        [email("jane@example.com"), sms("+447700900123")]
    );
    assert_eq!(
        targets(
            &[json!({"Type": "DeviceContact", "ContactId": "3", "ContactDetailId": "2"})],
            &world
        ),
        [sms("+447700900123")]
    );
    assert_eq!(
        targets(
            &[
                json!({"Type": "DeviceContact", "ContactId": "4"}),
                json!({"Type": "DeviceContact", "ContactId": "5"}),
            ],
            &world
        ),
        [
            nobody(Channel::Email, "contact Postal has no usable entry"),
            nobody(Channel::Email, "contact 5 no longer exists"),
        ]
    );
}

#[test]
fn the_device_user_is_looked_up_once_and_without_one_nothing_is_sent() {
    let mut world = RecipientFacts::default();
    let profile = json!({"DaytimePhone": " ", "CellPhone": "", "EveningPhone": "+15005550006",
        "EmergencyContactAddress": "1 High Street", "EmergencyContactTelephoneNumber": "+15005550007",
        "EmergencyContactAddress2": "kin@example.com"});
    world
        .users
        .insert(1, Some(user("worker@example.com", None, profile)));
    let all = [
        json!({"Type": "DeviceUserEmail"}),
        json!({"Type": "DeviceUserSms"}),
        json!({"Type": "DeviceUserCall"}),
        json!({"Type": "DeviceUserEmergencyContacts"}),
        json!({"Type": "DeviceUserEmergencyContactsCall"}),
        json!({"Type": "DeviceUserEmergencyContactsEmail"}),
    ];
    let (resolution, asked) = resolve(&all, &device(), &world);
    assert_eq!(asked, [Lookup::User(1)]);
    assert_eq!(
        resolution.targets,
        [
            email("worker@example.com"),
            sms("+15005550006"),
            Target::Voice("+15005550006".into()),
            sms("+15005550007"),
            Target::Voice("+15005550007".into()),
            email("kin@example.com"),
        ]
    );
    let no_user = MatchedDevice {
        user_id: None,
        ..device()
    };
    let (resolution, asked) = resolve(&all[1..3], &no_user, &world);
    assert!(asked.is_empty());
    assert_eq!(
        resolution.targets,
        [
            nobody(Channel::Sms, "the device has no user"),
            nobody(Channel::Voice, "the device has no user"),
        ]
    );
}

#[test]
fn a_user_without_an_address_for_the_channel_is_recorded() {
    let mut world = RecipientFacts::default();
    world
        .users
        .insert(1, Some(user("worker@example.com", None, json!({}))));
    assert_eq!(
        targets(
            &[json!({"Type": "DeviceUserEmergencyContactsEmail"})],
            &world
        ),
        [nobody(
            Channel::Email,
            "worker@example.com has no address for this channel"
        )]
    );
}

#[test]
fn managers_are_the_device_users_manager() {
    let mut world = RecipientFacts::default();
    world
        .users
        .insert(1, Some(user("worker@example.com", Some(2), json!({}))));
    world.users.insert(
        2,
        Some(user(
            "boss@example.com",
            None,
            json!({"CellPhone": "+15005550008"}),
        )),
    );
    let (resolution, asked) = resolve(
        &[
            json!({"Type": "DeviceUserManagerEmail"}),
            json!({"Type": "DeviceUserManagerCall"}),
        ],
        &device(),
        &world,
    );
    assert_eq!(asked, [Lookup::User(1), Lookup::User(2)]);
    assert_eq!(
        resolution.targets,
        [
            email("boss@example.com"),
            Target::Voice("+15005550008".into())
        ]
    );
    world
        .users
        .insert(1, Some(user("worker@example.com", None, json!({}))));
    assert_eq!(
        targets(&[json!({"Type": "DeviceUserManagerSms"})], &world),
        [nobody(Channel::Sms, "the device's user has no manager")]
    );
}

#[test]
fn other_devices_of_the_group_get_a_text_but_not_the_device_itself() {
    let mut world = RecipientFacts::default();
    world
        .group_devices
        .insert(7, vec!["A".into(), OWN.into(), "B".into()]);
    let recipients = [json!({"Type": "OtherDevicesInGroup"})];
    assert_eq!(targets(&recipients, &world), [text_to("A"), text_to("B")]);
    let no_group = MatchedDevice {
        group_id: None,
        ..device()
    };
    assert_eq!(
        resolve(&recipients, &no_group, &world).0.targets,
        [nobody(Channel::Mt, "the device is in no group")]
    );
}

#[test]
fn nearest_devices_are_those_within_the_radius() {
    let mut world = RecipientFacts::default();
    let at = |id: &str, lat: f64, lon: f64| DevicePosition {
        device_id: id.into(),
        lat,
        lon,
    };
    // 0.01° of latitude is about 1.1 km; the box's corner is farther than 2.5 km.
    world.devices_near.insert(
        2.5f64.to_bits(),
        vec![
            at(OWN, 51.5, -0.12),
            at("near", 51.51, -0.12),
            at("corner", 51.522, -0.155),
        ],
    );
    let recipients = [json!({"Type": "NearestDevices", "Radius": "2.5"})];
    let (resolution, asked) = resolve(&recipients, &device(), &world);
    assert_eq!(asked, [Lookup::DevicesNear { radius_km: 2.5 }]);
    assert_eq!(resolution.targets, [text_to("near")]);
    let nowhere = MatchedDevice {
        position: None,
        ..device()
    };
    assert_eq!(
        resolve(&recipients, &nowhere, &world).0.targets,
        [nobody(Channel::Mt, "the device's position is unknown")]
    );
    let ((lat_min, lat_max), (lon_min, lon_max)) = search_box((51.5, -0.12), 2.5);
    assert!(lat_min < 51.48 && lat_max > 51.52 && lon_min < -0.155 && lon_max > -0.085);
}

#[test]
fn commands_go_to_the_device_with_what_they_change() {
    let (resolution, _) = resolve(
        &[
            json!({"Type": "SendCheckInRequest", "Interval": "45"}),
            json!({"Type": "ChangeReportingFrequency", "ReportingFrequency": "10"}),
            json!({"Type": "StopCheckInSchedule"}),
            json!({"Type": "StartCheckInSchedule"}),
            json!({"Type": "SendLocationRequest"}),
            json!({"Type": "DeviceCall"}),
            json!({"Type": "ChangeGroup", "GroupId": "12"}),
        ],
        &device(),
        &RecipientFacts::default(),
    );
    let command = |kind: MtType, parameters: Value| Target::Device {
        device_id: OWN.into(),
        kind,
        parameters: parameters.as_object().cloned().unwrap_or_default(),
    };
    assert_eq!(
        resolution.targets,
        [
            command(MtType::CheckInRequest, json!({"Interval": 45.0})),
            Target::CheckInInterval(45),
            command(
                MtType::ReportingFrequency,
                json!({"ReportingFrequency": 10.0})
            ),
            command(MtType::StopCheckInSchedule, json!({})),
            Target::PauseCheckIns(true),
            command(MtType::StartCheckInSchedule, json!({})),
            Target::PauseCheckIns(false),
            command(MtType::LocationRequest, json!({})),
            command(MtType::Call, json!({})),
            Target::MoveToGroup(12),
        ]
    );
}

#[test]
fn a_stored_number_out_of_range_skips_its_recipient_only() {
    let (resolution, asked) = resolve(
        &[
            json!({"Type": "SendCheckInRequest", "Interval": "0"}),
            json!({"Type": "NearestDevices", "Radius": "-1"}),
            json!({"Type": "SendTextMessage"}),
        ],
        &device(),
        &RecipientFacts::default(),
    );
    assert!(asked.is_empty());
    assert_eq!(
        resolution.targets,
        [Target::Device {
            device_id: OWN.into(),
            kind: MtType::Text,
            parameters: Map::new(),
        }]
    );
    let skipped: Vec<RecipientType> = resolution.skipped.iter().map(|s| s.kind).collect();
    assert_eq!(
        skipped,
        [
            RecipientType::SendCheckInRequest,
            RecipientType::NearestDevices
        ]
    );
}
