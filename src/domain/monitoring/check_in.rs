//! What confirms a check-in (DESIGN §11): a person saying "I am OK", never a device's
//! automatic report. A closed set, decided here once for sessions and for a device's
//! standing `CheckInIntervalMinutes` alike.
//!
//! | Confirms | Because |
//! |---|---|
//! | MO `CheckIn` | the person pressed check-in |
//! | MO `MessageAcknowledgement` | the person acknowledged a message sent to them |
//! | MO `ManualPositionReport` | the person sent their position by hand |
//! | MO `FreeText` | the person typed a message (Garmin codes 3 and 17 arrive as this) |
//! | MO `CannedMessageSend` | the person picked a preset (Garmin 14–16, 24–63, 3099; a pendant's button) |
//! | MO `BeginMonitoring` | the person started a session (Garmin 10, Start Track) |
//! | any MO with `EmergencyState` `Active` | an SOS is a person acting (Garmin 4 and 6), and the emergency's own alert takes over |
//! | an API check-in (`POST …/monitoring/checkins`) | an operator or integration records that the person called in |
//! | a worker-app check-in ("I'm OK", §12) | the person, in the app |
//!
//! Never: `AutomaticPositionReport`, `ResponseToLocationRequest` (the device answers by
//! itself), tracking (Garmin 11 arrives as an automatic report), heartbeats and mailbox
//! checks (`MailCheck`, `AmIAlive`), `Synchronise`, `SwitchOn`, `PowerDown`,
//! `SystemTest`, diagnostics, `Waypoint`, `GeofenceCrossed`, `EndMonitoring` (it ends the
//! session instead), a cancelled SOS (`EmergencyState` `None`: it ends an emergency,
//! whose follow-up is the operator's), and any type not named above. Gateways keep to
//! this by mapping a person-made code onto one of the confirming message types.
//! Message types are matched in any letter case, as `EventsExpression` names them.

use super::super::closed_set::closed_set;
use super::super::mo_message::{EmergencyState, MoMessage};

closed_set! {
    /// Why something counted as a check-in (kept with the session's last check-in).
    pub enum Confirmation {
        CheckIn = "CheckIn",
        MessageAcknowledgement = "MessageAcknowledgement",
        ManualPositionReport = "ManualPositionReport",
        FreeText = "FreeText",
        CannedMessageSend = "CannedMessageSend",
        BeginMonitoring = "BeginMonitoring",
        Emergency = "Emergency",
        /// `POST /V2/{t}/devices/{deviceId}/monitoring/checkins`.
        ApiCheckIn = "ApiCheckIn",
        /// "I'm OK" in the worker app (§12).
        WorkerAppCheckIn = "WorkerAppCheckIn",
    }
}

/// The MO message types that confirm, each with its confirmation.
const CONFIRMING_TYPES: [Confirmation; 6] = [
    Confirmation::CheckIn,
    Confirmation::MessageAcknowledgement,
    Confirmation::ManualPositionReport,
    Confirmation::FreeText,
    Confirmation::CannedMessageSend,
    Confirmation::BeginMonitoring,
];

/// Whether a device message of `message_type` carrying `emergency_state` confirms a
/// check-in, and as what. An emergency confirms whatever its type.
pub fn confirmation_of(
    message_type: Option<&str>,
    emergency_state: Option<EmergencyState>,
) -> Option<Confirmation> {
    if emergency_state.is_some_and(EmergencyState::in_emergency) {
        return Some(Confirmation::Emergency);
    }
    let text = message_type?.trim();
    CONFIRMING_TYPES
        .into_iter()
        .find(|c| c.as_str().eq_ignore_ascii_case(text))
}

/// `confirmation_of` a stored or incoming MO message.
pub fn message_confirmation(message: &MoMessage) -> Option<Confirmation> {
    confirmation_of(message.message_type.as_deref(), message.emergency_state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn person_made_messages_confirm() {
        for (text, expected) in [
            ("CheckIn", Confirmation::CheckIn),
            ("checkin", Confirmation::CheckIn),
            (" CHECKIN ", Confirmation::CheckIn),
            (
                "MessageAcknowledgement",
                Confirmation::MessageAcknowledgement,
            ),
            ("ManualPositionReport", Confirmation::ManualPositionReport),
            ("FreeText", Confirmation::FreeText),
            ("CannedMessageSend", Confirmation::CannedMessageSend),
            ("BeginMonitoring", Confirmation::BeginMonitoring),
        ] {
            assert_eq!(confirmation_of(Some(text), None), Some(expected), "{text}");
            assert_eq!(
                confirmation_of(Some(text), Some(EmergencyState::Clear)),
                Some(expected),
                "{text} with the emergency cleared"
            );
        }
    }

    #[test]
    fn automatic_and_device_made_messages_never_confirm() {
        for text in [
            "AutomaticPositionReport",
            "ResponseToLocationRequest",
            "Synchronise",
            "SwitchOn",
            "PowerDown",
            "SystemTest",
            "DiagnosticResponse",
            "DeviceIdentifierResponse",
            "GeofenceCrossed",
            "Waypoint",
            "EndMonitoring",
            "MailCheck",
            "AmIAlive",
            "BinaryMessage",
            "CancelSos",
            "DeclareSos",
            "ApiCheckIn",
            "WorkerAppCheckIn",
            "Emergency",
            "",
            "Check In",
        ] {
            assert_eq!(confirmation_of(Some(text), None), None, "{text}");
        }
        assert_eq!(confirmation_of(None, None), None);
        assert_eq!(confirmation_of(None, Some(EmergencyState::Clear)), None);
    }

    #[test]
    fn an_emergency_confirms_whatever_its_type() {
        for text in [Some("DeclareSos"), Some("AutomaticPositionReport"), None] {
            assert_eq!(
                confirmation_of(text, Some(EmergencyState::Active)),
                Some(Confirmation::Emergency)
            );
        }
    }

    #[test]
    fn garmin_codes_follow_the_rule_through_their_message_types() {
        use crate::domain::device_protocols::garmin::code_meaning;
        let confirms = |code: i64| {
            let (message_type, emergency) = code_meaning(code);
            confirmation_of(message_type, emergency).is_some()
        };
        for person in [3, 4, 6, 10, 14, 15, 16, 17, 24, 63, 3099] {
            assert!(confirms(person), "code {person} is a person's");
        }
        for device in [0, 2, 7, 8, 11, 12, 20, 21, 64, 67, 9999] {
            assert!(!confirms(device), "code {device} is the device's");
        }
    }

    #[test]
    fn a_message_is_read_for_its_type_and_emergency() {
        let message = MoMessage {
            message_type: Some("FreeText".into()),
            ..Default::default()
        };
        assert_eq!(message_confirmation(&message), Some(Confirmation::FreeText));
        let tracking = MoMessage {
            message_type: Some("AutomaticPositionReport".into()),
            ..Default::default()
        };
        assert_eq!(message_confirmation(&tracking), None);
    }
}
