//! API tests through HTTP, on SQLite and (when configured) PostgreSQL.

mod auth;
mod common;
mod conventions;
mod external_links;
mod geofences;
mod profiles;
mod tenants;
mod users;
mod webhooks;
