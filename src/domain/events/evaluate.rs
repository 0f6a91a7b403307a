//! Evaluating an expression against what a message tells about a device.

use std::collections::BTreeMap;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::expression::{EventName, Expression, GeofenceEvent, Metric, Weekday};

/// A geofence as facts name it: by id and by name (expressions may use either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeofenceFact {
    pub id: String,
    pub name: String,
}

/// Everything the engine derived from one stored message.
#[derive(Debug, Clone, Default)]
pub struct EventFacts {
    /// The MO `MessageType`.
    pub message_type: Option<String>,
    /// EmergencyState is not `None`.
    pub emergency: bool,
    pub emergency_cancelled: bool,
    pub missed_check_in: bool,
    pub monitoring_overdue: bool,
    pub no_motion: bool,
    /// EmergencyState `Fall` (`emergency` is then true too).
    pub fall: bool,
    pub silent: bool,
    /// The message's alarms say the device was taken off or opened (`domain::alarm`).
    pub tamper: bool,
    /// The message says the device's battery is low (`domain::alarm`).
    pub low_battery: bool,
    pub entered: Vec<GeofenceFact>,
    pub exited: Vec<GeofenceFact>,
    pub inside: Vec<GeofenceFact>,
    pub speed_kmh: Option<f64>,
    pub battery_percent: Option<f64>,
    pub properties: BTreeMap<String, String>,
    /// Local time of the message in the notification's time zone, minutes after midnight.
    pub local_minutes: Option<u16>,
    pub local_weekday: Option<Weekday>,
}

fn matches_geofence(facts: &[GeofenceFact], target: Option<&str>) -> bool {
    match target {
        None => !facts.is_empty(),
        Some(t) => facts
            .iter()
            .any(|g| g.id == t || g.name.eq_ignore_ascii_case(t)),
    }
}

impl EventFacts {
    /// Sets the local clock facts (`Time`, `Day`) for the instant `at` seen in `zone`
    /// (the notification's `TimeZoneId`, UTC when it has none).
    pub fn with_local_time(mut self, at: Timestamp, zone: &TimeZone) -> Self {
        self.set_local_time(at, zone);
        self
    }

    /// `with_local_time` in place (one set of facts, evaluated in several zones).
    pub fn set_local_time(&mut self, at: Timestamp, zone: &TimeZone) {
        let local = at.to_zoned(zone.clone());
        let minutes = i32::from(local.hour()) * 60 + i32::from(local.minute());
        self.local_minutes = u16::try_from(minutes).ok();
        self.local_weekday = Some(local.weekday().into());
    }
}

/// Whether the facts satisfy the expression. A comparison on a value the message does not
/// carry (no speed, no battery level, no time) is false; `Property("k") != "v"` is true
/// when the message has no property `k`.
pub fn evaluate_expression(expression: &Expression, facts: &EventFacts) -> bool {
    match expression {
        Expression::And(items) => items.iter().all(|e| evaluate_expression(e, facts)),
        Expression::Or(items) => items.iter().any(|e| evaluate_expression(e, facts)),
        Expression::Not(e) => !evaluate_expression(e, facts),
        Expression::Event(name) => match name {
            EventName::Emergency => facts.emergency,
            EventName::EmergencyCancelled => facts.emergency_cancelled,
            EventName::MissedCheckIn => facts.missed_check_in,
            EventName::MonitoringOverdue => facts.monitoring_overdue,
            EventName::NoMotion => facts.no_motion,
            EventName::Fall => facts.fall,
            EventName::Silent => facts.silent,
            EventName::Tamper => facts.tamper,
            EventName::LowBattery => facts.low_battery,
            other => other.message_type().is_some_and(|wanted| {
                facts
                    .message_type
                    .as_deref()
                    .is_some_and(|t| t.eq_ignore_ascii_case(wanted))
            }),
        },
        Expression::Geofence { event, target } => {
            let list = match event {
                GeofenceEvent::Enter => &facts.entered,
                GeofenceEvent::Exit => &facts.exited,
                GeofenceEvent::Inside => &facts.inside,
            };
            matches_geofence(list, target.as_deref())
        }
        Expression::Compare { metric, op, value } => {
            let actual = match metric {
                Metric::Speed => facts.speed_kmh,
                Metric::Battery => facts.battery_percent,
            };
            actual.is_some_and(|a| op.holds(a, *value))
        }
        Expression::Property { key, equal, value } => {
            let matches = facts.properties.get(key) == Some(value);
            matches == *equal
        }
        Expression::TimeBetween { from, to } => facts.local_minutes.is_some_and(|t| {
            if from <= to {
                *from <= t && t <= *to
            } else {
                // Wraps past midnight: 18:00–06:00 is 18:00..=23:59 or 00:00..=06:00.
                t >= *from || t <= *to
            }
        }),
        Expression::DayIn(days) => facts.local_weekday.is_some_and(|d| days.contains(&d)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_expression;
    use super::*;

    fn eval(expression: &str, facts: &EventFacts) -> bool {
        let parsed = parse_expression(expression).unwrap_or_else(|e| panic!("{expression}: {e}"));
        evaluate_expression(&parsed, facts)
    }

    #[test]
    fn events_and_logic() {
        let facts = EventFacts {
            message_type: Some("CheckIn".into()),
            emergency: true,
            ..Default::default()
        };
        assert!(eval("CheckIn", &facts));
        assert!(eval("Emergency AND checkin", &facts));
        assert!(!eval("FreeText OR MissedCheckIn", &facts));
        assert!(eval("NOT FreeText", &facts));
        assert!(!eval("EmergencyCancelled", &facts));
        assert!(eval("FreeText OR Waypoint OR CheckIn", &facts));
        assert!(!eval("CheckIn AND Emergency AND FreeText", &facts));
        // Precedence decides: NOT CheckIn AND FreeText OR Emergency = ((¬C ∧ F) ∨ E).
        assert!(eval("NOT CheckIn AND FreeText OR Emergency", &facts));
        assert!(!eval("NOT (CheckIn AND FreeText OR Emergency)", &facts));
        // Tamper and LowBattery are the message's alarms, not its type.
        let worn = EventFacts {
            message_type: Some("Tamper".into()),
            tamper: true,
            ..Default::default()
        };
        assert!(eval("Tamper AND NOT LowBattery", &worn));
        let typed_only = EventFacts {
            message_type: Some("LowBattery".into()),
            ..Default::default()
        };
        assert!(!eval("LowBattery OR Tamper", &typed_only));
        // Derived events are not message types.
        let typed = EventFacts {
            message_type: Some("Emergency".into()),
            ..Default::default()
        };
        assert!(!eval("Emergency", &typed));
        let cancelled = EventFacts {
            emergency_cancelled: true,
            missed_check_in: true,
            ..Default::default()
        };
        assert!(eval("EmergencyCancelled AND MissedCheckIn", &cancelled));
        assert!(!eval("CheckIn", &EventFacts::default()));
    }

    #[test]
    fn geofences_by_id_or_name() {
        let depot = GeofenceFact {
            id: "7".into(),
            name: "Depot".into(),
        };
        let yard = GeofenceFact {
            id: "8".into(),
            name: "Yard".into(),
        };
        let facts = EventFacts {
            entered: vec![depot.clone()],
            exited: vec![yard.clone()],
            inside: vec![depot],
            ..Default::default()
        };
        assert!(eval("GeofenceEnter(\"7\")", &facts));
        assert!(eval("GeofenceEnter(\"depot\")", &facts));
        assert!(!eval("GeofenceEnter(\"8\")", &facts));
        assert!(!eval("GeofenceExit(\"Depot\")", &facts));
        assert!(eval("GeofenceExit(\"YARD\") AND InGeofence(\"7\")", &facts));
        assert!(!eval("InGeofence(\"Yard\")", &facts));
        assert!(eval("InGeofence", &facts));
        assert!(eval("InGeofence()", &facts));
        assert!(!eval("InGeofence", &EventFacts::default()));
        assert!(eval("NOT InGeofence", &EventFacts::default()));
    }

    #[test]
    fn comparisons_and_properties() {
        let facts = EventFacts {
            speed_kmh: Some(120.0),
            battery_percent: Some(15.0),
            properties: [("shift".to_string(), "night".to_string())].into(),
            ..Default::default()
        };
        for (expression, expected) in [
            ("Speed > 100 AND Battery < 20", true),
            ("Speed > 120", false),
            ("Speed >= 120", true),
            ("Speed < 120", false),
            ("Speed <= 120", true),
            ("Speed = 120", true),
            ("Speed != 120", false),
            ("Battery != 15.5", true),
            ("Property(\"shift\") = \"night\"", true),
            ("Property(\"shift\") = \"Night\"", false),
            ("Property(\"shift\") != \"night\"", false),
            ("Property(\"missing\") = \"x\"", false),
            ("Property(\"missing\") != \"x\"", true),
        ] {
            assert_eq!(eval(expression, &facts), expected, "{expression}");
        }
        let nothing = EventFacts::default();
        assert!(!eval("Speed > 1", &nothing), "no speed: false");
        assert!(!eval("Speed <= 1", &nothing), "no speed: false either way");
        assert!(!eval("Battery < 101", &nothing));
    }

    #[test]
    fn time_windows_wrap_and_are_inclusive() {
        let at = |h: u16, m: u16| EventFacts {
            local_minutes: Some(h * 60 + m),
            local_weekday: Some(Weekday::Sat),
            ..Default::default()
        };
        let night = "Time BETWEEN \"18:00\" AND \"06:00\"";
        assert!(eval(night, &at(23, 0)));
        assert!(eval(night, &at(18, 0)));
        assert!(eval(night, &at(0, 0)));
        assert!(eval(night, &at(6, 0)));
        assert!(!eval(night, &at(6, 1)));
        assert!(!eval(night, &at(17, 59)));
        let day = "Time BETWEEN \"08:00\" AND \"17:00\"";
        assert!(!eval(day, &at(23, 0)));
        assert!(eval(day, &at(8, 0)));
        assert!(eval(day, &at(17, 0)));
        assert!(eval("Time BETWEEN \"12:00\" AND \"12:00\"", &at(12, 0)));
        assert!(!eval("Time BETWEEN \"12:00\" AND \"12:00\"", &at(12, 1)));
        assert!(eval("Day IN (Sat, Sun)", &at(1, 0)));
        assert!(!eval("Day IN (Mon, Fri)", &at(1, 0)));
        assert!(!eval(night, &EventFacts::default()), "no clock: false");
        assert!(!eval("Day IN (Sat)", &EventFacts::default()));
    }

    #[test]
    fn local_time_follows_the_zone() {
        // 2026-07-04 (a Saturday) 23:30 UTC is Sunday 00:30 in London (BST) and Saturday
        // 19:30 in New York (EDT).
        let at: Timestamp = "2026-07-04T23:30:00Z".parse().unwrap();
        let london =
            EventFacts::default().with_local_time(at, &TimeZone::get("Europe/London").unwrap());
        assert_eq!(london.local_minutes, Some(30));
        assert_eq!(london.local_weekday, Some(Weekday::Sun));
        let new_york =
            EventFacts::default().with_local_time(at, &TimeZone::get("America/New_York").unwrap());
        assert_eq!(new_york.local_minutes, Some(19 * 60 + 30));
        assert_eq!(new_york.local_weekday, Some(Weekday::Sat));
        let utc = EventFacts::default().with_local_time(at, &TimeZone::UTC);
        assert!(eval(
            "Day IN (Saturday) AND Time BETWEEN \"23:00\" AND \"23:59\"",
            &utc
        ));
        assert!(eval(
            "Day IN (Sun) AND Time BETWEEN \"18:00\" AND \"06:00\"",
            &london
        ));
    }

    #[test]
    fn the_longest_chain_evaluates() {
        let longest = "FreeText||".repeat(390) + "CheckIn";
        let facts = EventFacts {
            message_type: Some("CheckIn".into()),
            ..Default::default()
        };
        assert!(eval(&longest, &facts));
    }
}
