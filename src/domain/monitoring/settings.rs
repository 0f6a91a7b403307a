//! A monitoring session's settings (DESIGN §11): `{DurationMinutes,
//! CheckInIntervalMinutes, GraceMinutes, ReminderMinutes, NoMotionMinutes, Note}`, their
//! limits, and where a value not given comes from.
//!
//! | Setting | Limits | Built-in default |
//! |---|---|---|
//! | `DurationMinutes` | 1 to 10,080 (a week); a session always has a planned end | 480 (a shift) |
//! | `CheckInIntervalMinutes` | 1 to 1,440, at most `DurationMinutes` | 60, or the duration when shorter |
//! | `GraceMinutes` | 0 to 120 | 5 |
//! | `ReminderMinutes` | 0 (none) to `CheckInIntervalMinutes` − 1 | 5, or interval − 1 when shorter |
//! | `NoMotionMinutes` | 0 (off), or 5 to 1,440 | 0 |
//! | `Note` | at most 500 characters | none |
//!
//! A value not given comes from the device's `Properties`, then the tenant's, under the
//! setting's own name (`"CheckInIntervalMinutes": "30"`), then the built-in default. A
//! property that is not a whole number within the limits, or that does not fit the
//! values already settled (a default reminder of 10 with an explicit interval of 5), is
//! passed over for the next source: a stale property never stops a person from starting
//! a session. A value the client sends is held to the limits, each error naming its field.
//! Settled in this order, each rule against those before it: duration, interval, grace,
//! reminder, no motion.

use std::collections::BTreeMap;

use super::super::validation::{ValidationErrors, Validator};

pub const MAX_DURATION_MINUTES: u32 = 10_080;
pub const MAX_INTERVAL_MINUTES: u32 = 1_440;
pub const MAX_GRACE_MINUTES: u32 = 120;
/// The shortest no-motion window: under five minutes a person standing still to read a
/// meter would raise it.
pub const MIN_NO_MOTION_MINUTES: u32 = 5;
pub const MAX_NO_MOTION_MINUTES: u32 = 1_440;
pub const NOTE_MAX_CHARS: usize = 500;

const DEFAULT_DURATION: u32 = 480;
const DEFAULT_INTERVAL: u32 = 60;
const DEFAULT_GRACE: u32 = 5;
const DEFAULT_REMINDER: u32 = 5;

/// What a start (or a change) asks for; `None`: not given. Whole numbers as sent (a
/// wire record reads them), so the limits are checked here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestedSettings {
    pub duration_minutes: Option<i64>,
    pub check_in_interval_minutes: Option<i64>,
    pub grace_minutes: Option<i64>,
    pub reminder_minutes: Option<i64>,
    pub no_motion_minutes: Option<i64>,
    pub note: Option<String>,
}

/// Where the defaults come from: a device's MO `BeginMonitoring`'s own `Properties`
/// (first), the device's and the tenant's `Properties`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultSources<'a> {
    pub message: Option<&'a BTreeMap<String, String>>,
    pub device: Option<&'a BTreeMap<String, String>>,
    pub tenant: Option<&'a BTreeMap<String, String>>,
}

/// Where a settled value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Requested,
    Message,
    Device,
    Tenant,
    BuiltIn,
}

/// A session's settings, settled: every rule holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSettings {
    pub duration_minutes: u32,
    pub check_in_interval_minutes: u32,
    pub grace_minutes: u32,
    /// 0: no reminder.
    pub reminder_minutes: u32,
    /// 0: no no-motion watch.
    pub no_motion_minutes: u32,
    pub note: Option<String>,
}

/// The settled settings and where each number came from (duration, interval, grace,
/// reminder, no motion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    pub settings: SessionSettings,
    pub sources: [Source; 5],
}

/// One setting's name and its range given what is settled before it.
struct Rule {
    field: &'static str,
    min: u32,
    max: u32,
    /// Values inside `min..=max` that are still refused (no motion: 1 to 4).
    hole: Option<(u32, u32)>,
}

impl Rule {
    const DURATION: Rule = Rule {
        field: "DurationMinutes",
        min: 1,
        max: MAX_DURATION_MINUTES,
        hole: None,
    };
    const GRACE: Rule = Rule {
        field: "GraceMinutes",
        min: 0,
        max: MAX_GRACE_MINUTES,
        hole: None,
    };
    const NO_MOTION: Rule = Rule {
        field: "NoMotionMinutes",
        min: 0,
        max: MAX_NO_MOTION_MINUTES,
        hole: Some((1, MIN_NO_MOTION_MINUTES - 1)),
    };

    /// At most a day, and no longer than the session.
    fn interval(duration: u32) -> Rule {
        Rule {
            field: "CheckInIntervalMinutes",
            min: 1,
            max: MAX_INTERVAL_MINUTES.min(duration),
            hole: None,
        }
    }

    /// Shorter than the interval (`interval` is at least 1).
    fn reminder(interval: u32) -> Rule {
        Rule {
            field: "ReminderMinutes",
            min: 0,
            max: interval.saturating_sub(1),
            hole: None,
        }
    }

    fn holds(&self, value: u32) -> bool {
        (self.min..=self.max).contains(&value)
            && self
                .hole
                .is_none_or(|(from, to)| !(from..=to).contains(&value))
    }

    fn describe(&self) -> String {
        match self.hole {
            Some((_, to)) => format!(
                "must be 0 (off) or a whole number of minutes from {} to {}",
                to + 1,
                self.max
            ),
            None => format!(
                "must be a whole number of minutes from {} to {}",
                self.min, self.max
            ),
        }
    }
}

/// Settles one setting: the requested value (held to `rule`; `None` and an error in `v`
/// when it breaks it), else the first property that holds, else `built_in`.
fn settle(
    v: &mut Validator,
    rule: &Rule,
    requested: Option<i64>,
    sources: DefaultSources<'_>,
    built_in: u32,
) -> Option<(u32, Source)> {
    if let Some(raw) = requested {
        let value = u32::try_from(raw).ok().filter(|n| rule.holds(*n));
        if value.is_none() {
            v.add(rule.field, format!("{} (got {raw})", rule.describe()));
        }
        return value.map(|n| (n, Source::Requested));
    }
    let from_properties = [
        (sources.message, Source::Message),
        (sources.device, Source::Device),
        (sources.tenant, Source::Tenant),
    ]
    .into_iter()
    .find_map(|(properties, source)| {
        let text = properties?.get(rule.field)?;
        let value = text.trim().parse::<u32>().ok().filter(|n| rule.holds(*n))?;
        Some((value, source))
    });
    Some(from_properties.unwrap_or((built_in, Source::BuiltIn)))
}

impl RequestedSettings {
    /// What a device's MO `BeginMonitoring` asks for: its `Properties` under the settings'
    /// names (`sources.message`), read like the device's — a value that does not hold is
    /// passed over for the next source, since the message is stored whatever it says —
    /// and its `Properties.Note` (else the message's text) as the note, cut to the
    /// limit. Never an error.
    pub fn settle_from_device(note: Option<&str>, sources: DefaultSources<'_>) -> SessionSettings {
        let note = sources
            .message
            .and_then(|p| p.get("Note"))
            .map(String::as_str)
            .or(note)
            .map(|n| n.chars().take(NOTE_MAX_CHARS).collect::<String>());
        let requested = RequestedSettings {
            note,
            ..RequestedSettings::default()
        };
        match requested.settle(sources) {
            Ok(settled) => settled.settings,
            // Unreachable (nothing requested can break a rule): the built-in defaults.
            Err(_) => RequestedSettings::default()
                .settle(DefaultSources::default())
                .map(|s| s.settings)
                .unwrap_or(SessionSettings {
                    duration_minutes: DEFAULT_DURATION,
                    check_in_interval_minutes: DEFAULT_INTERVAL,
                    grace_minutes: DEFAULT_GRACE,
                    reminder_minutes: DEFAULT_REMINDER,
                    no_motion_minutes: 0,
                    note: None,
                }),
        }
    }

    /// Settles every setting (the module's table and order) or names every field that
    /// breaks its rule.
    pub fn settle(self, sources: DefaultSources<'_>) -> Result<Settled, ValidationErrors> {
        let mut v = Validator::new();
        v.length("Note", self.note.as_deref(), 0, NOTE_MAX_CHARS);
        let duration = settle(
            &mut v,
            &Rule::DURATION,
            self.duration_minutes,
            sources,
            DEFAULT_DURATION,
        );
        // The later rules depend on the earlier values; after a bad one they are checked
        // against its widest range, so every field's own problem is still reported.
        let duration_value = duration.map_or(MAX_DURATION_MINUTES, |(d, _)| d);
        let interval = settle(
            &mut v,
            &Rule::interval(duration_value),
            self.check_in_interval_minutes,
            sources,
            DEFAULT_INTERVAL.min(duration_value),
        );
        let interval_value = interval.map_or(MAX_INTERVAL_MINUTES, |(i, _)| i);
        let grace = settle(
            &mut v,
            &Rule::GRACE,
            self.grace_minutes,
            sources,
            DEFAULT_GRACE,
        );
        let reminder = settle(
            &mut v,
            &Rule::reminder(interval_value),
            self.reminder_minutes,
            sources,
            DEFAULT_REMINDER.min(interval_value.saturating_sub(1)),
        );
        let no_motion = settle(&mut v, &Rule::NO_MOTION, self.no_motion_minutes, sources, 0);
        v.finish()?;
        let (Some(duration), Some(interval), Some(grace), Some(reminder), Some(no_motion)) =
            (duration, interval, grace, reminder, no_motion)
        else {
            // Unreachable: every value missing was reported above.
            return Err(ValidationErrors::single("body", "invalid settings"));
        };
        Ok(Settled {
            settings: SessionSettings {
                duration_minutes: duration.0,
                check_in_interval_minutes: interval.0,
                grace_minutes: grace.0,
                reminder_minutes: reminder.0,
                no_motion_minutes: no_motion.0,
                note: self.note.filter(|n| !n.trim().is_empty()),
            },
            sources: [duration.1, interval.1, grace.1, reminder.1, no_motion.1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_start_reads_its_message_first_and_passes_over_what_does_not_hold() {
        let message = properties(&[
            ("DurationMinutes", "90"),
            ("CheckInIntervalMinutes", "often"),
            ("Note", "Pump station 4"),
        ]);
        let device = properties(&[("CheckInIntervalMinutes", "30"), ("DurationMinutes", "45")]);
        let sources = DefaultSources {
            message: Some(&message),
            device: Some(&device),
            tenant: None,
        };
        let settings = RequestedSettings::settle_from_device(Some("ignored text"), sources);
        assert_eq!(settings.duration_minutes, 90, "the message first");
        assert_eq!(
            settings.check_in_interval_minutes, 30,
            "its bad value passed over"
        );
        assert_eq!(settings.note.as_deref(), Some("Pump station 4"));
        let long = "x".repeat(600);
        let settings =
            RequestedSettings::settle_from_device(Some(&long), DefaultSources::default());
        assert_eq!(
            settings.note.map(|n| n.chars().count()),
            Some(NOTE_MAX_CHARS)
        );
        assert_eq!(settings.duration_minutes, 480);
    }

    fn properties(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn fields(requested: RequestedSettings) -> Vec<String> {
        requested
            .settle(DefaultSources::default())
            .err()
            .map(|e| e.0.into_iter().map(|f| f.field).collect())
            .unwrap_or_default()
    }

    #[test]
    fn nothing_given_is_the_built_in_defaults() {
        let settled = RequestedSettings::default()
            .settle(DefaultSources::default())
            .expect("valid");
        assert_eq!(
            settled.settings,
            SessionSettings {
                duration_minutes: 480,
                check_in_interval_minutes: 60,
                grace_minutes: 5,
                reminder_minutes: 5,
                no_motion_minutes: 0,
                note: None,
            }
        );
        assert_eq!(settled.sources, [Source::BuiltIn; 5]);
    }

    #[test]
    fn requested_then_device_then_tenant_then_built_in() {
        let device = properties(&[("CheckInIntervalMinutes", "30")]);
        let tenant = properties(&[
            ("CheckInIntervalMinutes", "45"),
            ("GraceMinutes", "10"),
            ("DurationMinutes", "600"),
        ]);
        let sources = DefaultSources {
            message: None,
            device: Some(&device),
            tenant: Some(&tenant),
        };
        let settled = RequestedSettings {
            duration_minutes: Some(120),
            ..Default::default()
        }
        .settle(sources)
        .expect("valid");
        let s = &settled.settings;
        assert_eq!(
            (
                s.duration_minutes,
                s.check_in_interval_minutes,
                s.grace_minutes,
                s.reminder_minutes
            ),
            (120, 30, 10, 5)
        );
        assert_eq!(
            settled.sources,
            [
                Source::Requested,
                Source::Device,
                Source::Tenant,
                Source::BuiltIn,
                Source::BuiltIn
            ]
        );
    }

    #[test]
    fn a_property_that_does_not_fit_is_passed_over() {
        let device = properties(&[
            ("CheckInIntervalMinutes", "often"),
            ("ReminderMinutes", "20"),
        ]);
        let tenant = properties(&[("CheckInIntervalMinutes", "0"), ("ReminderMinutes", "4")]);
        let sources = DefaultSources {
            message: None,
            device: Some(&device),
            tenant: Some(&tenant),
        };
        let settled = RequestedSettings {
            check_in_interval_minutes: Some(10),
            ..Default::default()
        }
        .settle(sources)
        .expect("valid");
        // The device's reminder (20) does not fit an interval of 10: the tenant's 4 does.
        assert_eq!(settled.settings.reminder_minutes, 4);
        assert_eq!(settled.sources[3], Source::Tenant);
        let settled = RequestedSettings::default().settle(sources).expect("valid");
        assert_eq!(settled.settings.check_in_interval_minutes, 60);
        assert_eq!(settled.sources[1], Source::BuiltIn);
    }

    #[test]
    fn built_in_defaults_fit_short_sessions() {
        let settled = RequestedSettings {
            duration_minutes: Some(20),
            check_in_interval_minutes: None,
            ..Default::default()
        }
        .settle(DefaultSources::default())
        .expect("valid");
        assert_eq!(settled.settings.check_in_interval_minutes, 20);
        let settled = RequestedSettings {
            check_in_interval_minutes: Some(3),
            ..Default::default()
        }
        .settle(DefaultSources::default())
        .expect("valid");
        assert_eq!(settled.settings.reminder_minutes, 2);
        let settled = RequestedSettings {
            check_in_interval_minutes: Some(1),
            ..Default::default()
        }
        .settle(DefaultSources::default())
        .expect("valid");
        assert_eq!(settled.settings.reminder_minutes, 0);
    }

    #[test]
    fn every_limit_names_its_field() {
        let one = |r: RequestedSettings| fields(r);
        for bad in [0, -1, 10_081, i64::MAX] {
            assert_eq!(
                one(RequestedSettings {
                    duration_minutes: Some(bad),
                    ..Default::default()
                }),
                ["DurationMinutes"],
                "{bad}"
            );
        }
        for bad in [0, -5, 1_441] {
            assert_eq!(
                one(RequestedSettings {
                    check_in_interval_minutes: Some(bad),
                    ..Default::default()
                }),
                ["CheckInIntervalMinutes"],
                "{bad}"
            );
        }
        assert_eq!(
            one(RequestedSettings {
                duration_minutes: Some(30),
                check_in_interval_minutes: Some(31),
                ..Default::default()
            }),
            ["CheckInIntervalMinutes"]
        );
        for bad in [-1, 121] {
            assert_eq!(
                one(RequestedSettings {
                    grace_minutes: Some(bad),
                    ..Default::default()
                }),
                ["GraceMinutes"]
            );
        }
        assert_eq!(
            one(RequestedSettings {
                check_in_interval_minutes: Some(10),
                reminder_minutes: Some(10),
                ..Default::default()
            }),
            ["ReminderMinutes"]
        );
        for bad in [-1, 1, 4, 1_441] {
            assert_eq!(
                one(RequestedSettings {
                    no_motion_minutes: Some(bad),
                    ..Default::default()
                }),
                ["NoMotionMinutes"],
                "{bad}"
            );
        }
        assert_eq!(
            one(RequestedSettings {
                note: Some("n".repeat(NOTE_MAX_CHARS + 1)),
                ..Default::default()
            }),
            ["Note"]
        );
        // Every bad field at once.
        assert_eq!(
            one(RequestedSettings {
                duration_minutes: Some(0),
                check_in_interval_minutes: Some(0),
                grace_minutes: Some(500),
                reminder_minutes: Some(-1),
                no_motion_minutes: Some(2),
                note: None,
            }),
            [
                "DurationMinutes",
                "CheckInIntervalMinutes",
                "GraceMinutes",
                "ReminderMinutes",
                "NoMotionMinutes"
            ]
        );
    }

    #[test]
    fn the_edges_are_accepted() {
        let settled = RequestedSettings {
            duration_minutes: Some(10_080),
            check_in_interval_minutes: Some(1_440),
            grace_minutes: Some(0),
            reminder_minutes: Some(1_439),
            no_motion_minutes: Some(5),
            note: Some("  ".into()),
        }
        .settle(DefaultSources::default())
        .expect("valid");
        assert_eq!(settled.settings.note, None);
        assert_eq!(settled.settings.no_motion_minutes, 5);
        assert!(
            RequestedSettings {
                no_motion_minutes: Some(0),
                ..Default::default()
            }
            .settle(DefaultSources::default())
            .is_ok()
        );
    }
}
