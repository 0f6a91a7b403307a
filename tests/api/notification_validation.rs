//! `POST /V2/{t}/eventnotifications/validate`: a notification checked as a save would
//! check it, with the same answer, and nothing written.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_problem, problem_fields};
use crate::event_notifications::{count, location_id, sos};

backend_tests!(
    validation_answers_what_saving_would,
    validation_writes_nothing,
    validation_needs_manage_configuration_and_scope,
    validation_and_recipient_types_are_documented,
);

const VALIDATE: &str = "/V2/1000/eventnotifications/validate";
const SAVE: &str = "/V2/1000/eventnotifications";

/// The problem without what differs between two requests (its request id).
fn comparable(mut problem: Value) -> Value {
    if let Some(fields) = problem.as_object_mut() {
        fields.remove("requestId");
    }
    problem
}

async fn validation_answers_what_saving_would(app: TestApp) {
    let contact = location_id(
        app.admin
            .post(
                "/V2/1000/addressbookcontacts",
                &json!({"ContactName": "Duty officer"}),
            )
            .await,
    )
    .await;
    let with = |field: &str, value: Value| {
        let mut body = sos();
        body[field] = value;
        body
    };
    let bad = [
        with("EventsExpression", json!("Emergency AND")),
        with("EventsExpression", json!("Sped > 100")),
        with("NotificationName", json!(" ")),
        with("Severity", json!("3")),
        with("Devices", json!("ghost")),
        with(
            "Recipients",
            json!([{"Type": "TenantList", "ListId": "4242"}]),
        ),
        with(
            "Recipients",
            json!([{"Type": "TenantContact", "ContactId": contact, "ContactDetailId": "9"}]),
        ),
        with("Recipients", json!([{"Type": "NoSuchType"}])),
    ];
    for body in bad {
        let checked = app.admin.post(VALIDATE, &body).await;
        let saved = app.admin.post(SAVE, &body).await;
        assert_eq!(checked.status(), StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(saved.status(), StatusCode::BAD_REQUEST, "{body}");
        let checked: Value = checked.json().await.unwrap();
        let saved: Value = saved.json().await.unwrap();
        assert_eq!(comparable(checked), comparable(saved), "{body}");
    }
    assert_eq!(count(&app, SAVE).await, 0);
    // The expression's message names the position, as a save's does.
    let problem = assert_problem(
        app.admin
            .post(VALIDATE, &with("EventsExpression", json!("Emergency AND")))
            .await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["EventsExpression"]);
    assert!(
        problem["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("position 14: expected "),
        "{problem}"
    );
    // Valid: 200, no body, and the same body saves.
    let good = with(
        "Recipients",
        json!([{"Type": "TenantContact", "ContactId": contact}]),
    );
    let response = app.admin.post(VALIDATE, &good).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.text().await.unwrap(), "");
    assert_eq!(app.admin.post(SAVE, &good).await.status(), StatusCode::OK);
}

/// The audit log's entries apart from logins.
async fn changes(app: &TestApp) -> Vec<Value> {
    app.admin
        .get_all_pages("/V2/1000/auditlog")
        .await
        .into_iter()
        .filter(|e| e["Action"] != "Login")
        .collect()
}

async fn validation_writes_nothing(app: TestApp) {
    let list = location_id(
        app.admin
            .post(
                "/V2/1000/addressbookdistributionlists",
                &json!({"ListName": "Night shift", "Recipients": []}),
            )
            .await,
    )
    .await;
    let before = changes(&app).await;
    let mut body = sos();
    body["Recipients"] = json!([{"Type": "TenantList", "ListId": list}]);
    for _ in 0..3 {
        assert_eq!(
            app.admin.post(VALIDATE, &body).await.status(),
            StatusCode::OK
        );
    }
    assert_eq!(count(&app, SAVE).await, 0);
    assert_eq!(
        changes(&app).await,
        before,
        "validation left an audit entry"
    );
    // Nothing names the list: it can still be deleted.
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/addressbookdistributionlists/{list}"))
            .await
            .status(),
        StatusCode::OK
    );
}

async fn validation_needs_manage_configuration_and_scope(app: TestApp) {
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    for client in [&reader, &user] {
        assert_problem(client.post(VALIDATE, &sos()).await, 403, "forbidden").await;
    }
    assert_eq!(
        manager.post(VALIDATE, &sos()).await.status(),
        StatusCode::OK
    );
    // Another tenant's subtree is out of scope, exactly like a missing tenant.
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let (_, a_admin) = app
        .create_user(&a, "a-admin@example.com", "Administrator")
        .await;
    let response = a_admin
        .post(&format!("/V2/{b}/eventnotifications/validate"), &sos())
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let anonymous = app.client("nobody@example.com", "wrong-password");
    assert_eq!(
        anonymous.post(VALIDATE, &sos()).await.status(),
        StatusCode::UNAUTHORIZED
    );
}

/// The route is in the OpenAPI document, and so are the recipient types the console
/// offers (it reads them from there).
async fn validation_and_recipient_types_are_documented(app: TestApp) {
    let doc: Value = app
        .anonymous()
        .get("/openapi.json")
        .await
        .json()
        .await
        .unwrap();
    let operation = &doc["paths"]["/V2/{tenantVarCode}/eventnotifications/validate"]["post"];
    assert!(operation.is_object(), "validate is documented");
    for status in ["200", "400", "403", "404"] {
        assert!(
            operation["responses"][status].is_object(),
            "{status} documented"
        );
    }
    assert!(
        operation["requestBody"]
            .to_string()
            .contains("#/components/schemas/EventNotification")
    );
    let types = doc["components"]["schemas"]["RecipientType"]["enum"]
        .as_array()
        .expect("RecipientType enum");
    for expected in [
        "TenantContact",
        "TenantList",
        "MessagingAddress",
        "DeviceUserSms",
    ] {
        assert!(types.contains(&json!(expected)), "{expected} in {types:?}");
    }
    assert_eq!(types.len(), 27);
}
