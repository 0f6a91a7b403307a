//! The README as a newcomer follows it: its first session runs, block by block and in
//! order, against the real binary; its flag table covers `serve --help`; the project's
//! docs stand on their own.

use std::path::Path;
use std::process::Command;

use reqwest::StatusCode;

use crate::cli::serve;
use crate::common::{Backend, Client, TestDatabase, spawn_app};

const README: &str = include_str!("../../README.md");
const MARKER: &str = "<!-- walkthrough -->";

/// The fenced `sh` blocks that follow a walkthrough marker, in order.
fn walkthrough_blocks() -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = README.lines();
    while let Some(line) = lines.next() {
        if line.trim() != MARKER {
            continue;
        }
        assert_eq!(
            lines.next().map(str::trim),
            Some("```sh"),
            "a walkthrough marker must be followed by a ```sh block"
        );
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        blocks.push(block.join("\n"));
    }
    blocks
}

/// `curl` as the walkthrough's commands expect it to behave: any HTTP error fails the
/// command (`--fail-with-body` shows why), and a stream bounded by `--max-time` that ran
/// to its end is a success.
const PRELUDE: &str = r#"set -euo pipefail
curl() {
  local status=0
  command curl --silent --show-error --fail-with-body "$@" || status=$?
  if [ "$status" = 28 ] && [[ " $* " == *" --max-time "* ]]; then status=0; fi
  return "$status"
}
"#;

crate::backend_fn_tests!(the_first_session_runs_as_written);

async fn the_first_session_runs_as_written(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    // What the README tells the reader to start and to export, and nothing else.
    assert!(README.contains("--admin-password 'change-me-please'"));
    assert!(README.contains(
        "export BASE=http://127.0.0.1:8080 AUTH='admin@safetrack.local:change-me-please'"
    ));
    // No delivery workers: the README's webhook names a public receiver, and a test sends
    // nothing off this machine (the deliveries are queued and listed all the same).
    let server = serve(
        &database.url,
        &[
            "--admin-password",
            "change-me-please",
            "--delivery-workers",
            "0",
        ],
    )
    .await;
    let blocks = walkthrough_blocks();
    assert!(blocks.len() >= 6, "walkthrough blocks: {}", blocks.len());
    let mut outputs = Vec::new();
    for block in &blocks {
        let out = tokio::task::block_in_place(|| {
            Command::new("bash")
                .args(["-c", &format!("{PRELUDE}{block}")])
                .env("BASE", &server.base)
                .env("AUTH", "admin@safetrack.local:change-me-please")
                .output()
                .expect("bash")
        });
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "this README block failed:\n{block}\n--- stdout:\n{stdout}\n--- stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(stdout);
    }

    // What it did is there afterwards (as the password the walkthrough ends with).
    let admin = Client::new(
        &server.base,
        Some(("admin@safetrack.local", "a-better-password")),
    );
    let me = admin.get_json("/V2/1000/users/admin@safetrack.local").await;
    assert_eq!(me["UserRoleId"], "Administrator");
    let jane = admin.get_json("/V2/1001/users/jane@acme.example").await;
    assert_eq!(jane["UserRoleId"], "Manager");
    let alert = admin.get_json("/V2/1001/alerts/1").await;
    assert_eq!(alert["Status"], "Acknowledged", "{alert}");
    let deleted = admin.get_json("/V2/1001/deleteddevices").await;
    assert!(deleted.to_string().contains("300234010753371"), "{deleted}");
    let itinerary = admin.get_json("/V2/1001/itineraries/1").await;
    assert_eq!(itinerary["OverallRisk"], 4, "{itinerary}");
    let all = outputs.join("\n");
    for shown in ["<Tenant", "TenantCode", "event: alert", "event: momessage"] {
        assert!(all.contains(shown), "the walkthrough never showed {shown}");
    }
}

#[test]
fn every_curl_command_of_the_readme_is_in_the_walkthrough() {
    let mut inside = false;
    let mut fenced = false;
    let mut previous = "";
    for line in README.lines() {
        if line.trim_start().starts_with("```") {
            inside = !fenced && previous.trim() == MARKER;
            fenced = !fenced;
            if !fenced {
                inside = false;
            }
        } else if line.contains("curl ") {
            assert!(
                inside,
                "a README curl command outside a {MARKER} block: {line}"
            );
        }
        previous = line;
    }
}

#[test]
fn the_flag_table_lists_every_serve_flag() {
    let help = Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(["serve", "--help"])
        .output()
        .expect("serve --help");
    let help = String::from_utf8_lossy(&help.stdout);
    let table: String = README
        .lines()
        .skip_while(|l| !l.starts_with("## Configuration"))
        .take_while(|l| !l.starts_with("## A first session"))
        .collect::<Vec<_>>()
        .join("\n");
    let flags: Vec<&str> = help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .filter_map(|l| l.split([' ', '<', '=']).next())
        .filter(|f| !["help", "version"].contains(f))
        .collect();
    assert!(flags.len() > 40, "{flags:?}");
    let missing: Vec<_> = flags
        .iter()
        .filter(|f| !table.contains(&format!("`--{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "not in the README's flag table: {missing:?}"
    );
}

/// Documents, and the source comments, cite only what the project holds.
#[test]
fn the_docs_link_nothing_outside_the_project() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        root.join("README.md"),
        root.join("ARCHITECTURE.md"),
        root.join("bench/README.md"),
    ];
    let mut dirs = vec![root.join("docs"), root.join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
                files.push(path);
            }
        }
    }
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        for outside in ["DESIGN.md", "spec/api-v2.md"] {
            assert!(
                !text.contains(outside),
                "{} cites {outside}, which is not in the project",
                file.display()
            );
        }
    }
}

#[tokio::test]
async fn the_root_path_serves_the_console_and_the_docs_stay_at_docs() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite app");
    let root = reqwest::get(format!("{}/", app.base)).await.expect("GET /");
    assert_eq!(root.status(), StatusCode::OK);
    assert!(
        root.text()
            .await
            .expect("page")
            .contains("<div id=\"app\">")
    );
    let docs = reqwest::get(format!("{}/docs/", app.base))
        .await
        .expect("docs");
    assert_eq!(docs.status(), StatusCode::OK);
    assert!(docs.text().await.expect("page").contains("swagger"));
}
