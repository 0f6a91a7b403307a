//! Monitoring session timers (docs/monitoring.md, "Timers") through real `serve`
//! processes, a session minute shortened by the hidden test-only `--monitoring-minute-ms`:
//! a kill -9 before a check-in is due neither loses nor repeats its timers (SQLite file
//! and PostgreSQL), and two processes on one PostgreSQL database, both running the timer
//! worker, fire each timer of each session once — one reminder, one MT check-in request,
//! one missed check-in and one alert per session, never two.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestDatabase};
use crate::durability::start_with;
use crate::harness::binary::Server;

/// A session minute, in milliseconds: long enough that a reminder (2 minutes in) and its
/// missed check-in (4 minutes in) fall in different worker steps of a loaded machine.
const MINUTE_MS: u64 = 2000;
/// The timer worker's poll period in a `serve` process (`AppConfig::worker_interval`).
const WORKER_POLL: Duration = Duration::from_secs(1);
/// Generous: the processes may share the machine with a build.
const WAIT: Duration = Duration::from_secs(90);

/// A session's history once reminded and missed.
const LINES: [&str; 3] = ["Started", "Reminder", "MissedCheckIn"];

fn flags() -> [String; 2] {
    ["--monitoring-minute-ms".to_string(), MINUTE_MS.to_string()]
}

async fn start(url: &str) -> Server {
    let flags = flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    start_with(url, &flags).await
}

fn admin(server: &Server) -> Client {
    Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)))
}

/// A notification raising an alert on `MissedCheckIn` (as tests/api/monitoring_timers.rs).
async fn notify_missed_check_ins(admin: &Client) {
    let notification = json!({"NotificationName": "missed", "EventsExpression": "MissedCheckIn",
        "RaiseAlert": true, "Severity": "2",
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
    let response = admin
        .post("/V2/1000/eventnotifications", &notification)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create notification");
}

/// Registers `device` and starts its session with `settings`; returns the session id.
async fn start_session(admin: &Client, device: &str, settings: &Value) -> String {
    let response = admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": device, "DeviceType": "InReach"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "register {device}");
    let path = format!("/V2/1000/devices/{device}/monitoring");
    let response = admin.post(&path, settings).await;
    assert_eq!(response.status(), StatusCode::OK, "start {device}");
    let session = admin.get_json(&path).await;
    session["MonitoringSessionId"]
        .as_str()
        .expect("a session id")
        .to_string()
}

async fn session(admin: &Client, device: &str) -> Value {
    admin
        .get_json(&format!("/V2/1000/devices/{device}/monitoring"))
        .await
}

/// The session's history lines' kinds, oldest first.
async fn history(admin: &Client, session_id: &str) -> Vec<String> {
    admin
        .get_all_pages(&format!("/V2/1000/monitoring/{session_id}/events"))
        .await
        .iter()
        .map(|line| line["Kind"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// How many MT `CheckInRequest`s are queued for `device`.
async fn check_in_requests(admin: &Client, device: &str) -> usize {
    admin
        .get_all_pages(&format!("/V2/1000/devices/{device}/mtmessages"))
        .await
        .iter()
        .filter(|m| m["Type"] == "CheckInRequest")
        .count()
}

/// The tenant's alerts' match counts, by device.
async fn alert_matches(admin: &Client) -> BTreeMap<String, Vec<u64>> {
    let mut by_device: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for alert in admin.get_all_pages("/V2/1000/alerts").await {
        let device = alert["DeviceId"].as_str().unwrap_or_default().to_string();
        let matches = alert["MatchCount"].as_u64().unwrap_or_default();
        by_device.entry(device).or_default().push(matches);
    }
    by_device
}

/// Polls the session's history until it has `lines` lines (panics after `WAIT`).
async fn wait_for_lines(admin: &Client, session_id: &str, lines: usize) {
    let deadline = Instant::now() + WAIT;
    loop {
        let kinds = history(admin, session_id).await;
        if kinds.len() >= lines {
            return;
        }
        assert!(Instant::now() < deadline, "never {lines} lines: {kinds:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Once per due time: the history is `lines`, the reminder's check-in request queued
/// once, the missed check-in counted once and the alert it raised matched once.
async fn assert_fired_once(admin: &Client, device: &str, session_id: &str, lines: &[&str]) {
    let current = session(admin, device).await;
    assert_eq!(current["MissedCheckInCount"], 1, "{current}");
    assert_eq!(current["State"], "Alerting", "{current}");
    assert_eq!(history(admin, session_id).await, lines, "{device}");
    assert_eq!(check_in_requests(admin, device).await, 1, "one reminder");
    assert_eq!(
        alert_matches(admin).await.get(device),
        Some(&vec![1]),
        "one alert, matched once"
    );
}

/// Sessions started through `admins` in turn, `settings` each: (device, session id).
async fn start_sessions(
    admins: &[Client],
    count: usize,
    settings: &Value,
) -> Vec<(String, String)> {
    let mut sessions = Vec::new();
    for n in 0..count {
        let device = format!("worker-{n:02}");
        let id = start_session(&admins[n % admins.len()], &device, settings).await;
        sessions.push((device, id));
    }
    sessions
}

/// Every session fired each of its timers once: its history is `lines`, and the rest
/// as `assert_fired_once`, asked of `admins` in turn.
async fn assert_all_fired_once(admins: &[Client], sessions: &[(String, String)], lines: &[&str]) {
    for (n, (device, id)) in sessions.iter().enumerate() {
        assert_fired_once(&admins[n % admins.len()], device, id, lines).await;
    }
    let alerts = alert_matches(&admins[0]).await;
    assert_eq!(
        alerts.len(),
        sessions.len(),
        "one alert per session: {alerts:?}"
    );
}

/// Ten sessions; kill -9 as soon as the first one's reminder fired (the worker may be in
/// the middle of the others), before its check-in is due. A new process on the same
/// database fires the reminders not yet fired and every missed check-in, once each, and
/// repeats none; nor does a second kill -9 and restart.
async fn timers_survive_kill_9(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let mut server = start(&database.url).await;
    let client = admin(&server);
    notify_missed_check_ins(&client).await;
    // Reminder at 2, due at 3, missed at 4 (minutes).
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 3,
        "ReminderMinutes": 1, "GraceMinutes": 1});
    let sessions = start_sessions(std::slice::from_ref(&client), 10, &settings).await;
    let (first, first_id) = &sessions[0];
    // DueSoon is the clock's; the reminder is the worker's: its history line.
    wait_for_lines(&client, first_id, 2).await;
    let reminded = session(&client, first).await;
    let due: jiff::Timestamp = reminded["NextDueAt"]
        .as_str()
        .expect("NextDueAt")
        .parse()
        .expect("a time");
    server.kill_9();
    assert!(
        jiff::Timestamp::now() < due,
        "killed after the check-in was due ({due}): the machine is too slow for this minute"
    );

    let mut server = start(&database.url).await;
    let client = admin(&server);
    for (_, id) in &sessions {
        wait_for_lines(&client, id, LINES.len()).await;
    }
    // Anything fired twice would be by now.
    tokio::time::sleep(WORKER_POLL * 2).await;
    assert_all_fired_once(std::slice::from_ref(&client), &sessions, &LINES).await;

    server.kill_9();
    let server = start(&database.url).await;
    let client = admin(&server);
    tokio::time::sleep(WORKER_POLL * 2).await;
    assert_all_fired_once(std::slice::from_ref(&client), &sessions, &LINES).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_timers_survive_kill_9() {
    timers_survive_kill_9(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_timers_survive_kill_9() {
    timers_survive_kill_9(Backend::Postgres).await;
}

/// Two processes on one PostgreSQL database, each with its timer worker, and 20 sessions
/// whose timers come due together: each session has one reminder line and one MT
/// check-in request, one missed check-in line and count, one alert matched once, and one
/// overdue line after its planned end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn two_processes_fire_each_timer_once() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let one = start(&database.url).await;
    let two = start(&database.url).await;
    let admins = [admin(&one), admin(&two)];
    notify_missed_check_ins(&admins[0]).await;
    // Reminder at 2, due at 3, missed at 4, planned end at 5, overdue at 6.
    let settings = json!({"DurationMinutes": 5, "CheckInIntervalMinutes": 3,
        "ReminderMinutes": 1, "GraceMinutes": 1});
    let sessions = start_sessions(&admins, 20, &settings).await;

    // Started, Reminder, MissedCheckIn, Overdue.
    let lines = [LINES.as_slice(), &["Overdue"]].concat();
    for (n, (_, id)) in sessions.iter().enumerate() {
        wait_for_lines(&admins[n % 2], id, lines.len()).await;
    }
    // Anything fired twice, by either process, would be by now.
    tokio::time::sleep(WORKER_POLL * 2).await;
    assert_all_fired_once(&admins, &sessions, &lines).await;
}

/// Fifty deleted devices' sessions (the worker's batch, lowest ids first) once filled
/// every step of the timer worker — it found no device to lock and spent nothing — so a
/// live session behind them never fired. A device's deletion now ends its session, and
/// the worker reads only sessions of devices that exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_devices_sessions_do_not_starve_the_worker() {
    let database = TestDatabase::create(Backend::Sqlite)
        .await
        .expect("a database");
    let server = start(&database.url).await;
    let client = admin(&server);
    let settings = json!({"DurationMinutes": 60, "CheckInIntervalMinutes": 3,
        "ReminderMinutes": 1, "GraceMinutes": 1});
    let sessions = start_sessions(std::slice::from_ref(&client), 51, &settings).await;
    for (device, _) in &sessions[..50] {
        let response = client.delete(&format!("/V2/1000/devices/{device}")).await;
        assert!(response.status().is_success(), "delete {device}");
    }
    let (_, live) = &sessions[50];
    wait_for_lines(&client, live, LINES.len()).await;
    assert_eq!(history(&client, live).await, LINES);
    // Each deleted device's session ended with it, by whoever deleted it.
    let (_, gone) = &sessions[0];
    let lines = client
        .get_json(&format!("/V2/1000/monitoring/{gone}/events"))
        .await;
    let ended = lines.as_array().and_then(|l| l.last()).expect("its lines");
    assert_eq!(ended["Kind"], "Ended", "{lines}");
    assert_eq!(ended["Detail"]["EndKind"], "ForceStop");
    assert_eq!(ended["Detail"]["Reason"], "Device deleted");
    assert_eq!(ended["Actor"], crate::common::ADMIN_EMAIL);
    let active = client.get_json("/V2/1000/monitoring").await;
    assert_eq!(active.as_array().map(Vec::len), Some(1), "{active}");
}
