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

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

fn main() {
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
