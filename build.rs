//! `sqlx::migrate!` embeds the migrations at compile time: a change to one rebuilds the
//! crate (else a stale binary runs the old schema).
//!
//! And decides, when the tests are built, whether the PostgreSQL variants of the API tests can
//! run: PostgreSQL must answer at `SAFETRACK_TEST_DATABASE_URL`, or on 127.0.0.1:5432 when
//! that is unset. When it does not, the tests are built `#[ignore]`d with the reason (cfg
//! `safetrack_no_postgres`), so `cargo test` counts them as ignored, never as passed. Under
//! CI they are never ignored: a missing PostgreSQL fails the run.
//!
//! The answer is kept until the variable (or this file) changes: after starting PostgreSQL,
//! set `SAFETRACK_TEST_DATABASE_URL` or `touch build.rs`.
//!
//! And builds the operator console (`console/`, embedded by `http/console.rs`): `npm ci`
//! when `node_modules` is missing or older than the lock file, `npm run build` when a
//! source is newer than `console/dist`. Without npm the build stops and says what to
//! install; `SAFETRACK_SKIP_CONSOLE=1` builds without the console (then `/` says so).

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// What the console's build reads (watched by cargo, compared with `dist`'s time).
const CONSOLE_SOURCES: [&str; 8] = [
    "console/src",
    "console/index.html",
    "console/worker",
    "console/package.json",
    "console/package-lock.json",
    "console/vite.config.ts",
    "console/tsconfig.json",
    "console/scripts",
];

fn main() {
    build_console();
    println!("cargo::rerun-if-changed=migrations");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=SAFETRACK_TEST_DATABASE_URL");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rustc-check-cfg=cfg(safetrack_no_postgres)");
    if std::env::var_os("CI").is_some() {
        return;
    }
    let url = std::env::var("SAFETRACK_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let address = url
        .as_deref()
        .map_or("127.0.0.1:5432".to_string(), host_port);
    if !answers(&address) {
        println!("cargo::rustc-cfg=safetrack_no_postgres");
        println!(
            "cargo::warning=PostgreSQL does not answer on {address}: the PostgreSQL variants \
             of the tests are ignored (start it, then set SAFETRACK_TEST_DATABASE_URL or \
             `touch build.rs`)"
        );
    }
}

/// `host:port` of a `postgres://user:password@host:port/database?…` URL.
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    if host.ends_with(']') || !host.contains(':') {
        format!("{host}:5432")
    } else {
        host.to_string()
    }
}

fn answers(address: &str) -> bool {
    address.to_socket_addrs().is_ok_and(|mut addresses| {
        addresses.any(|a| TcpStream::connect_timeout(&a, Duration::from_millis(500)).is_ok())
    })
}

fn build_console() {
    for source in CONSOLE_SOURCES {
        println!("cargo::rerun-if-changed={source}");
    }
    println!("cargo::rerun-if-env-changed=SAFETRACK_SKIP_CONSOLE");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let console = root.join("console");
    let dist = console.join("dist");
    if std::env::var_os("SAFETRACK_SKIP_CONSOLE").is_some_and(|v| !v.is_empty() && v != "0") {
        // rust-embed needs the folder; an empty one makes `/` say the console is missing.
        if !dist.join("index.html").exists() {
            let _ = std::fs::create_dir_all(&dist);
        }
        println!("cargo::warning=SAFETRACK_SKIP_CONSOLE: the operator console is not built");
        return;
    }
    let npm_works = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !npm_works {
        panic!(
            "\n\nThe operator console (console/) is built with Node.js 20 or later and npm, \
             and `npm` was not found.\nInstall them (Debian/Ubuntu: `apt-get install nodejs npm`; \
             or https://nodejs.org), then build again.\nTo build the server without the console, \
             set SAFETRACK_SKIP_CONSOLE=1 (its `/` then says the console was not built).\n\n"
        );
    }
    let installed = console.join("node_modules/.package-lock.json");
    if modified(&installed) < modified(&console.join("package-lock.json")) {
        npm(&console, &["ci", "--no-audit", "--no-fund"]);
    }
    let built = modified(&dist.join("index.html"));
    if CONSOLE_SOURCES
        .iter()
        .any(|source| newest(&root.join(source)) > built)
    {
        npm(&console, &["run", "build"]);
    }
}

fn npm(dir: &Path, args: &[&str]) {
    let output = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("npm {}: {e}", args.join(" ")));
    if !output.status.success() {
        panic!(
            "`npm {}` in console/ failed:\n{}\n{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// When a file was last changed (the epoch when it does not exist).
fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The newest change of a file, or of anything under a folder.
fn newest(path: &Path) -> SystemTime {
    let own = modified(path);
    match std::fs::read_dir(path) {
        Ok(entries) => entries
            .flatten()
            .map(|e| newest(&e.path()))
            .fold(own, SystemTime::max),
        Err(_) => own,
    }
}
