//! The address-book contact as clients write it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::address::ContactAddress;
use crate::domain::address_book::{Contact, ContactEntry};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::null_as_default;
use crate::domain::validation::{ValidationErrors, Validator};

/// An address book contact. `SyncToDevices` is read-only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Contact", rename_all = "PascalCase")]
#[schema(as = Contact)]
pub struct ContactRecord {
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
    pub contact_entries: Vec<ContactEntryRecord>,
}

/// One way to reach a contact: an e-mail address or a phone number, plain or with the
/// `mail:`/`sms:` prefix (kept as sent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "ContactEntry", rename_all = "PascalCase")]
#[schema(as = ContactEntry)]
pub struct ContactEntryRecord {
    /// Server-assigned; send it back to keep the entry's identity on PUT.
    pub entry_id: Option<String>,
    #[schema(example = "+447700900123")]
    pub address: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub last_updated: Option<Timestamp>,
}

impl ServerFields for ContactRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["ContactId", "SyncToDevices"];

    fn without_read_only(mut self) -> Self {
        self.contact_id = None;
        self.sync_to_devices = None;
        self
    }
}

impl From<&Contact> for ContactRecord {
    fn from(c: &Contact) -> Self {
        ContactRecord {
            contact_id: c.contact_id.map(|id| id.to_string()),
            contact_name: Some(c.contact_name.clone()),
            is_escalation_contact: c.is_escalation_contact,
            applies_to_subtenants: c.applies_to_subtenants,
            sync_to_devices: c.sync_to_devices,
            culture_name: c.culture_name.clone(),
            contact_entries: c
                .contact_entries
                .iter()
                .map(|e| ContactEntryRecord {
                    entry_id: e.entry_id.clone(),
                    address: Some(e.address.clone()),
                    last_updated: e.last_updated,
                })
                .collect(),
        }
    }
}

impl ContactRecord {
    /// Checks every rule; returns the contact as stored (entries get their ids and
    /// times from `Contact::assign_entries`; a `LastUpdated` sent is ignored).
    pub fn validated(self) -> Result<Contact, ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("ContactName", self.contact_name.as_deref()) {
            v.length("ContactName", Some(name), 1, 200);
        }
        v.culture("CultureName", self.culture_name.as_deref());
        let mut entries = Vec::with_capacity(self.contact_entries.len());
        for (i, entry) in self.contact_entries.into_iter().enumerate() {
            let field = format!("ContactEntries[{i}].Address");
            match entry.address {
                Some(a) if !a.trim().is_empty() => {
                    if let Err(message) = ContactAddress::parse(a.trim()) {
                        v.add(field, message);
                    }
                    entries.push(ContactEntry {
                        entry_id: entry.entry_id,
                        address: a,
                        last_updated: entry.last_updated,
                    });
                }
                _ => v.add(field, "is required"),
            }
        }
        v.finish()?;
        let Some(contact_name) = self.contact_name else {
            return Err(ValidationErrors::single("ContactName", "is required"));
        };
        Ok(Contact {
            contact_id: None,
            contact_name,
            is_escalation_contact: self.is_escalation_contact,
            applies_to_subtenants: self.applies_to_subtenants,
            sync_to_devices: None,
            culture_name: self.culture_name,
            contact_entries: entries,
            etag: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::ContactId;

    #[test]
    fn contact_rules() {
        let bad = ContactRecord {
            contact_name: Some(" ".into()),
            contact_entries: vec![ContactEntryRecord {
                address: Some("nope".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(bad.validated().unwrap_err().0.len(), 2);
        let blank = ContactRecord {
            contact_name: Some("Sam".into()),
            contact_entries: vec![ContactEntryRecord::default()],
            ..Default::default()
        };
        let errors = blank.validated().unwrap_err().0;
        assert_eq!(errors[0].field, "ContactEntries[0].Address");
        assert_eq!(errors[0].message, "is required");
    }

    #[test]
    fn entry_addresses_plain_or_prefixed() {
        let with = |addresses: &[&str]| ContactRecord {
            contact_name: Some("Ops".into()),
            contact_entries: addresses
                .iter()
                .map(|a| ContactEntryRecord {
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

    #[test]
    fn validated_drops_what_the_server_owns() {
        let contact = ContactRecord {
            contact_id: Some("4".into()),
            contact_name: Some(" Sam ".into()),
            sync_to_devices: Some(true),
            ..Default::default()
        }
        .validated()
        .expect("valid");
        assert_eq!(contact.contact_id, None);
        assert_eq!(contact.sync_to_devices, None);
        assert_eq!(contact.contact_name, " Sam ");
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let domain = Contact {
            contact_id: Some(ContactId::new(3)),
            contact_name: "Sam".into(),
            is_escalation_contact: true,
            applies_to_subtenants: true,
            sync_to_devices: Some(true),
            culture_name: Some("en-GB".into()),
            contact_entries: vec![ContactEntry {
                entry_id: Some("1".into()),
                address: "mail:sam@example.com".into(),
                last_updated: Some("2026-01-01T00:00:00Z".parse().expect("a time")),
            }],
            etag: Some("e".into()),
        };
        let json = serde_json::to_value(&domain).expect("serialises");
        let wire: ContactRecord = serde_json::from_value(json.clone()).expect("reads");
        assert_eq!(serde_json::to_value(&wire).expect("serialises"), json);
        assert_eq!(ContactRecord::from(&domain), wire);
    }
}
