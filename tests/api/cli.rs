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

/// A `safetrack serve` process on a port the system picks, killed when dropped.
pub struct Running {
    child: std::process::Child,
    pub base: String,
    /// What it printed (console and log lines) before it listened.
    pub output: Vec<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the real binary serving `url` with `extra` flags; returns once it answers.
pub async fn serve(url: &str, extra: &[&str]) -> Running {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", url])
        .args(extra)
        .env("RUST_LOG", "warn")
        .env_remove("SAFETRACK_ADMIN_PASSWORD")
        .env_remove("SAFETRACK_ADMIN_EMAIL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start safetrack");
    let stdout = child.stdout.take().expect("piped stdout");
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    // Sends every line until the address, then keeps draining so the server never blocks
    // on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut running = Running {
        child,
        base: String::new(),
        output: Vec::new(),
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = tokio::task::block_in_place(|| lines_rx.recv_timeout(left));
        let Ok(line) = line else {
            panic!("safetrack did not listen: {:?}", running.output);
        };
        if let Some(address) = line.strip_prefix("safetrack listening on ") {
            running.base = format!("http://{address}");
            return running;
        }
        running.output.push(line);
    }
}

/// Runs `safetrack` with `args` and `env`, as the operator would.
fn safetrack_with(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env_remove("SAFETRACK_DATABASE_URL")
        .env_remove("SAFETRACK_NEW_USER_PASSWORD")
        .envs(env.iter().copied())
        .output()
        .expect("run safetrack")
}

fn assert_ran(out: &std::process::Output) {
    assert!(out.status.success(), "{out:?}");
}

crate::backend_fn_tests!(
    first_start_hint_works_as_printed,
    ignored_admin_flags_are_named_in_a_warning,
    admin_set_password_and_unlock_offline,
);

async fn first_start_hint_works_as_printed(backend: crate::common::Backend) {
    let Some(database) = crate::common::TestDatabase::create(backend).await else {
        return;
    };
    let server = serve(&database.url, &[]).await;
    let console = server.output.join("\n");
    let password = console
        .split("with password: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no generated password in {console}"));
    let hint = server
        .output
        .iter()
        .find(|l| l.trim_start().starts_with("curl "))
        .unwrap_or_else(|| panic!("no curl command in {console}"));
    assert!(console.contains("safetrack admin set-password --email admin@safetrack.local"));
    // The hint names the configured address; this server's port was picked at start.
    let command = hint
        .replace("http://127.0.0.1:0", &server.base)
        .replace("NEW-PASSWORD", "my-own-password-1");
    let out = Command::new("bash")
        .args(["-c", &format!("{command} --fail-with-body -sS")])
        .output()
        .expect("bash");
    assert_ran(&out);

    let admin = crate::common::Client::new(
        &server.base,
        Some(("admin@safetrack.local", "my-own-password-1")),
    );
    let me = admin.get_json("/V2/1000/users/admin@safetrack.local").await;
    assert_eq!(me["UserRoleId"], "Administrator");
    let tenant = admin
        .post(
            "/V2/1000",
            &serde_json::json!({"Description": "Still administering"}),
        )
        .await;
    assert_eq!(tenant.status(), reqwest::StatusCode::OK);
    let old = crate::common::Client::new(&server.base, Some(("admin@safetrack.local", password)));
    assert_eq!(
        old.get("/V2/1000").await.status(),
        reqwest::StatusCode::UNAUTHORIZED
    );
}

async fn ignored_admin_flags_are_named_in_a_warning(backend: crate::common::Backend) {
    let Some(database) = crate::common::TestDatabase::create(backend).await else {
        return;
    };
    let first = serve(&database.url, &["--admin-password", "first-password-1"]).await;
    assert!(
        first.output.iter().all(|l| !l.contains("ignored")),
        "{:?}",
        first.output
    );
    drop(first);
    let again = serve(
        &database.url,
        &[
            "--admin-password",
            "another-password-1",
            "--admin-email",
            "ops@example.com",
        ],
    )
    .await;
    let warnings: Vec<&String> = again
        .output
        .iter()
        .filter(|l| l.contains("WARN") && l.contains("ignored"))
        .collect();
    assert_eq!(warnings.len(), 2, "{:?}", again.output);
    assert!(warnings[0].contains("--admin-password") && warnings[0].contains("already has users"));
    assert!(warnings[1].contains("--admin-email"));
    assert!(warnings[0].contains("safetrack admin set-password"));
    let ignored =
        crate::common::Client::new(&again.base, Some(("ops@example.com", "another-password-1")));
    assert_eq!(
        ignored.get("/V2/1000").await.status(),
        reqwest::StatusCode::UNAUTHORIZED
    );
    drop(again);
    // The default e-mail alone is no flag given: nothing to warn about.
    let plain = serve(&database.url, &[]).await;
    assert!(
        plain.output.iter().all(|l| !l.contains("ignored")),
        "{:?}",
        plain.output
    );
}

async fn admin_set_password_and_unlock_offline(backend: crate::common::Backend) {
    let Some(database) = crate::common::TestDatabase::create(backend).await else {
        return;
    };
    let url = database.url.as_str();
    let db = ["--database-url", url];
    let email = "admin@safetrack.local";
    let server = serve(
        url,
        &[
            "--admin-password",
            "forgotten-password",
            "--lockout-threshold",
            "2",
        ],
    )
    .await;
    let guesser = crate::common::Client::new(&server.base, Some((email, "wrong-guess-123")));
    for _ in 0..2 {
        let _ = guesser.get("/V2/1000").await;
    }
    let locked = crate::common::Client::new(&server.base, Some((email, "forgotten-password")));
    crate::common::assert_problem(locked.get("/V2/1000").await, 401, "locked").await;
    drop(server);

    // Refused: a password the policy refuses, a user who does not exist, no password.
    let short = safetrack_with(
        &[
            &[
                "admin",
                "set-password",
                "--email",
                email,
                "--password",
                "short",
            ],
            &db[..],
        ]
        .concat(),
        &[],
    );
    assert!(!short.status.success());
    assert!(
        String::from_utf8_lossy(&short.stderr).contains("Password"),
        "{short:?}"
    );
    let nobody = safetrack_with(
        &[
            &[
                "admin",
                "set-password",
                "--email",
                "nobody@example.com",
                "--password",
                "a-long-password",
            ],
            &db[..],
        ]
        .concat(),
        &[],
    );
    assert!(!nobody.status.success());
    assert!(String::from_utf8_lossy(&nobody.stderr).contains("no user nobody@example.com"));
    let missing = safetrack_with(
        &[&["admin", "set-password", "--email", email], &db[..]].concat(),
        &[],
    );
    assert!(!missing.status.success());
    let unknown = safetrack_with(
        &[
            &["admin", "unlock", "--email", "nobody@example.com"],
            &db[..],
        ]
        .concat(),
        &[],
    );
    assert!(!unknown.status.success());

    // The password from the environment (out of the shell's history), any case of e-mail.
    assert_ran(&safetrack_with(
        &[
            &["admin", "set-password", "--email", "Admin@SafeTrack.local"],
            &db[..],
        ]
        .concat(),
        &[("SAFETRACK_NEW_USER_PASSWORD", "remembered-password")],
    ));
    // A new password does not end the lock: still refused (the plain 401, since this
    // address already spent the lock's one probe on the old password).
    let server = serve(url, &["--lockout-threshold", "2"]).await;
    let admin = crate::common::Client::new(&server.base, Some((email, "remembered-password")));
    crate::common::assert_problem(admin.get("/V2/1000").await, 401, "unauthorized").await;
    drop(server);

    let unlock = safetrack_with(
        &[&["admin", "unlock", "--email", email], &db[..]].concat(),
        &[],
    );
    assert_ran(&unlock);
    assert!(String::from_utf8_lossy(&unlock.stdout).contains("unlocked"));
    let server = serve(url, &["--lockout-threshold", "2"]).await;
    let admin = crate::common::Client::new(&server.base, Some((email, "remembered-password")));
    let me = admin.get_json("/V2/1000/users/admin@safetrack.local").await;
    assert_eq!(me["UserRoleId"], "Administrator");
    assert_eq!(me["FailedPasswordAttemptCount"], 0);
    let old = crate::common::Client::new(&server.base, Some((email, "forgotten-password")));
    assert_eq!(
        old.get("/V2/1000").await.status(),
        reqwest::StatusCode::UNAUTHORIZED
    );
}

/// `safetrack openapi | head` and `safetrack serve --help | head`: the reader goes away
/// before the writer is done, and the command ends quietly (no panic, success).
#[test]
fn writing_to_a_closed_pipe_ends_quietly() {
    for args in [&["openapi"][..], &["serve", "--help"], &["admin", "--help"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_safetrack"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run safetrack");
        // Read one line, as `head -1` would, and close the pipe. The OpenAPI document is
        // far larger than a pipe's buffer: its writer always meets the closed end.
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut first).expect("first line");
        drop(stdout);
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!first.is_empty());
    }
}
