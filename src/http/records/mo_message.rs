//! An MO message as a device posts it, and the batch check of a post.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ids::{AlertId, NotificationId};
use crate::domain::mo_message::{
    self, BatchRejection, EmergencyState, GeofenceRef, MoMessage, Offered, Position,
    StorableMessage,
};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::{null_as_default, opt_int64};
use crate::services::ingest::ProcessedMessage;

/// An MO message. `MessageId`, `ReceivedAtServer`, `ContainingGeofences`, `DeviceId` and
/// `ETag` are set by the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "MoMessage", rename_all = "PascalCase")]
#[schema(as = MoMessage)]
pub struct MoMessageRecord {
    /// Numeric, increasing; assigned by the server.
    #[schema(read_only, example = "1042")]
    pub message_id: Option<String>,
    /// The device that sent it (from the path).
    #[schema(read_only)]
    pub device_id: Option<String>,
    #[schema(example = "AutomaticPositionReport")]
    pub message_type: Option<String>,
    /// Comma-separated address book lists the message is sent to, if routable.
    pub recipients: Option<String>,
    pub message: Option<String>,
    /// Base64, at most 64 KB decoded (deprecated: use `File`). Omitted unless
    /// `includeFile=true`.
    pub attachment: Option<String>,
    pub position: Option<Position>,
    /// Client-incremented ordering value; with `SentFromDevice` it identifies a retry.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>)]
    pub sequence_number: Option<i64>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub received_at_server: Option<Timestamp>,
    /// When the device sent it (normally GPS time); the message time when present.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub sent_from_device: Option<Timestamp>,
    /// `None`, or `Active` while in emergency (absent: unchanged).
    #[schema(example = "None", pattern = "^(None|Active)$")]
    pub emergency_state: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    #[schema(read_only)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub containing_geofences: Vec<GeofenceRef>,
    /// Base64, at most 4 MB decoded. Omitted unless `includeFile=true`.
    pub file: Option<String>,
    pub mime_type: Option<String>,
    pub filename: Option<String>,
    #[serde(rename = "ETag")]
    #[schema(read_only)]
    pub etag: Option<String>,
}

impl ServerFields for MoMessageRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[
        "MessageId",
        "DeviceId",
        "ReceivedAtServer",
        "ContainingGeofences",
        "ETag",
    ];

    fn without_read_only(mut self) -> Self {
        self.message_id = None;
        self.device_id = None;
        self.received_at_server = None;
        self.containing_geofences = Vec::new();
        self.etag = None;
        self
    }
}

impl MoMessageRecord {
    /// The message as offered for storing: the server's fields dropped, `EmergencyState`
    /// parsed (a text naming no state is kept for the batch check to refuse).
    fn offered(self) -> Offered {
        let Self {
            message_id: _,
            device_id: _,
            message_type,
            recipients,
            message,
            attachment,
            position,
            sequence_number,
            received_at_server: _,
            sent_from_device,
            emergency_state,
            properties,
            containing_geofences: _,
            file,
            mime_type,
            filename,
            etag: _,
        } = self.without_read_only();
        let (emergency_state, unknown_emergency_state) =
            match emergency_state.as_deref().map(str::parse::<EmergencyState>) {
                None => (None, None),
                Some(Ok(state)) => (Some(state), None),
                Some(Err(_)) => (None, emergency_state),
            };
        Offered {
            message: MoMessage {
                message_type,
                recipients,
                message,
                attachment,
                position,
                sequence_number,
                sent_from_device,
                emergency_state,
                properties,
                file,
                mime_type,
                filename,
                ..MoMessage::default()
            },
            unknown_emergency_state,
        }
    }
}

/// A notification a posted message triggered (in the `?process=true` answer).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
#[schema(as = Triggered)]
pub struct TriggeredRecord {
    #[schema(value_type = String)]
    pub notification_id: NotificationId,
    pub notification_name: String,
    /// The alert raised or joined (`RaiseAlert`).
    #[schema(value_type = Option<String>)]
    pub alert_id: Option<AlertId>,
}

/// One posted message as processed (the `?process=true` answer), built from what the
/// pipeline answered (`services::ingest::ProcessedMessage`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
#[schema(as = ProcessedMessage)]
pub struct ProcessedMessageRecord {
    #[serde(flatten)]
    #[schema(value_type = MoMessageRecord)]
    pub message: MoMessage,
    /// Older than the device's state when it arrived: evaluated, but it moved nothing.
    pub late: bool,
    /// A retry of a stored message (same `SequenceNumber` and `SentFromDevice`): the
    /// original is returned and nothing was triggered again.
    pub duplicate: bool,
    pub notifications: Vec<TriggeredRecord>,
}

impl From<ProcessedMessage> for ProcessedMessageRecord {
    fn from(processed: ProcessedMessage) -> Self {
        let ProcessedMessage {
            message,
            late,
            duplicate,
            notifications,
        } = processed;
        let notifications = notifications
            .into_iter()
            .map(|t| TriggeredRecord {
                notification_id: t.notification_id,
                notification_name: t.notification_name,
                alert_id: t.alert_id,
            })
            .collect();
        Self {
            message,
            late,
            duplicate,
            notifications,
        }
    }
}

/// Checks a posted batch (`mo_message::validated_offers`: sizes first, 413, then every
/// rule, 400) and returns the messages as stored.
pub fn validated_posted_batch(
    batch: Vec<MoMessageRecord>,
) -> Result<Vec<StorableMessage>, BatchRejection> {
    mo_message::validated_offers(batch.into_iter().map(MoMessageRecord::offered).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{DeviceId, MoMessageId};

    #[test]
    fn wire_form_matches_the_domain_form() {
        let message = MoMessage {
            message_id: Some(MoMessageId::new(12)),
            device_id: Some(DeviceId::from_store("d1".into())),
            message_type: Some("CheckIn".into()),
            recipients: Some("ops".into()),
            message: Some("hello".into()),
            attachment: Some("aGk=".into()),
            position: Some(Position {
                latitude: Some(51.5),
                longitude: Some(-0.1),
                speed: Some(12.5),
                heading: Some(90.0),
                altitude: Some(30.0),
                gps_timestamp: Some("2026-03-01T09:59:59Z".parse().unwrap()),
                accuracy: Some("5".into()),
                location_source: Some("Gps".into()),
            }),
            sequence_number: Some(9_007_199_254_740_993),
            received_at_server: Some("2026-03-01T10:00:02Z".parse().unwrap()),
            sent_from_device: Some("2026-03-01T10:00:00Z".parse().unwrap()),
            emergency_state: Some(EmergencyState::Active),
            properties: BTreeMap::from([("battery".into(), "42".into())]),
            containing_geofences: vec![GeofenceRef {
                geofence_id: "7".into(),
                geofence_name: "Yard".into(),
            }],
            file: Some("aGVsbG8=".into()),
            mime_type: Some("text/plain".into()),
            filename: Some("a.txt".into()),
            etag: Some("\"e1\"".into()),
        };
        let json = serde_json::to_string(&message).unwrap();
        let wire: MoMessageRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&wire).unwrap(), json);
        let read_back: MoMessage = serde_json::from_str(&json).unwrap();
        assert_eq!(read_back, message);
    }

    #[test]
    fn a_post_is_offered_without_server_fields() {
        let record = MoMessageRecord {
            message_id: Some("5".into()),
            device_id: Some("other".into()),
            etag: Some("\"x\"".into()),
            emergency_state: Some("Active".into()),
            ..MoMessageRecord::default()
        };
        let stored = validated_posted_batch(vec![record]).unwrap();
        assert_eq!(stored[0].record.message_id, None);
        assert_eq!(stored[0].record.device_id, None);
        assert_eq!(stored[0].record.etag, None);
        assert_eq!(stored[0].record.in_emergency(), Some(true));
    }

    #[test]
    fn an_unknown_state_is_refused_by_name() {
        let record = MoMessageRecord {
            emergency_state: Some("Panic".into()),
            ..MoMessageRecord::default()
        };
        match validated_posted_batch(vec![MoMessageRecord::default(), record]) {
            Err(BatchRejection::Invalid(errors)) => {
                assert_eq!(errors.0.len(), 1);
                assert_eq!(errors.0[0].field, "[1].EmergencyState");
                assert_eq!(errors.0[0].message, "must be one of None, Active, Fall");
            }
            other => panic!("{other:?}"),
        }
    }
}
