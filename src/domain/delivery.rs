//! Deliveries: one row per resolved target of a match, in the durable outbox. And what
//! they say: subject and body composed once, when the match happens.

use std::fmt::Write as _;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::ids::{
    AlertId, DeliveryId, DeviceId, MoMessageId, MtMessageId, NotificationId, TenantCode,
};
use super::mo_message::EmergencyState;
use super::notification::Severity;
use super::place::{Position, ReaderUnits, address, geo_uri, nearest, osm_link, position_text};

closed_set! {
    /// How a delivery reaches its target.
    #[derive(ToSchema)]
    pub enum Channel {
        Email = "Email",
        Sms = "Sms",
        Voice = "Voice",
        /// An MT message queued for a device (sent by being queued).
        Mt = "Mt",
        Webhook = "Webhook",
        /// An MT message sent to an inReach device through Garmin's IPC Inbound API.
        Garmin = "Garmin",
        /// A Web Push to a browser's subscription (the worker app); the target is the
        /// `PushSubscriptionId`.
        Push = "Push",
    }
}

closed_set! {
    /// Where a delivery stands.
    #[derive(ToSchema)]
    pub enum DeliveryStatus {
        /// Waiting for the delivery worker.
        Pending = "Pending",
        /// No channel configured for it (re-queued by a retry once there is).
        NotConfigured = "NotConfigured",
        /// The recipient resolved to no address (a user without a phone, …).
        NoAddress = "NoAddress",
        Sent = "Sent",
        Failed = "Failed",
        Expired = "Expired",
    }
}

impl DeliveryStatus {
    /// The statuses a delivery stays in unsent, needing attention (`Pending` aside, which
    /// is work in progress): what `/metrics` counts besides it, and what a retry re-queues.
    pub const UNSENT: [DeliveryStatus; 3] = [
        DeliveryStatus::NotConfigured,
        DeliveryStatus::Failed,
        DeliveryStatus::Expired,
    ];

    /// A new delivery on a channel: `Pending` for the worker when the server has the
    /// channel configured, else `NotConfigured`.
    pub fn new_on(configured: bool) -> DeliveryStatus {
        if configured {
            DeliveryStatus::Pending
        } else {
            DeliveryStatus::NotConfigured
        }
    }
}

/// Who answers a delivery's attempts. A webhook's is its URL, per tenant (one tenant's
/// receiver never speaks for another's deliveries); e-mail's, SMS's and voice's is the
/// server's one provider of the channel (the SMTP server, Twilio), whatever the target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Receiver {
    pub channel: Channel,
    /// Webhooks only: the tenant whose settings name the URL, and the URL.
    pub webhook: Option<(TenantCode, String)>,
}

impl Receiver {
    /// The receiver of a delivery on `channel` to `target` of `tenant_code`.
    pub fn of(channel: Channel, tenant_code: &TenantCode, target: Option<&str>) -> Self {
        let webhook = (channel == Channel::Webhook)
            .then(|| (tenant_code.clone(), target.unwrap_or_default().to_string()));
        Self { channel, webhook }
    }
}

/// A delivery as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Delivery {
    #[schema(value_type = Option<String>, example = "31")]
    pub delivery_id: DeliveryId,
    #[schema(value_type = Option<String>)]
    pub tenant_code: TenantCode,
    /// Email, Sms, Voice, Mt, Webhook, Garmin or Push.
    #[schema(value_type = Option<String>, example = "Email")]
    pub channel: Channel,
    /// The address: an e-mail address, a phone number, a device id, a URL or a push
    /// subscription's id (null when the recipient resolved to none).
    pub target: Option<String>,
    pub subject: Option<String>,
    #[schema(value_type = Option<String>)]
    pub body: String,
    /// Pending, NotConfigured, NoAddress, Sent, Failed or Expired.
    #[schema(value_type = Option<String>, example = "Pending")]
    pub status: DeliveryStatus,
    #[schema(value_type = Option<String>)]
    pub notification_id: Option<NotificationId>,
    #[schema(value_type = Option<String>)]
    pub alert_id: Option<AlertId>,
    #[schema(value_type = Option<String>)]
    pub message_id: Option<MoMessageId>,
    /// The MT message a device delivery queued.
    #[schema(value_type = Option<String>)]
    pub mt_message_id: Option<MtMessageId>,
    #[schema(value_type = Option<String>)]
    pub device_id: Option<DeviceId>,
    /// Webhook deliveries: the event's `Id` (the `webhook-id` header).
    pub event_id: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub created_at: Timestamp,
    pub attempts: i64,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<Timestamp>,
    pub last_error: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub sent_at: Option<Timestamp>,
    /// The provider's id for the sent message (an SMTP queue id, a Twilio sid, …).
    pub provider_id: Option<String>,
}

/// What a notification's messages are about.
#[derive(Debug, Clone)]
pub struct MatchSummary {
    pub notification_name: String,
    pub notification_text: Option<String>,
    pub severity: Severity,
    pub device_id: String,
    pub device_name: Option<String>,
    /// `Emergency`, `MissedCheckIn`, or the message type.
    pub event: String,
    /// The message's `MessageType` (None for a missed check-in, which has no message).
    pub message_type: Option<String>,
    /// The message's own `EmergencyState` (its SOS flag), when it carried one.
    pub emergency_state: Option<EmergencyState>,
    pub time: Timestamp,
    pub tenant_zone: TimeZone,
    pub position: Option<(f64, f64)>,
    pub geofences: Vec<String>,
    /// For emergencies: who to call and what responders should know (from the device
    /// user's profile).
    pub emergency_contacts: Vec<String>,
    pub emergency_information: Option<String>,
}

impl MatchSummary {
    fn device_label(&self) -> &str {
        self.device_name
            .as_deref()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(&self.device_id)
    }

    fn local_time(&self) -> String {
        let zoned = self.time.to_zoned(self.tenant_zone.clone());
        let shown = zoned.strftime("%Y-%m-%d %H:%M:%S %Z").to_string();
        // "… BST Europe/London", but "… UTC" rather than "… UTC UTC".
        match self.tenant_zone.iana_name() {
            Some(name) if !shown.ends_with(name) => format!("{shown} {name}"),
            _ => shown,
        }
    }

    /// `[High] SOS — Van 3`
    pub fn subject(&self) -> String {
        format!(
            "[{}] {} — {}",
            self.severity.word(),
            self.notification_name,
            self.device_label()
        )
    }

    /// Where it happened, when the position can be placed (docs/decisions.md, "Alerts &
    /// deliveries").
    fn placed(&self) -> Option<Position> {
        self.position.and_then(|(lat, lon)| Position::new(lat, lon))
    }

    /// The plain-text e-mail body, positions and distances in the reader's units.
    pub fn email_body(&self, units: ReaderUnits) -> String {
        let mut body = String::new();
        if let Some(text) = self.notification_text.as_deref().filter(|t| !t.is_empty()) {
            let _ = writeln!(body, "{text}\n");
        }
        let _ = writeln!(body, "Notification: {}", self.notification_name);
        let _ = writeln!(body, "Event: {}", self.event);
        if let Some(message_type) = self.message_type.as_deref().filter(|t| !t.is_empty()) {
            let _ = writeln!(body, "Message type: {message_type}");
        }
        if let Some(state) = self.emergency_state {
            let _ = writeln!(body, "Emergency state: {state}");
        }
        let _ = writeln!(body, "Device: {} ({})", self.device_label(), self.device_id);
        let _ = writeln!(body, "Time: {}", self.local_time());
        let _ = writeln!(body, "Time (UTC): {}", self.time);
        match self.placed() {
            Some(at) => {
                let _ = writeln!(body, "Place: {}", nearest(at).text(units.distance));
                let _ = writeln!(body, "Position: {}", position_text(at, units.position));
                let _ = writeln!(body, "Map: {}", osm_link(at));
                let _ = writeln!(body, "Navigate: {}", geo_uri(at));
            }
            None => {
                let _ = writeln!(body, "Position: unknown");
            }
        }
        if !self.geofences.is_empty() {
            let _ = writeln!(body, "Geofences: {}", self.geofences.join(", "));
        }
        if !self.emergency_contacts.is_empty() {
            let _ = writeln!(body, "\nEmergency contacts:");
            for contact in &self.emergency_contacts {
                let _ = writeln!(body, "  {contact}");
            }
        }
        if let Some(info) = self
            .emergency_information
            .as_deref()
            .filter(|i| !i.is_empty())
        {
            let _ = writeln!(body, "\nEmergency information: {info}");
        }
        body
    }

    /// One short line for SMS: what, when, where (geofences and place), the position in
    /// the reader's format and the two map links.
    pub fn sms_body(&self, units: ReaderUnits) -> String {
        let mut text = format!(
            "{}: {} at {}",
            self.subject(),
            self.event,
            self.time
                .to_zoned(self.tenant_zone.clone())
                .strftime("%H:%M %Z")
        );
        if let Some(at) = self.placed() {
            let place = address(Some(at), &self.geofences, units.distance).unwrap_or_default();
            let position = position_text(at, units.position);
            let _ = write!(
                text,
                ", {place} ({position}) {} {}",
                osm_link(at),
                geo_uri(at)
            );
        }
        text
    }

    /// What a voice call says: the place in words and the position in the reader's format.
    pub fn voice_body(&self, units: ReaderUnits) -> String {
        let mut said = format!(
            "Safetrack alert. {}. {}. Device {}. {} at {}.",
            self.severity.word(),
            self.notification_name,
            self.device_label(),
            self.event,
            self.time
                .to_zoned(self.tenant_zone.clone())
                .strftime("%H:%M")
        );
        if let Some(at) = self.placed() {
            let place = nearest(at).spoken(units.distance);
            let position = position_text(at, units.position);
            let _ = write!(said, " {place}. Position {position}.");
        }
        said
    }

    /// The text sent to a device.
    pub fn device_text(&self) -> String {
        self.notification_text
            .clone()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| {
                format!(
                    "{}: {} ({})",
                    self.notification_name,
                    self.event,
                    self.device_label()
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::profile::{DistanceUnits, PositionFormat};

    #[test]
    fn messages_name_severity_device_time_and_place() {
        let summary = MatchSummary {
            notification_name: "SOS".into(),
            notification_text: Some("Lone worker needs help".into()),
            severity: Severity::High,
            device_id: "300234010753370".into(),
            device_name: Some("Van 3".into()),
            event: "Emergency".into(),
            message_type: Some("ManualPositionReport".into()),
            emergency_state: Some(EmergencyState::Active),
            time: "2026-07-01T13:05:00Z".parse().unwrap(),
            tenant_zone: TimeZone::get("Europe/London").unwrap(),
            position: Some((51.5007, -0.1246)),
            geofences: vec!["Depot".into()],
            emergency_contacts: vec!["Jane Doe, +447700900123".into()],
            emergency_information: Some("Diabetic".into()),
        };
        assert_eq!(summary.subject(), "[High] SOS — Van 3");
        let body = summary.email_body(ReaderUnits::default());
        assert!(body.starts_with("Lone worker needs help"));
        assert!(
            body.contains("2026-07-01 14:05:00 BST Europe/London"),
            "{body}"
        );
        assert!(body.contains("2026-07-01T13:05:00Z"));
        assert!(body.contains("mlat=51.50070&mlon=-0.12460#map=17/51.50070/-0.12460"));
        assert!(body.contains("Navigate: geo:51.50070,-0.12460\n"), "{body}");
        assert!(
            body.contains("Place: 550 m W of City of Westminster, England, GB\n"),
            "{body}"
        );
        assert!(body.contains("Position: 51.50070, -0.12460\n"), "{body}");
        assert!(body.contains("Geofences: Depot"));
        assert!(
            body.contains(
                "Event: Emergency\nMessage type: ManualPositionReport\nEmergency state: Active\n"
            ),
            "{body}"
        );
        assert!(body.contains("Jane Doe, +447700900123"));
        assert!(body.contains("Diabetic"));
        let sms = summary.sms_body(ReaderUnits::default());
        assert!(sms.contains("14:05 BST"));
        assert!(
            sms.contains("Depot; 550 m W of City of Westminster, England, GB (51.50070, -0.12460)"),
            "{sms}"
        );
        assert!(sms.ends_with(" geo:51.50070,-0.12460"), "{sms}");
        let imperial = ReaderUnits {
            position: PositionFormat::DegreeMinute,
            distance: DistanceUnits::Feet,
        };
        let body = summary.email_body(imperial);
        assert!(
            body.contains("Position: 51° 30.042' N, 0° 07.476' W\n"),
            "{body}"
        );
        assert!(body.contains("0.3 mi W of City of Westminster"), "{body}");
        let said = summary.voice_body(imperial);
        assert!(
            said.ends_with(
                "at 14:05. 0.3 miles west of City of Westminster, England, GB. \
                 Position 51° 30.042' N, 0° 07.476' W."
            ),
            "{said}"
        );
    }

    #[test]
    fn a_delivery_is_shown_with_its_ids_as_text_in_field_order() {
        let at = |s: &str| s.parse::<Timestamp>().unwrap();
        let delivery = Delivery {
            delivery_id: DeliveryId::new(31),
            tenant_code: TenantCode::from_store("1000".into()),
            channel: Channel::Email,
            target: Some("a@example.com".into()),
            subject: Some("[High] SOS — Van 3".into()),
            body: "Help".into(),
            status: DeliveryStatus::Sent,
            notification_id: Some(NotificationId::new(4)),
            alert_id: Some(AlertId::new(12)),
            message_id: Some(MoMessageId::new(17)),
            mt_message_id: Some(MtMessageId::new(5)),
            device_id: Some(DeviceId::from_store("300234010753370".into())),
            event_id: Some("msg_1".into()),
            created_at: at("2026-07-01T13:05:00Z"),
            attempts: 1,
            next_attempt_at: None,
            last_error: None,
            sent_at: Some(at("2026-07-01T13:05:01.25Z")),
            provider_id: Some("q1".into()),
        };
        assert_eq!(
            serde_json::to_string(&delivery).unwrap(),
            concat!(
                r#"{"DeliveryId":"31","TenantCode":"1000","Channel":"Email","#,
                r#""Target":"a@example.com","Subject":"[High] SOS — Van 3","Body":"Help","#,
                r#""Status":"Sent","NotificationId":"4","AlertId":"12","MessageId":"17","#,
                r#""MtMessageId":"5","DeviceId":"300234010753370","EventId":"msg_1","#,
                r#""CreatedAt":"2026-07-01T13:05:00Z","Attempts":1,"NextAttemptAt":null,"#,
                r#""LastError":null,"SentAt":"2026-07-01T13:05:01.25Z","ProviderId":"q1"}"#
            )
        );
    }

    #[test]
    fn a_webhooks_receiver_is_its_tenants_url_the_others_their_channels_provider() {
        let code = |text: &str| text.parse::<TenantCode>().expect("a tenant code");
        let url = Some("https://hooks.example/a");
        assert_eq!(
            Receiver::of(Channel::Webhook, &code("1000"), url),
            Receiver::of(Channel::Webhook, &code("1000"), url)
        );
        assert_ne!(
            Receiver::of(Channel::Webhook, &code("1000"), url),
            Receiver::of(Channel::Webhook, &code("1001"), url),
            "another tenant's deliveries to the same URL"
        );
        assert_eq!(
            Receiver::of(Channel::Email, &code("1000"), Some("a@example.com")),
            Receiver::of(Channel::Email, &code("1001"), Some("b@example.com")),
            "one SMTP server"
        );
        assert_ne!(
            Receiver::of(Channel::Sms, &code("1000"), Some("+15005550006")),
            Receiver::of(Channel::Voice, &code("1000"), Some("+15005550006"))
        );
    }
}
