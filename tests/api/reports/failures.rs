//! A report whose data cannot be read is answered as a failed report: 500
//! `report_failed` naming the report, with the request id (never a 200 cut short, nor
//! another kind of failure). The fault is the positions' table gone from under the
//! running server, so the device selection succeeds and the first track read fails.

use serde_json::json;
use sqlx::Connection;

use super::{DAY, device};
use crate::backend_tests;
use crate::common::{TestApp, assert_problem};

backend_tests!(a_report_that_cannot_read_its_data_is_a_report_failure);

async fn hide_the_positions(app: &TestApp) {
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(app.database_url())
        .await
        .expect("connect");
    sqlx::query("ALTER TABLE mo_messages RENAME TO mo_messages_hidden")
        .execute(&mut db)
        .await
        .expect("rename the table");
    db.close().await.ok();
}

async fn a_report_that_cannot_read_its_data_is_a_report_failure(app: TestApp) {
    device(&app, "1000", "van-a", json!({})).await;
    hide_the_positions(&app).await;
    let response = app
        .admin
        .get(&format!("/V2/1000/reports/AssetUtilisationReport?{DAY}"))
        .await;
    let request_id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .expect("a request id");
    let problem = assert_problem(response, 500, "report_failed").await;
    assert_eq!(problem["requestId"], request_id.as_str());
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("AssetUtilisationReport"), "{problem}");
    // The overview reads no positions: it still answers.
    let overview = app
        .admin
        .get(&format!("/V2/1000/reports/DevicesOverviewReport?{DAY}"))
        .await;
    assert_eq!(overview.status().as_u16(), 200);
}
