//! API tokens (issue 31 part 2): created with their secret shown once and stored only as
//! a hash, accepted as `Authorization: Bearer`, limited to their permissions and their
//! tenant's subtree, refused at once when revoked or expired — also by a second process
//! sharing PostgreSQL — and recorded as `token:<Name>`.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::Connection;

use crate::alerts::{alert_path, raise, sos_setup};
use crate::backend_tests;
use crate::common::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestApp, TestDatabase, assert_not_found,
    assert_problem, problem_fields,
};
use crate::durability::start_with;
use crate::mo_messages::{DEVICE, position_report, register_device};

backend_tests!(
    a_token_is_shown_once_and_stored_as_a_hash,
    a_token_acts_only_with_its_permissions,
    a_tokens_permissions_are_a_subset_of_its_creators,
    bad_token_requests_change_nothing,
    a_token_acts_only_inside_its_tenants_subtree,
    refused_tokens_say_why,
    a_token_is_recorded_as_the_actor,
);

/// Creates a token as `client`; answers the 200 body.
pub async fn create_token(client: &Client, tenant: &str, body: &Value) -> Value {
    let response = client.post(&format!("/V2/{tenant}/apitokens"), body).await;
    assert_eq!(response.status(), StatusCode::OK, "create token {body}");
    response.json().await.expect("token json")
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn stored_tokens(app: &TestApp) -> Vec<(String, String)> {
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(app.database_url())
        .await
        .expect("connect");
    sqlx::query_as("SELECT prefix, secret_hash FROM api_tokens ORDER BY id")
        .fetch_all(&mut db)
        .await
        .expect("tokens")
}

async fn a_token_is_shown_once_and_stored_as_a_hash(app: TestApp) {
    let created = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "gateway-north", "Permissions": ["DeviceMessages", "Read"]}),
    )
    .await;
    let secret = created["Token"].as_str().expect("the secret").to_string();
    assert!(
        secret.starts_with("st_") && secret.len() >= 3 + 22,
        "{secret}"
    );
    assert!(secret.starts_with(created["Prefix"].as_str().unwrap()));
    assert_eq!(created["Name"], "gateway-north");
    assert_eq!(created["Permissions"], json!(["DeviceMessages", "Read"]));
    assert_eq!(created["CreatedBy"], ADMIN_EMAIL);
    assert!(created["CreatedAt"].is_string());
    assert!(created["ExpiresAt"].is_null());
    assert!(created["LastUsedAt"].is_null());
    let id = created["TokenId"].as_str().expect("TokenId");

    // Never again: neither the list nor the record shows the secret or its hash.
    let listed = app.admin.get_json("/V2/1000/apitokens").await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let one = app
        .admin
        .get_json(&format!("/V2/1000/apitokens/{id}"))
        .await;
    for record in [&listed[0], &one] {
        assert!(record.get("Token").is_none(), "{record}");
        let text = record.to_string();
        assert!(!text.contains(&secret) && !text.contains(&sha256_hex(&secret)));
        assert_eq!(record["Prefix"], created["Prefix"]);
    }
    // At rest: the SHA-256 only.
    let stored = stored_tokens(&app).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].1, sha256_hex(&secret));
    assert_ne!(stored[0].1, secret);

    // It works, and its use is recorded (coalesced, in the background).
    let token = app.bearer(&secret);
    assert_eq!(token.get("/V2/1000/devices").await.status(), StatusCode::OK);
    let mut used = Value::Null;
    for _ in 0..50 {
        used = app
            .admin
            .get_json(&format!("/V2/1000/apitokens/{id}"))
            .await;
        if used["LastUsedAt"].is_string() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(used["LastUsedAt"].is_string(), "{used}");
}

async fn a_token_acts_only_with_its_permissions(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let created = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "poster", "Permissions": ["DeviceMessages"]}),
    )
    .await;
    let token = app.bearer(created["Token"].as_str().unwrap());
    let batch = json!([position_report(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]);
    let posted = token
        .post(&format!("/V2/1000/devices/{DEVICE}/momessages"), &batch)
        .await;
    assert_eq!(posted.status(), StatusCode::OK);
    // Everything else is 403: reads, other writes, tokens.
    for path in [
        "/V2/1000/devices",
        "/V2/1000/users",
        "/V2/1000/alerts",
        "/V2/1000/apitokens",
    ] {
        assert_problem(token.get(path).await, 403, "forbidden").await;
    }
    let device = json!({"DeviceId": "other", "DeviceType": "InReach"});
    assert_problem(
        token.post("/V2/1000/devices", &device).await,
        403,
        "forbidden",
    )
    .await;
    let more = json!({"Name": "more"});
    let refused = token.post("/V2/1000/apitokens", &more).await;
    let problem = assert_problem(refused, 403, "forbidden").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("poster"),
        "{problem}"
    );
    assert_eq!(
        app.admin
            .get_json("/V2/1000/devices")
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

async fn a_tokens_permissions_are_a_subset_of_its_creators(app: TestApp) {
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    // Defaults to the creator's own (a token owns no itineraries).
    let defaulted = create_token(&manager, "1000", &json!({"Name": "all-mine"})).await;
    let names: Vec<&str> = defaulted["Permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"ManageUsers") && names.contains(&"Read"),
        "{names:?}"
    );
    assert!(!names.contains(&"ManageTenants") && !names.contains(&"KeepOwnItineraries"));
    // More than the creator has: 403, nothing stored.
    let beyond = json!({"Name": "tenants", "Permissions": ["Read", "ManageTenants"]});
    let problem = assert_problem(
        manager.post("/V2/1000/apitokens", &beyond).await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("ManageTenants")
    );
    // A user without ManageConfiguration creates none.
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    let asked = json!({"Name": "u", "Permissions": ["Read"]});
    assert_problem(
        user.post("/V2/1000/apitokens", &asked).await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(stored_tokens(&app).await.len(), 1);

    // A token that manages users never assigns a role above the least one granting its
    // permissions (here Manager).
    let token = app.bearer(defaulted["Token"].as_str().unwrap());
    let admin = json!({"Username": "boss@example.com", "Password": "user-password-1", "UserRoleId": "Administrator"});
    assert_problem(token.post("/V2/1000/users", &admin).await, 403, "forbidden").await;
    let plain = json!({"Username": "plain@example.com", "Password": "user-password-1", "UserRoleId": "User"});
    assert_eq!(
        token.post("/V2/1000/users", &plain).await.status(),
        StatusCode::OK
    );
}

async fn bad_token_requests_change_nothing(app: TestApp) {
    let cases = [
        (json!({"Permissions": ["Read"]}), vec!["Name"]),
        (
            json!({"Name": "x", "Permissions": ["Read", "Fly", "Swim"]}),
            vec!["Permissions"],
        ),
        (json!({"Name": "x", "Permissions": []}), vec!["Permissions"]),
        (
            json!({"Name": "x", "Permissions": ["KeepOwnItineraries"]}),
            vec!["Permissions"],
        ),
        (
            json!({"Name": "x", "ExpiresAt": "2001-01-01T00:00:00Z"}),
            vec!["ExpiresAt"],
        ),
        (json!({"Name": "x", "ExpiresAt": "soon"}), vec!["ExpiresAt"]),
    ];
    for (body, fields) in cases {
        let response = app.admin.post("/V2/1000/apitokens", &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}: {problem}");
        if body["Permissions"].as_array().is_some_and(|p| p.len() == 3) {
            let text = problem.to_string();
            assert!(text.contains("Fly") && text.contains("Swim"), "{text}");
        }
    }
    // A live name is taken: 409.
    create_token(&app.admin, "1000", &json!({"Name": "twin"})).await;
    let again = app
        .admin
        .post("/V2/1000/apitokens", &json!({"Name": "twin"}))
        .await;
    assert_problem(again, 409, "conflict").await;
    assert_eq!(stored_tokens(&app).await.len(), 1);
    assert_not_found(app.admin.get("/V2/1000/apitokens/999").await).await;
    assert_not_found(app.admin.get("/V2/1000/apitokens/abc").await).await;
    assert_not_found(app.admin.delete("/V2/1000/apitokens/999").await).await;
}

async fn a_token_acts_only_inside_its_tenants_subtree(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let grandchild = app.create_tenant(&child, "Grandchild").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    let created = create_token(
        &app.admin,
        &child,
        &json!({"Name": "child", "Permissions": ["Read"]}),
    )
    .await;
    let token = app.bearer(created["Token"].as_str().unwrap());
    assert_eq!(
        token.get(&format!("/V2/{child}/devices")).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        token
            .get(&format!("/V2/{grandchild}/devices"))
            .await
            .status(),
        StatusCode::OK
    );
    for outside in ["1000", sibling.as_str()] {
        assert_not_found(token.get(&format!("/V2/{outside}/devices")).await).await;
    }
    // The token is the child's: listed there, not at the root.
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/{child}/apitokens"))
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(app.admin.get_json("/V2/1000/apitokens").await, json!([]));
}

async fn refused_tokens_say_why(app: TestApp) {
    let created = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "short", "Permissions": ["Read"]}),
    )
    .await;
    let secret = created["Token"].as_str().unwrap().to_string();
    let id = created["TokenId"].as_str().unwrap();
    let token = app.bearer(&secret);
    assert_eq!(token.get("/V2/1000/devices").await.status(), StatusCode::OK);

    let malformed = app.bearer("not-a-token");
    assert_problem(
        malformed.get("/V2/1000/devices").await,
        401,
        "token_malformed",
    )
    .await;
    let unknown = app.bearer(&format!("st_{}", "A".repeat(43)));
    assert_problem(unknown.get("/V2/1000/devices").await, 401, "token_unknown").await;

    // Revoked: refused at once, and gone from the listing.
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/apitokens/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_problem(token.get("/V2/1000/devices").await, 401, "token_revoked").await;
    assert_eq!(app.admin.get_json("/V2/1000/apitokens").await, json!([]));
    assert_not_found(app.admin.delete(&format!("/V2/1000/apitokens/{id}")).await).await;

    // Expired: refused from its ExpiresAt on.
    let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_millis(1500);
    let expiring = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "expiring", "Permissions": ["Read"], "ExpiresAt": soon.to_string()}),
    )
    .await;
    let expiring = app.bearer(expiring["Token"].as_str().unwrap());
    assert_eq!(
        expiring.get("/V2/1000/devices").await.status(),
        StatusCode::OK
    );
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_problem(expiring.get("/V2/1000/devices").await, 401, "token_expired").await;
}

async fn a_token_is_recorded_as_the_actor(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let (_, alert_id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let created = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "console-bot", "Permissions": ["Read", "HandleAlerts"]}),
    )
    .await;
    let token = app.bearer(created["Token"].as_str().unwrap());
    let path = alert_path("1000", &alert_id);
    let acknowledged = token.post(&format!("{path}/acknowledge"), &json!({})).await;
    assert_eq!(acknowledged.status(), StatusCode::OK);
    let acknowledged: Value = acknowledged.json().await.unwrap();
    assert_eq!(acknowledged["AcknowledgedBy"], "token:console-bot");
    assert_eq!(
        app.admin.get_json(&path).await["AcknowledgedBy"],
        "token:console-bot"
    );
}

/// Two processes on one PostgreSQL database: a token created on one works on the other,
/// and once revoked (or expired) it is refused there on the very next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_revoked_token_is_refused_at_once_by_another_process() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let one = start_with(&database.url, &[]).await;
    let two = start_with(&database.url, &[]).await;
    let admin = Client::new(&one.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let created = create_token(
        &admin,
        "1000",
        &json!({"Name": "shared", "Permissions": ["Read"]}),
    )
    .await;
    let secret = created["Token"].as_str().unwrap();
    let on_two = Client::with_bearer(&two.base, secret);
    assert_eq!(
        on_two.get("/V2/1000/devices").await.status(),
        StatusCode::OK
    );
    let id = created["TokenId"].as_str().unwrap();
    assert_eq!(
        admin
            .delete(&format!("/V2/1000/apitokens/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_problem(on_two.get("/V2/1000/devices").await, 401, "token_revoked").await;

    let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_millis(1500);
    let expiring = create_token(
        &admin,
        "1000",
        &json!({"Name": "brief", "Permissions": ["Read"], "ExpiresAt": soon.to_string()}),
    )
    .await;
    let on_two = Client::with_bearer(&two.base, expiring["Token"].as_str().unwrap());
    assert_eq!(
        on_two.get("/V2/1000/devices").await.status(),
        StatusCode::OK
    );
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_problem(on_two.get("/V2/1000/devices").await, 401, "token_expired").await;
}
