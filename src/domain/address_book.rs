//! The address book: contacts and distribution lists of a tenant.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::address::ContactAddress;
use super::recipient::{Recipient, RecipientReference, check_recipient_count, validate_recipients};
use super::record::ServerFields;
use super::serde_util::null_as_default;
use super::validation::{ValidationErrors, Validator};

/// An address book contact. `SyncToDevices` is read-only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Contact {
    #[schema(read_only)]
    pub contact_id: Option<String>,
    #[schema(required = true, min_length = 1)]
    pub contact_name: Option<String>,
    /// Given to first responders in an emergency.
    #[serde(default)]
    pub is_escalation_contact: bool,
    /// Visible (read-only) in every subtenant.
    #[serde(default)]
    pub applies_to_subtenants: bool,
    /// True when a distribution list of the tenant names this contact in a
    /// `DeviceContact` recipient (devices keep it in their address book).
    #[schema(read_only)]
    pub sync_to_devices: Option<bool>,
    pub culture_name: Option<String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub contact_entries: Vec<ContactEntry>,
    /// The contact's version: the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

/// One way to reach a contact: an e-mail address or a phone number, plain or with the
/// `mail:`/`sms:` prefix (kept as sent; `ContactAddress::parse` reads it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct ContactEntry {
    /// Server-assigned; send it back to keep the entry's identity on PUT.
    pub entry_id: Option<String>,
    #[schema(example = "+447700900123")]
    pub address: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub last_updated: Option<Timestamp>,
}

impl Contact {
    /// Checks every rule; returns the contact as stored (entries get their ids from
    /// `assign_entries`).
    pub fn validated(self) -> Result<Contact, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("ContactName", self.contact_name.as_deref()) {
            v.length("ContactName", Some(name), 1, 200);
        }
        v.culture("CultureName", self.culture_name.as_deref());
        for (i, entry) in self.contact_entries.iter().enumerate() {
            let field = format!("ContactEntries[{i}].Address");
            match entry.address.as_deref().map(str::trim) {
                None | Some("") => v.add(field, "is required"),
                Some(a) => {
                    if let Err(message) = ContactAddress::parse(a) {
                        v.add(field, message);
                    }
                }
            }
        }
        v.finish()?;
        Ok(self.without_read_only())
    }

    /// The `EntryId`s of `previous` this contact no longer has.
    pub fn removed_entries(&self, previous: &[ContactEntry]) -> Vec<String> {
        previous
            .iter()
            .filter_map(|old| old.entry_id.clone())
            .filter(|id| {
                !self
                    .contact_entries
                    .iter()
                    .any(|e| e.entry_id.as_deref() == Some(id.as_str()))
            })
            .collect()
    }

    /// Gives entries their ids and times: an entry sent back with a known `EntryId` keeps
    /// it (and its `LastUpdated` unless the address changed); others get fresh ones.
    pub fn assign_entries(&mut self, previous: &[ContactEntry], now: Timestamp) {
        let mut next_id = previous
            .iter()
            .chain(self.contact_entries.iter())
            .filter_map(|e| e.entry_id.as_deref()?.parse::<i64>().ok())
            .max()
            .unwrap_or(0);
        let mut used = Vec::new();
        for entry in &mut self.contact_entries {
            let known = entry
                .entry_id
                .as_deref()
                .and_then(|id| previous.iter().find(|p| p.entry_id.as_deref() == Some(id)))
                .filter(|p| !used.contains(&p.entry_id));
            match known {
                Some(old) => {
                    used.push(old.entry_id.clone());
                    entry.last_updated = if old.address == entry.address {
                        old.last_updated
                    } else {
                        Some(now)
                    };
                }
                None => {
                    next_id += 1;
                    entry.entry_id = Some(next_id.to_string());
                    entry.last_updated = Some(now);
                }
            }
        }
    }
}

impl ServerFields for Contact {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["ContactId", "SyncToDevices"];

    fn without_read_only(mut self) -> Self {
        self.contact_id = None;
        self.sync_to_devices = None;
        self.etag = None;
        self
    }
}

/// A distribution list as written: no `SyncToDevices`, and no unknown properties.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct DistributionListInput {
    /// Ignored on write.
    #[schema(read_only)]
    pub list_id: Option<String>,
    #[schema(required = true, min_length = 1)]
    pub list_name: Option<String>,
    #[serde(default)]
    pub applies_to_subtenants: bool,
    /// Ignored on write.
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub last_updated: Option<Timestamp>,
    #[schema(required = true)]
    pub recipients: Option<Vec<Recipient>>,
}

/// A distribution list as read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct DistributionList {
    pub list_id: Option<String>,
    pub list_name: Option<String>,
    pub applies_to_subtenants: bool,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_updated: Option<Timestamp>,
    pub recipients: Vec<Recipient>,
    /// True when another list of the tenant names this one in a `DeviceList` recipient.
    pub sync_to_devices: bool,
    /// The list's version: the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

impl DistributionListInput {
    /// Checks every rule that needs no lookup (`own_id`: the list being replaced, which
    /// may not name itself); returns the list as stored and the references its recipients
    /// make, which the store resolves in the writing transaction.
    pub fn validated(
        self,
        own_id: Option<i64>,
    ) -> Result<(DistributionList, Vec<RecipientReference>), ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("ListName", self.list_name.as_deref()) {
            v.length("ListName", Some(name), 1, 200);
        }
        let references = match &self.recipients {
            None => {
                v.add("Recipients", "is required (an empty array is allowed)");
                Vec::new()
            }
            // Too many is one error; nothing is looked up then.
            Some(recipients) if !check_recipient_count(recipients, &mut v) => Vec::new(),
            Some(recipients) => validate_recipients(recipients, &mut v),
        };
        let recipients = self.recipients.unwrap_or_default();
        if let Some(id) = own_id.map(|id| id.to_string()) {
            for (i, r) in recipients.iter().enumerate() {
                if r.list_id.as_deref() == Some(id.as_str()) {
                    v.add(
                        format!("Recipients[{i}].ListId"),
                        "a list cannot contain itself",
                    );
                }
            }
        }
        v.finish()?;
        let list = DistributionList {
            list_id: None,
            list_name: self.list_name.map(|n| n.trim().to_string()),
            applies_to_subtenants: self.applies_to_subtenants,
            last_updated: None,
            recipients,
            sync_to_devices: false,
            etag: None,
        };
        Ok((list, references))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_their_identity() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-02-01T00:00:00Z".parse().unwrap();
        let mut first = Contact {
            contact_name: Some("Sam".into()),
            contact_entries: vec![
                ContactEntry {
                    address: Some("sam@example.com".into()),
                    ..Default::default()
                },
                ContactEntry {
                    address: Some("+447700900123".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        first.assign_entries(&[], t0);
        assert_eq!(first.contact_entries[0].entry_id.as_deref(), Some("1"));
        assert_eq!(first.contact_entries[1].entry_id.as_deref(), Some("2"));
        let mut second = Contact {
            contact_entries: vec![
                ContactEntry {
                    entry_id: Some("2".into()),
                    address: Some("+447700900123".into()),
                    last_updated: None,
                },
                ContactEntry {
                    entry_id: Some("1".into()),
                    address: Some("sam@new.example".into()),
                    last_updated: None,
                },
                ContactEntry {
                    entry_id: Some("99".into()),
                    address: Some("x@example.com".into()),
                    last_updated: None,
                },
            ],
            ..first.clone()
        };
        second.assign_entries(&first.contact_entries, t1);
        assert_eq!(second.contact_entries[0].last_updated, Some(t0));
        assert_eq!(second.contact_entries[1].last_updated, Some(t1));
        assert_eq!(second.contact_entries[2].entry_id.as_deref(), Some("100"));
    }

    #[test]
    fn contact_rules() {
        let bad = Contact {
            contact_name: Some(" ".into()),
            contact_entries: vec![ContactEntry {
                address: Some("nope".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(bad.validated().unwrap_err().0.len(), 2);
    }

    #[test]
    fn entry_addresses_plain_or_prefixed() {
        let with = |addresses: &[&str]| Contact {
            contact_name: Some("Ops".into()),
            contact_entries: addresses
                .iter()
                .map(|a| ContactEntry {
                    address: Some(a.to_string()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let good = [
            "ops@example.com",
            "mail:ops@example.com",
            "+441234567890",
            "sms:+441234567890",
        ];
        assert!(with(&good).validated().is_ok());
        let bad = with(&["mail:+441234567890", "ops@example.com", "sms:a@b.co"])
            .validated()
            .unwrap_err();
        let fields: Vec<_> = bad.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["ContactEntries[0].Address", "ContactEntries[2].Address"]
        );
        assert!(bad.0[0].message.contains("sms:"), "{:?}", bad.0[0]);
    }
}
