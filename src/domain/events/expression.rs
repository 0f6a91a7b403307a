//! The typed AST of an `EventsExpression` and its canonical printed form.
//!
//! The canonical form (`Display`) spells every keyword and name canonically, keeps the
//! parentheses the tree's shape needs and escapes strings, so that
//! `parse_expression(&e.to_string()) == Ok(e)` for every expression `e` the parser builds
//! (provided the printed text stays within the length limit: `&&` prints as ` AND `).

use std::fmt;

/// An event an expression can name: every MO `MessageType`, plus the derived events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventName {
    AutomaticPositionReport,
    ManualPositionReport,
    ResponseToLocationRequest,
    SwitchOn,
    SystemTest,
    DiagnosticResponse,
    DeviceIdentifierResponse,
    Synchronise,
    FreeText,
    GeofenceCrossed,
    BeginMonitoring,
    EndMonitoring,
    CheckIn,
    CannedMessageSend,
    MessageAcknowledgement,
    PowerDown,
    Waypoint,
    /// The message's EmergencyState is not `None`.
    Emergency,
    EmergencyCancelled,
    /// A confirmed check-in (standing interval or session) passed unconfirmed.
    MissedCheckIn,
    /// A session's planned end plus its grace passed without an end or extension.
    MonitoringOverdue,
    /// During a session the device kept reporting without moving more than 25 m.
    NoMotion,
    /// EmergencyState `Fall` (also an `Emergency`).
    Fall,
    /// The device sent nothing at all for its `SilentAfterMinutes`.
    Silent,
    /// The device was taken off or opened (`Properties.alarm` `removing` or `tampering`).
    Tamper,
    /// The device says its battery is low (`Properties.alarm` `lowBattery` or `lowPower`).
    LowBattery,
}

impl EventName {
    pub const ALL: [EventName; 26] = [
        EventName::AutomaticPositionReport,
        EventName::ManualPositionReport,
        EventName::ResponseToLocationRequest,
        EventName::SwitchOn,
        EventName::SystemTest,
        EventName::DiagnosticResponse,
        EventName::DeviceIdentifierResponse,
        EventName::Synchronise,
        EventName::FreeText,
        EventName::GeofenceCrossed,
        EventName::BeginMonitoring,
        EventName::EndMonitoring,
        EventName::CheckIn,
        EventName::CannedMessageSend,
        EventName::MessageAcknowledgement,
        EventName::PowerDown,
        EventName::Waypoint,
        EventName::Emergency,
        EventName::EmergencyCancelled,
        EventName::MissedCheckIn,
        EventName::MonitoringOverdue,
        EventName::NoMotion,
        EventName::Fall,
        EventName::Silent,
        EventName::Tamper,
        EventName::LowBattery,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventName::AutomaticPositionReport => "AutomaticPositionReport",
            EventName::ManualPositionReport => "ManualPositionReport",
            EventName::ResponseToLocationRequest => "ResponseToLocationRequest",
            EventName::SwitchOn => "SwitchOn",
            EventName::SystemTest => "SystemTest",
            EventName::DiagnosticResponse => "DiagnosticResponse",
            EventName::DeviceIdentifierResponse => "DeviceIdentifierResponse",
            EventName::Synchronise => "Synchronise",
            EventName::FreeText => "FreeText",
            EventName::GeofenceCrossed => "GeofenceCrossed",
            EventName::BeginMonitoring => "BeginMonitoring",
            EventName::EndMonitoring => "EndMonitoring",
            EventName::CheckIn => "CheckIn",
            EventName::CannedMessageSend => "CannedMessageSend",
            EventName::MessageAcknowledgement => "MessageAcknowledgement",
            EventName::PowerDown => "PowerDown",
            EventName::Waypoint => "Waypoint",
            EventName::Emergency => "Emergency",
            EventName::EmergencyCancelled => "EmergencyCancelled",
            EventName::MissedCheckIn => "MissedCheckIn",
            EventName::MonitoringOverdue => "MonitoringOverdue",
            EventName::NoMotion => "NoMotion",
            EventName::Fall => "Fall",
            EventName::Silent => "Silent",
            EventName::Tamper => "Tamper",
            EventName::LowBattery => "LowBattery",
        }
    }

    /// Case-insensitive.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(name))
    }

    /// The MO `MessageType` this event is, if it is one (the others are derived from
    /// a message's state rather than its type).
    pub fn message_type(self) -> Option<&'static str> {
        match self {
            EventName::Emergency
            | EventName::EmergencyCancelled
            | EventName::MissedCheckIn
            | EventName::MonitoringOverdue
            | EventName::NoMotion
            | EventName::Fall
            | EventName::Silent
            | EventName::Tamper
            | EventName::LowBattery => None,
            other => Some(other.as_str()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeofenceEvent {
    Enter,
    Exit,
    Inside,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// km/h
    Speed,
    /// percent, from `Properties.battery`
    Battery,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Comparison {
    pub fn holds(self, actual: f64, wanted: f64) -> bool {
        match self {
            Comparison::Lt => actual < wanted,
            Comparison::Le => actual <= wanted,
            Comparison::Gt => actual > wanted,
            Comparison::Ge => actual >= wanted,
            Comparison::Eq => actual == wanted,
            Comparison::Ne => actual != wanted,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Weekday {
    Mon,
    Tue,
    Wed,
    Thu,
    Fri,
    Sat,
    Sun,
}

impl Weekday {
    /// `Mon`…`Sun` or the full English name, case-insensitive.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "mon" | "monday" => Weekday::Mon,
            "tue" | "tuesday" => Weekday::Tue,
            "wed" | "wednesday" => Weekday::Wed,
            "thu" | "thursday" => Weekday::Thu,
            "fri" | "friday" => Weekday::Fri,
            "sat" | "saturday" => Weekday::Sat,
            "sun" | "sunday" => Weekday::Sun,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Weekday::Mon => "Mon",
            Weekday::Tue => "Tue",
            Weekday::Wed => "Wed",
            Weekday::Thu => "Thu",
            Weekday::Fri => "Fri",
            Weekday::Sat => "Sat",
            Weekday::Sun => "Sun",
        }
    }
}

impl From<jiff::civil::Weekday> for Weekday {
    fn from(day: jiff::civil::Weekday) -> Self {
        use jiff::civil::Weekday as J;
        match day {
            J::Monday => Weekday::Mon,
            J::Tuesday => Weekday::Tue,
            J::Wednesday => Weekday::Wed,
            J::Thursday => Weekday::Thu,
            J::Friday => Weekday::Fri,
            J::Saturday => Weekday::Sat,
            J::Sunday => Weekday::Sun,
        }
    }
}

/// A parsed `EventsExpression`.
///
/// `AND` and `OR` chains are n-ary (`a AND b AND c` is one `And` of three), so the tree
/// is only as deep as the parentheses and NOTs written, which the parser bounds: walking
/// it recursively cannot exhaust the stack.
#[derive(Debug, Clone, PartialEq)]
pub enum Expression {
    /// At least two operands; an operand is an `And` only when written in parentheses.
    And(Vec<Expression>),
    /// At least two operands; an operand is an `Or` only when written in parentheses.
    Or(Vec<Expression>),
    Not(Box<Expression>),
    Event(EventName),
    /// `target` is a geofence id or name (never empty); `None` (InGeofence only) means
    /// any geofence.
    Geofence {
        event: GeofenceEvent,
        target: Option<String>,
    },
    /// `value` is always finite.
    Compare {
        metric: Metric,
        op: Comparison,
        value: f64,
    },
    /// `equal` false means `!=`. `key` is never empty.
    Property {
        key: String,
        equal: bool,
        value: String,
    },
    /// Minutes after midnight (0..1440), local time, both ends inclusive; `from > to`
    /// wraps past midnight.
    TimeBetween {
        from: u16,
        to: u16,
    },
    /// Never empty.
    DayIn(Vec<Weekday>),
}

impl Expression {
    /// Whether any part of the expression (itself included) satisfies `predicate`.
    pub fn any(&self, predicate: &mut impl FnMut(&Expression) -> bool) -> bool {
        if predicate(self) {
            return true;
        }
        match self {
            Expression::And(items) | Expression::Or(items) => {
                items.iter().any(|e| e.any(predicate))
            }
            Expression::Not(e) => e.any(predicate),
            _ => false,
        }
    }

    /// Whether evaluating needs the local time (a `Time` or `Day` condition).
    pub fn uses_local_time(&self) -> bool {
        self.any(&mut |e| matches!(e, Expression::TimeBetween { .. } | Expression::DayIn(_)))
    }
}

/// A string literal as the lexer reads it back.
pub(super) fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
            Comparison::Eq => "=",
            Comparison::Ne => "!=",
        })
    }
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Weekday {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Writes `items` joined by `operator`, parenthesising the operands `needs_parens` picks
/// (exactly those the parser could only have built from parentheses).
fn write_chain(
    f: &mut fmt::Formatter<'_>,
    items: &[Expression],
    operator: &str,
    needs_parens: fn(&Expression) -> bool,
) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            write!(f, " {operator} ")?;
        }
        if needs_parens(item) {
            write!(f, "({item})")?;
        } else {
            write!(f, "{item}")?;
        }
    }
    Ok(())
}

/// The canonical form: keywords upper-case (names in their canonical spelling), single
/// spaces, and parentheses only where precedence needs them.
impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expression::And(items) => write_chain(f, items, "AND", |e| {
                matches!(e, Expression::And(_) | Expression::Or(_))
            }),
            Expression::Or(items) => {
                write_chain(f, items, "OR", |e| matches!(e, Expression::Or(_)))
            }
            Expression::Not(e) => match **e {
                Expression::And(_) | Expression::Or(_) => write!(f, "NOT ({e})"),
                _ => write!(f, "NOT {e}"),
            },
            Expression::Event(name) => write!(f, "{name}"),
            Expression::Geofence { event, target } => {
                let name = match event {
                    GeofenceEvent::Enter => "GeofenceEnter",
                    GeofenceEvent::Exit => "GeofenceExit",
                    GeofenceEvent::Inside => "InGeofence",
                };
                match target {
                    Some(t) => write!(f, "{name}({})", quoted(t)),
                    None => f.write_str(name),
                }
            }
            Expression::Compare { metric, op, value } => {
                let name = match metric {
                    Metric::Speed => "Speed",
                    Metric::Battery => "Battery",
                };
                // f64's Display is the shortest text that reads back as the same value,
                // and never uses an exponent the lexer would not read.
                write!(f, "{name} {op} {value}")
            }
            Expression::Property { key, equal, value } => write!(
                f,
                "Property({}) {} {}",
                quoted(key),
                if *equal { "=" } else { "!=" },
                quoted(value)
            ),
            Expression::TimeBetween { from, to } => write!(
                f,
                "Time BETWEEN \"{:02}:{:02}\" AND \"{:02}:{:02}\"",
                from / 60,
                from % 60,
                to / 60,
                to % 60
            ),
            Expression::DayIn(days) => {
                let names: Vec<&str> = days.iter().map(|d| d.as_str()).collect();
                write!(f, "Day IN ({})", names.join(", "))
            }
        }
    }
}
