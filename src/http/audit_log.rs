//! The audit log: `GET /V2/{t}/auditlog` (Administrators), and what a handler hands an
//! audited write (`TenantScope::audit`): who the caller is and where it called from.

use axum::extract::State;
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiResult, Problem};
use super::extract::{Query, TenantScope};
use super::negotiate::Representable;
use super::paging::Page;
use super::{AppState, TenantParam};
use crate::auth::Principal;
use crate::domain::access::Permission;
use crate::domain::audit::{Actor, Audit, AuditAction, AuditEntry, ResourceType};
use crate::store::AuditQuery;

/// Most entries one page returns (and the default).
pub const MAX_PAGE_SIZE: u32 = 1000;

impl Representable for AuditEntry {
    const NAME: &'static str = "AuditEntry";
}

/// Who the audit log names for this caller (a username, or `token:<Name>`): the one
/// place that decides it.
fn actor_of(caller: &Principal) -> Actor {
    Actor::named(caller.actor_name())
}

impl TenantScope {
    /// The audit context of a write this request makes in the path tenant.
    pub fn audit(&self) -> Audit {
        Audit::new(actor_of(&self.caller), self.caller.client, &self.tenant)
    }
}

/// The audit context of something a caller does outside any path tenant (a logout):
/// listed in the caller's home tenant.
pub fn at_home(caller: &Principal) -> Audit {
    Audit::in_tenant(
        actor_of(caller),
        caller.client,
        &caller.tenant_code,
        &caller.tenant_path,
    )
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_audit_log))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct AuditLogQuery {
    /// Include the entries of every subtenant.
    #[serde(default)]
    subtenants: bool,
    /// Entries at or after this time.
    #[param(value_type = Option<String>, format = DateTime)]
    from: Option<jiff::Timestamp>,
    /// Entries before this time (exclusive).
    #[param(value_type = Option<String>, format = DateTime)]
    to: Option<jiff::Timestamp>,
    /// Only this actor: a username, or `token:<Name>`.
    actor: Option<String>,
    /// Only this action.
    #[param(inline)]
    action: Option<AuditAction>,
    /// Only this kind of record.
    #[param(inline)]
    resource_type: Option<ResourceType>,
    /// At most 1,000 (the default).
    #[param(minimum = 1, maximum = 1000)]
    page_size: Option<u32>,
}

/// List the audit log, newest first, paged with `X-CONTINUATIONTOKEN`.
///
/// Administrators only. Logins and failed logins (with the client's address), every
/// configuration write, alert actions and delivery retries: who (a username, or
/// `token:<Name>`), when, from which address, what (`Action`, `ResourceType`,
/// `ResourceId`) — never a password, token, secret or message body. MO messages are not
/// audited. With `subtenants=true` the entries of every subtenant are included.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/auditlog", tag = "Audit log",
    params(TenantParam, AuditLogQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [AuditEntry], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more entries exist"))),
        (status = 400, description = "A bad filter, page size or continuation token", body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem)))]
async fn list_audit_log(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<AuditLogQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<AuditEntry>> {
    scope.require(Permission::ReadAuditLog)?;
    let listing = format!("auditlog:{}:{}", scope.code(), query.subtenants);
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let fetched = app
        .store
        .list_audit_log(&AuditQuery {
            tenants: scope.tenants(query.subtenants),
            from: query.from,
            to: query.to,
            actor: query.actor.as_deref().filter(|a| !a.is_empty()),
            action: query.action,
            resource_type: query.resource_type,
            before: request.after,
            limit: request.size + 1,
        })
        .await?;
    Ok(Page::from_fetched(
        fetched,
        request,
        &app.paging,
        &listing,
        |e| {
            e.audit_entry_id
                .as_deref()
                .and_then(|id| id.parse().ok())
                .unwrap_or(0)
        },
    ))
}
