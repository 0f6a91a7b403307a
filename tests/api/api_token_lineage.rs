//! Tokens minted with tokens (issue 42): a child may not outlive its parent (its expiry
//! is capped at the parent's) and revoking the parent revokes its whole line; and only
//! a caller who may create and revoke tokens may list or read them.

use jiff::{SignedDuration, Timestamp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::api_tokens::create_token;
use crate::backend_tests;
use crate::common::{TestApp, assert_problem};

backend_tests!(
    a_minted_token_expires_no_later_than_its_parent,
    revoking_a_parent_revokes_its_line,
    only_token_managers_list_and_read_tokens,
);

fn expires_at(token: &Value) -> Option<Timestamp> {
    token["ExpiresAt"]
        .as_str()
        .map(|t| t.parse().expect("a timestamp"))
}

fn within_a_second(a: Option<Timestamp>, b: Timestamp) -> bool {
    a.is_some_and(|a| a.duration_since(b).abs() < SignedDuration::from_secs(1))
}

const MINTER: [&str; 2] = ["Read", "ManageConfiguration"];

async fn a_minted_token_expires_no_later_than_its_parent(app: TestApp) {
    let in_an_hour = Timestamp::now() + SignedDuration::from_hours(1);
    let parent = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "parent", "Permissions": MINTER, "ExpiresAt": in_an_hour.to_string()}),
    )
    .await;
    assert!(within_a_second(expires_at(&parent), in_an_hour), "{parent}");
    let minter = app.bearer(parent["Token"].as_str().expect("secret"));

    // Asked for no expiry, or a later one: the parent's.
    let open = create_token(
        &minter,
        "1000",
        &json!({"Name": "open", "Permissions": ["Read"]}),
    )
    .await;
    assert!(within_a_second(expires_at(&open), in_an_hour), "{open}");
    let later = Timestamp::now() + SignedDuration::from_hours(10);
    let long = create_token(
        &minter,
        "1000",
        &json!({"Name": "long", "Permissions": ["Read"], "ExpiresAt": later.to_string()}),
    )
    .await;
    assert!(within_a_second(expires_at(&long), in_an_hour), "{long}");
    // An earlier one is kept.
    let sooner = Timestamp::now() + SignedDuration::from_mins(30);
    let short = create_token(
        &minter,
        "1000",
        &json!({"Name": "short", "Permissions": ["Read"], "ExpiresAt": sooner.to_string()}),
    )
    .await;
    assert!(within_a_second(expires_at(&short), sooner), "{short}");
    // The listing says the same as the answers did.
    let listed = app.admin.get_json("/V2/1000/apitokens").await;
    let by_name = |name: &str| {
        listed
            .as_array()
            .and_then(|all| all.iter().find(|t| t["Name"] == name).cloned())
            .unwrap_or_default()
    };
    assert_eq!(by_name("long")["ExpiresAt"], long["ExpiresAt"]);
    // A user's token has no parent and keeps what it asked for.
    let own = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "own", "Permissions": ["Read"]}),
    )
    .await;
    assert_eq!(own["ExpiresAt"], Value::Null);
}

async fn revoking_a_parent_revokes_its_line(app: TestApp) {
    let parent = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "parent", "Permissions": MINTER}),
    )
    .await;
    let parent_client = app.bearer(parent["Token"].as_str().expect("secret"));
    let child = create_token(
        &parent_client,
        "1000",
        &json!({"Name": "child", "Permissions": MINTER}),
    )
    .await;
    let child_client = app.bearer(child["Token"].as_str().expect("secret"));
    let grandchild = create_token(
        &child_client,
        "1000",
        &json!({"Name": "grandchild", "Permissions": ["Read"]}),
    )
    .await;
    let grandchild_client = app.bearer(grandchild["Token"].as_str().expect("secret"));
    let sibling = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "sibling", "Permissions": ["Read"]}),
    )
    .await;
    let sibling_client = app.bearer(sibling["Token"].as_str().expect("secret"));

    // Revoking the child leaves its parent alone.
    let spare = create_token(
        &parent_client,
        "1000",
        &json!({"Name": "spare", "Permissions": ["Read"]}),
    )
    .await;
    let spare_id = spare["TokenId"].as_str().expect("id");
    let revoked = app
        .admin
        .delete(&format!("/V2/1000/apitokens/{spare_id}"))
        .await;
    assert_eq!(revoked.status(), StatusCode::OK);
    assert_eq!(
        parent_client.get("/V2/1000/devices").await.status(),
        StatusCode::OK
    );

    let parent_id = parent["TokenId"].as_str().expect("id");
    let revoked = app
        .admin
        .delete(&format!("/V2/1000/apitokens/{parent_id}"))
        .await;
    assert_eq!(revoked.status(), StatusCode::OK);
    for client in [&parent_client, &child_client, &grandchild_client] {
        assert_problem(client.get("/V2/1000/devices").await, 401, "token_revoked").await;
    }
    assert_eq!(
        sibling_client.get("/V2/1000/devices").await.status(),
        StatusCode::OK
    );
    let names: Vec<Value> = app
        .admin
        .get_json("/V2/1000/apitokens")
        .await
        .as_array()
        .map(|all| all.iter().map(|t| t["Name"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(names, vec![json!("sibling")]);
    // Each revocation has its audit entry.
    let entries = app
        .admin
        .get_all_pages("/V2/1000/auditlog?action=Revoke&resourceType=ApiToken")
        .await;
    let mut ids: Vec<String> = entries
        .iter()
        .filter_map(|e| e["ResourceId"].as_str().map(str::to_string))
        .collect();
    ids.sort();
    let mut expected: Vec<String> = [&parent, &child, &grandchild, &spare]
        .iter()
        .map(|t| t["TokenId"].as_str().expect("id").to_string())
        .collect();
    expected.sort();
    assert_eq!(ids, expected);
    // A revoked token mints nothing.
    let refused = child_client
        .post(
            "/V2/1000/apitokens",
            &json!({"Name": "late", "Permissions": ["Read"]}),
        )
        .await;
    assert_problem(refused, 401, "token_revoked").await;
}

async fn only_token_managers_list_and_read_tokens(app: TestApp) {
    let token = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "gateway", "Permissions": ["DeviceMessages"]}),
    )
    .await;
    let id = token["TokenId"].as_str().expect("id");
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    let read_token = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "reads", "Permissions": ["Read"]}),
    )
    .await;
    let read_token = app.bearer(read_token["Token"].as_str().expect("secret"));
    for (who, client) in [
        ("ReadOnly", &reader),
        ("User", &user),
        ("Read token", &read_token),
    ] {
        let listing = client.get("/V2/1000/apitokens").await;
        let problem = assert_problem(listing, 403, "forbidden").await;
        assert!(!problem.to_string().contains("gateway"), "{who}: {problem}");
        assert_problem(
            client.get(&format!("/V2/1000/apitokens/{id}")).await,
            403,
            "forbidden",
        )
        .await;
    }
    assert_eq!(
        app.admin.get("/V2/1000/apitokens").await.status(),
        StatusCode::OK
    );
}
