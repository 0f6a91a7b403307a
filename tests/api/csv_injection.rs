//! CSV output neutralises formula injection (OWASP): a text cell starting with `=`, `+`,
//! `-`, `@`, tab or carriage return is written with a leading `'`, unless the cell is a
//! plain number (negative coordinates stay numbers). Lists rendered by the negotiation
//! layer and the streamed reports alike.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_tests;
use crate::common::TestApp;
use crate::reports::device;

backend_tests!(formula_cells_are_written_as_text);

/// The CSV at `path`, as (header, rows).
async fn csv(app: &TestApp, path: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let response = app
        .admin
        .request(Method::GET, path)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    let text = response.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// The `column` cell of the row whose first cell is `id`.
fn cell(table: &(Vec<String>, Vec<Vec<String>>), id: &str, column: &str) -> String {
    let at = table.0.iter().position(|c| c == column).expect(column);
    let row = table.1.iter().find(|r| r[0] == id).expect(id);
    row[at].clone()
}

async fn formula_cells_are_written_as_text(app: TestApp) {
    let names = [
        (
            "hyperlink",
            "=HYPERLINK(\"http://evil.example/\",\"x\")",
            "'=HYPERLINK(\"http://evil.example/\",\"x\")",
        ),
        ("plus", "+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("minus", "-2+3", "'-2+3"),
        ("at", "@SUM(1,2)", "'@SUM(1,2)"),
        ("negative", "-0.12", "-0.12"),
        ("positive", "+44", "+44"),
        ("plain", "Van 3 = blue", "Van 3 = blue"),
    ];
    for (id, name, _) in names {
        device(&app, "1000", id, json!({"FriendlyName": name})).await;
    }
    let response = app
        .admin
        .post(
            "/V2/1000/devices/negative/momessages",
            &json!([{"MessageType": "AutomaticPositionReport",
                     "SentFromDevice": jiff::Timestamp::now().to_string(),
                     "Position": {"Latitude": -33.9, "Longitude": -0.12}}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    let devices = csv(&app, "/V2/1000/devices").await;
    let report = csv(
        &app,
        "/V2/1000/reports/DevicesOverviewReport?IntervalType=this-week",
    )
    .await;
    for (id, _, written) in names {
        assert_eq!(cell(&devices, id, "FriendlyName"), written, "{id}");
        assert_eq!(cell(&report, id, "DeviceFriendlyName"), written, "{id}");
    }
    // Numbers stay numbers.
    assert_eq!(cell(&report, "negative", "LastLatitude"), "-33.9");
    assert_eq!(cell(&report, "negative", "LastLongitude"), "-0.12");
    // JSON and XML show the names as they are.
    let listed = app.admin.get_json("/V2/1000/devices/hyperlink").await;
    assert_eq!(listed["FriendlyName"], names[0].1);
}
