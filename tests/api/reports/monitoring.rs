//! MonitoringReport (docs/monitoring.md, "MonitoringReport"): lone-worker sessions made
//! through the API, then placed in time (the database's times rewritten: the API starts
//! and checks in now), read back per person — totals, the window clipping the minutes,
//! the alerts during a session, missed check-ins and overdue sessions (event rows the
//! timer worker writes, inserted here, and once through the worker itself), scope and
//! filters, CSV and XML.

use jiff::{SignedDuration, Timestamp};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Connection;

use super::{device, report};
use crate::alerts::{create_depot, create_notification, raise, sos_notification};
use crate::backend_tests;
use crate::common::{TestApp, assert_problem, problem_fields};

backend_tests!(
    rows_and_totals_per_person,
    the_window_clips_the_minutes_and_the_counts,
    missed_check_ins_and_overdue_sessions,
    scope_subtenants_and_filters,
    csv_and_xml,
    bad_parameters_are_400_naming_them,
);

const REPORT: &str = "MonitoringReport";

fn monitoring(tenant: &str, device: &str) -> String {
    format!("/V2/{tenant}/devices/{device}/monitoring")
}

/// A user with names; returns its id.
async fn person(app: &TestApp, tenant: &str, email: &str, first: &str, last: &str) -> String {
    let body = json!({"Username": email, "Password": crate::common::PASSWORD, "UserRoleId": "User",
                      "FirstName": first, "LastName": last});
    let response = app.admin.post(&format!("/V2/{tenant}/users"), &body).await;
    assert_eq!(response.status(), StatusCode::OK, "create user {email}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

/// Where a session is placed: minutes after `base`; `end` None leaves it current.
struct Placed {
    start: i64,
    end: Option<i64>,
    check_ins: &'static [i64],
}

/// Starts a session at `device`, checks in once per placed check-in (through the API),
/// ends it unless it stays current, then moves its times to where `placed` says.
/// Returns its id.
async fn session(
    app: &TestApp,
    tenant: &str,
    device: &str,
    base: Timestamp,
    placed: Placed,
) -> i64 {
    let path = monitoring(tenant, device);
    let response = app
        .admin
        .post(&path, &json!({"DurationMinutes": 600}))
        .await;
    assert_eq!(response.status(), StatusCode::OK, "start at {device}");
    let id: i64 = app.admin.get_json(&path).await["MonitoringSessionId"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .expect("a session id");
    for _ in placed.check_ins {
        let response = app
            .admin
            .post(&format!("{path}/checkins"), &json!({}))
            .await;
        assert_eq!(response.status(), StatusCode::OK, "check in at {device}");
    }
    if placed.end.is_some() {
        assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    }
    place(app, id, base, &placed).await;
    id
}

fn micros(base: Timestamp, minutes: i64) -> i64 {
    (base + SignedDuration::from_mins(minutes)).as_microsecond()
}

async fn db(app: &TestApp) -> sqlx::AnyConnection {
    sqlx::any::install_default_drivers();
    sqlx::AnyConnection::connect(app.database_url())
        .await
        .expect("connect")
}

async fn place(app: &TestApp, id: i64, base: Timestamp, placed: &Placed) {
    let mut db = db(app).await;
    let start = micros(base, placed.start);
    let end = placed.end.map(|m| micros(base, m));
    sqlx::query("UPDATE monitoring_sessions SET started_at = $1, ended_at = $2 WHERE id = $3")
        .bind(start)
        .bind(end)
        .bind(id)
        .execute(&mut db)
        .await
        .expect("place the session");
    for (kind, at) in [("Started", Some(start)), ("Ended", end)] {
        sqlx::query(
            "UPDATE monitoring_session_events SET at = $1 WHERE session_id = $2 AND kind = $3",
        )
        .bind(at.unwrap_or(start))
        .bind(id)
        .bind(kind)
        .execute(&mut db)
        .await
        .expect("place an event");
    }
    let check_ins: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM monitoring_session_events WHERE session_id = $1 AND kind = 'CheckIn' ORDER BY id",
    )
    .bind(id)
    .fetch_all(&mut db)
    .await
    .expect("the check-ins");
    assert_eq!(check_ins.len(), placed.check_ins.len());
    for (event, minute) in check_ins.into_iter().zip(placed.check_ins) {
        sqlx::query("UPDATE monitoring_session_events SET at = $1 WHERE id = $2")
            .bind(micros(base, *minute))
            .bind(event)
            .execute(&mut db)
            .await
            .expect("place a check-in");
    }
    db.close().await.ok();
}

async fn place_alert(app: &TestApp, alert: &str, at: i64) {
    let mut db = db(app).await;
    let id: i64 = alert.parse().expect("an alert id");
    sqlx::query("UPDATE alerts SET raised_at = $1 WHERE id = $2")
        .bind(at)
        .bind(id)
        .execute(&mut db)
        .await
        .expect("place the alert");
    db.close().await.ok();
}

/// An event row as the timer worker writes it.
async fn event(app: &TestApp, session: i64, tenant: &str, kind: &str, at: i64) {
    let mut db = db(app).await;
    sqlx::query(
        "INSERT INTO monitoring_session_events (session_id, tenant_code, at, kind, actor)
         VALUES ($1, $2, $3, $4, 'timer')",
    )
    .bind(session)
    .bind(tenant)
    .bind(at)
    .bind(kind)
    .execute(&mut db)
    .await
    .expect("insert an event");
    db.close().await.ok();
}

fn window(base: Timestamp, from: i64, to: i64) -> String {
    let at = |m| {
        (base + SignedDuration::from_mins(m))
            .to_string()
            .replace(':', "%3A")
    };
    format!("DateFrom={}&DateTo={}", at(from), at(to))
}

/// Five hours ago, in whole seconds.
fn five_hours_ago() -> Timestamp {
    let now = Timestamp::now().as_second();
    Timestamp::from_second(now - 5 * 3600).expect("a time")
}

/// Alice (two ended sessions at w-a, an SOS during the first), Bob (a session at w-b
/// current since three hours after `base`), and w-c's session without a user (an SOS
/// after it ended).
async fn known_sessions(app: &TestApp) -> (Timestamp, String, String) {
    let base = five_hours_ago();
    create_depot(app, "1000").await;
    create_notification(app, "1000", &sos_notification()).await;
    let alice = person(app, "1000", "alice@example.com", "Alice", "Able").await;
    let bob = person(app, "1000", "bob@example.com", "Bob", "Baker").await;
    device(app, "1000", "w-a", json!({"UserId": alice})).await;
    device(app, "1000", "w-b", json!({"UserId": bob})).await;
    device(app, "1000", "w-c", json!({})).await;
    let ended = |start, end, check_ins| Placed {
        start,
        end: Some(end),
        check_ins,
    };
    session(app, "1000", "w-a", base, ended(0, 60, &[10, 40])).await;
    session(app, "1000", "w-a", base, ended(120, 150, &[130])).await;
    session(app, "1000", "w-c", base, ended(30, 45, &[])).await;
    // SOSes once no session is current there (an SOS confirms a current session),
    // raised (an alert's time is its raise) during w-a's first session, after w-c's.
    for (device, minute) in [("w-a", 50), ("w-c", 100)] {
        let sent = (base + SignedDuration::from_mins(minute)).to_string();
        let (_, alert) = raise(app, "1000", device, 1, &sent).await;
        place_alert(app, &alert, micros(base, minute)).await;
    }
    let current = Placed {
        start: 180,
        end: None,
        check_ins: &[200],
    };
    session(app, "1000", "w-b", base, current).await;
    (base, alice, bob)
}

fn figures(row: &Value) -> [i64; 6] {
    [
        "SessionCount",
        "MinutesMonitored",
        "CheckInsMade",
        "MissedCheckIns",
        "OverdueSessions",
        "Alerts",
    ]
    .map(|field| {
        row[field]
            .as_i64()
            .unwrap_or_else(|| panic!("{field} in {row}"))
    })
}

async fn rows_and_totals_per_person(app: TestApp) {
    let (base, alice, bob) = known_sessions(&app).await;
    // From the first start to an hour from now: every session whole, Bob's up to now.
    let rows = report(&app, "1000", REPORT, &window(base, 0, 360)).await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    let (a, b, c) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(a["UserId"], alice.as_str());
    assert_eq!(a["UserFirstName"], "Alice");
    assert_eq!(a["UserLastName"], "Able");
    assert_eq!(a["TenantVarCode"], "1000");
    assert_eq!(a["DeviceId"], "w-a");
    assert_eq!(figures(a), [2, 90, 3, 0, 0, 1]);
    assert_eq!(b["UserId"], bob.as_str());
    assert_eq!(b["UserFirstName"], "Bob");
    assert_eq!(b["DeviceId"], "w-b");
    // Current since 2 h ago: 120 minutes (121 only if the test took a minute).
    let [sessions, minutes, check_ins, ..] = figures(b);
    assert_eq!((sessions, check_ins), (1, 1));
    assert!((120..=121).contains(&minutes), "{b}");
    // The session without a user is its device's row; the SOS came after it ended.
    assert_eq!(c["UserId"], Value::Null);
    assert_eq!(c["UserFirstName"], Value::Null);
    assert_eq!(c["DeviceId"], "w-c");
    assert_eq!(figures(c), [1, 15, 0, 0, 0, 0]);
    // A window before every session: nothing.
    assert!(
        report(&app, "1000", REPORT, &window(base, -600, -1))
            .await
            .is_empty()
    );
}

async fn the_window_clips_the_minutes_and_the_counts(app: TestApp) {
    let (base, alice, _) = known_sessions(&app).await;
    // 20 to 135 minutes after base: Alice's first session from 20 to 60 (40 min, the
    // check-in at 40, the SOS at 50), her second from 120 to 135 (15 min, the check-in
    // at 130); w-c's whole; Bob's starts later.
    let rows = report(&app, "1000", REPORT, &window(base, 20, 135)).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["UserId"], alice.as_str());
    assert_eq!(figures(&rows[0]), [2, 55, 2, 0, 0, 1]);
    assert_eq!(rows[1]["DeviceId"], "w-c");
    assert_eq!(figures(&rows[1]), [1, 15, 0, 0, 0, 0]);
    // 55 to 125: the SOS at 50 is outside, so is every check-in.
    let rows = report(&app, "1000", REPORT, &window(base, 55, 125)).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(figures(&rows[0]), [2, 10, 0, 0, 0, 0]);
    // A window ending where a session starts does not hold it.
    let rows = report(&app, "1000", REPORT, &window(base, 150, 180)).await;
    assert!(rows.is_empty(), "{rows:?}");
}

async fn missed_check_ins_and_overdue_sessions(app: TestApp) {
    let base = five_hours_ago();
    let worker = person(&app, "1000", "carol@example.com", "Carol", "Cole").await;
    device(&app, "1000", "w-d", json!({"UserId": worker})).await;
    let ended = |start, end| Placed {
        start,
        end: Some(end),
        check_ins: &[],
    };
    let first = session(&app, "1000", "w-d", base, ended(0, 100)).await;
    let second = session(&app, "1000", "w-d", base, ended(110, 200)).await;
    for (session, kind, minute) in [
        (first, "MissedCheckIn", 30),
        (first, "MissedCheckIn", 90),
        (first, "Overdue", 95),
        (first, "Reminder", 25),
        (second, "MissedCheckIn", 150),
        (second, "Overdue", 190),
        (second, "Overdue", 195),
    ] {
        event(&app, session, "1000", kind, micros(base, minute)).await;
    }
    let rows = report(&app, "1000", REPORT, &window(base, 0, 240)).await;
    assert_eq!(rows.len(), 1);
    // Two overdue events of one session are one overdue session.
    assert_eq!(figures(&rows[0]), [2, 190, 0, 3, 2, 0]);
    let rows = report(&app, "1000", REPORT, &window(base, 60, 160)).await;
    assert_eq!(figures(&rows[0]), [2, 90, 0, 2, 1, 0]);
}

async fn scope_subtenants_and_filters(app: TestApp) {
    let base = five_hours_ago();
    let child = app.create_tenant("1000", "Child").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    let root_person = person(&app, "1000", "r@example.com", "Root", "Worker").await;
    let child_person = person(&app, &child, "c@example.com", "Child", "Worker").await;
    device(&app, "1000", "w-root", json!({"UserId": root_person})).await;
    device(&app, "1000", "w-idle", json!({})).await;
    device(&app, &child, "w-child", json!({"UserId": child_person})).await;
    // The same device id in two tenants: each tenant's row.
    device(&app, &sibling, "w-idle", json!({})).await;
    let placed = || Placed {
        start: 10,
        end: Some(40),
        check_ins: &[20],
    };
    session(&app, "1000", "w-root", base, placed()).await;
    session(&app, "1000", "w-idle", base, placed()).await;
    session(&app, &child, "w-child", base, placed()).await;
    session(&app, &sibling, "w-idle", base, placed()).await;
    let query = window(base, 0, 60);
    let who = |rows: &[Value]| -> Vec<(String, String)> {
        rows.iter()
            .map(|r| {
                let text = |v: &Value| v.as_str().unwrap_or("-").to_string();
                (text(&r["TenantVarCode"]), text(&r["UserId"]))
            })
            .collect()
    };
    let own = report(&app, "1000", REPORT, &query).await;
    assert_eq!(
        who(&own),
        [
            ("1000".to_string(), root_person.clone()),
            ("1000".into(), "-".into())
        ]
    );
    // A tenant's report holds neither its parent's nor a sibling's sessions.
    let child_rows = report(&app, &child, REPORT, &query).await;
    assert_eq!(who(&child_rows), [(child.clone(), child_person.clone())]);
    let sibling_rows = report(&app, &sibling, REPORT, &query).await;
    assert_eq!(who(&sibling_rows), [(sibling.clone(), "-".to_string())]);
    let all = report(&app, "1000", REPORT, &format!("{query}&Subtenants=true")).await;
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(all[0]["UserId"], root_person.as_str());
    assert_eq!(all[1]["UserId"], child_person.as_str());
    assert_eq!(all[1]["TenantVarCode"], child.as_str());
    assert_eq!(
        (&all[2]["DeviceId"], &all[3]["DeviceId"]),
        (&json!("w-idle"), &json!("w-idle"))
    );
    assert_ne!(all[2]["TenantVarCode"], all[3]["TenantVarCode"]);
    // UserIds names the sessions' people; DeviceIds the devices.
    let only = report(
        &app,
        "1000",
        REPORT,
        &format!("{query}&Subtenants=true&UserIds={child_person}"),
    )
    .await;
    assert_eq!(who(&only), [(child.clone(), child_person.clone())]);
    let only = report(&app, "1000", REPORT, &format!("{query}&DeviceIds=w-idle")).await;
    assert_eq!(who(&only), [("1000".to_string(), "-".to_string())]);
    assert_eq!(figures(&only[0]), [1, 30, 1, 0, 0, 0]);
}

async fn get_as(app: &TestApp, path: &str, accept: &str) -> (String, String) {
    let response = app
        .admin
        .request(reqwest::Method::GET, path)
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    (content_type, response.text().await.unwrap())
}

async fn csv_and_xml(app: TestApp) {
    let (base, alice, _) = known_sessions(&app).await;
    let path = format!("/V2/1000/reports/{REPORT}?{}", window(base, 20, 135));
    let (content_type, text) = get_as(&app, &path, "text/csv").await;
    assert!(content_type.starts_with("text/csv"), "{content_type}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "TenantVarCode,UserId,UserFirstName,UserLastName,DeviceId,SessionCount,MinutesMonitored,\
         CheckInsMade,MissedCheckIns,OverdueSessions,Alerts"
    );
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[1],
        format!("1000,{alice},Alice,Able,w-a,2,55,2,0,0,1")
    );
    assert_eq!(lines[2], "1000,,,,w-c,1,15,0,0,0,0");
    let (content_type, text) = get_as(&app, &path, "application/xml").await;
    assert_eq!(content_type, "application/xml");
    assert!(text.starts_with("<?xml"), "{text}");
    assert!(text.contains("<ArrayOfMonitoringReportRow>"), "{text}");
    assert_eq!(text.matches("<MonitoringReportRow>").count(), 2, "{text}");
    assert!(
        text.contains("<MinutesMonitored>55</MinutesMonitored>"),
        "{text}"
    );
    assert!(
        text.contains("<UserFirstName>Alice</UserFirstName>"),
        "{text}"
    );
    // An empty report still names its columns.
    let empty = format!("/V2/1000/reports/{REPORT}?{}", window(base, -600, -1));
    let (_, text) = get_as(&app, &empty, "text/csv").await;
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("TenantVarCode,UserId,"), "{text}");
}

async fn bad_parameters_are_400_naming_them(app: TestApp) {
    let listed = app.admin.get_json("/V2/1000/reports").await;
    assert!(
        listed.as_array().unwrap().contains(&json!(REPORT)),
        "{listed}"
    );
    for (query, field) in [
        ("", "DateFrom"),
        ("IntervalType=last-2-days", "IntervalType"),
        ("IntervalType=yesterday&UserIds=alice", "UserIds"),
        ("IntervalType=yesterday&Subtenants=maybe", "Subtenants"),
        ("DateFrom=2026-03-01&DateTo=31/03/2026", "DateTo"),
    ] {
        let response = app
            .admin
            .get(&format!("/V2/1000/reports/{REPORT}?{query}"))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert!(
            problem_fields(&problem).contains(&field.to_string()),
            "{query}: {problem}"
        );
    }
    // Not enabled for the tenant: 404, as every report.
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "Properties": {"EnabledReports": "AlertsReport"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = app
        .admin
        .get(&format!("/V2/1000/reports/{REPORT}?IntervalType=yesterday"))
        .await;
    crate::common::assert_not_found(response).await;
}

/// The timer worker's own lines, end to end (a session minute shortened): a session that
/// misses its check-in and runs past its planned end is counted missed and overdue, with
/// the missed check-in's alert.
mod with_timers {
    use std::time::{Duration, Instant};

    use jiff::{SignedDuration, Timestamp};
    use reqwest::StatusCode;
    use safetrack::app::AppConfig;
    use serde_json::json;

    use super::{REPORT, figures, monitoring, window};
    use crate::alerts::create_notification;
    use crate::backend_fn_tests;
    use crate::common::{Backend, spawn_app_with};
    use crate::reports::{device, report};

    backend_fn_tests!(the_timer_workers_lines_are_counted);

    async fn the_timer_workers_lines_are_counted(backend: Backend) {
        let mut config = AppConfig::default();
        config.pipeline.monitoring_minute = SignedDuration::from_millis(400);
        config.worker_interval = Duration::from_millis(100);
        let Some(app) = spawn_app_with(backend, config).await else {
            return;
        };
        device(&app, "1000", "w-t", json!({})).await;
        let missed = json!({"NotificationName": "Missed", "EventsExpression": "MissedCheckIn",
            "RaiseAlert": true, "Severity": "2",
            "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
        create_notification(&app, "1000", &missed).await;
        // A check-in due at 1 (missed at once: no grace), the planned end at 2 (overdue).
        let settings = json!({"DurationMinutes": 2, "CheckInIntervalMinutes": 1,
            "GraceMinutes": 0, "ReminderMinutes": 0});
        let response = app.admin.post(&monitoring("1000", "w-t"), &settings).await;
        assert_eq!(response.status(), StatusCode::OK);
        let query = window(Timestamp::now(), -60, 60);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let rows = report(&app, "1000", REPORT, &query).await;
            assert_eq!(rows.len(), 1, "{rows:?}");
            let [sessions, _, check_ins, missed, overdue, alerts] = figures(&rows[0]);
            if (missed, overdue, alerts) == (1, 1, 1) {
                assert_eq!((sessions, check_ins), (1, 0));
                assert_eq!(rows[0]["DeviceId"], "w-t");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "never missed and overdue: {rows:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
