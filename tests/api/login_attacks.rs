//! Security audit (issue 30): guessing bursts, the cap on password verifications, and
//! what a locked account answers.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use safetrack::app::AppConfig;
use safetrack::auth::AuthConfig;
use safetrack::domain::lockout::LockoutPolicy;

use crate::backend_fn_tests;
use crate::common::{Backend, PASSWORD, TestApp, assert_problem, spawn_app_with};

backend_fn_tests!(
    parallel_guesses_verify_at_most_the_threshold,
    a_burst_past_the_cap_is_answered_429_at_once,
    the_429_answer_changes_nothing_stored,
    a_success_does_not_erase_failures,
    a_locked_account_tells_only_the_right_password,
);

fn config(threshold: u32, max_concurrent_checks: usize) -> AppConfig {
    AppConfig {
        auth: AuthConfig {
            lockout: LockoutPolicy {
                threshold,
                ..LockoutPolicy::default()
            },
            max_concurrent_checks,
            ..AuthConfig::default()
        },
        ..AppConfig::default()
    }
}

/// `count` logins from 127.0.0.2 at once, attempt `i` with `credentials(i)`.
async fn burst(
    app: &TestApp,
    count: usize,
    credentials: impl Fn(usize) -> (String, String),
) -> Vec<reqwest::Response> {
    let attempts = (0..count).map(|i| {
        let (username, password) = credentials(i);
        let client = app.client_from("127.0.0.2", &username, &password);
        async move { client.get("/V2/1000").await }
    });
    futures::future::join_all(attempts).await
}

/// 150 guesses at once, the right password among them: at most the threshold of them
/// are verified (plus the lock's one probe), and the right password racing the guesses
/// clears none of their failures. Which attempts take the five places is the scheduler's
/// choice: when the right password is among them it gets in and gives back only its own
/// place (four failures, no lock, if every other guess was refused meanwhile); otherwise
/// the address locks and the right password does not get in.
async fn parallel_guesses_verify_at_most_the_threshold(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(5, 1000)).await else {
        return;
    };
    let (id, _) = app.create_user("1000", "race@example.com", "User").await;
    let responses = burst(&app, 150, |i| {
        let password = match i {
            75 => PASSWORD.to_string(),
            _ => format!("wrong-password-{i}"),
        };
        ("race@example.com".to_string(), password)
    })
    .await;
    let statuses: Vec<StatusCode> = responses.iter().map(|r| r.status()).collect();
    // On a loaded machine the burst can outlast the pool's acquire timeout: those
    // attempts are told to retry (503) and were never admitted.
    let mut unexpected = Vec::new();
    for response in responses {
        match response.status() {
            StatusCode::OK | StatusCode::UNAUTHORIZED => {}
            StatusCode::SERVICE_UNAVAILABLE => {
                assert!(response.headers().contains_key("retry-after"));
            }
            _ => unexpected.push(response.text().await.unwrap_or_default()),
        }
    }
    assert!(unexpected.is_empty(), "{statuses:?} {unexpected:?}");
    let right_got_in = match statuses.iter().filter(|s| **s == StatusCode::OK).count() {
        0 => false,
        1 => true,
        more => panic!("{more} logins succeeded"),
    };
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    let verified_wrong = record["FailedPasswordAttemptCount"].as_i64().unwrap();
    let fewest = if right_got_in { 4 } else { 5 };
    assert!(
        (fewest..=6).contains(&verified_wrong),
        "{verified_wrong} wrong passwords verified (right password got in: {right_got_in})"
    );
    if !right_got_in {
        assert!(record["LastLockoutDate"].is_string());
        // The address stays locked: the right password does not get in.
        let owner = app.client_from("127.0.0.2", "race@example.com", PASSWORD);
        assert_eq!(
            owner.get("/V2/1000").await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
}

/// A right password gives back only its own place: failures before it still count.
async fn a_success_does_not_erase_failures(backend: Backend) {
    let Some(app) = spawn_app_with(backend, AppConfig::default()).await else {
        return;
    };
    let (id, _) = app.create_user("1000", "keep@example.com", "User").await;
    let bad = app.client_from("127.0.0.2", "keep@example.com", "wrong-password-x");
    for _ in 0..4 {
        assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
    }
    let good = app.client_from("127.0.0.2", "keep@example.com", PASSWORD);
    assert_eq!(good.get("/V2/1000").await.status(), StatusCode::OK);
    assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(record["FailedPasswordAttemptCount"], 5);
    assert!(record["LastLockoutDate"].is_string());
    assert!(record["LastLoggedIn"].is_string());
    assert_problem(good.get("/V2/1000").await, 401, "locked").await;
}

/// 50 logins of unknown users at once with one verification allowed: those past the cap
/// are answered 429 with `Retry-After` at once, and the server keeps answering.
async fn a_burst_past_the_cap_is_answered_429_at_once(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(5, 1)).await else {
        return;
    };
    let health = async {
        let client = reqwest::Client::new();
        let url = format!("{}/healthz", app.base);
        tokio::time::sleep(Duration::from_millis(20)).await;
        tokio::time::timeout(Duration::from_secs(5), client.get(url).send())
            .await
            .expect("/healthz within 5 s")
            .expect("/healthz")
            .status()
    };
    let logins = burst(&app, 50, |i| {
        (
            format!("nobody-{i}@example.com"),
            format!("some-password-{i}"),
        )
    });
    let (responses, health) = tokio::join!(logins, health);
    assert_eq!(health, StatusCode::OK);
    let mut limited = 0;
    for response in responses {
        match response.status() {
            StatusCode::TOO_MANY_REQUESTS => {
                assert_eq!(response.headers()["retry-after"], "1");
                limited += 1;
                assert_problem(response, 429, "rate_limited").await;
            }
            status => assert_eq!(status, StatusCode::UNAUTHORIZED),
        }
    }
    assert!(limited > 0, "no login was refused for want of a permit");
}

/// A login answered 429 verified nothing and stored nothing: the failures stored are
/// exactly the 401s.
async fn the_429_answer_changes_nothing_stored(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(100, 1)).await else {
        return;
    };
    let (id, _) = app.create_user("1000", "capped@example.com", "User").await;
    let responses = burst(&app, 30, |i| {
        (
            "capped@example.com".to_string(),
            format!("wrong-password-{i}"),
        )
    })
    .await;
    let count = |status| responses.iter().filter(|r| r.status() == status).count();
    let (refused, limited) = (
        count(StatusCode::UNAUTHORIZED),
        count(StatusCode::TOO_MANY_REQUESTS),
    );
    assert_eq!(refused + limited, 30);
    assert!(limited > 0);
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(record["FailedPasswordAttemptCount"], refused as i64);
    assert!(record["LastLoggedIn"].is_null());
}

/// The problem's fields that say anything (the request id differs per request).
fn said(problem: &Value) -> Value {
    let mut problem = problem.clone();
    problem.as_object_mut().unwrap().remove("requestId");
    problem
}

/// Locked: a wrong password gets the same 401 as an unknown user; the right one is told
/// it is locked and until when.
async fn a_locked_account_tells_only_the_right_password(backend: Backend) {
    let Some(app) = spawn_app_with(backend, AppConfig::default()).await else {
        return;
    };
    let (id, _) = app.create_user("1000", "shut@example.com", "User").await;
    let unknown = app.client_from("127.0.0.2", "nobody@example.com", "wrong-password-x");
    let unknown = assert_problem(unknown.get("/V2/1000").await, 401, "unauthorized").await;
    let bad = app.client_from("127.0.0.2", "shut@example.com", "wrong-password-x");
    for _ in 0..5 {
        let wrong = assert_problem(bad.get("/V2/1000").await, 401, "unauthorized").await;
        assert_eq!(said(&wrong), said(&unknown));
    }
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert!(record["LastLockoutDate"].is_string());
    // The lock's one verification: the right password is told, and told again.
    let owner = app.client_from("127.0.0.2", "shut@example.com", PASSWORD);
    let locked_at: jiff::Timestamp = record["LastLockoutDate"].as_str().unwrap().parse().unwrap();
    for _ in 0..2 {
        let locked = assert_problem(owner.get("/V2/1000").await, 401, "locked").await;
        let detail = locked["detail"].as_str().unwrap();
        let until: jiff::Timestamp = detail.rsplit(' ').next().unwrap().parse().unwrap();
        assert_eq!(until, locked_at + jiff::SignedDuration::from_mins(15));
    }
    // Anyone else learns nothing.
    let other = app.client_from("127.0.0.2", "shut@example.com", "another-wrong-one");
    for client in [&bad, &other] {
        let wrong = client.get("/V2/1000").await;
        assert_eq!(
            wrong.headers()["www-authenticate"],
            "Basic realm=\"safetrack\", charset=\"UTF-8\""
        );
        let wrong = assert_problem(wrong, 401, "unauthorized").await;
        assert_eq!(said(&wrong), said(&unknown));
    }
    let record = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(
        record["FailedPasswordAttemptCount"], 5,
        "nothing more verified"
    );
    let elsewhere = app.client_from("127.0.0.3", "shut@example.com", PASSWORD);
    assert_eq!(elsewhere.get("/V2/1000").await.status(), StatusCode::OK);
}
