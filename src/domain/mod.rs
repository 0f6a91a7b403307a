//! The domain: records, validation rules, roles. No HTTP, no SQL.

pub mod access;
pub mod address_book;
pub mod device;
pub mod events;
pub mod external_link;
pub mod geofence;
pub mod lockout;
pub mod notification;
pub mod password;
pub mod profile;
pub mod recipient;
pub mod serde_util;
pub mod tenant;
pub mod time;
pub mod user;
pub mod validation;
pub mod webhook;
