//! safetrack: a multi-tenant safety and tracking platform served as a REST API.
//! See ARCHITECTURE.md for the map.

pub mod app;
pub mod auth;
pub mod channels;
pub mod config;
pub mod domain;
pub mod http;
pub mod listeners;
pub mod server;
pub mod services;
pub mod settings;
pub mod store;
pub mod workers;
