//! Every answer, whichever route (or none) gave it, carries `X-Content-Type-Options:
//! nosniff`, and every answer that is not the console or the API documentation a policy
//! under which a browser loads, runs and frames nothing (issue 42: a gateway's
//! `text/plain` answer echoing a queued MT text was loadable as a same-origin script).

use reqwest::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_tests;
use crate::common::TestApp;
use crate::gateway_support::{gateway_token, register};

backend_tests!(
    every_answer_says_nosniff,
    a_gateway_answer_echoing_a_text_cannot_be_a_script,
);

const NOTHING: &str = "default-src 'none'; frame-ancestors 'none'; sandbox";

/// Whose policy an answer carries.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Policy {
    /// The console's own (same origin only).
    Console,
    /// Swagger UI's page: no policy of ours.
    Documentation,
    /// Everything else: nothing may load.
    Nothing,
}

async fn every_answer_says_nosniff(app: TestApp) {
    let http = reqwest::Client::new();
    let base = &app.base;
    let admin = (crate::common::ADMIN_EMAIL, crate::common::ADMIN_PASSWORD);
    let cases: Vec<(&str, Method, String, bool, StatusCode, Policy)> = vec![
        (
            "health",
            Method::GET,
            "/healthz".into(),
            false,
            StatusCode::OK,
            Policy::Nothing,
        ),
        (
            "a record",
            Method::GET,
            "/V2/1000".into(),
            true,
            StatusCode::OK,
            Policy::Nothing,
        ),
        (
            "no credentials",
            Method::GET,
            "/V2/1000".into(),
            false,
            StatusCode::UNAUTHORIZED,
            Policy::Nothing,
        ),
        (
            "unknown tenant",
            Method::GET,
            "/V2/999999".into(),
            true,
            StatusCode::NOT_FOUND,
            Policy::Nothing,
        ),
        (
            "no route",
            Method::GET,
            "/V2/1000/nothing-here".into(),
            true,
            StatusCode::NOT_FOUND,
            Policy::Nothing,
        ),
        (
            "wrong method",
            Method::DELETE,
            "/healthz".into(),
            false,
            StatusCode::METHOD_NOT_ALLOWED,
            Policy::Nothing,
        ),
        (
            "document",
            Method::GET,
            "/openapi.json".into(),
            false,
            StatusCode::OK,
            Policy::Nothing,
        ),
        (
            "login refused",
            Method::POST,
            "/auth/session".into(),
            false,
            StatusCode::BAD_REQUEST,
            Policy::Nothing,
        ),
        (
            "gateway refused",
            Method::GET,
            "/gateways/osmand/st_nothing".into(),
            false,
            StatusCode::UNAUTHORIZED,
            Policy::Nothing,
        ),
        (
            "garmin refused",
            Method::POST,
            "/gateways/garmin".into(),
            false,
            StatusCode::UNAUTHORIZED,
            Policy::Nothing,
        ),
        (
            "console",
            Method::GET,
            "/".into(),
            false,
            StatusCode::OK,
            Policy::Console,
        ),
        (
            "console route",
            Method::GET,
            "/alerts".into(),
            false,
            StatusCode::OK,
            Policy::Console,
        ),
        (
            "documentation",
            Method::GET,
            "/docs/".into(),
            false,
            StatusCode::OK,
            Policy::Documentation,
        ),
    ];
    for (label, method, path, authenticated, status, policy) in cases {
        let mut request = http.request(method, format!("{base}{path}"));
        if authenticated {
            request = request.basic_auth(admin.0, Some(admin.1));
        }
        if label == "console route" {
            request = request.header("accept", "text/html");
        }
        if label == "login refused" {
            request = request.json(&json!({"Username": "", "Password": ""}));
        }
        let response = request.send().await.expect(label);
        assert_eq!(response.status(), status, "{label}");
        assert_eq!(
            response
                .headers()
                .get(X_CONTENT_TYPE_OPTIONS)
                .map(|v| v.as_bytes()),
            Some(&b"nosniff"[..]),
            "{label}: {:?}",
            response.headers()
        );
        let csp = response
            .headers()
            .get(CONTENT_SECURITY_POLICY)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        match policy {
            Policy::Nothing => assert_eq!(csp.as_deref(), Some(NOTHING), "{label}"),
            Policy::Console => assert!(
                csp.as_deref()
                    .is_some_and(|p| p.starts_with("default-src 'self'")),
                "{label}: {csp:?}"
            ),
            Policy::Documentation => assert_eq!(csp, None, "{label}"),
        }
    }
    // The live stream: its headers, before its first event.
    let stream = app
        .admin
        .request(Method::GET, "/V2/1000/stream")
        .send()
        .await
        .expect("stream");
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(stream.headers()[X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(stream.headers()[CONTENT_SECURITY_POLICY], NOTHING);
}

/// The audit's gadget: markup queued as an MT text comes back verbatim in the OsmAnd
/// answer, so the answer must be text no browser runs or renders as a page.
async fn a_gateway_answer_echoing_a_text_cannot_be_a_script(app: TestApp) {
    register(&app, "1000", "phone-x", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "x").await;
    let script = "fetch('/V2/1000/users',{method:'POST'})//<script>alert(1)</script>";
    let queued = app
        .admin
        .post(
            "/V2/1000/devices/phone-x/mtmessages",
            &json!({"Type": "Text", "Message": script}),
        )
        .await;
    assert_eq!(queued.status(), StatusCode::OK);
    let answer = reqwest::get(format!(
        "{}/gateways/osmand/{token}?id=phone-x&lat=51.5&lon=-0.12&timestamp=1772359200",
        app.base
    ))
    .await
    .expect("report");
    assert_eq!(answer.status(), StatusCode::OK);
    let headers = answer.headers().clone();
    assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(headers[CONTENT_SECURITY_POLICY], NOTHING);
    assert!(
        headers[CONTENT_TYPE]
            .to_str()
            .is_ok_and(|t| t.starts_with("text/plain")),
        "{headers:?}"
    );
    assert_eq!(answer.text().await.expect("text"), script);
}
