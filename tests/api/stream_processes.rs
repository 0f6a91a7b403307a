//! The live stream with several processes on one PostgreSQL database (`store/stream_feed.rs`):
//! every process streams the same events under the same ids, so a client resumes with
//! `Last-Event-ID` on any of them — also one started later, or one whose listening
//! connection was cut, or one that missed a notification: what a process did not hear
//! it reads back from the database's log of announcements.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestDatabase};
use crate::durability::start_with;
use crate::harness::binary::Server;
use crate::mo_messages::{position_report, register_device};
use crate::stream::{EventStream, SseEvent, kinds, post_report, stream_path};

/// Posts one position report (sequence `seq`) to van-3 of tenant 1000 through `client`;
/// returns its MessageId.
async fn post(client: &Client, seq: i64) -> String {
    let batch = json!([position_report(
        seq,
        &format!("2026-03-02T10:{seq:02}:00Z"),
        51.5 + seq as f64 / 1000.0,
        -0.12
    )]);
    let response = client
        .post("/V2/1000/devices/van-3/momessages?process=true", &batch)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let processed: Value = response.json().await.expect("processed");
    processed[0]["MessageId"].as_str().expect("id").to_string()
}

/// The admin of a `serve` process.
fn admin(server: &Server) -> Client {
    Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)))
}

/// Registers van-3 in tenant 1000 through `client`.
async fn register_van(client: &Client) {
    let registered = client
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "van-3", "DeviceType": "InReach"}),
        )
        .await;
    assert_eq!(registered.status(), StatusCode::OK);
}

/// A connection to the test server as its superuser, in `schema` when given.
async fn superuser(schema: Option<&str>) -> sqlx::PgConnection {
    let server = crate::common::postgres_url().await.expect("PostgreSQL URL");
    let mut connection = <sqlx::PgConnection as sqlx::Connection>::connect(&server)
        .await
        .expect("connect");
    if let Some(schema) = schema {
        sqlx::query(&format!("SET search_path TO \"{schema}\""))
            .execute(&mut connection)
            .await
            .expect("search_path");
    }
    connection
}

/// Two `serve` processes on one PostgreSQL database, van-3 registered: their admins.
struct TwoProcesses {
    one: Client,
    two: Client,
    /// Running as long as this is kept.
    _servers: (Server, Server),
}

async fn two_processes(database: &TestDatabase) -> TwoProcesses {
    let one = start_with(&database.url, &[]).await;
    let two = start_with(&database.url, &[]).await;
    let processes = TwoProcesses {
        one: admin(&one),
        two: admin(&two),
        _servers: (one, two),
    };
    register_van(&processes.one).await;
    processes
}

/// Two `serve` processes on one PostgreSQL database: a stream on either carries what
/// both ingested, the same events under the same ids in the same order, so a client
/// resumes on the other process with `Last-Event-ID` without a gap or a duplicate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_two_processes_stream_the_same_events() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let processes = two_processes(&database).await;
    let (admin_one, admin_two) = (&processes.one, &processes.two);
    let path = stream_path("1000", false);
    let mut on_one = EventStream::open(admin_one, &path, None).await;
    let mut on_two = EventStream::open(admin_two, &path, None).await;

    let ids = [
        post(admin_one, 1).await,
        post(admin_two, 2).await,
        post(admin_one, 3).await,
    ];
    let seen_on_one = on_one.take(6).await;
    let seen_on_two = on_two.take(6).await;
    assert_eq!(
        seen_on_one, seen_on_two,
        "one stream, whichever process serves it"
    );
    assert_eq!(
        kinds(&seen_on_two),
        [
            "momessage",
            "device",
            "momessage",
            "device",
            "momessage",
            "device"
        ]
    );
    let streamed: Vec<Value> = seen_on_two
        .iter()
        .filter(|e| e.event == "momessage")
        .map(|e| e.data["MessageId"].clone())
        .collect();
    assert_eq!(streamed, ids.map(Value::from));
    assert!(seen_on_two.windows(2).all(|w| w[0].id < w[1].id));

    // The client on process two goes away after its second event and comes back to
    // process one: the rest, then live events from either process.
    drop(on_two);
    let mut resumed = EventStream::open(admin_one, &path, Some(seen_on_two[1].id)).await;
    assert_eq!(resumed.take(4).await, seen_on_one[2..]);
    let live = post(admin_two, 4).await;
    let event = resumed.expect().await;
    assert_eq!(
        (event.event.as_str(), &event.data["MessageId"]),
        ("momessage", &json!(live))
    );
    assert_eq!(on_one.take(1).await, [event]);
}

/// A process started after events were streamed holds them too (read from the log at
/// start-up): a client that followed process one resumes on it without a gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_process_started_later_resumes_from_the_log() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let one = start_with(&database.url, &[]).await;
    let admin_one = admin(&one);
    register_van(&admin_one).await;
    let path = stream_path("1000", false);
    let mut on_one = EventStream::open(&admin_one, &path, None).await;
    for seq in 1..=3 {
        post(&admin_one, seq).await;
    }
    let seen = on_one.take(6).await;

    let two = start_with(&database.url, &[]).await;
    let admin_two = admin(&two);
    let mut resumed = EventStream::open(&admin_two, &path, Some(seen[1].id)).await;
    // The same events under the same ids, device events showing the device as each
    // batch left it (read from the log, not as it is now).
    let rest = resumed.take(4).await;
    assert_eq!(rest, seen[2..]);
    // And live from there, the same on both.
    let live = post(&admin_two, 4).await;
    let next = resumed.take(2).await;
    assert_eq!(next[0].data["MessageId"], json!(live));
    assert_eq!(next[0].id, seen[5].id + 1);
    assert_eq!(on_one.take(2).await, next);
}

/// A device event shows the device as its batch left it, whenever a process reads it:
/// process two, followed by nobody while three batches commit, reads them only when a
/// client resumes there, and still shows each batch's position, not the last one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_device_event_shows_the_device_as_its_batch_left_it() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let processes = two_processes(&database).await;
    let (admin_one, admin_two) = (&processes.one, &processes.two);
    let path = stream_path("1000", false);
    let mut on_one = EventStream::open(admin_one, &path, None).await;
    for seq in 1..=3 {
        post(admin_one, seq).await;
    }
    let seen = on_one.take(6).await;
    let positions = |events: &[SseEvent]| -> Vec<(Value, Value)> {
        events
            .iter()
            .filter(|e| e.event == "device")
            .map(|e| {
                (
                    e.data["LastMessageTime"].clone(),
                    e.data["LastPosition"]["Lat"].clone(),
                )
            })
            .collect()
    };
    let expected = [
        (json!("2026-03-02T10:01:00Z"), json!(51.501)),
        (json!("2026-03-02T10:02:00Z"), json!(51.502)),
        (json!("2026-03-02T10:03:00Z"), json!(51.503)),
    ];
    assert_eq!(positions(&seen), expected);

    let mut on_two = EventStream::open(admin_two, &path, Some(seen[0].id - 1)).await;
    let read_later = on_two.take(6).await;
    assert_eq!(positions(&read_later), expected);
    assert_eq!(read_later, seen);
}

/// A notification a process never received (PostgreSQL skips notifying when its queue
/// is half full; a rolled-back transaction leaves a hole in the ids too): the next
/// notification's id shows the jump and the process reads the missed announcement from
/// the log, so the stream carries it, in order, before the newer events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_missed_notification_is_read_from_the_log() {
    let Some(app) = crate::common::spawn_app(Backend::Postgres).await else {
        return;
    };
    register_device(&app, "1000", "van-3").await;
    let mut stream = EventStream::open(&app.admin, &stream_path("1000", false), None).await;
    post_report(&app, "1000", "van-3", 1).await;
    let before = stream.take(2).await;

    // An announcement logged under the next id but never notified: the device event.
    let mut db = superuser(app.postgres_schema()).await;
    let (id,): (i64,) = sqlx::query_as("SELECT nextval('stream_event_ids')")
        .fetch_one(&mut db)
        .await
        .expect("reserve an id");
    assert_eq!(id as u64, before[1].id + 1);
    let path: (String,) = sqlx::query_as("SELECT path FROM tenants WHERE code = '1000'")
        .fetch_one(&mut db)
        .await
        .expect("tenant path");
    let body = json!({"t": "1000", "p": path.0, "d": "van-3", "s": true}).to_string();
    sqlx::query("INSERT INTO stream_announcements (first_id, body) VALUES ($1, $2)")
        .bind(id)
        .bind(&body)
        .execute(&mut db)
        .await
        .expect("log");

    let posted = post_report(&app, "1000", "van-3", 2).await;
    let after = stream.take(3).await;
    assert_eq!(kinds(&after), ["device", "momessage", "device"]);
    assert_eq!(after[0].id, id as u64, "the missed event, under its id");
    assert_eq!(after[0].data["DeviceId"], "van-3");
    assert_eq!(after[1].data["MessageId"], json!(posted));
    assert!(after.windows(2).all(|w| w[0].id + 1 == w[1].id));
}

/// On PostgreSQL a process hears the stream through one listening connection. When that
/// connection is cut (a database restart, a proxy timeout), the process listens again
/// and reads what was announced meanwhile from the log: every event committed arrives,
/// once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_the_stream_survives_a_lost_listening_connection() {
    let Some(app) = crate::common::spawn_app(Backend::Postgres).await else {
        return;
    };
    let schema = app.postgres_schema().expect("a schema").to_string();
    register_device(&app, "1000", "van-3").await;
    let mut stream = EventStream::open(&app.admin, &stream_path("1000", false), None).await;
    post_report(&app, "1000", "van-3", 1).await;
    let before = stream.take(2).await;
    assert_eq!(kinds(&before), ["momessage", "device"]);

    // Cut exactly this app's listening connection, and post at once: some of these
    // commits come while the process is not listening.
    let mut db = superuser(None).await;
    let cut: Vec<(bool,)> =
        sqlx::query_as("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1")
            .bind(format!("LISTEN \"safetrack_stream_{schema}\""))
            .fetch_all(&mut db)
            .await
            .expect("terminate");
    assert_eq!(cut, [(true,)], "one listening connection");
    let mut posted = Vec::new();
    for seq in 2..=4 {
        posted.push(json!(post_report(&app, "1000", "van-3", seq).await));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    posted.push(json!(post_report(&app, "1000", "van-3", 5).await));

    let after = stream.take(8).await;
    let streamed: Vec<Value> = after
        .iter()
        .filter(|e| e.event == "momessage")
        .map(|e| e.data["MessageId"].clone())
        .collect();
    assert_eq!(streamed, posted, "every message, once, in order");
    assert_eq!(after[0].id, before[1].id + 1);
    assert!(after.windows(2).all(|w| w[0].id + 1 == w[1].id));
}

/// The log keeps the recent announcements only: pruning drops the older ones, and a
/// process started afterwards streams what is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_the_log_is_pruned_to_the_recent_events() {
    let Some(app) = crate::common::spawn_app(Backend::Postgres).await else {
        return;
    };
    register_device(&app, "1000", "van-3").await;
    for seq in 1..=5 {
        post_report(&app, "1000", "van-3", seq).await;
    }
    let store = safetrack::app::open_store(app.database_url())
        .await
        .expect("open store");
    let logged = store.stream_log_after(0, 100).await.expect("log");
    assert_eq!(logged.len(), 5, "one announcement per batch");
    // Keep about the last 4 events (two batches of a message and the device each).
    assert_eq!(store.prune_stream_log(4).await.expect("prune"), 3);
    let kept = store.stream_log_after(0, 100).await.expect("log");
    assert_eq!(kept, logged[3..]);
    assert_eq!(
        store.prune_stream_log(4).await.expect("prune"),
        0,
        "idempotent"
    );
}
