//! Identifiers, one type each, so an alert's id cannot be passed where a notification's
//! is expected and a tenant code is never confused with a device id.
//!
//! Serial ids (assigned by the database, sent on the wire as decimal text: `"AlertId":
//! "12"`) wrap an `i64`. The store makes them from its rows (`new`); the HTTP layer parses
//! them from paths and bodies (`FromStr`: decimal digits only, at most an `i64`). A path
//! id that does not parse names nothing, so handlers answer it with 404.
//!
//! Text ids wrap a `String`: `TenantCode` (assigned by the server) and `DeviceId` (chosen
//! by the tenant, unique within it). They deref to `str`, so SQL binds and comparisons
//! read as before. `GeometryId` (a risk region's, chosen by the client) is one too.

use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

/// A text that names no id of its kind (not decimal digits for a serial id, too large,
/// or outside a text id's alphabet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnId {
    /// The id's type (`AlertId`, …).
    pub kind: &'static str,
    pub text: String,
}

impl fmt::Display for NotAnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' is no {}", self.text, self.kind)
    }
}

impl std::error::Error for NotAnId {}

/// Declares a serial id: a `Copy` wrapper of the database's `i64`, printed and parsed
/// as decimal text.
macro_rules! serial_id {
    ($( $(#[$meta:meta])* $name:ident ),+ $(,)?) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(i64);

        impl $name {
            /// The id the database assigned (a row's `id` column).
            pub const fn new(raw: i64) -> Self {
                Self(raw)
            }

            /// The number, for binding in SQL.
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0, f)
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::domain::ids::NotAnId;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
                match text.parse::<i64>() {
                    Ok(raw) if digits => Ok(Self(raw)),
                    _ => Err($crate::domain::ids::NotAnId {
                        kind: stringify!($name),
                        text: text.to_string(),
                    }),
                }
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        /// Reads the decimal text it is written as (documents, the stream's log).
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <String as ::serde::Deserialize>::deserialize(d)?;
                text.parse().map_err(::serde::de::Error::custom)
            }
        }
    )+};
}

serial_id! {
    /// An alert (`alerts.id`).
    AlertId,
    /// A queued or settled delivery (`deliveries.id`).
    DeliveryId,
    /// An event notification, the rule that raised an alert (`event_notifications.id`).
    NotificationId,
    /// A mobile-originated message as stored (`mo_messages.id`).
    MoMessageId,
    /// A mobile-terminated message (`mt_messages.id`).
    MtMessageId,
    /// An itinerary (`itineraries.id`).
    ItineraryId,
    /// A risk region (`risk_regions.id`).
    RiskRegionId,
    /// A geofence (`geofences.id`).
    GeofenceId,
    /// A webhook setting (`webhook_settings.id`).
    WebhookId,
    /// An address-book contact (`address_book_contacts.id`).
    ContactId,
    /// A distribution list (`distribution_lists.id`).
    DistributionListId,
    /// A device group (`device_groups.id`).
    GroupId,
    /// A user (`users.id`).
    UserId,
    /// An API token (`api_tokens.id`).
    ApiTokenId,
    /// A tenant's external link (`external_links.id`).
    ExternalLinkId,
    /// An escalation policy (`escalation_policies.id`).
    EscalationPolicyId,
    /// A lone-worker monitoring session (`monitoring_sessions.id`).
    MonitoringSessionId,
    /// A line of a monitoring session's history (`monitoring_session_events.id`).
    SessionEventId,
    /// A browser's Web Push subscription (`push_subscriptions.id`).
    PushSubscriptionId,
}

/// Declares a text id: a wrapper of a `String` that derefs to `str`.
macro_rules! text_id {
    ($( $(#[$meta:meta])* $name:ident ),+ $(,)?) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The text, as stored and sent.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        /// Reads a text the server wrote (documents, the stream's log) as it is, like
        /// `from_store`: what a client sends is parsed with `FromStr` at the edge.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d).map(Self)
            }
        }
    )+};
}

text_id! {
    /// A tenant's var code: decimal digits, assigned by the server (`1000`, `1001`, …).
    TenantCode,
    /// A device's id within its tenant (IMEI, serial, or any name the tenant chose).
    DeviceId,
    /// A risk region's id within its tenant, chosen by the client (case-sensitive).
    GeometryId,
}

impl TenantCode {
    /// A code read back from the store, or from a tenant node already looked up: the
    /// server assigned it, so it is not checked again.
    pub fn from_store(code: String) -> Self {
        Self(code)
    }
}

impl FromStr for TenantCode {
    type Err = NotAnId;

    /// A code as a client names it (a path segment, `TenantCode` in a body): decimal
    /// digits. Whether such a tenant exists is the store's question.
    fn from_str(text: &str) -> Result<Self, NotAnId> {
        if !text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Self(text.to_string()))
        } else {
            Err(NotAnId {
                kind: "TenantCode",
                text: text.to_string(),
            })
        }
    }
}

/// The longest device id, in characters.
pub const MAX_DEVICE_ID_CHARS: usize = 64;

/// The longest risk region id, in characters.
pub const GEOMETRY_ID_MAX_CHARS: usize = 64;

/// 1 to `max` characters of A-Z, a-z, 0-9, '.', '_', ':' or '-': the alphabet of the
/// ids a client chooses.
fn is_chosen_id(text: &str, max: usize) -> bool {
    let valid_chars = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    !text.is_empty() && text.chars().count() <= max && valid_chars
}

impl DeviceId {
    /// A device id read back from the store, or of a device just looked up.
    pub fn from_store(id: String) -> Self {
        Self(id)
    }
}

impl FromStr for DeviceId {
    type Err = NotAnId;

    /// An id as a client names it: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', ':'
    /// or '-' (what a device may be created with; anything else names no device).
    fn from_str(text: &str) -> Result<Self, NotAnId> {
        if is_chosen_id(text, MAX_DEVICE_ID_CHARS) {
            Ok(Self(text.to_string()))
        } else {
            Err(NotAnId {
                kind: "DeviceId",
                text: text.to_string(),
            })
        }
    }
}

impl GeometryId {
    /// A region id read back from the store.
    pub fn from_store(id: String) -> Self {
        Self(id)
    }
}

impl FromStr for GeometryId {
    type Err = NotAnId;

    /// An id as a client names it: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', ':'
    /// or '-' (what a region may be created with; anything else names no region).
    fn from_str(text: &str) -> Result<Self, NotAnId> {
        if is_chosen_id(text, GEOMETRY_ID_MAX_CHARS) {
            Ok(Self(text.to_string()))
        } else {
            Err(NotAnId {
                kind: "GeometryId",
                text: text.to_string(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_ids_parse_decimal_text_only() {
        assert_eq!("12".parse::<AlertId>(), Ok(AlertId::new(12)));
        assert_eq!(AlertId::new(12).to_string(), "12");
        for bad in ["", "+12", "-1", " 12", "1e3", "12a", "99999999999999999999"] {
            let err = bad.parse::<AlertId>().expect_err(bad);
            assert_eq!(err.kind, "AlertId");
        }
    }

    #[test]
    fn serial_ids_go_on_the_wire_as_text() {
        let json = serde_json::to_string(&DeliveryId::new(7)).expect("serialises");
        assert_eq!(json, "\"7\"");
        let read: DeliveryId = serde_json::from_str(&json).expect("reads back");
        assert_eq!(read, DeliveryId::new(7));
        assert!(serde_json::from_str::<DeliveryId>("\"7x\"").is_err());
        let device: DeviceId = serde_json::from_str("\"truck-7\"").expect("reads back");
        assert_eq!(device, "truck-7");
    }

    #[test]
    fn tenant_codes_are_digits() {
        let code: TenantCode = "1001".parse().expect("a code");
        assert_eq!(code, "1001");
        assert_eq!(&*code, "1001");
        assert!("10a1".parse::<TenantCode>().is_err());
        assert!("".parse::<TenantCode>().is_err());
    }

    #[test]
    fn device_ids_are_what_a_device_may_be_created_with() {
        let longest = "x".repeat(64);
        for good in ["300234010753370", "truck-7.a_b:c", &longest] {
            assert_eq!(good.parse::<DeviceId>().expect(good), *good);
        }
        let too_long = "x".repeat(65);
        for bad in ["", "has spaces", "a/b", &too_long, "é"] {
            let err = bad.parse::<DeviceId>().expect_err(bad);
            assert_eq!(err.to_string(), format!("'{bad}' is no DeviceId"));
        }
    }

    #[test]
    fn geometry_ids_are_case_sensitive_and_checked() {
        let id: GeometryId = "Border-North.1".parse().expect("an id");
        assert_eq!(id, "Border-North.1");
        assert_ne!(id, "border-north.1");
        let too_long = "g".repeat(65);
        for bad in ["", "has space", "a/b", &too_long] {
            let err = bad.parse::<GeometryId>().expect_err(bad);
            assert_eq!(err.kind, "GeometryId");
        }
    }
}
