//! External links a tenant shows its users (e.g. in a portal menu).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::validation::{ValidationErrors, Validator};
use super::webhook::parse_http_url;

pub const NAME_MAX_CHARS: usize = 200;

/// A link. `LinkId` is assigned by the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct ExternalLink {
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

impl ExternalLink {
    /// Checks every rule; returns the link as stored (trimmed, without `LinkId`).
    pub fn validated(self) -> Result<ExternalLink, ValidationErrors> {
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
        Ok(ExternalLink {
            link_id: None,
            name: name.map(str::to_string),
            link: link.map(str::to_string),
            order: self.order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(name: Option<&str>, url: Option<&str>, order: Option<i32>) -> ExternalLink {
        ExternalLink {
            link_id: Some("9".into()),
            name: name.map(Into::into),
            link: url.map(Into::into),
            order,
        }
    }

    #[test]
    fn valid_link_is_trimmed_and_loses_its_id() {
        let stored = link(Some(" Handbook "), Some("http://10.0.0.5/h"), Some(0))
            .validated()
            .unwrap();
        assert_eq!(stored.name.as_deref(), Some("Handbook"));
        assert!(stored.link_id.is_none());
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
