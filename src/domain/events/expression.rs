//! Grammar (keywords case-insensitive; NOT binds tighter than AND, AND than OR):
//!
//! ```text
//! expression := and (("OR" | "||") and)*
//! and        := unary (("AND" | "&&") unary)*
//! unary      := ("NOT" | "!") unary | "(" expression ")" | atom
//! atom       := EVENT                                   e.g. CheckIn, Emergency
//!             | ("GeofenceEnter" | "GeofenceExit") "(" STRING ")"
//!             | "InGeofence" [ "(" [STRING] ")" ]       no argument: any geofence
//!             | ("Speed" | "Battery") CMP NUMBER         CMP: < <= > >= = !=
//!             | "Property" "(" STRING ")" ("=" | "!=") STRING
//!             | "Time" "BETWEEN" STRING "AND" STRING     "HH:mm", may wrap midnight
//!             | "Day" "IN" "(" DAY ("," DAY)* ")"        Mon..Sun or full names
//! ```

use std::fmt;

use super::lexer::{Spanned, Token, tokenize};

/// Longest expression accepted, in characters.
pub const MAX_EXPRESSION_CHARS: usize = 4000;
/// Deepest nesting of NOT and parentheses accepted.
pub const MAX_DEPTH: usize = 64;

/// The events an expression can name: every MO `MessageType`, plus the derived ones.
pub const EVENT_NAMES: [&str; 20] = [
    "AutomaticPositionReport",
    "ManualPositionReport",
    "ResponseToLocationRequest",
    "SwitchOn",
    "SystemTest",
    "DiagnosticResponse",
    "DeviceIdentifierResponse",
    "Synchronise",
    "FreeText",
    "GeofenceCrossed",
    "BeginMonitoring",
    "EndMonitoring",
    "CheckIn",
    "CannedMessageSend",
    "MessageAcknowledgement",
    "PowerDown",
    "Waypoint",
    "Emergency",
    "EmergencyCancelled",
    "MissedCheckIn",
];

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Weekday {
    Mon,
    Tue,
    Wed,
    Thu,
    Fri,
    Sat,
    Sun,
}

/// A parsed `EventsExpression`.
#[derive(Debug, Clone, PartialEq)]
pub enum Expression {
    And(Box<Expression>, Box<Expression>),
    Or(Box<Expression>, Box<Expression>),
    Not(Box<Expression>),
    /// One of `EVENT_NAMES`, in its canonical spelling.
    Event(&'static str),
    /// `target` is a geofence id or name; `None` (InGeofence only) means any geofence.
    Geofence {
        event: GeofenceEvent,
        target: Option<String>,
    },
    Compare {
        metric: Metric,
        op: Comparison,
        value: f64,
    },
    /// `equal` false means `!=`.
    Property {
        key: String,
        equal: bool,
        value: String,
    },
    /// Minutes after midnight, local time; `from > to` wraps past midnight.
    TimeBetween {
        from: u16,
        to: u16,
    },
    DayIn(Vec<Weekday>),
}

/// Where parsing stopped and what would have been accepted there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("position {position}: expected {expected}, found {found}")]
pub struct ParseError {
    /// 1-based character position.
    pub position: usize,
    pub expected: String,
    pub found: String,
}

impl ParseError {
    pub fn new(position: usize, expected: &str, found: &str) -> Self {
        Self {
            position,
            expected: expected.to_string(),
            found: found.to_string(),
        }
    }
}

pub fn parse_expression(input: &str) -> Result<Expression, ParseError> {
    let length = input.chars().count();
    if length > MAX_EXPRESSION_CHARS {
        return Err(ParseError::new(
            MAX_EXPRESSION_CHARS + 1,
            &format!("at most {MAX_EXPRESSION_CHARS} characters"),
            &format!("{length} characters"),
        ));
    }
    let tokens = tokenize(input)?;
    let mut parser = Parser {
        tokens,
        index: 0,
        end: length + 1,
        depth: 0,
    };
    let expression = parser.or()?;
    match parser.peek() {
        None => Ok(expression),
        Some(t) => Err(ParseError::new(
            t.position,
            "AND, OR or end of expression",
            &t.token.describe(),
        )),
    }
}

struct Parser {
    tokens: Vec<Spanned>,
    index: usize,
    /// Position reported for "end of expression".
    end: usize,
    depth: usize,
}

fn keyword(token: &Token, word: &str) -> bool {
    matches!(token, Token::Ident(s) if s.eq_ignore_ascii_case(word))
}

impl Parser {
    fn peek(&self) -> Option<&Spanned> {
        self.tokens.get(self.index)
    }

    fn advance(&mut self) -> Option<Spanned> {
        let t = self.tokens.get(self.index).cloned();
        self.index += 1;
        t
    }

    fn error(&self, expected: &str) -> ParseError {
        match self.peek() {
            Some(t) => ParseError::new(t.position, expected, &t.token.describe()),
            None => ParseError::new(self.end, expected, "end of expression"),
        }
    }

    fn expect(&mut self, wanted: Token, expected: &str) -> Result<(), ParseError> {
        if self.peek().is_some_and(|t| t.token == wanted) {
            self.index += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn expect_string(&mut self, expected: &str) -> Result<String, ParseError> {
        match self.peek() {
            Some(Spanned {
                token: Token::Str(s),
                ..
            }) => {
                let s = s.clone();
                self.index += 1;
                Ok(s)
            }
            _ => Err(self.error(expected)),
        }
    }

    fn at_keyword(&self, word: &str) -> bool {
        self.peek().is_some_and(|t| keyword(&t.token, word))
    }

    fn or(&mut self) -> Result<Expression, ParseError> {
        let mut left = self.and()?;
        while self
            .peek()
            .is_some_and(|t| t.token == Token::OrSym || keyword(&t.token, "OR"))
        {
            self.index += 1;
            let right = self.and()?;
            left = Expression::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expression, ParseError> {
        let mut left = self.unary()?;
        while self
            .peek()
            .is_some_and(|t| t.token == Token::AndSym || keyword(&t.token, "AND"))
        {
            self.index += 1;
            let right = self.unary()?;
            left = Expression::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expression, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!("at most {MAX_DEPTH} levels of nesting")));
        }
        let result = if self
            .peek()
            .is_some_and(|t| t.token == Token::NotSym || keyword(&t.token, "NOT"))
        {
            self.index += 1;
            self.unary().map(|e| Expression::Not(Box::new(e)))
        } else if self.peek().is_some_and(|t| t.token == Token::LParen) {
            self.index += 1;
            let inner = self.or()?;
            self.expect(Token::RParen, "\")\", AND or OR")?;
            Ok(inner)
        } else {
            self.atom()
        };
        self.depth -= 1;
        result
    }

    fn atom(&mut self) -> Result<Expression, ParseError> {
        const EXPECTED: &str = "an event name, a comparison, NOT or \"(\"";
        let Some(Spanned {
            token: Token::Ident(word),
            ..
        }) = self.peek().cloned()
        else {
            return Err(self.error(EXPECTED));
        };
        if let Some(name) = EVENT_NAMES.iter().find(|n| n.eq_ignore_ascii_case(&word)) {
            self.index += 1;
            return Ok(Expression::Event(name));
        }
        let lower = word.to_ascii_lowercase();
        match lower.as_str() {
            "geofenceenter" | "geofenceexit" => {
                self.index += 1;
                self.expect(Token::LParen, "\"(\"")?;
                let target = self.expect_string("a geofence id or name in quotes")?;
                self.expect(Token::RParen, "\")\"")?;
                let event = if lower == "geofenceenter" {
                    GeofenceEvent::Enter
                } else {
                    GeofenceEvent::Exit
                };
                Ok(Expression::Geofence {
                    event,
                    target: Some(target),
                })
            }
            "ingeofence" => {
                self.index += 1;
                let mut target = None;
                if self.peek().is_some_and(|t| t.token == Token::LParen) {
                    self.index += 1;
                    if !self.peek().is_some_and(|t| t.token == Token::RParen) {
                        target =
                            Some(self.expect_string("a geofence id or name in quotes, or \")\"")?);
                    }
                    self.expect(Token::RParen, "\")\"")?;
                }
                Ok(Expression::Geofence {
                    event: GeofenceEvent::Inside,
                    target,
                })
            }
            "speed" | "battery" => {
                self.index += 1;
                let op = self.comparison()?;
                let value = match self.peek() {
                    Some(Spanned {
                        token: Token::Number(n),
                        ..
                    }) => *n,
                    _ => return Err(self.error("a number")),
                };
                self.index += 1;
                let metric = if lower == "speed" {
                    Metric::Speed
                } else {
                    Metric::Battery
                };
                Ok(Expression::Compare { metric, op, value })
            }
            "property" => {
                self.index += 1;
                self.expect(Token::LParen, "\"(\"")?;
                let key = self.expect_string("a property name in quotes")?;
                self.expect(Token::RParen, "\")\"")?;
                let equal = match self.peek().map(|t| &t.token) {
                    Some(Token::Eq) => true,
                    Some(Token::Ne) => false,
                    _ => return Err(self.error("\"=\" or \"!=\"")),
                };
                self.index += 1;
                let value = self.expect_string("a value in quotes")?;
                Ok(Expression::Property { key, equal, value })
            }
            "time" => {
                self.index += 1;
                if !self.at_keyword("BETWEEN") {
                    return Err(self.error("BETWEEN"));
                }
                self.index += 1;
                let from = self.clock_time()?;
                if !self.at_keyword("AND") {
                    return Err(self.error("AND"));
                }
                self.index += 1;
                let to = self.clock_time()?;
                Ok(Expression::TimeBetween { from, to })
            }
            "day" => {
                self.index += 1;
                if !self.at_keyword("IN") {
                    return Err(self.error("IN"));
                }
                self.index += 1;
                self.expect(Token::LParen, "\"(\"")?;
                let mut days = vec![self.weekday()?];
                while self.peek().is_some_and(|t| t.token == Token::Comma) {
                    self.index += 1;
                    days.push(self.weekday()?);
                }
                self.expect(Token::RParen, "\",\" or \")\"")?;
                Ok(Expression::DayIn(days))
            }
            _ => Err(self.error(EXPECTED)),
        }
    }

    fn comparison(&mut self) -> Result<Comparison, ParseError> {
        let op = match self.peek().map(|t| &t.token) {
            Some(Token::Lt) => Comparison::Lt,
            Some(Token::Le) => Comparison::Le,
            Some(Token::Gt) => Comparison::Gt,
            Some(Token::Ge) => Comparison::Ge,
            Some(Token::Eq) => Comparison::Eq,
            Some(Token::Ne) => Comparison::Ne,
            _ => return Err(self.error("a comparison (<, <=, >, >=, =, !=)")),
        };
        self.index += 1;
        Ok(op)
    }

    fn clock_time(&mut self) -> Result<u16, ParseError> {
        let position = self.peek().map(|t| t.position).unwrap_or(self.end);
        let text = self.expect_string("a time \"HH:mm\"")?;
        let parsed = text.split_once(':').and_then(|(h, m)| {
            let (h, m) = (h.parse::<u16>().ok()?, m.parse::<u16>().ok()?);
            (h < 24 && m < 60 && text.len() == 5).then_some(h * 60 + m)
        });
        parsed.ok_or_else(|| {
            ParseError::new(
                position,
                "a time \"HH:mm\" between 00:00 and 23:59",
                &format!("\"{text}\""),
            )
        })
    }

    fn weekday(&mut self) -> Result<Weekday, ParseError> {
        const EXPECTED: &str = "a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)";
        let Some(Spanned {
            token: Token::Ident(word),
            ..
        }) = self.peek().cloned()
        else {
            return Err(self.error(EXPECTED));
        };
        let day = match word.to_ascii_lowercase().as_str() {
            "mon" | "monday" => Weekday::Mon,
            "tue" | "tuesday" => Weekday::Tue,
            "wed" | "wednesday" => Weekday::Wed,
            "thu" | "thursday" => Weekday::Thu,
            "fri" | "friday" => Weekday::Fri,
            "sat" | "saturday" => Weekday::Sat,
            "sun" | "sunday" => Weekday::Sun,
            _ => return Err(self.error(EXPECTED)),
        };
        self.advance();
        Ok(day)
    }
}

fn quoted(s: &str) -> String {
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

/// The canonical form: keywords upper-case, every AND/OR parenthesised.
impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expression::And(a, b) => write!(f, "({a} AND {b})"),
            Expression::Or(a, b) => write!(f, "({a} OR {b})"),
            Expression::Not(e) => write!(f, "NOT {e}"),
            Expression::Event(name) => f.write_str(name),
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
                write!(f, "{name} {op} {value}")
            }
            Expression::Property { key, equal, value } => {
                write!(
                    f,
                    "Property({}) {} {}",
                    quoted(key),
                    if *equal { "=" } else { "!=" },
                    quoted(value)
                )
            }
            Expression::TimeBetween { from, to } => write!(
                f,
                "Time BETWEEN \"{:02}:{:02}\" AND \"{:02}:{:02}\"",
                from / 60,
                from % 60,
                to / 60,
                to % 60
            ),
            Expression::DayIn(days) => {
                let names: Vec<String> = days.iter().map(|d| format!("{d:?}")).collect();
                write!(f, "Day IN ({})", names.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Expression {
        parse_expression(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn every_form_parses_and_round_trips() {
        for input in [
            "CheckIn",
            "emergency",
            "NOT PowerDown",
            "!FreeText",
            "CheckIn AND Emergency OR MissedCheckIn",
            "CheckIn && (Emergency || MissedCheckIn)",
            "GeofenceEnter(\"Depot\")",
            "GeofenceExit(\"12\")",
            "InGeofence",
            "InGeofence()",
            "InGeofence(\"Site \\\"A\\\"\")",
            "Speed > 100",
            "Speed>=80.5",
            "Battery < 20",
            "Battery != 0",
            "Property(\"shift\") = \"night\"",
            "Property(\"k\") != \"v\"",
            "Time BETWEEN \"18:00\" AND \"06:00\"",
            "Day IN (Sat, Sun)",
            "day in (monday, FRI)",
            "(AutomaticPositionReport AND Speed > 120) AND NOT Day IN (Sat) AND Time between \"22:00\" and \"05:30\"",
        ] {
            let ast = parse(input);
            let printed = ast.to_string();
            assert_eq!(parse(&printed), ast, "{input} -> {printed}");
        }
    }

    #[test]
    fn not_binds_tighter_than_and_tighter_than_or() {
        assert_eq!(
            parse("NOT CheckIn AND FreeText OR Emergency").to_string(),
            "((NOT CheckIn AND FreeText) OR Emergency)"
        );
        assert_eq!(
            parse("CheckIn OR FreeText AND Emergency").to_string(),
            "(CheckIn OR (FreeText AND Emergency))"
        );
    }

    #[test]
    fn errors_name_position_and_expectation() {
        let e = parse_expression("Speed > 100 AND Sped > 3").unwrap_err();
        assert_eq!(e.position, 17);
        assert!(e.expected.contains("event name"), "{e}");
        let e = parse_expression("CheckIn Emergency").unwrap_err();
        assert_eq!(
            (e.position, e.expected.as_str()),
            (9, "AND, OR or end of expression")
        );
        let e = parse_expression("(CheckIn").unwrap_err();
        assert_eq!(e.position, 9);
        assert_eq!(e.found, "end of expression");
        let e = parse_expression("Speed fast").unwrap_err();
        assert_eq!(e.position, 7);
        let e = parse_expression("Time BETWEEN \"25:00\" AND \"06:00\"").unwrap_err();
        assert_eq!(e.position, 14);
        let e = parse_expression("Day IN (Sat, Funday)").unwrap_err();
        assert_eq!(e.position, 14);
        let e = parse_expression("GeofenceEnter(Depot)").unwrap_err();
        assert_eq!(e.position, 15);
        let e = parse_expression("").unwrap_err();
        assert_eq!((e.position, e.found.as_str()), (1, "end of expression"));
        let e = parse_expression("Property(\"a\") > \"b\"").unwrap_err();
        assert_eq!(e.position, 15);
    }

    #[test]
    fn limits() {
        let deep = format!("{}CheckIn{}", "(".repeat(100), ")".repeat(100));
        assert!(
            parse_expression(&deep)
                .unwrap_err()
                .expected
                .contains("nesting")
        );
        let long = vec!["CheckIn"; 600].join(" OR ");
        assert!(parse_expression(&long).is_err());
        let ok = vec!["CheckIn"; 100].join(" OR ");
        assert!(parse_expression(&ok).is_ok());
    }
}
