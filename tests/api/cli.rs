//! The binary's subcommands, run as a user would.

use std::process::Command;

fn safetrack(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env_remove("SAFETRACK_DATABASE_URL")
        .output()
        .expect("run safetrack")
}

#[test]
fn migrate_admin_create_and_openapi() {
    let dir = std::env::temp_dir().join(format!("safetrack-cli-{}", uuid::Uuid::new_v4().simple()));
    let data = dir.to_str().unwrap();
    let migrate = safetrack(&["migrate", "--data-dir", data]);
    assert!(migrate.status.success(), "{migrate:?}");
    assert!(dir.join("safetrack.db").exists());

    let create = safetrack(&[
        "admin",
        "create",
        "--data-dir",
        data,
        "--email",
        "ops@example.com",
        "--password",
        "ops-password-1",
    ]);
    assert!(create.status.success(), "{create:?}");
    assert!(String::from_utf8_lossy(&create.stdout).contains("ops@example.com"));
    let duplicate = safetrack(&[
        "admin",
        "create",
        "--data-dir",
        data,
        "--email",
        "OPS@example.com",
        "--password",
        "ops-password-1",
    ]);
    assert!(!duplicate.status.success());
    let invalid = safetrack(&[
        "admin",
        "create",
        "--data-dir",
        data,
        "--email",
        "nope",
        "--password",
        "short",
        "--role",
        "Emperor",
    ]);
    assert!(!invalid.status.success());
    let message = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        message.contains("Username")
            && message.contains("Password")
            && message.contains("UserRoleId"),
        "{message}"
    );

    let openapi = safetrack(&["openapi"]);
    assert!(openapi.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&openapi.stdout).expect("OpenAPI JSON");
    assert!(doc["paths"]["/V2/{tenantVarCode}/users"].is_object());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_database_schemes_are_refused() {
    let out = safetrack(&["migrate", "--database-url", "mysql://localhost/x"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unsupported database URL scheme 'mysql'")
    );
}

#[test]
fn in_memory_sqlite_is_refused() {
    for url in ["sqlite::memory:", "sqlite://x.db?mode=memory"] {
        let out = safetrack(&["migrate", "--database-url", url]);
        assert!(!out.status.success(), "{url}");
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("in-memory SQLite database is not supported"),
            "{out:?}"
        );
    }
}

/// `serve` with `flag` set to each of `bad` exits with an error naming the flag.
fn assert_serve_refuses(flag: &str, bad: &[&str]) {
    for value in bad {
        let out = safetrack(&["serve", &format!("{flag}={value}")]);
        assert!(!out.status.success(), "{flag} {value:?} was accepted");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(flag),
            "{out:?}"
        );
    }
}

#[test]
fn delivery_workers_must_be_a_count() {
    assert_serve_refuses("--delivery-workers", &["-1", "two", ""]);
}

#[test]
fn webhook_slow_attempts_per_url_must_be_at_least_one() {
    assert_serve_refuses(
        "--webhook-slow-attempts-per-url",
        &["0", "-1", "eight", "70000"],
    );
}

#[test]
fn delivery_batch_must_be_between_1_and_1000() {
    assert_serve_refuses("--delivery-batch", &["0", "-1", "many", "1001"]);
}
