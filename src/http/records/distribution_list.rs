//! The distribution list as clients write it (`DistributionListInput`: strict, no
//! `SyncToDevices`), and as they read it (`DistributionList`, the responses' schema).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::address_book::DistributionList;
use crate::domain::ids::DistributionListId;
use crate::domain::recipient::{
    Recipient, RecipientReference, check_recipient_count, validate_recipients,
};
use crate::domain::record::ServerFields;
use crate::domain::validation::{ValidationErrors, Validator};

/// A distribution list as written: no `SyncToDevices`, and no unknown properties.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(
    rename = "DistributionListInput",
    rename_all = "PascalCase",
    deny_unknown_fields
)]
#[schema(as = DistributionListInput)]
pub struct DistributionListInputRecord {
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
#[serde(rename = "DistributionList", rename_all = "PascalCase")]
#[schema(as = DistributionList)]
pub struct DistributionListRecord {
    pub list_id: Option<String>,
    pub list_name: Option<String>,
    pub applies_to_subtenants: bool,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_updated: Option<Timestamp>,
    pub recipients: Vec<Recipient>,
    /// True when another list of the tenant names this one in a `DeviceList` recipient.
    pub sync_to_devices: bool,
}

impl ServerFields for DistributionListInputRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["ListId", "LastUpdated"];

    fn without_read_only(mut self) -> Self {
        self.list_id = None;
        self.last_updated = None;
        self
    }
}

impl From<&DistributionList> for DistributionListInputRecord {
    fn from(l: &DistributionList) -> Self {
        DistributionListInputRecord {
            list_id: l.list_id.map(|id| id.to_string()),
            list_name: Some(l.list_name.clone()),
            applies_to_subtenants: l.applies_to_subtenants,
            last_updated: l.last_updated,
            recipients: Some(l.recipients.clone()),
        }
    }
}

impl From<&DistributionList> for DistributionListRecord {
    fn from(l: &DistributionList) -> Self {
        DistributionListRecord {
            list_id: l.list_id.map(|id| id.to_string()),
            list_name: Some(l.list_name.clone()),
            applies_to_subtenants: l.applies_to_subtenants,
            last_updated: l.last_updated,
            recipients: l.recipients.clone(),
            sync_to_devices: l.sync_to_devices,
        }
    }
}

impl DistributionListInputRecord {
    /// Checks every rule that needs no lookup (`own_id`: the list being replaced, which
    /// may not name itself); returns the list as stored and the references its recipients
    /// make, which the store resolves in the writing transaction.
    pub fn validated(
        self,
        own_id: Option<DistributionListId>,
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
        if let (Some(id), Some(recipients)) = (own_id.map(|id| id.to_string()), &self.recipients) {
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
        let (Some(name), Some(recipients)) = (self.list_name, self.recipients) else {
            // Both are required: reported above.
            return Err(ValidationErrors::single("ListName", "is required"));
        };
        let list = DistributionList {
            list_id: None,
            list_name: name.trim().to_string(),
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
    use crate::domain::recipient::RecipientType;

    fn list_naming(list_id: &str) -> DistributionListInputRecord {
        DistributionListInputRecord {
            list_name: Some(" Ops ".into()),
            recipients: Some(vec![Recipient {
                r#type: Some(RecipientType::DeviceList),
                list_id: Some(list_id.into()),
                ..Default::default()
            }]),
            ..Default::default()
        }
    }

    #[test]
    fn rules() {
        let errors = DistributionListInputRecord::default()
            .validated(None)
            .unwrap_err()
            .0;
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["ListName", "Recipients"]);
        let own = DistributionListId::new(4);
        let errors = list_naming("4").validated(Some(own)).unwrap_err().0;
        assert_eq!(errors[0].field, "Recipients[0].ListId");
        assert_eq!(errors[0].message, "a list cannot contain itself");
        let (list, references) = list_naming("5").validated(Some(own)).expect("valid");
        assert_eq!(list.list_name, "Ops");
        assert_eq!(references.len(), 1);
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let domain = DistributionList {
            list_id: Some(DistributionListId::new(9)),
            list_name: "Ops".into(),
            applies_to_subtenants: true,
            last_updated: Some("2026-01-01T00:00:00Z".parse().expect("a time")),
            recipients: list_naming("5").recipients.unwrap_or_default(),
            sync_to_devices: true,
            etag: Some("e".into()),
        };
        let json = serde_json::to_value(&domain).expect("serialises");
        let read: DistributionListRecord = serde_json::from_value(json.clone()).expect("reads");
        assert_eq!(serde_json::to_value(&read).expect("serialises"), json);
        assert_eq!(DistributionListRecord::from(&domain), read);
        // What a client reads back, less `SyncToDevices`, it may write again.
        let mut written = json.clone();
        written.as_object_mut().map(|o| o.remove("SyncToDevices"));
        let input: DistributionListInputRecord =
            serde_json::from_value(written.clone()).expect("reads");
        assert_eq!(serde_json::to_value(&input).expect("serialises"), written);
        assert_eq!(DistributionListInputRecord::from(&domain), input);
    }
}
