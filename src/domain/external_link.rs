//! External links a tenant shows its users (e.g. in a portal menu).

use serde::Serialize;

use super::ids::ExternalLinkId;

pub const NAME_MAX_CHARS: usize = 200;

/// What a client sets on a link, its rules checked (trimmed): what the store writes.
#[derive(Debug, Clone, PartialEq)]
pub struct NewExternalLink {
    pub name: String,
    /// An absolute http(s) URL (private and intranet addresses are fine here).
    pub link: String,
    /// Position in the list; lists are sorted by `Order`, then `LinkId`.
    pub order: i32,
}

/// A link as stored. `LinkId` is assigned by the server (`external_links.id`) and sent
/// as its decimal text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExternalLink {
    pub link_id: ExternalLinkId,
    pub name: String,
    pub link: String,
    pub order: i32,
}

impl ExternalLink {
    pub fn new(link_id: ExternalLinkId, fields: NewExternalLink) -> Self {
        ExternalLink {
            link_id,
            name: fields.name,
            link: fields.link,
            order: fields.order,
        }
    }
}
