//! Test harness: every test gets its own server on port 0 with a fresh database
//! (`TestDatabase`, in the harness both test binaries share: `tests/harness/`).
//! `backend_tests!` runs each scenario on both; where no PostgreSQL answered when the
//! tests were built (build.rs) the PostgreSQL variants are ignored, never reported as
//! passed.

use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::Value;
use sqlx::Connection;

use safetrack::app::{self, AppConfig};

pub use crate::harness::database::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Backend, TestDatabase, postgres_url,
};

pub const PASSWORD: &str = "user-password-1";

/// Runs each named `async fn(TestApp)` once per backend, as `sqlite::name` and
/// `postgres::name` (the latter ignored when no PostgreSQL answered at build time).
#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    let app = $crate::common::spawn_app($crate::common::Backend::Sqlite).await.expect("sqlite app");
                    super::$name(app).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                #[cfg_attr(safetrack_no_postgres, ignore = "no PostgreSQL answered when the tests were built (see build.rs)")]
                async fn $name() {
                    let app = $crate::common::spawn_app($crate::common::Backend::Postgres).await.expect("postgres app");
                    super::$name(app).await;
                }
            )*
        }
    };
}

/// Runs each named `async fn(Backend)` once per backend on a multi-threaded runtime (the
/// test starts its own app, peers or processes), as `sqlite::name` and `postgres::name`
/// (the latter ignored when no PostgreSQL answered at build time).
#[macro_export]
macro_rules! backend_fn_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() { super::$name($crate::common::Backend::Sqlite).await; } )*
        }
        mod postgres {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               #[cfg_attr(safetrack_no_postgres, ignore = "no PostgreSQL answered when the tests were built (see build.rs)")]
               async fn $name() { super::$name($crate::common::Backend::Postgres).await; } )*
        }
    };
}

pub struct TestApp {
    pub base: String,
    /// The DirectIP listener's address, when the config asked for one.
    #[allow(dead_code)]
    pub directip: Option<std::net::SocketAddr>,
    pub admin: Client,
    /// Which database this app runs on (for backend-specific assertions).
    #[allow(dead_code)]
    pub backend: Backend,
    database: TestDatabase,
    config: AppConfig,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

/// The app with its default configuration.
pub async fn spawn_app(backend: Backend) -> Option<TestApp> {
    spawn_app_with(backend, AppConfig::default()).await
}

pub async fn spawn_app_with(backend: Backend, config: AppConfig) -> Option<TestApp> {
    let database = TestDatabase::create(backend).await?;
    Some(spawn_app_on(backend, database, config).await)
}

/// Serves an existing test database (e.g. one prepared at an older schema version).
pub async fn spawn_app_on(backend: Backend, database: TestDatabase, config: AppConfig) -> TestApp {
    let (base, directip, shutdown) = start_server(&database.url, config.clone()).await;
    TestApp {
        directip,
        admin: Client::new(&base, Some((ADMIN_EMAIL, ADMIN_PASSWORD))),
        base,
        backend,
        database,
        config,
        shutdown: Some(shutdown),
    }
}

/// Opens (migrating, bootstrapping) the database at `url` and serves it on port 0.
/// Sending on the returned channel stops the server gracefully.
async fn start_server(
    url: &str,
    config: AppConfig,
) -> (
    String,
    Option<std::net::SocketAddr>,
    tokio::sync::oneshot::Sender<()>,
) {
    let store = app::open_store(url).await.expect("open store");
    app::bootstrap(&store, ADMIN_EMAIL, Some(ADMIN_PASSWORD.into()))
        .await
        .expect("bootstrap");
    let application = app::build_app(store.clone(), config).await.expect("app");
    let directip = application.directip_addr();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        app::serve(listener, application, shutdown)
            .await
            .expect("serve");
        store.close().await;
    });
    (base, directip, stop)
}

impl TestApp {
    /// The database URL this app runs on (to open the store beside it).
    pub fn database_url(&self) -> &str {
        &self.database.url
    }

    /// The SQLite file this app's database lives in (`None` on PostgreSQL).
    pub fn sqlite_file(&self) -> Option<std::path::PathBuf> {
        self.database.sqlite_file()
    }

    /// The PostgreSQL schema this app's database lives in (`None` on SQLite).
    pub fn postgres_schema(&self) -> Option<&str> {
        self.database
            .schema
            .as_ref()
            .map(|(_, schema)| schema.as_str())
    }

    /// Stops this server and starts a new one on the same database: what survives is
    /// what was stored.
    pub async fn restart(mut self) -> TestApp {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
        spawn_app_on(self.backend, self.database, self.config).await
    }

    /// `restart` with another configuration (e.g. a listener given a token made here).
    #[allow(dead_code)]
    pub async fn restart_with(mut self, config: AppConfig) -> TestApp {
        self.config = config;
        self.restart().await
    }

    pub fn anonymous(&self) -> Client {
        Client::new(&self.base, None)
    }

    /// A client using API token `token`.
    pub fn bearer(&self, token: &str) -> Client {
        Client::with_bearer(&self.base, token)
    }

    pub fn client(&self, email: &str, password: &str) -> Client {
        Client::new(&self.base, Some((email, password)))
    }

    /// A client whose connections come from `local` (any 127.x.y.z works on loopback):
    /// a second client address for lockout and rate-limit tests.
    pub fn client_from(&self, local: &str, email: &str, password: &str) -> Client {
        let ip: std::net::IpAddr = local.parse().expect("local address");
        Client {
            base: self.base.clone(),
            http: reqwest::Client::builder()
                .local_address(ip)
                .build()
                .expect("client"),
            credentials: Some((email.to_string(), password.to_string())),
            bearer: None,
            session: None,
        }
    }

    /// Creates a subtenant of `parent` as the admin; returns its code.
    pub async fn create_tenant(&self, parent: &str, description: &str) -> String {
        let response = self
            .admin
            .post(
                &format!("/V2/{parent}"),
                &serde_json::json!({ "Description": description }),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "create tenant");
        let body: Value = response.json().await.expect("tenant json");
        body["TenantCode"].as_str().expect("TenantCode").to_string()
    }

    /// Creates a user as the admin; returns (user id, a client logged in as the user).
    pub async fn create_user(&self, tenant: &str, email: &str, role: &str) -> (String, Client) {
        let response = self
            .admin
            .post(
                &format!("/V2/{tenant}/users"),
                &serde_json::json!({ "Username": email, "Password": PASSWORD, "UserRoleId": role }),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "create user {email}");
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .expect("Location")
            .to_string();
        let id = location.rsplit('/').next().expect("id").to_string();
        (id, self.client(email, PASSWORD))
    }
}

/// An HTTP client for the app, optionally with Basic credentials or an API token.
#[derive(Clone)]
pub struct Client {
    base: String,
    http: reqwest::Client,
    credentials: Option<(String, String)>,
    bearer: Option<String>,
    /// A browser session: (cookie value, CSRF token), sent with this server's Origin.
    session: Option<(String, String)>,
}

impl Client {
    pub fn new(base: &str, credentials: Option<(&str, &str)>) -> Self {
        Self {
            base: base.to_string(),
            http: reqwest::Client::new(),
            credentials: credentials.map(|(u, p)| (u.to_string(), p.to_string())),
            bearer: None,
            session: None,
        }
    }

    /// A browser of this server with session cookie `cookie`: every request sends the
    /// cookie, the server's own `Origin` and the session's `X-CSRF-Token`.
    pub fn with_session(base: &str, cookie: &str, csrf: &str) -> Self {
        Self {
            session: Some((cookie.to_string(), csrf.to_string())),
            ..Self::new(base, None)
        }
    }

    /// A client sending `Authorization: Bearer <token>`.
    pub fn with_bearer(base: &str, token: &str) -> Self {
        Self {
            bearer: Some(token.to_string()),
            ..Self::new(base, None)
        }
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let builder = self.http.request(method, format!("{}{path}", self.base));
        match (&self.credentials, &self.bearer, &self.session) {
            (Some((u, p)), _, _) => builder.basic_auth(u, Some(p)),
            (None, Some(token), _) => builder.bearer_auth(token),
            (None, None, Some((cookie, csrf))) => builder
                .header("cookie", format!("safetrack_session={cookie}"))
                .header("origin", &self.base)
                .header("x-csrf-token", csrf),
            (None, None, None) => builder,
        }
    }

    pub async fn get(&self, path: &str) -> Response {
        self.request(Method::GET, path).send().await.expect("GET")
    }

    pub async fn post(&self, path: &str, body: &Value) -> Response {
        self.request(Method::POST, path)
            .json(body)
            .send()
            .await
            .expect("POST")
    }

    pub async fn put(&self, path: &str, body: &Value) -> Response {
        self.request(Method::PUT, path)
            .json(body)
            .send()
            .await
            .expect("PUT")
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Response {
        self.request(Method::PATCH, path)
            .header("content-type", "application/json-patch+json")
            .body(body.to_string())
            .send()
            .await
            .expect("PATCH")
    }

    pub async fn delete(&self, path: &str) -> Response {
        self.request(Method::DELETE, path)
            .send()
            .await
            .expect("DELETE")
    }

    /// GET that must succeed; returns the JSON body.
    pub async fn get_json(&self, path: &str) -> Value {
        let response = self.get(path).await;
        assert_eq!(response.status(), StatusCode::OK, "GET {path}");
        response.json().await.expect("json body")
    }

    /// Every record of a paged listing, following `X-CONTINUATIONTOKEN` to its end (each
    /// page must succeed; panics if the paging does not end within 1,000 pages).
    pub async fn get_all_pages(&self, path: &str) -> Vec<Value> {
        let mut all = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..1000 {
            let mut request = self.request(Method::GET, path);
            if let Some(t) = &token {
                request = request.header("X-CONTINUATIONTOKEN", t);
            }
            let response = request.send().await.expect("GET");
            assert_eq!(response.status(), StatusCode::OK, "GET {path}");
            token = response
                .headers()
                .get("x-continuationtoken")
                .map(|v| v.to_str().expect("token").to_string());
            let page: Value = response.json().await.expect("json body");
            all.extend(page.as_array().expect("a list").iter().cloned());
            if token.is_none() {
                return all;
            }
        }
        panic!("paging of {path} does not end");
    }
}

/// Asserts a problem+json error with the given status and code; returns the body.
pub async fn assert_problem(response: Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status().as_u16(), status, "status");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert_eq!(content_type, "application/problem+json");
    let body: Value = response.json().await.expect("problem json");
    assert_eq!(body["code"], code, "problem code in {body}");
    assert_eq!(body["status"], status);
    body
}

/// The fields a validation problem lists.
pub fn problem_fields(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .filter_map(|e| e["field"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts the 404 problem every out-of-scope or missing record answers with.
pub async fn assert_not_found(response: Response) -> Value {
    assert_problem(response, 404, "not_found").await
}

/// A connection to `database` migrated to just before migration `version`: for tests
/// that store what an older release wrote and then run the rest.
pub async fn migrated_before(
    database: &TestDatabase,
    backend: Backend,
    version: i64,
) -> sqlx::AnyConnection {
    sqlx::any::install_default_drivers();
    let migrations: &sqlx::migrate::Migrator = match backend {
        Backend::Sqlite => &sqlx::migrate!("migrations/sqlite"),
        Backend::Postgres => &sqlx::migrate!("migrations/postgres"),
    };
    let before = sqlx::migrate::Migrator {
        migrations: std::borrow::Cow::Owned(
            migrations
                .iter()
                .filter(|m| m.version < version)
                .cloned()
                .collect(),
        ),
        ..sqlx::migrate::Migrator::DEFAULT
    };
    let mut conn = sqlx::AnyConnection::connect(&database.url)
        .await
        .expect("connect");
    before.run(&mut conn).await.expect("the earlier migrations");
    conn
}
