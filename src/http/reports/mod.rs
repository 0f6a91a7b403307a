//! Reports: `GET /V2/{t}/reports` and the eight report endpoints (docs/reports.md,
//! docs/reports.md). The handler reads the parameters, resolves the window in the
//! tenant's calendar and the devices in scope, then streams the rows the report service
//! computes in the negotiated format (`report_output`).

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use futures::StreamExt;
use serde::Serialize;
use std::future::Future;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

mod output;
mod params;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::TenantScope;
use super::negotiate::{RecordList, Representable, StreamFormat, stream_format};
use super::request_context::current_request_id;

use super::{AppState, TenantParam};
use crate::domain::place::ReaderUnits;
use crate::domain::report::collection::Collection;
use crate::domain::report::rows::{
    AlertRow, MonitoringRow, OverviewRow, ReportRow, SummaryRow, UtilisationRow, ViolationRow,
};
use crate::domain::report::{Calendar, ReportKind};
use crate::domain::time::{now, resolve_time_zone};
use crate::domain::user::UserRef;
use crate::services::reports::{self, ReportRequest, ReportRows, ReportService, Rows};
use crate::store::reports::ReportDevice;
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
        .routes(routes!(monitoring_report))
}

/// The reports enabled for the tenant: all eight, unless the tenant property
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
    let units = reader_units(app, scope, &tenant.properties).await?;
    // A collection spans tenants: its devices are taken from the path tenant's whole
    // subtree (never beyond it, and so never beyond the caller's).
    Ok(ReportRequest {
        tenants: scope.tenants(params.subtenants || collection.is_some()),
        filter: params.filter,
        collection,
        window,
        calendar,
        now,
        last_time_hours: params.last_time_hours,
        group_by: params.group_by,
        violation_types: params.violation_types,
        distance_units: units.distance,
    })
}

/// How the caller reads positions and distances: a user's profile, else the tenant's
/// defaults (a token's caller has no profile).
async fn reader_units(
    app: &AppState,
    scope: &TenantScope,
    properties: &std::collections::BTreeMap<String, String>,
) -> ApiResult<ReaderUnits> {
    let tenant = ReaderUnits::of_tenant(properties);
    let caller = &scope.caller;
    let Some(id) = caller.user() else {
        return Ok(tenant);
    };
    let profile = app
        .store
        .get_profile(&caller.tenant_code, &UserRef::Id(id))
        .await?;
    Ok(profile.map_or(tenant, |(_, p)| ReaderUnits::of_user(&p, tenant)))
}

/// The devices of a collection the caller may use: one of a tenant within the caller's
/// scope, or named in the caller's `CrossTenantCollections`.
async fn collection_devices(
    app: &AppState,
    scope: &TenantScope,
    id: i64,
) -> ApiResult<Vec<String>> {
    let caller = &scope.caller;
    let user = match caller.user() {
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

/// What every report endpoint does: prepares the request, selects its devices, starts
/// `report` and answers with its rows as they come. A report that fails before its first
/// row is answered 500 naming the report; one that fails later cuts its body off.
async fn run_report<R, F, Fut>(
    app: AppState,
    scope: TenantScope,
    kind: ReportKind,
    uri: Uri,
    headers: HeaderMap,
    report: F,
) -> ApiResult<Response>
where
    R: ReportRow,
    F: FnOnce(ReportService, ReportRequest, Vec<ReportDevice>, Rows<R>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let request = prepare(&app, &scope, kind, &uri).await?;
    let devices = app.reports.devices(&request).await?;
    let service = app.reports.clone();
    let rows = reports::start(|rows| report(service, request, devices, rows));
    answer(kind, stream_format(&headers), rows).await
}

/// Waits for the report's first row, so a report failing at once is answered as a
/// failure rather than as a 200 cut short, then streams the rest.
async fn answer<R: ReportRow>(
    kind: ReportKind,
    format: StreamFormat,
    mut rows: ReportRows<R>,
) -> ApiResult<Response> {
    let first = match rows.next().await {
        Some(Ok(row)) => Some(row),
        Some(Err(failure)) => {
            return Err(ApiError::ReportFailed {
                report: kind.name(),
                failure,
            });
        }
        None => None,
    };
    Ok(output::stream(
        kind,
        format,
        first,
        rows,
        current_request_id(),
    ))
}

/// One row per alert raised in the window (notifications with RaiseAlert), with its
/// position, local start time and geofences.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/AlertsReport", tag = "Reports",
    params(TenantParam, CommonParams),
    responses((status = 200, body = [AlertRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn alerts_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::AlertsReport;
    run_report(app, scope, kind, uri, headers, ReportService::alerts).await
}

/// Per device: trips (movement separated by stops of at least 5 minutes), distance,
/// driving time and the last odometer reading in the window.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/AssetUtilisationReport", tag = "Reports",
    params(TenantParam, CommonParams),
    responses((status = 200, body = [UtilisationRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn asset_utilisation_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::AssetUtilisationReport;
    let report = ReportService::asset_utilisation;
    run_report(app, scope, kind, uri, headers, report).await
}

/// Per device: where and when it last reported (its current state; the window is
/// checked but the state is now's), filtered by `LastTimeHoursFilter`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DevicesOverviewReport", tag = "Reports",
    params(TenantParam, CommonParams, OverviewParams),
    responses((status = 200, body = [OverviewRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn devices_overview_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::DevicesOverviewReport;
    let report = ReportService::devices_overview;
    run_report(app, scope, kind, uri, headers, report).await
}

/// Scores by driver (default) or vehicle: 100 − weighted violations per 100 km.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverPerformanceSummaryReport", tag = "Reports",
    params(TenantParam, CommonParams, SummaryParams),
    responses((status = 200, body = [SummaryRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_performance_summary_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::DriverPerformanceSummaryReport;
    let report = ReportService::driver_summary;
    run_report(app, scope, kind, uri, headers, report).await
}

/// The same rows as DriverPerformanceSummaryReport.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverBehaviourReport", tag = "Reports",
    params(TenantParam, CommonParams, SummaryParams),
    responses((status = 200, body = [SummaryRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_behaviour_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::DriverBehaviourReport;
    let report = ReportService::driver_summary;
    run_report(app, scope, kind, uri, headers, report).await
}

/// Every violation in the window with its limit, recorded value, duration and place.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverPerformanceDetailedReport", tag = "Reports",
    params(TenantParam, CommonParams, ViolationParams),
    responses((status = 200, body = [ViolationRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_performance_detailed_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::DriverPerformanceDetailedReport;
    let report = ReportService::violations;
    run_report(app, scope, kind, uri, headers, report).await
}

/// The same rows as DriverPerformanceDetailedReport.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/DriverBehaviourViolationReport", tag = "Reports",
    params(TenantParam, CommonParams, ViolationParams),
    responses((status = 200, body = [ViolationRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn driver_behaviour_violation_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::DriverBehaviourViolationReport;
    let report = ReportService::violations;
    run_report(app, scope, kind, uri, headers, report).await
}

/// Lone-worker monitoring per person (the session's user; sessions that watched no user:
/// a row per device): sessions overlapping the window, minutes monitored in it, check-ins
/// made and missed, sessions overdue, alerts during the sessions (docs/monitoring.md).
/// `UserIds` names the sessions' people, not the devices' users now.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/reports/MonitoringReport", tag = "Reports",
    params(TenantParam, CommonParams),
    responses((status = 200, body = [MonitoringRow]), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem)))]
async fn monitoring_report(
    scope: TenantScope,
    State(app): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let kind = ReportKind::MonitoringReport;
    let mut request = prepare(&app, &scope, kind, &uri).await?;
    // The devices are selected by every other filter; the people by the sessions.
    let people = std::mem::take(&mut request.filter.user_ids);
    let devices = app.reports.devices(&request).await?;
    request.filter.user_ids = people;
    let service = app.reports.clone();
    let rows = reports::start(|rows| service.monitoring(request, devices, rows));
    answer(kind, stream_format(&headers), rows).await
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;
    use futures::SinkExt;
    use serde_json::Value;

    use super::*;

    async fn body_of(response: Response) -> Result<Vec<u8>, axum::Error> {
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .map(|bytes| bytes.to_vec())
    }

    #[tokio::test]
    async fn a_report_that_panics_at_once_is_answered_as_a_failed_report() {
        let rows = reports::start::<AlertRow, _, _>(|_rows| async {
            panic!("the computation broke");
        });
        let failure = answer(ReportKind::AlertsReport, StreamFormat::Csv, rows)
            .await
            .expect_err("a failed report");
        let response = failure.into_response();
        assert_eq!(response.status(), 500);
        let body = body_of(response).await.expect("a problem");
        let problem: Value = serde_json::from_slice(&body).expect("problem json");
        assert_eq!(problem["code"], "report_failed");
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("AlertsReport"), "{problem}");
    }

    #[tokio::test]
    async fn a_report_that_fails_to_read_at_once_is_answered_as_a_failed_report() {
        let rows = reports::start::<AlertRow, _, _>(|mut rows| async move {
            let failure = crate::store::StoreError::Corrupt("a row is unreadable".into());
            let _ = rows.send(Err(failure.into())).await;
        });
        let failure = answer(ReportKind::AlertsReport, StreamFormat::Csv, rows)
            .await
            .expect_err("a failed report");
        assert!(matches!(
            failure,
            ApiError::ReportFailed {
                report: "AlertsReport",
                failure: reports::ReportFailure::Store(_),
            }
        ));
    }

    #[tokio::test]
    async fn a_report_that_panics_after_its_first_row_cuts_its_body_off() {
        let rows = reports::start::<AlertRow, _, _>(|mut rows| async move {
            let _ = rows.send(Ok(AlertRow::default())).await;
            panic!("the computation broke");
        });
        let response = answer(ReportKind::AlertsReport, StreamFormat::Csv, rows)
            .await
            .expect("the report started");
        assert_eq!(response.status(), 200);
        assert!(body_of(response).await.is_err(), "the body is cut off");
    }

    #[tokio::test]
    async fn a_report_without_rows_is_a_whole_empty_list() {
        let rows = reports::start::<AlertRow, _, _>(|_rows| async {});
        let json = StreamFormat::Json("application/json");
        let response = answer(ReportKind::AlertsReport, json, rows)
            .await
            .expect("the report ran");
        assert_eq!(body_of(response).await.expect("a whole body"), b"[]");
    }
}
