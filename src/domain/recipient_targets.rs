//! Recipient resolution as planning: who (or what) each recipient of a matched
//! notification is, for the device that matched — all 27 `RecipientType`s
//! (docs/decisions.md, "Recipients at fire time"). `plan_targets` is pure: it works from
//! the facts it is given (lists, contacts, users, other devices) and, when one it needs
//! is missing, names it (`Lookup`) for the caller to look up and add before asking again.
//! So the rules are tested without a database, and the caller reads only what the
//! recipients need, inside the transaction that stores the match.

use std::collections::{HashMap, HashSet};

use geo::{Distance, Haversine, Point};
use serde_json::{Map, Value, json};

use super::address::ContactAddress;
use super::address_book::Contact;
use super::delivery::Channel;
use super::ids::{ContactId, DistributionListId};
use super::mt_message::MtType;
use super::profile::UserProfile;
use super::recipient::{Recipient, RecipientType};

/// How deep lists may name lists before the rest is ignored (lists cannot name
/// themselves, but two lists can name each other).
const MAX_LIST_DEPTH: usize = 8;

/// One thing a recipient resolves to.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Email(String),
    Sms(String),
    Voice(String),
    /// An MT message for a device.
    Device {
        device_id: String,
        kind: MtType,
        parameters: Map<String, Value>,
    },
    /// Resolved to no address: recorded as a `NoAddress` delivery on `channel`.
    Nobody {
        channel: Channel,
        why: String,
    },
    /// `ChangeGroup`: move the matched device.
    MoveToGroup(i64),
    /// `SendCheckInRequest`'s interval becomes the device's check-in interval.
    CheckInInterval(i64),
    /// `StopCheckInSchedule` (true) / `StartCheckInSchedule` (false).
    PauseCheckIns(bool),
}

/// What recipient resolution needs to know about a user.
#[derive(Debug, Clone)]
pub struct UserContact {
    pub username: String,
    pub manager_user_id: Option<i64>,
    pub profile: UserProfile,
}

/// Another device's last position.
#[derive(Debug, Clone)]
pub struct DevicePosition {
    pub device_id: String,
    pub lat: f64,
    pub lon: f64,
}

/// The device that matched, as resolution sees it.
#[derive(Debug, Clone, Copy)]
pub struct MatchedDevice<'a> {
    pub device_id: &'a str,
    pub group_id: Option<i64>,
    pub user_id: Option<i64>,
    /// Where it is (the message's position, or its last known one), for `NearestDevices`.
    pub position: Option<(f64, f64)>,
}

/// A fact resolution needs that it was not given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lookup {
    /// A distribution list visible from the tenant.
    List(DistributionListId),
    /// A contact visible from the tenant.
    Contact(ContactId),
    /// A user (the device's user, or their manager).
    User(i64),
    /// The devices of one of the tenant's groups.
    GroupDevices(i64),
    /// The tenant's devices whose last position lies in `search_box(position, radius_km)`.
    DevicesNear { radius_km: f64 },
}

/// What the caller looked up so far (`None`: looked up, and not there — deleted, or not
/// visible from the tenant).
#[derive(Debug, Clone, Default)]
pub struct RecipientFacts {
    pub lists: HashMap<DistributionListId, Option<Vec<Recipient>>>,
    pub contacts: HashMap<ContactId, Option<Contact>>,
    pub users: HashMap<i64, Option<UserContact>>,
    pub group_devices: HashMap<i64, Vec<String>>,
    /// By the radius's bits (a match has one position).
    pub devices_near: HashMap<u64, Vec<DevicePosition>>,
}

impl RecipientFacts {
    fn user(&self, id: Option<i64>) -> Result<Option<&UserContact>, Lookup> {
        match id {
            None => Ok(None),
            Some(id) => Ok(self.users.get(&id).ok_or(Lookup::User(id))?.as_ref()),
        }
    }
}

/// A stored recipient's number that is out of range: saved before the ranges were
/// checked on save, it is skipped rather than acted on (the caller logs it).
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub kind: RecipientType,
    pub why: String,
}

/// What the recipients resolve to: targets in order, without duplicates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolution {
    pub targets: Vec<Target>,
    pub skipped: Vec<Skipped>,
}

/// The lat/lon box around `(lat, lon)` holding every point within `radius_km` (1° of
/// latitude ≈ 111 km; longitude shrinks with latitude), as (lat range, lon range): the
/// candidates `NearestDevices` measures exactly.
pub fn search_box((lat, lon): (f64, f64), radius_km: f64) -> ((f64, f64), (f64, f64)) {
    let dlat = radius_km / 110.0;
    let dlon = radius_km / (110.0 * lat.to_radians().cos().abs().max(0.01));
    ((lat - dlat, lat + dlat), (lon - dlon, lon + dlon))
}

/// Resolves every recipient (lists expanded, depth first) into targets, or names the
/// first fact it lacks.
pub fn plan_targets(
    recipients: &[Recipient],
    device: &MatchedDevice<'_>,
    facts: &RecipientFacts,
) -> Result<Resolution, Lookup> {
    let mut out = Resolution::default();
    let mut seen_lists = HashSet::new();
    // Work list of (recipient, list depth); lists push their own recipients.
    let mut pending: Vec<(&Recipient, usize)> = recipients.iter().rev().map(|r| (r, 0)).collect();
    while let Some((recipient, depth)) = pending.pop() {
        let Some(kind) = recipient.r#type else {
            continue;
        };
        if !matches!(kind, RecipientType::DeviceList | RecipientType::TenantList) {
            targets_of(kind, recipient, device, facts, &mut out)?;
            continue;
        }
        let Some(id) = id_of(recipient.list_id.as_deref()).map(DistributionListId::new) else {
            continue;
        };
        if depth >= MAX_LIST_DEPTH || !seen_lists.insert(id) {
            continue;
        }
        match facts.lists.get(&id).ok_or(Lookup::List(id))? {
            Some(list) => pending.extend(list.iter().rev().map(|r| (r, depth + 1))),
            None => out.targets.push(nobody(
                Channel::Email,
                format!("list {id} no longer exists"),
            )),
        }
    }
    let mut unique = Vec::with_capacity(out.targets.len());
    for target in out.targets {
        if !unique.contains(&target) {
            unique.push(target);
        }
    }
    out.targets = unique;
    Ok(out)
}

/// What one recipient other than a list resolves to.
fn targets_of(
    kind: RecipientType,
    recipient: &Recipient,
    device: &MatchedDevice<'_>,
    facts: &RecipientFacts,
    out: &mut Resolution,
) -> Result<(), Lookup> {
    use RecipientType as R;
    match kind {
        R::DeviceList | R::TenantList => {}
        R::DeviceContact | R::TenantContact => {
            if let Some(id) = id_of(recipient.contact_id.as_deref()).map(ContactId::new) {
                match facts.contacts.get(&id).ok_or(Lookup::Contact(id))? {
                    Some(contact) => contact_targets(
                        contact,
                        recipient.contact_detail_id.as_deref(),
                        &mut out.targets,
                    ),
                    None => out.targets.push(nobody(
                        Channel::Email,
                        format!("contact {id} no longer exists"),
                    )),
                }
            }
        }
        R::MessagingAddress => out.targets.push(
            match recipient
                .messaging_address
                .as_deref()
                .map(ContactAddress::parse_prefixed)
            {
                Some(Ok(address)) => address_target(address),
                _ => nobody(Channel::Email, "invalid messaging address".into()),
            },
        ),
        R::DeviceUserEmail
        | R::DeviceUserSms
        | R::DeviceUserCall
        | R::DeviceUserEmergencyContacts
        | R::DeviceUserEmergencyContactsCall
        | R::DeviceUserEmergencyContactsEmail => {
            let user = facts.user(device.user_id)?;
            user_targets(kind, user, &mut out.targets);
        }
        R::DeviceUserManagerEmail | R::DeviceUserManagerSms | R::DeviceUserManagerCall => {
            manager_targets(kind, device, facts, &mut out.targets)?
        }
        R::OtherDevicesInGroup | R::NearestDevices => {
            other_devices(kind, recipient, device, facts, out)?
        }
        _ => command_targets(kind, recipient, device, out),
    }
    Ok(())
}

/// The device user's manager's address, as the user's own would be.
fn manager_targets(
    kind: RecipientType,
    device: &MatchedDevice<'_>,
    facts: &RecipientFacts,
    targets: &mut Vec<Target>,
) -> Result<(), Lookup> {
    let manager_id = facts.user(device.user_id)?.and_then(|u| u.manager_user_id);
    let manager = facts.user(manager_id)?;
    let kind = match kind {
        RecipientType::DeviceUserManagerEmail => RecipientType::DeviceUserEmail,
        RecipientType::DeviceUserManagerSms => RecipientType::DeviceUserSms,
        _ => RecipientType::DeviceUserCall,
    };
    match manager {
        Some(manager) => user_targets(kind, Some(manager), targets),
        None => targets.push(nobody(
            channel_of(kind),
            "the device's user has no manager".into(),
        )),
    }
    Ok(())
}

/// `OtherDevicesInGroup` and `NearestDevices`: a text to each other device.
fn other_devices(
    kind: RecipientType,
    recipient: &Recipient,
    device: &MatchedDevice<'_>,
    facts: &RecipientFacts,
    out: &mut Resolution,
) -> Result<(), Lookup> {
    let others: Vec<&str> = if kind == RecipientType::OtherDevicesInGroup {
        let Some(group) = device.group_id else {
            out.targets
                .push(nobody(Channel::Mt, "the device is in no group".into()));
            return Ok(());
        };
        let members = facts
            .group_devices
            .get(&group)
            .ok_or(Lookup::GroupDevices(group))?;
        members.iter().map(String::as_str).collect()
    } else {
        let Some(radius_km) = in_range(kind, recipient.radius_km(), out) else {
            return Ok(());
        };
        let Some((lat, lon)) = device.position else {
            out.targets.push(nobody(
                Channel::Mt,
                "the device's position is unknown".into(),
            ));
            return Ok(());
        };
        let candidates = facts
            .devices_near
            .get(&radius_km.to_bits())
            .ok_or(Lookup::DevicesNear { radius_km })?;
        let here = Point::new(lon, lat);
        candidates
            .iter()
            .filter(|d| Haversine.distance(here, Point::new(d.lon, d.lat)) <= radius_km * 1000.0)
            .map(|d| d.device_id.as_str())
            .collect()
    };
    for other in others.into_iter().filter(|d| *d != device.device_id) {
        out.targets.push(Target::Device {
            device_id: other.to_string(),
            kind: MtType::Text,
            parameters: Map::new(),
        });
    }
    Ok(())
}

/// The commands to the matched device, and what they change about it.
fn command_targets(
    kind: RecipientType,
    recipient: &Recipient,
    device: &MatchedDevice<'_>,
    out: &mut Resolution,
) {
    use RecipientType as R;
    let command = |kind: MtType, parameters: Value| Target::Device {
        device_id: device.device_id.to_string(),
        kind,
        parameters: match parameters {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    };
    let (mt, parameters, change) = match kind {
        R::SendCheckInRequest => {
            let Some(interval) = in_range(kind, recipient.interval_minutes(), out) else {
                return;
            };
            // In range (1 to a week), so rounding cannot overflow.
            let change = Target::CheckInInterval(interval.round() as i64);
            (
                MtType::CheckInRequest,
                json!({"Interval": interval}),
                Some(change),
            )
        }
        R::ChangeReportingFrequency => {
            let Some(minutes) = in_range(kind, recipient.reporting_frequency_minutes(), out) else {
                return;
            };
            let parameters = json!({"ReportingFrequency": minutes});
            (MtType::ReportingFrequency, parameters, None)
        }
        R::SendLocationRequest => (MtType::LocationRequest, json!({}), None),
        R::SendTextMessage => (MtType::Text, json!({}), None),
        R::StartMonitoring => (MtType::StartMonitoring, json!({}), None),
        R::StopMonitoring => (MtType::StopMonitoring, json!({}), None),
        R::ForceStopMonitoring => (MtType::ForceStopMonitoring, json!({}), None),
        R::DeviceCall => (MtType::Call, json!({}), None),
        R::StartCheckInSchedule => (
            MtType::StartCheckInSchedule,
            json!({}),
            Some(Target::PauseCheckIns(false)),
        ),
        R::StopCheckInSchedule => (
            MtType::StopCheckInSchedule,
            json!({}),
            Some(Target::PauseCheckIns(true)),
        ),
        R::ChangeGroup => {
            out.targets
                .extend(id_of(recipient.group_id.as_deref()).map(Target::MoveToGroup));
            return;
        }
        // Resolved by the other functions of `targets_of`.
        _ => return,
    };
    out.targets.push(command(mt, parameters));
    out.targets.extend(change);
}

fn id_of(raw: Option<&str>) -> Option<i64> {
    raw?.trim().parse().ok()
}

/// A recipient's number, or `None` (recorded as skipped) when it is out of range.
fn in_range(kind: RecipientType, value: Result<f64, String>, out: &mut Resolution) -> Option<f64> {
    value
        .inspect_err(|why| {
            out.skipped.push(Skipped {
                kind,
                why: why.clone(),
            })
        })
        .ok()
}

fn nobody(channel: Channel, why: String) -> Target {
    Target::Nobody { channel, why }
}

fn channel_of(kind: RecipientType) -> Channel {
    match kind {
        RecipientType::DeviceUserSms | RecipientType::DeviceUserEmergencyContacts => Channel::Sms,
        RecipientType::DeviceUserCall | RecipientType::DeviceUserEmergencyContactsCall => {
            Channel::Voice
        }
        _ => Channel::Email,
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
        if let Ok(address) = ContactAddress::parse(&e.address) {
            targets.push(address_target(address));
        }
    }
    if targets.len() == before {
        targets.push(nobody(
            Channel::Email,
            format!("contact {} has no usable entry", contact.contact_name),
        ));
    }
}

/// A phone number that is not blank.
fn phone(number: &Option<String>) -> Option<String> {
    number.clone().filter(|n| !n.trim().is_empty())
}

/// The device user's own address, or their profile's emergency contacts.
fn user_targets(kind: RecipientType, user: Option<&UserContact>, targets: &mut Vec<Target>) {
    let channel = channel_of(kind);
    let Some(user) = user else {
        targets.push(nobody(channel, "the device has no user".into()));
        return;
    };
    let p = &user.profile;
    let own_phone = || {
        [&p.cell_phone, &p.daytime_phone, &p.evening_phone]
            .into_iter()
            .find_map(phone)
    };
    let before = targets.len();
    let emergency_contacts = [
        (
            &p.emergency_contact_address,
            &p.emergency_contact_telephone_number,
        ),
        (
            &p.emergency_contact_address2,
            &p.emergency_contact_telephone_number2,
        ),
    ];
    match kind {
        RecipientType::DeviceUserEmail => targets.push(Target::Email(user.username.clone())),
        RecipientType::DeviceUserSms => targets.extend(own_phone().map(Target::Sms)),
        RecipientType::DeviceUserCall => targets.extend(own_phone().map(Target::Voice)),
        RecipientType::DeviceUserEmergencyContactsEmail => {
            for (address, _) in emergency_contacts {
                // The address may be a postal one: only e-mail addresses count.
                if let Some(Ok(ContactAddress::Email(email))) =
                    address.as_deref().map(ContactAddress::parse)
                {
                    targets.push(Target::Email(email));
                }
            }
        }
        RecipientType::DeviceUserEmergencyContactsCall => targets.extend(
            emergency_contacts
                .iter()
                .filter_map(|(_, n)| phone(n))
                .map(Target::Voice),
        ),
        _ => targets.extend(
            emergency_contacts
                .iter()
                .filter_map(|(_, n)| phone(n))
                .map(Target::Sms),
        ),
    }
    if targets.len() == before {
        targets.push(nobody(
            channel,
            format!("{} has no address for this channel", user.username),
        ));
    }
}

#[cfg(test)]
#[path = "recipient_targets_tests.rs"]
mod tests;
