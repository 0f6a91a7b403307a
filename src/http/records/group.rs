//! The device group as clients write it (`POST`/`PUT /V2/{t}/groups`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::device::{Group, GroupFields};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::null_as_default;
use crate::domain::validation::{ValidationErrors, Validator};

/// A group of devices (notifications and reports can target a group).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "Group", rename_all = "PascalCase")]
#[schema(as = Group)]
pub struct GroupRecord {
    #[schema(read_only, example = "7")]
    pub group_id: Option<String>,
    /// Unique within the tenant.
    #[schema(required = true, min_length = 1, max_length = 100)]
    pub name: Option<String>,
    pub description: Option<String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
}

impl GroupRecord {
    /// Checks every rule; returns what the client set, the name trimmed.
    pub fn validated(self) -> Result<GroupFields, ValidationErrors> {
        let mut v = Validator::new();
        let name = v.required("Name", self.name.as_deref()).map(str::trim);
        if let Some(name) = name {
            v.length("Name", Some(name), 1, 100);
        }
        v.length("Description", self.description.as_deref(), 0, 1000);
        let name = name.map(str::to_string);
        v.finish()?;
        Ok(GroupFields {
            // `required` added its error when there is no name, so `finish` returned it.
            name: name.ok_or_else(|| ValidationErrors::single("Name", "is required"))?,
            description: self.description,
            properties: self.properties,
        })
    }
}

impl ServerFields for GroupRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["GroupId", "Timestamp", "ETag"];

    fn without_read_only(mut self) -> Self {
        self.group_id = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

impl From<&Group> for GroupRecord {
    fn from(group: &Group) -> Self {
        GroupRecord {
            group_id: Some(group.group_id.to_string()),
            name: Some(group.name.clone()),
            description: group.description.clone(),
            properties: group.properties.clone(),
            timestamp: Some(group.timestamp),
            etag: Some(group.etag.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::GroupId;

    #[test]
    fn wire_form_matches_the_domain_form() {
        let group = Group {
            group_id: GroupId::new(7),
            name: "Vans".to_string(),
            description: Some("The delivery vans".to_string()),
            properties: [("Depot".to_string(), "North".to_string())].into(),
            timestamp: Timestamp::from_second(1_700_000_000).expect("in range"),
            etag: "W/\"3\"".to_string(),
        };
        let domain = serde_json::to_string(&group).expect("serialises");
        let wire: GroupRecord = serde_json::from_str(&domain).expect("reads as the wire record");
        assert_eq!(serde_json::to_string(&wire).expect("serialises"), domain);
        assert_eq!(GroupRecord::from(&group), wire);
        assert_eq!(wire.validated().expect("valid"), group.fields());
    }

    #[test]
    fn group_rules() {
        let named = |name: &str| GroupRecord {
            name: Some(name.to_string()),
            ..Default::default()
        };
        assert_eq!(named(" Vans ").validated().expect("valid").name, "Vans");
        let fields = |g: GroupRecord| -> Vec<String> {
            g.validated()
                .unwrap_err()
                .0
                .into_iter()
                .map(|e| e.field)
                .collect()
        };
        assert_eq!(fields(GroupRecord::default()), ["Name"]);
        assert_eq!(fields(named("   ")), ["Name"]);
        let long = GroupRecord {
            description: Some("x".repeat(1001)),
            ..named(&"n".repeat(101))
        };
        assert_eq!(fields(long), ["Name", "Description"]);
    }
}
