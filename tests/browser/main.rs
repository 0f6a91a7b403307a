//! The browser suites: scenarios in real headless Chromium (Debian's, installed here when
//! missing, never downloaded), driven by a node script in `console/` against the real
//! binary. A test binary of their own, so that none waits inside the API binary holding
//! one of its libtest threads; `cargo test` runs it after `tests/api/` (test binaries run
//! one after another, by name), and `cargo test --test browser` runs it alone.
//!
//! One suite at a time (`Suite::run` takes `ONE_AT_A_TIME` before it creates anything):
//! two Chromiums and two servers on two cores starve the scenarios' waits, and a flaky
//! failure is no evidence. PostgreSQL suites carry the `cfg_attr` below, as the API's do
//! (build.rs's `safetrack_no_postgres` is set for this binary too).
//!
//! Adding a suite: a file beside this one (`worker_app.rs`), named below with `mod`, whose
//! tests each build a `Suite` and run it, e.g.
//!
//! ```ignore
//! #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
//! #[cfg_attr(safetrack_no_postgres, ignore = "no PostgreSQL answered when the tests were built (see build.rs)")]
//! async fn check_in_on_postgres() {
//!     Suite::new(Backend::Postgres, "worker-check-in").run().await;
//! }
//! ```
//!
//! `cargo test --test browser -- worker_app` then runs that file's alone.

#[path = "../harness/mod.rs"]
mod harness;

mod console;
mod worker_app;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use harness::binary::start_binary;
use harness::console::{console_dir, npm_installed};
use harness::database::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, TestDatabase};

/// Held by the suite that runs: the next one starts its database, server and browser only
/// once the last one's are gone.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One run of `console/e2e/run.mjs`: the scenarios named (`all`, or names separated by
/// commas) against the real binary on a fresh database on `backend`. The script is given
/// the server's URL (`SAFETRACK_URL`), its administrator (`SAFETRACK_ADMIN`), the browser
/// (`CHROMIUM`), `SCENARIOS` and the suite's `env`, and no other `SAFETRACK_*` variable.
pub struct Suite {
    backend: Backend,
    scenarios: String,
    server_flags: Vec<String>,
    env: Vec<(String, String)>,
}

impl Suite {
    pub fn new(backend: Backend, scenarios: &str) -> Suite {
        Suite {
            backend,
            scenarios: scenarios.to_string(),
            server_flags: Vec::new(),
            env: Vec::new(),
        }
    }

    /// Flags the server is started with besides its database and administrator.
    pub fn server_flags(mut self, flags: &[&str]) -> Suite {
        self.server_flags
            .extend(flags.iter().map(|f| f.to_string()));
        self
    }

    /// A variable of the script's environment.
    pub fn env(mut self, name: &str, value: &str) -> Suite {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Runs the suite, once no other is running; panics with the script's output when a
    /// scenario fails (it is printed either way).
    pub async fn run(self) {
        let _turn = ONE_AT_A_TIME.lock().await;
        npm_installed();
        let chromium = chromium();
        let database = TestDatabase::create(self.backend).await.expect("database");
        let flags: Vec<&str> = self.server_flags.iter().map(String::as_str).collect();
        let server = start_binary(&database.url, &flags, None).await.server;
        let mut node = Command::new("node");
        node.arg("e2e/run.mjs").current_dir(console_dir());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SAFETRACK_") {
                node.env_remove(name);
            }
        }
        node.env("SAFETRACK_URL", &server.base)
            .env("SAFETRACK_ADMIN", format!("{ADMIN_EMAIL}:{ADMIN_PASSWORD}"))
            .env("CHROMIUM", chromium)
            .env("SCENARIOS", &self.scenarios)
            .envs(self.env);
        let output = tokio::task::spawn_blocking(move || node.output())
            .await
            .expect("e2e")
            .expect("node e2e/run.mjs");
        let all = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        println!("{all}");
        assert!(
            output.status.success(),
            "end-to-end scenarios failed:\n{all}"
        );
        drop(server);
        drop(database);
    }
}

/// Debian's Chromium: installed here when missing (as root, as the SMTP peer installs
/// aiosmtpd), never a browser download.
fn chromium() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = "/usr/bin/chromium";
        if !Path::new(path).exists() {
            let install = || {
                Command::new("apt-get")
                    .args(["install", "-y", "--no-install-recommends", "chromium"])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .status()
                    .is_ok_and(|s| s.success())
            };
            if !install() {
                let _ = Command::new("apt-get").arg("update").status();
                assert!(install(), "apt-get install chromium failed (run as root)");
            }
        }
        path.to_string()
    })
}
