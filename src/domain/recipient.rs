//! Recipients of distribution lists and event notifications: who or what a notification
//! reaches. Each `Type` carries only its own fields (docs/api.md; the OpenAPI `Recipient` schema).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::address::ContactAddress;
use super::closed_set::closed_set;
use super::ids::{ContactId, DistributionListId, GroupId};
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
        tenant_code: Option<String>,
    },
    Contact {
        id: ContactId,
        tenant_code: Option<String>,
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContactTarget {
    pub owner: String,
    pub entries: Vec<String>,
}

/// The records a set of references name that exist and are visible from the tenant
/// (found by the store): lists and contacts by id with their owner, group ids.
#[derive(Debug, Clone, Default)]
pub struct ReferencedRecords {
    pub lists: HashMap<DistributionListId, String>,
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
                Some(owner) if tenant_code.as_ref().is_some_and(|t| t != owner) => v.add(
                    format!("{prefix}.TenantCode"),
                    format!(
                        "list {id} does not belong to tenant {}",
                        tenant_code.as_deref().unwrap_or_default()
                    ),
                ),
                Some(_) => {}
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
                    if tenant_code.as_ref().is_some_and(|t| *t != contact.owner) {
                        v.add(
                            format!("{prefix}.TenantCode"),
                            format!(
                                "contact {id} does not belong to tenant {}",
                                tenant_code.as_deref().unwrap_or_default()
                            ),
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
pub const MAX_MINUTES: f64 = 10_080.0;
/// Largest `Radius`, in kilometres: half the Earth's circumference.
pub const MAX_RADIUS_KM: f64 = 20_000.0;

/// A numeric field's value within its range, or what is wrong with it. Checked on save
/// and again at fire time, where a value stored before the ranges existed is skipped.
fn in_range(field: Field, raw: &str) -> Result<f64, String> {
    let number = raw.trim().parse::<f64>().ok().filter(|n| n.is_finite());
    match field {
        Field::Radius => number
            .filter(|n| *n > 0.0 && *n <= MAX_RADIUS_KM)
            .ok_or_else(|| {
                format!("must be a number of kilometres above 0 and at most {MAX_RADIUS_KM}")
            }),
        _ => number
            .filter(|n| (1.0..=MAX_MINUTES).contains(n))
            .ok_or_else(|| format!("must be a number of minutes from 1 to {MAX_MINUTES}")),
    }
}

impl Recipient {
    /// `Radius` in kilometres, if within range.
    pub fn radius_km(&self) -> Result<f64, String> {
        in_range(Field::Radius, self.radius.as_deref().unwrap_or_default())
    }

    /// `Interval` in minutes, if within range.
    pub fn interval_minutes(&self) -> Result<f64, String> {
        in_range(
            Field::Interval,
            self.interval.as_deref().unwrap_or_default(),
        )
    }

    /// `ReportingFrequency` in minutes, if within range.
    pub fn reporting_frequency_minutes(&self) -> Result<f64, String> {
        in_range(
            Field::ReportingFrequency,
            self.reporting_frequency.as_deref().unwrap_or_default(),
        )
    }
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

/// Checks every recipient's own rules into `v` (fields named `Recipients[i].Field`) and
/// returns the references that still need looking up.
pub fn validate_recipients(recipients: &[Recipient], v: &mut Validator) -> Vec<RecipientReference> {
    let mut references = Vec::new();
    for (index, recipient) in recipients.iter().enumerate() {
        let prefix = format!("Recipients[{index}]");
        let Some(kind) = recipient.r#type else {
            v.add(format!("{prefix}.Type"), "is required");
            continue;
        };
        let (allowed, required) = kind.fields();
        for field in ALL_FIELDS {
            let value = recipient.value(field);
            let name = format!("{prefix}.{}", field.name());
            if value.is_some() && !allowed.contains(&field) {
                v.add(name, format!("is not allowed on a {kind} recipient"));
            } else if value.is_none_or(|s| s.trim().is_empty()) && required.contains(&field) {
                v.add(name, format!("is required on a {kind} recipient"));
            }
        }
        if let Some(address) = recipient.messaging_address.as_deref()
            && allowed.contains(&Field::MessagingAddress)
        {
            check_messaging_address(&format!("{prefix}.MessagingAddress"), address, v);
        }
        for field in [Field::Radius, Field::ReportingFrequency, Field::Interval] {
            if let Some(value) = recipient.value(field)
                && allowed.contains(&field)
                && let Err(message) = in_range(field, value)
            {
                v.add(format!("{prefix}.{}", field.name()), message);
            }
        }
        let id_of = |field: Field, v: &mut Validator| -> Option<i64> {
            let raw = recipient.value(field)?;
            match raw.trim().parse::<i64>() {
                Ok(id) => Some(id),
                Err(_) => {
                    v.add(
                        format!("{prefix}.{}", field.name()),
                        format!("'{raw}' is not an id"),
                    );
                    None
                }
            }
        };
        let target = match kind {
            RecipientType::DeviceList | RecipientType::TenantList => {
                id_of(Field::ListId, v).map(|id| RecipientTarget::List {
                    id: DistributionListId::new(id),
                    tenant_code: recipient.tenant_code.clone(),
                })
            }
            RecipientType::DeviceContact | RecipientType::TenantContact => {
                id_of(Field::ContactId, v).map(|id| RecipientTarget::Contact {
                    id: ContactId::new(id),
                    tenant_code: recipient.tenant_code.clone(),
                    detail_id: recipient.contact_detail_id.clone(),
                })
            }
            RecipientType::ChangeGroup => {
                id_of(Field::GroupId, v).map(|id| RecipientTarget::Group {
                    id: GroupId::new(id),
                })
            }
            _ => None,
        };
        if let Some(target) = target {
            references.push(RecipientReference {
                field_prefix: prefix,
                kind,
                target,
            });
        }
    }
    references
}

fn check_messaging_address(field: &str, address: &str, v: &mut Validator) {
    if let Err(message) = ContactAddress::parse_prefixed(address) {
        v.add(field, message);
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(interval("90").interval_minutes(), Ok(90.0));
        assert!(interval("1e18").interval_minutes().is_err());
        assert!(radius("1e9").radius_km().is_err());
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
}
