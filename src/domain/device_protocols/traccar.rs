//! Traccar forwarding: a Traccar server (which decodes some 270 device protocols) posting
//! what its devices report, as its JSON forwarders write it (Traccar's
//! `forward/PositionForwarderJson` and `EventForwarderJson`, the models serialised by
//! Jackson: dates ISO 8601 with offset, `2026-03-01T10:00:00.000+00:00`).
//!
//! - **Position forwarding** (`forward.type=json`): `{"position": {…}, "device": {…}}`.
//! - **Event forwarding** (`event.forward.url`): `{"event": {…}, "position": {…},
//!   "device": {…}}` (also `geofence`, `maintenance`, ignored). An event with a position
//!   is that position's report, with `Properties.event` the event's `type` (and its
//!   `attributes` added); an event without one (`deviceOnline`, `deviceOffline`,
//!   `deviceUnknown`, …: Traccar's word about the device, not the device's) stores
//!   nothing ([`Forwarded::Nothing`]), so Traccar's idea of "offline" never counts as
//!   the device reporting.
//!
//! | Field | Becomes |
//! |---|---|
//! | `device.uniqueId` (required) | the device: its `DeviceId`, else `SecondaryDeviceId`, else `IridiumImei` (within the token's scope) |
//! | `position.deviceTime` (else `fixTime`) | `SentFromDevice` |
//! | `position.fixTime` | `Position.GpsTimestamp` |
//! | `position.valid` | `false`: the report keeps no `Position` (its alarms and attributes still count) |
//! | `position.latitude`, `longitude` | `Position.Latitude`/`Longitude`, `LocationSource` `Gps` |
//! | `position.altitude` (m), `course` (°) | `Position.Altitude`, `Position.Heading` |
//! | `position.speed` (knots) | `Position.Speed` in km/h (× 1.852, to 0.01) |
//! | `position.accuracy` (m) | `Position.Accuracy` when above 0 (Traccar's 0 is "unknown") |
//! | `position.attributes.<key>` | `Properties.<key>` (text as is, other values as JSON) |
//! | `position.attributes.batteryLevel` (%) | `Properties.battery` (what the `Battery` condition reads) |
//! | `position.attributes.battery` (volts, in Traccar) | `Properties.batteryVoltage` (never `battery`, which is percent here) |
//! | `position.attributes.alarm` | `Properties.alarm` as sent; its names per `domain::alarm`: `sos` `EmergencyState` `Active`, `fallDown` `Fall`, `removing`/`tampering` the `Tamper` event, `lowBattery`/`lowPower` `LowBattery`, `powerOff` `MessageType` `PowerDown` |
//! | `position.protocol`, `address` | `Properties.protocol`, `Properties.address` |
//! | `event.type`, `event.attributes.<key>` | `Properties.event`; `Properties.<key>` (an alarm event's `alarm` is already the position's) |
//!
//! `MessageType` is `PowerDown` for a `powerOff` alarm, else `AutomaticPositionReport`:
//! nothing Traccar forwards is a person's check-in (it cannot tell a button from a
//! timer), but an SOS or a fall is an emergency, which confirms one (DESIGN §11).
//!
//! **Retries** (`forward.retry.*`): Traccar resends a position it got no 2xx for. The
//! dedupe key is `SentFromDevice` = `deviceTime` and `SequenceNumber` = `fixTime` in
//! Unix milliseconds, so a resend — and the same position arriving by event forwarding
//! too — is stored once. Not `position.id`: position forwarding runs before Traccar
//! stores the position, so a first attempt carries `id` 0 and a retry the stored id.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Map, Value};

use super::{
    AUTOMATIC_POSITION_REPORT, DeviceKey, DeviceRef, GatewayReport, SOURCE_GPS, checked_lat_lon,
    knots_to_kmh, millisecond_identity,
};
use crate::domain::alarm::{self, ALARM_PROPERTY};
use crate::domain::mo_message::{MoMessage, Position};

/// Why a forwarded body cannot be read. Nothing of it is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraccarError {
    #[error("the body is not valid JSON: {0}")]
    Json(String),
    #[error("`{field}` {message}")]
    Field {
        field: &'static str,
        message: &'static str,
    },
}

fn field(field: &'static str, message: &'static str) -> TraccarError {
    TraccarError::Field { field, message }
}

/// What a forwarded body comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Forwarded {
    /// A report of the device.
    Report(Box<GatewayReport>),
    /// An event without a position (Traccar's word about the device): nothing to store
    /// for the device `uniqueId` names.
    Nothing(DeviceRef),
}

/// A device's `uniqueId`, looked up as a `DeviceId`, `SecondaryDeviceId` or
/// `IridiumImei`.
pub fn device_ref(unique_id: impl Into<String>) -> DeviceRef {
    DeviceRef {
        id: unique_id.into(),
        keys: &[
            DeviceKey::DeviceId,
            DeviceKey::SecondaryDeviceId,
            DeviceKey::IridiumImei,
        ],
    }
}

/// A position or event forwarding body.
pub fn parse(body: &[u8]) -> Result<Forwarded, TraccarError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| TraccarError::Json(e.to_string()))?;
    let Value::Object(root) = value else {
        return Err(TraccarError::Json("expected an object".into()));
    };
    let device = device_of(&root)?;
    let event = object(&root, "event")?;
    let Some(position) = object(&root, "position")? else {
        return match event {
            Some(_) => Ok(Forwarded::Nothing(device)),
            None => Err(field(
                "position",
                "is missing (or `event`, for event forwarding)",
            )),
        };
    };
    let mut message = position_message(position)?;
    if let Some(event) = event {
        add_event(&mut message.properties, event)?;
    }
    Ok(Forwarded::Report(Box::new(GatewayReport {
        device,
        message,
    })))
}

fn device_of(root: &Map<String, Value>) -> Result<DeviceRef, TraccarError> {
    let device = object(root, "device")?.ok_or(field("device", "is missing"))?;
    match device.get("uniqueId") {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(device_ref(s.trim())),
        Some(Value::Number(n)) => Ok(device_ref(n.to_string())),
        _ => Err(field("device.uniqueId", "is missing")),
    }
}

/// `parent.name` as an object (`None` when absent or null).
fn object<'a>(
    parent: &'a Map<String, Value>,
    name: &'static str,
) -> Result<Option<&'a Map<String, Value>>, TraccarError> {
    match parent.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(_) => Err(field(name, "must be an object")),
    }
}

fn position_message(position: &Map<String, Value>) -> Result<MoMessage, TraccarError> {
    let fix_time = time(position, "fixTime", "position.fixTime")?;
    let device_time = time(position, "deviceTime", "position.deviceTime")?;
    let mut properties = attributes(position, "attributes", "position.attributes")?;
    for key in ["protocol", "address"] {
        if let Some(Value::String(text)) = position.get(key) {
            properties.insert(key.to_string(), text.clone());
        }
    }
    let alarms = properties
        .get(ALARM_PROPERTY)
        .map(|list| alarm::alarms_in(list))
        .unwrap_or_default();
    let valid = match position.get("valid") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(field("position.valid", "must be true or false")),
    };
    let fix = if valid {
        Some(fix(position, fix_time)?)
    } else {
        None
    };
    let sent = device_time.or(fix_time).map(millisecond_identity);
    let sequence = fix_time.or(device_time).map(|t| millisecond_identity(t).1);
    let message_type = if alarm::powers_off(&alarms) {
        "PowerDown"
    } else {
        AUTOMATIC_POSITION_REPORT
    };
    Ok(MoMessage {
        message_type: Some(message_type.to_string()),
        position: fix,
        sent_from_device: sent.map(|(t, _)| t),
        sequence_number: sequence,
        emergency_state: alarm::emergency_of(&alarms),
        properties,
        ..MoMessage::default()
    })
}

/// A valid position's fix.
fn fix(
    position: &Map<String, Value>,
    fix_time: Option<Timestamp>,
) -> Result<Position, TraccarError> {
    let lat = number(position, "latitude", "position.latitude")?
        .ok_or(field("position.latitude", "is missing"))?;
    let lon = number(position, "longitude", "position.longitude")?
        .ok_or(field("position.longitude", "is missing"))?;
    checked_lat_lon(lat, lon).map_err(|(which, message)| {
        let name = if which == "latitude" {
            "position.latitude"
        } else {
            "position.longitude"
        };
        field(name, message)
    })?;
    let speed = number(position, "speed", "position.speed")?.filter(|s| *s >= 0.0);
    let accuracy = number(position, "accuracy", "position.accuracy")?.filter(|a| *a > 0.0);
    Ok(Position {
        latitude: Some(lat),
        longitude: Some(lon),
        speed: speed.map(knots_to_kmh),
        heading: number(position, "course", "position.course")?,
        altitude: number(position, "altitude", "position.altitude")?,
        gps_timestamp: fix_time.map(|t| millisecond_identity(t).0),
        accuracy: accuracy.map(|a| a.to_string()),
        location_source: Some(SOURCE_GPS.to_string()),
    })
}

/// The event's type and attributes added to its position's properties (the position's
/// own win: an alarm event's `alarm` is one of the position's).
fn add_event(
    properties: &mut BTreeMap<String, String>,
    event: &Map<String, Value>,
) -> Result<(), TraccarError> {
    for (key, value) in attributes(event, "attributes", "event.attributes")? {
        properties.entry(key).or_insert(value);
    }
    match event.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(kind)) => {
            properties.insert("event".into(), kind.clone());
        }
        Some(_) => return Err(field("event.type", "must be a string")),
    }
    Ok(())
}

/// Traccar's `attributes` as properties: text as is, other values as JSON; its
/// `batteryLevel` (percent) as `battery`, its `battery` (volts) as `batteryVoltage`.
fn attributes(
    parent: &Map<String, Value>,
    name: &'static str,
    path: &'static str,
) -> Result<BTreeMap<String, String>, TraccarError> {
    let mut properties = BTreeMap::new();
    let attributes = match parent.get(name) {
        None | Some(Value::Null) => return Ok(properties),
        Some(Value::Object(o)) => o,
        Some(_) => return Err(field(path, "must be an object")),
    };
    for (key, value) in attributes {
        let text = match value {
            Value::Null => continue,
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let key = match key.as_str() {
            "batteryLevel" => "battery",
            "battery" => "batteryVoltage",
            other => other,
        };
        properties.insert(key.to_string(), text);
    }
    Ok(properties)
}

fn number(
    parent: &Map<String, Value>,
    name: &str,
    path: &'static str,
) -> Result<Option<f64>, TraccarError> {
    match parent.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64().filter(|v| v.is_finite())),
        Some(_) => Err(field(path, "is not a number")),
    }
}

/// A Jackson date: ISO 8601 with an offset (or `Z`), or Unix milliseconds (Jackson's
/// other form, `WRITE_DATES_AS_TIMESTAMPS`).
fn time(
    parent: &Map<String, Value>,
    name: &str,
    path: &'static str,
) -> Result<Option<Timestamp>, TraccarError> {
    const BAD: &str = "must be an ISO 8601 date-time with an offset, or Unix milliseconds";
    match parent.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s
            .trim()
            .parse::<Timestamp>()
            .map(Some)
            .map_err(|_| field(path, BAD)),
        Some(Value::Number(n)) => n
            .as_i64()
            .and_then(|ms| Timestamp::from_millisecond(ms).ok())
            .map(Some)
            .ok_or(field(path, BAD)),
        Some(_) => Err(field(path, BAD)),
    }
}

#[cfg(test)]
#[path = "traccar_tests.rs"]
mod tests;
