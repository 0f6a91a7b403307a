//! Services: what HTTP handlers and background workers share — ingest and the events
//! engine, recipient resolution, the rules cache, the live event hub. They take the
//! `Store` (never `AppState` or an extractor) and run the domain between store calls.

pub mod alerts;
pub mod escalation;
pub mod gateway_ingest;
pub mod ingest;
pub mod person_export;
pub mod recipients;
pub mod reports;
pub mod rules;
pub mod stream;
