use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use safetrack::app::AppConfig;
use safetrack::channels::ChannelsConfig;

use crate::backend_tests;
use crate::common::{
    Backend, TestApp, assert_not_found, assert_problem, problem_fields, spawn_app_with,
};

backend_tests!(
    empty_settings_are_an_empty_object,
    put_then_get_never_returns_the_password,
    refused_urls_store_nothing,
    wrong_types_and_missing_fields_are_refused,
    credentials_are_checked_per_type,
    null_password_keeps_the_stored_secret,
    url_count_and_duplicates,
    if_match_is_honoured,
    sibling_404_and_permissions,
    a_kept_secret_goes_only_to_origins_that_had_it,
    a_kept_basic_password_follows_the_same_rule,
);

const PATH: &str = "/V2/1000/webhooks";

fn url(u: &str) -> Value {
    json!({"Url": u, "Device": true, "EventNotification": false, "MoMessage": true,
           "MtMessage": false, "Tenant": false, "User": true})
}

fn empty() -> Value {
    json!({"Urls": [], "Authentication": "None", "Username": null, "Password": null})
}

async fn empty_settings_are_an_empty_object(app: TestApp) {
    let got = app.admin.get_json(PATH).await;
    assert_eq!(got, empty());
    let child = app.create_tenant("1000", "Child").await;
    assert_eq!(
        app.admin.get_json(&format!("/V2/{child}/webhooks")).await,
        empty()
    );
}

async fn put_then_get_never_returns_the_password(app: TestApp) {
    let body = json!({
        "Urls": [url("https://hooks.example.com/a"), url("http://93.184.216.34:8080/b")],
        "Authentication": "basic",
        "Username": "hook-user",
        "Password": "hook-secret",
    });
    let response = app.admin.put(PATH, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = app.admin.get(PATH).await;
    assert!(response.headers().contains_key("etag"));
    let got: Value = response.json().await.unwrap();
    assert_eq!(got["Authentication"], "Basic");
    assert_eq!(got["Username"], "hook-user");
    assert!(got["Password"].is_null(), "{got}");
    assert_eq!(
        got["Urls"],
        json!([
            url("https://hooks.example.com/a"),
            url("http://93.184.216.34:8080/b")
        ])
    );
    // Not in XML either.
    let xml = app
        .admin
        .request(Method::GET, PATH)
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!xml.contains("hook-secret"), "{xml}");
    assert!(xml.contains("<WebhookSettings>"), "{xml}");
    // The XML as read goes back in unchanged; its null Password keeps the secret.
    let put = app
        .admin
        .request(Method::PUT, PATH)
        .header("content-type", "application/xml")
        .body(xml)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::OK);
    assert_eq!(app.admin.get_json(PATH).await, got);
}

/// Non-http(s) URLs and loopback/private literals and localhost: 400 naming the entry.
async fn refused_urls_store_nothing(app: TestApp) {
    for bad in [
        "ftp://example.com/hook",
        "http://127.0.0.1/hook",
        "http://10.0.0.1/hook",
        "http://[::1]:8080/hook",
        "http://localhost:9000/hook",
        "https://api.localhost/hook",
        "http://192.168.1.20/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook",
        "not a url",
        "/relative/hook",
        "https://user:pw@example.com/hook",
    ] {
        let body = json!({"Urls": [url("https://ok.example.com/"), url(bad)]});
        let problem =
            assert_problem(app.admin.put(PATH, &body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["Urls[1].Url"], "{bad}");
    }
    assert_eq!(app.admin.get_json(PATH).await, empty());
}

async fn wrong_types_and_missing_fields_are_refused(app: TestApp) {
    let cases = [
        (json!({"Urls": "https://example.com/"}), "Urls"),
        (
            json!({"Urls": [{"Url": "https://example.com/", "Device": "yes"}]}),
            "Urls[0].Device",
        ),
        (json!({"Urls": [{"Url": 5}]}), "Urls[0].Url"),
        (json!({"Urls": [{"Device": true}]}), "Urls[0].Url"),
        (json!({"Urls": [{"Url": ""}]}), "Urls[0].Url"),
        (json!({"Authentication": 1}), "Authentication"),
        (json!({"Authentication": "Digest"}), "Authentication"),
        (
            json!({"Authentication": "Bearer", "Password": 12345}),
            "Password",
        ),
    ];
    for (body, field) in cases {
        let problem =
            assert_problem(app.admin.put(PATH, &body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{body}");
    }
    assert_eq!(app.admin.get_json(PATH).await, empty());
}

async fn credentials_are_checked_per_type(app: TestApp) {
    let cases = [
        (
            json!({"Authentication": "Basic"}),
            vec!["Username", "Password"],
        ),
        (
            json!({"Authentication": "Basic", "Username": "u"}),
            vec!["Password"],
        ),
        (
            json!({"Authentication": "Basic", "Password": "p"}),
            vec!["Username"],
        ),
        (json!({"Authentication": "Bearer"}), vec!["Password"]),
        (json!({"Authentication": "HmacSha256"}), vec!["Password"]),
        (
            json!({"Authentication": "HmacSha256", "Password": "fifteen-chars!!"}),
            vec!["Password"],
        ),
    ];
    for (body, fields) in cases {
        let problem =
            assert_problem(app.admin.put(PATH, &body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}");
    }
    assert_eq!(app.admin.get_json(PATH).await, empty());
    let ok = json!({"Authentication": "HmacSha256", "Password": "sixteen-chars!!!", "Username": "ignored"});
    assert_eq!(app.admin.put(PATH, &ok).await.status(), StatusCode::OK);
    let got = app.admin.get_json(PATH).await;
    assert_eq!(got["Authentication"], "HmacSha256");
    assert!(got["Username"].is_null(), "Username is kept only for Basic");
    assert!(got["Password"].is_null());
}

async fn null_password_keeps_the_stored_secret(app: TestApp) {
    let basic = json!({"Urls": [url("https://hooks.example.com/")], "Authentication": "Basic",
                       "Username": "u", "Password": "short-secret"});
    assert_eq!(app.admin.put(PATH, &basic).await.status(), StatusCode::OK);
    // Switching to Bearer with no Password succeeds only because the stored one is kept.
    let bearer = json!({"Urls": [url("https://hooks.example.com/")], "Authentication": "Bearer",
                        "Password": null});
    assert_eq!(app.admin.put(PATH, &bearer).await.status(), StatusCode::OK);
    let got = app.admin.get_json(PATH).await;
    assert_eq!(got["Authentication"], "Bearer");
    assert!(got["Password"].is_null());
    // The kept secret is checked against the new type: 12 characters is too short a key.
    let hmac = json!({"Authentication": "HmacSha256"});
    let problem = assert_problem(app.admin.put(PATH, &hmac).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Password"]);
    assert_eq!(app.admin.get_json(PATH).await["Authentication"], "Bearer");
    // None drops the stored secret: Bearer then needs a new one.
    assert_eq!(
        app.admin
            .put(PATH, &json!({"Authentication": null}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.get_json(PATH).await, empty());
    let problem =
        assert_problem(app.admin.put(PATH, &bearer).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Password"]);
}

async fn url_count_and_duplicates(app: TestApp) {
    let eleven: Vec<Value> = (0..11)
        .map(|i| url(&format!("https://hooks.example.com/{i}")))
        .collect();
    let problem = assert_problem(
        app.admin.put(PATH, &json!({"Urls": eleven})).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Urls"]);
    let dup = json!({"Urls": [url("https://Hooks.example.com:443/a"), url("https://hooks.example.com/a")]});
    let problem = assert_problem(app.admin.put(PATH, &dup).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Urls[1].Url"]);
    assert_eq!(app.admin.get_json(PATH).await, empty());
    let ten = json!({"Urls": (0..10).map(|i| url(&format!("https://hooks.example.com/{i}"))).collect::<Vec<_>>()});
    assert_eq!(app.admin.put(PATH, &ten).await.status(), StatusCode::OK);
    assert_eq!(
        app.admin.get_json(PATH).await["Urls"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
}

async fn if_match_is_honoured(app: TestApp) {
    let body = json!({"Urls": [url("https://hooks.example.com/")]});
    // Nothing stored yet: no version can match.
    let response = app
        .admin
        .request(Method::PUT, PATH)
        .header("if-match", "\"abc\"")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_problem(response, 412, "precondition_failed").await;
    assert_eq!(app.admin.put(PATH, &body).await.status(), StatusCode::OK);
    let etag = app.admin.get(PATH).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_string();
    let stale = app
        .admin
        .request(Method::PUT, PATH)
        .header("if-match", "\"stale\"")
        .json(&json!({"Urls": []}))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    let ok = app
        .admin
        .request(Method::PUT, PATH)
        .header("if-match", &etag)
        .json(&json!({"Urls": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(app.admin.get_json(PATH).await, empty());
}

async fn sibling_404_and_permissions(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let body = json!({"Urls": [url("https://a.example.com/")]});
    let a_path = format!("/V2/{a}/webhooks");
    assert_eq!(app.admin.put(&a_path, &body).await.status(), StatusCode::OK);
    let (_, b_admin) = app.create_user(&b, "b@example.com", "Administrator").await;
    assert_not_found(b_admin.get(&a_path).await).await;
    assert_not_found(b_admin.put(&a_path, &json!({"Urls": []})).await).await;
    // Each tenant has its own settings.
    assert_eq!(
        b_admin.get_json(&format!("/V2/{b}/webhooks")).await,
        empty()
    );

    let (_, reader) = app.create_user(&a, "reader@example.com", "ReadOnly").await;
    let (_, user) = app.create_user(&a, "user@example.com", "User").await;
    for client in [&reader, &user] {
        assert_problem(
            client.put(&a_path, &json!({"Urls": []})).await,
            403,
            "forbidden",
        )
        .await;
        // URLs may hold secrets: reading needs ManageConfiguration too.
        assert_problem(client.get(&a_path).await, 403, "forbidden").await;
    }
    let (_, manager) = app.create_user(&a, "manager@example.com", "Manager").await;
    assert_eq!(
        manager.get_json(&a_path).await["Urls"][0]["Url"],
        "https://a.example.com/"
    );
}

/// With `--allow-private-webhooks`, loopback and private addresses are accepted.
#[tokio::test]
async fn operator_can_allow_private_addresses() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let config = AppConfig {
            channels: ChannelsConfig {
                allow_private_webhooks: true,
                ..ChannelsConfig::default()
            },
            ..AppConfig::default()
        };
        let Some(app) = spawn_app_with(backend, config).await else {
            continue;
        };
        let body = json!({"Urls": [url("http://127.0.0.1:9000/hook"), url("http://10.0.0.1/"),
                                   url("http://[::1]/"), url("http://localhost/")]});
        assert_eq!(app.admin.put(PATH, &body).await.status(), StatusCode::OK);
        assert_eq!(
            app.admin.get_json(PATH).await["Urls"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
        // The scheme rule still holds.
        let ftp = json!({"Urls": [url("ftp://127.0.0.1/")]});
        assert_problem(app.admin.put(PATH, &ftp).await, 400, "validation_failed").await;
    }
}

/// Moving a URL to another origin (scheme, host or port) without sending the secret again
/// is a 400 naming `Password` that stores nothing; the same origins keep it.
async fn a_kept_secret_goes_only_to_origins_that_had_it(app: TestApp) {
    let hmac = |urls: Vec<Value>, password: Value| json!({"Urls": urls, "Authentication": "HmacSha256", "Password": password});
    let saved = hmac(
        vec![
            url("https://hooks.example.com/a?token=1"),
            url("https://other.example.com:8443/b"),
        ],
        json!("sixteen-chars!!!"),
    );
    assert_eq!(app.admin.put(PATH, &saved).await.status(), StatusCode::OK);
    let before = app.admin.get_json(PATH).await;
    for moved in [
        "https://attacker.example.net/a?token=1",
        "http://hooks.example.com/a?token=1",
        "https://hooks.example.com:444/a?token=1",
        "https://other.example.com/b",
        "https://sub.hooks.example.com/a",
    ] {
        for password in [Value::Null, json!("")] {
            let body = hmac(
                vec![url("https://hooks.example.com/a?token=1"), url(moved)],
                password,
            );
            let problem =
                assert_problem(app.admin.put(PATH, &body).await, 400, "validation_failed").await;
            assert_eq!(problem_fields(&problem), ["Password"], "{moved}");
            assert!(
                problem.to_string().contains("Urls[1].Url"),
                "{moved}: {problem}"
            );
        }
        // Omitted altogether, too (XML and JSON alike read it as null).
        let mut body = hmac(vec![url(moved)], Value::Null);
        body.as_object_mut().unwrap().remove("Password");
        let problem =
            assert_problem(app.admin.put(PATH, &body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["Password"], "{moved}");
        assert_eq!(app.admin.get_json(PATH).await, before, "{moved}");
    }
    // Other paths and queries on the same origins (spelled differently) keep the secret.
    let same = hmac(
        vec![
            url("https://HOOKS.example.com:443/new?token=2"),
            url("https://other.example.com:8443/"),
        ],
        Value::Null,
    );
    assert_eq!(app.admin.put(PATH, &same).await.status(), StatusCode::OK);
    // Fewer URLs, too; and then the origin dropped is one the secret no longer goes to.
    let fewer = hmac(vec![url("https://hooks.example.com/")], Value::Null);
    assert_eq!(app.admin.put(PATH, &fewer).await.status(), StatusCode::OK);
    let back = hmac(
        vec![
            url("https://hooks.example.com/"),
            url("https://other.example.com:8443/"),
        ],
        Value::Null,
    );
    let problem = assert_problem(app.admin.put(PATH, &back).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Password"]);
    // Sending the secret again allows any origin.
    let moved = hmac(
        vec![url("https://elsewhere.example.org/in")],
        json!("a-new-sixteen-char-key"),
    );
    assert_eq!(app.admin.put(PATH, &moved).await.status(), StatusCode::OK);
    assert_eq!(
        app.admin.get_json(PATH).await["Urls"][0]["Url"],
        "https://elsewhere.example.org/in"
    );
    // No authentication keeps no secret: any origin, no Password.
    let none = json!({"Urls": [url("https://third.example.com/")], "Authentication": "None"});
    assert_eq!(app.admin.put(PATH, &none).await.status(), StatusCode::OK);
}

/// Basic and Bearer keep their secret under the same rule, and through XML too.
async fn a_kept_basic_password_follows_the_same_rule(app: TestApp) {
    let basic = json!({"Urls": [url("https://hooks.example.com/a")], "Authentication": "Basic",
                       "Username": "u", "Password": "basic-secret"});
    assert_eq!(app.admin.put(PATH, &basic).await.status(), StatusCode::OK);
    let before = app.admin.get_json(PATH).await;
    let moved = json!({"Urls": [url("https://attacker.example.net/a")], "Authentication": "Basic",
                       "Username": "u"});
    let problem = assert_problem(app.admin.put(PATH, &moved).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Password"]);
    let bearer =
        json!({"Urls": [url("https://attacker.example.net/a")], "Authentication": "Bearer"});
    let problem =
        assert_problem(app.admin.put(PATH, &bearer).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Password"]);
    let xml = "<WebhookSettings><Urls><WebhookUrl><Url>https://attacker.example.net/a</Url>\
               <Device>true</Device></WebhookUrl></Urls><Authentication>Basic</Authentication>\
               <Username>u</Username></WebhookSettings>";
    let response = app
        .admin
        .request(Method::PUT, PATH)
        .header("content-type", "application/xml")
        .body(xml)
        .send()
        .await
        .unwrap();
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Password"]);
    assert_eq!(app.admin.get_json(PATH).await, before);
}
