//! Reports through HTTP: the known-answer tracks posted as MO messages and read back in
//! every report, the alerts and overview rows, the output formats, enabled reports. The
//! parameters and bad inputs are in `params.rs`; scope, filters and collections in
//! `scope.rs`; a report that fails in `failures.rs`; MonitoringReport in `monitoring.rs`.

mod addresses;
mod failures;
mod monitoring;
mod params;
mod scope;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::{raise, sos_setup};
use crate::backend_tests;
use crate::common::{TestApp, assert_not_found};

backend_tests!(
    known_tracks_end_to_end,
    violation_types_filter_rows_and_scores,
    messages_outside_the_window_never_count,
    driver_grouping,
    alerts_report_rows,
    devices_overview_rows,
    csv_and_xml,
    many_rows_stream_whole,
    long_tracks_are_read_in_chunks,
    enabled_reports,
);

/// A kilometre of latitude on the sphere the reports measure on.
const KM_LAT: f64 = 1.0 / 111.195;
pub const DAY: &str = "DateFrom=2026-03-02T00:00:00Z&DateTo=2026-03-03T00:00:00Z";

/// Registers a device of `tenant` with extra fields.
pub async fn device(app: &TestApp, tenant: &str, id: &str, extra: Value) {
    let mut body =
        json!({"DeviceId": id, "DeviceType": "InReach", "FriendlyName": format!("Unit {id}")});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create device {body}");
}

/// Position reports (no reported speed) at `minute` past 08:00 on 2 March 2026, `km`
/// north of (51, -1).
pub fn track(points: &[(f64, f64)]) -> Value {
    let start: jiff::Timestamp = "2026-03-02T08:00:00Z".parse().unwrap();
    Value::Array(
        points
            .iter()
            .enumerate()
            .map(|(i, (minute, km))| {
                let at = start + jiff::SignedDuration::from_secs_f64(minute * 60.0);
                json!({"MessageType": "AutomaticPositionReport", "SequenceNumber": i,
                       "SentFromDevice": at.to_string(),
                       "Position": {"Latitude": 51.0 + km * KM_LAT, "Longitude": -1.0}})
            })
            .collect(),
    )
}

pub async fn post(app: &TestApp, tenant: &str, device: &str, messages: &Value) {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices/{device}/momessages"),
            messages,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "post messages");
}

/// A report's rows (200 expected).
pub async fn report(app: &TestApp, tenant: &str, name: &str, query: &str) -> Vec<Value> {
    let rows = app
        .admin
        .get_json(&format!("/V2/{tenant}/reports/{name}?{query}"))
        .await;
    rows.as_array().expect("rows").clone()
}

pub fn ids(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["DeviceId"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The three tracks: 10 km at 60 km/h; the same with a 6-minute stop half way;
/// one minute at 130 km/h among minutes at 60.
pub(super) async fn known_tracks(app: &TestApp) {
    // A geofence around the point where van-c is found speeding.
    let response = app
        .admin
        .post(
            "/V2/1000/geofences",
            &json!({"Name": "Fast lane", "GeofenceType": "circle",
                    "CircleCentre": {"Lat": 51.0 + (3.0 + 130.0 / 60.0) * KM_LAT, "Lon": -1.0},
                    "CircleRadius": 300}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    device(app, "1000", "van-a", json!({})).await;
    device(app, "1000", "van-b", json!({})).await;
    device(app, "1000", "van-c", json!({})).await;
    let straight: Vec<_> = (0..=10).map(|m| (m as f64, m as f64)).collect();
    let mut messages = track(&straight);
    messages[10]["Properties"] = json!({"odometer": "12345.6"});
    post(app, "1000", "van-a", &messages).await;
    let mut stop: Vec<_> = (0..=5).map(|m| (m as f64, m as f64)).collect();
    stop.extend((6..=11).map(|m| (m as f64, 5.0)));
    stop.extend((12..=16).map(|m| (m as f64, (m - 6) as f64)));
    post(app, "1000", "van-b", &track(&stop)).await;
    let fast = 130.0 / 60.0;
    let mut speeding: Vec<_> = (0..=3).map(|m| (m as f64, m as f64)).collect();
    speeding.push((4.0, 3.0 + fast));
    speeding.extend((5..=7).map(|m| (m as f64, m as f64 - 1.0 + fast)));
    post(app, "1000", "van-c", &track(&speeding)).await;
}

async fn known_tracks_end_to_end(app: TestApp) {
    known_tracks(&app).await;
    let rows = report(&app, "1000", "AssetUtilisationReport", DAY).await;
    assert_eq!(ids(&rows), ["van-a", "van-b", "van-c"]);
    let (a, b, c) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(a["Trips"], 1);
    assert!(
        (a["DistanceKm"].as_f64().unwrap() - 10.0).abs() < 0.01,
        "{a}"
    );
    assert_eq!(a["DurationSec"], 600);
    assert_eq!(a["DurationString"], "00:10");
    assert_eq!(a["OdometerKm"], 12345.6);
    assert_eq!(a["DeviceFriendlyName"], "Unit van-a");
    assert_eq!(b["Trips"], 2, "a 6-minute stop splits the trip");
    assert_eq!(b["DurationSec"], 600);
    assert!((b["DistanceKm"].as_f64().unwrap() - 10.0).abs() < 0.01);
    assert!(b["OdometerKm"].is_null());
    assert_eq!(c["Trips"], 1);

    for name in [
        "DriverBehaviourViolationReport",
        "DriverPerformanceDetailedReport",
    ] {
        let violations = report(&app, "1000", name, DAY).await;
        assert_eq!(violations.len(), 1, "{name}: {violations:?}");
        let v = &violations[0];
        assert_eq!(v["DeviceId"], "van-c");
        assert_eq!(v["ViolationType"], "Speeding");
        assert_eq!(v["Limit"], 100.0);
        assert!((v["RecordedValue"].as_f64().unwrap() - 130.0).abs() < 0.5);
        assert_eq!(v["DurationSeconds"], 60.0);
        assert_eq!(v["TenantVarCode"], "1000");
        assert_eq!(v["Geofence"], "Fast lane");
        // The geofence, then the nearest place in words (docs/reports.md, "Addresses").
        assert_eq!(
            v["Address"],
            "Fast lane; 6.5 km NW of Petersfield, England, GB"
        );
        assert_eq!(v["DateTimeUtc"], "2026-03-02T08:04:00Z");
        assert_eq!(v["DateTimeLocal"], "2026-03-02T08:04:00+00:00");
        assert!(
            v["JourneyId"]
                .as_str()
                .is_some_and(|j| j.starts_with("van-c-"))
        );
    }

    for name in ["DriverBehaviourReport", "DriverPerformanceSummaryReport"] {
        let scores = report(&app, "1000", name, &format!("{DAY}&GroupBy=Vehicle")).await;
        assert_eq!(scores.len(), 3);
        assert_eq!(scores[0]["Vehicle"], "Unit van-a");
        assert!(scores[0]["Driver"].is_null());
        assert_eq!(scores[0]["Score"], 100);
        assert_eq!(scores[1]["JourneysCount"], 2);
        assert_eq!(scores[1]["DurationSec"], 600);
        // One Speeding (weight 5) in 8.17 km: 100 − 5 × 100 / 8.17 = 38.8 → 38.
        assert_eq!(scores[2]["Score"], 38, "{:?}", scores[2]);
    }
}

async fn violation_types_filter_rows_and_scores(app: TestApp) {
    known_tracks(&app).await;
    let query = format!("{DAY}&DrivingViolationTypes=Braking&DrivingViolationTypes=Turning");
    assert!(
        report(&app, "1000", "DriverBehaviourViolationReport", &query)
            .await
            .is_empty()
    );
    let scores = report(
        &app,
        "1000",
        "DriverBehaviourReport",
        &format!("{query}&GroupBy=vehicle"),
    )
    .await;
    assert_eq!(scores[2]["Score"], 100);
    let query = format!("{DAY}&DrivingViolationTypes=speeding,Acceleration");
    assert_eq!(
        report(&app, "1000", "DriverBehaviourViolationReport", &query)
            .await
            .len(),
        1
    );
}

async fn messages_outside_the_window_never_count(app: TestApp) {
    known_tracks(&app).await;
    // A far jump the next day, and one the day before: outside the window.
    let mut late = track(&[(24.0 * 60.0, 50.0), (24.0 * 60.0 + 10.0, 60.0)]);
    late[0]["SequenceNumber"] = json!(100);
    late[1]["SequenceNumber"] = json!(101);
    post(&app, "1000", "van-a", &late).await;
    let mut early = track(&[(-24.0 * 60.0, 90.0)]);
    early[0]["SequenceNumber"] = json!(102);
    post(&app, "1000", "van-a", &early).await;
    let rows = report(&app, "1000", "AssetUtilisationReport", DAY).await;
    assert_eq!(rows[0]["Trips"], 1);
    assert!((rows[0]["DistanceKm"].as_f64().unwrap() - 10.0).abs() < 0.01);
    // A window holding only the first five minutes.
    let rows = report(
        &app,
        "1000",
        "AssetUtilisationReport",
        "DateFrom=2026-03-02T08:00:00Z&DateTo=2026-03-02T08:05:00Z&DeviceIds=van-a",
    )
    .await;
    assert_eq!(rows[0]["DurationSec"], 240);
    assert!((rows[0]["DistanceKm"].as_f64().unwrap() - 4.0).abs() < 0.01);
    assert!(rows[0]["OdometerKm"].is_null());
}

async fn driver_grouping(app: TestApp) {
    let (user, _) = app.create_user("1000", "driver@example.com", "User").await;
    let response = app
        .admin
        .patch(
            &format!("/V2/1000/users/{user}"),
            &json!([{"op": "add", "path": "/FirstName", "value": "Dana"},
                    {"op": "add", "path": "/LastName", "value": "Driver"}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    device(&app, "1000", "van-a", json!({"UserId": user})).await;
    device(&app, "1000", "van-c", json!({"UserId": user})).await;
    device(&app, "1000", "van-x", json!({})).await;
    let straight: Vec<_> = (0..=10).map(|m| (m as f64, m as f64)).collect();
    post(&app, "1000", "van-a", &track(&straight)).await;
    post(&app, "1000", "van-c", &track(&straight)).await;
    post(&app, "1000", "van-x", &track(&straight)).await;
    let rows = report(&app, "1000", "DriverPerformanceSummaryReport", DAY).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["Driver"], "Dana Driver");
    assert!(rows[0]["Vehicle"].is_null());
    assert_eq!(rows[0]["JourneysCount"], 2);
    assert!((rows[0]["DistanceKm"].as_f64().unwrap() - 20.0).abs() < 0.02);
    assert_eq!(rows[0]["DurationSec"], 1200);
    // Devices with no assigned user: one row without a driver.
    assert!(rows[1]["Driver"].is_null());
    assert_eq!(rows[1]["JourneysCount"], 1);
    // A device's user is named in violation rows.
    let speeding = report(
        &app,
        "1000",
        "DriverPerformanceDetailedReport",
        &format!("{DAY}&DeviceIds=van-a"),
    )
    .await;
    assert!(speeding.is_empty());
}

async fn alerts_report_rows(app: TestApp) {
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "TimeZoneId": "Europe/Paris"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    sos_setup(&app, "1000", "sos-1").await;
    let before = jiff::Timestamp::now();
    raise(&app, "1000", "sos-1", 1, &before.to_string()).await;
    // Alerts are placed in time by when they were raised.
    let rows = report(&app, "1000", "AlertsReport", "IntervalType=this-year").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["DeviceId"], "sos-1");
    assert_eq!(row["DeviceFriendlyName"], "Van 3");
    assert_eq!(row["AlertType"], "SOS");
    let local = row["StartTimeLocal"].as_str().unwrap();
    let zoned: jiff::Timestamp = local.parse().unwrap();
    assert!(
        zoned >= before - jiff::SignedDuration::from_secs(1),
        "{local}"
    );
    let paris = zoned.to_zoned(jiff::tz::TimeZone::get("Europe/Paris").unwrap());
    assert_eq!(
        local,
        paris.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
        "local to Paris"
    );
    assert_eq!(row["Latitude"], 51.5);
    assert_eq!(row["Longitude"], -0.12);
    assert_eq!(row["LocationName"], "Depot");
    assert_eq!(row["Address"], "Depot; City of Westminster, England, GB");
    // Another window, another device: nothing.
    assert!(
        report(&app, "1000", "AlertsReport", "IntervalType=last-year")
            .await
            .is_empty()
    );
    assert!(report(&app, "1000", "AlertsReport", DAY).await.is_empty());
    device(&app, "1000", "other", json!({})).await;
    assert!(
        report(
            &app,
            "1000",
            "AlertsReport",
            &format!("{DAY}&DeviceIds=other")
        )
        .await
        .is_empty()
    );
}

async fn devices_overview_rows(app: TestApp) {
    crate::alerts::create_depot(&app, "1000").await;
    device(&app, "1000", "seen", json!({})).await;
    device(&app, "1000", "never", json!({"DeviceType": "Spot"})).await;
    let sent = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(3 * 3600 + 12 * 60 + 10);
    post(
        &app,
        "1000",
        "seen",
        &json!([{"MessageType": "AutomaticPositionReport", "SentFromDevice": sent.to_string(),
                 "Position": {"Latitude": 51.5, "Longitude": -0.12}, "Properties": {"battery": "85"}}]),
    )
    .await;
    let rows = report(
        &app,
        "1000",
        "DevicesOverviewReport",
        "IntervalType=this-week",
    )
    .await;
    assert_eq!(ids(&rows), ["never", "seen"]);
    let never = &rows[0];
    assert_eq!(never["DeviceType"], "Spot");
    assert!(never["LastMoMessageTime"].is_null());
    assert!(never["LastMoMessageAgo"].is_null());
    assert!(never["Address"].is_null(), "no position, no address");
    let seen = &rows[1];
    assert_eq!(seen["LastMoMessageAgo"], "3 h 12 min");
    assert_eq!(seen["LastLatitude"], 51.5);
    assert_eq!(seen["LastLongitude"], -0.12);
    assert_eq!(seen["Address"], "Depot; City of Westminster, England, GB");
    assert_eq!(seen["BatteryPercentage"], "85");
    assert!(seen["LastMoMessageTime"].is_string());
    for (hours, expected) in [
        ("0", vec!["never", "seen"]),
        ("4", vec!["seen"]),
        ("3", vec![]),
        ("-3", vec!["never", "seen"]),
        ("-4", vec!["never"]),
    ] {
        let rows = report(
            &app,
            "1000",
            "DevicesOverviewReport",
            &format!("IntervalType=this-week&LastTimeHoursFilter={hours}"),
        )
        .await;
        assert_eq!(ids(&rows), expected, "LastTimeHoursFilter={hours}");
    }
}

async fn csv_and_xml(app: TestApp) {
    known_tracks(&app).await;
    let path = format!("/V2/1000/reports/AssetUtilisationReport?{DAY}");
    let response = app
        .admin
        .request(reqwest::Method::GET, &path)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let text = response.text().await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "DeviceId,DeviceFriendlyName,Trips,DistanceKm,DurationSec,DurationString,OdometerKm"
    );
    assert_eq!(lines.len(), 4);
    assert!(
        lines[1].starts_with("van-a,Unit van-a,1,10"),
        "{}",
        lines[1]
    );
    // An empty report still has its header row.
    let empty = app
        .admin
        .request(
            reqwest::Method::GET,
            "/V2/1000/reports/AlertsReport?IntervalType=yesterday",
        )
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        empty.trim(),
        "DeviceId,DeviceFriendlyName,AlertType,StartTimeLocal,Latitude,Longitude,Address,LocationName"
    );
    let xml = app
        .admin
        .request(reqwest::Method::GET, &path)
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap();
    assert_eq!(xml.headers()["content-type"], "application/xml");
    let text = xml.text().await.unwrap();
    assert!(text.starts_with("<?xml"));
    assert!(text.contains("<ArrayOfAssetUtilisationReportRow><AssetUtilisationReportRow><DeviceId>van-a</DeviceId>"), "{text}");
    assert!(text.ends_with("</ArrayOfAssetUtilisationReportRow>"));
    assert_eq!(text.matches("<Trips>").count(), 3);
    // Nothing acceptable: 406, as everywhere.
    let refused = app
        .admin
        .request(reqwest::Method::GET, &path)
        .header("accept", "image/png")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::NOT_ACCEPTABLE);
}

async fn enabled_reports(app: TestApp) {
    let all = app.admin.get_json("/V2/1000/reports").await;
    assert_eq!(
        all,
        json!([
            "AlertsReport",
            "AssetUtilisationReport",
            "DevicesOverviewReport",
            "DriverPerformanceSummaryReport",
            "DriverBehaviourReport",
            "DriverPerformanceDetailedReport",
            "DriverBehaviourViolationReport",
            "MonitoringReport"
        ])
    );
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "Properties": {"EnabledReports": "AlertsReport, devicesoverviewreport"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        app.admin.get_json("/V2/1000/reports").await,
        json!(["AlertsReport", "DevicesOverviewReport"])
    );
    assert_not_found(
        app.admin
            .get("/V2/1000/reports/AssetUtilisationReport?IntervalType=yesterday")
            .await,
    )
    .await;
    report(
        &app,
        "1000",
        "DevicesOverviewReport",
        "IntervalType=yesterday",
    )
    .await;
    // Not a report at all.
    assert_not_found(
        app.admin
            .get("/V2/1000/reports/EnterpriseLicenceReport?IntervalType=yesterday")
            .await,
    )
    .await;
}

/// More rows than one written chunk (64): the streamed JSON, CSV and XML stay whole.
async fn many_rows_stream_whole(app: TestApp) {
    for i in 0..150 {
        device(&app, "1000", &format!("dev-{i:03}"), json!({})).await;
    }
    let rows = report(
        &app,
        "1000",
        "DevicesOverviewReport",
        "IntervalType=yesterday",
    )
    .await;
    assert_eq!(rows.len(), 150);
    assert_eq!(rows[149]["DeviceId"], "dev-149");
    let csv = app
        .admin
        .request(
            reqwest::Method::GET,
            "/V2/1000/reports/AssetUtilisationReport?IntervalType=yesterday",
        )
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(csv.lines().count(), 151);
    let xml = app
        .admin
        .request(
            reqwest::Method::GET,
            "/V2/1000/reports/AssetUtilisationReport?IntervalType=yesterday",
        )
        .header("accept", "text/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(xml.matches("<AssetUtilisationReportRow>").count(), 150);
}

/// 2,500 positions (the track is read 2,000 at a time): one trip, every metre counted.
async fn long_tracks_are_read_in_chunks(app: TestApp) {
    device(&app, "1000", "long", json!({})).await;
    // Every 10 s, 1/6 km further north: 60 km/h for 24,990 s.
    let points: Vec<_> = (0..2500)
        .map(|i| (i as f64 / 6.0, i as f64 / 6.0))
        .collect();
    let messages = track(&points);
    for batch in messages.as_array().unwrap().chunks(1000) {
        post(&app, "1000", "long", &Value::Array(batch.to_vec())).await;
    }
    let rows = report(&app, "1000", "AssetUtilisationReport", DAY).await;
    assert_eq!(rows[0]["Trips"], 1);
    assert_eq!(rows[0]["DurationSec"], 24_990);
    assert!(
        (rows[0]["DistanceKm"].as_f64().unwrap() - 2499.0 / 6.0).abs() < 0.05,
        "{}",
        rows[0]
    );
    assert_eq!(rows[0]["DurationString"], "06:56");
}
