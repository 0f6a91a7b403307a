//! Escalation policies: `/V2/{tenantVarCode}/escalationpolicies` and
//! `/escalationpolicies/{escalationPolicyId}` (issue 45 §3; docs/monitoring.md).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, Representable};
use super::paging::Page;
use super::patch::apply_patch;
use super::records::escalation_policy::EscalationPolicyRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::escalation_policy::EscalationPolicy;
use crate::domain::ids::EscalationPolicyId;
use crate::domain::shared::ensure_owner;
use crate::store::EscalationPolicyWrite;

impl Representable for EscalationPolicy {
    const NAME: &'static str = "EscalationPolicy";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_policies, create_policy))
        .routes(routes!(
            get_policy,
            update_policy,
            patch_policy,
            delete_policy
        ))
}

/// Most policies one page returns (and the default).
const MAX_PAGE_SIZE: u32 = 1000;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct PolicyPath {
    tenantVarCode: String,
    /// Escalation policy id (numeric string).
    escalationPolicyId: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListPoliciesQuery {
    /// Include every subtenant's own policies (each names its `TenantCode`).
    #[serde(default)]
    subtenants: bool,
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

/// A policy visible from the path tenant: its own, or an ancestor's marked
/// `AppliesToSubtenants`. Anything else (a non-numeric id too) is a 404.
async fn find(app: &AppState, scope: &TenantScope, raw: &str) -> ApiResult<EscalationPolicy> {
    let id: EscalationPolicyId = raw.parse().map_err(|_| ApiError::NotFound)?;
    app.store
        .get_escalation_policy(&scope.tenant, id)
        .await?
        .ok_or(ApiError::NotFound)
}

/// A policy the path tenant may change: one it owns (inherited ones: 403).
async fn find_owned(app: &AppState, scope: &TenantScope, raw: &str) -> ApiResult<EscalationPolicy> {
    let found = find(app, scope, raw).await?;
    ensure_owner(&found.tenant_code, scope.code(), "escalation policy")?;
    Ok(found)
}

/// Checks `incoming` and replaces policy `id` with it (PUT and PATCH).
async fn replace(
    app: &AppState,
    scope: &TenantScope,
    id: EscalationPolicyId,
    incoming: EscalationPolicyRecord,
    if_match: Option<&str>,
) -> ApiResult<EmptyOk> {
    let (fields, references) = incoming.validated()?;
    let write = EscalationPolicyWrite {
        node: &scope.tenant,
        fields: &fields,
        references: &references,
    };
    app.store
        .update_escalation_policy(id, write, if_match, &scope.audit())
        .await?;
    Ok(EmptyOk)
}

/// List escalation policies.
///
/// The tenant's own and, read-only, those its ancestors share (`AppliesToSubtenants`);
/// with `subtenants=true` also every subtenant's own. In id order, paged with
/// `X-CONTINUATIONTOKEN`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/escalationpolicies", tag = "Escalation policies",
    params(TenantParam, ListPoliciesQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [EscalationPolicyRecord], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more policies exist"))),
        (status = 400, description = "A bad page size or continuation token", body = Problem),
        (status = 404, body = Problem)))]
async fn list_policies(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListPoliciesQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<EscalationPolicy>> {
    let listing = format!("escalationpolicies:{}:{}", scope.code(), query.subtenants);
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .list_escalation_policies(
            &scope.tenant,
            query.subtenants,
            request.after.unwrap_or(0),
            request.size + 1,
        )
        .await?;
    Ok(Page::from_fetched(
        fetched,
        request,
        &app.paging,
        &listing,
        |p| p.escalation_policy_id.get(),
    ))
}

/// Create an escalation policy.
///
/// 1 to 10 steps, `AfterMinutes` 0 to 1440 and strictly increasing; each step's
/// `Recipients` (at most 100) are checked as a notification's (a list or contact must be
/// the tenant's own or shared with it), `Instructions` at most 2000 characters; a step
/// has recipients, instructions or both. Names are unique within a tenant (409).
/// `IsTenantDefault` unmarks the tenant's previous default. Answers 200 with `Location`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/escalationpolicies", tag = "Escalation policies",
    params(TenantParam), request_body = EscalationPolicyRecord,
    responses((status = 200, description = "Created; Location names the new policy"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem)))]
async fn create_policy(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(incoming): Body<EscalationPolicyRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageConfiguration)?;
    let (fields, references) = incoming.validated()?;
    let write = EscalationPolicyWrite {
        node: &scope.tenant,
        fields: &fields,
        references: &references,
    };
    let id = app
        .store
        .create_escalation_policy(write, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/escalationpolicies/{id}",
        scope.code()
    )))
}

/// Get an escalation policy.
///
/// Own or inherited. The `ETag` header carries its version.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/escalationpolicies/{escalationPolicyId}", tag = "Escalation policies",
    params(PolicyPath),
    responses((status = 200, body = EscalationPolicyRecord, headers(("ETag" = String, description = "Record version"))),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, body = Problem)))]
async fn get_policy(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<PolicyPath>,
) -> ApiResult<Record<EscalationPolicy>> {
    Ok(Record(find(&app, &scope, &path.escalationPolicyId).await?))
}

/// Replace an escalation policy.
///
/// Only the owning tenant may (same rules as POST); an inherited policy answers 403.
/// Turning `AppliesToSubtenants` off while a subtenant's notification names the policy
/// is a 409 naming them. `If-Match` is honoured (412).
#[utoipa::path(put, path = "/V2/{tenantVarCode}/escalationpolicies/{escalationPolicyId}", tag = "Escalation policies",
    params(PolicyPath), request_body = EscalationPolicyRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn update_policy(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<PolicyPath>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<EscalationPolicyRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let existing = find_owned(&app, &scope, &path.escalationPolicyId).await?;
    replace(
        &app,
        &scope,
        existing.escalation_policy_id,
        incoming,
        if_match.as_deref(),
    )
    .await
}

/// Patch an escalation policy with a JSON Patch.
///
/// Applied to the policy's JSON, then checked like a PUT; read-only fields
/// (`EscalationPolicyId`, `TenantCode`, `Timestamp`) cannot be patched. Without
/// `If-Match` the patch applies to the version it was computed on (412 if it moved).
#[utoipa::path(patch, path = "/V2/{tenantVarCode}/escalationpolicies/{escalationPolicyId}", tag = "Escalation policies",
    params(PolicyPath),
    request_body(content = Vec<super::openapi::PatchOperation>, content_type = "application/json-patch+json"),
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn patch_policy(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<PolicyPath>,
    IfMatch(if_match): IfMatch,
    Body(patch): Body<json_patch::Patch>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let current = find_owned(&app, &scope, &path.escalationPolicyId).await?;
    let expected = if_match.unwrap_or_else(|| current.etag.clone());
    let patched = apply_patch(&EscalationPolicyRecord::from(&current), &patch)?;
    replace(
        &app,
        &scope,
        current.escalation_policy_id,
        patched,
        Some(&expected),
    )
    .await
}

/// Delete an escalation policy.
///
/// Only the owning tenant may (inherited: 403). A policy a notification names (in any
/// tenant) is a 409 naming the notifications. `If-Match` is honoured (412).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/escalationpolicies/{escalationPolicyId}", tag = "Escalation policies",
    params(PolicyPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem),
        (status = 412, body = Problem)))]
async fn delete_policy(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<PolicyPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let existing = find_owned(&app, &scope, &path.escalationPolicyId).await?;
    app.store
        .delete_escalation_policy(
            scope.code(),
            existing.escalation_policy_id,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
