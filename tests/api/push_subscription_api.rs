//! Web Push subscriptions (issue 46 §2): `POST/GET/DELETE /V2/{t}/pushsubscriptions` —
//! a user's, at a device assigned to them; one per endpoint (a re-POST updates it); at
//! most 10 per user; every bad value a 400 naming its field, with nothing stored.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::api_tokens::create_token;
use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    a_worker_subscribes_lists_and_unsubscribes,
    the_same_endpoint_again_updates_it,
    bad_subscriptions_name_their_field_and_store_nothing,
    the_device_must_be_the_callers,
    a_user_holds_at_most_ten,
    tokens_and_foreign_tenants_are_refused,
    administrators_see_everyones_without_their_endpoints,
);

const PATH: &str = "/V2/1000/pushsubscriptions";
/// A valid P-256 point and auth secret (RFC 8291's example subscriber's shapes).
pub const P256DH: &str =
    "BLn9b-VR0ca83knDNZ32dCHGyjJp-1riX9ZTN40MqV8K_LpQmLqxC_DoHvqvFXO_nGdAB4W9dogZb_sM-uV4JbY";
pub const AUTH: &str = "_ordMnz7uTCmrpBTeUV4Bw";

fn body(endpoint: &str) -> Value {
    json!({"Endpoint": endpoint, "Keys": {"P256dh": P256DH, "Auth": AUTH}})
}

/// A user of `tenant` with `role` and a device assigned to them; answers (user id,
/// client).
pub async fn worker_with_device(
    app: &TestApp,
    tenant: &str,
    email: &str,
    device: &str,
) -> (String, Client) {
    let (id, client) = app.create_user(tenant, email, "ReadOnly").await;
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices"),
            &json!({"DeviceId": device, "DeviceType": "Phone", "UserId": id}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create device {device}");
    (id, client)
}

async fn listed(client: &Client, path: &str) -> Vec<Value> {
    let response = client.get(path).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json::<Vec<Value>>().await.expect("list")
}

async fn a_worker_subscribes_lists_and_unsubscribes(app: TestApp) {
    let (user_id, worker) = worker_with_device(&app, "1000", "w@example.com", "phone-1").await;
    let endpoint = "https://push.example.net/send/abc";
    let response = worker.post(PATH, &body(endpoint)).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let created: Value = response.json().await.unwrap();
    let id = created["PushSubscriptionId"].as_str().unwrap().to_string();
    assert_eq!(location, format!("{PATH}/{id}"));
    assert_eq!(created["UserId"], user_id.as_str());
    assert_eq!(created["DeviceId"], "phone-1");
    assert_eq!(created["Endpoint"], endpoint);
    assert_eq!(created["EndpointOrigin"], "https://push.example.net");
    assert!(
        created.get("Keys").is_none(),
        "keys are never shown: {created}"
    );
    let list = listed(&worker, PATH).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["PushSubscriptionId"], id.as_str());
    // Another user sees none of it, and cannot delete it.
    let (_, other) = worker_with_device(&app, "1000", "o@example.com", "phone-2").await;
    assert!(listed(&other, PATH).await.is_empty());
    assert_not_found(other.delete(&format!("{PATH}/{id}")).await).await;
    assert_not_found(worker.delete(&format!("{PATH}/not-a-number")).await).await;
    let deleted = worker.delete(&format!("{PATH}/{id}")).await;
    assert_eq!(deleted.status(), StatusCode::OK);
    assert!(listed(&worker, PATH).await.is_empty());
    assert_not_found(worker.delete(&format!("{PATH}/{id}")).await).await;
}

async fn the_same_endpoint_again_updates_it(app: TestApp) {
    let (_, worker) = worker_with_device(&app, "1000", "w@example.com", "phone-1").await;
    let endpoint = "http://127.0.0.1:9/push/1";
    let first: Value = worker
        .post(PATH, &body(endpoint))
        .await
        .json()
        .await
        .unwrap();
    let again = worker
        .post(
            PATH,
            &json!({"Endpoint": endpoint, "DeviceId": "phone-1",
                    "Keys": {"P256dh": P256DH, "Auth": "AAAAAAAAAAAAAAAAAAAAAA=="}}),
        )
        .await;
    assert_eq!(again.status(), StatusCode::OK);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["PushSubscriptionId"], first["PushSubscriptionId"]);
    assert_eq!(listed(&worker, PATH).await.len(), 1);
    // The browser now used by someone else: the subscription is theirs.
    let (other_id, other) = worker_with_device(&app, "1000", "o@example.com", "phone-2").await;
    let moved = other.post(PATH, &body(endpoint)).await;
    assert_eq!(moved.status(), StatusCode::OK);
    let moved: Value = moved.json().await.unwrap();
    assert_eq!(moved["UserId"], other_id.as_str());
    assert_eq!(moved["DeviceId"], "phone-2");
    assert!(listed(&worker, PATH).await.is_empty());
}

async fn bad_subscriptions_name_their_field_and_store_nothing(app: TestApp) {
    let (_, worker) = worker_with_device(&app, "1000", "w@example.com", "phone-1").await;
    let long = format!("https://push.example.net/{}", "a".repeat(2000));
    let cases: Vec<(Value, &[&str])> = vec![
        (json!({}), &["Endpoint", "Keys.P256dh", "Keys.Auth"]),
        (body("http://push.example.net/x"), &["Endpoint"]),
        (body("ftp://push.example.net/x"), &["Endpoint"]),
        (body("not a url"), &["Endpoint"]),
        (body(&long), &["Endpoint"]),
        (
            json!({"Endpoint": "https://p.example/x", "Keys": {"P256dh": AUTH, "Auth": AUTH}}),
            &["Keys.P256dh"],
        ),
        (
            json!({"Endpoint": "https://p.example/x", "Keys": {"P256dh": P256DH, "Auth": "AAAA"}}),
            &["Keys.Auth"],
        ),
        (
            json!({"Endpoint": "https://p.example/x", "Keys": {"P256dh": "%%%", "Auth": "!"}}),
            &["Keys.P256dh", "Keys.Auth"],
        ),
        (
            json!({"Endpoint": "https://p.example/x", "DeviceId": "no such",
                   "Keys": {"P256dh": P256DH, "Auth": AUTH}}),
            &["DeviceId"],
        ),
    ];
    for (sent, fields) in cases {
        let problem =
            assert_problem(worker.post(PATH, &sent).await, 400, "validation_failed").await;
        let mut named = problem_fields(&problem);
        named.sort();
        let mut expected: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        expected.sort();
        assert_eq!(named, expected, "{sent} → {problem}");
    }
    let wrong_type = worker.post(PATH, &json!({"Endpoint": 5})).await;
    assert_eq!(wrong_type.status(), StatusCode::BAD_REQUEST);
    assert!(listed(&worker, PATH).await.is_empty());
    assert!(listed(&app.admin, PATH).await.is_empty());
}

async fn the_device_must_be_the_callers(app: TestApp) {
    let (_, worker) = worker_with_device(&app, "1000", "w@example.com", "phone-1").await;
    let (_, _other) = worker_with_device(&app, "1000", "o@example.com", "phone-2").await;
    let sent = json!({"Endpoint": "https://p.example/1", "DeviceId": "phone-2",
                      "Keys": {"P256dh": P256DH, "Auth": AUTH}});
    let problem = assert_problem(worker.post(PATH, &sent).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["DeviceId"]);
    // Nobody's device: no default.
    let (_, idle) = app
        .create_user("1000", "idle@example.com", "ReadOnly")
        .await;
    let problem = assert_problem(
        idle.post(PATH, &body("https://p.example/2")).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["DeviceId"]);
    // Two devices: name one.
    let (two_id, two) = worker_with_device(&app, "1000", "two@example.com", "phone-3").await;
    let second = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "phone-4", "DeviceType": "Phone", "UserId": two_id}),
        )
        .await;
    assert_eq!(second.status(), StatusCode::OK);
    let problem = assert_problem(
        two.post(PATH, &body("https://p.example/3")).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["DeviceId"]);
    let named = json!({"Endpoint": "https://p.example/3", "DeviceId": "phone-4",
                       "Keys": {"P256dh": P256DH, "Auth": AUTH}});
    let created = two.post(PATH, &named).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    assert_eq!(
        created.json::<Value>().await.unwrap()["DeviceId"],
        "phone-4"
    );
}

async fn a_user_holds_at_most_ten(app: TestApp) {
    let (_, worker) = worker_with_device(&app, "1000", "w@example.com", "phone-1").await;
    for n in 0..10 {
        let response = worker
            .post(PATH, &body(&format!("https://p.example/{n}")))
            .await;
        assert_eq!(response.status(), StatusCode::CREATED, "subscription {n}");
    }
    let problem = assert_problem(
        worker.post(PATH, &body("https://p.example/10")).await,
        409,
        "conflict",
    )
    .await;
    assert!(
        problem["detail"].as_str().unwrap().contains("10"),
        "{problem}"
    );
    // Updating one it holds is no new one.
    let again = worker.post(PATH, &body("https://p.example/3")).await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(listed(&worker, PATH).await.len(), 10);
}

async fn tokens_and_foreign_tenants_are_refused(app: TestApp) {
    let created = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "gateway", "Permissions": ["DeviceMessages", "Read"]}),
    )
    .await;
    let token = app.bearer(created["Token"].as_str().unwrap());
    assert_problem(
        token.post(PATH, &body("https://p.example/t")).await,
        403,
        "forbidden",
    )
    .await;
    assert_problem(token.get(PATH).await, 403, "forbidden").await;
    assert_problem(
        app.anonymous()
            .post(PATH, &body("https://p.example/a"))
            .await,
        401,
        "unauthorized",
    )
    .await;
    let unknown = app.bearer("st_not-a-token").get(PATH).await;
    assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
    // A user of a subtenant cannot reach the parent's; nobody reaches an unknown tenant.
    let child = app.create_tenant("1000", "Child").await;
    let (_, child_worker) = worker_with_device(&app, &child, "c@example.com", "phone-c").await;
    assert_not_found(child_worker.post(PATH, &body("https://p.example/c")).await).await;
    assert_not_found(child_worker.get(PATH).await).await;
    assert_not_found(app.admin.get("/V2/9999/pushsubscriptions").await).await;
    // In their own tenant it works, and the parent's list does not show it.
    let own = format!("/V2/{child}/pushsubscriptions");
    let response = child_worker.post(&own, &body("https://p.example/c")).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert!(listed(&app.admin, PATH).await.is_empty());
    assert_eq!(listed(&app.admin, &own).await.len(), 1);
}

async fn administrators_see_everyones_without_their_endpoints(app: TestApp) {
    let (_, worker) = worker_with_device(&app, "1000", "w@example.com", "phone-1").await;
    let created: Value = worker
        .post(PATH, &body("https://push.example.net/secret-token"))
        .await
        .json()
        .await
        .unwrap();
    let list = listed(&app.admin, PATH).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["Endpoint"], Value::Null, "{list:?}");
    assert_eq!(list[0]["EndpointOrigin"], "https://push.example.net");
    let id = created["PushSubscriptionId"].as_str().unwrap();
    let deleted = app.admin.delete(&format!("{PATH}/{id}")).await;
    assert_eq!(deleted.status(), StatusCode::OK);
    assert!(listed(&worker, PATH).await.is_empty());
}
