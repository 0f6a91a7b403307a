//! Report parameters: every bad input is a 400 naming its parameter, on every report;
//! every IntervalType value answers; dates with and without offsets.

use serde_json::json;

use super::{DAY, device, ids, known_tracks, report};
use crate::backend_tests;
use crate::common::{TestApp, assert_problem, problem_fields};

backend_tests!(
    dates_are_required_without_an_interval,
    bad_values_are_400_naming_them,
    every_interval_type_answers,
    dates_without_offsets_are_tenant_local,
);

const REPORTS: [&str; 8] = [
    "AlertsReport",
    "AssetUtilisationReport",
    "DevicesOverviewReport",
    "DriverPerformanceSummaryReport",
    "DriverBehaviourReport",
    "DriverPerformanceDetailedReport",
    "DriverBehaviourViolationReport",
    "MonitoringReport",
];

async fn fields(app: &TestApp, name: &str, query: &str) -> Vec<String> {
    let response = app
        .admin
        .get(&format!("/V2/1000/reports/{name}?{query}"))
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    problem_fields(&problem)
}

async fn dates_are_required_without_an_interval(app: TestApp) {
    for name in REPORTS {
        assert_eq!(
            fields(&app, name, "").await,
            ["DateFrom", "DateTo"],
            "{name}"
        );
        assert_eq!(
            fields(&app, name, "DateFrom=2026-03-01T00:00:00Z").await,
            ["DateTo"]
        );
        assert_eq!(
            fields(&app, name, "DateTo=2026-03-01T00:00:00Z").await,
            ["DateFrom"]
        );
        assert_eq!(
            fields(
                &app,
                name,
                "DateFrom=2026-03-02T00:00:00Z&DateTo=2026-03-01T00:00:00Z"
            )
            .await,
            ["DateFrom", "DateTo"],
            "DateFrom after DateTo"
        );
    }
}

async fn bad_values_are_400_naming_them(app: TestApp) {
    let cases = [
        ("IntervalType=last-2-days", "IntervalType"),
        ("IntervalType=yesterday&DeviceStatus=Lost", "DeviceStatus"),
        ("IntervalType=yesterday&GroupBy=Fleet", "GroupBy"),
        (
            "IntervalType=yesterday&DrivingViolationTypes=Speeding,Drifting",
            "DrivingViolationTypes",
        ),
        (
            "IntervalType=yesterday&DrivingViolationTypes=Speeding&DrivingViolationTypes=Nap",
            "DrivingViolationTypes",
        ),
        ("IntervalType=yesterday&Subtenants=maybe", "Subtenants"),
        ("IntervalType=yesterday&GroupIds=1,x", "GroupIds"),
        ("IntervalType=yesterday&UserIds=y", "UserIds"),
        (
            "IntervalType=yesterday&LastTimeHoursFilter=2.5",
            "LastTimeHoursFilter",
        ),
        ("IntervalType=yesterday&CollectionId=abc", "CollectionId"),
        ("IntervalType=yesterday&CollectionId=999", "CollectionId"),
        ("DateFrom=yesterday&DateTo=2026-03-01", "DateFrom"),
        ("DateFrom=2026-03-01&DateTo=31/03/2026", "DateTo"),
    ];
    for name in REPORTS {
        for (query, field) in cases {
            assert_eq!(fields(&app, name, query).await, [field], "{name}?{query}");
        }
    }
    // All at once: every one named.
    let all = fields(
        &app,
        "DriverBehaviourReport",
        "IntervalType=x&DeviceStatus=x&GroupBy=x&DrivingViolationTypes=x",
    )
    .await;
    assert_eq!(
        all,
        [
            "DeviceStatus",
            "IntervalType",
            "GroupBy",
            "DrivingViolationTypes"
        ]
    );
    // Good values pass, names and values ignoring case.
    report(
        &app,
        "1000",
        "DriverBehaviourReport",
        "intervaltype=YESTERDAY&devicestatus=active&groupby=vehicle&drivingviolationtypes=braking&Subtenants=TRUE",
    )
    .await;
}

async fn every_interval_type_answers(app: TestApp) {
    device(&app, "1000", "now-1", json!({})).await;
    let sent = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60);
    let far = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(30);
    super::post(
        &app,
        "1000",
        "now-1",
        &json!([
            {"MessageType": "AutomaticPositionReport", "SequenceNumber": 1, "SentFromDevice": sent.to_string(),
             "Position": {"Latitude": 51.0, "Longitude": -1.0}},
            {"MessageType": "AutomaticPositionReport", "SequenceNumber": 2, "SentFromDevice": far.to_string(),
             "Position": {"Latitude": 51.1, "Longitude": -1.0}}
        ]),
    )
    .await;
    let this = [
        "this-week",
        "this-month",
        "this-quarter",
        "this-year",
        "this-financial-year",
    ];
    let last = [
        "yesterday",
        "last-week",
        "last-week-sunday",
        "last-7-days",
        "last-10-days",
        "last-30-days",
        "last-4-weeks",
        "last-12-weeks",
        "last-3-months",
        "last-6-months",
        "last-12-months",
        "last-month",
        "last-quarter",
        "last-year",
        "last-financial-year",
    ];
    // The last minute's trip is in every this-* window and in no last-* window.
    for interval in this {
        let rows = report(
            &app,
            "1000",
            "AssetUtilisationReport",
            &format!("IntervalType={interval}"),
        )
        .await;
        assert_eq!(rows[0]["Trips"], 1, "{interval}");
    }
    for interval in last {
        let rows = report(
            &app,
            "1000",
            "AssetUtilisationReport",
            &format!("IntervalType={interval}"),
        )
        .await;
        assert_eq!(rows[0]["Trips"], 0, "{interval}");
    }
    // IntervalType wins over DateFrom/DateTo.
    let rows = report(
        &app,
        "1000",
        "AssetUtilisationReport",
        "IntervalType=yesterday&DateFrom=2000-01-01&DateTo=2100-01-01",
    )
    .await;
    assert_eq!(rows[0]["Trips"], 0);
}

async fn dates_without_offsets_are_tenant_local(app: TestApp) {
    known_tracks(&app).await;
    // In New York 08:00Z is 03:00 local: a local window 03:00–03:05 holds the first 5 minutes.
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "TimeZoneId": "America/New_York"}),
        )
        .await;
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let rows = report(
        &app,
        "1000",
        "AssetUtilisationReport",
        "DateFrom=2026-03-02T03:00:00&DateTo=2026-03-02T03:05:00&DeviceIds=van-a",
    )
    .await;
    assert_eq!(rows[0]["DurationSec"], 240);
    // A date alone: the whole local day.
    let rows = report(
        &app,
        "1000",
        "AssetUtilisationReport",
        "DateFrom=2026-03-02&DateTo=2026-03-02",
    )
    .await;
    assert_eq!(ids(&rows), ["van-a", "van-b", "van-c"]);
    assert_eq!(rows[0]["Trips"], 1);
    // The UTC day is unchanged.
    assert_eq!(
        report(&app, "1000", "AssetUtilisationReport", DAY).await[0]["Trips"],
        1
    );
    // Offsets are honoured as given.
    let rows = report(
        &app,
        "1000",
        "AssetUtilisationReport",
        "DateFrom=2026-03-02T09:00:00%2B01:00&DateTo=2026-03-02T09:05:00%2B01:00&DeviceIds=van-a",
    )
    .await;
    assert_eq!(rows[0]["DurationSec"], 240);
}
