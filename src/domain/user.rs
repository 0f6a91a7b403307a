//! User accounts: what a client sets (`UserFields`), the part kept as a document
//! (`UserDetails`) and the account as stored and sent (`User`).

use std::collections::BTreeMap;
use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize, Serializer};

use super::access::Role;
use super::closed_set::closed_set;
use super::ids::{TenantCode, UserId};
use super::serde_util::null_as_default;

closed_set! {
    /// A user's `Gender`.
    pub enum Gender {
        Male = "Male",
        Female = "Female",
        Transgender = "Transgender",
        NonBinary = "Non-Binary",
        Other = "Other",
    }
}

/// Largest accepted photo, as Base64 text (≈ 3 MiB of image).
pub const MAX_PHOTO_BASE64_CHARS: usize = 4 * 1024 * 1024;

/// A password as a client sent it, policy checked: it is hashed and never stored or
/// shown, so its `Debug` does not print it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// A password that passed `password::check_policy`.
    pub fn checked(text: String) -> Self {
        Self(text)
    }

    /// The text, for hashing.
    pub fn into_text(self) -> String {
        self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(…)")
    }
}

/// The `Password` field of a record as sent: write-only, so always `null`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOnly;

impl Serialize for WriteOnly {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_none()
    }
}

/// What a user's record holds beyond its own columns: the part kept as the `doc` JSON
/// document (PascalCase, as written by every version; other keys are ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserDetails {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    #[serde(default = "approved_unless_said")]
    pub is_approved: bool,
    #[serde(default)]
    pub is_portal_enabled: bool,
    pub cross_tenant_collections: Option<String>,
    pub pin_code: Option<String>,
    pub notes: Option<String>,
    pub manager_user_id: Option<UserId>,
    pub gender: Option<Gender>,
    pub job_title: Option<String>,
    pub employee_id: Option<String>,
    pub facility_id: Option<String>,
    pub secondary_facility_ids: Option<Vec<String>>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub custom_fields: BTreeMap<String, String>,
}

impl Default for UserDetails {
    fn default() -> Self {
        Self {
            first_name: None,
            last_name: None,
            is_approved: approved_unless_said(),
            is_portal_enabled: false,
            cross_tenant_collections: None,
            pin_code: None,
            notes: None,
            manager_user_id: None,
            gender: None,
            job_title: None,
            employee_id: None,
            facility_id: None,
            secondary_facility_ids: None,
            tags: BTreeMap::new(),
            custom_fields: BTreeMap::new(),
        }
    }
}

/// `IsApproved` is `true` when a record leaves it out.
pub fn approved_unless_said() -> bool {
    true
}

/// A user as a client sets it, validated: what the store writes.
#[derive(Debug, Clone)]
pub struct UserFields {
    pub username: String,
    /// A new password (required on create; `None` on a replacement keeps the old one).
    pub password: Option<Password>,
    pub role: Role,
    pub is_disabled: bool,
    /// Base64; on a replacement `None` keeps the stored photo and `""` removes it.
    pub photo: Option<String>,
    pub details: UserDetails,
}

/// A user account as stored and sent, in the API's key order. `Password` is always
/// `null`; `Photo` is filled only when asked for.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct User {
    pub tenant_code: TenantCode,
    pub username: String,
    pub user_id: UserId,
    pub password: WriteOnly,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub user_role_id: Role,
    pub is_approved: bool,
    pub is_disabled: bool,
    pub is_portal_enabled: bool,
    pub failed_password_attempt_count: i32,
    pub failed_password_attempt_window_start: Option<Timestamp>,
    pub last_lockout_date: Option<Timestamp>,
    pub last_logged_in: Option<Timestamp>,
    pub cross_tenant_collections: Option<String>,
    pub pin_code: Option<String>,
    pub timestamp: Option<Timestamp>,
    pub photo: Option<String>,
    pub notes: Option<String>,
    pub manager_user_id: Option<UserId>,
    pub gender: Option<Gender>,
    pub job_title: Option<String>,
    pub employee_id: Option<String>,
    pub facility_id: Option<String>,
    pub secondary_facility_ids: Option<Vec<String>>,
    #[serde(rename = "ETag")]
    pub etag: String,
    pub tags: BTreeMap<String, String>,
    pub custom_fields: BTreeMap<String, String>,
}

/// What the server keeps of a user besides its details (its own columns).
#[derive(Debug, Clone)]
pub struct UserAccount {
    pub tenant_code: TenantCode,
    pub username: String,
    pub user_id: UserId,
    pub role: Role,
    pub is_disabled: bool,
    pub failed_password_attempt_count: i32,
    pub failed_password_attempt_window_start: Option<Timestamp>,
    pub last_lockout_date: Option<Timestamp>,
    pub last_logged_in: Option<Timestamp>,
    pub timestamp: Option<Timestamp>,
    pub photo: Option<String>,
    pub etag: String,
}

impl User {
    /// The account's columns and its document, as one record.
    pub fn new(account: UserAccount, details: UserDetails) -> Self {
        let UserDetails {
            first_name,
            last_name,
            is_approved,
            is_portal_enabled,
            cross_tenant_collections,
            pin_code,
            notes,
            manager_user_id,
            gender,
            job_title,
            employee_id,
            facility_id,
            secondary_facility_ids,
            tags,
            custom_fields,
        } = details;
        User {
            tenant_code: account.tenant_code,
            username: account.username,
            user_id: account.user_id,
            password: WriteOnly,
            first_name,
            last_name,
            user_role_id: account.role,
            is_approved,
            is_disabled: account.is_disabled,
            is_portal_enabled,
            failed_password_attempt_count: account.failed_password_attempt_count,
            failed_password_attempt_window_start: account.failed_password_attempt_window_start,
            last_lockout_date: account.last_lockout_date,
            last_logged_in: account.last_logged_in,
            cross_tenant_collections,
            pin_code,
            timestamp: account.timestamp,
            photo: account.photo,
            notes,
            manager_user_id,
            gender,
            job_title,
            employee_id,
            facility_id,
            secondary_facility_ids,
            etag: account.etag,
            tags,
            custom_fields,
        }
    }

    /// Canonical (case-insensitive) form of a username, the key it is unique by.
    pub fn username_key(username: &str) -> String {
        username.trim().to_lowercase()
    }
}

/// How a path names a user: `x` containing `@` is a username, else a user id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserRef {
    Id(UserId),
    Username(String),
    /// Neither a number nor an e-mail: matches nobody.
    Invalid,
}

impl UserRef {
    pub fn parse(segment: &str) -> Self {
        if segment.contains('@') {
            UserRef::Username(User::username_key(segment))
        } else {
            segment
                .parse::<UserId>()
                .map(UserRef::Id)
                .unwrap_or(UserRef::Invalid)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_refs() {
        assert_eq!(UserRef::parse("12"), UserRef::Id(UserId::new(12)));
        assert_eq!(
            UserRef::parse("Jane@Example.com"),
            UserRef::Username("jane@example.com".into())
        );
        assert_eq!(UserRef::parse("abc"), UserRef::Invalid);
    }

    #[test]
    fn details_read_documents_with_server_keys() {
        let doc = r#"{"TenantCode":null,"UserId":null,"Password":null,"FirstName":"Jane",
            "IsDisabled":false,"ManagerUserId":"7","Gender":"Non-Binary","Tags":null}"#;
        let details: UserDetails = serde_json::from_str(doc).expect("a document");
        assert_eq!(details.first_name.as_deref(), Some("Jane"));
        assert!(details.is_approved);
        assert_eq!(details.manager_user_id, Some(UserId::new(7)));
        assert_eq!(details.gender, Some(Gender::NonBinary));
        assert!(serde_json::from_str::<UserDetails>(r#"{"ManagerUserId":"x"}"#).is_err());
    }
}
