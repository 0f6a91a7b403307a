//! `GET /users?photo=true` within a byte budget: a page holding photos ends early past
//! 16 MiB of them (the continuation token goes on from the next user), in JSON and XML,
//! so four parallel listings of users with 4 MiB photos no longer take gigabytes.

use base64::Engine as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{PASSWORD, TestApp};

backend_tests!(photo_pages_end_at_the_byte_budget);

/// The server's budget of photo bytes per page (`http/users.rs`).
const BUDGET: usize = 16 * 1024 * 1024;
/// The largest photo accepted, as Base64 text.
const PHOTO_CHARS: usize = 4 * 1024 * 1024;

/// Each page of `path` as (its users, whether a token followed), in `accept`'s format
/// (JSON or XML: the XML's `UserId` and `Photo` elements read back into JSON).
async fn pages(app: &TestApp, path: &str, accept: &str) -> Vec<(Vec<Value>, bool)> {
    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..100 {
        let mut request = app
            .admin
            .request(Method::GET, path)
            .header("accept", accept);
        if let Some(t) = &token {
            request = request.header("X-CONTINUATIONTOKEN", t);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        token = response
            .headers()
            .get("x-continuationtoken")
            .map(|v| v.to_str().unwrap().to_string());
        let text = response.text().await.unwrap();
        let users = if accept == "application/xml" {
            text.split("<User>")
                .skip(1)
                .map(|user| {
                    let field = |name: &str| {
                        let open = format!("<{name}>");
                        user.split_once(&open)
                            .and_then(|(_, rest)| rest.split_once(&format!("</{name}>")))
                            .map(|(value, _)| value.to_string())
                    };
                    let photo = field("Photo").filter(|p| !p.is_empty());
                    json!({"UserId": field("UserId"), "Photo": photo})
                })
                .collect()
        } else {
            serde_json::from_str::<Value>(&text)
                .unwrap()
                .as_array()
                .unwrap()
                .clone()
        };
        pages.push((users, token.is_some()));
        if token.is_none() {
            return pages;
        }
    }
    panic!("paging of {path} does not end");
}

async fn photo_pages_end_at_the_byte_budget(app: TestApp) {
    // Six users with the largest photo, three without, interleaved.
    let engine = base64::engine::general_purpose::STANDARD;
    let mut photos = std::collections::HashMap::new();
    for i in 0..9u8 {
        let mut body = json!({"Username": format!("u{i}@example.com"), "Password": PASSWORD});
        if i % 3 != 1 {
            let photo = engine.encode(vec![i; PHOTO_CHARS / 4 * 3]);
            assert_eq!(photo.len(), PHOTO_CHARS);
            body["Photo"] = json!(photo);
            photos.insert(format!("u{i}@example.com"), photo);
        }
        let response = app.admin.post("/V2/1000/users", &body).await;
        assert_eq!(response.status(), StatusCode::OK, "create u{i}");
    }
    let everyone = app.admin.get_json("/V2/1000/users").await;
    let ids: Vec<Value> = everyone
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["UserId"].clone())
        .collect();
    assert_eq!(ids.len(), 10);
    let photo_of: std::collections::HashMap<Value, Option<&String>> = everyone
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let name = u["Username"].as_str().unwrap();
            (u["UserId"].clone(), photos.get(name))
        })
        .collect();

    for accept in ["application/json", "application/xml"] {
        for page_size in ["", "&pageSize=100", "&pageSize=5"] {
            let path = format!("/V2/1000/users?photo=true{page_size}");
            let pages = pages(&app, &path, accept).await;
            // 24 MiB of photos: more than one page even when the size allows them all.
            assert!(pages.len() >= 2, "{accept} {path}: {} pages", pages.len());
            let mut seen = Vec::new();
            for (users, more) in &pages {
                let bytes: usize = users
                    .iter()
                    .map(|u| u["Photo"].as_str().map_or(0, str::len))
                    .sum();
                // A page stops once past the budget: at most one photo beyond it.
                assert!(bytes <= BUDGET + PHOTO_CHARS, "{accept} {path}: {bytes}");
                assert!(!users.is_empty() || !more, "{accept} {path}: empty page");
                for u in users {
                    assert_eq!(
                        u["Photo"].as_str(),
                        photo_of[&u["UserId"]].map(String::as_str),
                        "{accept} {path}: user {}",
                        u["UserId"]
                    );
                    seen.push(u["UserId"].clone());
                }
            }
            // Every user exactly once, in order.
            assert_eq!(seen, ids, "{accept} {path}");
        }
    }
    // The first page of a listing that allows every user ends at the budget.
    let first = app
        .admin
        .get("/V2/1000/users?photo=true&pageSize=100")
        .await;
    assert!(first.headers().contains_key("x-continuationtoken"));
    let first: Value = first.json().await.unwrap();
    assert!(first.as_array().unwrap().len() < 10);
    // Without photos nothing ends early.
    let plain = app.admin.get("/V2/1000/users?pageSize=100").await;
    assert!(!plain.headers().contains_key("x-continuationtoken"));
}
