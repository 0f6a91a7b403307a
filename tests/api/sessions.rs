//! Browser sessions (issue 31 part 3): `POST/GET/DELETE /auth/session`, the cookie's
//! attributes, the CSRF rule, idle and absolute expiry, `IsPortalEnabled`, sessions ended
//! by changes to their user, lockout through the session login, and live streams opened
//! with a cookie or a token that end when it does.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::Connection;

use safetrack::app::AppConfig;
use safetrack::auth::AuthConfig;

use crate::api_tokens::create_token;
use crate::common::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, PASSWORD, TestApp, assert_not_found,
    assert_problem, problem_fields, spawn_app_with,
};
use crate::mo_messages::register_device;
use crate::stream::{EventStream, post_report};
use crate::stream_access::ends_in_time;
use crate::{backend_fn_tests, backend_tests};

backend_tests!(
    a_session_logs_in_and_out,
    the_ui_language_falls_back_to_the_tenants,
    bad_logins_are_refused,
    cookie_writes_need_the_origin_and_the_csrf_token,
    portal_access_can_be_disabled,
    changes_to_the_user_end_its_sessions,
    portal_access_taken_away_ends_its_sessions,
    session_logins_count_towards_the_lockout,
    a_stream_opened_with_a_cookie_ends_with_its_session,
    a_stream_opened_with_a_token_ends_when_it_is_revoked,
);

/// The scenarios that start apps of their own (with their own session flags).
mod own_apps {
    use super::*;

    backend_fn_tests!(
        an_idle_session_ends,
        a_session_ends_at_its_lifetime,
        cookies_are_secure_behind_an_https_proxy,
    );
}

/// A successful login: the cookie's value, the whole `Set-Cookie` header, the body.
struct Login {
    cookie: String,
    set_cookie: String,
    body: Value,
}

impl Login {
    fn client(&self, app: &TestApp) -> Client {
        Client::with_session(
            &app.base,
            &self.cookie,
            self.body["CsrfToken"].as_str().unwrap(),
        )
    }
}

async fn post_login(app: &TestApp, username: &str, password: &str) -> reqwest::Response {
    app.anonymous()
        .post(
            "/auth/session",
            &json!({"Username": username, "Password": password}),
        )
        .await
}

async fn login(app: &TestApp, username: &str, password: &str) -> Login {
    let response = post_login(app, username, password).await;
    assert_eq!(response.status(), StatusCode::OK, "login {username}");
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    let cookie = set_cookie
        .strip_prefix("safetrack_session=")
        .and_then(|rest| rest.split(';').next())
        .expect("the session cookie")
        .to_string();
    Login {
        cookie,
        set_cookie,
        body: response.json().await.unwrap(),
    }
}

/// A portal user of tenant 1000 with `role`; its id.
async fn portal_user(app: &TestApp, email: &str, role: &str) -> String {
    let body = json!({"Username": email, "Password": PASSWORD, "UserRoleId": role,
                      "IsPortalEnabled": true, "FirstName": "Pat", "LastName": "Doe"});
    let response = app.admin.post("/V2/1000/users", &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

async fn session_rows(app: &TestApp) -> Vec<(String,)> {
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(app.database_url())
        .await
        .expect("connect");
    sqlx::query_as("SELECT id_hash FROM sessions")
        .fetch_all(&mut db)
        .await
        .expect("sessions")
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A cookie request built by hand (no Origin, no CSRF token unless added).
fn raw(app: &TestApp, method: Method, path: &str, cookie: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .request(method, format!("{}{path}", app.base))
        .header("cookie", format!("safetrack_session={cookie}"))
}

async fn a_session_logs_in_and_out(app: TestApp) {
    let id = portal_user(&app, "pat@example.com", "Manager").await;
    let profile = json!({"TimeZoneId": "Europe/Paris", "CultureName": "fr-FR", "UiLanguage": "fr"});
    let saved = app
        .admin
        .put(&format!("/V2/1000/userprofile/{id}"), &profile)
        .await;
    assert_eq!(saved.status(), StatusCode::OK);
    let session = login(&app, "pat@example.com", PASSWORD).await;

    // The cookie: HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP.
    let attributes: Vec<&str> = session.set_cookie.split(';').map(str::trim).collect();
    for wanted in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(attributes.contains(&wanted), "{attributes:?}");
    }
    assert!(!attributes.contains(&"Secure"), "{attributes:?}");
    // Stored only as a hash.
    assert_eq!(session_rows(&app).await, [(sha256_hex(&session.cookie),)]);

    let body = &session.body;
    assert_eq!(body["UserId"], id.as_str());
    assert_eq!(body["Username"], "pat@example.com");
    assert_eq!(body["FirstName"], "Pat");
    assert_eq!(body["TenantCode"], "1000");
    assert_eq!(body["UserRoleId"], "Manager");
    assert_eq!(body["TimeZoneId"], "Europe/Paris");
    assert_eq!(body["CultureName"], "fr-FR");
    assert_eq!(body["UiLanguage"], "fr");
    assert!(
        body["Permissions"]
            .as_array()
            .unwrap()
            .contains(&json!("ManageUsers"))
    );
    assert!(body["CsrfToken"].is_string());

    // GET with the cookie answers the same caller and the same CSRF token (a reloaded
    // page learns it again); with Basic there is no token to give. The cookie works on
    // /V2 and for writes with the token.
    let browser = session.client(&app);
    let me = browser.get_json("/auth/session").await;
    assert_eq!(&me, body);
    let basic = Client::new(&app.base, Some(("pat@example.com", PASSWORD)))
        .get_json("/auth/session")
        .await;
    assert!(basic.get("CsrfToken").is_none(), "{basic}");
    assert_eq!(
        browser.get("/V2/1000/devices").await.status(),
        StatusCode::OK
    );
    let device = json!({"DeviceId": "van-9", "DeviceType": "InReach"});
    assert_eq!(
        browser.post("/V2/1000/devices", &device).await.status(),
        StatusCode::OK
    );

    // Logout: gone on the server, the cookie cleared.
    let out = browser.delete("/auth/session").await;
    assert_eq!(out.status(), StatusCode::OK);
    let cleared = out.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cleared.starts_with("safetrack_session=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
    assert!(session_rows(&app).await.is_empty());
    assert_problem(browser.get("/auth/session").await, 401, "session_unknown").await;
    assert_problem(
        browser.get("/V2/1000/devices").await,
        401,
        "session_unknown",
    )
    .await;
}

/// Without a profile language the tenant's `DefaultUiLanguage` is the UI language.
async fn the_ui_language_falls_back_to_the_tenants(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000",
            &json!({"Description": "Berlin", "DefaultUiLanguage": "de"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let tenant: Value = response.json().await.unwrap();
    let code = tenant["TenantCode"].as_str().unwrap();
    let body = json!({"Username": "hans@example.com", "Password": PASSWORD, "UserRoleId": "User",
                      "IsPortalEnabled": true});
    assert_eq!(
        app.admin
            .post(&format!("/V2/{code}/users"), &body)
            .await
            .status(),
        StatusCode::OK
    );
    let session = login(&app, "hans@example.com", PASSWORD).await;
    assert_eq!(session.body["UiLanguage"], "de");
    assert_eq!(session.body["TenantCode"], code);
    assert!(session.body["TimeZoneId"].is_null());
}

async fn bad_logins_are_refused(app: TestApp) {
    let response = app
        .anonymous()
        .post("/auth/session", &json!({"Username": ADMIN_EMAIL}))
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Password"]);
    assert_problem(
        post_login(&app, ADMIN_EMAIL, "wrong-password-1").await,
        401,
        "unauthorized",
    )
    .await;
    assert_problem(
        post_login(&app, "nobody@example.com", "wrong-password-1").await,
        401,
        "unauthorized",
    )
    .await;
    assert_problem(
        app.anonymous().get("/auth/session").await,
        401,
        "unauthorized",
    )
    .await;
    assert_problem(
        raw(&app, Method::GET, "/auth/session", "made-up")
            .send()
            .await
            .unwrap(),
        401,
        "session_unknown",
    )
    .await;
    assert!(session_rows(&app).await.is_empty());
    // Basic callers may ask who they are too.
    assert_eq!(
        app.admin.get_json("/auth/session").await["Username"],
        ADMIN_EMAIL
    );
}

async fn cookie_writes_need_the_origin_and_the_csrf_token(app: TestApp) {
    let session = login(&app, ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let csrf = session.body["CsrfToken"].as_str().unwrap();
    let device = json!({"DeviceId": "van-1", "DeviceType": "InReach"});
    let path = "/V2/1000/devices";
    let origin = app.base.clone();
    let refusals = [
        // No X-CSRF-Token.
        raw(&app, Method::POST, path, &session.cookie).header("origin", &origin),
        // A wrong one.
        raw(&app, Method::POST, path, &session.cookie)
            .header("origin", &origin)
            .header("x-csrf-token", "nope"),
        // From a foreign origin.
        raw(&app, Method::POST, path, &session.cookie)
            .header("origin", "https://evil.example")
            .header("x-csrf-token", csrf),
        // A cross-site fetch.
        raw(&app, Method::POST, path, &session.cookie)
            .header("sec-fetch-site", "cross-site")
            .header("x-csrf-token", csrf),
        // Saying nothing of where it comes from.
        raw(&app, Method::POST, path, &session.cookie).header("x-csrf-token", csrf),
    ];
    for request in refusals {
        let response = request.json(&device).send().await.unwrap();
        assert_problem(response, 403, "forbidden").await;
    }
    assert_eq!(app.admin.get_json(path).await, json!([]));
    // Reads need neither; a same-origin write with the token passes.
    let read = raw(&app, Method::GET, path, &session.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    let write = raw(&app, Method::POST, path, &session.cookie)
        .header("sec-fetch-site", "same-origin")
        .header("origin", &origin)
        .header("x-csrf-token", csrf)
        .json(&device)
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), StatusCode::OK);
    // Basic is not affected.
    let other = json!({"DeviceId": "van-2", "DeviceType": "InReach"});
    assert_eq!(app.admin.post(path, &other).await.status(), StatusCode::OK);
}

async fn portal_access_can_be_disabled(app: TestApp) {
    let (_, basic) = app
        .create_user("1000", "api-only@example.com", "User")
        .await;
    let refused = post_login(&app, "api-only@example.com", PASSWORD).await;
    let problem = assert_problem(refused, 403, "forbidden").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("IsPortalEnabled"),
        "{problem}"
    );
    assert!(session_rows(&app).await.is_empty());
    assert_eq!(basic.get("/V2/1000/devices").await.status(), StatusCode::OK);
}

async fn changes_to_the_user_end_its_sessions(app: TestApp) {
    let id = portal_user(&app, "pat@example.com", "Manager").await;
    let path = format!("/V2/1000/users/{id}");
    let base =
        json!({"Username": "pat@example.com", "UserRoleId": "Manager", "IsPortalEnabled": true});
    // A change that keeps the access keeps the session.
    let kept = login(&app, "pat@example.com", PASSWORD).await.client(&app);
    let mut harmless = base.clone();
    harmless["LastName"] = json!("Kept");
    assert_eq!(
        app.admin.put(&path, &harmless).await.status(),
        StatusCode::OK
    );
    assert_eq!(kept.get("/auth/session").await.status(), StatusCode::OK);

    let mut password = base.clone();
    password["Password"] = json!("a brand new password");
    let mut role = base.clone();
    role["UserRoleId"] = json!("User");
    let mut disabled = base.clone();
    disabled["IsDisabled"] = json!(true);
    let mut current_password = PASSWORD;
    for change in [password, role, disabled] {
        let browser = login(&app, "pat@example.com", current_password)
            .await
            .client(&app);
        assert_eq!(
            app.admin.put(&path, &change).await.status(),
            StatusCode::OK,
            "{change}"
        );
        if change.get("Password").is_some() {
            current_password = "a brand new password";
        }
        assert_problem(browser.get("/auth/session").await, 401, "session_unknown").await;
        assert!(session_rows(&app).await.is_empty(), "{change}");
    }
    let browser = {
        let mut enabled = base.clone();
        enabled["UserRoleId"] = json!("User");
        assert_eq!(
            app.admin.put(&path, &enabled).await.status(),
            StatusCode::OK
        );
        login(&app, "pat@example.com", current_password)
            .await
            .client(&app)
    };
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_problem(browser.get("/auth/session").await, 401, "session_unknown").await;
}

/// Issue 42: `IsPortalEnabled = false` ended no session, so a browser kept writing.
async fn portal_access_taken_away_ends_its_sessions(app: TestApp) {
    let id = portal_user(&app, "pat@example.com", "Manager").await;
    let path = format!("/V2/1000/users/{id}");
    let by_put = login(&app, "pat@example.com", PASSWORD).await.client(&app);
    let off = json!({"Username": "pat@example.com", "UserRoleId": "Manager",
                     "IsPortalEnabled": false});
    assert_eq!(app.admin.put(&path, &off).await.status(), StatusCode::OK);
    assert_problem(by_put.get("/auth/session").await, 401, "session_unknown").await;
    let write = by_put
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "kept-out", "DeviceType": "X"}),
        )
        .await;
    assert_problem(write, 401, "session_unknown").await;
    assert!(session_rows(&app).await.is_empty());

    // The same through JSON Patch, the console's way of changing one field.
    let on = json!([{"op": "replace", "path": "/IsPortalEnabled", "value": true}]);
    assert_eq!(app.admin.patch(&path, &on).await.status(), StatusCode::OK);
    let by_patch = login(&app, "pat@example.com", PASSWORD).await.client(&app);
    let off = json!([{"op": "replace", "path": "/IsPortalEnabled", "value": false}]);
    assert_eq!(app.admin.patch(&path, &off).await.status(), StatusCode::OK);
    assert_problem(
        by_patch.get("/V2/1000/devices").await,
        401,
        "session_unknown",
    )
    .await;
    assert!(session_rows(&app).await.is_empty());
    // Nothing was written by the ended session; the API stays open to the user.
    assert_not_found(app.admin.get("/V2/1000/devices/kept-out").await).await;
    let basic = app.client("pat@example.com", PASSWORD);
    assert_eq!(basic.get("/V2/1000/devices").await.status(), StatusCode::OK);
}

async fn session_logins_count_towards_the_lockout(app: TestApp) {
    portal_user(&app, "pat@example.com", "User").await;
    for _ in 0..5 {
        let wrong = post_login(&app, "pat@example.com", "wrong-password-x").await;
        assert_problem(wrong, 401, "unauthorized").await;
    }
    // Locked: the session login and HTTP Basic alike.
    assert_problem(
        post_login(&app, "pat@example.com", PASSWORD).await,
        401,
        "locked",
    )
    .await;
    let basic = app.client("pat@example.com", PASSWORD);
    assert_problem(basic.get("/V2/1000").await, 401, "locked").await;
    assert!(session_rows(&app).await.is_empty());
}

async fn a_stream_opened_with_a_cookie_ends_with_its_session(app: TestApp) {
    register_device(&app, "1000", "van-3").await;
    let browser = login(&app, ADMIN_EMAIL, ADMIN_PASSWORD).await.client(&app);
    let mut stream = EventStream::open(&browser, "/V2/1000/stream", None).await;
    let message = post_report(&app, "1000", "van-3", 1).await;
    assert_eq!(stream.expect().await.data["MessageId"], message);
    stream.expect().await;
    assert_eq!(
        browser.delete("/auth/session").await.status(),
        StatusCode::OK
    );
    ends_in_time(&mut stream).await;
}

async fn a_stream_opened_with_a_token_ends_when_it_is_revoked(app: TestApp) {
    register_device(&app, "1000", "van-3").await;
    let created = create_token(
        &app.admin,
        "1000",
        &json!({"Name": "watcher", "Permissions": ["Read"]}),
    )
    .await;
    let token = app.bearer(created["Token"].as_str().unwrap());
    let mut stream = EventStream::open(&token, "/V2/1000/stream", None).await;
    let message = post_report(&app, "1000", "van-3", 1).await;
    assert_eq!(stream.expect().await.data["MessageId"], message);
    stream.expect().await;
    let id = created["TokenId"].as_str().unwrap();
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/apitokens/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
    ends_in_time(&mut stream).await;
}

fn with_sessions(idle: Duration, max: Duration) -> AppConfig {
    AppConfig {
        auth: AuthConfig {
            session_idle: idle,
            session_max: max,
            ..AuthConfig::default()
        },
        ..AppConfig::default()
    }
}

async fn an_idle_session_ends(backend: Backend) {
    let config = with_sessions(Duration::from_secs(2), Duration::from_secs(3600));
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    let browser = login(&app, ADMIN_EMAIL, ADMIN_PASSWORD).await.client(&app);
    // Used within the idle time, again and again: it stays.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(browser.get("/auth/session").await.status(), StatusCode::OK);
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_problem(browser.get("/auth/session").await, 401, "session_idle").await;
    assert!(session_rows(&app).await.is_empty());
}

async fn a_session_ends_at_its_lifetime(backend: Backend) {
    let config = with_sessions(Duration::from_secs(3600), Duration::from_secs(2));
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    let session = login(&app, ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert!(
        session.set_cookie.contains("Max-Age=2"),
        "{}",
        session.set_cookie
    );
    let browser = session.client(&app);
    assert_eq!(browser.get("/auth/session").await.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_problem(browser.get("/auth/session").await, 401, "session_expired").await;
}

async fn cookies_are_secure_behind_an_https_proxy(backend: Backend) {
    let config = AppConfig {
        trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
        ..AppConfig::default()
    };
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    let login = |proto: &'static str| {
        app.anonymous()
            .request(Method::POST, "/auth/session")
            .header("x-forwarded-proto", proto)
            .json(&json!({"Username": ADMIN_EMAIL, "Password": ADMIN_PASSWORD}))
            .send()
    };
    let https = login("https").await.unwrap();
    assert_eq!(https.status(), StatusCode::OK);
    let cookie = https.headers()["set-cookie"].to_str().unwrap();
    assert!(cookie.split(';').any(|a| a.trim() == "Secure"), "{cookie}");
    let http = login("http").await.unwrap();
    let cookie = http.headers()["set-cookie"].to_str().unwrap();
    assert!(!cookie.contains("Secure"), "{cookie}");

    // Not behind a trusted proxy: the header is nobody's word.
    let Some(direct) = spawn_app_with(backend, AppConfig::default()).await else {
        return;
    };
    let response = direct
        .anonymous()
        .request(Method::POST, "/auth/session")
        .header("x-forwarded-proto", "https")
        .json(&json!({"Username": ADMIN_EMAIL, "Password": ADMIN_PASSWORD}))
        .send()
        .await
        .unwrap();
    let cookie = response.headers()["set-cookie"].to_str().unwrap();
    assert!(!cookie.contains("Secure"), "{cookie}");
}
