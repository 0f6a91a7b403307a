//! Device gateways that are not HTTP: listeners of their own beside the API's, each a
//! thin adapter like `http/gateways/` — read with `domain::device_protocols`, store through
//! `services::gateway_ingest`.

pub mod allowed_source;
pub mod directip_listener;
