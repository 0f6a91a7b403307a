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
use super::recipient::{ParsedRecipient, Recipient, RecipientType, Unparsable};

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
    /// `StartMonitoring` / `StopMonitoring` / `ForceStopMonitoring`: the matched
    /// device's monitoring session started or ended.
    Monitoring(MonitoringCommand),
}

/// What a monitoring recipient does to the matched device's session (DESIGN §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MonitoringCommand {
    /// Start one with the device's (else the tenant's, else the built-in) defaults,
    /// unless one is current.
    Start,
    /// End the current one: the worker's normal end.
    Stop,
    /// End the current one as an operator's force stop (its reason names the rule).
    ForceStop,
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

/// A stored recipient that does not parse (e.g. a number saved before the ranges were
/// checked on save): it is skipped rather than acted on (the caller logs it).
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
        let parsed = match ParsedRecipient::parse(recipient) {
            Ok(parsed) => parsed,
            Err(unparsable) => {
                skip(unparsable, &mut out);
                continue;
            }
        };
        let id = match parsed {
            ParsedRecipient::DeviceList(id) | ParsedRecipient::TenantList { list_id: id, .. } => id,
            other => {
                targets_of(&other, device, facts, &mut out)?;
                continue;
            }
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
    recipient: &ParsedRecipient,
    device: &MatchedDevice<'_>,
    facts: &RecipientFacts,
    out: &mut Resolution,
) -> Result<(), Lookup> {
    use ParsedRecipient as P;
    match recipient {
        P::DeviceList(_) | P::TenantList { .. } => {}
        P::DeviceContact {
            contact_id,
            detail_id,
        }
        | P::TenantContact {
            contact_id,
            detail_id,
            ..
        } => match facts
            .contacts
            .get(contact_id)
            .ok_or(Lookup::Contact(*contact_id))?
        {
            Some(contact) => contact_targets(contact, detail_id.as_deref(), &mut out.targets),
            None => out.targets.push(nobody(
                Channel::Email,
                format!("contact {contact_id} no longer exists"),
            )),
        },
        P::MessagingAddress(address) => out.targets.push(address_target(address.clone())),
        P::DeviceUserEmail
        | P::DeviceUserSms
        | P::DeviceUserCall
        | P::DeviceUserEmergencyContacts
        | P::DeviceUserEmergencyContactsCall
        | P::DeviceUserEmergencyContactsEmail => {
            let user = facts.user(device.user_id)?;
            user_targets(recipient.kind(), user, &mut out.targets);
        }
        P::DeviceUserManagerEmail | P::DeviceUserManagerSms | P::DeviceUserManagerCall => {
            manager_targets(recipient.kind(), device, facts, &mut out.targets)?
        }
        P::OtherDevicesInGroup => other_devices(None, device, facts, out)?,
        P::NearestDevices { radius_km } => other_devices(Some(*radius_km), device, facts, out)?,
        _ => command_targets(recipient, device, out),
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

/// `OtherDevicesInGroup` (no radius) and `NearestDevices` (within `radius_km`): a text
/// to each other device.
fn other_devices(
    radius_km: Option<f64>,
    device: &MatchedDevice<'_>,
    facts: &RecipientFacts,
    out: &mut Resolution,
) -> Result<(), Lookup> {
    let others: Vec<&str> = if let Some(radius_km) = radius_km {
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
    } else {
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
fn command_targets(recipient: &ParsedRecipient, device: &MatchedDevice<'_>, out: &mut Resolution) {
    use ParsedRecipient as R;
    let command = |kind: MtType, parameters: Value| Target::Device {
        device_id: device.device_id.to_string(),
        kind,
        parameters: match parameters {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    };
    // Minutes go to the device as JSON numbers with a fraction (`30.0`), as MT
    // parameters always have.
    let (mt, parameters, change) = match *recipient {
        R::SendCheckInRequest { interval_minutes } => (
            MtType::CheckInRequest,
            json!({"Interval": f64::from(interval_minutes)}),
            Some(Target::CheckInInterval(i64::from(interval_minutes))),
        ),
        R::ChangeReportingFrequency { minutes } => (
            MtType::ReportingFrequency,
            json!({"ReportingFrequency": f64::from(minutes)}),
            None,
        ),
        R::SendLocationRequest => (MtType::LocationRequest, json!({}), None),
        R::SendTextMessage => (MtType::Text, json!({}), None),
        R::StartMonitoring => (
            MtType::StartMonitoring,
            json!({}),
            Some(Target::Monitoring(MonitoringCommand::Start)),
        ),
        R::StopMonitoring => (
            MtType::StopMonitoring,
            json!({}),
            Some(Target::Monitoring(MonitoringCommand::Stop)),
        ),
        R::ForceStopMonitoring => (
            MtType::ForceStopMonitoring,
            json!({}),
            Some(Target::Monitoring(MonitoringCommand::ForceStop)),
        ),
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
        R::ChangeGroup(group) => {
            out.targets.push(Target::MoveToGroup(group.get()));
            return;
        }
        // Resolved by the other functions of `targets_of`.
        _ => return,
    };
    out.targets.push(command(mt, parameters));
    out.targets.extend(change);
}

/// A stored recipient that does not parse: without a type it names nothing; an
/// unreadable messaging address is a delivery to nobody; anything else is recorded as
/// skipped, with its first problem as the reason.
fn skip(unparsable: Unparsable, out: &mut Resolution) {
    match unparsable.kind {
        None => {}
        Some(RecipientType::MessagingAddress) => out
            .targets
            .push(nobody(Channel::Email, "invalid messaging address".into())),
        Some(kind) => out.skipped.push(Skipped {
            kind,
            // An `Unparsable` always names a problem.
            why: unparsable
                .problems
                .into_iter()
                .next()
                .map(|p| p.message)
                .unwrap_or_default(),
        }),
    }
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
