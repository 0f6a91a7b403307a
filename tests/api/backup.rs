//! `safetrack backup` and `safetrack restore` (DESIGN §15), run as an operator would: the
//! real binary beside a server that is ingesting. PostgreSQL's backups are `pg_dump`'s,
//! tested once as the README documents them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use sqlx::{AnyConnection, Connection, Row};

use crate::common::{Backend, TestApp, spawn_app};
use crate::harness::binary::start_binary;
use crate::harness::database::{ADMIN_EMAIL, ADMIN_PASSWORD};
use crate::mo_messages::{position_report, register_device};

fn safetrack(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env_remove("SAFETRACK_DATABASE_URL")
        .env_remove("SAFETRACK_DATA_DIR")
        .output()
        .expect("run safetrack")
}

fn backup(source: &Path, to: &Path) -> Output {
    let url = format!("sqlite://{}", source.display());
    safetrack(&[
        "backup".as_ref(),
        "--database-url".as_ref(),
        url.as_ref(),
        "--to".as_ref(),
        to.as_os_str(),
    ])
}

fn restore(from: &Path, data_dir: &Path) -> Output {
    safetrack(&[
        "restore".as_ref(),
        "--from".as_ref(),
        from.as_os_str(),
        "--data-dir".as_ref(),
        data_dir.as_os_str(),
    ])
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A directory of its own, removed at the end of the test.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "safetrack-backup-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn open(path: &Path) -> AnyConnection {
    sqlx::any::install_default_drivers();
    AnyConnection::connect(&format!("sqlite://{}?mode=rw", path.display()))
        .await
        .expect("open the file")
}

/// Every table's rows, each row as the SQL text of its values, in rowid order.
async fn tables(path: &Path) -> Vec<(String, Vec<String>)> {
    let mut conn = open(path).await;
    let names = sqlx::query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .fetch_all(&mut conn)
    .await
    .expect("tables");
    let mut out = Vec::new();
    for name in names.iter().map(|r| r.get::<String, _>(0)) {
        let columns = sqlx::query(&format!("SELECT name FROM pragma_table_info('{name}')"))
            .fetch_all(&mut conn)
            .await
            .expect("columns");
        let values = columns
            .iter()
            .map(|c| format!("quote(\"{}\")", c.get::<String, _>(0)))
            .collect::<Vec<_>>()
            .join(" || '|' || ");
        let rows = sqlx::query(&format!("SELECT {values} FROM \"{name}\" ORDER BY rowid"))
            .fetch_all(&mut conn)
            .await
            .expect("rows");
        out.push((name, rows.iter().map(|r| r.get::<String, _>(0)).collect()));
    }
    conn.close().await.ok();
    out
}

/// Posts one-message batches from two devices until `stop`; returns how many went in.
fn ingest(app: &TestApp, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<i64> {
    let admin = app.admin.clone();
    tokio::spawn(async move {
        let mut seq = 0;
        while !stop.load(Ordering::Relaxed) {
            seq += 1;
            let device = if seq % 2 == 0 { "backup-a" } else { "backup-b" };
            let sent = format!("2026-03-02T10:{:02}:{:02}Z", (seq / 60) % 60, seq % 60);
            let batch = json!([position_report(seq, &sent, 54.6 + seq as f64 / 1e4, -3.1)]);
            let response = admin
                .post(&format!("/V2/1000/devices/{device}/momessages"), &batch)
                .await;
            assert_eq!(response.status(), 200, "ingest beside the backup");
        }
        seq
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_during_ingest_restores_to_the_moment_it_copied() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite");
    register_device(&app, "1000", "backup-a").await;
    register_device(&app, "1000", "backup-b").await;
    let source = app.sqlite_file().expect("a SQLite app");
    let scratch = Scratch::new();
    let before = tables(&source).await;

    let stop = Arc::new(AtomicBool::new(false));
    let ingesting = ingest(&app, stop.clone());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let file = scratch.0.join("nightly.db");
    let (src, to) = (source.clone(), file.clone());
    let out = tokio::task::spawn_blocking(move || backup(&src, &to))
        .await
        .expect("backup");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let posted = ingesting.await.expect("ingest");
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("nightly.db") && said.contains("migration"),
        "{said}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&scratch.0)
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        leftovers,
        vec![std::ffi::OsString::from("nightly.db")],
        "only the named file"
    );

    // The copy is the database at one moment: tables ingest never touches are the
    // source's; the messages are a prefix of what the source holds now, some but not
    // all of what was posted.
    let after = tables(&source).await;
    let copied = tables(&file).await;
    assert_eq!(copied.len(), after.len(), "every table copied");
    for (((name, rows_before), (_, rows_after)), (copied_name, rows_copied)) in
        before.iter().zip(&after).zip(&copied)
    {
        assert_eq!(name, copied_name);
        if rows_before == rows_after {
            assert_eq!(rows_copied, rows_after, "table {name} as in the source");
        } else if name == "mo_messages" {
            assert!(
                !rows_copied.is_empty() && rows_copied.len() < rows_after.len(),
                "{} of {} messages",
                rows_copied.len(),
                rows_after.len()
            );
            assert_eq!(
                rows_copied[..],
                rows_after[..rows_copied.len()],
                "the copied messages are the source's first ones"
            );
        }
    }
    let copied_messages = copied
        .iter()
        .find(|(n, _)| n == "mo_messages")
        .expect("mo_messages")
        .1
        .len();
    assert!((copied_messages as i64) < posted);

    // Restored into a fresh data dir, the server reads it: the same messages, and each
    // device's state agrees with the last of its messages in the copy.
    let data = scratch.0.join("restored");
    let out = restore(&file, &data);
    assert!(out.status.success(), "{}", stderr(&out));
    let url = format!("sqlite://{}?mode=rwc", data.join("safetrack.db").display());
    let binary = start_binary(&url, &[], None).await;
    let admin =
        crate::common::Client::new(&binary.server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let mut read = 0;
    for device in ["backup-a", "backup-b"] {
        let messages = admin
            .get_all_pages(&format!("/V2/1000/devices/{device}/momessages"))
            .await;
        read += messages.len();
        let state = admin.get_json(&format!("/V2/1000/devices/{device}")).await;
        let newest = messages
            .iter()
            .max_by_key(|m| m["SequenceNumber"].as_i64())
            .expect("a message");
        assert_eq!(
            state["LastPosition"]["Lat"], newest["Position"]["Latitude"],
            "{device}'s state: {state}"
        );
    }
    assert_eq!(read, copied_messages);
}

#[tokio::test]
async fn a_backup_killed_midway_leaves_nothing_under_the_name() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite");
    let source = app.sqlite_file().expect("a SQLite app");
    // Ballast, so the copy takes long enough to be killed in the middle.
    let mut conn = open(&source).await;
    sqlx::query("CREATE TABLE ballast (b BLOB)")
        .execute(&mut conn)
        .await
        .expect("ballast");
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
         INSERT INTO ballast SELECT randomblob(1000000) FROM n",
    )
    .execute(&mut conn)
    .await
    .expect("ballast rows");
    conn.close().await.ok();

    let scratch = Scratch::new();
    let file = scratch.0.join("killed.db");
    let url = format!("sqlite://{}", source.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(["backup", "--database-url", &url, "--to"])
        .arg(&file)
        .spawn()
        .expect("start the backup");
    let partial = scratch.0.join(format!(".killed.db.partial-{}", child.id()));
    let mut waited = 0;
    while !partial.exists() {
        assert!(
            child.try_wait().expect("poll").is_none(),
            "the backup ended before it could be killed"
        );
        assert!(waited < 30_000, "the backup never started its copy");
        std::thread::sleep(Duration::from_millis(2));
        waited += 2;
    }
    assert!(
        child.try_wait().expect("poll").is_none(),
        "still copying when killed"
    );
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    assert!(!file.exists(), "nothing under the name after kill -9");

    // A later backup of the same database succeeds beside the leftover.
    let out = backup(&source, &file);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(file.exists());
}

#[tokio::test]
async fn what_backup_refuses_changes_nothing() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite");
    let source = app.sqlite_file().expect("a SQLite app");
    let scratch = Scratch::new();
    let existing = scratch.0.join("existing.db");
    std::fs::write(&existing, b"keep me").expect("existing");
    let out = backup(&source, &existing);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&existing).expect("read"), b"keep me");

    let out = backup(&scratch.0.join("absent.db"), &scratch.0.join("copy.db"));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no SQLite database"),
        "{}",
        stderr(&out)
    );

    let out = backup(&source, &scratch.0.join("no-such-dir").join("copy.db"));
    assert!(!out.status.success());
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));

    let out = safetrack(&[
        "backup".as_ref(),
        "--database-url".as_ref(),
        "postgres://postgres@127.0.0.1:5432/test".as_ref(),
        "--to".as_ref(),
        scratch.0.join("pg.db").as_os_str(),
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("pg_dump"), "{}", stderr(&out));
    let left: Vec<_> = std::fs::read_dir(&scratch.0)
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("existing.db")]);
}

/// Each bad backup is refused with its reason and installs nothing.
#[tokio::test]
async fn restore_refuses_unsound_foreign_and_newer_files() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite");
    let source = app.sqlite_file().expect("a SQLite app");
    let scratch = Scratch::new();
    let good = scratch.0.join("good.db");
    assert!(backup(&source, &good).status.success());
    let bytes = std::fs::read(&good).expect("read the backup");

    let junk = scratch.0.join("junk.db");
    std::fs::write(&junk, vec![0x5a; 64 * 1024]).expect("junk");
    let truncated = scratch.0.join("truncated.db");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).expect("truncated");
    let foreign = scratch.0.join("foreign.db");
    let mut conn = AnyConnection::connect(&format!("sqlite://{}?mode=rwc", foreign.display()))
        .await
        .expect("foreign");
    sqlx::query("CREATE TABLE notes (t TEXT)")
        .execute(&mut conn)
        .await
        .expect("table");
    conn.close().await.ok();
    let newer = scratch.0.join("newer.db");
    std::fs::write(&newer, &bytes).expect("newer");
    let mut conn = open(&newer).await;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (99990001, 'from the future', 1, x'00', 0)",
    )
    .execute(&mut conn)
    .await
    .expect("a newer migration");
    conn.close().await.ok();

    for (file, reason) in [
        (&junk, "not"),
        (&truncated, "not a sound SQLite database"),
        (&foreign, "not a safetrack"),
        (&newer, "newer safetrack"),
        (&scratch.0.join("absent.db"), "no backup file"),
    ] {
        let data = scratch.0.join(format!(
            "data-{}",
            file.file_stem().expect("stem").to_string_lossy()
        ));
        let out = restore(file, &data);
        assert!(!out.status.success(), "{} restored", file.display());
        let message = stderr(&out);
        assert!(message.contains(reason), "{}: {message}", file.display());
        assert!(
            !data.join("safetrack.db").exists(),
            "{} installed",
            file.display()
        );
        let left = std::fs::read_dir(&data).map(|d| d.count()).unwrap_or(0);
        assert_eq!(left, 0, "{} left files behind", file.display());
    }

    // A data dir holding a database keeps it.
    let data = scratch.0.join("in-use");
    std::fs::create_dir_all(&data).expect("dir");
    std::fs::write(data.join("safetrack.db"), b"the live one").expect("live");
    let out = restore(&good, &data);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("already holds a database"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(data.join("safetrack.db")).expect("read"),
        b"the live one"
    );
}

/// PostgreSQL: the README's pg_dump / pg_restore, once: a dump of a served database
/// restored into a new database serves the same records.
#[tokio::test]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built"
)]
async fn postgres_pg_dump_and_pg_restore_as_documented() {
    let Some(app) = spawn_app(Backend::Postgres).await else {
        return;
    };
    register_device(&app, "1000", "dumped").await;
    let batch = json!([position_report(1, "2026-03-02T10:00:00Z", 54.6, -3.1)]);
    assert_eq!(
        app.admin
            .post("/V2/1000/devices/dumped/momessages", &batch)
            .await
            .status(),
        200
    );
    let schema = app.postgres_schema().expect("schema").to_string();
    let base = crate::harness::database::postgres_url()
        .await
        .expect("postgres");
    let scratch = Scratch::new();
    let dump = scratch.0.join("safetrack.dump");
    let out = Command::new("pg_dump")
        .args(["--format=custom", "--schema", &schema, "--file"])
        .arg(&dump)
        .arg(&base)
        .output()
        .expect("pg_dump");
    assert!(out.status.success(), "{}", stderr(&out));

    let target = format!("restored_{}", uuid::Uuid::new_v4().simple());
    let mut conn = AnyConnection::connect(&base).await.expect("connect");
    sqlx::query(&format!("CREATE DATABASE {target}"))
        .execute(&mut conn)
        .await
        .expect("createdb");
    let (server, _) = base.rsplit_once('/').expect("a database in the URL");
    let target_url = format!("{server}/{target}");
    let out = Command::new("pg_restore")
        .args(["--no-owner", "--dbname", &target_url])
        .arg(&dump)
        .output()
        .expect("pg_restore");
    assert!(out.status.success(), "{}", stderr(&out));
    let url = format!("{target_url}?options=-c%20search_path%3D{schema}");
    let binary = start_binary(&url, &[], None).await;
    let admin =
        crate::common::Client::new(&binary.server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let messages = admin.get_json("/V2/1000/devices/dumped/momessages").await;
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "{messages}");
    drop(binary);
    sqlx::query(&format!("DROP DATABASE {target} WITH (FORCE)"))
        .execute(&mut conn)
        .await
        .expect("dropdb");
}
