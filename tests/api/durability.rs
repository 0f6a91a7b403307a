//! kill -9 during sustained ingest: every message acknowledged with 200 is there after a
//! restart, and so are the deliveries of every acknowledged SOS. Runs the real binary.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestDatabase};
use crate::harness::binary::Server;

async fn start(url: &str) -> Server {
    start_with(url, &[]).await
}

/// The real binary serving `url`, with `extra` flags, on a port the system picks: the server
/// prints the address it bound, so two servers started at once never race for one port.
pub async fn start_with(url: &str, extra: &[&str]) -> Server {
    start_with_env(url, extra, &[]).await
}

/// `start_with`, the server's environment holding `env` besides.
pub async fn start_with_env(url: &str, extra: &[&str], env: &[(&str, &str)]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_safetrack"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--database-url", url])
        .args(extra)
        .args([
            "--admin-email",
            ADMIN_EMAIL,
            "--admin-password",
            ADMIN_PASSWORD,
        ])
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start safetrack");
    let stdout = child.stdout.take().expect("piped stdout");
    let (address_tx, address_rx) = std::sync::mpsc::channel();
    // Reads until the address line, then keeps draining so a chatty server never blocks on a
    // full pipe. Ends (dropping the sender) when the server exits.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(address) = line.strip_prefix("safetrack listening on ") {
                let _ = address_tx.send(address.to_owned());
            }
        }
    });
    let address =
        tokio::task::spawn_blocking(move || address_rx.recv_timeout(Duration::from_secs(30)))
            .await
            .expect("address reader");
    let Ok(address) = address else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("safetrack exited or did not listen within 30 s");
    };
    let base = format!("http://{address}");
    for _ in 0..200 {
        if reqwest::get(format!("{base}/healthz")).await.is_ok() {
            return Server { child, base };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("safetrack did not answer /healthz");
}

async fn acknowledged_messages_survive_kill_9(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let mut server = start(&database.url).await;
    let admin = Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let response = admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "kill-9", "DeviceType": "InReach"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = admin
        .post(
            "/V2/1000/eventnotifications",
            &json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "RaiseAlert": true,
                    "Severity": "2", "Recipients": [{"Type": "MessagingAddress",
                    "MessagingAddress": "mail:ops@example.com"}]}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    // Acknowledged (id, is an SOS) pairs, from four concurrent senders.
    let acknowledged: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let mut senders = Vec::new();
    for sender in 0..4i64 {
        let admin = admin.clone();
        let acknowledged = acknowledged.clone();
        senders.push(tokio::spawn(async move {
            for batch in 0i64.. {
                let messages: Vec<Value> = (0..20i64)
                    .map(|i| {
                        let n = (sender * 1_000_000) + batch * 20 + i;
                        let state = if n % 5 == 0 { "Active" } else { "None" };
                        json!({"MessageType": "AutomaticPositionReport", "SequenceNumber": n,
                               "SentFromDevice": format!("2026-03-01T10:00:00.{:06}Z", n % 1_000_000),
                               "EmergencyState": state,
                               "Position": {"Latitude": 51.5, "Longitude": -0.12}})
                    })
                    .collect();
                let response = admin
                    .request(reqwest::Method::POST, "/V2/1000/devices/kill-9/momessages?process=true")
                    .json(&Value::Array(messages))
                    .send()
                    .await;
                let Ok(response) = response else { return };
                if response.status() != StatusCode::OK {
                    return;
                }
                let Ok(processed) = response.json::<Value>().await else { return };
                let mut acked = acknowledged.lock().unwrap();
                for m in processed.as_array().into_iter().flatten() {
                    let sos = m["EmergencyState"] == "Active";
                    acked.push((m["MessageId"].as_str().unwrap_or_default().to_string(), sos));
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.child.kill().expect("kill -9");
    let _ = server.child.wait();
    for sender in senders {
        let _ = sender.await;
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= 20, "load ran: {}", acknowledged.len());

    let mut server = start(&database.url).await;
    let admin = Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let mut stored = HashSet::new();
    let mut token: Option<String> = None;
    loop {
        let mut request = admin.request(reqwest::Method::GET, "/V2/1000/devices/kill-9/momessages");
        if let Some(t) = &token {
            request = request.header("X-CONTINUATIONTOKEN", t);
        }
        let response = request.send().await.unwrap();
        token = response
            .headers()
            .get("x-continuationtoken")
            .map(|v| v.to_str().unwrap().to_string());
        let page: Value = response.json().await.unwrap();
        stored.extend(
            page.as_array()
                .unwrap()
                .iter()
                .map(|m| m["MessageId"].as_str().unwrap().to_string()),
        );
        if token.is_none() {
            break;
        }
    }
    let lost: Vec<&String> = acknowledged
        .iter()
        .map(|(id, _)| id)
        .filter(|id| !stored.contains(*id))
        .collect();
    assert!(lost.is_empty(), "acknowledged but lost: {lost:?}");

    // Every acknowledged SOS is in the one alert it joined (a repeat match notifies no
    // one again: decisions.md, "Alerts"), and the SOS that raised it was delivered.
    let alerts = admin.get_json("/V2/1000/alerts").await;
    let alerts = alerts.as_array().unwrap();
    assert_eq!(alerts.len(), 1, "one alert, joined");
    let sos_acknowledged = acknowledged.iter().filter(|(_, sos)| *sos).count();
    let matches = alerts[0]["MatchCount"].as_u64().unwrap_or_default() as usize;
    assert!(
        matches >= sos_acknowledged,
        "MatchCount {matches} < {sos_acknowledged} acknowledged SOS"
    );
    let raising = alerts[0]["MessageId"].as_str().unwrap().to_string();
    assert!(
        stored.contains(&raising),
        "the raising SOS {raising} is stored"
    );
    let delivered: HashSet<String> = admin
        .get_all_pages("/V2/1000/deliveries")
        .await
        .iter()
        .filter_map(|d| d["MessageId"].as_str().map(str::to_string))
        .collect();
    assert!(
        delivered.contains(&raising),
        "the raising SOS {raising} has no delivery: {delivered:?}"
    );
    let _ = server.child.kill();
    let _ = server.child.wait();
}

#[tokio::test]
async fn sqlite_acknowledged_messages_survive_kill_9() {
    acknowledged_messages_survive_kill_9(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_acknowledged_messages_survive_kill_9() {
    acknowledged_messages_survive_kill_9(Backend::Postgres).await;
}
