//! Reports: `GET /V2/{t}/reports` and the seven report endpoints (docs/reports.md,
//! docs/reports.md). The handler reads the parameters, resolves the window in the
//! tenant's calendar and the devices in scope, then streams the rows the report service
//! computes in the negotiated format (`report_output`).

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

mod output;
mod params;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::TenantScope;
use super::negotiate::{RecordList, Representable, stream_format};

use super::{AppState, TenantParam};
use crate::domain::report::collection::Collection;
use crate::domain::report::rows::{
    AlertRow, OverviewRow, ReportRow, SummaryRow, UtilisationRow, ViolationRow,
};
use crate::domain::report::{Calendar, ReportKind};
use crate::domain::time::{now, resolve_time_zone};
use crate::domain::user::UserRef;
use crate::services::reports::{ReportRequest, ReportService, Rows, Scope};
use crate::store::StoreError;
use params::{CommonParams, OverviewParams, ReportParams, SummaryParams, ViolationParams};

/// A report's name, as `GET /reports` lists it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(transparent)]
pub struct ReportName(String);

impl Representable for ReportName {
    const NAME: &'static str = "ReportName";
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_reports))
        .routes(routes!(alerts_report))
        .routes(routes!(asset_utilisation_report))
        .routes(routes!(devices_overview_report))
        .routes(routes!(driver_performance_summary_report))
        .routes(routes!(driver_behaviour_report))
        .routes(routes!(driver_performance_detailed_report))
        .routes(routes!(driver_behaviour_violation_report))
}

/// The reports enabled for the tenant: all seven, unless the tenant property
/// `EnabledReports` (comma-separated names) narrows them.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports", tag = "Reports", params(TenantParam),
    responses((status = 200, body = [String]), (status = 404, body = Problem)))]
async fn list_reports(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<ReportName>> {
    let tenant = app
        .store
        .get_tenant(scope.code())
        .await?
        .ok_or(ApiError::NotFound)?;
    let enabled = ReportKind::enabled(tenant.properties.get("EnabledReports").map(String::as_str));
    Ok(RecordList(
        enabled
            .into_iter()
            .map(|k| ReportName(k.name().to_string()))
            .collect(),
    ))
}

/// Everything a report needs before its first row: 404 when the report is not enabled,
/// 400 for any bad parameter, then the request resolved.
async fn prepare(
    app: &AppState,
    scope: &TenantScope,
    kind: ReportKind,
    uri: &Uri,
) -> ApiResult<ReportRequest> {
    let tenant = app
        .store
        .get_tenant(scope.code())
        .await?
        .ok_or(ApiError::NotFound)?;
    let enabled = ReportKind::enabled(tenant.properties.get("EnabledReports").map(String::as_str));
    if !enabled.contains(&kind) {
        return Err(ApiError::NotFound);
    }
    let params = ReportParams::parse(uri.query().unwrap_or_default())?;
    let calendar = Calendar::new(
        tenant.time_zone_id.as_deref().and_then(resolve_time_zone),
        tenant
            .properties
            .get("FinancialYearStartMonth")
            .map(String::as_str),
    );
    let now = now();
    let window = params.window(&calendar, now)?;
    let collection = match params.collection_id {
        Some(id) => Some(collection_devices(app, scope, id).await?),
        None => None,
    };
    // A collection spans tenants: its devices are taken from the path tenant's whole
    // subtree (never beyond it, and so never beyond the caller's).
    let scope = if params.subtenants || collection.is_some() {
        Scope::Subtree(scope.tenant.path.clone())
    } else {
        Scope::Tenant(scope.code().to_string())
    };
    Ok(ReportRequest {
        scope,
        filter: params.filter,
        collection,
        window,
        calendar,
        now,
        last_time_hours: params.last_time_hours,
        group_by: params.group_by,
        violation_types: params.violation_types,
    })
}

/// The devices of a collection the caller may use: one of a tenant within the caller's
/// scope, or named in the caller's `CrossTenantCollections`.
async fn collection_devices(
    app: &AppState,
    scope: &TenantScope,
    id: i64,
) -> ApiResult<Vec<String>> {
    let caller = &scope.caller;
    let user = match caller.user_id() {
        Some(id) => {
            app.store
                .get_user(&caller.tenant_code, &UserRef::Id(id), false)
                .await?
        }
        None => None,
    };
    let named = user
        .map(|u| Collection::ids_in(u.user.cross_tenant_collections.as_deref()))
        .unwrap_or_default()
        .contains(&id.to_string());
    let collection = app
        .store
        .usable_collection(&caller.tenant_path, id, named)
        .await?
        .ok_or_else(|| ApiError::field("CollectionId", "is not a collection you can use"))?;
    // Its devices are taken by id from the path tenant's subtree: an id two tenants there
    // share names no one device (409, from the store).
    app.store
        .devices_in_subtree(&scope.tenant.path, &collection.device_ids)
        .await?;
    Ok(collection.device_ids)
}

/// Starts the report and answers with its rows as they come.
async fn run<R, F, Fut>(
    app: AppState,
    scope: TenantScope,
    kind: ReportKind,
    uri: Uri,
    headers: HeaderMap,
    report: F,
) -> ApiResult<Response>
where
    R: ReportRow,
    F: FnOnce(
            ReportService,
            ReportRequest,
            Vec<crate::store::reports::ReportDevice>,
            Rows<R>,
        ) -> Fut
        + Send
        + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let request = prepare(&app, &scope, kind, &uri).await?;
    let devices = app.reports.devices(&request).await?;
    let (rows, received) = futures::channel::mpsc::channel::<Result<R, StoreError>>(256);
    let mut guard = rows.clone();
    let service = app.reports.clone();
    tokio::spawn(async move {
        let work = tokio::spawn(report(service, request, devices, rows));
        if work.await.is_err() {
            use futures::SinkExt;
            let _ = guard
                .send(Err(StoreError::Unavailable("the report failed".into())))
                .await;
        }
    });
    Ok(output::stream(stream_format(&headers), received))
}

/// One report endpoint: its handler calls `run` with the service method.
macro_rules! report_handler {
    ($name:ident, $kind:ident, $row:ty, $method:ident) => {
        async fn $name(
            scope: TenantScope,
            State(app): State<AppState>,
            uri: Uri,
            headers: HeaderMap,
        ) -> ApiResult<Response> {
            run::<$row, _, _>(
                app,
                scope,
                ReportKind::$kind,
                uri,
                headers,
                |service, request, devices, rows| async move {
                    service.$method(&request, devices, rows).await
                },
            )
            .await
        }
    };
}

/// One row per alert raised in the window (notifications with RaiseAlert), with its
/// position, local start time and geofences.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/AlertsReport", tag = "Reports",
    params(TenantParam, CommonParams),
    responses((status = 200, body = [AlertRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn alerts_report(
    scope: TenantScope,
    state: State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    alerts(scope, state, uri, headers).await
}
report_handler!(alerts, AlertsReport, AlertRow, alerts);

/// Per device: trips (movement separated by stops of at least 5 minutes), distance,
/// driving time and the last odometer reading in the window.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/AssetUtilisationReport", tag = "Reports",
    params(TenantParam, CommonParams),
    responses((status = 200, body = [UtilisationRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn asset_utilisation_report(
    scope: TenantScope,
    state: State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    asset_utilisation(scope, state, uri, headers).await
}
report_handler!(
    asset_utilisation,
    AssetUtilisationReport,
    UtilisationRow,
    asset_utilisation
);

/// Per device: where and when it last reported (its current state; the window is
/// checked but the state is now's), filtered by `LastTimeHoursFilter`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DevicesOverviewReport", tag = "Reports",
    params(TenantParam, CommonParams, OverviewParams),
    responses((status = 200, body = [OverviewRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn devices_overview_report(
    scope: TenantScope,
    state: State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    devices_overview(scope, state, uri, headers).await
}
report_handler!(
    devices_overview,
    DevicesOverviewReport,
    OverviewRow,
    devices_overview
);

/// Scores by driver (default) or vehicle: 100 − weighted violations per 100 km.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverPerformanceSummaryReport", tag = "Reports",
    params(TenantParam, CommonParams, SummaryParams),
    responses((status = 200, body = [SummaryRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_performance_summary_report(
    scope: TenantScope,
    state: State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    performance_summary(scope, state, uri, headers).await
}
report_handler!(
    performance_summary,
    DriverPerformanceSummaryReport,
    SummaryRow,
    driver_summary
);

/// The same rows as DriverPerformanceSummaryReport.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverBehaviourReport", tag = "Reports",
    params(TenantParam, CommonParams, SummaryParams),
    responses((status = 200, body = [SummaryRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_behaviour_report(
    scope: TenantScope,
    state: State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    behaviour_summary(scope, state, uri, headers).await
}
report_handler!(
    behaviour_summary,
    DriverBehaviourReport,
    SummaryRow,
    driver_summary
);

/// Every violation in the window with its limit, recorded value, duration and place.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverPerformanceDetailedReport", tag = "Reports",
    params(TenantParam, CommonParams, ViolationParams),
    responses((status = 200, body = [ViolationRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_performance_detailed_report(
    scope: TenantScope,
    state: State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    performance_detailed(scope, state, uri, headers).await
}
report_handler!(
    performance_detailed,
    DriverPerformanceDetailedReport,
    ViolationRow,
    violations
);

/// The same rows as DriverPerformanceDetailedReport.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverBehaviourViolationReport", tag = "Reports",
    params(TenantParam, CommonParams, ViolationParams),
    responses((status = 200, body = [ViolationRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_behaviour_violation_report(
    scope: TenantScope,
    state: State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    behaviour_violations(scope, state, uri, headers).await
}
report_handler!(
    behaviour_violations,
    DriverBehaviourViolationReport,
    ViolationRow,
    violations
);
