//! OwnTracks (the iOS and Android app) in HTTP mode: the app POSTs each payload as one
//! JSON object, `_type` naming it (the OwnTracks booklet, "JSON" and "HTTP"), and reads
//! the answer as a JSON array of payloads for it ([`answer`]).
//!
//! **The device** is the `X-Limit-D` header the app sends (its Device ID, Identification
//! settings), else the last segment of the payload's `topic` (`owntracks/<user>/<device>`):
//! its `DeviceId`, else its `SecondaryDeviceId`.
//!
//! | `_type` | Becomes |
//! |---|---|
//! | `location` | a position report (below) |
//! | `transition` | `MessageType` `GeofenceCrossed`, the app's region in `Properties` (`event` `enter`/`leave`, `desc`, `rid`, `wtst`, `t`), the position where it fired if given |
//! | `lwt` | a message without position or type, `Properties.event` `lwt` (the app's connection was lost), at its `tst` |
//! | `encrypted` | refused: payload encryption is not spoken (turn it off in the app) |
//! | any other (`waypoint`, `waypoints`, `card`, `status`, `steps`, `beacon`, `cmd`, `configuration`, …) and an empty body | nothing stored, answered `[]` |
//!
//! A `location`:
//!
//! | Field | Becomes |
//! |---|---|
//! | `tst` (required, Unix seconds) | `SentFromDevice`, `Position.GpsTimestamp` |
//! | `lat`, `lon` (required) | `Position.Latitude`/`Longitude`, `LocationSource` `Gps` |
//! | `acc` (m) | `Position.Accuracy` |
//! | `alt` (m) | `Position.Altitude` |
//! | `vel` (km/h) | `Position.Speed` |
//! | `cog` (°) | `Position.Heading` |
//! | `batt` (%) | `Properties.battery` (what the `Battery` condition reads) |
//! | `t` (trigger) | `Properties.t`; `u` (the user's manual publish) makes the report a `ManualPositionReport` — a person's act, which confirms a check-in; `r` (an answer to `reportLocation`) a `ResponseToLocationRequest`; any other (`p` ping, `c` region, `t` timer, none) `AutomaticPositionReport` |
//! | any other key (`tid`, `conn`, `bs`, `vac`, `topic`, `inregions`, `SSID`, `created_at`, …) | `Properties.<key>` (text as is, other values as JSON) |
//!
//! OwnTracks has no alarm or SOS of its own.
//!
//! **Retries.** The app queues what it could not post and posts it later. `SentFromDevice`
//! is `tst` and `SequenceNumber` `tst` in Unix milliseconds (+1 for a transition, +2 for
//! an lwt, so a transition and the location the app sends beside it in the same second
//! are both kept): a resend is stored once.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Map, Value};

use super::{
    AUTOMATIC_POSITION_REPORT, DeviceRef, GatewayReport, SOURCE_GPS, checked_lat_lon,
    millisecond_identity,
};
use crate::domain::mo_message::{MoMessage, Position};

/// Why a payload cannot be read. Nothing of it is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OwnTracksError {
    #[error("the body is not valid JSON: {0}")]
    Json(String),
    #[error("`{field}` {message}")]
    Field {
        field: &'static str,
        message: &'static str,
    },
    #[error(
        "the device is not named: send the `X-Limit-D` header (the app's Device ID) or a `topic`"
    )]
    NoDevice,
    #[error("encrypted payloads are not read: turn encryption off in the app")]
    Encrypted,
}

fn field(field: &'static str, message: &'static str) -> OwnTracksError {
    OwnTracksError::Field { field, message }
}

/// A payload read.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A report for the device, which `topic` names when the request does not.
    Report {
        message: Box<MoMessage>,
        topic: Option<String>,
    },
    /// A payload with nothing to store (an empty body, a `waypoint`, a `card`, …).
    Nothing,
}

/// The payload of a POST.
pub fn parse(body: &[u8]) -> Result<Payload, OwnTracksError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Payload::Nothing);
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|e| OwnTracksError::Json(e.to_string()))?;
    let Value::Object(root) = value else {
        return Err(OwnTracksError::Json("expected an object".into()));
    };
    let kind = match root.get("_type") {
        Some(Value::String(kind)) => kind.as_str(),
        _ => return Err(field("_type", "is missing")),
    };
    let message = match kind {
        "location" => location(&root)?,
        "transition" => transition(&root)?,
        "lwt" => lwt(&root)?,
        "encrypted" => return Err(OwnTracksError::Encrypted),
        _ => return Ok(Payload::Nothing),
    };
    let topic = match root.get("topic") {
        Some(Value::String(topic)) => topic
            .rsplit('/')
            .next()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string),
        _ => None,
    };
    Ok(Payload::Report {
        message: Box::new(message),
        topic,
    })
}

/// The report for the device `header` names (`X-Limit-D`), else the payload's topic.
pub fn report(
    message: MoMessage,
    header: Option<&str>,
    topic: Option<String>,
) -> Result<GatewayReport, OwnTracksError> {
    let device = header
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .or(topic)
        .ok_or(OwnTracksError::NoDevice)?;
    Ok(GatewayReport {
        device: DeviceRef::app(device),
        message,
    })
}

/// The answer the app reads: `[]`, or the queued text as a `cmd` the app shows (a
/// notification, and the text as its Featured Content).
pub fn answer(text: Option<&str>) -> String {
    let payloads = match text {
        Some(text) => vec![serde_json::json!({
            "_type": "cmd", "action": "action", "notification": text, "content": text
        })],
        None => Vec::new(),
    };
    Value::Array(payloads).to_string()
}

fn location(root: &Map<String, Value>) -> Result<MoMessage, OwnTracksError> {
    let tst = tst(root)?;
    let lat = number(root, "lat")?.ok_or(field("lat", "is missing"))?;
    let lon = number(root, "lon")?.ok_or(field("lon", "is missing"))?;
    let position = fix(root, lat, lon, tst)?;
    let kind = match root.get("t") {
        Some(Value::String(t)) if t == "u" => "ManualPositionReport",
        Some(Value::String(t)) if t == "r" => "ResponseToLocationRequest",
        _ => AUTOMATIC_POSITION_REPORT,
    };
    let mut properties = properties(root, &["lat", "lon", "tst", "acc", "alt", "vel", "cog"]);
    if let Some(batt) = properties.remove("batt") {
        properties.insert("battery".into(), batt);
    }
    Ok(message(Some(kind), Some(position), tst, 0, properties))
}

fn transition(root: &Map<String, Value>) -> Result<MoMessage, OwnTracksError> {
    let tst = tst(root)?;
    let position = match (number(root, "lat")?, number(root, "lon")?) {
        (Some(lat), Some(lon)) => Some(fix(root, lat, lon, tst)?),
        _ => None,
    };
    let properties = properties(root, &["lat", "lon", "tst", "acc"]);
    Ok(message(
        Some("GeofenceCrossed"),
        position,
        tst,
        1,
        properties,
    ))
}

fn lwt(root: &Map<String, Value>) -> Result<MoMessage, OwnTracksError> {
    let tst = tst(root)?;
    let mut properties = properties(root, &["tst"]);
    properties.insert("event".into(), "lwt".into());
    Ok(message(None, None, tst, 2, properties))
}

fn message(
    kind: Option<&str>,
    position: Option<Position>,
    tst: Timestamp,
    offset: i64,
    properties: BTreeMap<String, String>,
) -> MoMessage {
    let (sent, sequence) = millisecond_identity(tst);
    MoMessage {
        message_type: kind.map(str::to_string),
        position,
        sent_from_device: Some(sent),
        sequence_number: Some(sequence + offset),
        properties,
        ..MoMessage::default()
    }
}

fn fix(
    root: &Map<String, Value>,
    lat: f64,
    lon: f64,
    tst: Timestamp,
) -> Result<Position, OwnTracksError> {
    checked_lat_lon(lat, lon).map_err(|(which, message)| {
        field(if which == "latitude" { "lat" } else { "lon" }, message)
    })?;
    let known = |v: f64| (v >= 0.0).then_some(v);
    Ok(Position {
        latitude: Some(lat),
        longitude: Some(lon),
        speed: number(root, "vel")?.and_then(known),
        heading: number(root, "cog")?.and_then(known),
        altitude: number(root, "alt")?,
        gps_timestamp: Some(tst),
        accuracy: number(root, "acc")?.and_then(known).map(|a| a.to_string()),
        location_source: Some(SOURCE_GPS.to_string()),
    })
}

/// Every key but `_type` and those `taken`, as properties.
fn properties(root: &Map<String, Value>, taken: &[&str]) -> BTreeMap<String, String> {
    root.iter()
        .filter(|(key, _)| key.as_str() != "_type" && !taken.contains(&key.as_str()))
        .filter_map(|(key, value)| {
            let text = match value {
                Value::Null => return None,
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Some((key.clone(), text))
        })
        .collect()
}

fn number(root: &Map<String, Value>, name: &'static str) -> Result<Option<f64>, OwnTracksError> {
    match root.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64().filter(|v| v.is_finite())),
        // The booklet's own waypoint samples quote numbers.
        Some(Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Some)
            .ok_or(field(name, "is not a number")),
        Some(_) => Err(field(name, "is not a number")),
    }
}

fn tst(root: &Map<String, Value>) -> Result<Timestamp, OwnTracksError> {
    let seconds = number(root, "tst")?.ok_or(field("tst", "is missing"))?;
    if seconds.fract() != 0.0 || seconds < 0.0 {
        return Err(field("tst", "must be whole Unix seconds"));
    }
    #[allow(clippy::cast_possible_truncation)]
    Timestamp::from_second(seconds as i64).map_err(|_| field("tst", "is out of range"))
}

#[cfg(test)]
#[path = "owntracks_tests.rs"]
mod tests;
