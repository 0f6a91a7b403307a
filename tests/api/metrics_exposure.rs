//! `/metrics` (issue 30, finding 9): request labels come from closed sets, so no request
//! adds series; `--metrics-token` requires a bearer token; `--metrics-listen` moves
//! `/metrics` to a listener of its own. Runs the real binary (the metrics recorder is one
//! per process, so sizes are only comparable in a process of its own), on SQLite: what is
//! measured never reaches the database.

use reqwest::{Method, StatusCode};

use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestDatabase};
use crate::harness::binary::{Binary, start_binary};

async fn sqlite_binary(extra: &[&str]) -> (Binary, TestDatabase) {
    let database = TestDatabase::create(Backend::Sqlite)
        .await
        .expect("sqlite database");
    (start_binary(&database.url, extra, None).await, database)
}

async fn metrics_text(base: &str) -> String {
    let response = reqwest::get(format!("{base}/metrics")).await.expect("GET");
    assert_eq!(response.status(), StatusCode::OK);
    response.text().await.expect("text")
}

/// A method token nobody uses, different each time.
fn odd_method(i: usize) -> Method {
    let token = format!("ZQ{}X{i}", uuid::Uuid::new_v4().simple());
    Method::from_bytes(token.as_bytes()).expect("a method token")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_methods_and_paths_add_no_series() {
    let (binary, _database) = sqlite_binary(&[]).await;
    let base = &binary.server.base;
    let http = reqwest::Client::new();
    let send = |method: Method, path: String| {
        let request = http.request(method, format!("{base}{path}"));
        async move { request.send().await.expect("answered").status() }
    };
    // Every series the loop below can touch exists once before it is measured.
    send(odd_method(0), "/healthz".into()).await;
    send(odd_method(0), "/no/such/path".into()).await;
    send(odd_method(0), "/V2/warm-up".into()).await;
    send(Method::GET, "/no/such/path".into()).await;
    metrics_text(base).await;
    let before = metrics_text(base).await;

    let (mut methods, mut paths) = (Vec::new(), Vec::new());
    for i in 1..=300 {
        let method = odd_method(i);
        let path = match i % 3 {
            0 => "/healthz".to_string(),
            1 => format!("/no/such/{}", uuid::Uuid::new_v4().simple()),
            _ => format!("/V2/{}", uuid::Uuid::new_v4().simple()),
        };
        let status = send(method.clone(), path.clone()).await;
        assert!(status.is_client_error(), "{method} {path}: {status}");
        methods.push(method);
        if path != "/healthz" {
            paths.push(path);
        }
    }
    let after = metrics_text(base).await;

    // Only counts move: a few digits more per touched series, nothing per request.
    assert!(
        after.len() < before.len() + 2048,
        "/metrics grew from {} to {} bytes",
        before.len(),
        after.len()
    );
    for method in &methods {
        assert!(!after.contains(method.as_str()), "{method} is a label");
    }
    for path in &paths {
        assert!(!after.contains(path.as_str()), "{path} is a label");
    }
    assert!(after.contains("method=\"OTHER\""), "{after}");
    assert!(after.contains("route=\"unmatched\""), "{after}");
    assert!(after.contains("route=\"/healthz\""), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metrics_token_is_required_when_set() {
    let (binary, _database) = sqlite_binary(&["--metrics-token=scrape-s3cret"]).await;
    let base = &binary.server.base;
    let http = reqwest::Client::new();
    let url = format!("{base}/metrics");

    let anonymous = http.get(&url).send().await.expect("GET");
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        anonymous.headers()["www-authenticate"],
        "Bearer realm=\"metrics\""
    );
    assert_eq!(
        anonymous.headers()["content-type"],
        "application/problem+json"
    );
    for wrong in [
        "Bearer scrape-s3cre",
        "Bearer scrape-s3cret2",
        "scrape-s3cret",
    ] {
        let response = http
            .get(&url)
            .header("authorization", wrong)
            .send()
            .await
            .expect("GET");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{wrong}");
    }
    // An administrator's login is not the token.
    let admin = Client::new(base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    assert_eq!(
        admin.get("/metrics").await.status(),
        StatusCode::UNAUTHORIZED
    );

    let allowed = http
        .get(&url)
        .bearer_auth("scrape-s3cret")
        .send()
        .await
        .expect("GET");
    assert_eq!(allowed.status(), StatusCode::OK);
    let text = allowed.text().await.expect("text");
    assert!(text.contains("safetrack_http_requests_total"), "{text}");
    // The served document says so.
    let document: serde_json::Value = http
        .get(format!("{base}/openapi.json"))
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("document");
    assert!(document["paths"]["/metrics"]["get"]["responses"]["401"].is_object());
    // The rest of the API is as it was.
    assert_eq!(
        http.get(format!("{base}/healthz"))
            .send()
            .await
            .expect("GET")
            .status(),
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metrics_listener_takes_metrics_off_the_api() {
    let (binary, _database) = sqlite_binary(&[
        "--metrics-listen=127.0.0.1:0",
        "--metrics-token=scrape-s3cret",
    ])
    .await;
    let base = &binary.server.base;
    let metrics_base = binary.metrics.as_deref().expect("metrics address printed");
    assert_ne!(metrics_base, base);
    let http = reqwest::Client::new();
    let get = |url: String, token: Option<&str>| {
        let mut request = http.get(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move { request.send().await.expect("answered") }
    };

    // The API's listener: no /metrics, not even with the token, nor in its document.
    let on_api = get(format!("{base}/metrics"), Some("scrape-s3cret")).await;
    assert_eq!(on_api.status(), StatusCode::NOT_FOUND);
    let document: serde_json::Value = get(format!("{base}/openapi.json"), None)
        .await
        .json()
        .await
        .expect("document");
    assert!(document["paths"]["/metrics"].is_null());
    assert!(document["paths"]["/healthz"].is_object());

    // Its own listener: /metrics with the token, and nothing else.
    let without = get(format!("{metrics_base}/metrics"), None).await;
    assert_eq!(without.status(), StatusCode::UNAUTHORIZED);
    let with = get(format!("{metrics_base}/metrics"), Some("scrape-s3cret")).await;
    assert_eq!(with.status(), StatusCode::OK);
    let text = with.text().await.expect("text");
    assert!(text.contains("safetrack_http_requests_total"), "{text}");
    let other = get(format!("{metrics_base}/healthz"), Some("scrape-s3cret")).await;
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
}
