//! Deliveries through crashes and beside other processes, with the real binary: kill -9
//! with deliveries pending loses none; two `serve` processes on one PostgreSQL send each
//! of 1,000 deliveries exactly once.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use safetrack::domain::retry::Settlement;
use safetrack::store::{ClaimFilter, ClaimRequest};
use serde_json::{Value, json};

use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestDatabase};
use crate::durability::start_with;
use crate::harness::binary::Server;
use crate::mo_messages::{DEVICE, position_report};
use crate::peers::{Received, Receiver};

/// Fast retries, and a short lease so a killed process's claims come back quickly.
const FLAGS: [&str; 5] = [
    "--allow-private-webhooks",
    "--retry-initial-seconds",
    "0.2",
    "--delivery-lease-seconds",
    "2",
];

/// FLAGS for a process that queues deliveries and never sends them.
fn queuing_flags() -> Vec<&'static str> {
    FLAGS
        .iter()
        .copied()
        .chain(["--delivery-workers", "0"])
        .collect()
}

async fn setup(admin: &Client, hook_port: u16) {
    let response = admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": DEVICE, "DeviceType": "InReach", "FriendlyName": "Van 3"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let url = format!("http://127.0.0.1:{hook_port}/hook");
    let response = admin
        .put(
            "/V2/1000/webhooks",
            &json!({"Urls": [{"Url": url, "MoMessage": true}]}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// Posts `count` messages (sequence numbers from `first`) in batches of 100, spread over
/// `admins` in turn: each stored message is one webhook delivery.
async fn post_messages(admins: &[&Client], first: i64, count: i64) {
    let mut seq = first;
    let mut turn = 0;
    while seq < first + count {
        let batch: Vec<Value> = (seq..(seq + 100).min(first + count))
            .map(|s| position_report(s, "2026-03-01T10:00:00Z", 51.5, -0.12))
            .collect();
        seq += batch.len() as i64;
        let response = admins[turn % admins.len()]
            .post(
                &format!("/V2/1000/devices/{DEVICE}/momessages"),
                &json!(batch),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        turn += 1;
    }
}

/// Waits until the receiver has `n` distinct event ids (panics after `timeout`).
async fn wait_distinct(receiver: &Receiver, n: usize, timeout: Duration) -> Vec<Received> {
    let deadline = Instant::now() + timeout;
    loop {
        let got = receiver.received();
        let ids: HashSet<String> = got
            .iter()
            .filter_map(|r| r.header("webhook-id").map(str::to_string))
            .collect();
        if ids.len() >= n {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {n} events arrived",
            ids.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn pending_deliveries_survive_kill_9(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    // The receiver is down while the deliveries are made and attempted.
    let down = Receiver::start().await;
    let port = down.port();
    down.stop();
    let mut server = start_with(&database.url, &FLAGS).await;
    let admin = Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    setup(&admin, port).await;
    post_messages(&[&admin], 1, 200).await;
    // Let the worker claim and fail some, then kill it in the middle of its work.
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.kill_9();

    let up = Receiver::start_on(port).await;
    let server = start_with(&database.url, &FLAGS).await;
    let admin = Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let got = wait_distinct(&up, 200, Duration::from_secs(60)).await;
    let received: HashSet<String> = got
        .iter()
        .filter_map(|r| r.header("webhook-id").map(str::to_string))
        .collect();
    // 200 fit in one page (the default page size is 1,000).
    let listed = admin.get_json("/V2/1000/deliveries?channel=Webhook").await;
    let stored: HashSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["EventId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(stored.len(), 200, "one delivery per acknowledged message");
    assert_eq!(received, stored, "every delivery arrived after the restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_pending_deliveries_survive_kill_9() {
    pending_deliveries_survive_kill_9(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_pending_deliveries_survive_kill_9() {
    pending_deliveries_survive_kill_9(Backend::Postgres).await;
}

/// A process started with `--delivery-workers 0` queues deliveries and never sends them;
/// a process with workers on the same database sends every one.
async fn a_queuing_process_never_sends(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let receiver = Receiver::start().await;
    let mut queuing = start_with(&database.url, &queuing_flags()).await;
    let admin = Client::new(&queuing.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    setup(&admin, receiver.port()).await;
    post_messages(&[&admin], 1, 100).await;
    // Four of the poll intervals a worker would have had.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        receiver.received().is_empty(),
        "a process without workers sent"
    );
    let listed = admin.get_json("/V2/1000/deliveries?channel=Webhook").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 100);
    assert!(
        listed
            .iter()
            .all(|d| d["Status"] == "Pending" && d["Attempts"] == 0),
        "{listed:#?}"
    );
    queuing.kill_9();

    let _sender = start_with(&database.url, &FLAGS).await;
    let got = wait_distinct(&receiver, 100, Duration::from_secs(60)).await;
    let ids: HashSet<&str> = got.iter().filter_map(|r| r.header("webhook-id")).collect();
    assert_eq!(ids.len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_queuing_process_never_sends() {
    a_queuing_process_never_sends(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_queuing_process_never_sends() {
    a_queuing_process_never_sends(Backend::Postgres).await;
}

/// Two processes on one PostgreSQL database share the queue and never send one delivery
/// twice: 1,000 events, 1,000 requests, 1,000 distinct ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_send_each_delivery_once() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let receiver = Receiver::start().await;
    // Slow enough that both processes find work waiting.
    receiver.delay(Duration::from_millis(5));
    let one = start_with(&database.url, &FLAGS).await;
    let two = start_with(&database.url, &FLAGS).await;
    let admin_one = Client::new(&one.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let admin_two = Client::new(&two.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    setup(&admin_one, receiver.port()).await;
    post_messages(&[&admin_one, &admin_two], 1, 1000).await;

    wait_distinct(&receiver, 1000, Duration::from_secs(90)).await;
    // Anything sent twice would arrive within this.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let got = receiver.received();
    let mut per_id: HashMap<String, usize> = HashMap::new();
    for r in &got {
        *per_id
            .entry(r.header("webhook-id").unwrap_or_default().to_string())
            .or_default() += 1;
    }
    let twice: Vec<_> = per_id.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "sent more than once: {twice:?}");
    assert_eq!(got.len(), 1000);
}

/// A queuing server (no workers) on a fresh database, the tenant's webhook set up and
/// `count` messages posted (one webhook delivery each), with the store opened beside it
/// for a test to act as a worker. The server is dropped (killed) before the database.
struct Queued {
    store: safetrack::store::Store,
    admin: Client,
    _server: Server,
    _database: TestDatabase,
}

async fn queued_deliveries(backend: Backend, count: i64) -> Option<Queued> {
    let database = TestDatabase::create(backend).await?;
    let server = start_with(&database.url, &queuing_flags()).await;
    let admin = Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    // Nothing is sent (no workers): the URL's port does not matter.
    setup(&admin, 9).await;
    post_messages(&[&admin], 1, count).await;
    let store = safetrack::app::open_store(&database.url)
        .await
        .expect("open store");
    Some(Queued {
        store,
        admin,
        _server: server,
        _database: database,
    })
}

/// Settling is fenced by the lease: when a worker's lease ran out and another worker took
/// the delivery over, the first worker's outcome is refused and the newer one stands.
/// Outcomes of several deliveries settle together, each answered in order.
async fn a_taken_over_lease_keeps_the_newer_outcome(backend: Backend) {
    let Some(queued) = queued_deliveries(backend, 3).await else {
        return;
    };
    let (store, admin) = (&queued.store, &queued.admin);
    let start = safetrack::domain::time::now();
    // Worker a's lease ends at once; worker b, a second later, takes one delivery over.
    let first = store
        .claim_due_deliveries(&ClaimRequest {
            owner: "worker-a",
            now: start,
            lease: Duration::ZERO,
            limit: 10,
            filter: ClaimFilter::All,
            busy_urls: &[],
        })
        .await
        .expect("claim");
    assert_eq!(first.len(), 3);
    let later = start + jiff::SignedDuration::from_secs(1);
    let second = store
        .claim_due_deliveries(&ClaimRequest {
            owner: "worker-b",
            now: later,
            lease: Duration::from_secs(60),
            limit: 1,
            filter: ClaimFilter::All,
            busy_urls: &[],
        })
        .await
        .expect("claim");
    assert_eq!(second.len(), 1);
    let taken = second[0].id;

    let sent = Settlement::Sent {
        at: later,
        provider_id: None,
    };
    let outcomes: Vec<_> = first.iter().map(|d| (d.id, sent.clone())).collect();
    let ours = store
        .settle_deliveries("worker-a", &outcomes)
        .await
        .expect("settle");
    let expected: Vec<bool> = first.iter().map(|d| d.id != taken).collect();
    assert_eq!(
        ours, expected,
        "a's outcome counts only where a still holds the lease"
    );
    let gone = Settlement::Failed {
        error: "HTTP 410 Gone".into(),
    };
    let ours = store
        .settle_deliveries("worker-b", &[(taken, gone)])
        .await
        .expect("settle");
    assert_eq!(ours, [true]);
    store.close().await;

    let listed = admin.get_json("/V2/1000/deliveries?channel=Webhook").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 3);
    for d in listed {
        let id: i64 = d["DeliveryId"].as_str().unwrap().parse().unwrap();
        if id == taken.get() {
            assert_eq!(d["Status"], "Failed", "{d:#}");
            assert_eq!(d["LastError"], "HTTP 410 Gone");
            assert_eq!(d["Attempts"], 2);
        } else {
            assert_eq!(d["Status"], "Sent", "{d:#}");
            assert!(d["SentAt"].is_string(), "{d:#}");
            assert_eq!(d["Attempts"], 1);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_taken_over_lease_keeps_the_newer_outcome() {
    a_taken_over_lease_keeps_the_newer_outcome(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_taken_over_lease_keeps_the_newer_outcome() {
    a_taken_over_lease_keeps_the_newer_outcome(Backend::Postgres).await;
}

/// A worker step settles its previous step's outcomes and claims the next deliveries in
/// one call: the settled ones are not claimed again, the others are, and each outcome is
/// answered with whether the lease was still the worker's.
async fn a_step_settles_its_last_outcomes_with_its_claim(backend: Backend) {
    let Some(queued) = queued_deliveries(backend, 3).await else {
        return;
    };
    let (store, admin) = (&queued.store, &queued.admin);
    let request = |limit| ClaimRequest {
        owner: "worker-a",
        now: safetrack::domain::time::now(),
        lease: Duration::from_secs(60),
        limit,
        filter: ClaimFilter::All,
        busy_urls: &[],
    };
    let first = store
        .claim_due_deliveries(&request(2))
        .await
        .expect("claim");
    assert_eq!(first.len(), 2);
    let sent = Settlement::Sent {
        at: safetrack::domain::time::now(),
        provider_id: None,
    };
    let outcomes: Vec<_> = first.iter().map(|d| (d.id, sent.clone())).collect();
    let (ours, next) = store
        .settle_then_claim(&outcomes, &request(10))
        .await
        .expect("settle and claim");
    assert_eq!(ours, [true, true]);
    assert_eq!(next.len(), 1, "only the delivery not yet attempted");
    assert!(first.iter().all(|d| d.id != next[0].id));
    // Nothing left to claim: the outcomes are still settled.
    let retry = Settlement::Retry {
        next: safetrack::domain::time::now() + jiff::SignedDuration::from_secs(3600),
        error: "HTTP 503".into(),
    };
    let (ours, none) = store
        .settle_then_claim(&[(next[0].id, retry)], &request(10))
        .await
        .expect("settle");
    assert_eq!(ours, [true]);
    assert!(none.is_empty());
    store.close().await;

    let listed = admin.get_json("/V2/1000/deliveries?channel=Webhook").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 3);
    for d in listed {
        let id: i64 = d["DeliveryId"].as_str().unwrap().parse().unwrap();
        if id == next[0].id.get() {
            assert_eq!(d["Status"], "Pending", "{d:#}");
            assert_eq!(d["LastError"], "HTTP 503");
        } else {
            assert_eq!(d["Status"], "Sent", "{d:#}");
        }
        assert_eq!(d["Attempts"], 1, "{d:#}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_step_settles_its_last_outcomes_with_its_claim() {
    a_step_settles_its_last_outcomes_with_its_claim(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_step_settles_its_last_outcomes_with_its_claim() {
    a_step_settles_its_last_outcomes_with_its_claim(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_claim_leaves_busy_urls_out() {
    a_claim_leaves_busy_urls_out(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_claim_leaves_busy_urls_out() {
    a_claim_leaves_busy_urls_out(Backend::Postgres).await;
}

/// A worker leaves out of its claims the URLs it already has enough slow attempts to; the
/// other deliveries behind them are claimed, oldest first.
async fn a_claim_leaves_busy_urls_out(backend: Backend) {
    let Some(queued) = queued_deliveries(backend, 4).await else {
        return;
    };
    let (store, admin) = (&queued.store, &queued.admin);
    // Then two events to another URL, queued after the first four.
    let other = "http://127.0.0.1:10/other";
    let response = admin
        .put(
            "/V2/1000/webhooks",
            &json!({"Urls": [{"Url": other, "MoMessage": true}]}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    post_messages(&[admin], 5, 2).await;

    let claim = |busy: Vec<String>, owner: &'static str| {
        let store = store.clone();
        async move {
            store
                .claim_due_deliveries(&ClaimRequest {
                    owner,
                    now: safetrack::domain::time::now(),
                    lease: Duration::from_secs(60),
                    limit: 3,
                    filter: ClaimFilter::All,
                    busy_urls: &busy,
                })
                .await
                .expect("claim")
        }
    };
    let busy = vec!["http://127.0.0.1:9/hook".to_string()];
    let first = claim(busy.clone(), "worker-a").await;
    let targets: Vec<Option<&str>> = first.iter().map(|d| d.target.as_deref()).collect();
    assert_eq!(
        targets,
        [Some(other), Some(other)],
        "only the other URL's two"
    );
    assert!(claim(busy, "worker-a").await.is_empty(), "nothing else");
    let rest = claim(Vec::new(), "worker-b").await;
    assert_eq!(rest.len(), 3, "the busy URL's, once it is not busy");
    assert!(
        rest.iter()
            .all(|d| d.target.as_deref() == Some("http://127.0.0.1:9/hook"))
    );
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_an_attempt_ends_before_its_lease() {
    an_attempt_ends_before_its_lease(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_an_attempt_ends_before_its_lease() {
    an_attempt_ends_before_its_lease(Backend::Postgres).await;
}

/// With a lease (2 s) shorter than the receiver takes to answer (5 s), each attempt is
/// abandoned before its lease ends — never still sending when another worker may take
/// the delivery over — and recorded as a retry saying so. (Without the cut the first
/// attempt ran on past its lease while a second worker sent the same event, and the
/// delivery ended `Sent` after overlapping attempts, never with this error.)
async fn an_attempt_ends_before_its_lease(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let slow = Receiver::start().await;
    slow.delay(Duration::from_secs(5));
    let server = start_with(&database.url, &FLAGS).await;
    let admin = Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    setup(&admin, slow.port()).await;
    post_messages(&[&admin], 1, 1).await;

    let deadline = Instant::now() + Duration::from_secs(20);
    let delivery = loop {
        let listed = admin.get_json("/V2/1000/deliveries?channel=Webhook").await;
        let delivery = listed[0].clone();
        if delivery["LastError"]
            .as_str()
            .is_some_and(|e| e.contains("lease ran out"))
        {
            break delivery;
        }
        assert!(Instant::now() < deadline, "never abandoned: {delivery:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(delivery["Status"], "Pending", "{delivery:#}");
}
