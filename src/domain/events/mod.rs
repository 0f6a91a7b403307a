//! The events engine's language: `EventsExpression` (docs/events-expressions.md) —
//! parsing into a typed AST, printing it back, and evaluating it against the facts
//! derived from a message.

mod evaluate;
mod expression;
mod lexer;
mod parser;

pub use evaluate::{EventFacts, GeofenceFact, evaluate_expression};
pub use expression::{Comparison, EventName, Expression, GeofenceEvent, Metric, Weekday};
pub use parser::{MAX_DEPTH, MAX_EXPRESSION_CHARS, ParseError, parse_expression};
