//! Connections a client opens and leaves (issue 30, finding 4): the header-read timeout
//! closes a connection that sends nothing or only part of its headers, the idle timeout
//! closes a keep-alive connection after its response, a live stream outlives both, and the
//! connection cap (set, or sized from the descriptor limit) keeps the server answering
//! while idle connections pile up. Runs the real binary with short timeouts. Only the
//! stream runs on both backends: the rest never reaches the database.

use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::backend_fn_tests;
use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestDatabase};
use crate::harness::binary::{Binary, start_binary};
use crate::mo_messages::position_report;
use crate::stream::EventStream;

backend_fn_tests!(a_stream_outlives_both_timeouts);

/// Generous bound for whatever a timeout of a second or two should have done by then.
const BOUND: Duration = Duration::from_secs(15);

/// The binary on a fresh SQLite database (kept alive beside it).
async fn sqlite_binary(extra: &[&str], nofile: Option<u64>) -> (Binary, TestDatabase) {
    let database = TestDatabase::create(Backend::Sqlite)
        .await
        .expect("sqlite database");
    (start_binary(&database.url, extra, nofile).await, database)
}

fn address(base: &str) -> &str {
    base.strip_prefix("http://").expect("http base")
}

async fn connect(base: &str) -> TcpStream {
    TcpStream::connect(address(base)).await.expect("connect")
}

/// Reads until the server closes the connection (end of stream or reset), failing after
/// `BOUND`; answers how long that took and what was received.
async fn until_closed(stream: &mut TcpStream) -> (Duration, Vec<u8>) {
    let started = Instant::now();
    let mut received = Vec::new();
    let closed = tokio::time::timeout(BOUND, async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the server left the connection open");
    (started.elapsed(), received)
}

async fn healthz(base: &str) -> StatusCode {
    let client = reqwest::Client::builder()
        .timeout(BOUND)
        .build()
        .expect("client");
    client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("GET /healthz answered")
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_sends_is_closed_after_the_header_timeout() {
    let (binary, _database) = sqlite_binary(
        &[
            "--header-read-timeout-seconds=1",
            "--idle-timeout-seconds=60",
        ],
        None,
    )
    .await;
    let mut silent = connect(&binary.server.base).await;
    let (after, received) = until_closed(&mut silent).await;
    // Not closed at once either: it is the timeout that closed it.
    assert!(
        after >= Duration::from_millis(500),
        "closed after {after:?}"
    );
    assert!(
        !String::from_utf8_lossy(&received).contains(" 200 "),
        "{received:?}"
    );
    assert_eq!(healthz(&binary.server.base).await, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_headers_are_closed_after_the_header_timeout() {
    let (binary, _database) = sqlite_binary(
        &[
            "--header-read-timeout-seconds=1",
            "--idle-timeout-seconds=60",
        ],
        None,
    )
    .await;
    let stream = connect(&binary.server.base).await;
    let (mut reader, mut writer) = stream.into_split();
    // Slowloris: a request line, then a header byte now and then, never the blank line.
    let dribble = tokio::spawn(async move {
        let mut sent = writer
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: safetrack\r\nX-Slow: ")
            .await;
        while sent.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
            sent = writer.write_all(b"a").await;
        }
    });
    let closed = tokio::time::timeout(BOUND, async {
        let mut received = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            match reader.read(&mut buffer).await {
                Ok(0) | Err(_) => return received,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    dribble.abort();
    let received = closed.expect("the server left a half-sent request open");
    assert!(
        !String::from_utf8_lossy(&received).contains(" 200 "),
        "{received:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    // The header timeout is far away: only the idle timeout can close it.
    let (binary, _database) = sqlite_binary(
        &[
            "--header-read-timeout-seconds=60",
            "--idle-timeout-seconds=1",
        ],
        None,
    )
    .await;
    let mut stream = connect(&binary.server.base).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: safetrack\r\n\r\n")
        .await
        .expect("send");
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    while !received.ends_with(b"\r\n\r\nok") {
        let n = tokio::time::timeout(BOUND, stream.read(&mut buffer))
            .await
            .expect("a response in time")
            .expect("read");
        assert!(n > 0, "closed before the response: {received:?}");
        received.extend_from_slice(&buffer[..n]);
    }
    assert!(received.starts_with(b"HTTP/1.1 200"), "{received:?}");
    let (after, rest) = until_closed(&mut stream).await;
    assert!(
        after >= Duration::from_millis(500),
        "closed after {after:?}"
    );
    assert!(rest.is_empty(), "{rest:?}");
}

/// A live stream is a request in flight: neither timeout ends it, and events keep coming.
async fn a_stream_outlives_both_timeouts(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let binary = start_binary(
        &database.url,
        &[
            "--header-read-timeout-seconds=1",
            "--idle-timeout-seconds=1",
        ],
        None,
    )
    .await;
    let admin = Client::new(&binary.server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let response = admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "van-9", "DeviceType": "InReach"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = EventStream::open(&admin, "/V2/1000/stream", None).await;
    for seq in 1..=2 {
        // Past both timeouts with nothing sent on the stream (keep-alives come every 15 s).
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let batch = json!([position_report(seq, "2026-03-02T10:00:00Z", 51.5, -0.12)]);
        let response = admin
            .post("/V2/1000/devices/van-9/momessages?process=true", &batch)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let processed: serde_json::Value = response.json().await.expect("json");
        let id = processed[0]["MessageId"].as_str().expect("MessageId");
        loop {
            let event = stream.expect().await;
            if event.event == "momessage" {
                assert_eq!(event.data["MessageId"], id);
                break;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_house_waits_for_a_free_connection() {
    let (binary, _database) = sqlite_binary(
        &[
            "--max-connections=2",
            "--header-read-timeout-seconds=60",
            "--idle-timeout-seconds=60",
        ],
        None,
    )
    .await;
    let base = &binary.server.base;
    let mut first = connect(base).await;
    let _second = connect(base).await;
    // Both hold a connection: a third client waits in the backlog, unanswered.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let waiting = reqwest::Client::builder()
        .timeout(Duration::from_millis(1500))
        .build()
        .expect("client")
        .get(format!("{base}/healthz"))
        .send()
        .await;
    assert!(
        waiting.is_err(),
        "answered beyond the cap: {:?}",
        waiting.map(|r| r.status())
    );
    // One closes: the next request is served.
    first.shutdown().await.expect("close");
    drop(first);
    assert_eq!(healthz(base).await, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_up_to_the_cap_give_way_to_the_timeout() {
    let (binary, _database) = sqlite_binary(
        &[
            "--max-connections=2",
            "--header-read-timeout-seconds=1",
            "--idle-timeout-seconds=2",
        ],
        None,
    )
    .await;
    let base = &binary.server.base;
    let mut idle = vec![connect(base).await, connect(base).await];
    // Served once the header timeout closes an idle one; then as usual.
    assert_eq!(healthz(base).await, StatusCode::OK);
    for stream in &mut idle {
        until_closed(stream).await;
    }
    assert_eq!(healthz(base).await, StatusCode::OK);
}

/// The audit's reproduction: more idle connections than descriptors. With 256 descriptors
/// (soft and hard) the cap is sized from the limit, the rest wait in the backlog, the
/// header timeout frees slots, and `/healthz` still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_idle_connections_than_descriptors_do_not_stop_the_server() {
    let (binary, _database) = sqlite_binary(
        &[
            "--header-read-timeout-seconds=1",
            "--idle-timeout-seconds=2",
        ],
        Some(256),
    )
    .await;
    let base = &binary.server.base;
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(connect(base).await);
    }
    assert_eq!(healthz(base).await, StatusCode::OK);
    drop(idle);
    assert_eq!(healthz(base).await, StatusCode::OK);
}

/// SIGTERM: the listener closes at once, the request in flight (its body still coming)
/// is finished and answered, then the process exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_request_in_flight_and_stops_accepting() {
    use base64::Engine;
    let (mut binary, _database) = sqlite_binary(&[], None).await;
    let base = binary.server.base.clone();
    let body = br#"{"DeviceId": "late-van", "DeviceType": "InReach"}"#;
    let credentials =
        base64::engine::general_purpose::STANDARD.encode(format!("{ADMIN_EMAIL}:{ADMIN_PASSWORD}"));
    let mut stream = connect(&base).await;
    let head = format!(
        "POST /V2/1000/devices HTTP/1.1\r\nHost: safetrack\r\nAuthorization: Basic {credentials}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    stream.write_all(&body[..10]).await.expect("half a body");
    tokio::time::sleep(Duration::from_millis(500)).await;

    let terminated = Command::new("kill")
        .args(["-TERM", &binary.server.child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(terminated.success());
    // No new connection is accepted.
    let refused = tokio::time::timeout(BOUND, async {
        while TcpStream::connect(address(&base)).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(refused.is_ok(), "still accepting after SIGTERM");

    stream.write_all(&body[10..]).await.expect("the rest");
    let (_, response) = until_closed(&mut stream).await;
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let exited = tokio::time::timeout(BOUND, async {
        loop {
            if let Some(status) = binary.server.child.try_wait().expect("wait") {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("exited after the request in flight");
    assert!(exited.success(), "{exited:?}");
}

/// `POST /auth/session` with the headers of a `length`-byte JSON body, and its first
/// `sent` bytes.
async fn login_head(base: &str, body: &[u8], sent: usize) -> TcpStream {
    let mut stream = connect(base).await;
    stream.set_nodelay(true).expect("nodelay");
    let head = format!(
        "POST /auth/session HTTP/1.1\r\nHost: safetrack\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    stream
        .write_all(&body[..sent])
        .await
        .expect("part of a body");
    stream
}

/// A login whose body trickles in a byte every 300 ms (well under any per-read timer):
/// answers what the server sent before it closed the connection.
async fn trickle(base: &str) -> tokio::task::JoinHandle<Vec<u8>> {
    let body = vec![b' '; 4096];
    let stream = login_head(base, &body, 1).await;
    tokio::spawn(async move {
        let (mut reader, mut writer) = stream.into_split();
        let dribble = tokio::spawn(async move {
            for byte in &body[1..] {
                tokio::time::sleep(Duration::from_millis(300)).await;
                if writer.write_all(&[*byte]).await.is_err() {
                    return;
                }
            }
        });
        let mut received = Vec::new();
        let closed = tokio::time::timeout(BOUND, async {
            let mut buffer = [0u8; 4096];
            loop {
                match reader.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => received.extend_from_slice(&buffer[..n]),
                }
            }
        })
        .await;
        dribble.abort();
        assert!(closed.is_ok(), "a trickling body kept its connection");
        received
    })
}

/// Issue 42: trickling bodies on every connection slot no longer hold the server. At the
/// body deadline each is cut (its connection closed, after a 408 if the answer arrives
/// before the reset of the bytes still coming), and `/healthz` is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickling_bodies_are_cut_at_the_body_deadline() {
    let (binary, _database) = sqlite_binary(
        &[
            "--max-connections=3",
            "--header-read-timeout-seconds=60",
            "--idle-timeout-seconds=60",
            "--body-read-timeout-seconds=2",
        ],
        None,
    )
    .await;
    let base = &binary.server.base;
    let started = Instant::now();
    let mut tricklers = Vec::new();
    for _ in 0..3 {
        tricklers.push(trickle(base).await);
    }
    // Every slot is taken until the deadline frees them.
    assert_eq!(healthz(base).await, StatusCode::OK);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "answered after {:?}: the slots were not all taken",
        started.elapsed()
    );
    for trickler in tricklers {
        let received = trickler.await.expect("trickler");
        let text = String::from_utf8_lossy(&received);
        assert!(
            received.is_empty() || text.starts_with("HTTP/1.1 408"),
            "{text}"
        );
    }
    assert_eq!(healthz(base).await, StatusCode::OK);
}

/// A body that stops half way is answered 408 problem+json at the deadline, and its
/// connection closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_is_answered_408_and_closed() {
    let (binary, _database) = sqlite_binary(
        &[
            "--header-read-timeout-seconds=60",
            "--idle-timeout-seconds=60",
            "--body-read-timeout-seconds=1",
        ],
        None,
    )
    .await;
    let body = br#"{"Username": "nobody@example.com", "Password": "not-sent-yet"}"#;
    let mut stream = login_head(&binary.server.base, body, 20).await;
    let (after, received) = until_closed(&mut stream).await;
    assert!(
        after >= Duration::from_millis(500),
        "closed after {after:?}"
    );
    let text = String::from_utf8_lossy(&received).to_lowercase();
    assert!(text.starts_with("http/1.1 408"), "{text}");
    assert!(
        text.contains("content-type: application/problem+json"),
        "{text}"
    );
    assert!(text.contains("connection: close"), "{text}");
    assert!(text.contains(r#""code":"request_timeout""#), "{text}");
    assert_eq!(healthz(&binary.server.base).await, StatusCode::OK);
}

/// A gateway reads its body only for a known caller, under the same deadline: a stalled
/// Garmin post with a good token is a 408 too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_gateway_body_is_answered_408() {
    let (binary, _database) = sqlite_binary(&["--body-read-timeout-seconds=1"], None).await;
    let base = &binary.server.base;
    let created: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/V2/1000/apitokens"))
        .basic_auth(ADMIN_EMAIL, Some(ADMIN_PASSWORD))
        .json(&serde_json::json!({"Name": "garmin", "Permissions": ["DeviceMessages"]}))
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("token json");
    let token = created["Token"].as_str().expect("secret");
    let mut stream = connect(base).await;
    let head = format!(
        "POST /gateways/garmin HTTP/1.1\r\nHost: safetrack\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"Version\""
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    let (_, received) = until_closed(&mut stream).await;
    let text = String::from_utf8_lossy(&received).to_lowercase();
    assert!(text.starts_with("http/1.1 408"), "{text}");
    assert!(text.contains(r#""code":"request_timeout""#), "{text}");
}

/// A slow upload that completes within the deadline is served as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_within_the_deadline_is_served() {
    let (binary, _database) = sqlite_binary(&["--body-read-timeout-seconds=5"], None).await;
    let body = format!(r#"{{"Username": "{ADMIN_EMAIL}", "Password": "{ADMIN_PASSWORD}"}}"#);
    let body = body.as_bytes();
    let mut stream = login_head(&binary.server.base, body, 0).await;
    // The body in four pieces over 1.5 s.
    for piece in body.chunks(body.len().div_ceil(4)) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stream.write_all(piece).await.expect("a piece of the body");
    }
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&received).contains("CsrfToken") {
        let n = tokio::time::timeout(BOUND, stream.read(&mut buffer))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(n > 0, "closed before the answer: {received:?}");
        received.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
}
