//! The OpenAPI document's frame: metadata, security scheme, shared schemas. Routes add
//! themselves through `utoipa_axum::routes!`, so the document lists exactly what exists.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};

use super::error::{Problem, ProblemField};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "safetrack API",
        version = "2.0.0",
        description = "Multi-tenant safety and tracking platform. Every /V2 request authenticates \
            with HTTP Basic (the user's e-mail and password). Errors are RFC 9457 \
            application/problem+json. See the project's docs/ for the decisions behind the contract."
    ),
    modifiers(&BasicAuth),
    security(("basic" = [])),
    components(schemas(Problem, ProblemField, PatchOperation)),
    tags(
        (name = "Tenants", description = "Tenants and the tenant hierarchy"),
        (name = "Users", description = "User accounts"),
        (name = "User profiles", description = "Personal details and emergency contacts"),
        (name = "Address book contacts", description = "Contacts of a tenant's address book"),
        (name = "Address book distribution lists", description = "Distribution lists (strict schema; JSON, XML, text and CSV)"),
        (name = "Event notifications", description = "When to notify whom: tenant and group level"),
        (name = "Devices", description = "The device registry"),
        (name = "Groups", description = "Device groups"),
        (name = "Deleted devices", description = "The log of deleted devices (AccessAllDevices)"),
        (name = "Geofences", description = "Circle, polygon and polyline geofences; \
            AppliesToSubtenants shares one read-only with every descendant tenant"),
        (name = "Webhooks", description = "Where and how changes are POSTed to the \
            tenant's own systems"),
        (name = "External links", description = "Links a tenant shows its users"),
        (name = "Operations", description = "Health and readiness"),
    )
)]
pub struct ApiDoc;

struct BasicAuth;

impl Modify for BasicAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "basic",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Basic).build()),
        );
    }
}

/// One RFC 6902 operation.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct PatchOperation {
    /// add, remove, replace, move, copy or test
    #[schema(example = "replace")]
    op: String,
    /// JSON Pointer to the field, e.g. `/FirstName`.
    #[schema(example = "/FirstName")]
    path: String,
    value: Option<serde_json::Value>,
    from: Option<String>,
}

/// The `{tenantVarCode}` path parameter every /V2 route has.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
pub struct TenantParam {
    /// Tenant var code, e.g. `1000`.
    tenantVarCode: String,
}
