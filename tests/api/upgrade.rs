//! Upgrades (issue 49 §4): a database written by an older build — the fixtures in
//! tests/fixtures/upgrade/, made by its make.py with that build — migrates when the
//! current build starts on it, on both backends, and every record reads back through the
//! API as the older build answered it (fields added since may be new; none changed).

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Backend, TestDatabase, spawn_app_on};
use safetrack::app::AppConfig;

crate::backend_fn_tests!(an_older_builds_database_migrates_and_reads_back_unchanged);

/// The build the fixtures were written by.
const COMMIT: &str = "ce78f89";

fn fixture(suffix: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/upgrade")
        .join(format!("{COMMIT}{suffix}"))
}

/// The SQLite fixture copied where the test database lives.
fn install_sqlite(database: &TestDatabase) {
    let path = database.sqlite_file().expect("a SQLite database");
    std::fs::copy(fixture(".sqlite"), path).expect("copy the fixture");
}

/// The PostgreSQL dump (of schema `public`) loaded into the test's own schema with psql.
fn install_postgres(database: &TestDatabase) {
    let (server, schema) = database.schema.as_ref().expect("a schema");
    let dump = std::fs::read_to_string(fixture(".postgres.sql")).expect("the dump");
    let sql: String = dump
        .lines()
        .filter(|l| !l.starts_with("CREATE SCHEMA") && !l.starts_with("COMMENT ON SCHEMA"))
        .map(|l| l.replace("public.", &format!("{schema}.")) + "\n")
        .collect();
    let file = std::env::temp_dir().join(format!("{schema}.sql"));
    std::fs::write(&file, sql).expect("write the dump");
    let out = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", server, "-f"])
        .arg(&file)
        .output()
        .expect("psql");
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every value `old` has, `new` has too (objects may have gained keys).
fn assert_kept(old: &Value, new: &Value, at: &str) {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            for (key, value) in old {
                let now = new.get(key).unwrap_or_else(|| panic!("{at}.{key} is gone"));
                assert_kept(value, now, &format!("{at}.{key}"));
            }
        }
        (Value::Array(old), Value::Array(new)) => {
            assert_eq!(
                old.len(),
                new.len(),
                "{at}: {} items then, {} now",
                old.len(),
                new.len()
            );
            for (i, (o, n)) in old.iter().zip(new).enumerate() {
                assert_kept(o, n, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(old, new, "{at}"),
    }
}

async fn an_older_builds_database_migrates_and_reads_back_unchanged(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let key = match backend {
        Backend::Sqlite => {
            install_sqlite(&database);
            "sqlite"
        }
        Backend::Postgres => {
            install_postgres(&database);
            "postgres"
        }
    };
    let app = spawn_app_on(backend, database, AppConfig::default()).await;
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(".expected.json")).expect("read"))
            .expect("expected JSON");
    let reads = expected[key].as_array().expect("the reads");
    assert!(reads.len() >= 9, "the fixture's reads");
    for read in reads {
        let path = read[0].as_str().expect("a path");
        let now = app.admin.get_json(path).await;
        assert_kept(&read[1], &now, path);
    }
    // The migrations the older build lacked ran: what they made answers.
    let response = app.admin.get("/V2/1001/pushsubscriptions").await;
    assert_eq!(
        response.status(),
        200,
        "a table the older build did not have"
    );
    // And the database takes new records beside the old ones.
    let batch = serde_json::json!([{"MessageType": "AutomaticPositionReport", "SequenceNumber": 5,
        "SentFromDevice": "2026-11-30T11:00:00Z", "Position": {"Latitude": 54.61, "Longitude": -3.13}}]);
    let response = app
        .admin
        .post("/V2/1001/devices/upgrade-van-1/momessages", &batch)
        .await;
    assert_eq!(response.status(), 200);
    let messages = app
        .admin
        .get_json("/V2/1001/devices/upgrade-van-1/momessages")
        .await;
    assert_eq!(messages.as_array().map(Vec::len), Some(5));
}
