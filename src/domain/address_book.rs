//! The address book: contacts and distribution lists of a tenant.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::recipient::{Recipient, check_recipient_count};
use super::serde_util::null_as_default;
use super::validation::{ValidationErrors, Validator, is_email, is_phone};

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
    #[serde(default, deserialize_with = "null_as_default")]
    pub contact_entries: Vec<ContactEntry>,
}

/// One way to reach a contact: an e-mail address or a phone number.
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
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("ContactName", self.contact_name.as_deref()) {
            v.length("ContactName", Some(name), 1, 200);
        }
        v.culture("CultureName", self.culture_name.as_deref());
        for (i, entry) in self.contact_entries.iter().enumerate() {
            let field = format!("ContactEntries[{i}].Address");
            match entry.address.as_deref().map(str::trim) {
                None | Some("") => v.add(field, "is required"),
                Some(a) if !(is_email(a) || is_phone(a)) => v.add(
                    field,
                    format!(
                        "'{a}' is neither an e-mail address nor a phone number starting with +"
                    ),
                ),
                Some(_) => {}
            }
        }
        v.finish()
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
}

impl DistributionListInput {
    /// Validates what needs no lookup (recipients are checked against the store too).
    pub fn validate(&self, v: &mut Validator) {
        if let Some(name) = v.required("ListName", self.list_name.as_deref()) {
            v.length("ListName", Some(name), 1, 200);
        }
        match &self.recipients {
            None => v.add("Recipients", "is required (an empty array is allowed)"),
            Some(recipients) => {
                check_recipient_count(recipients, v);
            }
        }
    }

    pub fn into_list(self) -> DistributionList {
        DistributionList {
            list_id: None,
            list_name: self.list_name.map(|n| n.trim().to_string()),
            applies_to_subtenants: self.applies_to_subtenants,
            last_updated: None,
            recipients: self.recipients.unwrap_or_default(),
            sync_to_devices: false,
        }
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
        assert_eq!(bad.validate().unwrap_err().0.len(), 2);
    }
}
