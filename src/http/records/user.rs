//! The user record as clients send it.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::access::Role;
use crate::domain::ids::UserId;
use crate::domain::password;
use crate::domain::record::ServerFields;
use crate::domain::serde_util::null_as_default;
use crate::domain::user::{
    Gender, MAX_PHOTO_BASE64_CHARS, Password, User, UserDetails, UserFields, approved_unless_said,
};
use crate::domain::validation::{ValidationErrors, Validator};

/// A user account. `Password` is write-only (always `null` on GET); `Photo` is returned
/// only with `photo=true`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename = "User", rename_all = "PascalCase")]
#[schema(as = User)]
pub struct UserRecord {
    #[schema(read_only)]
    pub tenant_code: Option<String>,
    /// E-mail address used as login; unique across the platform.
    #[schema(required = true, min_length = 1, format = Email, example = "jane@example.com")]
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

impl ServerFields for UserRecord {
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

impl UserRecord {
    /// Checks every rule (`password_required` on create); returns the user as a client
    /// sets it, its role `User` when the record names none.
    pub fn validated(self, password_required: bool) -> Result<UserFields, ValidationErrors> {
        let mut v = Validator::new();
        let username = v.required("Username", self.username.as_deref());
        if let Some(u) = username {
            v.email("Username", Some(u));
            v.length("Username", Some(u), 3, 254);
        }
        let password = self.checked_password(&mut v, password_required);
        let role = self.role(&mut v);
        v.one_of("Gender", self.gender.as_deref(), Gender::NAMES);
        let gender = self.gender.as_deref().and_then(|g| g.parse().ok());
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
        self.check_photo(&mut v);
        let manager = match &self.manager_user_id {
            None => None,
            Some(m) => match m.parse::<UserId>() {
                Ok(id) => Some(id),
                Err(_) => {
                    v.add("ManagerUserId", format!("'{m}' is not a user id"));
                    None
                }
            },
        };
        let username = username.map(str::to_string);
        v.finish()?;
        Ok(UserFields {
            // `required` reported a missing username, so `finish` has returned.
            username: username.unwrap_or_default(),
            password,
            role,
            is_disabled: self.is_disabled,
            photo: self.photo,
            details: UserDetails {
                first_name: self.first_name,
                last_name: self.last_name,
                is_approved: self.is_approved,
                is_portal_enabled: self.is_portal_enabled,
                cross_tenant_collections: self.cross_tenant_collections,
                pin_code: self.pin_code,
                notes: self.notes,
                manager_user_id: manager,
                gender,
                job_title: self.job_title,
                employee_id: self.employee_id,
                facility_id: self.facility_id,
                secondary_facility_ids: self.secondary_facility_ids,
                tags: self.tags,
                custom_fields: self.custom_fields,
            },
        })
    }

    fn checked_password(&self, v: &mut Validator, required: bool) -> Option<Password> {
        match (&self.password, required) {
            (Some(p), _) => match password::check_policy(p) {
                Ok(()) => Some(Password::checked(p.clone())),
                Err(m) => {
                    v.add("Password", m);
                    None
                }
            },
            (None, true) => {
                v.add("Password", "is required");
                None
            }
            (None, false) => None,
        }
    }

    /// The named role, `User` when none is named.
    fn role(&self, v: &mut Validator) -> Role {
        match self.user_role_id.as_deref() {
            None | Some("") => Role::User,
            Some(r) => Role::from_client(r).unwrap_or_else(|_| {
                v.add(
                    "UserRoleId",
                    format!(
                        "unknown role '{r}': must be one of {}",
                        Role::NAMES.join(", ")
                    ),
                );
                Role::User
            }),
        }
    }

    fn check_photo(&self, v: &mut Validator) {
        if let Some(photo) = &self.photo {
            if photo.len() > MAX_PHOTO_BASE64_CHARS {
                v.add("Photo", "must be at most 4 MiB of Base64 text");
            } else if !photo.is_empty() && !is_base64(photo) {
                v.add("Photo", "must be Base64");
            }
        }
    }
}

fn is_base64(s: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s.as_bytes())
        .is_ok()
}

impl From<&User> for UserRecord {
    fn from(user: &User) -> Self {
        UserRecord {
            tenant_code: Some(user.tenant_code.to_string()),
            username: Some(user.username.clone()),
            user_id: Some(user.user_id.to_string()),
            password: None,
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            user_role_id: Some(user.user_role_id.to_string()),
            is_approved: user.is_approved,
            is_disabled: user.is_disabled,
            is_portal_enabled: user.is_portal_enabled,
            failed_password_attempt_count: user.failed_password_attempt_count,
            failed_password_attempt_window_start: user.failed_password_attempt_window_start,
            last_lockout_date: user.last_lockout_date,
            last_logged_in: user.last_logged_in,
            cross_tenant_collections: user.cross_tenant_collections.clone(),
            pin_code: user.pin_code.clone(),
            timestamp: user.timestamp,
            photo: user.photo.clone(),
            notes: user.notes.clone(),
            manager_user_id: user.manager_user_id.map(|m| m.to_string()),
            gender: user.gender.map(|g| g.to_string()),
            job_title: user.job_title.clone(),
            employee_id: user.employee_id.clone(),
            facility_id: user.facility_id.clone(),
            secondary_facility_ids: user.secondary_facility_ids.clone(),
            etag: Some(user.etag.clone()),
            tags: user.tags.clone(),
            custom_fields: user.custom_fields.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::TenantCode;
    use crate::domain::user::UserAccount;

    fn record() -> UserRecord {
        UserRecord {
            username: Some("jane@example.com".into()),
            password: Some("a long password".into()),
            ..Default::default()
        }
    }

    #[test]
    fn valid_user_defaults_to_user_role() {
        let fields = record().validated(true).unwrap();
        assert_eq!(fields.role, Role::User);
        assert_eq!(fields.username, "jane@example.com");
        assert!(fields.password.is_some());
    }

    #[test]
    fn every_error_listed() {
        let u = UserRecord {
            username: Some("nope".into()),
            password: Some("short".into()),
            user_role_id: Some("Emperor".into()),
            gender: Some("Robot".into()),
            manager_user_id: Some("boss".into()),
            ..Default::default()
        };
        let fields: Vec<_> = u
            .validated(true)
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(
            fields,
            [
                "Username",
                "Password",
                "UserRoleId",
                "Gender",
                "ManagerUserId"
            ]
        );
    }

    #[test]
    fn typed_fields_parsed() {
        let u = UserRecord {
            user_role_id: Some("Manager".into()),
            gender: Some("Non-Binary".into()),
            manager_user_id: Some("7".into()),
            ..record()
        };
        let fields = u.validated(false).unwrap();
        assert_eq!(fields.role, Role::Manager);
        assert_eq!(fields.details.gender, Some(Gender::NonBinary));
        assert_eq!(fields.details.manager_user_id, Some(UserId::new(7)));
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let at: Timestamp = "2024-05-01T12:00:00Z".parse().unwrap();
        let account = UserAccount {
            tenant_code: TenantCode::from_store("1001".into()),
            username: "jane@example.com".into(),
            user_id: UserId::new(42),
            role: Role::Manager,
            is_disabled: true,
            failed_password_attempt_count: 2,
            failed_password_attempt_window_start: Some(at),
            last_lockout_date: Some(at),
            last_logged_in: Some(at),
            timestamp: Some(at),
            photo: Some("aGk=".into()),
            etag: "abc".into(),
        };
        let details = UserDetails {
            first_name: Some("Jane".into()),
            last_name: Some("Doe".into()),
            is_approved: false,
            is_portal_enabled: true,
            cross_tenant_collections: Some("1,2".into()),
            pin_code: Some("1234".into()),
            notes: Some("n".into()),
            manager_user_id: Some(UserId::new(7)),
            gender: Some(Gender::Female),
            job_title: Some("Pilot".into()),
            employee_id: Some("E1".into()),
            facility_id: Some("F1".into()),
            secondary_facility_ids: Some(vec!["F2".into()]),
            tags: BTreeMap::from([("k".into(), "v".into())]),
            custom_fields: BTreeMap::from([("c".into(), "d".into())]),
        };
        let user = User::new(account, details);
        let domain = serde_json::to_string(&user).unwrap();
        let record: UserRecord = serde_json::from_str(&domain).unwrap();
        assert_eq!(serde_json::to_string(&record).unwrap(), domain);
        assert_eq!(
            serde_json::to_string(&UserRecord::from(&user)).unwrap(),
            domain
        );
        assert!(domain.contains(r#""Password":null"#));
    }
}
