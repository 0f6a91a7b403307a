//! Mobile-originated (MO) messages: what devices send (docs/api.md, "HTTP").

use std::collections::BTreeMap;

use base64::Engine;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::closed_set::closed_set;
use super::ids::{DeviceId, MoMessageId};
use super::serde_util::{null_as_default, opt_int64};
use super::validation::{FieldError, ValidationErrors, Validator};

/// Most messages one POST may carry.
pub const MAX_BATCH: usize = 1000;
/// A message's data apart from `File` and `Attachment` must be smaller than this (48 KB).
pub const MAX_DATA_BYTES: usize = 48 * 1024;
/// Largest `Attachment` after Base64 decoding (64 KB; deprecated field).
pub const MAX_ATTACHMENT_BYTES: usize = 64 * 1024;
/// Largest `File` after Base64 decoding (4 MB).
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

closed_set! {
    /// A message's `EmergencyState`: `None`, or `Active` while the device is in emergency;
    /// `Fall` is an emergency a wearable raised by detecting a fall (DESIGN §11, §13).
    pub enum EmergencyState {
        Clear = "None",
        Active = "Active",
        Fall = "Fall",
    }
}

/// A position as a device reports it. Speed is km/h, heading degrees from north,
/// altitude metres.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Position {
    #[schema(example = 51.5007)]
    pub latitude: Option<f64>,
    #[schema(example = -0.1246)]
    pub longitude: Option<f64>,
    pub speed: Option<f64>,
    pub heading: Option<f64>,
    pub altitude: Option<f64>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub gps_timestamp: Option<Timestamp>,
    pub accuracy: Option<String>,
    /// `Gps` (others as the device names them).
    pub location_source: Option<String>,
}

impl Position {
    /// Latitude and longitude, when both are given.
    pub fn lat_lon(&self) -> Option<(f64, f64)> {
        Some((self.latitude?, self.longitude?))
    }
}

/// A geofence containing a message's position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct GeofenceRef {
    #[schema(min_length = 1)]
    pub geofence_id: String,
    #[schema(min_length = 1)]
    pub geofence_name: String,
}

/// An MO message. `MessageId`, `ReceivedAtServer`, `ContainingGeofences`, `DeviceId` and
/// `ETag` are set by the server (absent on a message offered for storing). Its JSON is
/// the API's and the stored document's form (`http::records::mo_message` is the wire
/// record clients send).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MoMessage {
    pub message_id: Option<MoMessageId>,
    pub device_id: Option<DeviceId>,
    pub message_type: Option<String>,
    pub recipients: Option<String>,
    pub message: Option<String>,
    /// Base64 (deprecated: `File`).
    pub attachment: Option<String>,
    pub position: Option<Position>,
    #[serde(default, with = "opt_int64")]
    pub sequence_number: Option<i64>,
    pub received_at_server: Option<Timestamp>,
    pub sent_from_device: Option<Timestamp>,
    /// Absent: the emergency state is unchanged.
    pub emergency_state: Option<EmergencyState>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub properties: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub containing_geofences: Vec<GeofenceRef>,
    /// Base64.
    pub file: Option<String>,
    pub mime_type: Option<String>,
    pub filename: Option<String>,
    #[serde(rename = "ETag")]
    pub etag: Option<String>,
}

/// A message as stored: the record (without `File`/`Attachment`) as JSON, the binary
/// parts apart, and the columns queries use.
#[derive(Debug, Clone)]
pub struct StorableMessage {
    pub record: MoMessage,
    /// `record` without `File` and `Attachment`, serialised (what the size limit measures).
    pub doc: String,
    pub file: Option<String>,
    pub attachment: Option<String>,
}

/// A stored message as a webhook event's `Data`: its API form without `File` and
/// `Attachment`, borrowed from the batch so each event is serialised once, straight into
/// its body. The fields are `MoMessage`'s (see `event_data_matches_the_record` below).
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MoMessageEventData<'a> {
    message_id: MoMessageId,
    device_id: &'a str,
    message_type: &'a Option<String>,
    recipients: &'a Option<String>,
    message: &'a Option<String>,
    position: &'a Option<Position>,
    #[serde(serialize_with = "opt_int64::serialize")]
    sequence_number: Option<i64>,
    received_at_server: Timestamp,
    sent_from_device: Option<Timestamp>,
    emergency_state: Option<EmergencyState>,
    properties: &'a BTreeMap<String, String>,
    containing_geofences: &'a [GeofenceRef],
    mime_type: &'a Option<String>,
    filename: &'a Option<String>,
    #[serde(rename = "ETag")]
    etag: &'a str,
}

impl<'a> MoMessageEventData<'a> {
    /// The record as stored with id `message_id` and the server's fields.
    pub fn new(
        record: &'a MoMessage,
        message_id: MoMessageId,
        device_id: &'a str,
        received_at_server: Timestamp,
        containing_geofences: &'a [GeofenceRef],
        etag: &'a str,
    ) -> Self {
        // Destructured in full: a field added to `MoMessage` must be decided on here.
        let MoMessage {
            message_id: _,
            device_id: _,
            message_type,
            recipients,
            message,
            attachment: _,
            position,
            sequence_number,
            received_at_server: _,
            sent_from_device,
            emergency_state,
            properties,
            containing_geofences: _,
            file: _,
            mime_type,
            filename,
            etag: _,
        } = record;
        Self {
            message_id,
            device_id,
            message_type,
            recipients,
            message,
            position,
            sequence_number: *sequence_number,
            received_at_server,
            sent_from_device: *sent_from_device,
            emergency_state: *emergency_state,
            properties,
            containing_geofences,
            mime_type,
            filename,
            etag,
        }
    }
}

/// Why a batch is refused: too large (413) or invalid (400). Nothing is stored either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchRejection {
    TooLarge(Vec<FieldError>),
    Invalid(ValidationErrors),
}

impl MoMessage {
    /// The message time: `SentFromDevice`, or `ReceivedAtServer` when the device sent none.
    pub fn message_time(&self) -> Option<Timestamp> {
        self.sent_from_device.or(self.received_at_server)
    }

    /// `Properties.battery` as a percentage (`85`, `85.5` or `85%`).
    pub fn battery_percent(&self) -> Option<f64> {
        let raw = self.properties.get("battery")?.trim();
        let number = raw.strip_suffix('%').unwrap_or(raw).trim();
        number.parse::<f64>().ok().filter(|b| b.is_finite())
    }

    /// Whether the message says the device is in emergency (`None` when it says nothing).
    pub fn in_emergency(&self) -> Option<bool> {
        self.emergency_state.map(EmergencyState::in_emergency)
    }

    /// Clears what the server sets: a message offered for storing carries none of it.
    fn without_server_fields(self) -> Self {
        Self {
            message_id: None,
            device_id: None,
            received_at_server: None,
            containing_geofences: Vec::new(),
            etag: None,
            ..self
        }
    }
}

impl EmergencyState {
    /// Whether the state is an emergency.
    pub fn in_emergency(self) -> bool {
        matches!(self, EmergencyState::Active | EmergencyState::Fall)
    }
}

/// A message offered for storing, with what its wire form held that a `MoMessage` cannot:
/// an `EmergencyState` naming no state. Such a text is refused among the message's rules
/// and counted in its size as it would have been stored, so a batch is judged as sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Offered {
    pub message: MoMessage,
    pub unknown_emergency_state: Option<String>,
}

impl From<MoMessage> for Offered {
    fn from(message: MoMessage) -> Self {
        Self {
            message,
            unknown_emergency_state: None,
        }
    }
}

/// Checks a batch of messages a gateway parsed; see `validated_offers`.
pub fn validated_batch(batch: Vec<MoMessage>) -> Result<Vec<StorableMessage>, BatchRejection> {
    validated_offers(batch.into_iter().map(Offered::from).collect())
}

/// Checks a batch from a device; returns the messages as stored, or why nothing is.
/// Sizes are checked first (413 names the message index and field), then every rule
/// (400 lists every offending field as `[i].Field`).
pub fn validated_offers(batch: Vec<Offered>) -> Result<Vec<StorableMessage>, BatchRejection> {
    let mut v = Validator::new();
    if batch.is_empty() {
        v.add("body", "at least one message is required");
    }
    if batch.len() > MAX_BATCH {
        v.add(
            "body",
            format!(
                "at most {MAX_BATCH} messages per request (got {})",
                batch.len()
            ),
        );
    }
    if !v.is_empty() {
        return Err(BatchRejection::Invalid(ValidationErrors(
            v.finish().err().map(|e| e.0).unwrap_or_default(),
        )));
    }
    let mut too_large = Vec::new();
    let mut stored = Vec::with_capacity(batch.len());
    for (i, offered) in batch.into_iter().enumerate() {
        let mut record = offered.message.without_server_fields();
        let unknown_state = offered.unknown_emergency_state;
        let file = record.file.take();
        let attachment = record.attachment.take();
        check_files(i, &file, &attachment, &mut too_large, &mut v);
        let doc = serde_json::to_string(&record).unwrap_or_default();
        let size = doc.len() + unknown_state.as_deref().map_or(0, extra_doc_bytes);
        if size >= MAX_DATA_BYTES {
            too_large.push(FieldError {
                field: format!("[{i}]"),
                message: format!(
                    "the message's data apart from File and Attachment is {size} bytes; it \
                     must be smaller than 48 KB ({MAX_DATA_BYTES} bytes)"
                ),
            });
        }
        check_message(i, &record, unknown_state.as_deref(), &mut v);
        stored.push(StorableMessage {
            record,
            doc,
            file: file.map(|f| f.trim().to_string()),
            attachment: attachment.map(|a| a.trim().to_string()),
        });
    }
    if !too_large.is_empty() {
        return Err(BatchRejection::TooLarge(too_large));
    }
    v.finish().map_err(BatchRejection::Invalid)?;
    Ok(stored)
}

/// The bytes `"EmergencyState":"<text>"` adds to a document over `"EmergencyState":null`.
fn extra_doc_bytes(text: &str) -> usize {
    serde_json::to_string(text)
        .map_or(0, |quoted| quoted.len())
        .saturating_sub("null".len())
}

/// `File` and `Attachment`: at most their limits once decoded, and Base64.
fn check_files(
    i: usize,
    file: &Option<String>,
    attachment: &Option<String>,
    too_large: &mut Vec<FieldError>,
    v: &mut Validator,
) {
    for (field, value, max) in [
        ("File", file, MAX_FILE_BYTES),
        ("Attachment", attachment, MAX_ATTACHMENT_BYTES),
    ] {
        let Some(text) = value else { continue };
        // Base64 of n bytes is 4⌈n/3⌉ characters: reject the oversized unread.
        if text.len() / 4 * 3 > max + 3 {
            too_large.push(too_large_field(i, field, max));
            continue;
        }
        match base64::engine::general_purpose::STANDARD.decode(text.trim()) {
            Ok(bytes) if bytes.len() > max => too_large.push(too_large_field(i, field, max)),
            Ok(_) => {}
            Err(e) => v.add(
                format!("[{i}].{field}"),
                format!("is not valid Base64: {e}"),
            ),
        }
    }
}

fn too_large_field(index: usize, field: &str, max: usize) -> FieldError {
    FieldError {
        field: format!("[{index}].{field}"),
        message: format!("must be at most {} KB after Base64 decoding", max / 1024),
    }
}

fn check_message(i: usize, m: &MoMessage, unknown_state: Option<&str>, v: &mut Validator) {
    v.length(
        &format!("[{i}].MessageType"),
        m.message_type.as_deref(),
        0,
        100,
    );
    v.one_of(
        &format!("[{i}].EmergencyState"),
        unknown_state,
        EmergencyState::NAMES,
    );
    if let Some(p) = &m.position {
        let field = |name: &str| format!("[{i}].Position.{name}");
        match (p.latitude, p.longitude) {
            (Some(lat), _) if !(-90.0..=90.0).contains(&lat) => {
                v.add(field("Latitude"), "must be between -90 and 90")
            }
            (_, Some(lon)) if !(-180.0..=180.0).contains(&lon) => {
                v.add(field("Longitude"), "must be between -180 and 180")
            }
            (Some(_), None) => v.add(field("Longitude"), "is required with Latitude"),
            (None, Some(_)) => v.add(field("Latitude"), "is required with Longitude"),
            _ => {}
        }
        if p.speed.is_some_and(|s| !(0.0..=5000.0).contains(&s)) {
            v.add(field("Speed"), "must be between 0 and 5000 km/h");
        }
        if p.heading.is_some_and(|h| !(0.0..=360.0).contains(&h)) {
            v.add(field("Heading"), "must be between 0 and 360 degrees");
        }
        if p.altitude
            .is_some_and(|a| !(-20_000.0..=1_000_000.0).contains(&a))
        {
            v.add(
                field("Altitude"),
                "must be between -20000 and 1000000 metres",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_data_matches_the_record() {
        let sent: Timestamp = "2026-03-01T10:00:00Z".parse().unwrap();
        let received: Timestamp = "2026-03-01T10:00:02Z".parse().unwrap();
        let geofences = vec![GeofenceRef {
            geofence_id: "7".into(),
            geofence_name: "Yard".into(),
        }];
        let record = MoMessage {
            message_type: Some("CheckIn".into()),
            recipients: Some("ops".into()),
            message: Some("hello".into()),
            attachment: Some("aGk=".into()),
            position: Some(Position {
                latitude: Some(51.5),
                longitude: Some(-0.1),
                ..Position::default()
            }),
            sequence_number: Some(9_007_199_254_740_993),
            sent_from_device: Some(sent),
            emergency_state: Some(EmergencyState::Clear),
            properties: BTreeMap::from([("battery".into(), "42".into())]),
            file: Some("aGVsbG8=".into()),
            mime_type: Some("text/plain".into()),
            filename: Some("a.txt".into()),
            ..MoMessage::default()
        };
        let shown = MoMessage {
            message_id: Some(MoMessageId::new(12)),
            device_id: Some(DeviceId::from_store("d1".into())),
            received_at_server: Some(received),
            containing_geofences: geofences.clone(),
            etag: Some("\"e1\"".into()),
            ..record.clone()
        };
        let data = MoMessageEventData::new(
            &record,
            MoMessageId::new(12),
            "d1",
            received,
            &geofences,
            "\"e1\"",
        );
        assert_eq!(
            serde_json::to_value(&data).unwrap(),
            super::super::webhook_event::event_data(&shown)
        );
    }

    fn message() -> MoMessage {
        MoMessage {
            message_type: Some("CheckIn".into()),
            position: Some(Position {
                latitude: Some(51.5),
                longitude: Some(-0.12),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn fields(rejection: BatchRejection) -> Vec<String> {
        match rejection {
            BatchRejection::TooLarge(e) => e.into_iter().map(|f| f.field).collect(),
            BatchRejection::Invalid(e) => e.0.into_iter().map(|f| f.field).collect(),
        }
    }

    #[test]
    fn batch_bounds() {
        assert!(matches!(
            validated_batch(vec![]),
            Err(BatchRejection::Invalid(_))
        ));
        assert!(validated_batch(vec![message(); MAX_BATCH]).is_ok());
        assert!(validated_batch(vec![message(); MAX_BATCH + 1]).is_err());
    }

    #[test]
    fn positions_and_states_are_checked() {
        let mut bad = message();
        bad.position = Some(Position {
            latitude: Some(91.0),
            longitude: Some(0.0),
            speed: Some(-1.0),
            ..Default::default()
        });
        let bad = Offered {
            message: bad,
            unknown_emergency_state: Some("Panic".into()),
        };
        let err = validated_offers(vec![message().into(), bad]).unwrap_err();
        assert_eq!(
            fields(err),
            [
                "[1].EmergencyState",
                "[1].Position.Latitude",
                "[1].Position.Speed"
            ]
        );
    }

    #[test]
    fn sizes_are_checked_before_rules_and_name_the_field() {
        let mut big = message();
        big.message = Some("x".repeat(MAX_DATA_BYTES));
        let mut file = message();
        file.file =
            Some(base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_FILE_BYTES + 1]));
        let invalid = Offered {
            message: message(),
            unknown_emergency_state: Some("Panic".into()),
        };
        let err = validated_offers(vec![big.into(), file.into(), invalid]).unwrap_err();
        assert!(matches!(err, BatchRejection::TooLarge(_)));
        assert_eq!(fields(err), ["[0]", "[1].File"]);
        let mut attachment = message();
        attachment.attachment = Some("not base64!".into());
        assert_eq!(
            fields(validated_batch(vec![attachment]).unwrap_err()),
            ["[0].Attachment"]
        );
        let mut ok = message();
        ok.file = Some(base64::engine::general_purpose::STANDARD.encode(vec![1u8; MAX_FILE_BYTES]));
        let stored = validated_batch(vec![ok]).unwrap();
        assert!(stored[0].file.is_some());
        assert!(!stored[0].doc.contains("File\":\"AQ"));
    }

    #[test]
    fn an_unknown_state_counts_in_the_size_as_sent() {
        let mut near = message();
        let doc = serde_json::to_string(&near).unwrap();
        near.message = Some("x".repeat(MAX_DATA_BYTES - doc.len() - 10));
        assert!(validated_batch(vec![near.clone()]).is_ok());
        let offered = Offered {
            message: near,
            unknown_emergency_state: Some("y".repeat(20)),
        };
        let err = validated_offers(vec![offered]).unwrap_err();
        assert!(matches!(err, BatchRejection::TooLarge(_)));
    }

    #[test]
    fn battery_and_emergency() {
        let mut m = message();
        m.properties.insert("battery".into(), "85%".into());
        assert_eq!(m.battery_percent(), Some(85.0));
        assert_eq!(m.in_emergency(), None);
        m.emergency_state = Some(EmergencyState::Active);
        assert_eq!(m.in_emergency(), Some(true));
        m.emergency_state = Some(EmergencyState::Clear);
        assert_eq!(m.in_emergency(), Some(false));
    }
}
