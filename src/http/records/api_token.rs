//! What a client asks for when it creates an API token (`POST /V2/{t}/apitokens`). The
//! token itself (`ApiToken`) only the server makes.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::access::{Permission, Permissions};
use crate::domain::api_token::{MAX_NAME_CHARS, NewApiToken, TokenRequestError};
use crate::domain::validation::Validator;

/// `POST /V2/{t}/apitokens`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "ApiTokenRequest", rename_all = "PascalCase")]
#[schema(as = ApiTokenRequest)]
pub struct ApiTokenRequestRecord {
    /// Unique among the tenant's live tokens; what the token's actions are recorded as
    /// (`token:<Name>`).
    #[schema(required = true, min_length = 1, example = "gateway-north")]
    pub name: Option<String>,
    /// Names of permissions (`Read`, `DeviceMessages`, …); default: the creator's own
    /// (less `KeepOwnItineraries`, which only a person has). Never more than the creator's.
    pub permissions: Option<Vec<String>>,
    /// When the token stops working; default: never.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<Timestamp>,
}

impl ApiTokenRequestRecord {
    /// The token to create for a creator holding `creator` (at `now`).
    pub fn validated(
        self,
        creator: Permissions,
        now: Timestamp,
    ) -> Result<NewApiToken, TokenRequestError> {
        let mut v = Validator::new();
        let name = v.required("Name", self.name.as_deref()).map(str::trim);
        if let Some(name) = name
            && (name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control))
        {
            v.add(
                "Name",
                format!("at most {MAX_NAME_CHARS} characters, no control characters"),
            );
        }
        let permissions = match &self.permissions {
            None => creator.without(Permission::KeepOwnItineraries),
            Some(names) => checked_permissions(names, &mut v),
        };
        if let Some(at) = self.expires_at
            && at <= now
        {
            v.add("ExpiresAt", "must be in the future");
        }
        v.finish().map_err(TokenRequestError::Invalid)?;
        let beyond: Vec<String> = permissions
            .iter()
            .filter(|p| !creator.contains(*p))
            .map(|p| p.as_str().to_string())
            .collect();
        if !beyond.is_empty() {
            return Err(TokenRequestError::BeyondCreator(beyond));
        }
        match name {
            Some(name) => Ok(NewApiToken {
                name: name.to_string(),
                permissions,
                expires_at: self.expires_at,
            }),
            // A missing name added its error, so `finish` returned it.
            None => Err(TokenRequestError::Invalid(
                crate::domain::validation::ValidationErrors::single("Name", "is required"),
            )),
        }
    }
}

/// The named permissions, each known and one a token may hold.
fn checked_permissions(names: &[String], v: &mut Validator) -> Permissions {
    let mut permissions = Permissions::default();
    let mut unknown = Vec::new();
    for name in names {
        match name.parse::<Permission>() {
            Ok(Permission::KeepOwnItineraries) => v.add(
                "Permissions",
                "KeepOwnItineraries belongs to a person; a token owns no itineraries",
            ),
            Ok(p) => permissions = permissions.with(p),
            Err(_) => unknown.push(name.clone()),
        }
    }
    if !unknown.is_empty() {
        v.add(
            "Permissions",
            format!(
                "unknown permission(s): {} (known: {})",
                unknown.join(", "),
                Permission::NAMES.join(", ")
            ),
        );
    } else if permissions.is_empty() && v.is_empty() {
        v.add("Permissions", "must name at least one permission");
    }
    permissions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::access::Role;

    fn request(permissions: Option<&[&str]>) -> ApiTokenRequestRecord {
        ApiTokenRequestRecord {
            name: Some("gw".into()),
            permissions: permissions.map(|p| p.iter().map(|s| s.to_string()).collect()),
            expires_at: None,
        }
    }

    #[test]
    fn permissions_default_and_subset() {
        let user = Role::User.permissions();
        let t = request(None).validated(user, Timestamp::now()).unwrap();
        assert_eq!(t.permissions, user.without(Permission::KeepOwnItineraries));
        assert_eq!(t.name, "gw");
        let t = request(Some(&["DeviceMessages"]))
            .validated(user, Timestamp::now())
            .unwrap();
        assert_eq!(t.permissions.names(), ["DeviceMessages"]);
        assert!(matches!(
            request(Some(&["ManageUsers"])).validated(user, Timestamp::now()),
            Err(TokenRequestError::BeyondCreator(names)) if names == ["ManageUsers"]
        ));
        assert!(matches!(
            request(Some(&["Fly"])).validated(user, Timestamp::now()),
            Err(TokenRequestError::Invalid(_))
        ));
    }

    #[test]
    fn a_request_reads_back_as_it_was_written() {
        let sent = ApiTokenRequestRecord {
            name: Some("gw".into()),
            permissions: Some(vec!["Read".into()]),
            expires_at: Some(Timestamp::from_second(1_900_000_000).expect("in range")),
        };
        let json = serde_json::to_string(&sent).expect("serialises");
        assert_eq!(
            serde_json::from_str::<ApiTokenRequestRecord>(&json).expect("reads"),
            sent
        );
    }
}
