//! Records as they cross the wire: what clients send (PascalCase, every field optional,
//! as sent), with their OpenAPI schemas. Each `validated()` parses one into its domain
//! record or names every field that is wrong; responses serialize the domain record,
//! whose form is the same (each file's `wire_form_matches_the_domain_form` test keeps
//! the two from drifting). Records only the server makes (alerts, deliveries, timeline
//! and audit entries) have no wire record: their domain record is their form.

pub mod api_token;
pub mod contact;
pub mod device;
pub mod distribution_list;
pub mod escalation_policy;
pub mod external_link;
pub mod geofence;
pub mod group;
pub mod itinerary;
pub mod itinerary_segments;
pub mod mo_message;
pub mod monitoring;
pub mod mt_message;
pub mod notification;
pub mod profile;
pub mod risk_region;
pub mod tenant;
pub mod user;
pub mod webhook;
