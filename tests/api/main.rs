//! API tests through HTTP, on SQLite and (when configured) PostgreSQL.

mod address_book;
mod auth;
mod cli;
mod common;
mod conventions;
mod devices;
mod event_notification_rules;
mod event_notifications;
mod external_links;
mod geofences;
mod profiles;
mod tenants;
mod users;
mod webhooks;
