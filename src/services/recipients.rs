//! Recipient resolution: who (or what) each recipient of a matched notification is, for
//! the device that matched — looked up inside the transaction that stores the match, so
//! the deliveries it yields are written with it. All 27 `RecipientType`s (docs/decisions.md,
//! "Recipients at fire time").

use std::collections::HashSet;

use geo::{Distance, Haversine, Point};
use serde_json::{Map, Value, json};

use crate::domain::address::ContactAddress;
use crate::domain::address_book::Contact;
use crate::domain::device::Device;
use crate::domain::recipient::{Recipient, RecipientType};
use crate::domain::tenant::TenantNode;
use crate::store::{StoreResult, UserContact, WriteTx};

/// How deep lists may name lists before the rest is ignored (lists cannot name
/// themselves, but two lists can name each other).
const MAX_LIST_DEPTH: usize = 8;

/// One thing a recipient resolves to.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Email(String),
    Sms(String),
    Voice(String),
    /// An MT message for a device (`kind` is an MT `Type`).
    Device {
        device_id: String,
        kind: &'static str,
        parameters: Map<String, Value>,
    },
    /// Resolved to no address: recorded as a `NoAddress` delivery on `channel`.
    Nobody {
        channel: &'static str,
        why: String,
    },
    /// `ChangeGroup`: move the matched device.
    MoveToGroup(i64),
    /// `SendCheckInRequest`'s interval becomes the device's check-in interval.
    CheckInInterval(i64),
    /// `StopCheckInSchedule` (true) / `StartCheckInSchedule` (false).
    PauseCheckIns(bool),
}

/// What resolution needs to know about the match.
pub struct Match<'a> {
    pub node: &'a TenantNode,
    pub device: &'a Device,
    /// The matched device's position, for `NearestDevices`.
    pub position: Option<(f64, f64)>,
}

/// Resolves every recipient (lists expanded) into targets, in order, without duplicates.
pub async fn resolve_recipients(
    tx: &mut WriteTx,
    m: &Match<'_>,
    recipients: &[Recipient],
) -> StoreResult<Vec<Target>> {
    let mut targets = Vec::new();
    let mut seen_lists = HashSet::new();
    // Work list of (recipient, list depth); lists push their own recipients.
    let mut pending: Vec<(Recipient, usize)> =
        recipients.iter().rev().cloned().map(|r| (r, 0)).collect();
    let mut user_cache: Option<Option<UserContact>> = None;
    while let Some((recipient, depth)) = pending.pop() {
        let Some(kind) = recipient.r#type else {
            continue;
        };
        match kind {
            RecipientType::DeviceList | RecipientType::TenantList => {
                let Some(id) = id_of(recipient.list_id.as_deref()) else {
                    continue;
                };
                if depth >= MAX_LIST_DEPTH || !seen_lists.insert(id) {
                    continue;
                }
                match tx.visible_list(m.node, id).await? {
                    Some(list) => {
                        pending.extend(list.recipients.into_iter().rev().map(|r| (r, depth + 1)))
                    }
                    None => targets.push(nobody("Email", format!("list {id} no longer exists"))),
                }
            }
            RecipientType::DeviceContact | RecipientType::TenantContact => {
                let Some(id) = id_of(recipient.contact_id.as_deref()) else {
                    continue;
                };
                match tx.visible_contact(m.node, id).await? {
                    Some(contact) => contact_targets(
                        &contact,
                        recipient.contact_detail_id.as_deref(),
                        &mut targets,
                    ),
                    None => targets.push(nobody("Email", format!("contact {id} no longer exists"))),
                }
            }
            RecipientType::MessagingAddress => {
                match recipient
                    .messaging_address
                    .as_deref()
                    .map(ContactAddress::parse_prefixed)
                {
                    Some(Ok(address)) => targets.push(address_target(address)),
                    _ => targets.push(nobody("Email", "invalid messaging address".into())),
                }
            }
            RecipientType::DeviceUserEmail
            | RecipientType::DeviceUserSms
            | RecipientType::DeviceUserCall
            | RecipientType::DeviceUserEmergencyContacts
            | RecipientType::DeviceUserEmergencyContactsCall
            | RecipientType::DeviceUserEmergencyContactsEmail => {
                if user_cache.is_none() {
                    user_cache = Some(match m.device.user_id_number() {
                        Some(id) => tx.user_contact(id).await?,
                        None => None,
                    });
                }
                let user = user_cache.as_ref().and_then(Option::as_ref);
                user_targets(kind, user, &mut targets);
            }
            RecipientType::DeviceUserManagerEmail
            | RecipientType::DeviceUserManagerSms
            | RecipientType::DeviceUserManagerCall => {
                if user_cache.is_none() {
                    user_cache = Some(match m.device.user_id_number() {
                        Some(id) => tx.user_contact(id).await?,
                        None => None,
                    });
                }
                let manager_id = user_cache
                    .as_ref()
                    .and_then(Option::as_ref)
                    .and_then(|u| u.manager_user_id);
                let manager = match manager_id {
                    Some(id) => tx.user_contact(id).await?,
                    None => None,
                };
                let kind = match kind {
                    RecipientType::DeviceUserManagerEmail => RecipientType::DeviceUserEmail,
                    RecipientType::DeviceUserManagerSms => RecipientType::DeviceUserSms,
                    _ => RecipientType::DeviceUserCall,
                };
                if manager.is_none() {
                    let channel = channel_of(kind);
                    targets.push(nobody(channel, "the device's user has no manager".into()));
                } else {
                    user_targets(kind, manager.as_ref(), &mut targets);
                }
            }
            RecipientType::OtherDevicesInGroup => match m.device.group_id_number() {
                Some(group) => {
                    let own = m.device.device_id.as_deref().unwrap_or_default();
                    for device_id in tx.group_devices(&m.node.code, group).await? {
                        if device_id != own {
                            targets.push(text_to(device_id));
                        }
                    }
                }
                None => targets.push(nobody("Mt", "the device is in no group".into())),
            },
            RecipientType::NearestDevices => {
                let Some(radius_km) = in_range(m, kind, recipient.radius_km()) else {
                    continue;
                };
                match m.position {
                    Some(position) => {
                        let own = m.device.device_id.as_deref().unwrap_or_default();
                        for device_id in nearest(tx, m, position, radius_km).await? {
                            if device_id != own {
                                targets.push(text_to(device_id));
                            }
                        }
                    }
                    None => targets.push(nobody("Mt", "the device's position is unknown".into())),
                }
            }
            RecipientType::SendCheckInRequest => {
                let Some(interval) = in_range(m, kind, recipient.interval_minutes()) else {
                    continue;
                };
                targets.push(command(m, "CheckInRequest", json!({"Interval": interval})));
                // In range (1 to a week), so rounding cannot overflow.
                targets.push(Target::CheckInInterval(interval.round() as i64));
            }
            RecipientType::SendLocationRequest => {
                targets.push(command(m, "LocationRequest", json!({})))
            }
            RecipientType::ChangeReportingFrequency => {
                let Some(minutes) = in_range(m, kind, recipient.reporting_frequency_minutes())
                else {
                    continue;
                };
                targets.push(command(
                    m,
                    "ReportingFrequency",
                    json!({"ReportingFrequency": minutes}),
                ))
            }
            RecipientType::SendTextMessage => targets.push(command(m, "Text", json!({}))),
            RecipientType::StartMonitoring => {
                targets.push(command(m, "StartMonitoring", json!({})))
            }
            RecipientType::StopMonitoring => targets.push(command(m, "StopMonitoring", json!({}))),
            RecipientType::ForceStopMonitoring => {
                targets.push(command(m, "ForceStopMonitoring", json!({})))
            }
            RecipientType::DeviceCall => targets.push(command(m, "Call", json!({}))),
            RecipientType::StartCheckInSchedule => {
                targets.push(command(m, "StartCheckInSchedule", json!({})));
                targets.push(Target::PauseCheckIns(false));
            }
            RecipientType::StopCheckInSchedule => {
                targets.push(command(m, "StopCheckInSchedule", json!({})));
                targets.push(Target::PauseCheckIns(true));
            }
            RecipientType::ChangeGroup => {
                if let Some(group) = id_of(recipient.group_id.as_deref()) {
                    targets.push(Target::MoveToGroup(group));
                }
            }
        }
    }
    let mut unique = Vec::with_capacity(targets.len());
    for target in targets {
        if !unique.contains(&target) {
            unique.push(target);
        }
    }
    Ok(unique)
}

fn id_of(raw: Option<&str>) -> Option<i64> {
    raw?.trim().parse().ok()
}

/// A recipient's number, or `None` (logged) when it is out of range: saved before the
/// ranges were checked on save, it is skipped rather than acted on.
fn in_range(m: &Match<'_>, kind: RecipientType, value: Result<f64, String>) -> Option<f64> {
    value
        .inspect_err(|why| {
            tracing::warn!(
                tenant = %m.node.code,
                recipient = ?kind,
                why = %why,
                "a stored recipient's number is out of range: that recipient is skipped"
            )
        })
        .ok()
}

fn nobody(channel: &'static str, why: String) -> Target {
    Target::Nobody { channel, why }
}

fn text_to(device_id: String) -> Target {
    Target::Device {
        device_id,
        kind: "Text",
        parameters: Map::new(),
    }
}

fn command(m: &Match<'_>, kind: &'static str, parameters: Value) -> Target {
    Target::Device {
        device_id: m.device.device_id.clone().unwrap_or_default(),
        kind,
        parameters: match parameters {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    }
}

fn channel_of(kind: RecipientType) -> &'static str {
    match kind {
        RecipientType::DeviceUserSms | RecipientType::DeviceUserEmergencyContacts => "Sms",
        RecipientType::DeviceUserCall | RecipientType::DeviceUserEmergencyContactsCall => "Voice",
        _ => "Email",
    }
}

fn address_target(address: ContactAddress) -> Target {
    match address {
        ContactAddress::Email(email) => Target::Email(email),
        ContactAddress::Phone(phone) => Target::Sms(phone),
    }
}

/// Every entry of a contact (or the one named by `ContactDetailId`): e-mail addresses by
/// e-mail, phone numbers by SMS.
fn contact_targets(contact: &Contact, entry: Option<&str>, targets: &mut Vec<Target>) {
    let before = targets.len();
    for e in &contact.contact_entries {
        if entry.is_some_and(|wanted| e.entry_id.as_deref() != Some(wanted)) {
            continue;
        }
        if let Some(Ok(address)) = e.address.as_deref().map(ContactAddress::parse) {
            targets.push(address_target(address));
        }
    }
    if targets.len() == before {
        let name = contact.contact_name.as_deref().unwrap_or_default();
        targets.push(nobody(
            "Email",
            format!("contact {name} has no usable entry"),
        ));
    }
}

/// The device user's own address, or their profile's emergency contacts.
fn user_targets(kind: RecipientType, user: Option<&UserContact>, targets: &mut Vec<Target>) {
    let channel = channel_of(kind);
    let Some(user) = user else {
        targets.push(nobody(channel, "the device has no user".into()));
        return;
    };
    let p = &user.profile;
    let phone = || {
        [&p.cell_phone, &p.daytime_phone, &p.evening_phone]
            .into_iter()
            .flatten()
            .find(|n| !n.trim().is_empty())
            .cloned()
    };
    let before = targets.len();
    match kind {
        RecipientType::DeviceUserEmail => targets.push(Target::Email(user.username.clone())),
        RecipientType::DeviceUserSms => targets.extend(phone().map(Target::Sms)),
        RecipientType::DeviceUserCall => targets.extend(phone().map(Target::Voice)),
        _ => {
            let contacts = [
                (
                    &p.emergency_contact_address,
                    &p.emergency_contact_telephone_number,
                ),
                (
                    &p.emergency_contact_address2,
                    &p.emergency_contact_telephone_number2,
                ),
            ];
            for (address, phone) in contacts {
                match kind {
                    RecipientType::DeviceUserEmergencyContactsEmail => {
                        // The address may be a postal one: only e-mail addresses count.
                        if let Some(Ok(ContactAddress::Email(email))) =
                            address.as_deref().map(ContactAddress::parse)
                        {
                            targets.push(Target::Email(email));
                        }
                    }
                    RecipientType::DeviceUserEmergencyContactsCall => targets.extend(
                        phone
                            .clone()
                            .filter(|n| !n.trim().is_empty())
                            .map(Target::Voice),
                    ),
                    _ => targets.extend(
                        phone
                            .clone()
                            .filter(|n| !n.trim().is_empty())
                            .map(Target::Sms),
                    ),
                }
            }
        }
    }
    if targets.len() == before {
        targets.push(nobody(
            channel,
            format!("{} has no address for this channel", user.username),
        ));
    }
}

/// Devices of the tenant whose last position lies within `radius_km` (haversine).
async fn nearest(
    tx: &mut WriteTx,
    m: &Match<'_>,
    (lat, lon): (f64, f64),
    radius_km: f64,
) -> StoreResult<Vec<String>> {
    // A box around the point (1° of latitude ≈ 111 km; longitude shrinks with latitude),
    // then the exact distance.
    let dlat = radius_km / 110.0;
    let dlon = radius_km / (110.0 * lat.to_radians().cos().abs().max(0.01));
    let candidates = tx
        .devices_in_box(
            &m.node.code,
            (lat - dlat, lat + dlat),
            (lon - dlon, lon + dlon),
        )
        .await?;
    let here = Point::new(lon, lat);
    Ok(candidates
        .into_iter()
        .filter(|d| Haversine.distance(here, Point::new(d.lon, d.lat)) <= radius_km * 1000.0)
        .map(|d| d.device_id)
        .collect())
}
