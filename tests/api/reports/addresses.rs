//! Reports' `Address` columns in the reader's distance unit (issue 48 §1, §3): the
//! geofences' names, then the nearest GeoNames place with its distance and direction, in
//! miles for a reader whose profile says `ft`, else in the tenant's default
//! (`DistanceUnits` property), else in kilometres; in JSON and CSV alike.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{DAY, known_tracks};
use crate::backend_tests;
use crate::common::{Client, TestApp};

backend_tests!(
    addresses_in_the_readers_distance_unit,
    the_tenants_default_unit_and_a_profile_over_it,
);

const KM: &str = "Fast lane; 6.5 km NW of Petersfield, England, GB";
const MILES: &str = "Fast lane; 4.1 mi NW of Petersfield, England, GB";
const VIOLATIONS: &str = "DriverBehaviourViolationReport";

async fn violation_address(client: &Client) -> Value {
    let rows = client
        .get_json(&format!("/V2/1000/reports/{VIOLATIONS}?{DAY}"))
        .await;
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    rows[0]["Address"].clone()
}

async fn violations_csv(client: &Client) -> String {
    let response = client
        .request(
            reqwest::Method::GET,
            &format!("/V2/1000/reports/{VIOLATIONS}?{DAY}"),
        )
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.text().await.unwrap()
}

async fn reader_with_units(app: &TestApp, email: &str, units: &str) -> Client {
    let (id, client) = app.create_user("1000", email, "User").await;
    let response = app
        .admin
        .put(
            &format!("/V2/1000/userprofile/{id}"),
            &json!({"DistanceUnits": units}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    client
}

async fn addresses_in_the_readers_distance_unit(app: TestApp) {
    known_tracks(&app).await;
    assert_eq!(violation_address(&app.admin).await, KM);
    let csv = violations_csv(&app.admin).await;
    let header = csv.lines().next().unwrap_or_default();
    assert!(header.contains(",Address,"), "{header}");
    // The address holds commas: the CSV quotes it.
    assert!(csv.contains(&format!("\"{KM}\"")), "{csv}");

    let reader = reader_with_units(&app, "miles@example.com", "ft").await;
    assert_eq!(violation_address(&reader).await, MILES);
    assert!(
        violations_csv(&reader)
            .await
            .contains(&format!("\"{MILES}\""))
    );
    // The geofence column stays the geofence's name.
    let rows = reader
        .get_json(&format!("/V2/1000/reports/{VIOLATIONS}?{DAY}"))
        .await;
    assert_eq!(rows[0]["Geofence"], "Fast lane");
}

async fn the_tenants_default_unit_and_a_profile_over_it(app: TestApp) {
    known_tracks(&app).await;
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "Properties": {"DistanceUnits": "ft"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // The administrator's profile names no unit: the tenant's.
    assert_eq!(violation_address(&app.admin).await, MILES);
    let metric = reader_with_units(&app, "metric@example.com", "m").await;
    assert_eq!(violation_address(&metric).await, KM);
    // A default that is not a unit is no default.
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "Properties": {"DistanceUnits": "leagues"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(violation_address(&app.admin).await, KM);
}
