//! A database of its own for each test — a temporary SQLite file, or a fresh PostgreSQL
//! schema (in `SAFETRACK_TEST_DATABASE_URL`, else in `safetrack_test` on the local server,
//! created on first use) — and the first administrator every server is started with.
//! Where no PostgreSQL answered when the tests were built (build.rs: the cfg
//! `safetrack_no_postgres`, set for every test binary of the crate) `postgres_url` is
//! `None`, and a PostgreSQL test carries
//! `#[cfg_attr(safetrack_no_postgres, ignore = "…")]` so it is ignored, never passed.

use std::path::PathBuf;

use sqlx::Connection;

pub const ADMIN_EMAIL: &str = "admin@safetrack.test";
pub const ADMIN_PASSWORD: &str = "admin-password-1";

#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database of its own for one test: a temporary SQLite file, or a fresh schema on
/// the PostgreSQL server. Removed (the schema dropped) when the test ends.
pub struct TestDatabase {
    pub url: String,
    temp_dir: Option<PathBuf>,
    /// (server URL, schema) on PostgreSQL.
    pub schema: Option<(String, String)>,
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some(dir) = &self.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some((server, schema)) = self.schema.take() {
            // Drop runs inside the test's runtime: use a thread with a runtime of its own.
            let dropped = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                runtime.block_on(async {
                    let mut conn = sqlx::AnyConnection::connect(&server).await?;
                    // The test's runtime is ending with the app still in it: a worker may
                    // be frozen inside a transaction holding a lock in this schema, which
                    // would keep DROP SCHEMA waiting for ever. End exactly those sessions.
                    sqlx::query(&format!(
                        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l
                         JOIN pg_class c ON c.oid = l.relation
                         JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = '{schema}' AND l.pid <> pg_backend_pid()"
                    ))
                    .fetch_all(&mut conn)
                    .await?;
                    sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                        .execute(&mut conn)
                        .await?;
                    conn.close().await
                })
            })
            .join();
            if !matches!(dropped, Ok(Ok(()))) {
                eprintln!("could not drop a test schema: {dropped:?}");
            }
        }
    }
}

impl TestDatabase {
    /// The SQLite file of this database (`None` on PostgreSQL): the one place a test learns
    /// it, rather than taking the URL apart.
    #[allow(dead_code)] // the API tests use it, the browser suites do not
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        self.temp_dir.as_ref().map(|dir| dir.join("test.db"))
    }

    /// A fresh, empty database; `None` for PostgreSQL when none is configured.
    pub async fn create(backend: Backend) -> Option<TestDatabase> {
        let unique = format!("t{}", uuid::Uuid::new_v4().simple());
        Some(match backend {
            Backend::Sqlite => {
                let dir = std::env::temp_dir().join(format!("safetrack-{unique}"));
                std::fs::create_dir_all(&dir).expect("temp dir");
                TestDatabase {
                    url: format!("sqlite://{}?mode=rwc", dir.join("test.db").display()),
                    temp_dir: Some(dir),
                    schema: None,
                }
            }
            Backend::Postgres => {
                let base = postgres_url().await?;
                sqlx::any::install_default_drivers();
                let mut conn = sqlx::AnyConnection::connect(&base)
                    .await
                    .expect("connect to PostgreSQL");
                sqlx::query(&format!("CREATE SCHEMA {unique}"))
                    .execute(&mut conn)
                    .await
                    .expect("create schema");
                conn.close().await.ok();
                let sep = if base.contains('?') { '&' } else { '?' };
                TestDatabase {
                    url: format!("{base}{sep}options=-c%20search_path%3D{unique}"),
                    temp_dir: None,
                    schema: Some((base, unique)),
                }
            }
        })
    }
}

/// The database PostgreSQL tests make their schemas in: `SAFETRACK_TEST_DATABASE_URL`, or
/// `safetrack_test` on the local server (created on first use) — what build.rs found
/// answering. `None` only when it found none; the PostgreSQL variants are then ignored.
pub async fn postgres_url() -> Option<String> {
    static ENSURED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if cfg!(safetrack_no_postgres) {
        return None;
    }
    if let Ok(url) = std::env::var("SAFETRACK_TEST_DATABASE_URL")
        && !url.is_empty()
    {
        return Some(url);
    }
    if let Some(url) = ENSURED.get() {
        return Some(url.clone());
    }
    const SERVER: &str = "postgres://postgres@127.0.0.1:5432";
    let url = format!("{SERVER}/safetrack_test");
    sqlx::any::install_default_drivers();
    if sqlx::AnyConnection::connect(&url).await.is_err() {
        let mut conn = sqlx::AnyConnection::connect(&format!("{SERVER}/postgres"))
            .await
            .expect("connect to the local PostgreSQL");
        // Another test may create it at the same moment: only the outcome matters.
        let _ = sqlx::query("CREATE DATABASE safetrack_test")
            .execute(&mut conn)
            .await;
        conn.close().await.ok();
    }
    Some(ENSURED.get_or_init(|| url).clone())
}
