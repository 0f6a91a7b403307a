//! How times are stored: they sort exactly, and rows written before migration 0008 (RFC
//! 3339 text) are converted.

use reqwest::StatusCode;
use serde_json::json;
use sqlx::Connection;

use safetrack::app::AppConfig;

use crate::backend_tests;
use crate::common::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Backend, TestApp, TestDatabase, migrated_before, spawn_app_on,
};

backend_tests!(deletions_are_listed_newest_first);

/// Devices deleted one after the other come back newest first (times of every fractional
/// width: text ordering got `…:00Z` vs `…:00.9Z` wrong). MO messages test ordering of
/// times one microsecond apart.
async fn deletions_are_listed_newest_first(app: TestApp) {
    let ids: Vec<String> = (0..8).map(|i| format!("order-{i}")).collect();
    for id in &ids {
        let response = app
            .admin
            .post(
                "/V2/1000/devices",
                &json!({"DeviceId": id, "DeviceType": "InReach"}),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    for id in &ids {
        let response = app.admin.delete(&format!("/V2/1000/devices/{id}")).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let log = app.admin.get_json("/V2/1000/deleteddevices").await;
    let listed: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["DeviceId"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, expected);
    let times: Vec<jiff::Timestamp> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["DateDeleted"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] > w[1]), "{times:?}");
}

/// A database at schema version 7 (times as text) is migrated; its times survive exactly.
async fn text_times_are_converted(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let mut conn = migrated_before(&database, backend, 8).await;
    let hash = safetrack::domain::password::hash(ADMIN_PASSWORD).unwrap();
    sqlx::query(
        "INSERT INTO tenants (code, parent_code, path, doc, etag, updated_at)
         VALUES ('1000', NULL, '/1000/', '{\"Description\":\"Root\"}', 'e1', '2026-01-02T03:04:05.5Z')",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO users (tenant_code, username, username_key, password_hash, role, doc,
            profile_doc, profile_updated_at, etag, updated_at, last_lockout, failed_window_start)
         VALUES ('1000', $1, $2, $3, 'Administrator', '{}', '{}', '2026-01-02T03:04:05Z', 'e2',
            '2026-01-02T03:04:05.123456Z', '2025-12-31T23:59:59.000001Z', NULL)",
    )
    .bind(ADMIN_EMAIL)
    .bind(ADMIN_EMAIL.to_lowercase())
    .bind(hash)
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();

    let app = spawn_app_on(backend, database, AppConfig::default()).await;
    let root = app.admin.get_json("/V2/1000").await;
    assert_eq!(root["Timestamp"], "2026-01-02T03:04:05.5Z");
    let users = app.admin.get_json("/V2/1000/users").await;
    assert_eq!(users[0]["Timestamp"], "2026-01-02T03:04:05.123456Z");
    assert_eq!(users[0]["LastLockoutDate"], "2025-12-31T23:59:59.000001Z");
    assert!(users[0]["FailedPasswordAttemptWindowStart"].is_null());
    // Written after the migration, a time sorts after the converted ones.
    let later: jiff::Timestamp = users[0]["LastLoggedIn"].as_str().unwrap().parse().unwrap();
    assert!(later > "2026-01-02T03:04:05.5Z".parse().unwrap());
}

#[tokio::test]
async fn sqlite_text_times_are_converted() {
    text_times_are_converted(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_text_times_are_converted() {
    text_times_are_converted(Backend::Postgres).await;
}
