use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_problem, problem_fields};

backend_tests!(
    root_tenant_is_bootstrapped,
    create_subtenant_assigns_code_and_lists_it,
    tenant_validation_lists_every_field,
);

async fn root_tenant_is_bootstrapped(app: TestApp) {
    let root = app.admin.get_json("/V2/1000").await;
    assert_eq!(root["TenantCode"], "1000");
    assert!(root["ParentTenantCode"].is_null());
    assert!(root["ETag"].is_string());
}

async fn create_subtenant_assigns_code_and_lists_it(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000",
            &json!({"Description": "Acme", "TimeZoneId": "Europe/London", "TenantCode": "9999"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let created: serde_json::Value = response.json().await.unwrap();
    let code = created["TenantCode"].as_str().unwrap().to_string();
    assert_ne!(code, "9999", "client-sent TenantCode is ignored");
    assert!(code.len() >= 4 && code.chars().all(|c| c.is_ascii_digit()));
    assert_eq!(created["ParentTenantCode"], "1000");
    let listed = app.admin.get_json("/V2/1000/tenants").await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["Description"], "Acme");
}

async fn tenant_validation_lists_every_field(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000",
            &json!({
                "Description": "x".repeat(251),
                "AdminContacts": "a@example.com;not-an-email",
                "TimeZoneId": "Mars/Olympus",
                "CultureName": "??",
            }),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["Description", "AdminContacts", "TimeZoneId", "CultureName"]
    );
    assert_eq!(app.admin.get_json("/V2/1000/tenants").await, json!([]));
}
