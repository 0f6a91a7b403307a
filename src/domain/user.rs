//! User accounts and their validation.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::Role;
use super::ids::UserId;
use super::password;
use super::record::ServerFields;
use super::serde_util::null_as_default;
use super::validation::{ValidationErrors, Validator};

pub const GENDERS: [&str; 5] = ["Male", "Female", "Transgender", "Non-Binary", "Other"];

/// A user account. `Password` is write-only (always `null` on GET); `Photo` is returned
/// only with `photo=true`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct User {
    #[schema(read_only)]
    pub tenant_code: Option<String>,
    /// E-mail address used as login; unique across the platform.
    #[schema(required = true, format = Email, example = "jane@example.com")]
    pub username: Option<String>,
    #[schema(read_only, example = "42")]
    pub user_id: Option<String>,
    /// Write-only: at least 10 characters. Required on POST; omit on PUT to keep it.
    /// Always `null` on read (the field is kept in responses, with no value).
    #[schema(min_length = 10)]
    pub password: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    /// Administrator, Manager, User or ReadOnly. Optional: `User` when a POST omits it; a
    /// PUT that omits it keeps the stored role.
    #[schema(example = "User", pattern = "^(Administrator|Manager|User|ReadOnly)$")]
    pub user_role_id: Option<String>,
    /// Whether an administrator has approved the account (e.g. after onboarding checks):
    /// a record of the organisation's own process, shown to clients, which does not
    /// decide whether the user can log in — `IsDisabled` does. `true` when omitted.
    #[serde(default = "approved_unless_said")]
    #[schema(default = true)]
    pub is_approved: bool,
    /// A disabled user cannot log in.
    #[serde(default)]
    pub is_disabled: bool,
    #[serde(default)]
    pub is_portal_enabled: bool,
    #[serde(default)]
    #[schema(read_only)]
    pub failed_password_attempt_count: i32,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub failed_password_attempt_window_start: Option<Timestamp>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub last_lockout_date: Option<Timestamp>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub last_logged_in: Option<Timestamp>,
    pub cross_tenant_collections: Option<String>,
    pub pin_code: Option<String>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
    /// Base64 profile photo.
    #[schema(format = Byte)]
    pub photo: Option<String>,
    pub notes: Option<String>,
    /// Must name an existing user within the caller's tenant subtree.
    pub manager_user_id: Option<String>,
    /// One of Male, Female, Transgender, Non-Binary, Other.
    #[schema(pattern = "^(Male|Female|Transgender|Non-Binary|Other)$")]
    pub gender: Option<String>,
    pub job_title: Option<String>,
    pub employee_id: Option<String>,
    pub facility_id: Option<String>,
    pub secondary_facility_ids: Option<Vec<String>>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: BTreeMap<String, String>,
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub custom_fields: BTreeMap<String, String>,
}

impl ServerFields for User {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[
        "TenantCode",
        "UserId",
        "FailedPasswordAttemptCount",
        "FailedPasswordAttemptWindowStart",
        "LastLockoutDate",
        "LastLoggedIn",
        "Timestamp",
        "ETag",
    ];

    fn without_read_only(mut self) -> Self {
        self.tenant_code = None;
        self.user_id = None;
        self.failed_password_attempt_count = 0;
        self.failed_password_attempt_window_start = None;
        self.last_lockout_date = None;
        self.last_logged_in = None;
        self.timestamp = None;
        self.etag = None;
        self
    }
}

fn approved_unless_said() -> bool {
    true
}

/// Largest accepted photo, as Base64 text (≈ 3 MiB of image).
pub const MAX_PHOTO_BASE64_CHARS: usize = 4 * 1024 * 1024;

impl User {
    /// Checks every rule (`password_required` on create); returns the user as stored
    /// and its parsed role (default `User`).
    pub fn validated(self, password_required: bool) -> Result<(User, Role), ValidationErrors> {
        let mut v = Validator::new();
        if let Some(u) = v.required("Username", self.username.as_deref()) {
            v.email("Username", Some(u));
            v.length("Username", Some(u), 3, 254);
        }
        match (&self.password, password_required) {
            (Some(p), _) => {
                if let Err(m) = password::check_policy(p) {
                    v.add("Password", m);
                }
            }
            (None, true) => v.add("Password", "is required"),
            (None, false) => {}
        }
        let role = match self.user_role_id.as_deref() {
            None | Some("") => Some(Role::User),
            Some(r) => match Role::from_client(r) {
                Ok(role) => Some(role),
                Err(_) => {
                    v.add(
                        "UserRoleId",
                        format!(
                            "unknown role '{r}': must be one of {}",
                            Role::NAMES.join(", ")
                        ),
                    );
                    None
                }
            },
        };
        v.one_of("Gender", self.gender.as_deref(), &GENDERS);
        for (field, value, max) in [
            ("FirstName", &self.first_name, 100),
            ("LastName", &self.last_name, 100),
            ("JobTitle", &self.job_title, 200),
            ("EmployeeId", &self.employee_id, 100),
            ("PinCode", &self.pin_code, 32),
            ("Notes", &self.notes, 4000),
        ] {
            v.length(field, value.as_deref(), 0, max);
        }
        if let Some(photo) = &self.photo {
            if photo.len() > MAX_PHOTO_BASE64_CHARS {
                v.add("Photo", "must be at most 4 MiB of Base64 text");
            } else if !photo.is_empty() && !is_base64(photo) {
                v.add("Photo", "must be Base64");
            }
        }
        if let Some(m) = &self.manager_user_id
            && m.parse::<UserId>().is_err()
        {
            v.add("ManagerUserId", format!("'{m}' is not a user id"));
        }
        v.finish()?;
        Ok((self.without_read_only(), role.unwrap_or(Role::User)))
    }

    /// Canonical (case-insensitive) form of a username, the key it is unique by.
    pub fn username_key(username: &str) -> String {
        username.trim().to_lowercase()
    }
}

fn is_base64(s: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s.as_bytes())
        .is_ok()
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

    fn user() -> User {
        User {
            username: Some("jane@example.com".into()),
            password: Some("a long password".into()),
            ..Default::default()
        }
    }

    #[test]
    fn valid_user_defaults_to_user_role() {
        assert_eq!(user().validated(true).unwrap().1, Role::User);
    }

    #[test]
    fn every_error_listed() {
        let u = User {
            username: Some("nope".into()),
            password: Some("short".into()),
            user_role_id: Some("Emperor".into()),
            gender: Some("Robot".into()),
            ..Default::default()
        };
        let fields: Vec<_> = u
            .validated(true)
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["Username", "Password", "UserRoleId", "Gender"]);
    }

    #[test]
    fn user_refs() {
        assert_eq!(UserRef::parse("12"), UserRef::Id(UserId::new(12)));
        assert_eq!(
            UserRef::parse("Jane@Example.com"),
            UserRef::Username("jane@example.com".into())
        );
        assert_eq!(UserRef::parse("abc"), UserRef::Invalid);
    }
}
