//! What fuzzing the API (schemathesis, .ci/schemathesis.sh) turned up, kept as tests.

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    nul_in_text_is_a_400,
    nul_in_path_is_a_404,
    put_takes_the_device_id_from_the_path
);

/// PostgreSQL text cannot hold U+0000 (it answered 500); XML cannot either. JSON can
/// write it as `\u0000`: refused, naming the field, on both backends.
async fn nul_in_text_is_a_400(app: TestApp) {
    let problem = assert_problem(
        app.admin
            .post("/V2/1000/groups", &json!({"Name": "Va\u{0}ns"}))
            .await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Name"]);

    let contact = json!({"ContactName": "Duty", "ContactEntries": [{"Address": "+44\u{0}"}]});
    let problem = assert_problem(
        app.admin
            .post("/V2/1000/addressbookcontacts", &contact)
            .await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["ContactEntries[0].Address"]);

    let (user, _) = app.create_user("1000", "nul@example.com", "User").await;
    let patch = json!([{"op": "replace", "path": "/FirstName", "value": "a\u{0}"}]);
    let problem = assert_problem(
        app.admin
            .patch(&format!("/V2/1000/users/{user}"), &patch)
            .await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["[0].value"]);

    // A backslash followed by `u0000` is text like any other.
    let literal = app
        .admin
        .post("/V2/1000/groups", &json!({"Name": "Va\\u0000ns"}))
        .await;
    assert_eq!(literal.status(), StatusCode::OK);
}

/// No record has NUL in its id; PostgreSQL answered 500 to the lookup.
async fn nul_in_path_is_a_404(app: TestApp) {
    assert_not_found(app.admin.get("/V2/10%0000").await).await;
    assert_not_found(app.admin.get("/V2/1000/devices/a%00b").await).await;
    assert_not_found(app.admin.get("/V2/1000/users/a%00b@example.com").await).await;
}

/// The document says so (the PUT body's `DeviceId` is optional); the server agrees.
async fn put_takes_the_device_id_from_the_path(app: TestApp) {
    let device = json!({"DeviceId": "300234010753370", "DeviceType": "InReach"});
    let created = app.admin.post("/V2/1000/devices", &device).await;
    assert_eq!(created.status(), StatusCode::OK);
    let path = "/V2/1000/devices/300234010753370";
    let replaced = app
        .admin
        .put(
            path,
            &json!({"DeviceType": "InReachMini", "FriendlyName": "Van 3"}),
        )
        .await;
    assert_eq!(replaced.status(), StatusCode::OK);
    let stored = app.admin.get_json(path).await;
    assert_eq!(stored["DeviceId"], "300234010753370");
    assert_eq!(stored["FriendlyName"], "Van 3");
}
