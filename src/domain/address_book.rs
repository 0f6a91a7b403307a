//! The address book: contacts and distribution lists of a tenant.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::ids::{ContactId, DistributionListId};
use super::recipient::Recipient;
use super::serde_util::null_as_default;

/// An address book contact, checked: it has a name, a known culture, and every entry's
/// address reads (`ContactAddress::parse`). Stored as this document, with `ContactId`
/// and `SyncToDevices` null (the row's id is the id; syncing is derived when shown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Contact {
    /// Set when the contact is shown (`None` as stored).
    pub contact_id: Option<ContactId>,
    pub contact_name: String,
    #[serde(default)]
    pub is_escalation_contact: bool,
    #[serde(default)]
    pub applies_to_subtenants: bool,
    /// Set when the contact is shown (`None` as stored).
    pub sync_to_devices: Option<bool>,
    pub culture_name: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub contact_entries: Vec<ContactEntry>,
    /// The contact's version: the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

/// One way to reach a contact: an e-mail address or a phone number, plain or with the
/// `mail:`/`sms:` prefix (kept as sent; `ContactAddress::parse` reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ContactEntry {
    /// `None` only before `assign_entries` gave it one (or kept the one sent back).
    pub entry_id: Option<String>,
    pub address: String,
    /// `None` only before `assign_entries`.
    pub last_updated: Option<Timestamp>,
}

impl Contact {
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

/// A distribution list, checked: it has a name and its recipients follow their rules
/// (what they name is checked by the store when it is written). Stored as this
/// document, with `ListId` and `LastUpdated` null and `SyncToDevices` false (the row
/// has them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DistributionList {
    /// Set when the list is shown (`None` as stored).
    pub list_id: Option<DistributionListId>,
    /// Trimmed.
    pub list_name: String,
    #[serde(default)]
    pub applies_to_subtenants: bool,
    pub last_updated: Option<Timestamp>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub recipients: Vec<Recipient>,
    /// True when another list of the tenant names this one in a `DeviceList` recipient
    /// (set when the list is shown).
    #[serde(default)]
    pub sync_to_devices: bool,
    /// The list's version: the `ETag` header only.
    #[serde(skip)]
    pub etag: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: Option<&str>, address: &str) -> ContactEntry {
        ContactEntry {
            entry_id: id.map(str::to_string),
            address: address.into(),
            last_updated: None,
        }
    }

    #[test]
    fn entries_keep_their_identity() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-02-01T00:00:00Z".parse().unwrap();
        let mut first = Contact {
            contact_id: None,
            contact_name: "Sam".into(),
            is_escalation_contact: false,
            applies_to_subtenants: false,
            sync_to_devices: None,
            culture_name: None,
            contact_entries: vec![entry(None, "sam@example.com"), entry(None, "+447700900123")],
            etag: None,
        };
        first.assign_entries(&[], t0);
        assert_eq!(first.contact_entries[0].entry_id.as_deref(), Some("1"));
        assert_eq!(first.contact_entries[1].entry_id.as_deref(), Some("2"));
        let mut second = Contact {
            contact_entries: vec![
                entry(Some("2"), "+447700900123"),
                entry(Some("1"), "sam@new.example"),
                entry(Some("99"), "x@example.com"),
            ],
            ..first.clone()
        };
        second.assign_entries(&first.contact_entries, t1);
        assert_eq!(second.contact_entries[0].last_updated, Some(t0));
        assert_eq!(second.contact_entries[1].last_updated, Some(t1));
        assert_eq!(second.contact_entries[2].entry_id.as_deref(), Some("100"));
        assert!(second.removed_entries(&first.contact_entries).is_empty());
        second.contact_entries.remove(0);
        assert_eq!(second.removed_entries(&first.contact_entries), ["2"]);
    }

    #[test]
    fn stored_documents_read_back() {
        let doc = r#"{"ContactId":null,"ContactName":"Sam","IsEscalationContact":true,
            "AppliesToSubtenants":false,"SyncToDevices":null,"CultureName":null,
            "ContactEntries":[{"EntryId":"1","Address":"sam@example.com",
            "LastUpdated":"2026-01-01T00:00:00Z"}]}"#;
        let contact: Contact = serde_json::from_str(doc).expect("reads");
        assert!(contact.is_escalation_contact);
        let doc: serde_json::Value = serde_json::from_str(doc).expect("json");
        assert_eq!(serde_json::to_value(&contact).expect("serialises"), doc);
        let doc = r#"{"ListId":null,"ListName":"Ops","AppliesToSubtenants":true,
            "LastUpdated":null,"Recipients":[],"SyncToDevices":false}"#;
        let list: DistributionList = serde_json::from_str(doc).expect("reads");
        assert_eq!(list.list_name, "Ops");
        let doc: serde_json::Value = serde_json::from_str(doc).expect("json");
        assert_eq!(serde_json::to_value(&list).expect("serialises"), doc);
    }
}
