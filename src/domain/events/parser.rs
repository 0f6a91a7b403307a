//! Recursive-descent parser. Grammar (keywords case-insensitive; NOT binds tighter than
//! AND, AND than OR):
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
//!
//! Chains of AND/OR are loops building one n-ary node; only NOT and parentheses recurse,
//! and `MAX_DEPTH` bounds them, so neither parsing nor walking the tree can exhaust the
//! stack.

use super::expression::{Comparison, EventName, Expression, GeofenceEvent, Metric, Weekday};
use super::lexer::{LexError, Spanned, Token, tokenize};

/// Longest expression accepted, in characters.
pub const MAX_EXPRESSION_CHARS: usize = 4000;
/// Deepest nesting of NOT and parentheses accepted.
pub const MAX_DEPTH: usize = 64;

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
    fn new(position: usize, expected: &str, found: String) -> Self {
        Self {
            position,
            expected: expected.to_string(),
            found,
        }
    }
}

const EXPECTED_ATOM: &str = "an event name, a condition, NOT or \"(\"";
const EXPECTED_END: &str = "AND, OR or end of expression";

pub fn parse_expression(input: &str) -> Result<Expression, ParseError> {
    let length = input.chars().count();
    if length > MAX_EXPRESSION_CHARS {
        return Err(ParseError::new(
            MAX_EXPRESSION_CHARS + 1,
            &format!("at most {MAX_EXPRESSION_CHARS} characters"),
            format!("{length} characters"),
        ));
    }
    let lexed = tokenize(input);
    let mut parser = Parser {
        tokens: lexed.tokens,
        lex_error: lexed.error,
        index: 0,
        end: length + 1,
        depth: 0,
    };
    let expression = parser.or()?;
    if parser.peek().is_some() || parser.lex_error.is_some() {
        return Err(parser.error(EXPECTED_END));
    }
    Ok(expression)
}

struct Parser {
    tokens: Vec<Spanned>,
    /// What stopped the lexer, reported once the parser reaches it.
    lex_error: Option<LexError>,
    index: usize,
    /// Position reported for "end of expression".
    end: usize,
    depth: usize,
}

/// One operand stands for itself; several make an n-ary `And`/`Or`.
fn chain(mut items: Vec<Expression>, build: fn(Vec<Expression>) -> Expression) -> Expression {
    if items.len() == 1
        && let Some(only) = items.pop()
    {
        return only;
    }
    build(items)
}

fn keyword(token: &Token, word: &str) -> bool {
    matches!(token, Token::Ident(s) if s.eq_ignore_ascii_case(word))
}

impl Parser {
    fn peek(&self) -> Option<&Spanned> {
        self.tokens.get(self.index)
    }

    fn peek_token(&self) -> Option<&Token> {
        self.peek().map(|t| &t.token)
    }

    /// The error for the current token (or for what stopped the lexer, or the end).
    fn error(&self, expected: &str) -> ParseError {
        match (self.peek(), &self.lex_error) {
            (Some(t), _) => ParseError::new(t.position, expected, t.token.describe()),
            (None, Some(lex)) => ParseError::new(
                lex.position,
                lex.expected.unwrap_or(expected),
                lex.found.clone(),
            ),
            (None, None) => ParseError::new(self.end, expected, "end of expression".into()),
        }
    }

    fn at(&self, wanted: &Token) -> bool {
        self.peek_token() == Some(wanted)
    }

    fn at_keyword(&self, word: &str) -> bool {
        self.peek_token().is_some_and(|t| keyword(t, word))
    }

    fn expect(&mut self, wanted: Token, expected: &str) -> Result<(), ParseError> {
        if self.at(&wanted) {
            self.index += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), ParseError> {
        if self.at_keyword(word) {
            self.index += 1;
            Ok(())
        } else {
            Err(self.error(word))
        }
    }

    /// A string literal; `non_empty` refuses `""` (reported at the literal).
    fn expect_string(&mut self, expected: &str, non_empty: bool) -> Result<String, ParseError> {
        match self.peek_token() {
            Some(Token::Str(s)) if non_empty && s.is_empty() => {
                Err(self.error(&format!("{expected}, not empty")))
            }
            Some(Token::Str(s)) => {
                let s = s.clone();
                self.index += 1;
                Ok(s)
            }
            _ => Err(self.error(expected)),
        }
    }

    fn or(&mut self) -> Result<Expression, ParseError> {
        let mut items = vec![self.and()?];
        while self.at(&Token::OrSym) || self.at_keyword("OR") {
            self.index += 1;
            items.push(self.and()?);
        }
        Ok(chain(items, Expression::Or))
    }

    fn and(&mut self) -> Result<Expression, ParseError> {
        let mut items = vec![self.unary()?];
        while self.at(&Token::AndSym) || self.at_keyword("AND") {
            self.index += 1;
            items.push(self.unary()?);
        }
        Ok(chain(items, Expression::And))
    }

    fn unary(&mut self) -> Result<Expression, ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!(
                "a simpler expression (at most {MAX_DEPTH} levels of NOT and parentheses)"
            )));
        }
        self.depth += 1;
        let result = if self.at(&Token::NotSym) || self.at_keyword("NOT") {
            self.index += 1;
            self.unary().map(|e| Expression::Not(Box::new(e)))
        } else if self.at(&Token::LParen) {
            self.index += 1;
            self.or().and_then(|inner| {
                self.expect(Token::RParen, "\")\", AND or OR")?;
                Ok(inner)
            })
        } else {
            self.atom()
        };
        self.depth -= 1;
        result
    }

    /// An event name, or a condition keyword followed by its arguments.
    fn atom(&mut self) -> Result<Expression, ParseError> {
        let Some(Token::Ident(word)) = self.peek_token().cloned() else {
            return Err(self.error(EXPECTED_ATOM));
        };
        if let Some(event) = EventName::from_name(&word) {
            self.index += 1;
            return Ok(Expression::Event(event));
        }
        let arguments: fn(&mut Self) -> Result<Expression, ParseError> =
            match word.to_ascii_lowercase().as_str() {
                "geofenceenter" => |p| p.geofence_crossing(GeofenceEvent::Enter),
                "geofenceexit" => |p| p.geofence_crossing(GeofenceEvent::Exit),
                "ingeofence" => Self::in_geofence,
                "speed" => |p| p.metric_comparison(Metric::Speed),
                "battery" => |p| p.metric_comparison(Metric::Battery),
                "property" => Self::property,
                "time" => Self::time_between,
                "day" => Self::day_in,
                _ => return Err(self.error(EXPECTED_ATOM)),
            };
        self.index += 1;
        arguments(self)
    }

    /// After `GeofenceEnter`/`GeofenceExit`: `"(" STRING ")"`.
    fn geofence_crossing(&mut self, event: GeofenceEvent) -> Result<Expression, ParseError> {
        self.expect(Token::LParen, "\"(\"")?;
        let target = self.expect_string("a geofence id or name in quotes", true)?;
        self.expect(Token::RParen, "\")\"")?;
        Ok(Expression::Geofence {
            event,
            target: Some(target),
        })
    }

    /// After `InGeofence`: `[ "(" [STRING] ")" ]`; no target means any geofence.
    fn in_geofence(&mut self) -> Result<Expression, ParseError> {
        let mut target = None;
        if self.at(&Token::LParen) {
            self.index += 1;
            if !self.at(&Token::RParen) {
                target =
                    Some(self.expect_string("a geofence id or name in quotes, or \")\"", true)?);
            }
            self.expect(Token::RParen, "\")\"")?;
        }
        Ok(Expression::Geofence {
            event: GeofenceEvent::Inside,
            target,
        })
    }

    /// After `Speed`/`Battery`: `CMP NUMBER`.
    fn metric_comparison(&mut self, metric: Metric) -> Result<Expression, ParseError> {
        let op = self.comparison()?;
        let Some(Token::Number(value)) = self.peek_token().cloned() else {
            return Err(self.error("a number"));
        };
        self.index += 1;
        Ok(Expression::Compare { metric, op, value })
    }

    /// After `Property`: `"(" STRING ")" ("=" | "!=") STRING`.
    fn property(&mut self) -> Result<Expression, ParseError> {
        self.expect(Token::LParen, "\"(\"")?;
        let key = self.expect_string("a property name in quotes", true)?;
        self.expect(Token::RParen, "\")\"")?;
        let equal = match self.peek_token() {
            Some(Token::Eq) => true,
            Some(Token::Ne) => false,
            _ => return Err(self.error("\"=\" or \"!=\"")),
        };
        self.index += 1;
        let value = self.expect_string("a value in quotes", false)?;
        Ok(Expression::Property { key, equal, value })
    }

    /// After `Time`: `"BETWEEN" STRING "AND" STRING`.
    fn time_between(&mut self) -> Result<Expression, ParseError> {
        self.expect_keyword("BETWEEN")?;
        let from = self.clock_time()?;
        self.expect_keyword("AND")?;
        let to = self.clock_time()?;
        Ok(Expression::TimeBetween { from, to })
    }

    /// After `Day`: `"IN" "(" DAY ("," DAY)* ")"`.
    fn day_in(&mut self) -> Result<Expression, ParseError> {
        self.expect_keyword("IN")?;
        self.expect(Token::LParen, "\"(\"")?;
        let mut days = vec![self.weekday()?];
        while self.at(&Token::Comma) {
            self.index += 1;
            days.push(self.weekday()?);
        }
        self.expect(Token::RParen, "\",\" or \")\"")?;
        Ok(Expression::DayIn(days))
    }

    fn comparison(&mut self) -> Result<Comparison, ParseError> {
        let op = match self.peek_token() {
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

    /// `"HH:mm"`, exactly two digits each, 00:00 to 23:59; minutes after midnight.
    fn clock_time(&mut self) -> Result<u16, ParseError> {
        const EXPECTED: &str = "a time \"HH:mm\" between \"00:00\" and \"23:59\"";
        let Some(Spanned {
            token: Token::Str(text),
            position,
        }) = self.peek().cloned()
        else {
            return Err(self.error(EXPECTED));
        };
        let minutes = match text.as_bytes() {
            [h1, h2, b':', m1, m2] if [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) => {
                let digit = |d: &u8| u16::from(d - b'0');
                let (h, m) = (digit(h1) * 10 + digit(h2), digit(m1) * 10 + digit(m2));
                (h < 24 && m < 60).then_some(h * 60 + m)
            }
            _ => None,
        };
        let minutes = minutes
            .ok_or_else(|| ParseError::new(position, EXPECTED, Token::Str(text).describe()))?;
        self.index += 1;
        Ok(minutes)
    }

    fn weekday(&mut self) -> Result<Weekday, ParseError> {
        const EXPECTED: &str = "a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)";
        let day = match self.peek_token() {
            Some(Token::Ident(word)) => Weekday::from_name(word),
            _ => None,
        };
        let day = day.ok_or_else(|| self.error(EXPECTED))?;
        self.index += 1;
        Ok(day)
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
