//! Iridium SBD DirectIP MO: the Iridium gateway opens a TCP connection and sends one
//! mobile-originated message, in binary information elements (protocol revision 1).
//!
//! **Framing.** A message is the protocol revision (1 byte, `1`), the overall length
//! (u16, big-endian: the bytes that follow) and that many bytes of information elements,
//! each an IEI (1 byte), a length (u16 BE) and that many bytes of data. The listener
//! calls [`frame_status`] as bytes arrive (how many more it needs, or that the frame is
//! complete or can never be valid), then [`parse_message`] on the complete frame, and
//! answers with [`confirmation`] when the gateway asked for one.
//!
//! | IEI | Element | Length | Contents (big-endian) |
//! |---|---|---|---|
//! | `0x01` | MO header (required) | 28 | CDR reference u32, IMEI 15 ASCII digits, session status u8, MOMSN u16, MTMSN u16, session time u32 (Unix seconds) |
//! | `0x02` | MO payload | 1–1960 | the device's bytes |
//! | `0x03` | MO location | 11 | flags u8 (bits 0x02 south, 0x01 west, 0x0C format code, 0 only), latitude degrees u8 + thousandths of a minute u16, longitude degrees u8 + thousandths of a minute u16, CEP radius u32 (km) |
//! | `0x05` | MO confirmation | 1 | sent back by us: 1 accepted, 0 not ([`confirmation`]) |
//!
//! An element with another IEI is skipped (Iridium adds elements over time; the overall
//! length still bounds them); a known element given twice is refused. The overall length
//! is at most [`MAX_OVERALL_LENGTH`] (header, location, the largest payload and a
//! confirmation).
//!
//! **Session status.** 0 (success), 1 (success; the MT message queued for the device was
//! too large) and 2 (success; the location was unacceptable, so it is not used) are
//! stored. 10 (timed out), 12 (MO too large), 13 (RF link loss), 14 (IMEI protocol
//! anomaly), 15 (IMEI prohibited) and any value the protocol does not define mean the
//! session failed: nothing to store ([`DirectIpError::SessionFailed`]).
//!
//! **The message.**
//!
//! | Source | Becomes |
//! |---|---|
//! | IMEI | the device: its `IridiumImei`, else its `DeviceId`, else its `SecondaryDeviceId` |
//! | session time | `SentFromDevice` |
//! | MOMSN | `SequenceNumber` |
//! | payload | `File` (Base64), `MimeType` `application/octet-stream`, `Filename` `<IMEI>-<MOMSN>.sbd`; also `Message` when it is printable UTF-8 text (trailing NUL padding dropped) |
//! | location | `Position.Latitude`/`Longitude` to 4 decimals, `Accuracy` the CEP radius in metres, `LocationSource` `Iridium` |
//! | CDR reference, MOMSN, MTMSN, session status, CEP radius (km) | `Properties.cdrReference`, `momsn`, `mtmsn`, `sessionStatus`, `cepRadiusKm` |
//!
//! `MessageType`: `FreeText` for a text payload, `BinaryMessage` for another payload,
//! else `AutomaticPositionReport` with a location and `MailCheck` without (an empty SBD
//! session is a mailbox check).
//!
//! **Retries.** The gateway resends a message it got no confirmation for; (IMEI, MOMSN,
//! session time) identifies it, so the resend dedupes. The modem's MOMSN wraps from 65535
//! to 0: a wrapped number comes with a later session time, so the dedupe key
//! (`SequenceNumber`, `SentFromDevice`) never mistakes it for the earlier message.

use base64::Engine;
use jiff::Timestamp;

use super::{AUTOMATIC_POSITION_REPORT, DeviceRef, GatewayReport, OCTET_STREAM, round_to};
use crate::domain::mo_message::{MoMessage, Position};

pub const PROTOCOL_REVISION: u8 = 1;
pub const IEI_MO_HEADER: u8 = 0x01;
pub const IEI_MO_PAYLOAD: u8 = 0x02;
pub const IEI_MO_LOCATION: u8 = 0x03;
pub const IEI_MO_CONFIRMATION: u8 = 0x05;
/// Revision and overall length; also each element's IEI and length.
const PREFIX_LEN: usize = 3;
const MO_HEADER_LEN: usize = 28;
const MO_LOCATION_LEN: usize = 11;
const MO_CONFIRMATION_LEN: usize = 1;
/// Largest MO payload Iridium carries.
pub const MAX_MO_PAYLOAD: usize = 1960;
/// Largest overall length accepted: every MO element at its largest.
pub const MAX_OVERALL_LENGTH: usize = (PREFIX_LEN + MO_HEADER_LEN)
    + (PREFIX_LEN + MO_LOCATION_LEN)
    + (PREFIX_LEN + MAX_MO_PAYLOAD)
    + (PREFIX_LEN + MO_CONFIRMATION_LEN);
/// `LocationSource` of a position the Iridium network computed.
pub const SOURCE_IRIDIUM: &str = "Iridium";

/// Why a message gives nothing to store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectIpError {
    #[error("protocol revision {0} is not supported (only 1)")]
    UnsupportedRevision(u8),
    #[error("the overall length {0} is more than the protocol's {MAX_OVERALL_LENGTH}")]
    TooLong(usize),
    #[error("the message is truncated: {expected} bytes declared, {got} received")]
    Truncated { expected: usize, got: usize },
    #[error("the overall length says {expected} bytes but {got} were sent")]
    LengthMismatch { expected: usize, got: usize },
    #[error("element 0x{iei:02x} at byte {offset} runs past the message's end")]
    ElementTruncated { iei: u8, offset: usize },
    #[error("element 0x{iei:02x} is {got} bytes long; it must be {expected}")]
    ElementLength {
        iei: u8,
        expected: usize,
        got: usize,
    },
    #[error("element 0x{0:02x} appears twice")]
    DuplicateElement(u8),
    #[error("the payload is {0} bytes; MO payloads are at most {MAX_MO_PAYLOAD}")]
    PayloadTooLong(usize),
    #[error("the payload element is empty")]
    EmptyPayload,
    #[error("the MO header element (0x01) is missing")]
    MissingHeader,
    #[error("the IMEI is not 15 ASCII digits")]
    BadImei,
    #[error("the location's {0} is out of range")]
    BadLocation(&'static str),
    #[error("the session failed (status {status}: {meaning})")]
    SessionFailed { status: u8, meaning: &'static str },
}

/// What the bytes received so far make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// At least this many more bytes are needed.
    Incomplete { needed: usize },
    /// The first `length` bytes are a whole message.
    Complete { length: usize },
    /// No more bytes can make this a message.
    Invalid(DirectIpError),
}

/// Where a message arriving in `received` stands.
pub fn frame_status(received: &[u8]) -> Frame {
    let Some(&revision) = received.first() else {
        return Frame::Incomplete { needed: PREFIX_LEN };
    };
    if revision != PROTOCOL_REVISION {
        return Frame::Invalid(DirectIpError::UnsupportedRevision(revision));
    }
    let Some(overall) = read_u16(received, 1) else {
        return Frame::Incomplete {
            needed: PREFIX_LEN - received.len(),
        };
    };
    let overall = usize::from(overall);
    if overall > MAX_OVERALL_LENGTH {
        return Frame::Invalid(DirectIpError::TooLong(overall));
    }
    let length = PREFIX_LEN + overall;
    match length.checked_sub(received.len()) {
        Some(needed) if needed > 0 => Frame::Incomplete { needed },
        _ => Frame::Complete { length },
    }
}

/// The MO confirmation message to send back: accepted (stored, or a duplicate) or not.
pub fn confirmation(accepted: bool) -> [u8; 7] {
    [
        PROTOCOL_REVISION,
        0,
        4,
        IEI_MO_CONFIRMATION,
        0,
        1,
        u8::from(accepted),
    ]
}

/// The MO header element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoHeader {
    pub cdr_reference: u32,
    pub imei: String,
    pub session_status: u8,
    pub momsn: u16,
    pub mtmsn: u16,
    pub session_time: Timestamp,
}

/// The MO location element, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct MoLocation {
    /// Degrees, 4 decimals (about 11 m; the element's resolution is 1.85 m).
    pub latitude: f64,
    pub longitude: f64,
    pub cep_radius_km: u32,
}

/// A whole MO message whose session succeeded.
#[derive(Debug, Clone, PartialEq)]
pub struct MoDirectIp {
    pub header: MoHeader,
    pub payload: Option<Vec<u8>>,
    pub location: Option<MoLocation>,
}

/// Reads one whole message (exactly one frame: `frame_status` says how long).
pub fn parse_message(bytes: &[u8]) -> Result<MoDirectIp, DirectIpError> {
    let total = match frame_status(bytes) {
        Frame::Invalid(e) => return Err(e),
        Frame::Incomplete { needed } => {
            let got = bytes.len();
            return Err(DirectIpError::Truncated {
                expected: got + needed,
                got,
            });
        }
        Frame::Complete { length } if length != bytes.len() => {
            return Err(DirectIpError::LengthMismatch {
                expected: length,
                got: bytes.len(),
            });
        }
        Frame::Complete { length } => length,
    };
    let mut header = None;
    let mut payload = None;
    let mut location = None;
    let mut offset = PREFIX_LEN;
    while offset < total {
        let (Some(&iei), Some(length)) = (bytes.get(offset), read_u16(bytes, offset + 1)) else {
            let iei = bytes.get(offset).copied().unwrap_or_default();
            return Err(DirectIpError::ElementTruncated { iei, offset });
        };
        let start = offset + PREFIX_LEN;
        let end = start + usize::from(length);
        let Some(data) = bytes.get(start..end) else {
            return Err(DirectIpError::ElementTruncated { iei, offset });
        };
        match iei {
            IEI_MO_HEADER => set_once(&mut header, iei, parse_header(data)?)?,
            IEI_MO_PAYLOAD => {
                if data.is_empty() {
                    return Err(DirectIpError::EmptyPayload);
                }
                if data.len() > MAX_MO_PAYLOAD {
                    return Err(DirectIpError::PayloadTooLong(data.len()));
                }
                set_once(&mut payload, iei, data.to_vec())?;
            }
            IEI_MO_LOCATION => set_once(&mut location, iei, parse_location(data)?)?,
            // Unknown (and our own confirmation echoed): skipped.
            _ => {}
        }
        offset = end;
    }
    let header = header.ok_or(DirectIpError::MissingHeader)?;
    match header.session_status {
        0 | 1 => {}
        // Location unacceptable: the rest of the message stands.
        2 => location = None,
        status => {
            return Err(DirectIpError::SessionFailed {
                status,
                meaning: session_failure(status),
            });
        }
    }
    Ok(MoDirectIp {
        header,
        payload,
        location,
    })
}

/// Reads a message and makes it a report (see the module's table).
pub fn parse_report(bytes: &[u8]) -> Result<GatewayReport, DirectIpError> {
    parse_message(bytes).map(|m| m.report())
}

impl MoDirectIp {
    /// The message as an MO message of the device with this IMEI.
    pub fn report(&self) -> GatewayReport {
        let h = &self.header;
        let mut properties = std::collections::BTreeMap::from([
            ("cdrReference".to_string(), h.cdr_reference.to_string()),
            ("momsn".to_string(), h.momsn.to_string()),
            ("mtmsn".to_string(), h.mtmsn.to_string()),
            ("sessionStatus".to_string(), h.session_status.to_string()),
        ]);
        let position = self.location.as_ref().map(|l| {
            properties.insert("cepRadiusKm".into(), l.cep_radius_km.to_string());
            Position {
                latitude: Some(l.latitude),
                longitude: Some(l.longitude),
                accuracy: Some((u64::from(l.cep_radius_km) * 1000).to_string()),
                location_source: Some(SOURCE_IRIDIUM.to_string()),
                ..Position::default()
            }
        });
        let text = self.payload.as_deref().and_then(printable_text);
        let message_type = match (&self.payload, &text, &position) {
            (Some(_), Some(t), _) if is_check_in_text(t) => "CheckIn",
            (Some(_), Some(_), _) => "FreeText",
            (Some(_), None, _) => "BinaryMessage",
            (None, _, Some(_)) => AUTOMATIC_POSITION_REPORT,
            (None, _, None) => "MailCheck",
        };
        GatewayReport {
            device: DeviceRef::iridium(h.imei.clone()),
            message: MoMessage {
                message_type: Some(message_type.to_string()),
                message: text,
                position,
                sequence_number: Some(i64::from(h.momsn)),
                sent_from_device: Some(h.session_time),
                properties,
                file: self
                    .payload
                    .as_ref()
                    .map(|p| base64::engine::general_purpose::STANDARD.encode(p)),
                mime_type: self.payload.as_ref().map(|_| OCTET_STREAM.to_string()),
                filename: self
                    .payload
                    .as_ref()
                    .map(|_| format!("{}-{}.sbd", h.imei, h.momsn)),
                ..MoMessage::default()
            },
        }
    }
}

/// The payload as text, when it is UTF-8 without control characters other than tabs and
/// line breaks (NUL padding at its end dropped).
/// A text payload that is the person's check-in (`CHECKIN`, `CHECK IN`, `CHECK-IN`,
/// `OK`, in any case): a `CheckIn`. Other text is the person's `FreeText`; a payload
/// with no text, a position or a mailbox check is never a check-in (DESIGN §11).
fn is_check_in_text(text: &str) -> bool {
    let text = text.trim();
    ["CHECKIN", "CHECK IN", "CHECK-IN", "OK"]
        .iter()
        .any(|word| text.eq_ignore_ascii_case(word))
}

fn printable_text(payload: &[u8]) -> Option<String> {
    let end = payload.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&payload[..end]).ok()?;
    let printable = !text.is_empty()
        && text
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'));
    printable.then(|| text.to_string())
}

fn session_failure(status: u8) -> &'static str {
    match status {
        10 => "the call timed out",
        12 => "the MO message was too large",
        13 => "the RF link was lost",
        14 => "IMEI protocol anomaly",
        15 => "the IMEI is prohibited from the gateway",
        _ => "a status the protocol does not define",
    }
}

fn set_once<T>(slot: &mut Option<T>, iei: u8, value: T) -> Result<(), DirectIpError> {
    if slot.is_some() {
        return Err(DirectIpError::DuplicateElement(iei));
    }
    *slot = Some(value);
    Ok(())
}

fn read_u16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at + 2)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn exact_len(iei: u8, data: &[u8], expected: usize) -> Result<(), DirectIpError> {
    if data.len() == expected {
        Ok(())
    } else {
        Err(DirectIpError::ElementLength {
            iei,
            expected,
            got: data.len(),
        })
    }
}

fn parse_header(data: &[u8]) -> Result<MoHeader, DirectIpError> {
    exact_len(IEI_MO_HEADER, data, MO_HEADER_LEN)?;
    let wrong = || DirectIpError::ElementLength {
        iei: IEI_MO_HEADER,
        expected: MO_HEADER_LEN,
        got: data.len(),
    };
    let imei = data.get(4..19).ok_or_else(wrong)?;
    if !imei.iter().all(u8::is_ascii_digit) {
        return Err(DirectIpError::BadImei);
    }
    let seconds = read_u32(data, 24).ok_or_else(wrong)?;
    Ok(MoHeader {
        cdr_reference: read_u32(data, 0).ok_or_else(wrong)?,
        imei: String::from_utf8_lossy(imei).into_owned(),
        session_status: *data.get(19).ok_or_else(wrong)?,
        momsn: read_u16(data, 20).ok_or_else(wrong)?,
        mtmsn: read_u16(data, 22).ok_or_else(wrong)?,
        // Every u32 of seconds is a valid instant (1970–2106).
        session_time: Timestamp::from_second(i64::from(seconds)).unwrap_or(Timestamp::UNIX_EPOCH),
    })
}

const SOUTH: u8 = 0x02;
const WEST: u8 = 0x01;
const FORMAT_CODE: u8 = 0x0c;
/// Thousandths of a minute in a degree.
const MILLI_MINUTES_PER_DEGREE: f64 = 60_000.0;

fn parse_location(data: &[u8]) -> Result<MoLocation, DirectIpError> {
    exact_len(IEI_MO_LOCATION, data, MO_LOCATION_LEN)?;
    let wrong = || DirectIpError::ElementLength {
        iei: IEI_MO_LOCATION,
        expected: MO_LOCATION_LEN,
        got: data.len(),
    };
    let flags = *data.first().ok_or_else(wrong)?;
    if flags & FORMAT_CODE != 0 {
        return Err(DirectIpError::BadLocation("format code"));
    }
    let angle = |degrees_at: usize, max: u8, name: &'static str| {
        let degrees = *data.get(degrees_at).ok_or_else(wrong)?;
        let minutes = read_u16(data, degrees_at + 1).ok_or_else(wrong)?;
        if degrees > max || minutes >= 60_000 || (degrees == max && minutes > 0) {
            return Err(DirectIpError::BadLocation(name));
        }
        Ok(f64::from(degrees) + f64::from(minutes) / MILLI_MINUTES_PER_DEGREE)
    };
    let latitude = angle(1, 90, "latitude")?;
    let longitude = angle(4, 180, "longitude")?;
    let sign = |negative: bool| if negative { -1.0 } else { 1.0 };
    Ok(MoLocation {
        latitude: round_to(sign(flags & SOUTH != 0) * latitude, 4),
        longitude: round_to(sign(flags & WEST != 0) * longitude, 4),
        cep_radius_km: read_u32(data, 7).ok_or_else(wrong)?,
    })
}

#[cfg(test)]
#[path = "directip_tests.rs"]
mod tests;
