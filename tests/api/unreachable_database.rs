//! A database the server can no longer reach makes it answer 503 with `Retry-After`
//! (the client's request did nothing and may be sent again), never a 500. PostgreSQL
//! only: the app reaches the server through a relay of this test's, which the test
//! then shuts — every open connection cut, every new one refused.

use std::sync::{Arc, Mutex};

use reqwest::StatusCode;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::common::{Backend, TestDatabase, spawn_app_on};

/// Relays TCP connections to `target` until shut.
struct Relay {
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Relay {
    async fn start(target: String) -> (Relay, std::net::SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let tasks = Arc::new(Mutex::new(Vec::new()));
        let spawned = tasks.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let target = target.clone();
                let relay = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                spawned.lock().expect("tasks").push(relay);
            }
        });
        tasks.lock().expect("tasks").push(accepting);
        (Relay { tasks }, address)
    }

    /// Closes the listening socket and every relayed connection.
    fn shut(&self) {
        for task in self.tasks.lock().expect("tasks").drain(..) {
            task.abort();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn an_unreachable_database_answers_503_with_retry_after() {
    let Some(mut database) = TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    let mut url = reqwest::Url::parse(&database.url).expect("a URL");
    let target = format!(
        "{}:{}",
        url.host_str().expect("a host"),
        url.port().unwrap_or(5432)
    );
    let (relay, address) = Relay::start(target).await;
    url.set_host(Some(&address.ip().to_string())).expect("host");
    url.set_port(Some(address.port())).expect("port");
    // The schema is still dropped through the real server (TestDatabase keeps it).
    database.url = url.to_string();
    let app = spawn_app_on(Backend::Postgres, database, Default::default()).await;
    let before = app.admin.get("/V2/1000/devices").await;
    assert_eq!(before.status(), StatusCode::OK);

    relay.shut();
    let answer = app.admin.get("/V2/1000/devices").await;
    assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        answer.headers().contains_key("retry-after"),
        "{:?}",
        answer.headers()
    );
    let problem: serde_json::Value = answer.json().await.expect("a problem");
    assert_eq!(problem["status"], 503, "{problem}");
}
