//! Device gateways (README, "Devices that speak other protocols"): the protocols devices
//! and phone apps speak, each report turned into an MO message for the one ingest
//! pipeline. Pure parsing: no HTTP, no SQL, no I/O; the routes and the DirectIP listener
//! call these functions.
//!
//! | Protocol | Input | Module |
//! |---|---|---|
//! | OsmAnd / Traccar Client | query string, form body, or Traccar Client 9 JSON | [`osmand`] |
//! | Garmin inReach IPC Outbound | JSON `{"Version","Events":[…]}`, several devices | [`garmin`] |
//! | Iridium SBD DirectIP MO | binary information elements over TCP | [`directip`] |
//! | Traccar forwarding | JSON `{"position","device"}` / `{"event","position","device"}` | [`traccar`] |
//! | OwnTracks (HTTP mode) | JSON payloads by `_type` (`location`, `transition`, `lwt`) | [`owntracks`] |
//!
//! MT messages back to inReach devices become Garmin IPC Inbound requests in
//! [`garmin_mt`].
//!
//! Each report becomes a [`GatewayReport`]: how to find the device ([`DeviceRef`]) and the
//! message. Protocol fields with no MO field go to `Properties` (each module lists them).
//! Alarms are read in Traccar's names (`domain::alarm`); what each protocol's alarms
//! become is one table in docs/gateways.md.
//!
//! **Retries.** Every protocol here resends what it got no answer for. Ingest drops a
//! message whose (`SequenceNumber`, `SentFromDevice`) a stored message of the same device
//! already has (`mo_messages_dedupe`), so each gateway derives both deterministically from
//! the report itself:
//!
//! | Protocol | `SentFromDevice` | `SequenceNumber` |
//! |---|---|---|
//! | OsmAnd | the report's `timestamp` (whole milliseconds) | the same time in Unix milliseconds |
//! | Garmin | the event's `timeStamp` (ms) | `timeStamp` (Unix milliseconds) |
//! | DirectIP | the header's session time (s) | `MOMSN` |
//! | Traccar | `position.deviceTime` (else `fixTime`) | `fixTime` in Unix milliseconds |
//! | OwnTracks | `tst` (s) | `tst` in Unix milliseconds (+1 `transition`, +2 `lwt`) |
//!
//! A report without a time (an OsmAnd report with no `timestamp`, a Garmin 2.0 binary
//! event) gets neither, is stored at its arrival time and is not deduplicated.

pub mod directip;
pub mod garmin;
pub mod garmin_mt;
pub mod identity;
pub mod osmand;
pub mod owntracks;
pub mod traccar;

use jiff::Timestamp;

use super::mo_message::MoMessage;

/// A device field a gateway identifier is looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKey {
    DeviceId,
    IridiumImei,
    SecondaryDeviceId,
}

impl DeviceKey {
    /// The field's name in the device record.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKey::DeviceId => "DeviceId",
            DeviceKey::IridiumImei => "IridiumImei",
            DeviceKey::SecondaryDeviceId => "SecondaryDeviceId",
        }
    }
}

/// How to find the device a report is from: `id` is looked up in all of `keys` at once
/// (within the gateway credential's tenant scope); the sender is the one device they
/// name, and an `id` naming several devices is refused ([`identity`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRef {
    pub id: String,
    pub keys: &'static [DeviceKey],
}

impl DeviceRef {
    /// A phone app's identifier: a `DeviceId` or a `SecondaryDeviceId`.
    pub fn app(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            keys: &[DeviceKey::DeviceId, DeviceKey::SecondaryDeviceId],
        }
    }

    /// A Garmin IMEI: an `IridiumImei` or a `DeviceId`.
    pub fn garmin(imei: impl Into<String>) -> Self {
        Self {
            id: imei.into(),
            keys: &[DeviceKey::IridiumImei, DeviceKey::DeviceId],
        }
    }

    /// An Iridium modem's IMEI: an `IridiumImei`, a `DeviceId` (often the IMEI) or a
    /// `SecondaryDeviceId`.
    pub fn iridium(imei: impl Into<String>) -> Self {
        Self {
            id: imei.into(),
            keys: &[
                DeviceKey::IridiumImei,
                DeviceKey::DeviceId,
                DeviceKey::SecondaryDeviceId,
            ],
        }
    }
}

/// One report from a device, ready for ingest once the device is found.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayReport {
    pub device: DeviceRef,
    pub message: MoMessage,
}

/// `MessageType` of a position report.
pub const AUTOMATIC_POSITION_REPORT: &str = "AutomaticPositionReport";
/// `LocationSource` of a satellite-navigation fix.
pub const SOURCE_GPS: &str = "Gps";
/// `MimeType` of a binary payload.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// km/h in one knot (exact, by definition of the nautical mile).
const KMH_PER_KNOT: f64 = 1.852;
/// km/h in one m/s.
const KMH_PER_MS: f64 = 3.6;

/// Knots to km/h, to 0.01 km/h.
pub(crate) fn knots_to_kmh(knots: f64) -> f64 {
    round_to(knots * KMH_PER_KNOT, 2)
}

/// m/s to km/h, to 0.01 km/h.
pub(crate) fn ms_to_kmh(ms: f64) -> f64 {
    round_to(ms * KMH_PER_MS, 2)
}

/// `value` rounded to `decimals` places.
pub(crate) fn round_to(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

/// `time` in whole milliseconds, and that number: the dedupe identity of a report whose
/// protocol has no sequence number (`SentFromDevice`, `SequenceNumber`).
pub(crate) fn millisecond_identity(time: Timestamp) -> (Timestamp, i64) {
    let ms = time.as_millisecond();
    (Timestamp::from_millisecond(ms).unwrap_or(time), ms)
}

/// A latitude and longitude, checked for range; `field` names them in the error.
pub(crate) fn checked_lat_lon(
    lat: f64,
    lon: f64,
) -> Result<(f64, f64), (&'static str, &'static str)> {
    if !lat.is_finite() || !(-90.0..=90.0).contains(&lat) {
        return Err(("latitude", "must be between -90 and 90"));
    }
    if !lon.is_finite() || !(-180.0..=180.0).contains(&lon) {
        return Err(("longitude", "must be between -180 and 180"));
    }
    Ok((lat, lon))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_conversions() {
        assert_eq!(knots_to_kmh(10.0), 18.52);
        assert_eq!(knots_to_kmh(0.0), 0.0);
        assert_eq!(ms_to_kmh(10.0), 36.0);
        assert_eq!(ms_to_kmh(1.234), 4.44);
        assert_eq!(round_to(51.500_749, 4), 51.5007);
    }

    #[test]
    fn identity_is_whole_milliseconds() {
        let t: Timestamp = "2026-03-01T10:00:00.123456Z".parse().unwrap();
        let (sent, seq) = millisecond_identity(t);
        assert_eq!(
            sent,
            "2026-03-01T10:00:00.123Z".parse::<Timestamp>().unwrap()
        );
        assert_eq!(seq, 1_772_359_200_123);
    }

    #[test]
    fn reports_pass_the_ingest_rules() {
        let osmand = osmand::parse_query(
            "id=1&lat=51.5&lon=-0.1&timestamp=1772359200&speed=12&bearing=359&altitude=10\
             &accuracy=5&batt=50&alarm=sos",
        )
        .unwrap();
        let garmin = garmin::parse_post(
            br#"{"Version":"2.0","Events":[{"imei":"300434030112330","messageCode":4,
                "timeStamp":1772359200000,"payload":"aGk=",
                "point":{"latitude":51.5,"longitude":-0.1,"altitude":10,"gpsFix":2,
                         "course":90,"speed":4}}]}"#,
        )
        .unwrap()
        .events
        .remove(0)
        .unwrap();
        let mut frame = vec![1, 0, 0];
        for (iei, data) in [
            (
                1u8,
                b"\x00\x00\x00\x01300234063904190\x00\x00\x01\x00\x00\x69\xa4\x0e\x20".to_vec(),
            ),
            (3, vec![0, 51, 0x75, 0x5a, 0, 0x1d, 0x34, 0, 0, 0, 3]),
            (2, b"hello".to_vec()),
        ] {
            frame.push(iei);
            frame.extend_from_slice(&u16::try_from(data.len()).unwrap().to_be_bytes());
            frame.extend_from_slice(&data);
        }
        let overall = u16::try_from(frame.len() - 3).unwrap().to_be_bytes();
        frame[1..3].copy_from_slice(&overall);
        let directip = directip::parse_report(&frame).unwrap();
        let batch = vec![osmand.message, garmin.message, directip.message];
        let stored = crate::domain::mo_message::validated_batch(batch).unwrap();
        assert_eq!(stored.len(), 3);
        assert_eq!(stored[2].record.message.as_deref(), Some("hello"));
    }

    #[test]
    fn lookup_orders() {
        assert_eq!(
            DeviceRef::garmin("1").keys,
            [DeviceKey::IridiumImei, DeviceKey::DeviceId]
        );
        assert_eq!(
            DeviceRef::iridium("1").keys,
            [
                DeviceKey::IridiumImei,
                DeviceKey::DeviceId,
                DeviceKey::SecondaryDeviceId
            ]
        );
        assert_eq!(
            DeviceRef::app("1").keys,
            [DeviceKey::DeviceId, DeviceKey::SecondaryDeviceId]
        );
    }
}
