//! Garmin inReach IPC Outbound: Garmin's gateway POSTs `{"Version": "2.0" | "3.0" | "4.0",
//! "Events": [...]}`, events of several devices in one post, and resends the post until it
//! is answered 200 (at least once). [`parse_post`] reads a post; an event that does not
//! parse is reported on its own, so the others can still be stored.
//!
//! **Event fields.**
//!
//! | Field | Becomes |
//! |---|---|
//! | `imei` (required) | the device: its `IridiumImei`, else its `DeviceId` |
//! | `messageCode` (required) | `MessageType` (table below), `Properties.messageCode` |
//! | `timeStamp` (Unix ms) | `SentFromDevice`, `Position.GpsTimestamp`, `SequenceNumber` |
//! | `point.latitude`/`longitude` | the position (`LocationSource` `Gps`), unless `point.gpsFix` is 0 (no fix: no position) |
//! | `point.altitude` (m), `course` (°), `speed` (km/h) | `Position.Altitude`, `Heading`, `Speed` |
//! | `point.gpsFix` | `Properties.gpsFix` |
//! | `freeText` (when not empty) | `Message` |
//! | `status.lowBattery`, `intervalChange`, `resetDetected`, `autonomous` | `Properties.<name>`, `true`/`false` (Garmin sends 0/1) |
//! | `addresses[].address` | `Properties.addresses`, comma-separated |
//! | `payload` (Base64, binary codes) | `File`, `MimeType` `application/octet-stream` |
//! | `mediaBytes` + `mediaType` (4.0 voice/media) | `File`, `MimeType` (`mediaType`, else `application/octet-stream`) |
//! | `mediaId`, `transcription`, `transportMode` | `Properties.<name>` |
//!
//! Other fields (`pingbackReceived`, `pingbackResponded`, …) are ignored; so is `Version`
//! beyond being required (later versions add fields, so an unknown version is read the
//! same way rather than refused and resent forever).
//!
//! **Message codes.**
//!
//! | `messageCode` | Garmin's name | `MessageType` | `EmergencyState` |
//! |---|---|---|---|
//! | 0 | Position Report | `AutomaticPositionReport` | |
//! | 2 | Locate Response | `ResponseToLocationRequest` | |
//! | 3 | Free Text Message | `FreeText` | |
//! | 4 | Declare SOS | `DeclareSos` | `Active` |
//! | 6 | Confirm SOS | `ConfirmSos` | `Active` |
//! | 7 | Cancel SOS | `CancelSos` | `None` (fires `EmergencyCancelled`) |
//! | 8 | Reference Point | `Waypoint` | |
//! | 10 | Start Track | `BeginMonitoring` | |
//! | 11 | Track Interval | `AutomaticPositionReport` | |
//! | 12 | Stop Track | `EndMonitoring` | |
//! | 14–16 | Puck Message 1–3 | `CannedMessageSend` | |
//! | 17 | Map Share | `FreeText` | |
//! | 20 | Mail Check | `MailCheck` | |
//! | 21 | Am I Alive | `AmIAlive` | |
//! | 24–63 | Predefined Message (index) | `CannedMessageSend` | |
//! | 64–67 | Encrypted / Pingback / Generic binary, Encrypted Pinpoint | `BinaryMessage` | |
//! | 3099 | Canned Message | `CannedMessageSend` | |
//! | any other | (reserved, unknown index) | none (the code stays in `Properties.messageCode`) | |
//!
//! `EmergencyState` is left out for every other code: a report during an SOS keeps the
//! device in emergency until a Cancel SOS. A Reference Point's `point` is a place the user
//! shares, not where the device is: it goes to `Properties.referenceLatitude` and
//! `referenceLongitude`, never to `Position` (which would move the device's last known
//! position there).
//!
//! **Retries.** `SentFromDevice` is `timeStamp` and `SequenceNumber` the same number of
//! Unix milliseconds, so Garmin's resend of an event has the same dedupe key (one device
//! makes one transmission per millisecond at most). An event without `timeStamp` (2.0
//! binary events) has neither and is not deduplicated.
//!
//! **MT back** (IPC Inbound): `garmin_mt`.

use std::collections::BTreeMap;

use base64::Engine;
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::Value;

use super::{
    AUTOMATIC_POSITION_REPORT, DeviceRef, GatewayReport, OCTET_STREAM, SOURCE_GPS, checked_lat_lon,
};
use crate::domain::mo_message::{EmergencyState, MoMessage, Position};

/// A post Garmin sent: its version and each event, read or refused on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct GarminPost {
    pub version: String,
    pub events: Vec<Result<GatewayReport, EventError>>,
}

/// The body is not an IPC Outbound post at all; nothing of it is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the body is not an IPC Outbound post: {0}")]
pub struct GarminError(pub String);

/// One event that cannot be read (`Events[index]`), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Events[{index}]: {message}")]
pub struct EventError {
    pub index: usize,
    /// The event's `imei`, when it could be read.
    pub imei: Option<String>,
    pub message: String,
}

#[derive(Deserialize)]
struct Post {
    #[serde(rename = "Version")]
    version: String,
    #[serde(rename = "Events")]
    events: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    imei: String,
    message_code: i64,
    free_text: Option<String>,
    time_stamp: Option<i64>,
    #[serde(default)]
    addresses: Option<Vec<Address>>,
    point: Option<Point>,
    status: Option<Status>,
    payload: Option<String>,
    media_bytes: Option<String>,
    media_type: Option<String>,
    media_id: Option<String>,
    transcription: Option<String>,
    transport_mode: Option<String>,
}

#[derive(Deserialize)]
struct Address {
    address: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Point {
    latitude: Option<f64>,
    longitude: Option<f64>,
    altitude: Option<f64>,
    gps_fix: Option<i64>,
    course: Option<f64>,
    speed: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    autonomous: Option<Flag>,
    low_battery: Option<Flag>,
    interval_change: Option<Flag>,
    reset_detected: Option<Flag>,
}

/// A status flag: Garmin sends 0/1; `true`/`false` is read too.
#[derive(Deserialize)]
#[serde(untagged)]
enum Flag {
    Number(i64),
    Bool(bool),
}

impl Flag {
    fn text(&self) -> &'static str {
        match self {
            Flag::Number(0) | Flag::Bool(false) => "false",
            _ => "true",
        }
    }
}

/// Reads a post: an error when the body is not `{"Version", "Events": [...]}`, else each
/// event as a report or as the reason it cannot be one.
pub fn parse_post(body: &[u8]) -> Result<GarminPost, GarminError> {
    let post: Post = serde_json::from_slice(body).map_err(|e| GarminError(e.to_string()))?;
    if post.version.trim().is_empty() {
        return Err(GarminError("`Version` is empty".into()));
    }
    let events = post
        .events
        .iter()
        .enumerate()
        .map(|(index, value)| parse_event(index, value))
        .collect();
    Ok(GarminPost {
        version: post.version,
        events,
    })
}

/// `MessageType` and `EmergencyState` of a message code (the table above).
pub fn code_meaning(code: i64) -> (Option<&'static str>, Option<EmergencyState>) {
    let message_type = match code {
        0 | 11 => Some(AUTOMATIC_POSITION_REPORT),
        2 => Some("ResponseToLocationRequest"),
        3 | 17 => Some("FreeText"),
        4 => Some("DeclareSos"),
        6 => Some("ConfirmSos"),
        7 => Some("CancelSos"),
        8 => Some("Waypoint"),
        10 => Some("BeginMonitoring"),
        12 => Some("EndMonitoring"),
        14..=16 | 24..=63 | 3099 => Some("CannedMessageSend"),
        20 => Some("MailCheck"),
        21 => Some("AmIAlive"),
        64..=67 => Some("BinaryMessage"),
        _ => None,
    };
    let emergency = match code {
        4 | 6 => Some(EmergencyState::Active),
        7 => Some(EmergencyState::Clear),
        _ => None,
    };
    (message_type, emergency)
}

const REFERENCE_POINT: i64 = 8;

fn parse_event(index: usize, value: &Value) -> Result<GatewayReport, EventError> {
    let imei = value
        .get("imei")
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string());
    let fail = |message: String| EventError {
        index,
        imei: imei.clone(),
        message,
    };
    let event: Event = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        fail(format!("`{path}`: {}", e.into_inner()))
    })?;
    let imei = event.imei.trim().to_string();
    if imei.is_empty() {
        return Err(fail("`imei` is empty".into()));
    }
    let (message_type, emergency) = code_meaning(event.message_code);
    let sent = sent_at(event.time_stamp).map_err(&fail)?;
    let mut properties = event_properties(&event);
    let mut position = None;
    if let Some((point, latitude, longitude)) = fixed_point(&event).map_err(&fail)? {
        if event.message_code == REFERENCE_POINT {
            properties.insert("referenceLatitude".into(), latitude.to_string());
            properties.insert("referenceLongitude".into(), longitude.to_string());
        } else {
            position = Some(gps_position(point, latitude, longitude, sent));
        }
    }
    let (file, mime_type) = attachment(&event).map_err(&fail)?.unzip();
    Ok(GatewayReport {
        device: DeviceRef::garmin(imei),
        message: MoMessage {
            message_type: message_type.map(str::to_string),
            message: event.free_text.filter(|t| !t.is_empty()),
            position,
            sequence_number: event.time_stamp,
            sent_from_device: sent,
            emergency_state: emergency,
            properties,
            mime_type,
            file,
            ..MoMessage::default()
        },
    })
}

/// `timeStamp` (Unix ms) as a time, checked to be in range.
fn sent_at(time_stamp: Option<i64>) -> Result<Option<Timestamp>, String> {
    time_stamp
        .map(|ms| {
            Timestamp::from_millisecond(ms).map_err(|_| format!("`timeStamp` {ms} is out of range"))
        })
        .transpose()
}

/// The `Properties` an event carries whatever its position: its code, GPS fix, status
/// flags, addresses and media texts.
fn event_properties(event: &Event) -> BTreeMap<String, String> {
    let mut properties =
        BTreeMap::from([("messageCode".to_string(), event.message_code.to_string())]);
    if let Some(fix) = event.point.as_ref().and_then(|point| point.gps_fix) {
        properties.insert("gpsFix".into(), fix.to_string());
    }
    if let Some(status) = &event.status {
        insert_status_flags(status, &mut properties);
    }
    let addresses: Vec<&str> = event
        .addresses
        .iter()
        .flatten()
        .filter_map(|a| a.address.as_deref())
        .filter(|a| !a.is_empty())
        .collect();
    if !addresses.is_empty() {
        properties.insert("addresses".into(), addresses.join(","));
    }
    for (name, value) in [
        ("mediaId", &event.media_id),
        ("transcription", &event.transcription),
        ("transportMode", &event.transport_mode),
    ] {
        if let Some(value) = value.as_ref().filter(|v| !v.is_empty()) {
            properties.insert(name.into(), value.clone());
        }
    }
    properties
}

/// Each status flag sent, as `true`/`false`.
fn insert_status_flags(status: &Status, properties: &mut BTreeMap<String, String>) {
    for (name, flag) in [
        ("lowBattery", &status.low_battery),
        ("intervalChange", &status.interval_change),
        ("resetDetected", &status.reset_detected),
        ("autonomous", &status.autonomous),
    ] {
        if let Some(flag) = flag {
            properties.insert(name.into(), flag.text().into());
        }
    }
}

/// The event's point and its checked latitude and longitude, when it has both and a fix
/// (`gpsFix` 0 is no fix).
fn fixed_point(event: &Event) -> Result<Option<(&Point, f64, f64)>, String> {
    let Some(point) = &event.point else {
        return Ok(None);
    };
    match (point.latitude, point.longitude) {
        (Some(lat), Some(lon)) if point.gps_fix != Some(0) => {
            checked_lat_lon(lat, lon)
                .map_err(|(which, message)| format!("`point.{which}` {message}"))?;
            Ok(Some((point, lat, lon)))
        }
        _ => Ok(None),
    }
}

/// Where the device is, from its GPS point.
fn gps_position(point: &Point, latitude: f64, longitude: f64, sent: Option<Timestamp>) -> Position {
    Position {
        latitude: Some(latitude),
        longitude: Some(longitude),
        speed: point.speed,
        heading: point.course,
        altitude: point.altitude,
        gps_timestamp: sent,
        accuracy: None,
        location_source: Some(SOURCE_GPS.to_string()),
    }
}

/// The file sent and its MIME type: `payload` (binary codes), else `mediaBytes` (4.0
/// voice/media) typed by `mediaType`.
fn attachment(event: &Event) -> Result<Option<(String, String)>, String> {
    match (&event.payload, &event.media_bytes) {
        (Some(payload), _) if !payload.is_empty() => Ok(Some((
            base64_field("payload", payload)?,
            OCTET_STREAM.to_string(),
        ))),
        (_, Some(media)) if !media.is_empty() => Ok(Some((
            base64_field("mediaBytes", media)?,
            event
                .media_type
                .as_deref()
                .unwrap_or(OCTET_STREAM)
                .to_string(),
        ))),
        _ => Ok(None),
    }
}

/// The Base64 text, checked to decode (stored as sent).
fn base64_field(field: &str, text: &str) -> Result<String, String> {
    let text = text.trim();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map(|_| text.to_string())
        .map_err(|e| format!("`{field}` is not valid Base64: {e}"))
}

#[cfg(test)]
#[path = "garmin_tests.rs"]
mod tests;
