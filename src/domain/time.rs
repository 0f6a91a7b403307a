//! Time: the server clock and time-zone names (IANA and Windows).

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// Now, truncated to microseconds so a value survives a round trip through either backend.
pub fn now() -> Timestamp {
    let t = Timestamp::now();
    let micros = t.as_microsecond();
    Timestamp::from_microsecond(micros).unwrap_or(t)
}

/// Resolves an IANA name (`Europe/London`) or a Windows name (`GMT Standard Time`).
pub fn resolve_time_zone(name: &str) -> Option<TimeZone> {
    if let Ok(tz) = TimeZone::get(name) {
        return Some(tz);
    }
    let windows: windows_timezones::WindowsTimezone = name.parse().ok()?;
    TimeZone::get(windows.tzdb_id()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_both_naming_schemes() {
        assert!(resolve_time_zone("Europe/London").is_some());
        assert!(resolve_time_zone("UTC").is_some());
        assert!(resolve_time_zone("GMT Standard Time").is_some());
        assert!(resolve_time_zone("Mars/Olympus").is_none());
    }
}
