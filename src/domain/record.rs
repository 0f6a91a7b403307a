//! What every record the API writes has in common — one way each (docs/decisions.md):
//!
//! - **Parsing**: a client's record arrives as its wire record (`http/records/`), whose
//!   `validated(self, context…)` checks every rule with one `Validator` (all problems
//!   reported at once) and returns the domain record — ids typed, closed sets as enums,
//!   required fields present, read-only fields dropped — with anything the check derives
//!   (a role, a shape, recipient references). Lookups a rule needs are done by the caller
//!   first and passed in as context.
//! - **Read-only fields**: `ServerFields` names the fields the server owns. PATCH refuses
//!   to touch them; PUT and POST ignore them (`validated` drops them).
//! - **Versions**: a record carries its ETag in an `etag` field (serialised as `ETag`
//!   where the contract shows one, `#[serde(skip)]` otherwise); the HTTP layer sends it
//!   as the `ETag` header and the store checks `If-Match` against it.

/// The fields the server owns.
pub trait ServerFields: Sized {
    /// The JSON roots (`/Timestamp`, …) a PATCH may not touch.
    const READ_ONLY_FIELDS: &'static [&'static str];

    /// The record without what the server owns (what a write may store).
    fn without_read_only(self) -> Self;
}
