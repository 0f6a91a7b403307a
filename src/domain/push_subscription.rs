//! Web Push subscriptions (issue 46 §2, DESIGN §12): a browser's `PushSubscription` for
//! one user at one device, parsed once where it enters, and what is pushed to it (a small
//! JSON the worker app's service worker shows as a notification, text only).

use jiff::Timestamp;
use serde::Serialize;
use url::{Host, Url};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::ids::{DeviceId, PushSubscriptionId, TenantCode, UserId};
use super::mt_message::MtType;
use super::validation::{ValidationErrors, Validator};

/// An endpoint longer than this is refused (browsers' are a few hundred characters).
pub const ENDPOINT_MAX_CHARS: usize = 2000;
/// Subscriptions one user may hold (every tenant, every device): past it a POST of a new
/// endpoint is a 409; deleting one (or a 404/410 from its push service) makes room.
pub const MAX_PER_USER: i64 = 10;
/// Where a notification takes the person: the worker app.
pub const WORKER_APP_URL: &str = "/worker/";

/// A push service's URL: https, or http for a loopback host only (a local push service
/// in tests or development).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushEndpoint(Url);

impl PushEndpoint {
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.chars().count() > ENDPOINT_MAX_CHARS {
            return Err(format!("must be at most {ENDPOINT_MAX_CHARS} characters"));
        }
        let url = Url::parse(raw).map_err(|e| format!("is not an absolute URL ({e})"))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err("must not carry credentials".into());
        }
        match (url.scheme(), url.host()) {
            ("https", Some(_)) => Ok(Self(url)),
            ("http", Some(host)) if is_loopback(&host) => Ok(Self(url)),
            ("http", Some(_)) => Err("must use https (http only for a loopback host)".into()),
            (_, None) => Err("must name a host".into()),
            (scheme, _) => Err(format!("must use https, not {scheme}")),
        }
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    pub fn url(&self) -> &Url {
        &self.0
    }

    /// The origin (`scheme://host[:port]`): the VAPID token's audience, and what an
    /// Administrator sees of someone else's endpoint.
    pub fn origin(&self) -> String {
        self.0.origin().ascii_serialization()
    }
}

fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
        Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
    }
}

/// The browser's keys: its P-256 public point (65 bytes, uncompressed) and the 16-byte
/// authentication secret, kept base64url as the browser gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushKeys {
    pub p256dh: Vec<u8>,
    pub auth: [u8; 16],
}

/// base64url, with or without padding (browsers' `toJSON()` leaves it out).
fn base64url(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim().trim_end_matches('='))
        .ok()
}

impl PushKeys {
    pub fn parse_p256dh(text: &str) -> Result<Vec<u8>, String> {
        let bytes = base64url(text).ok_or("is not base64url")?;
        if bytes.len() != 65 || bytes[0] != 0x04 {
            return Err("must be an uncompressed P-256 point (65 bytes starting 0x04)".into());
        }
        Ok(bytes)
    }

    pub fn parse_auth(text: &str) -> Result<[u8; 16], String> {
        let bytes = base64url(text).ok_or("is not base64url")?;
        bytes.try_into().map_err(|_| "must be 16 bytes".to_string())
    }

    /// The keys as kept (base64url without padding).
    pub fn encoded(&self) -> (String, String) {
        use base64::Engine;
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        (e.encode(&self.p256dh), e.encode(self.auth))
    }

    /// The keys read back from their kept form.
    pub fn from_kept(p256dh: &str, auth: &str) -> Result<Self, String> {
        Ok(Self {
            p256dh: Self::parse_p256dh(p256dh)?,
            auth: Self::parse_auth(auth)?,
        })
    }
}

/// A subscription to store: the caller is its user; `device_id` is settled by the
/// service (the caller's assigned device when the body names none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPushSubscription {
    pub endpoint: PushEndpoint,
    pub keys: PushKeys,
    pub device_id: Option<DeviceId>,
}

impl NewPushSubscription {
    /// Parses the body's fields; every bad one is named.
    pub fn parse(
        endpoint: Option<&str>,
        p256dh: Option<&str>,
        auth: Option<&str>,
        device_id: Option<&str>,
    ) -> Result<Self, ValidationErrors> {
        let mut v = Validator::new();
        let endpoint = v.required("Endpoint", endpoint).map(str::trim);
        let p256dh = v.required("Keys.P256dh", p256dh);
        let auth = v.required("Keys.Auth", auth);
        let endpoint = endpoint.and_then(|e| checked(&mut v, "Endpoint", PushEndpoint::parse(e)));
        let p256dh = p256dh.and_then(|k| checked(&mut v, "Keys.P256dh", PushKeys::parse_p256dh(k)));
        let auth = auth.and_then(|k| checked(&mut v, "Keys.Auth", PushKeys::parse_auth(k)));
        let device_id = match device_id.map(str::trim) {
            None => None,
            Some(id) => id
                .parse::<DeviceId>()
                .map_err(|_| v.add("DeviceId", "is not a device id"))
                .ok(),
        };
        v.finish()?;
        match (endpoint, p256dh, auth) {
            (Some(endpoint), Some(p256dh), Some(auth)) => Ok(Self {
                endpoint,
                keys: PushKeys { p256dh, auth },
                device_id,
            }),
            _ => Err(ValidationErrors::single("Endpoint", "is required")),
        }
    }
}

/// A parse's value, or its message added to `v` under `field`.
fn checked<T>(v: &mut Validator, field: &str, parsed: Result<T, String>) -> Option<T> {
    parsed.map_err(|message| v.add(field, message)).ok()
}

/// A stored subscription as the API shows it. `Endpoint` is shown to its own user only
/// (it is a capability: whoever has it can push to the browser); others in scope (an
/// Administrator) see its origin. The keys are never shown.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct PushSubscription {
    #[schema(value_type = String, example = "7")]
    pub push_subscription_id: PushSubscriptionId,
    #[schema(value_type = String)]
    pub tenant_code: TenantCode,
    #[schema(value_type = String, example = "12")]
    pub user_id: UserId,
    #[schema(value_type = String)]
    pub device_id: DeviceId,
    /// The push service's URL (null unless the subscription is the caller's).
    pub endpoint: Option<String>,
    /// The push service's origin, e.g. `https://fcm.googleapis.com`.
    pub endpoint_origin: String,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: Timestamp,
}

impl PushSubscription {
    /// As shown to `caller`: the endpoint only to its own user.
    pub fn shown_to(mut self, caller: Option<UserId>) -> Self {
        if caller != Some(self.user_id) {
            self.endpoint = None;
        }
        self
    }
}

closed_set! {
    /// What a push is about (the service worker may group by it).
    pub enum PushKind {
        /// A monitoring session's reminder: a check-in is due soon.
        Reminder = "Reminder",
        /// An operator's text to the device.
        Message = "Message",
        /// The person's alert was acknowledged.
        Acknowledgement = "Acknowledgement",
    }
}

/// What a push carries (encrypted, RFC 8291): the notification's text, where a tap
/// leads, and its kind. Also the delivery's body in `GET /deliveries`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PushPayload {
    pub title: String,
    pub body: String,
    pub url: String,
    pub kind: PushKind,
}

impl PushPayload {
    /// The push an MT message to the device makes, if its type is for the person:
    /// a check-in request (the reminder) or a text.
    pub fn for_mt(r#type: MtType, text: Option<&str>) -> Option<Self> {
        let (title, kind) = match r#type {
            MtType::CheckInRequest => ("Check-in due", PushKind::Reminder),
            MtType::Text => ("Message from your operator", PushKind::Message),
            _ => return None,
        };
        Some(Self {
            title: title.into(),
            body: text.unwrap_or_default().to_string(),
            url: WORKER_APP_URL.into(),
            kind,
        })
    }

    /// The push telling the person their alert was acknowledged, and by whom.
    pub fn for_acknowledgement(alert_name: &str, by: &str) -> Self {
        Self {
            title: "Your alert was acknowledged".into(),
            body: format!("{alert_name}: acknowledged by {by}"),
            url: WORKER_APP_URL.into(),
            kind: PushKind::Acknowledgement,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P256DH: &str =
        "BLn9b-VR0ca83knDNZ32dCHGyjJp-1riX9ZTN40MqV8K_LpQmLqxC_DoHvqvFXO_nGdAB4W9dogZb_sM-uV4JbY";
    const AUTH: &str = "_ordMnz7uTCmrpBTeUV4Bw";

    #[test]
    fn endpoints_are_https_or_loopback_http() {
        assert!(PushEndpoint::parse("https://push.example.com/x/y").is_ok());
        assert!(PushEndpoint::parse("http://127.0.0.1:9/p").is_ok());
        assert!(PushEndpoint::parse("http://localhost/p").is_ok());
        assert!(PushEndpoint::parse("http://[::1]/p").is_ok());
        assert!(PushEndpoint::parse("http://push.example.com/p").is_err());
        assert!(PushEndpoint::parse("ftp://push.example.com/p").is_err());
        assert!(PushEndpoint::parse("https://u:p@push.example.com/p").is_err());
        assert!(PushEndpoint::parse("not a url").is_err());
        let long = format!(
            "https://push.example.com/{}",
            "a".repeat(ENDPOINT_MAX_CHARS)
        );
        assert!(PushEndpoint::parse(&long).is_err());
        let origin = PushEndpoint::parse("https://push.example.com:8443/a?b").unwrap();
        assert_eq!(origin.origin(), "https://push.example.com:8443");
    }

    #[test]
    fn keys_are_checked_for_their_shape() {
        let keys = PushKeys::from_kept(P256DH, AUTH).expect("keys");
        assert_eq!(keys.p256dh.len(), 65);
        assert_eq!(keys.encoded(), (P256DH.to_string(), AUTH.to_string()));
        assert!(PushKeys::parse_auth(&format!("{AUTH}==")).is_ok());
        assert!(PushKeys::parse_auth("AAAA").is_err());
        assert!(PushKeys::parse_p256dh(AUTH).is_err());
        assert!(PushKeys::parse_p256dh("!!").is_err());
    }

    #[test]
    fn a_bad_body_names_every_field() {
        let err = NewPushSubscription::parse(Some("http://x.example"), Some("AA"), None, None)
            .expect_err("bad");
        let fields: Vec<_> = err.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["Keys.Auth", "Endpoint", "Keys.P256dh"]);
        let err = NewPushSubscription::parse(None, None, None, Some("a b")).expect_err("bad");
        assert_eq!(err.0.len(), 4);
    }

    #[test]
    fn pushes_for_mt_types_meant_for_the_person() {
        let reminder = PushPayload::for_mt(MtType::CheckInRequest, Some("due")).unwrap();
        assert_eq!(reminder.kind, PushKind::Reminder);
        assert!(PushPayload::for_mt(MtType::LocationRequest, None).is_none());
        let json: serde_json::Value = serde_json::from_str(&reminder.to_json()).unwrap();
        assert_eq!(json["Kind"], "Reminder");
        assert_eq!(json["Url"], "/worker/");
    }
}
