//! The operator console: the front end built from `console/` by `build.rs`,
//! embedded in the binary and served at `/`. Files of the build are served as they are
//! (`/assets/…` carry a content hash: cached for good); any other GET that asks for HTML
//! outside the API's own paths is a console route and gets `index.html`. Every answer
//! carries a content security policy that allows the server's own origin only (plus the
//! `--map-tile-url` tile server's, for images), so the console loads nothing from elsewhere.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

use super::error::ApiError;

#[derive(RustEmbed)]
#[folder = "console/dist"]
struct Built;

/// Paths the console never answers for, whatever `Accept` says: the API and the server's
/// own pages keep their 404s.
const NOT_CONSOLE: [&str; 10] = [
    "/V2",
    "/auth",
    "/docs",
    "/openapi.json",
    "/gateways",
    "/metrics",
    "/healthz",
    "/readyz",
    "/assets",
    "/api",
];

/// How the console is served (`--map-tile-url`).
#[derive(Debug, Clone, Default)]
pub struct ConsoleConfig {
    /// A tile URL template (`https://tiles.example.org/{z}/{x}/{y}.png`); `None`: the
    /// bundled world outline only.
    pub tile_url: Option<String>,
    /// The tile server's origin, allowed for images by the content security policy.
    tile_origin: Option<String>,
}

impl ConsoleConfig {
    /// Reads `--map-tile-url`: empty is none; else an http(s) template with `{z}`, `{x}`
    /// and `{y}`.
    pub fn new(tile_url: Option<&str>) -> anyhow::Result<Self> {
        let Some(template) = tile_url.map(str::trim).filter(|u| !u.is_empty()) else {
            return Ok(Self::default());
        };
        let bad = |why: &str| anyhow::anyhow!("--map-tile-url {template:?}: {why}");
        if !["{z}", "{x}", "{y}"].iter().all(|p| template.contains(p)) {
            return Err(bad("must contain {z}, {x} and {y}"));
        }
        if template.contains(['"', '<', '>', '\'', ' ']) {
            return Err(bad("must not contain quotes, angle brackets or spaces"));
        }
        let sample = template.replace("{s}", "a").replace(['{', '}'], "");
        let url = url::Url::parse(&sample).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(bad("must be an http:// or https:// URL"));
        }
        let origin = if template.contains("{s}") {
            // Leaflet's subdomains: allow them all on that host.
            let host = url.host_str().unwrap_or_default().replacen("a.", "*.", 1);
            let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}://{host}{port}", url.scheme())
        } else {
            url.origin().ascii_serialization()
        };
        Ok(Self {
            tile_url: Some(template.to_string()),
            tile_origin: Some(origin),
        })
    }

    fn content_security_policy(&self) -> String {
        let tiles = self
            .tile_origin
            .as_deref()
            .map(|o| format!(" {o}"))
            .unwrap_or_default();
        format!(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'{tiles}; \
             connect-src 'self'; font-src 'self'; media-src 'self'; object-src 'none'; \
             base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        )
    }
}

/// A 401 answered to a script of the server's own pages (the console's `fetch`:
/// `Sec-Fetch-Site: same-origin`, not a navigation) carries no `WWW-Authenticate: Basic`:
/// a browser would answer that challenge with its own password dialog over the console's
/// login page. Every other client (curl, scripts, a person opening a `/V2` URL) still gets
/// the challenge.
pub async fn no_challenge_for_own_scripts(
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let own_script = {
        let header_is = |name: &str, value: &str| {
            request
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.eq_ignore_ascii_case(value))
        };
        header_is("sec-fetch-site", "same-origin") && !header_is("sec-fetch-mode", "navigate")
    };
    let mut response = next.run(request).await;
    if own_script && response.status() == StatusCode::UNAUTHORIZED {
        response.headers_mut().remove(header::WWW_AUTHENTICATE);
    }
    response
}

/// What the router's fallback calls: a console file, a console route, or the API's 404.
pub async fn fallback(config: Arc<ConsoleConfig>, request: Request) -> Response {
    let method = request.method();
    if method != Method::GET && method != Method::HEAD {
        return ApiError::NotFound.into_response();
    }
    let path = request.uri().path();
    if let Some(file) = path.strip_prefix('/').filter(|p| !p.is_empty())
        && file != "index.html"
        && let Some(found) = Built::get(file)
    {
        let immutable = file.starts_with("assets/");
        return asset(&config, file, found.data.into_owned(), immutable);
    }
    if path == WORKER_APP || path.starts_with(&format!("{WORKER_APP}/")) {
        return worker_app(&config, path, wants_html(&request));
    }
    let reserved = NOT_CONSOLE
        .iter()
        .any(|p| path == *p || path.starts_with(&format!("{p}/")));
    if path == "/" || (!reserved && wants_html(&request)) {
        return index(&config);
    }
    ApiError::NotFound.into_response()
}

/// The worker app (DESIGN §12): its own page, `console/worker/index.html` built beside
/// the console's, with the same policy; its service worker (`/worker/sw.js`) and manifest
/// are files of the build like any other. `/worker` goes to `/worker/`, the scope the
/// service worker controls; any page under it is the app's (it has one page).
const WORKER_APP: &str = "/worker";

fn worker_app(config: &ConsoleConfig, path: &str, wants_html: bool) -> Response {
    if path == WORKER_APP {
        let mut response = StatusCode::PERMANENT_REDIRECT.into_response();
        response
            .headers_mut()
            .insert(header::LOCATION, HeaderValue::from_static("/worker/"));
        return response;
    }
    if path != "/worker/" && !wants_html {
        return ApiError::NotFound.into_response();
    }
    match Built::get("worker/index.html") {
        Some(page) => asset(config, "index.html", page.data.into_owned(), false),
        None => not_built(config),
    }
}

fn wants_html(request: &Request) -> bool {
    request
        .headers()
        .get(header::ACCEPT)
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

fn index(config: &ConsoleConfig) -> Response {
    let Some(page) = Built::get("index.html") else {
        return not_built(config);
    };
    let html = String::from_utf8_lossy(&page.data).replace(
        r#"<meta name="safetrack-map-tile-url" content="" />"#,
        &format!(
            r#"<meta name="safetrack-map-tile-url" content="{}" />"#,
            config
                .tile_url
                .as_deref()
                .unwrap_or_default()
                .replace('&', "&amp;")
        ),
    );
    let mut response = asset(config, "index.html", html.into_bytes(), false);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Built without Node.js (`SAFETRACK_SKIP_CONSOLE`): say so instead of a blank page.
fn not_built(config: &ConsoleConfig) -> Response {
    let page = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>safetrack</title></head>\
        <body><h1>The operator console was not built into this binary</h1>\
        <p>It was compiled without Node.js and npm (SAFETRACK_SKIP_CONSOLE). Install Node.js 20 \
        or later with npm (Debian: <code>apt-get install nodejs npm</code>) and build again; \
        see console/README.md. The API is served as usual: <a href=\"/docs/\">/docs/</a>.</p></body></html>";
    let mut response = asset(config, "index.html", page.as_bytes().to_vec(), false);
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response
}

fn asset(config: &ConsoleConfig, file: &str, body: Vec<u8>, immutable: bool) -> Response {
    let mime = mime_guess::from_path(file).first_or_octet_stream();
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    let text = mime.type_() == mime_guess::mime::TEXT
        || mime.subtype() == mime_guess::mime::JAVASCRIPT
        || mime.subtype() == mime_guess::mime::JSON
        || mime.suffix() == Some(mime_guess::mime::XML);
    let content_type = if text {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_string()
    };
    if let Ok(v) = HeaderValue::from_str(&content_type) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&config.content_security_policy()) {
        headers.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tile_flag_names_an_http_template_and_its_origin_is_allowed() {
        let none = ConsoleConfig::new(Some("  ")).expect("empty");
        assert!(none.tile_url.is_none());
        assert!(none.content_security_policy().contains("img-src 'self';"));
        let osm = ConsoleConfig::new(Some("https://tiles.example.org:8443/{z}/{x}/{y}.png"))
            .expect("template");
        assert!(
            osm.content_security_policy()
                .contains("img-src 'self' https://tiles.example.org:8443;")
        );
        let sub = ConsoleConfig::new(Some("https://{s}.tile.example.org/{z}/{x}/{y}.png"))
            .expect("subdomains");
        assert!(
            sub.content_security_policy()
                .contains("img-src 'self' https://*.tile.example.org;")
        );
        for bad in [
            "ftp://tiles.example.org/{z}/{x}/{y}.png",
            "https://tiles.example.org/{z}/{x}.png",
            "tiles/{z}/{x}/{y}.png",
            "https://tiles.example.org/{z}/{x}/{y}.png\"><script>",
        ] {
            assert!(ConsoleConfig::new(Some(bad)).is_err(), "{bad}");
        }
    }
}
