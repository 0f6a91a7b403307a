//! Recipients of distribution lists and event notifications: who or what a notification
//! reaches. Each `Type` carries only its own fields (docs/api.md; the OpenAPI `Recipient` schema).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::address::ContactAddress;
use super::closed_set::closed_set;
use super::ids::{ContactId, DistributionListId, GroupId, TenantCode};
use super::validation::Validator;

closed_set! {
    /// What a recipient is: a list, a contact, an address, the device's people, or a
    /// command to the device.
    #[derive(ToSchema)]
    pub enum RecipientType {
        DeviceList = "DeviceList",
        TenantList = "TenantList",
        DeviceContact = "DeviceContact",
        TenantContact = "TenantContact",
        MessagingAddress = "MessagingAddress",
        NearestDevices = "NearestDevices",
        DeviceUserEmail = "DeviceUserEmail",
        DeviceUserSms = "DeviceUserSms",
        DeviceUserManagerEmail = "DeviceUserManagerEmail",
        DeviceUserManagerSms = "DeviceUserManagerSms",
        DeviceUserEmergencyContacts = "DeviceUserEmergencyContacts",
        OtherDevicesInGroup = "OtherDevicesInGroup",
        SendCheckInRequest = "SendCheckInRequest",
        SendLocationRequest = "SendLocationRequest",
        ChangeReportingFrequency = "ChangeReportingFrequency",
        SendTextMessage = "SendTextMessage",
        StartMonitoring = "StartMonitoring",
        StopMonitoring = "StopMonitoring",
        ForceStopMonitoring = "ForceStopMonitoring",
        DeviceUserCall = "DeviceUserCall",
        DeviceUserManagerCall = "DeviceUserManagerCall",
        DeviceCall = "DeviceCall",
        StartCheckInSchedule = "StartCheckInSchedule",
        StopCheckInSchedule = "StopCheckInSchedule",
        ChangeGroup = "ChangeGroup",
        DeviceUserEmergencyContactsCall = "DeviceUserEmergencyContactsCall",
        DeviceUserEmergencyContactsEmail = "DeviceUserEmergencyContactsEmail",
    }
}

/// One recipient. Unknown properties are refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct Recipient {
    #[schema(required = true)]
    pub r#type: Option<RecipientType>,
    /// Tenant lists and tenant contacts only: the tenant owning the list or contact.
    pub tenant_code: Option<String>,
    /// Device and tenant contacts only.
    pub contact_id: Option<String>,
    /// Device and tenant contacts only: an `EntryId` of the contact.
    pub contact_detail_id: Option<String>,
    /// Device and tenant lists only.
    pub list_id: Option<String>,
    /// MessagingAddress only: `mail:` + e-mail or `sms:` + phone.
    #[schema(example = "mail:ops@example.com")]
    pub messaging_address: Option<String>,
    /// NearestDevices only: kilometres.
    pub radius: Option<String>,
    /// ChangeReportingFrequency only: minutes.
    pub reporting_frequency: Option<String>,
    /// SendCheckInRequest only: minutes.
    pub interval: Option<String>,
    /// ChangeGroup only.
    pub group_id: Option<String>,
}

/// A record a recipient names, to be looked up in the caller's scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RecipientTarget {
    List {
        id: DistributionListId,
        tenant_code: Option<TenantCode>,
    },
    Contact {
        id: ContactId,
        tenant_code: Option<TenantCode>,
        detail_id: Option<String>,
    },
    Group {
        id: GroupId,
    },
}

/// A reference with the field path to blame when it does not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipientReference {
    pub field_prefix: String,
    pub kind: RecipientType,
    pub target: RecipientTarget,
}

/// A contact as far as references care: who owns it and its entries' ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactTarget {
    pub owner: TenantCode,
    pub entries: Vec<String>,
}

/// The records a set of references name that exist and are visible from the tenant
/// (found by the store): lists and contacts by id with their owner, group ids.
#[derive(Debug, Clone, Default)]
pub struct ReferencedRecords {
    pub lists: HashMap<DistributionListId, TenantCode>,
    pub contacts: HashMap<ContactId, ContactTarget>,
    pub groups: HashSet<GroupId>,
}

/// Adds an error for every reference that does not resolve in `found`. The message for
/// a record that does not resolve is the same whether it exists in another tenant or not
/// at all.
pub fn check_references(
    references: &[RecipientReference],
    found: &ReferencedRecords,
    v: &mut Validator,
) {
    for reference in references {
        let prefix = &reference.field_prefix;
        match &reference.target {
            RecipientTarget::List { id, tenant_code } => match found.lists.get(id) {
                None => v.add(
                    format!("{prefix}.ListId"),
                    format!("no distribution list {id} in this tenant"),
                ),
                Some(owner) => {
                    if let Some(code) = tenant_code.as_ref().filter(|t| *t != owner) {
                        v.add(
                            format!("{prefix}.TenantCode"),
                            format!("list {id} does not belong to tenant {code}"),
                        );
                    }
                }
            },
            RecipientTarget::Contact {
                id,
                tenant_code,
                detail_id,
            } => match found.contacts.get(id) {
                None => v.add(
                    format!("{prefix}.ContactId"),
                    format!("no contact {id} in this tenant"),
                ),
                Some(contact) => {
                    if let Some(code) = tenant_code.as_ref().filter(|t| **t != contact.owner) {
                        v.add(
                            format!("{prefix}.TenantCode"),
                            format!("contact {id} does not belong to tenant {code}"),
                        );
                    }
                    if let Some(detail) = detail_id
                        && !contact.entries.contains(detail)
                    {
                        v.add(
                            format!("{prefix}.ContactDetailId"),
                            format!("contact {id} has no entry {detail}"),
                        );
                    }
                }
            },
            RecipientTarget::Group { id } => {
                if !found.groups.contains(id) {
                    v.add(
                        format!("{prefix}.GroupId"),
                        format!("no group {id} in this tenant"),
                    );
                }
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    TenantCode,
    ContactId,
    ContactDetailId,
    ListId,
    MessagingAddress,
    Radius,
    ReportingFrequency,
    Interval,
    GroupId,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::TenantCode => "TenantCode",
            Field::ContactId => "ContactId",
            Field::ContactDetailId => "ContactDetailId",
            Field::ListId => "ListId",
            Field::MessagingAddress => "MessagingAddress",
            Field::Radius => "Radius",
            Field::ReportingFrequency => "ReportingFrequency",
            Field::Interval => "Interval",
            Field::GroupId => "GroupId",
        }
    }
}

impl RecipientType {
    /// (fields allowed, fields required) for this type.
    fn fields(self) -> (&'static [Field], &'static [Field]) {
        use Field::*;
        use RecipientType::*;
        match self {
            DeviceList => (&[ListId], &[ListId]),
            TenantList => (&[TenantCode, ListId], &[ListId]),
            DeviceContact => (&[ContactId, ContactDetailId], &[ContactId]),
            TenantContact => (&[TenantCode, ContactId, ContactDetailId], &[ContactId]),
            RecipientType::MessagingAddress => {
                (&[Field::MessagingAddress], &[Field::MessagingAddress])
            }
            NearestDevices => (&[Radius], &[Radius]),
            ChangeReportingFrequency => (&[ReportingFrequency], &[ReportingFrequency]),
            SendCheckInRequest => (&[Interval], &[Interval]),
            ChangeGroup => (&[GroupId], &[GroupId]),
            _ => (&[], &[]),
        }
    }
}

impl Recipient {
    fn value(&self, field: Field) -> Option<&str> {
        match field {
            Field::TenantCode => self.tenant_code.as_deref(),
            Field::ContactId => self.contact_id.as_deref(),
            Field::ContactDetailId => self.contact_detail_id.as_deref(),
            Field::ListId => self.list_id.as_deref(),
            Field::MessagingAddress => self.messaging_address.as_deref(),
            Field::Radius => self.radius.as_deref(),
            Field::ReportingFrequency => self.reporting_frequency.as_deref(),
            Field::Interval => self.interval.as_deref(),
            Field::GroupId => self.group_id.as_deref(),
        }
    }
}

/// Longest `Interval` and `ReportingFrequency`, in minutes: a week (the longest device
/// check-in interval too).
pub const MAX_MINUTES: u32 = 10_080;
/// Largest `Radius`, in kilometres: half the Earth's circumference.
pub const MAX_RADIUS_KM: f64 = 20_000.0;

/// A written number, if finite.
fn number(raw: &str) -> Option<f64> {
    raw.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}

/// `Radius` in kilometres, or what is wrong with it.
fn radius_km(raw: &str) -> Result<f64, String> {
    number(raw)
        .filter(|n| *n > 0.0 && *n <= MAX_RADIUS_KM)
        .ok_or_else(|| {
            format!("must be a number of kilometres above 0 and at most {MAX_RADIUS_KM}")
        })
}

/// `Interval` or `ReportingFrequency` in whole minutes (a fraction is rounded), or what
/// is wrong with it.
fn minutes(raw: &str) -> Result<u32, String> {
    number(raw)
        .filter(|n| (1.0..=f64::from(MAX_MINUTES)).contains(n))
        // In range (1 to a week), so the rounded value fits.
        .map(|n| n.round() as u32)
        .ok_or_else(|| format!("must be a number of minutes from 1 to {MAX_MINUTES}"))
}

const ALL_FIELDS: [Field; 9] = [
    Field::TenantCode,
    Field::ContactId,
    Field::ContactDetailId,
    Field::ListId,
    Field::MessagingAddress,
    Field::Radius,
    Field::ReportingFrequency,
    Field::Interval,
    Field::GroupId,
];

/// A recipient as written, parsed: one variant per `RecipientType`, holding exactly what
/// that type needs. Parsed on write (`validate_recipients`) and again at fire time
/// (`recipient_targets`), where a stored recipient that no longer parses is skipped.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedRecipient {
    DeviceList(DistributionListId),
    TenantList {
        list_id: DistributionListId,
        tenant_code: Option<TenantCode>,
    },
    DeviceContact {
        contact_id: ContactId,
        /// The one entry to use (its `EntryId`); all entries when absent.
        detail_id: Option<String>,
    },
    TenantContact {
        contact_id: ContactId,
        tenant_code: Option<TenantCode>,
        detail_id: Option<String>,
    },
    MessagingAddress(ContactAddress),
    NearestDevices {
        radius_km: f64,
    },
    DeviceUserEmail,
    DeviceUserSms,
    DeviceUserManagerEmail,
    DeviceUserManagerSms,
    DeviceUserEmergencyContacts,
    OtherDevicesInGroup,
    SendCheckInRequest {
        interval_minutes: u32,
    },
    SendLocationRequest,
    ChangeReportingFrequency {
        minutes: u32,
    },
    SendTextMessage,
    StartMonitoring,
    StopMonitoring,
    ForceStopMonitoring,
    DeviceUserCall,
    DeviceUserManagerCall,
    DeviceCall,
    StartCheckInSchedule,
    StopCheckInSchedule,
    ChangeGroup(GroupId),
    DeviceUserEmergencyContactsCall,
    DeviceUserEmergencyContactsEmail,
}

/// One thing wrong with a written recipient: the field (`Type`, `Radius`, …) and a
/// sentence for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipientProblem {
    pub field: &'static str,
    pub message: String,
}

/// Why a written recipient does not parse: its type (when it has one) and every problem,
/// in the order the client is told them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsable {
    pub kind: Option<RecipientType>,
    pub problems: Vec<RecipientProblem>,
}

/// Reads the fields of one recipient of type `kind`, collecting what is wrong.
struct FieldReader<'a> {
    recipient: &'a Recipient,
    problems: Vec<RecipientProblem>,
}

impl FieldReader<'_> {
    fn fail(&mut self, field: Field, message: String) {
        self.problems.push(RecipientProblem {
            field: field.name(),
            message,
        });
    }

    /// Adds a problem for each field the type does not allow, or requires and lacks.
    fn check_presence(&mut self, kind: RecipientType) {
        let (allowed, required) = kind.fields();
        for field in ALL_FIELDS {
            let value = self.recipient.value(field);
            if value.is_some() && !allowed.contains(&field) {
                self.fail(field, format!("is not allowed on a {kind} recipient"));
            } else if value.is_none_or(|s| s.trim().is_empty()) && required.contains(&field) {
                self.fail(field, format!("is required on a {kind} recipient"));
            }
        }
    }

    /// A present field, read by `parse` (its error becomes the field's problem).
    fn read<T>(
        &mut self,
        field: Field,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let raw = self.recipient.value(field)?;
        parse(raw).map_err(|message| self.fail(field, message)).ok()
    }

    fn id(&mut self, field: Field) -> Option<i64> {
        self.read(field, |raw| {
            raw.trim()
                .parse::<i64>()
                .map_err(|_| format!("'{raw}' is not an id"))
        })
    }

    /// The optional `TenantCode`: `Ok(None)` when absent.
    fn tenant_code(&mut self) -> Result<Option<TenantCode>, ()> {
        match self.recipient.tenant_code {
            None => Ok(None),
            Some(_) => self
                .read(Field::TenantCode, |raw| {
                    raw.parse::<TenantCode>().map_err(|e| e.to_string())
                })
                .map(Some)
                .ok_or(()),
        }
    }
}

impl ParsedRecipient {
    /// Parses a written recipient: its fields must be those of its type, present where
    /// required, and readable (ids, an address, numbers within range).
    pub fn parse(recipient: &Recipient) -> Result<ParsedRecipient, Unparsable> {
        let Some(kind) = recipient.r#type else {
            return Err(Unparsable {
                kind: None,
                problems: vec![RecipientProblem {
                    field: "Type",
                    message: "is required".into(),
                }],
            });
        };
        let mut reader = FieldReader {
            recipient,
            problems: Vec::new(),
        };
        reader.check_presence(kind);
        let parsed = Self::read(kind, &mut reader);
        match parsed {
            Some(parsed) if reader.problems.is_empty() => Ok(parsed),
            _ => Err(Unparsable {
                kind: Some(kind),
                problems: reader.problems,
            }),
        }
    }

    /// The variant of `kind` from its fields (`None` when one is missing or unreadable;
    /// the reader holds why).
    fn read(kind: RecipientType, f: &mut FieldReader<'_>) -> Option<ParsedRecipient> {
        use ParsedRecipient as P;
        use RecipientType as R;
        let detail_id = f.recipient.contact_detail_id.clone();
        Some(match kind {
            R::DeviceList => P::DeviceList(DistributionListId::new(f.id(Field::ListId)?)),
            R::TenantList => {
                let tenant_code = f.tenant_code();
                let list_id = DistributionListId::new(f.id(Field::ListId)?);
                P::TenantList {
                    list_id,
                    tenant_code: tenant_code.ok()?,
                }
            }
            R::DeviceContact => P::DeviceContact {
                contact_id: ContactId::new(f.id(Field::ContactId)?),
                detail_id,
            },
            R::TenantContact => {
                let tenant_code = f.tenant_code();
                let contact_id = ContactId::new(f.id(Field::ContactId)?);
                P::TenantContact {
                    contact_id,
                    tenant_code: tenant_code.ok()?,
                    detail_id,
                }
            }
            R::MessagingAddress => P::MessagingAddress(
                f.read(Field::MessagingAddress, ContactAddress::parse_prefixed)?,
            ),
            R::NearestDevices => P::NearestDevices {
                radius_km: f.read(Field::Radius, radius_km)?,
            },
            R::SendCheckInRequest => P::SendCheckInRequest {
                interval_minutes: f.read(Field::Interval, minutes)?,
            },
            R::ChangeReportingFrequency => P::ChangeReportingFrequency {
                minutes: f.read(Field::ReportingFrequency, minutes)?,
            },
            R::ChangeGroup => P::ChangeGroup(GroupId::new(f.id(Field::GroupId)?)),
            _ => Self::without_fields(kind)?,
        })
    }

    /// The variants that carry nothing.
    fn without_fields(kind: RecipientType) -> Option<ParsedRecipient> {
        use ParsedRecipient as P;
        use RecipientType as R;
        Some(match kind {
            R::DeviceUserEmail => P::DeviceUserEmail,
            R::DeviceUserSms => P::DeviceUserSms,
            R::DeviceUserManagerEmail => P::DeviceUserManagerEmail,
            R::DeviceUserManagerSms => P::DeviceUserManagerSms,
            R::DeviceUserEmergencyContacts => P::DeviceUserEmergencyContacts,
            R::OtherDevicesInGroup => P::OtherDevicesInGroup,
            R::SendLocationRequest => P::SendLocationRequest,
            R::SendTextMessage => P::SendTextMessage,
            R::StartMonitoring => P::StartMonitoring,
            R::StopMonitoring => P::StopMonitoring,
            R::ForceStopMonitoring => P::ForceStopMonitoring,
            R::DeviceUserCall => P::DeviceUserCall,
            R::DeviceUserManagerCall => P::DeviceUserManagerCall,
            R::DeviceCall => P::DeviceCall,
            R::StartCheckInSchedule => P::StartCheckInSchedule,
            R::StopCheckInSchedule => P::StopCheckInSchedule,
            R::DeviceUserEmergencyContactsCall => P::DeviceUserEmergencyContactsCall,
            R::DeviceUserEmergencyContactsEmail => P::DeviceUserEmergencyContactsEmail,
            _ => return None,
        })
    }

    /// The type it was written as.
    pub fn kind(&self) -> RecipientType {
        use ParsedRecipient as P;
        use RecipientType as R;
        match self {
            P::DeviceList(_) => R::DeviceList,
            P::TenantList { .. } => R::TenantList,
            P::DeviceContact { .. } => R::DeviceContact,
            P::TenantContact { .. } => R::TenantContact,
            P::MessagingAddress(_) => R::MessagingAddress,
            P::NearestDevices { .. } => R::NearestDevices,
            P::DeviceUserEmail => R::DeviceUserEmail,
            P::DeviceUserSms => R::DeviceUserSms,
            P::DeviceUserManagerEmail => R::DeviceUserManagerEmail,
            P::DeviceUserManagerSms => R::DeviceUserManagerSms,
            P::DeviceUserEmergencyContacts => R::DeviceUserEmergencyContacts,
            P::OtherDevicesInGroup => R::OtherDevicesInGroup,
            P::SendCheckInRequest { .. } => R::SendCheckInRequest,
            P::SendLocationRequest => R::SendLocationRequest,
            P::ChangeReportingFrequency { .. } => R::ChangeReportingFrequency,
            P::SendTextMessage => R::SendTextMessage,
            P::StartMonitoring => R::StartMonitoring,
            P::StopMonitoring => R::StopMonitoring,
            P::ForceStopMonitoring => R::ForceStopMonitoring,
            P::DeviceUserCall => R::DeviceUserCall,
            P::DeviceUserManagerCall => R::DeviceUserManagerCall,
            P::DeviceCall => R::DeviceCall,
            P::StartCheckInSchedule => R::StartCheckInSchedule,
            P::StopCheckInSchedule => R::StopCheckInSchedule,
            P::ChangeGroup(_) => R::ChangeGroup,
            P::DeviceUserEmergencyContactsCall => R::DeviceUserEmergencyContactsCall,
            P::DeviceUserEmergencyContactsEmail => R::DeviceUserEmergencyContactsEmail,
        }
    }

    /// The record it names, to be looked up on write.
    pub fn target(&self) -> Option<RecipientTarget> {
        use ParsedRecipient as P;
        match self {
            P::DeviceList(id) => Some(RecipientTarget::List {
                id: *id,
                tenant_code: None,
            }),
            P::TenantList {
                list_id,
                tenant_code,
            } => Some(RecipientTarget::List {
                id: *list_id,
                tenant_code: tenant_code.clone(),
            }),
            P::DeviceContact {
                contact_id,
                detail_id,
            } => Some(RecipientTarget::Contact {
                id: *contact_id,
                tenant_code: None,
                detail_id: detail_id.clone(),
            }),
            P::TenantContact {
                contact_id,
                tenant_code,
                detail_id,
            } => Some(RecipientTarget::Contact {
                id: *contact_id,
                tenant_code: tenant_code.clone(),
                detail_id: detail_id.clone(),
            }),
            P::ChangeGroup(id) => Some(RecipientTarget::Group { id: *id }),
            _ => None,
        }
    }
}

/// Most recipients one list or notification may have: each reference is looked up on
/// every write.
pub const MAX_RECIPIENTS: usize = 1000;

/// Adds an error when there are more than `MAX_RECIPIENTS`; returns whether the count is fine.
pub fn check_recipient_count(recipients: &[Recipient], v: &mut Validator) -> bool {
    if recipients.len() > MAX_RECIPIENTS {
        v.add(
            "Recipients",
            format!(
                "at most {MAX_RECIPIENTS} recipients (got {})",
                recipients.len()
            ),
        );
        return false;
    }
    true
}

/// Parses every recipient, adding what is wrong to `v` (fields named
/// `Recipients[i].Field`), and returns the references that still need looking up.
pub fn validate_recipients(recipients: &[Recipient], v: &mut Validator) -> Vec<RecipientReference> {
    let mut references = Vec::new();
    for (index, recipient) in recipients.iter().enumerate() {
        let prefix = format!("Recipients[{index}]");
        match ParsedRecipient::parse(recipient) {
            Ok(parsed) => {
                if let Some(target) = parsed.target() {
                    references.push(RecipientReference {
                        field_prefix: prefix,
                        kind: parsed.kind(),
                        target,
                    });
                }
            }
            Err(unparsable) => {
                for problem in unparsable.problems {
                    v.add(format!("{prefix}.{}", problem.field), problem.message);
                }
            }
        }
    }
    references
}

#[cfg(test)]
#[path = "recipient_tests.rs"]
mod tests;
