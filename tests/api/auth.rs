use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;

use safetrack::app::AppConfig;
use safetrack::auth::AuthConfig;

use crate::backend_tests;
use crate::common::{Backend, PASSWORD, TestApp, assert_problem, spawn_app_with};

backend_tests!(
    missing_or_wrong_credentials_are_401_with_challenge,
    malformed_authorization_headers_are_401,
    five_failures_lock_the_account,
    successful_login_is_recorded,
    lockout_is_per_client_address,
    a_cached_credential_does_not_bypass_a_lock,
    parallel_failures_are_all_counted,
    parallel_first_logins_all_succeed,
    disabled_accounts_cannot_log_in,
    read_only_users_read_but_do_not_write,
);

async fn missing_or_wrong_credentials_are_401_with_challenge(app: TestApp) {
    let anonymous = app.anonymous().get("/V2/1000").await;
    assert_eq!(
        anonymous.headers()["www-authenticate"].to_str().unwrap(),
        "Basic realm=\"safetrack\", charset=\"UTF-8\""
    );
    assert_problem(anonymous, 401, "unauthorized").await;
    let wrong = app
        .client("admin@safetrack.test", "not-the-password")
        .get("/V2/1000")
        .await;
    let wrong = assert_problem(wrong, 401, "unauthorized").await;
    let unknown = app
        .client("nobody@example.com", "whatever-password")
        .get("/V2/1000")
        .await;
    let unknown = assert_problem(unknown, 401, "unauthorized").await;
    assert_eq!(
        wrong["detail"], unknown["detail"],
        "no username enumeration"
    );
}

async fn malformed_authorization_headers_are_401(app: TestApp) {
    for header in [
        "Basic",
        "Basic !!!not-base64",
        "Basic dXNlcm9ubHk=",
        "Basic OnBhc3N3b3Jk",
    ] {
        let response = app
            .anonymous()
            .request(Method::GET, "/V2/1000")
            .header("authorization", header)
            .send()
            .await
            .unwrap();
        assert_problem(response, 401, "unauthorized").await;
    }
    // A bearer credential that is no API token is told so.
    let response = app
        .anonymous()
        .request(Method::GET, "/V2/1000")
        .header("authorization", "Bearer abc")
        .send()
        .await
        .unwrap();
    assert_problem(response, 401, "token_malformed").await;
}

async fn five_failures_lock_the_account(app: TestApp) {
    let (id, good) = app.create_user("1000", "lock@example.com", "User").await;
    let bad = app.client("lock@example.com", "wrong-password-x");
    for _ in 0..4 {
        assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
    }
    // The fifth wrong password locks; only the right one is told so.
    assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
    // Even the right password is refused while locked.
    let locked = assert_problem(good.get("/V2/1000").await, 401, "locked").await;
    assert!(locked["detail"].as_str().unwrap().contains("locked"));
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(record["FailedPasswordAttemptCount"], 5);
    assert!(record["FailedPasswordAttemptWindowStart"].is_string());
    assert!(record["LastLockoutDate"].is_string());
}

async fn successful_login_is_recorded(app: TestApp) {
    let (id, user) = app.create_user("1000", "seen@example.com", "User").await;
    let bad = app.client("seen@example.com", "wrong-password-x");
    assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
    let before = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert!(before["LastLoggedIn"].is_null());
    assert_eq!(before["FailedPasswordAttemptCount"], 1);
    assert_eq!(user.get("/V2/1000").await.status(), StatusCode::OK);
    let after = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert!(after["LastLoggedIn"].is_string());
    // The account summary keeps showing failures within the window (from any address).
    assert_eq!(after["FailedPasswordAttemptCount"], 1);
}

/// Failures from one address lock the account for that address only: a stranger cannot
/// lock the owner out.
async fn lockout_is_per_client_address(app: TestApp) {
    let (id, _) = app.create_user("1000", "owner@example.com", "User").await;
    let stranger = app.client_from("127.0.0.2", "owner@example.com", "wrong-password-x");
    for _ in 0..5 {
        assert_problem(stranger.get("/V2/1000").await, 401, "unauthorized").await;
    }
    // The right password from the stranger's address is refused too…
    let guesser = app.client_from("127.0.0.2", "owner@example.com", PASSWORD);
    assert_problem(guesser.get("/V2/1000").await, 401, "locked").await;
    // …but the owner, from another address, gets in.
    let owner = app.client_from("127.0.0.3", "owner@example.com", PASSWORD);
    assert_eq!(owner.get("/V2/1000").await.status(), StatusCode::OK);
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(record["FailedPasswordAttemptCount"], 5);
    assert!(record["FailedPasswordAttemptWindowStart"].is_string());
    assert!(record["LastLockoutDate"].is_string());
    assert!(record["LastLoggedIn"].is_string());
}

/// A credential verified (and cached) before the lock does not open the locked address.
async fn a_cached_credential_does_not_bypass_a_lock(app: TestApp) {
    app.create_user("1000", "cached@example.com", "User").await;
    let good = app.client_from("127.0.0.2", "cached@example.com", PASSWORD);
    assert_eq!(good.get("/V2/1000").await.status(), StatusCode::OK);
    let bad = app.client_from("127.0.0.2", "cached@example.com", "wrong-password-x");
    for _ in 0..8 {
        bad.get("/V2/1000").await;
    }
    assert_problem(good.get("/V2/1000").await, 401, "locked").await;
    let elsewhere = app.client_from("127.0.0.3", "cached@example.com", PASSWORD);
    assert_eq!(elsewhere.get("/V2/1000").await.status(), StatusCode::OK);
}

/// Parallel failures are all counted: the threshold holds under a guessing burst.
async fn parallel_failures_are_all_counted(app: TestApp) {
    let (id, _) = app.create_user("1000", "burst@example.com", "User").await;
    let bad = app.client_from("127.0.0.2", "burst@example.com", "wrong-password-x");
    let attempts = (0..4).map(|_| {
        let bad = bad.clone();
        async move { bad.get("/V2/1000").await.status() }
    });
    let statuses = futures::future::join_all(attempts).await;
    assert!(statuses.iter().all(|s| *s == StatusCode::UNAUTHORIZED));
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(record["FailedPasswordAttemptCount"], 4);
    assert!(record["LastLockoutDate"].is_null());
    // A burst past the threshold: one more place is left, then the lock's one probe;
    // the rest verify nothing.
    let attempts = (0..6).map(|_| {
        let bad = bad.clone();
        async move { bad.get("/V2/1000").await.status() }
    });
    futures::future::join_all(attempts).await;
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert!(record["LastLockoutDate"].is_string());
    let count = record["FailedPasswordAttemptCount"].as_i64().unwrap();
    assert!((5..=6).contains(&count), "count {count}");
    // The lock's one verification went to a guess: the right password is refused like
    // a wrong one.
    let good = app.client_from("127.0.0.2", "burst@example.com", PASSWORD);
    assert_problem(good.get("/V2/1000").await, 401, "unauthorized").await;
}

async fn disabled_accounts_cannot_log_in(app: TestApp) {
    let (id, user) = app.create_user("1000", "off@example.com", "User").await;
    assert_eq!(user.get("/V2/1000").await.status(), StatusCode::OK);
    let response = app
        .admin
        .patch(
            &format!("/V2/1000/users/{id}"),
            &json!([{"op": "replace", "path": "/IsDisabled", "value": true}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // The cached credential was dropped with the change.
    assert_problem(user.get("/V2/1000").await, 401, "account_disabled").await;
    let wrong = app.client("off@example.com", "wrong-password-x");
    assert_problem(wrong.get("/V2/1000").await, 401, "unauthorized").await;
}

async fn read_only_users_read_but_do_not_write(app: TestApp) {
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    assert_eq!(reader.get("/V2/1000").await.status(), StatusCode::OK);
    assert_eq!(reader.get("/V2/1000/users").await.status(), StatusCode::OK);
    let problem = assert_problem(
        reader
            .post(
                "/V2/1000/users",
                &json!({"Username": "n@example.com", "Password": PASSWORD}),
            )
            .await,
        403,
        "forbidden",
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("ManageUsers"));
}

/// The lockout policy is configurable; with a short lock the account opens again.
#[tokio::test]
async fn lockout_policy_is_configurable_and_expires() {
    let config = AppConfig {
        auth: AuthConfig {
            lockout: safetrack::domain::lockout::LockoutPolicy {
                threshold: 2,
                window: jiff::SignedDuration::from_mins(15),
                duration: jiff::SignedDuration::from_secs(1),
            },
            ..AuthConfig::default()
        },
        ..AppConfig::default()
    };
    let app = spawn_app_with(Backend::Sqlite, config).await.unwrap();
    let (_, good) = app.create_user("1000", "short@example.com", "User").await;
    let bad = app.client("short@example.com", "wrong-password-x");
    assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
    assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
    assert_problem(good.get("/V2/1000").await, 401, "locked").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(good.get("/V2/1000").await.status(), StatusCode::OK);
}

/// Behind a trusted proxy, `X-Forwarded-For` names the client; from anyone else it is ignored.
#[tokio::test]
async fn forwarded_for_is_believed_only_from_a_trusted_proxy() {
    let config = AppConfig {
        trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
        ..AppConfig::default()
    };
    let app = spawn_app_with(Backend::Sqlite, config).await.unwrap();
    app.create_user("1000", "proxied@example.com", "User").await;
    let via_proxy = |forwarded: &'static str, password: &'static str| {
        app.client_from("127.0.0.1", "proxied@example.com", password)
            .request(Method::GET, "/V2/1000")
            .header("x-forwarded-for", forwarded)
            .send()
    };
    for _ in 0..5 {
        via_proxy("203.0.113.7", "wrong-password-x").await.unwrap();
    }
    let locked = via_proxy("203.0.113.7", PASSWORD).await.unwrap();
    assert_problem(locked, 401, "locked").await;
    let other = via_proxy("198.51.100.1", PASSWORD).await.unwrap();
    assert_eq!(other.status(), StatusCode::OK);

    // 127.0.0.2 is no trusted proxy: its header is ignored, its own address is locked.
    let direct = |forwarded: &'static str, password: &'static str| {
        app.client_from("127.0.0.2", "proxied@example.com", password)
            .request(Method::GET, "/V2/1000")
            .header("x-forwarded-for", forwarded)
            .send()
    };
    for i in 0..5 {
        let spoofed = [
            "192.0.2.1",
            "192.0.2.2",
            "192.0.2.3",
            "192.0.2.4",
            "192.0.2.5",
        ][i];
        direct(spoofed, "wrong-password-x").await.unwrap();
    }
    let locked = direct("192.0.2.99", PASSWORD).await.unwrap();
    assert_problem(locked, 401, "locked").await;
}

/// Eight requests with a credential nobody has used yet arrive at once: the first
/// verifies it (the others wait for that one check) and every request is answered 200.
async fn parallel_first_logins_all_succeed(app: TestApp) {
    let (_, user) = app
        .create_user("1000", "parallel@example.com", "Administrator")
        .await;
    let requests = (0..8).map(|_| user.get("/V2/1000"));
    for response in futures::future::join_all(requests).await {
        assert_eq!(response.status(), StatusCode::OK);
    }
}
