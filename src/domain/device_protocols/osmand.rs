//! OsmAnd / Traccar Client: phone apps reporting over HTTP (GET or POST).
//!
//! **Query string or form body** ([`parse_query`]), one report:
//!
//! | Field | Becomes |
//! |---|---|
//! | `id` or `deviceid` (required) | the device: its `DeviceId`, else its `SecondaryDeviceId` |
//! | `lat` + `lon`, or `location=lat,lon` | `Position.Latitude`/`Longitude`, `LocationSource` `Gps` |
//! | `timestamp` | `SentFromDevice` and `Position.GpsTimestamp`: an integer below 2³¹ is Unix seconds, above it Unix milliseconds; else ISO 8601 (no offset: UTC) or `yyyy-MM-dd HH:mm:ss` (UTC) |
//! | `speed` (knots) | `Position.Speed` in km/h (× 1.852, to 0.01) |
//! | `bearing` or `heading` (degrees) | `Position.Heading` |
//! | `altitude` (m) | `Position.Altitude` |
//! | `accuracy` (m) | `Position.Accuracy` |
//! | `hdop` | `Properties.hdop` |
//! | `batt` (%) | `Properties.battery` (what the `Battery` condition reads) |
//! | `charge` | `Properties.charge` |
//! | `alarm` | `Properties.alarm`, Traccar's names, comma-separated when several (`domain::alarm`): `sos` sets `EmergencyState` `Active`, `fall` / `fallDown` `Fall`, `powerOff` makes the report a `PowerDown`; `removing`/`tampering` are the `Tamper` event, `lowBattery`/`lowPower` `LowBattery` |
//! | `event` | `Properties.event`; `event=checkin` (also `check-in`, `check_in`) makes the report a `CheckIn`, a person's act |
//! | any other key (`cell`, `wifi`, `valid`, `driverUniqueId`, …) | `Properties.<key>` as sent |
//!
//! **Traccar Client 9 JSON** (`Content-Type: application/json`, [`parse_json`]): an object
//! `{"device_id", "location"}` where `location` is one location or an array of them (a
//! batch), each:
//!
//! | Field | Becomes |
//! |---|---|
//! | `device_id` (required; string or number) | the device, as `id` above |
//! | `location.timestamp` (ISO 8601) | `SentFromDevice`, `Position.GpsTimestamp` |
//! | `location.coords.latitude`/`longitude` | the position |
//! | `location.coords.accuracy` (m) | `Position.Accuracy` |
//! | `location.coords.speed` (m/s) | `Position.Speed` in km/h (× 3.6, to 0.01) |
//! | `location.coords.heading`, `altitude` | `Position.Heading`, `Position.Altitude` |
//! | `location.battery.level` (0–1) | `Properties.battery` in percent |
//! | `location.battery.is_charging` | `Properties.charge` (`true`/`false`) |
//! | `location.is_moving` | `Properties.is_moving` (`true`/`false`) |
//! | `location.event` | `Properties.event` |
//! | `location.activity.type` | `Properties.activity` |
//! | `location.extras.<key>` | `Properties.<key>` (text as is, other values as JSON); `extras.alarm` as `alarm` above |
//!
//! In both forms a negative speed, heading, accuracy or battery level means "unknown" and
//! is left out. A report without both coordinates (only cells or Wi-Fi, or nothing) has no
//! `Position`; one is never made up. A report's `MessageType` is `AutomaticPositionReport`
//! — never a check-in, however often it comes — unless its `event` is an explicit
//! check-in (then `CheckIn`); the protocol never clears an emergency (`EmergencyState` is
//! left out unless the report raises one).
//!
//! **Retries.** The app resends a report it got no answer for. `SentFromDevice` is the
//! report's time in whole milliseconds and `SequenceNumber` the same instant in Unix
//! milliseconds, so a resend has the same dedupe key and is stored once. A report without
//! `timestamp` has neither and is not deduplicated.

use std::collections::BTreeMap;

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use serde_json::Value;

use super::{
    AUTOMATIC_POSITION_REPORT, DeviceRef, GatewayReport, SOURCE_GPS, checked_lat_lon, knots_to_kmh,
    millisecond_identity, ms_to_kmh, round_to,
};
use crate::domain::alarm;
use crate::domain::mo_message::{EmergencyState, MoMessage, Position};

/// Why a report cannot be read. Nothing of it is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OsmAndError {
    #[error("the device identifier is missing (`id` or `deviceid`; `device_id` in JSON)")]
    MissingDeviceId,
    #[error("`{field}` {message}")]
    Field { field: String, message: String },
    #[error("the body is not valid JSON: {0}")]
    Json(String),
}

impl OsmAndError {
    fn field(field: &str, message: impl Into<String>) -> Self {
        Self::Field {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

const NOT_A_NUMBER: &str = "is not a number";

/// One report from a query string or an `application/x-www-form-urlencoded` body (without
/// the leading `?`). A key given twice takes its last value.
pub fn parse_query(input: &str) -> Result<GatewayReport, OsmAndError> {
    let mut report = Report::default();
    for (key, value) in form_urlencoded::parse(input.as_bytes()) {
        report.set_query_field(&key, value.trim())?;
    }
    report.finish()
}

/// The reports of a Traccar Client 9 JSON body (one, or one per element of a `location`
/// array).
pub fn parse_json(body: &[u8]) -> Result<Vec<GatewayReport>, OsmAndError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| OsmAndError::Json(e.to_string()))?;
    let Value::Object(root) = value else {
        return Err(OsmAndError::Json("expected an object".into()));
    };
    let device = match root.get("device_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Null | Value::String(_)) | None => return Err(OsmAndError::MissingDeviceId),
        Some(_) => {
            return Err(OsmAndError::field(
                "device_id",
                "must be a string or a number",
            ));
        }
    };
    let locations: Vec<(String, &Value)> = match root.get("location") {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("location[{i}]"), v))
            .collect(),
        Some(Value::Null) | None => vec![],
        Some(other) => vec![("location".to_string(), other)],
    };
    if locations.is_empty() {
        // A bare heartbeat: the device reported, with nothing more to say.
        let report = Report {
            device: Some(device),
            ..Report::default()
        };
        return Ok(vec![report.finish()?]);
    }
    locations
        .into_iter()
        .map(|(path, location)| {
            let mut report = Report {
                device: Some(device.clone()),
                ..Report::default()
            };
            report.set_json_location(&path, location)?;
            report.finish()
        })
        .collect()
}

/// What a report said, field by field, before it becomes a message.
#[derive(Default)]
struct Report {
    device: Option<String>,
    lat: Option<(f64, &'static str)>,
    lon: Option<(f64, &'static str)>,
    time: Option<Timestamp>,
    speed_kmh: Option<f64>,
    heading: Option<f64>,
    altitude: Option<f64>,
    accuracy: Option<f64>,
    emergency: Option<EmergencyState>,
    properties: BTreeMap<String, String>,
}

impl Report {
    fn set_query_field(&mut self, key: &str, value: &str) -> Result<(), OsmAndError> {
        match key {
            "id" | "deviceid" => self.device = Some(value.to_string()).filter(|v| !v.is_empty()),
            "lat" => self.lat = Some((number(key, value)?, "lat")),
            "lon" => self.lon = Some((number(key, value)?, "lon")),
            "location" => {
                let (lat, lon) = value
                    .split_once(',')
                    .ok_or_else(|| OsmAndError::field(key, "must be `latitude,longitude`"))?;
                self.lat = Some((number(key, lat.trim())?, "location"));
                self.lon = Some((number(key, lon.trim())?, "location"));
            }
            "timestamp" => {
                self.time = Some(parse_time(value).map_err(|m| OsmAndError::field(key, m))?)
            }
            "speed" => self.speed_kmh = known(number(key, value)?).map(knots_to_kmh),
            "bearing" | "heading" => self.heading = known(number(key, value)?),
            "altitude" => self.altitude = Some(number(key, value)?),
            "accuracy" => self.accuracy = known(number(key, value)?),
            "hdop" => {
                number(key, value)?;
                self.properties.insert("hdop".into(), value.to_string());
            }
            "batt" => match known(number(key, value)?) {
                Some(_) => {
                    self.properties.insert("battery".into(), value.to_string());
                }
                None => {
                    self.properties.remove("battery");
                }
            },
            "alarm" => {
                self.emergency = alarm_state(value);
                self.properties.insert("alarm".into(), value.to_string());
            }
            "" => {}
            // `charge` and every other key: kept as sent.
            other => {
                self.properties.insert(other.to_string(), value.to_string());
            }
        }
        Ok(())
    }

    fn set_json_location(&mut self, path: &str, location: &Value) -> Result<(), OsmAndError> {
        let Value::Object(_) = location else {
            return Err(OsmAndError::field(path, "must be an object"));
        };
        let at = |name: &str| format!("{path}.{name}");
        if let Some(extras) = location.get("extras") {
            let Value::Object(extras) = extras else {
                return Err(OsmAndError::field(&at("extras"), "must be an object"));
            };
            for (key, value) in extras {
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Null => continue,
                    other => other.to_string(),
                };
                if key == "alarm" && alarm_state(&text).is_some() {
                    self.emergency = alarm_state(&text);
                }
                self.properties.insert(key.clone(), text);
            }
        }
        match location.get("timestamp") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => {
                let t = parse_time(s).map_err(|m| OsmAndError::field(&at("timestamp"), m))?;
                self.time = Some(t);
            }
            Some(_) => {
                return Err(OsmAndError::field(
                    &at("timestamp"),
                    "must be an ISO 8601 date-time",
                ));
            }
        }
        let coords = location.get("coords").filter(|c| !c.is_null());
        if let Some(coords) = coords {
            let coord = |name: &str| json_number(coords, name, &at("coords"));
            self.lat = coord("latitude")?.map(|v| (v, "latitude"));
            self.lon = coord("longitude")?.map(|v| (v, "longitude"));
            self.accuracy = coord("accuracy")?.and_then(known);
            self.speed_kmh = coord("speed")?.and_then(known).map(ms_to_kmh);
            self.heading = coord("heading")?.and_then(known);
            self.altitude = coord("altitude")?;
        }
        if let Some(battery) = location.get("battery").filter(|b| !b.is_null()) {
            if let Some(level) = json_number(battery, "level", &at("battery"))?.and_then(known) {
                let percent = round_to(level * 100.0, 2);
                self.properties
                    .insert("battery".into(), percent.to_string());
            }
            if let Some(charging) = json_bool(battery, "is_charging", &at("battery"))? {
                self.properties
                    .insert("charge".into(), charging.to_string());
            }
        }
        if let Some(moving) = json_bool(location, "is_moving", path)? {
            self.properties
                .insert("is_moving".into(), moving.to_string());
        }
        if let Some(event) = json_text(location, "event", path)? {
            self.properties.insert("event".into(), event);
        }
        if let Some(activity) = location.get("activity").filter(|a| !a.is_null())
            && let Some(kind) = json_text(activity, "type", &at("activity"))?
        {
            self.properties.insert("activity".into(), kind);
        }
        Ok(())
    }

    fn finish(self) -> Result<GatewayReport, OsmAndError> {
        let device = self.device.ok_or(OsmAndError::MissingDeviceId)?;
        let position = match (self.lat, self.lon) {
            (Some((lat, lat_field)), Some((lon, lon_field))) => {
                checked_lat_lon(lat, lon).map_err(|(which, message)| {
                    let field = if which == "latitude" {
                        lat_field
                    } else {
                        lon_field
                    };
                    OsmAndError::field(field, message)
                })?;
                Some(Position {
                    latitude: Some(lat),
                    longitude: Some(lon),
                    speed: self.speed_kmh,
                    heading: self.heading,
                    altitude: self.altitude,
                    gps_timestamp: self.time.map(|t| millisecond_identity(t).0),
                    accuracy: self.accuracy.map(|a| a.to_string()),
                    location_source: Some(SOURCE_GPS.to_string()),
                })
            }
            // Half a position is no position (and never a made-up one).
            _ => None,
        };
        let identity = self.time.map(millisecond_identity);
        Ok(GatewayReport {
            device: DeviceRef::app(device),
            message: MoMessage {
                message_type: Some(message_type(&self.properties).to_string()),
                position,
                sent_from_device: identity.map(|(sent, _)| sent),
                sequence_number: identity.map(|(_, sequence)| sequence),
                emergency_state: self.emergency,
                properties: self.properties,
                ..MoMessage::default()
            },
        })
    }
}

/// The emergency an `alarm` names (a comma-separated list, Traccar's names:
/// `domain::alarm`): `sos` an SOS, `fall` / `fallDown` a fall; any other alarm none.
fn alarm_state(alarm: &str) -> Option<EmergencyState> {
    alarm::emergency_of(&alarm::alarms_in(alarm))
}

/// `CheckIn` when the report carries the person's explicit event (`event=checkin`, the
/// app's check-in button), else `PowerDown` for a `powerOff` alarm, else
/// `AutomaticPositionReport`: a phone's routine reports are never a person's check-in
/// (DESIGN §11).
fn message_type(properties: &BTreeMap<String, String>) -> &'static str {
    let explicit = properties.get("event").is_some_and(|event| {
        let event = event.trim();
        ["checkin", "check-in", "check_in"]
            .iter()
            .any(|name| event.eq_ignore_ascii_case(name))
    });
    let powers_off = properties
        .get(alarm::ALARM_PROPERTY)
        .is_some_and(|list| alarm::powers_off(&alarm::alarms_in(list)));
    if explicit {
        "CheckIn"
    } else if powers_off {
        "PowerDown"
    } else {
        AUTOMATIC_POSITION_REPORT
    }
}

/// A negative reading means the app does not know it.
fn known(value: f64) -> Option<f64> {
    (value >= 0.0).then_some(value)
}

fn number(field: &str, value: &str) -> Result<f64, OsmAndError> {
    value
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .ok_or_else(|| OsmAndError::field(field, NOT_A_NUMBER))
}

fn json_number(parent: &Value, name: &str, path: &str) -> Result<Option<f64>, OsmAndError> {
    match parent.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) => number(&format!("{path}.{name}"), s.trim()).map(Some),
        Some(_) => Err(OsmAndError::field(&format!("{path}.{name}"), NOT_A_NUMBER)),
    }
}

fn json_bool(parent: &Value, name: &str, path: &str) -> Result<Option<bool>, OsmAndError> {
    match parent.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(OsmAndError::field(
            &format!("{path}.{name}"),
            "must be true or false",
        )),
    }
}

fn json_text(parent: &Value, name: &str, path: &str) -> Result<Option<String>, OsmAndError> {
    match parent.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(OsmAndError::field(
            &format!("{path}.{name}"),
            "must be a string",
        )),
    }
}

/// Unix seconds (below 2³¹) or milliseconds, ISO 8601 (UTC when it has no offset), or
/// `yyyy-MM-dd HH:mm:ss` in UTC.
pub fn parse_time(raw: &str) -> Result<Timestamp, &'static str> {
    let raw = raw.trim();
    if let Ok(n) = raw.parse::<i64>() {
        let time = if n < 1 << 31 {
            Timestamp::from_second(n)
        } else {
            Timestamp::from_millisecond(n)
        };
        return time.map_err(|_| "is out of range");
    }
    if let Ok(time) = raw.parse::<Timestamp>() {
        return Ok(time);
    }
    // jiff's civil parser takes `T` or a space between date and time.
    if let Ok(civil) = raw.parse::<DateTime>() {
        return civil
            .to_zoned(TimeZone::UTC)
            .map(|z| z.timestamp())
            .map_err(|_| "is out of range");
    }
    Err("must be Unix seconds or milliseconds, ISO 8601, or `yyyy-MM-dd HH:mm:ss` (UTC)")
}

#[cfg(test)]
#[path = "osmand_tests.rs"]
mod tests;
