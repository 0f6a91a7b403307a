//! Local and UTC times of itinerary segments.
//!
//! Each segment end (a flight's departure, a hotel's check-out, …) has a pair: a local
//! time written without offset (`2026-03-29T01:30:00`) and a UTC time
//! (`2026-03-29T00:30:00Z`), plus the time zone of the place. At least one of the pair is
//! given; the other is computed with the zone (IANA or Windows name). A local time that
//! does not exist in the zone (skipped by a daylight-saving change) is refused; one that
//! exists twice (the hour repeated in autumn) is the earlier instant, as RFC 5545 and
//! most calendars read it. When both are given and the zone is known, they must agree.

use jiff::civil::{DateTime, DateTimeRound, Time};
use jiff::fmt::temporal::Pieces;
use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::{RoundMode, Timestamp, TimestampRound, Unit};

use crate::domain::time::resolve_time_zone;
use crate::domain::validation::Validator;

/// The field names of one local/UTC pair and the zone that relates them.
#[derive(Debug, Clone, Copy)]
pub struct PairNames {
    pub local: &'static str,
    pub utc: &'static str,
    pub zone: &'static str,
}

/// What a segment's time-zone field holds after validation.
#[derive(Debug, Clone)]
pub enum Zone {
    Missing,
    /// Unknown name (already reported).
    Invalid,
    Known(String, TimeZone),
}

/// Reads a time-zone field (blank counts as absent): trims it in place and reports an
/// unknown name.
pub fn read_zone(v: &mut Validator, field: &str, value: &mut Option<String>) -> Zone {
    let Some(name) = blank_to_none(value) else {
        return Zone::Missing;
    };
    match resolve_time_zone(&name) {
        Some(tz) => Zone::Known(name, tz),
        None => {
            v.add(
                field,
                format!("'{name}' is not a known IANA or Windows time zone id"),
            );
            Zone::Invalid
        }
    }
}

/// One end's time, resolved: the UTC instant, and the local time when it was given or
/// the zone is known (a UTC time given without a zone has no local time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentTime {
    pub local: Option<DateTime>,
    pub utc: Timestamp,
}

/// Resolves one pair: the missing time computed from the given one. Returns both when
/// the pair is complete and consistent; every problem is reported.
pub fn resolve_pair(
    v: &mut Validator,
    names: PairNames,
    zone: &Zone,
    local: Option<&str>,
    utc: Option<&str>,
) -> Option<SegmentTime> {
    if report_blank(v, names, local, utc) {
        return None;
    }
    let local_text = local.map(str::trim);
    let utc_text = utc.map(str::trim);
    if local_text.is_none() && utc_text.is_none() {
        let message = format!("one of {} and {} is required", names.local, names.utc);
        v.add(names.local, message.clone());
        v.add(names.utc, message);
        return None;
    }
    let (local_dt, utc_ts) = parse_pair(v, names, local_text, utc_text)?;
    let instant = match (local_dt, utc_ts) {
        (_, Some(ts)) => local_agrees(v, names, zone, local_dt, ts).then_some(ts)?,
        (Some(dt), None) => local_instant(v, names, zone, dt)?,
        (None, None) => return None,
    };
    let local = match (local_dt, zone) {
        (Some(dt), _) => Some(dt),
        (None, Zone::Known(_, tz)) => Some(tz.to_datetime(instant)),
        (None, _) => None,
    };
    Some(SegmentTime {
        local,
        utc: instant,
    })
}

/// Reports each time of the pair that is blank; true when one is. A blank time is no
/// date-time: refused like any other malformed one (send null or leave the field out for
/// "not given").
fn report_blank(
    v: &mut Validator,
    names: PairNames,
    local: Option<&str>,
    utc: Option<&str>,
) -> bool {
    let mut blank = false;
    for (name, value) in [(names.local, local), (names.utc, utc)] {
        if value.is_some_and(|t| t.trim().is_empty()) {
            v.add(
                name,
                "is blank: send a date-time, null, or leave the field out",
            );
            blank = true;
        }
    }
    blank
}

/// Parses the times given, reporting each that does not parse; `None` when one did not.
fn parse_pair(
    v: &mut Validator,
    names: PairNames,
    local: Option<&str>,
    utc: Option<&str>,
) -> Option<(Option<DateTime>, Option<Timestamp>)> {
    let local = local.map(parse_local).transpose();
    let utc = utc.map(parse_utc).transpose();
    if let Err(message) = &local {
        v.add(names.local, message.clone());
    }
    if let Err(message) = &utc {
        v.add(names.utc, message.clone());
    }
    Some((local.ok()?, utc.ok()?))
}

/// The instant of a local time given without its UTC time: needs a known zone, and the
/// time must exist there.
fn local_instant(
    v: &mut Validator,
    names: PairNames,
    zone: &Zone,
    dt: DateTime,
) -> Option<Timestamp> {
    match zone {
        Zone::Known(name, tz) => {
            let instant = to_instant(tz, dt);
            if instant.is_err() {
                v.add(
                    names.local,
                    format!(
                        "{} does not exist in {name}: the clocks skip it (daylight saving)",
                        format_local(dt)
                    ),
                );
            }
            instant.ok()
        }
        Zone::Missing => {
            v.add(
                names.zone,
                format!("is required to compute {} from {}", names.utc, names.local),
            );
            None
        }
        Zone::Invalid => None,
    }
}

/// Whether the local time, when given with the UTC time and a known zone, names the same
/// instant; reports it when not.
fn local_agrees(
    v: &mut Validator,
    names: PairNames,
    zone: &Zone,
    local: Option<DateTime>,
    utc: Timestamp,
) -> bool {
    let (Some(dt), Zone::Known(name, tz)) = (local, zone) else {
        return true;
    };
    let expected = tz.to_datetime(utc);
    if expected != dt {
        v.add(
            names.local,
            format!(
                "does not match {} ({utc}), which is {expected} in {name}",
                names.utc
            ),
        );
        return false;
    }
    true
}

/// The instant a local time names in a zone: `Err` in a gap; the earlier one in a fold.
fn to_instant(tz: &TimeZone, dt: DateTime) -> Result<Timestamp, ()> {
    let ambiguous = tz.to_ambiguous_timestamp(dt);
    match ambiguous.offset() {
        AmbiguousOffset::Gap { .. } => Err(()),
        AmbiguousOffset::Unambiguous { .. } | AmbiguousOffset::Fold { .. } => {
            ambiguous.earlier().map_err(|_| ())
        }
    }
}

/// `2026-03-29T01:30:00`: seconds always written, fractions only when present.
pub fn format_local(dt: DateTime) -> String {
    dt.strftime(if dt.subsec_nanosecond() == 0 {
        "%Y-%m-%dT%H:%M:%S"
    } else {
        "%Y-%m-%dT%H:%M:%S%.f"
    })
    .to_string()
}

/// A local date-time: ISO 8601 without offset (`2026-03-29T01:30:00`; a date alone is
/// midnight). Truncated to microseconds, what the store keeps.
pub fn parse_local(text: &str) -> Result<DateTime, String> {
    let pieces = Pieces::parse(text)
        .map_err(|_| format!("'{text}' is not a local date-time such as 2026-03-29T01:30:00"))?;
    if pieces.offset().is_some() || pieces.time_zone_annotation().is_some() {
        return Err(format!(
            "'{text}' has an offset; a local time is written without one (2026-03-29T01:30:00)"
        ));
    }
    let dt = pieces
        .date()
        .to_datetime(pieces.time().unwrap_or(Time::midnight()));
    dt.round(
        DateTimeRound::new()
            .smallest(Unit::Microsecond)
            .mode(RoundMode::Trunc),
    )
    .map_err(|_| format!("'{text}' is out of range"))
}

/// A UTC instant: RFC 3339 with `Z` or an offset; without one the value is read as UTC
/// (the field is UTC by definition); a date alone is midnight UTC. Truncated to
/// microseconds.
pub fn parse_utc(text: &str) -> Result<Timestamp, String> {
    let pieces = Pieces::parse(text)
        .map_err(|_| format!("'{text}' is not a date-time such as 2026-03-29T00:30:00Z"))?;
    if pieces.time_zone_annotation().is_some() {
        return Err(format!(
            "'{text}' has a time zone annotation; give an offset or Z instead"
        ));
    }
    let offset = pieces.to_numeric_offset().unwrap_or(Offset::UTC);
    let dt = pieces
        .date()
        .to_datetime(pieces.time().unwrap_or(Time::midnight()));
    offset
        .to_timestamp(dt)
        .and_then(|ts| {
            ts.round(
                TimestampRound::new()
                    .smallest(Unit::Microsecond)
                    .mode(RoundMode::Trunc),
            )
        })
        .map_err(|_| format!("'{text}' is out of range"))
}

/// Trims the value in place; blank becomes `None`. Returns the trimmed text.
pub fn blank_to_none(value: &mut Option<String>) -> Option<String> {
    let trimmed = value
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    *value = trimmed.clone();
    trimmed
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPARTURE: PairNames = PairNames {
        local: "DepartureTimeLocal",
        utc: "DepartureTime",
        zone: "DepartureTimeZoneId",
    };

    fn zone(name: &str) -> Zone {
        let mut v = Validator::new();
        let z = read_zone(&mut v, "Zone", &mut Some(name.to_string()));
        assert!(v.is_empty(), "{name}");
        z
    }

    fn resolve(
        zone: &Zone,
        local: Option<&str>,
        utc: Option<&str>,
    ) -> Result<(Option<String>, Option<String>), Vec<String>> {
        let mut v = Validator::new();
        let result = resolve_pair(&mut v, DEPARTURE, zone, local, utc);
        match v.finish() {
            Ok(()) => {
                let time = result.expect("a resolved pair");
                Ok((time.local.map(format_local), Some(time.utc.to_string())))
            }
            Err(e) => {
                assert!(result.is_none());
                Err(e.0.into_iter().map(|f| f.field).collect())
            }
        }
    }

    #[test]
    fn local_to_utc_and_back() {
        let london = zone("Europe/London");
        assert_eq!(
            resolve(&london, Some("2026-07-01T09:15:00"), None).unwrap(),
            (
                Some("2026-07-01T09:15:00".into()),
                Some("2026-07-01T08:15:00Z".into())
            )
        );
        assert_eq!(
            resolve(&london, None, Some("2026-01-10T09:15:00+01:00")).unwrap(),
            (
                Some("2026-01-10T08:15:00".into()),
                Some("2026-01-10T08:15:00Z".into())
            )
        );
        // Without a zone the UTC time stands alone.
        assert_eq!(
            resolve(&Zone::Missing, None, Some("2026-01-10T08:15:00")).unwrap(),
            (None, Some("2026-01-10T08:15:00Z".into()))
        );
    }

    #[test]
    fn spring_gap_is_refused_autumn_fold_is_the_earlier_instant() {
        let london = zone("Europe/London");
        assert_eq!(
            resolve(&london, Some("2026-03-29T01:30:00"), None).unwrap_err(),
            ["DepartureTimeLocal"]
        );
        assert_eq!(
            resolve(&london, Some("2026-10-25T01:30:00"), None)
                .unwrap()
                .1
                .unwrap(),
            "2026-10-25T00:30:00Z"
        );
        // Both instants of the fold read back as the same local time.
        for utc in ["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"] {
            assert_eq!(
                resolve(&london, None, Some(utc)).unwrap().0.unwrap(),
                "2026-10-25T01:30:00"
            );
            assert!(resolve(&london, Some("2026-10-25T01:30:00"), Some(utc)).is_ok());
        }
    }

    #[test]
    fn windows_names_work_like_iana_names() {
        let gmt = zone("GMT Standard Time");
        assert_eq!(
            resolve(&gmt, Some("2026-03-29T02:30:00"), None)
                .unwrap()
                .1
                .unwrap(),
            "2026-03-29T01:30:00Z"
        );
    }

    #[test]
    fn refusals() {
        let london = zone("Europe/London");
        assert_eq!(
            resolve(&london, None, None).unwrap_err(),
            ["DepartureTimeLocal", "DepartureTime"]
        );
        assert_eq!(
            resolve(&Zone::Missing, Some("2026-07-01T09:15:00"), None).unwrap_err(),
            ["DepartureTimeZoneId"]
        );
        assert_eq!(
            resolve(&london, Some("2026-07-01T09:15:00+01:00"), None).unwrap_err(),
            ["DepartureTimeLocal"]
        );
        assert_eq!(
            resolve(&london, Some("tomorrow"), Some("noon")).unwrap_err(),
            ["DepartureTimeLocal", "DepartureTime"]
        );
        assert_eq!(
            resolve(
                &london,
                Some("2026-07-01T09:15:00"),
                Some("2026-07-01T09:15:00Z")
            )
            .unwrap_err(),
            ["DepartureTimeLocal"]
        );
        let mut v = Validator::new();
        assert!(matches!(
            read_zone(&mut v, "Zone", &mut Some("Mars/Olympus".into())),
            Zone::Invalid
        ));
        assert!(!v.is_empty());
    }

    #[test]
    fn formats() {
        assert_eq!(
            format_local(parse_local("2026-03-29").unwrap()),
            "2026-03-29T00:00:00"
        );
        assert_eq!(
            format_local(parse_local("2026-03-29T01:30:00.1234567").unwrap()),
            "2026-03-29T01:30:00.123456"
        );
        assert_eq!(
            parse_utc("2026-03-29T01:30:00.5+02:00")
                .unwrap()
                .to_string(),
            "2026-03-28T23:30:00.5Z"
        );
        assert!(parse_utc("2026-03-29T01:30:00[Europe/London]").is_err());
    }
}
