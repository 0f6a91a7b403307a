//! The operator console (issue 33): the binary serves the built front end at
//! `/` with a content security policy of its own origin only (plus `--map-tile-url`'s
//! server); the front end's own checks (`tsc --noEmit`, vitest: stream reconnection and
//! gaps, alert ordering, time formatting, the catalogue's completeness) run from here. The
//! end-to-end scenarios in headless Chromium have a test binary of their own
//! (`tests/browser/console.rs`).

use std::path::Path;
use std::process::Command;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use safetrack::app::AppConfig;
use safetrack::http::console::ConsoleConfig;

use crate::common::{Backend, spawn_app, spawn_app_with};
use crate::harness::console::{console_dir, npm_installed};

const SELF_ONLY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; font-src 'self'; media-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

#[tokio::test]
async fn the_root_serves_the_console_with_a_same_origin_policy() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite app");
    let client = reqwest::Client::new();
    let page = client
        .get(format!("{}/", app.base))
        .send()
        .await
        .expect("GET /");
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()[CONTENT_TYPE], "text/html; charset=utf-8");
    assert_eq!(page.headers()[CONTENT_SECURITY_POLICY], SELF_ONLY);
    assert_eq!(page.headers()[CACHE_CONTROL], "no-cache");
    let html = page.text().await.expect("html");
    assert!(
        html.contains(r#"<meta name="safetrack-map-tile-url" content="" />"#),
        "{html}"
    );
    // Only module scripts from the server itself: no inline script.
    let scripts: Vec<&str> = html.split("<script").skip(1).collect();
    assert!(!scripts.is_empty(), "{html}");
    for script in &scripts {
        assert!(
            script.contains(r#"src="/assets/"#),
            "an inline or foreign script: {script}"
        );
    }
    // Its assets come from the binary, under /assets/, cached for good.
    let asset = html
        .split('"')
        .find(|s| s.starts_with("/assets/") && s.ends_with(".js"))
        .expect("the entry script");
    let script = client
        .get(format!("{}{asset}", app.base))
        .send()
        .await
        .expect("asset");
    assert_eq!(script.status(), StatusCode::OK);
    assert_eq!(
        script.headers()[CONTENT_TYPE],
        "text/javascript; charset=utf-8"
    );
    assert_eq!(script.headers()[CONTENT_SECURITY_POLICY], SELF_ONLY);
    assert!(
        script.headers()[CACHE_CONTROL]
            .to_str()
            .expect("header")
            .contains("immutable")
    );
    // The announcement's sound is in the binary too.
    let sound = client
        .get(format!("{}/alert.wav", app.base))
        .send()
        .await
        .expect("sound");
    assert_eq!(sound.status(), StatusCode::OK);
    assert_eq!(sound.headers()[CONTENT_TYPE], "audio/wav");
    assert!(sound.bytes().await.expect("wav").starts_with(b"RIFF"));
}

#[tokio::test]
async fn console_routes_fall_back_to_the_page_and_the_api_keeps_its_404s() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite app");
    let client = reqwest::Client::new();
    let get = |path: &str, accept: &str| {
        client
            .get(format!("{}{path}", app.base))
            .header(ACCEPT, accept)
            .send()
    };
    for path in ["/alerts", "/alerts/1000/17", "/map", "/login"] {
        let page = get(path, "text/html,application/xhtml+xml,*/*;q=0.8")
            .await
            .expect("page");
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        assert!(
            page.text()
                .await
                .expect("html")
                .contains("<div id=\"app\">")
        );
    }
    // Not a browser asking for a page, a missing asset, the API's own paths: problem+json.
    for (path, accept) in [
        ("/alerts", "application/json"),
        ("/assets/missing.js", "text/html"),
        ("/auth/nothing", "text/html"),
        ("/gateways/nothing", "text/html"),
    ] {
        let answer = get(path, accept).await.expect("answer");
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path} {accept}");
        assert_eq!(
            answer.headers()[CONTENT_TYPE],
            "application/problem+json",
            "{path}"
        );
    }
    // The documentation's own paths stay its own (Swagger UI answers them).
    let docs = get("/docs/nothing/more", "text/html").await.expect("docs");
    assert_eq!(docs.status(), StatusCode::NOT_FOUND);
    let post = client
        .post(format!("{}/alerts", app.base))
        .header(ACCEPT, "text/html")
        .send()
        .await
        .expect("POST");
    assert_eq!(post.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_tile_server_is_named_in_the_page_and_allowed_for_images_only() {
    let config = AppConfig {
        console: ConsoleConfig::new(Some("https://tiles.example.org/{z}/{x}/{y}.png?a=1&b=2"))
            .expect("tile url"),
        ..AppConfig::default()
    };
    let app = spawn_app_with(Backend::Sqlite, config)
        .await
        .expect("sqlite app");
    let page = reqwest::get(format!("{}/", app.base)).await.expect("GET /");
    let policy = page.headers()[CONTENT_SECURITY_POLICY]
        .to_str()
        .expect("policy")
        .to_string();
    assert_eq!(
        policy,
        SELF_ONLY.replace(
            "img-src 'self';",
            "img-src 'self' https://tiles.example.org;"
        )
    );
    let html = page.text().await.expect("html");
    assert!(html.contains(
        r#"<meta name="safetrack-map-tile-url" content="https://tiles.example.org/{z}/{x}/{y}.png?a=1&amp;b=2" />"#
    ));
}

#[test]
fn a_bad_tile_url_stops_the_server_at_start() {
    let output = Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-bad-tile"))
        .args(["--map-tile-url", "ftp://tiles.example.org/{z}/{x}/{y}.png"])
        .output()
        .expect("run");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--map-tile-url"), "{stderr}");
}

/// The console's own scripts get their 401 without a Basic challenge (no browser password
/// dialog over the login page); every other client still gets it.
#[tokio::test]
async fn a_401_to_the_consoles_own_scripts_carries_no_basic_challenge() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite app");
    let client = reqwest::Client::new();
    for path in ["/auth/session", "/V2/1000/alerts"] {
        let script = client
            .get(format!("{}{path}", app.base))
            .header("Sec-Fetch-Site", "same-origin")
            .header("Sec-Fetch-Mode", "cors")
            .send()
            .await
            .expect("script");
        assert_eq!(script.status(), StatusCode::UNAUTHORIZED, "{path}");
        assert!(script.headers().get("www-authenticate").is_none(), "{path}");
        let navigation = client
            .get(format!("{}{path}", app.base))
            .header("Sec-Fetch-Site", "same-origin")
            .header("Sec-Fetch-Mode", "navigate")
            .send()
            .await
            .expect("navigation");
        assert!(
            navigation.headers().get("www-authenticate").is_some(),
            "{path}"
        );
        let curl = client
            .get(format!("{}{path}", app.base))
            .send()
            .await
            .expect("curl");
        assert!(curl.headers().get("www-authenticate").is_some(), "{path}");
    }
}

/// `npm test` in console/: the type check and the unit tests (vitest).
#[test]
fn the_front_end_type_checks_and_its_unit_tests_pass() {
    npm_installed();
    let output = Command::new("npm")
        .args(["test", "--silent"])
        .current_dir(console_dir())
        .env("CI", "true")
        .output()
        .expect("npm test");
    let all = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "npm test failed:\n{all}");
    assert!(all.contains("Tests") && all.contains("passed"), "{all}");
}
