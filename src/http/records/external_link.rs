//! An external link as clients write it (`POST /V2/{t}/tenantexternallinks`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::external_link::{ExternalLink, NAME_MAX_CHARS, NewExternalLink};
use crate::domain::record::ServerFields;
use crate::domain::validation::{ValidationErrors, Validator};
use crate::domain::webhook::parse_http_url;

/// A link. `LinkId` is assigned by the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "ExternalLink", rename_all = "PascalCase")]
#[schema(as = ExternalLink)]
pub struct ExternalLinkRecord {
    #[schema(read_only, example = "3")]
    pub link_id: Option<String>,
    #[schema(
        required = true,
        min_length = 1,
        max_length = 200,
        example = "Safety handbook"
    )]
    pub name: Option<String>,
    /// Absolute http(s) URL (private and intranet addresses are fine here).
    #[schema(
        required = true,
        min_length = 1,
        example = "https://intranet.example.com/safety"
    )]
    pub link: Option<String>,
    /// Position in the list; lists are sorted by `Order`, then `LinkId`.
    #[schema(required = true, example = 1)]
    pub order: Option<i32>,
}

impl ServerFields for ExternalLinkRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &["LinkId"];

    fn without_read_only(mut self) -> Self {
        self.link_id = None;
        self
    }
}

impl ExternalLinkRecord {
    /// Checks every rule; returns the link to store (trimmed; a sent `LinkId` is ignored).
    pub fn validated(self) -> Result<NewExternalLink, ValidationErrors> {
        let mut v = Validator::new();
        let name = v.required("Name", self.name.as_deref()).map(str::trim);
        v.length("Name", name, 1, NAME_MAX_CHARS);
        let link = v.required("Link", self.link.as_deref()).map(str::trim);
        if let Some(link) = link
            && let Err(message) = parse_http_url(link)
        {
            v.add("Link", message);
        }
        if self.order.is_none() {
            v.add("Order", "is required");
        }
        v.finish()?;
        match (name, link, self.order) {
            (Some(name), Some(link), Some(order)) => Ok(NewExternalLink {
                name: name.to_string(),
                link: link.to_string(),
                order,
            }),
            // Each missing one added its error, so `finish` returned it.
            _ => Err(ValidationErrors::single("Name", "is required")),
        }
    }
}

impl From<&ExternalLink> for ExternalLinkRecord {
    fn from(link: &ExternalLink) -> Self {
        ExternalLinkRecord {
            link_id: Some(link.link_id.to_string()),
            name: Some(link.name.clone()),
            link: Some(link.link.clone()),
            order: Some(link.order),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::ExternalLinkId;

    fn link(name: Option<&str>, url: Option<&str>, order: Option<i32>) -> ExternalLinkRecord {
        ExternalLinkRecord {
            link_id: Some("9".into()),
            name: name.map(Into::into),
            link: url.map(Into::into),
            order,
        }
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let stored = ExternalLink {
            link_id: ExternalLinkId::new(3),
            name: "Handbook".into(),
            link: "https://example.com/h".into(),
            order: -1,
        };
        let domain = serde_json::to_string(&stored).expect("serialises");
        assert_eq!(
            domain,
            r#"{"LinkId":"3","Name":"Handbook","Link":"https://example.com/h","Order":-1}"#
        );
        let wire: ExternalLinkRecord = serde_json::from_str(&domain).expect("reads");
        assert_eq!(serde_json::to_string(&wire).expect("serialises"), domain);
        assert_eq!(ExternalLinkRecord::from(&stored), wire);
    }

    #[test]
    fn valid_link_is_trimmed() {
        let stored = link(Some(" Handbook "), Some("http://10.0.0.5/h"), Some(0))
            .validated()
            .unwrap();
        assert_eq!(stored.name, "Handbook");
        assert_eq!(stored.order, 0);
    }

    #[test]
    fn every_error_listed() {
        let fields: Vec<_> = link(Some(""), Some("ftp://example.com"), None)
            .validated()
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["Name", "Link", "Order"]);
        assert!(
            link(Some("a"), Some("not a url"), Some(1))
                .validated()
                .is_err()
        );
        assert!(
            link(Some("a"), Some("javascript:alert(1)"), Some(1))
                .validated()
                .is_err()
        );
    }
}
