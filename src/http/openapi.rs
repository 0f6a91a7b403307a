//! The OpenAPI document's frame: metadata, security scheme, shared schemas. Routes add
//! themselves through `utoipa_axum::routes!`, so the document lists exactly what exists.

use std::collections::{BTreeMap, BTreeSet};

use utoipa::openapi::content::Content;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::header::Header;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{HttpMethod, Operation, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::response::Response;
use utoipa::openapi::schema::{ArrayItems, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Ref, RefOr, Required};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};

use super::error::{Problem, ProblemField};
use crate::domain::alert::AlertStatus;
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::mt_message::MtStatus;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "safetrack API",
        version = "2.0.0",
        description = "Multi-tenant safety and tracking platform. Every /V2 request authenticates \
            with HTTP Basic (the user's e-mail and password), an API token \
            (`Authorization: Bearer st_…`, see /V2/{tenantVarCode}/apitokens) or the browser \
            session cookie (`POST /auth/session`; unsafe requests with the cookie also need \
            `X-CSRF-Token` and the server's own origin). Errors are RFC 9457 \
            application/problem+json. See the project's docs/ for the decisions behind the contract."
    ),
    modifiers(&BasicAuth),
    security(("basic" = []), ("bearer" = []), ("session" = [])),
    // Closed sets that only query parameters name (records' own are collected with them).
    components(schemas(Problem, ProblemField, PatchOperation, AlertStatus, Channel, DeliveryStatus, MtStatus)),
    tags(
        (name = "Tenants", description = "Tenants and the tenant hierarchy"),
        (name = "Users", description = "User accounts"),
        (name = "User profiles", description = "Personal details and emergency contacts"),
        (name = "Address book contacts", description = "Contacts of a tenant's address book"),
        (name = "Address book distribution lists", description = "Distribution lists (strict schema; JSON, XML, text and CSV)"),
        (name = "Event notifications", description = "When to notify whom: tenant and group level"),
        (name = "Escalation policies", description = "The ordered steps an unacknowledged \
            alert goes through (AfterMinutes, Recipients, Instructions); a notification \
            names one, else the tenant default applies"),
        (name = "Devices", description = "The device registry"),
        (name = "Push subscriptions", description = "Web Push to the worker app (RFC 8030/8291/8292): \
            the server's VAPID public key"),
        (name = "MO messages", description = "Messages from devices: stored, processed by the events engine, listed by message time"),
        (name = "MT messages", description = "Messages and commands queued for a device; \
            a device gateway lists the Queued ones and reports their progress"),
        (name = "Alerts", description = "Alerts raised by notifications with RaiseAlert: \
            Open, Acknowledged (the first acknowledgement wins), Resolved"),
        (name = "Deliveries", description = "The delivery outbox: one row per target of a \
            notification's match, with its status"),
        (name = "Groups", description = "Device groups"),
        (name = "API tokens", description = "Tenant credentials for machines: \
            `Authorization: Bearer <Token>`, with their own permissions; the secret is shown once"),
        (name = "Sessions", description = "Browser sessions for the portal: a cookie, a CSRF token"),
        (name = "Deleted devices", description = "The log of deleted devices (AccessAllDevices)"),
        (name = "Geofences", description = "Circle, polygon and polyline geofences; \
            AppliesToSubtenants shares one read-only with every descendant tenant"),
        (name = "Live stream", description = "Server-Sent Events of MO messages, alerts and \
            device state changes as they happen; resumable with Last-Event-ID"),
        (name = "Webhooks", description = "Where and how changes are POSTed to the \
            tenant's own systems"),
        (name = "External links", description = "Links a tenant shows its users"),
        (name = "Itineraries", description = "Travel plans: travelers, flights, journeys, \
            hotel stays and risk regions, with derived Start/End and OverallRisk"),
        (name = "Risk regions", description = "A tenant's catalogue of risk areas \
            (polygon and RiskLevel 1-5) that itineraries attach or fall into"),
        (name = "Reports", description = "Reports over devices, alerts and driver behaviour, \
            streamed as computed (JSON, CSV, XML); see docs/reports.md"),
        (name = "Collections", description = "Cross-tenant sets of devices that reports take as CollectionId"),
        (name = "Audit log", description = "Who changed what, when and from where \
            (Administrators)"),
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
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("st_ API token")
                    .description(Some("An API token (POST /V2/{tenantVarCode}/apitokens)"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(utoipa::openapi::security::ApiKey::Cookie(
                utoipa::openapi::security::ApiKeyValue::with_description(
                    crate::http::extract::SESSION_COOKIE,
                    "The browser session (POST /auth/session); unsafe requests also send \
                     X-CSRF-Token and come from the server's own origin",
                ),
            )),
        );
    }
}

/// One RFC 6902 operation.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct PatchOperation {
    #[schema(inline, example = "replace")]
    op: PatchOp,
    /// JSON Pointer to the field, e.g. `/FirstName`.
    #[schema(example = "/FirstName")]
    path: String,
    /// For add, replace and test.
    value: Option<serde_json::Value>,
    /// For move and copy: a JSON Pointer. The other operations ignore it, whatever it
    /// holds (RFC 6902 §4).
    from: Option<serde_json::Value>,
}

#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
enum PatchOp {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
}

/// The `{tenantVarCode}` path parameter every /V2 route has.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
pub struct TenantParam {
    /// Tenant var code, e.g. `1000`.
    tenantVarCode: String,
}

// ---- what the shared machinery answers -----------------------------------------------

const PROBLEM_SCHEMA: &str = "#/components/schemas/Problem";
const PROBLEM_JSON: &str = "application/problem+json";

/// Records whose version travels only in the `ETag` header (the contract's record has no
/// such field). Records with an `ETag` field are recognised from their schema.
const HEADER_VERSIONED: &[&str] = &[
    "Contact",
    "DistributionList",
    "EscalationPolicy",
    "EventNotification",
    "Flight",
    "Geofence",
    "Hotel",
    "Itinerary",
    "Journey",
    "RiskRegion",
    "Traveler",
    "UserProfile",
    "WebhookSettings",
];

/// Media types the `negotiate` middleware renders a /V2 JSON response body in, besides
/// `application/json` (negotiate.rs): each carries the same JSON, or its XML form.
const ALTERNATIVE_MEDIA_TYPES: &[&str] = &[
    "text/json",
    "text/plain",
    "application/octet-stream",
    "application/xml",
    "text/xml",
];

/// Completes the assembled document with what the shared machinery answers, so that it
/// tells the whole truth: handler annotations state what is specific to an operation
/// (its body, its 400/403/409/412 and their wording); this adds, from one place, what
/// every operation can answer because of the extractors and middleware it runs through
/// (`TenantScope` → 401/404, `negotiate` → 406/304 and the other media types, `Body` →
/// 400/408/413/415, `IfMatch` → 412, the rate limiter → 429, `ApiError::Internal` → 500) and
/// the rule every write follows (a permission check → 403),
/// and rewrites every error response to its real media type, `application/problem+json`.
pub fn complete(api: &mut utoipa::openapi::OpenApi) {
    let versioned_schemas = versioned_schemas(api);
    for (path, item) in api.paths.paths.iter_mut() {
        let versioned = item
            .get
            .as_ref()
            .and_then(|get| single_record_schema(get, "200"))
            .is_some_and(|name| versioned_schemas.contains(name));
        let v2 = path.starts_with("/V2/");
        for (method, operation) in operations_mut(item) {
            if method == HttpMethod::Put {
                path_named_fields_optional(operation, api.components.as_ref());
            }
            if v2 {
                complete_v2(method, operation, &versioned_schemas, versioned);
            } else if operation.request_body.is_some() {
                // The body deadline (`--body-read-timeout-seconds`) holds on every route.
                add_problem(operation, "408");
            }
            for response in operation.responses.responses.values_mut() {
                if let RefOr::T(response) = response {
                    problem_json(response);
                }
            }
            describe_responses(operation);
        }
    }
    add_links(api);
}

/// A PUT replaces the record the path names, with the path's id: a required body field
/// that the path already names (a device's `DeviceId`) may be left out. The body gets its
/// own copy of the schema with that field optional.
fn path_named_fields_optional(
    operation: &mut Operation,
    components: Option<&utoipa::openapi::Components>,
) {
    let path_names: Vec<String> = operation
        .parameters
        .iter()
        .flatten()
        .filter(|p| p.parameter_in == ParameterIn::Path)
        .map(|p| p.name.to_ascii_lowercase())
        .collect();
    let Some(body) = operation.request_body.as_mut() else {
        return;
    };
    for content in body.content.values_mut() {
        let Some(RefOr::Ref(reference)) = &content.schema else {
            continue;
        };
        let Some(RefOr::T(Schema::Object(object))) = reference
            .ref_location
            .strip_prefix("#/components/schemas/")
            .and_then(|name| components?.schemas.get(name))
        else {
            continue;
        };
        if !object
            .required
            .iter()
            .any(|field| path_names.contains(&field.to_ascii_lowercase()))
        {
            continue;
        }
        let mut object = object.clone();
        object
            .required
            .retain(|field| !path_names.contains(&field.to_ascii_lowercase()));
        content.schema = Some(RefOr::T(Schema::Object(object)));
    }
}

/// Names of the record schemas that carry a version (`ETag`).
fn versioned_schemas(api: &utoipa::openapi::OpenApi) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = HEADER_VERSIONED.iter().map(|s| s.to_string()).collect();
    if let Some(components) = &api.components {
        for (name, schema) in &components.schemas {
            if let RefOr::T(Schema::Object(object)) = schema
                && object.properties.contains_key("ETag")
            {
                names.insert(name.clone());
            }
        }
    }
    names
}

fn operations_mut(item: &mut PathItem) -> Vec<(HttpMethod, &mut Operation)> {
    [
        (HttpMethod::Get, item.get.as_mut()),
        (HttpMethod::Put, item.put.as_mut()),
        (HttpMethod::Post, item.post.as_mut()),
        (HttpMethod::Delete, item.delete.as_mut()),
        (HttpMethod::Patch, item.patch.as_mut()),
        (HttpMethod::Head, item.head.as_mut()),
        (HttpMethod::Options, item.options.as_mut()),
        (HttpMethod::Trace, item.trace.as_mut()),
    ]
    .into_iter()
    .filter_map(|(method, operation)| operation.map(|operation| (method, operation)))
    .collect()
}

/// The component a response of `status` returns one of as `application/json`, if any.
fn single_record_schema<'a>(operation: &'a Operation, status: &str) -> Option<&'a str> {
    let RefOr::T(response) = operation.responses.responses.get(status)? else {
        return None;
    };
    let RefOr::Ref(reference) = response.content.get("application/json")?.schema.as_ref()? else {
        return None;
    };
    reference.ref_location.strip_prefix("#/components/schemas/")
}

/// What a /V2 operation's method says of it.
#[derive(Clone, Copy)]
struct OperationKind {
    is_get: bool,
    is_post: bool,
    /// PUT, PATCH or DELETE.
    is_write: bool,
    has_body: bool,
    /// Its record carries a version (ETag).
    versioned: bool,
}

fn complete_v2(
    method: HttpMethod,
    operation: &mut Operation,
    versioned_schemas: &BTreeSet<String>,
    versioned: bool,
) {
    let kind = OperationKind {
        is_get: method == HttpMethod::Get,
        is_post: method == HttpMethod::Post,
        is_write: matches!(
            method,
            HttpMethod::Put | HttpMethod::Patch | HttpMethod::Delete
        ),
        has_body: operation.request_body.is_some(),
        versioned,
    };
    add_version_headers(operation, kind);
    // Query parameters and request headers are parsed, and can be malformed; a path
    // parameter that names nothing is a 404, and `If-None-Match` is only compared.
    let has_parameters = operation.parameters.iter().flatten().any(|p| {
        p.parameter_in != ParameterIn::Path && !p.name.eq_ignore_ascii_case("If-None-Match")
    });
    complete_success(operation, kind, versioned_schemas);
    add_errors(operation, kind, has_parameters);
}

/// `If-None-Match` on a versioned record's GET, `If-Match` on its writes.
fn add_version_headers(operation: &mut Operation, kind: OperationKind) {
    if kind.versioned && kind.is_get {
        add_header_parameter(
            operation,
            "If-None-Match",
            "An ETag of the record: answered with 304 while it is still current",
        );
    }
    if kind.versioned && kind.is_write {
        add_header_parameter(
            operation,
            "If-Match",
            "The ETag the change is based on: 412 when the record has changed since (`*` or \
             absent: any version)",
        );
    }
}

/// Success: the negotiated representations, the version where the record has one, the
/// created record's `Location`, and 304 for a versioned GET.
fn complete_success(
    operation: &mut Operation,
    kind: OperationKind,
    versioned_schemas: &BTreeSet<String>,
) {
    let returns_versioned =
        single_record_schema(operation, "200").is_some_and(|name| versioned_schemas.contains(name));
    if let Some(RefOr::T(ok)) = operation.responses.responses.get_mut("200") {
        if returns_versioned && !ok.headers.contains_key("ETag") {
            ok.headers.insert("ETag".into(), etag_header());
        }
        negotiated_media_types(ok);
        if kind.is_post && ok.content.is_empty() && !ok.headers.contains_key("Location") {
            ok.headers.insert(
                "Location".into(),
                header(string_schema(), "The path of the created record"),
            );
        }
    }
    if kind.versioned && kind.is_get {
        add_response(operation, "304", || {
            Response::new("Not modified: `If-None-Match` names the record's current version")
        });
        if let Some(RefOr::T(not_modified)) = operation.responses.responses.get_mut("304") {
            not_modified
                .headers
                .entry("ETag".into())
                .or_insert_with(etag_header);
        }
    }
}

/// The errors the machinery can answer, in status order.
fn add_errors(operation: &mut Operation, kind: OperationKind, has_parameters: bool) {
    if has_parameters || kind.has_body {
        add_problem(operation, "400");
    }
    add_response(operation, "401", || {
        let mut response = problem_response("401");
        response.headers.insert(
            "WWW-Authenticate".into(),
            header(
                string_schema(),
                "`Basic realm=\"safetrack\", charset=\"UTF-8\"`",
            ),
        );
        response
    });
    // Every write checks a permission first (ARCHITECTURE.md), and ReadOnly has none.
    if kind.is_write || kind.is_post {
        add_problem(operation, "403");
    }
    add_problem(operation, "404");
    add_problem(operation, "406");
    if kind.versioned && kind.is_write {
        add_problem(operation, "412");
    }
    if kind.has_body {
        add_problem(operation, "408");
        add_problem(operation, "413");
        add_problem(operation, "415");
    }
    add_response(operation, "429", || {
        let mut response = problem_response("429");
        response.headers.insert(
            "Retry-After".into(),
            header(
                ObjectBuilder::new().schema_type(Type::Integer),
                "Seconds to wait before the next request",
            ),
        );
        response
    });
    add_problem(operation, "500");
}

/// Adds the media types `negotiate` can render a JSON body in (and CSV for lists).
fn negotiated_media_types(response: &mut Response) {
    let Some(json) = response.content.get("application/json") else {
        return;
    };
    let schema = json.schema.clone();
    let is_list = matches!(&schema, Some(RefOr::T(Schema::Array(_))));
    for media_type in ALTERNATIVE_MEDIA_TYPES {
        if !response.content.contains_key(*media_type) {
            response
                .content
                .insert(media_type.to_string(), Content::new(schema.clone()));
        }
    }
    if is_list && !response.content.contains_key("text/csv") {
        response
            .content
            .insert("text/csv".into(), Content::new(Some(string_schema())));
    }
}

fn add_header_parameter(operation: &mut Operation, name: &str, description: &str) {
    let parameters = operation.parameters.get_or_insert_with(Vec::new);
    if parameters
        .iter()
        .any(|p| p.parameter_in == ParameterIn::Header && p.name.eq_ignore_ascii_case(name))
    {
        return;
    }
    parameters.push(
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(description))
            .schema(Some(string_schema()))
            .build(),
    );
}

fn add_response(operation: &mut Operation, status: &str, response: impl FnOnce() -> Response) {
    operation
        .responses
        .responses
        .entry(status.to_string())
        .or_insert_with(|| RefOr::T(response()));
}

fn add_problem(operation: &mut Operation, status: &str) {
    add_response(operation, status, || problem_response(status));
}

fn problem_response(status: &str) -> Response {
    let mut response = Response::new(error_description(status).unwrap_or_default());
    response.content.insert(
        PROBLEM_JSON.into(),
        Content::new(Some(Ref::from_schema_name("Problem"))),
    );
    response
}

/// Every response whose body is a `Problem` is served as `application/problem+json`.
fn problem_json(response: &mut Response) {
    let keys: Vec<String> = response
        .content
        .iter()
        .filter(|(media_type, content)| {
            media_type.as_str() != PROBLEM_JSON
                && matches!(&content.schema, Some(RefOr::Ref(r)) if r.ref_location == PROBLEM_SCHEMA)
        })
        .map(|(media_type, _)| media_type.clone())
        .collect();
    for key in keys {
        if let Some(content) = response.content.shift_remove(&key) {
            response
                .content
                .entry(PROBLEM_JSON.into())
                .or_insert(content);
        }
    }
}

/// Responses the annotations left without words get the standard ones.
fn describe_responses(operation: &mut Operation) {
    for (status, response) in operation.responses.responses.iter_mut() {
        if let RefOr::T(response) = response
            && response.description.is_empty()
        {
            let description = match error_description(status) {
                Some(description) => description,
                None if status == "200" => {
                    match response.content.values().next().map(|c| &c.schema) {
                        Some(Some(RefOr::T(Schema::Array(_)))) => "The records",
                        Some(Some(RefOr::Ref(_))) => "The record",
                        None => "Done",
                        Some(_) => continue,
                    }
                }
                None => continue,
            };
            response.description = description.into();
        }
    }
}

fn error_description(status: &str) -> Option<&'static str> {
    Some(match status {
        "400" => {
            "The request is invalid: a body, query or header value is malformed or fails \
             validation (`errors` names each offending field)"
        }
        "401" => {
            "Missing or wrong credentials, or the account is locked or disabled (HTTP Basic \
             with the user's e-mail and password)"
        }
        "403" => "The caller's role does not allow this",
        "404" => "The tenant or the record does not exist, or is outside the caller's scope",
        "406" => "None of the media types in `Accept` can be produced",
        "409" => "Conflicts with the stored records",
        "412" => "`If-Match` does not name the record's current version",
        "408" => {
            "The request body did not arrive within the server's body deadline \
             (`--body-read-timeout-seconds`); the connection is closed"
        }
        "413" => "The request body is larger than this endpoint accepts",
        "415" => "The `Content-Type` is neither JSON nor XML",
        "429" => {
            "Too many requests from this client address (only when the operator configured a \
             rate limit); `Retry-After` says when to try again"
        }
        "500" => "An internal error; the problem carries the request id to quote",
        "503" => "The database does not answer",
        _ => return None,
    })
}

fn etag_header() -> Header {
    header(string_schema(), "The record's version (quoted)")
}

fn header(schema: ObjectBuilder, description: &str) -> Header {
    let mut header = Header::new(schema);
    header.description = Some(description.into());
    header
}

fn string_schema() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// The record ids a response gives: OpenAPI links from an operation's 200 to the operations
/// on the record it created or listed, so that a client (and schemathesis' stateful phase)
/// knows which answer a path id comes from:
///
/// - a create (`POST /…/things`, with `…/things/{thingId}` in the document) links to every
///   operation on `…/things/{thingId}` and below whose other path ids are its own; the id is
///   the record's in the answer (`$response.body#/ThingId`), else the one the client chose
///   (`$request.body#/ThingId`, a field that is not read-only), else the last segment of
///   `Location` (`#regex:` is schemathesis' extractor; the server's ids are plain numbers);
/// - a tenant-level create also links to the other tenant-level operations on the same id
///   (`/users` → `/userprofile/{userId}`);
/// - a list links the same operations to its first item's id (`$response.body#/0/ThingId`).
///
/// The other path ids come from the request (`$request.path.tenantVarCode`).
fn add_links(api: &mut utoipa::openapi::OpenApi) {
    let operations = link_operations(api);
    let links: Vec<PlannedLink> = operations
        .iter()
        .flat_map(|source| links_from(source, &operations))
        .collect();
    for (path, method, name, link) in links {
        let Some(item) = api.paths.paths.get_mut(&path) else {
            continue;
        };
        let Some((_, operation)) = operations_mut(item).into_iter().find(|(m, _)| *m == method)
        else {
            continue;
        };
        if let Some(RefOr::T(ok)) = operation.responses.responses.get_mut("200") {
            ok.links.insert(name, RefOr::T(link));
        }
    }
}

/// A link to add: the source's path and method, the target's operation id, the link.
type PlannedLink = (String, HttpMethod, String, utoipa::openapi::link::Link);

/// The links a create's or a list's answer gives to the operations on the record it names.
fn links_from(source: &LinkOperation, operations: &[LinkOperation]) -> Vec<PlannedLink> {
    let is_create = source.method == HttpMethod::Post;
    let is_list = source.method == HttpMethod::Get && source.answers_list;
    if !source.path.starts_with("/V2/") || (!is_create && !is_list) {
        return Vec::new();
    }
    // The item path: the source's path and one more id.
    let Some((item, id)) = operations.iter().find_map(|o| {
        let rest = o.path.strip_prefix(&source.path)?.strip_prefix("/{")?;
        let name = rest.strip_suffix('}')?;
        (!name.contains('/')).then(|| (o.path.clone(), name.to_string()))
    }) else {
        return Vec::new();
    };
    let Some(expression) = id_expression(source, &id, is_list) else {
        return Vec::new();
    };
    let tenant_level = is_create && source.path_params == ["tenantVarCode"];
    operations
        .iter()
        .filter(|target| !std::ptr::eq(*target, source))
        .filter(|target| {
            let under_item = target.path == item || target.path.starts_with(&format!("{item}/"));
            let same_id_elsewhere = tenant_level
                && target
                    .path
                    .strip_prefix("/V2/{tenantVarCode}/")
                    .is_some_and(|rest| {
                        rest.split('/').count() == 2 && rest.ends_with(&format!("/{{{id}}}"))
                    });
            let resolvable = target
                .path_params
                .iter()
                .all(|p| *p == id || source.path_params.contains(p));
            (under_item || same_id_elsewhere)
                && resolvable
                && target.path_params.contains(&id)
                && !needs_a_session(&item, target)
        })
        .map(|target| {
            (
                source.path.clone(),
                source.method.clone(),
                target.operation_id.clone(),
                link_to(target, &id, &expression),
            )
        })
        .collect()
}

/// A device's monitoring session exists only once started (`POST …/monitoring`): its
/// reads, changes and check-ins are 404 right after the device's create, so they are no
/// link from it (its ended sessions' history is).
fn needs_a_session(item: &str, target: &LinkOperation) -> bool {
    let session = format!("{item}/monitoring");
    (target.path == session && target.method != HttpMethod::Post)
        || (target.path.starts_with(&format!("{session}/")) && !target.path.ends_with("/history"))
}

/// Where the named record's id is read: the answer's field, the request's (an id the
/// client chose), or the last segment of `Location`.
fn id_expression(source: &LinkOperation, id: &str, is_list: bool) -> Option<String> {
    let answered = id_field(id, &source.answer_fields);
    let chosen = id_field(id, &source.chosen_fields);
    if is_list {
        return answered.map(|field| format!("$response.body#/0/{field}"));
    }
    Some(if let Some(field) = answered {
        if source.answers_list {
            format!("$response.body#/0/{field}")
        } else {
            format!("$response.body#/{field}")
        }
    } else if let Some(field) = chosen {
        format!("$request.body#/{field}")
    } else if source.has_location {
        "$response.header.Location#regex:/([^/?#]+)$".to_string()
    } else {
        return None;
    })
}

/// A link to `target`, its `id` parameter from `expression`, the others from the request.
fn link_to(target: &LinkOperation, id: &str, expression: &str) -> utoipa::openapi::link::Link {
    // utoipa 5.5 writes `Link::operation_id` as `operation_id`, which no reader of
    // the document knows: the field goes in by its OpenAPI name, as an extension.
    let mut named = Extensions::default();
    named.insert("operationId".into(), target.operation_id.clone().into());
    let mut link = LinkBuilder::new().extensions(Some(named));
    for name in &target.path_params {
        let value = if name == id {
            expression.to_string()
        } else {
            format!("$request.path.{name}")
        };
        link = link.parameter(format!("path.{name}"), value);
    }
    link.build()
}

/// What `add_links` reads of an operation.
struct LinkOperation {
    path: String,
    method: HttpMethod,
    operation_id: String,
    path_params: Vec<String>,
    /// Its 200 is a JSON array.
    answers_list: bool,
    /// The fields of the record (or list item) its 200 answers.
    answer_fields: BTreeSet<String>,
    /// The fields of its JSON body that a client sets (not read-only).
    chosen_fields: BTreeSet<String>,
    /// Its 200 carries `Location`.
    has_location: bool,
}

fn link_operations(api: &utoipa::openapi::OpenApi) -> Vec<LinkOperation> {
    let schemas = api.components.as_ref().map(|c| &c.schemas);
    let mut all = Vec::new();
    for (path, item) in &api.paths.paths {
        let operations = [
            (HttpMethod::Get, item.get.as_ref()),
            (HttpMethod::Put, item.put.as_ref()),
            (HttpMethod::Post, item.post.as_ref()),
            (HttpMethod::Delete, item.delete.as_ref()),
            (HttpMethod::Patch, item.patch.as_ref()),
        ];
        for (method, operation) in operations {
            let Some(operation) = operation else { continue };
            let Some(operation_id) = operation.operation_id.clone() else {
                continue;
            };
            let ok = match operation.responses.responses.get("200") {
                Some(RefOr::T(ok)) => Some(ok),
                _ => None,
            };
            let answer = ok
                .and_then(|ok| ok.content.get("application/json"))
                .and_then(|c| c.schema.as_ref());
            let (answers_list, answer_fields) = match answer {
                Some(RefOr::T(Schema::Array(array))) => match &array.items {
                    ArrayItems::RefOrSchema(items) => (true, record_fields(items, schemas, false)),
                    ArrayItems::False => (true, BTreeSet::new()),
                },
                Some(schema) => (false, record_fields(schema, schemas, false)),
                None => (false, BTreeSet::new()),
            };
            let chosen_fields = operation
                .request_body
                .as_ref()
                .and_then(|b| b.content.get("application/json"))
                .and_then(|c| c.schema.as_ref())
                .map(|schema| record_fields(schema, schemas, true))
                .unwrap_or_default();
            all.push(LinkOperation {
                path: path.clone(),
                method,
                operation_id,
                path_params: operation
                    .parameters
                    .iter()
                    .flatten()
                    .filter(|p| p.parameter_in == ParameterIn::Path)
                    .map(|p| p.name.clone())
                    .collect(),
                answers_list,
                answer_fields,
                chosen_fields,
                has_location: ok.is_some_and(|ok| ok.headers.contains_key("Location")),
            });
        }
    }
    all
}

/// The property names of an object schema (through `$ref` and `allOf`); `writable`: only
/// those that are not read-only.
fn record_fields(
    schema: &RefOr<Schema>,
    schemas: Option<&BTreeMap<String, RefOr<Schema>>>,
    writable: bool,
) -> BTreeSet<String> {
    let mut fields = BTreeSet::new();
    let mut pending = vec![schema];
    let mut seen = BTreeSet::new();
    while let Some(schema) = pending.pop() {
        match schema {
            RefOr::Ref(reference) => {
                if let Some(found) = reference
                    .ref_location
                    .strip_prefix("#/components/schemas/")
                    .filter(|name| seen.insert(name.to_string()))
                    .and_then(|name| schemas?.get(name))
                {
                    pending.push(found);
                }
            }
            RefOr::T(Schema::AllOf(all)) => pending.extend(all.items.iter()),
            RefOr::T(Schema::Object(object)) => {
                for (name, property) in &object.properties {
                    let read_only = matches!(
                        property,
                        RefOr::T(Schema::Object(p)) if p.read_only == Some(true)
                    );
                    if !(writable && read_only) {
                        fields.insert(name.clone());
                    }
                }
            }
            _ => {}
        }
    }
    fields
}

/// The record's field a path id is (`deviceId` → `DeviceId`; `itineraryId` → `Id`;
/// `externalLinkId` → `LinkId`), if `fields` has one.
fn id_field<'a>(id: &str, fields: &'a BTreeSet<String>) -> Option<&'a str> {
    let mut chars = id.chars();
    let pascal = chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default();
    fields
        .get(&pascal)
        .or_else(|| fields.get("Id"))
        .or_else(|| {
            fields
                .iter()
                .find(|f| f.ends_with("Id") && pascal.ends_with(f.as_str()))
        })
        .map(String::as_str)
}
