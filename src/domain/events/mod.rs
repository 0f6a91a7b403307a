//! The events engine's language: `EventsExpression` (DESIGN.md §5) — parsing into a typed
//! AST, printing it back, and evaluating it against the facts derived from a message.

mod evaluate;
mod expression;
mod lexer;

pub use evaluate::{EventFacts, GeofenceFact, evaluate_expression};
pub use expression::{
    Comparison, EVENT_NAMES, Expression, GeofenceEvent, Metric, ParseError, Weekday,
    parse_expression,
};
