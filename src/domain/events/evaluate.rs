//! Evaluating an expression against what a message tells about a device.

use std::collections::BTreeMap;

use super::expression::{Comparison, Expression, GeofenceEvent, Metric, Weekday};

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

fn compare(actual: f64, op: Comparison, wanted: f64) -> bool {
    match op {
        Comparison::Lt => actual < wanted,
        Comparison::Le => actual <= wanted,
        Comparison::Gt => actual > wanted,
        Comparison::Ge => actual >= wanted,
        Comparison::Eq => actual == wanted,
        Comparison::Ne => actual != wanted,
    }
}

/// Whether the facts satisfy the expression. A comparison on a value the message does not
/// carry (no speed, no battery level, no time) is false.
pub fn evaluate_expression(expression: &Expression, facts: &EventFacts) -> bool {
    match expression {
        Expression::And(a, b) => evaluate_expression(a, facts) && evaluate_expression(b, facts),
        Expression::Or(a, b) => evaluate_expression(a, facts) || evaluate_expression(b, facts),
        Expression::Not(e) => !evaluate_expression(e, facts),
        Expression::Event(name) => match *name {
            "Emergency" => facts.emergency,
            "EmergencyCancelled" => facts.emergency_cancelled,
            "MissedCheckIn" => facts.missed_check_in,
            other => facts
                .message_type
                .as_deref()
                .is_some_and(|t| t.eq_ignore_ascii_case(other)),
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
            actual.is_some_and(|a| compare(a, *op, *value))
        }
        Expression::Property { key, equal, value } => {
            let actual = facts.properties.get(key);
            if *equal {
                actual == Some(value)
            } else {
                actual != Some(value)
            }
        }
        Expression::TimeBetween { from, to } => facts.local_minutes.is_some_and(|t| {
            if from <= to {
                *from <= t && t <= *to
            } else {
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
        evaluate_expression(&parse_expression(expression).unwrap(), facts)
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
    }

    #[test]
    fn geofences_by_id_or_name() {
        let depot = GeofenceFact {
            id: "7".into(),
            name: "Depot".into(),
        };
        let facts = EventFacts {
            entered: vec![depot.clone()],
            inside: vec![depot],
            ..Default::default()
        };
        assert!(eval("GeofenceEnter(\"7\")", &facts));
        assert!(eval("GeofenceEnter(\"depot\")", &facts));
        assert!(!eval("GeofenceExit(\"Depot\")", &facts));
        assert!(eval("InGeofence", &facts));
        assert!(!eval("InGeofence", &EventFacts::default()));
    }

    #[test]
    fn comparisons_properties_and_time() {
        let facts = EventFacts {
            speed_kmh: Some(120.0),
            battery_percent: Some(15.0),
            properties: [("shift".to_string(), "night".to_string())].into(),
            local_minutes: Some(23 * 60),
            local_weekday: Some(Weekday::Sat),
            ..Default::default()
        };
        assert!(eval("Speed > 100 AND Battery < 20", &facts));
        assert!(!eval("Speed <= 100", &facts));
        assert!(eval("Property(\"shift\") = \"night\"", &facts));
        assert!(eval("Property(\"missing\") != \"x\"", &facts));
        assert!(eval("Time BETWEEN \"18:00\" AND \"06:00\"", &facts));
        assert!(!eval("Time BETWEEN \"08:00\" AND \"17:00\"", &facts));
        assert!(eval("Day IN (Sat, Sun)", &facts));
        assert!(
            !eval("Speed > 1", &EventFacts::default()),
            "no speed: false"
        );
    }
}
