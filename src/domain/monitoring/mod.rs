//! Lone-worker monitoring (DESIGN §11, issue 45), the pure part: a session's settings
//! and their defaults (`settings`), its clock — timers and state — (`session`), and
//! what confirms a check-in (`check_in`). The store, API, ingest and timer worker use
//! them (docs/monitoring.md).

pub mod check_in;
pub mod motion;
pub mod record;
pub mod session;
pub mod settings;
pub mod view;

pub use check_in::{Confirmation, confirmation_of, message_confirmation};
pub use motion::{Motion, NoMotionCheck};
pub use record::{EndKind, MonitoringSession, SessionEnd, SessionEventKind, SessionEventLine};
pub use session::{
    ArmedTimers, DueAct, FiredTimers, MonitoringState, Schedule, SessionClock, SessionTimer,
    timers_to_fire,
};
pub use settings::{DefaultSources, RequestedSettings, SessionSettings, Settled, Source};
