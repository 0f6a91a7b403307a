//! Real peers for the delivery tests, started by the test setup itself: an HTTP receiver
//! (webhooks, and Twilio's REST API imitated) recording every request, and a real SMTP
//! server (Python's aiosmtpd, installed with pip into a venv under the target dir).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("json body")
    }

    /// The fields of a form-encoded body (Twilio).
    pub fn form(&self) -> Vec<(String, String)> {
        form_urlencoded::parse(self.body.as_bytes())
            .into_owned()
            .collect()
    }

    pub fn form_field(&self, name: &str) -> Option<String> {
        self.form()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}

/// What the receiver answers next: statuses queued by the test, then 200 (201 with a
/// `sid` for Twilio paths).
#[derive(Default)]
struct Plan {
    queued: VecDeque<(u16, Option<String>)>,
    received: Vec<Received>,
    delay: Duration,
}

#[derive(Clone)]
pub struct Receiver {
    pub base: String,
    plan: Arc<Mutex<Plan>>,
    stop: Arc<Mutex<Option<tokio::sync::oneshot::Sender<()>>>>,
}

async fn receive(
    State(plan): State<Arc<Mutex<Plan>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (answer, delay, count) = {
        let mut plan = plan.lock().unwrap();
        plan.received.push(Received {
            path: uri.path().to_string(),
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
            at: Instant::now(),
        });
        (plan.queued.pop_front(), plan.delay, plan.received.len())
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    match answer {
        Some((status, retry_after)) => {
            let status = StatusCode::from_u16(status).unwrap();
            let body = Json(json!({"code": 20003, "message": format!("planned {status}")}));
            match retry_after {
                Some(after) => (status, [("retry-after", after)], body).into_response(),
                None => (status, body).into_response(),
            }
        }
        None if uri.path().ends_with("/Messages.json") => (
            StatusCode::CREATED,
            Json(json!({"sid": format!("SM{count:032}"), "status": "queued"})),
        )
            .into_response(),
        None if uri.path().ends_with("/Calls.json") => (
            StatusCode::CREATED,
            Json(json!({"sid": format!("CA{count:032}"), "status": "queued"})),
        )
            .into_response(),
        None => StatusCode::OK.into_response(),
    }
}

use axum::Json;

impl Receiver {
    /// Listens on `port` (0: any free port).
    pub async fn start_on(port: u16) -> Receiver {
        let plan = Arc::new(Mutex::new(Plan::default()));
        let app = Router::new().fallback(receive).with_state(plan.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind receiver");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Receiver {
            base,
            plan,
            stop: Arc::new(Mutex::new(Some(stop))),
        }
    }

    pub async fn start() -> Receiver {
        Self::start_on(0).await
    }

    pub fn port(&self) -> u16 {
        self.base.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Stops listening (connections are then refused).
    pub fn stop(&self) {
        if let Some(stop) = self.stop.lock().unwrap().take() {
            let _ = stop.send(());
        }
    }

    /// The next `n` requests answer `status` (with `Retry-After` when given).
    pub fn answer(&self, status: u16, n: usize, retry_after: Option<&str>) {
        let mut plan = self.plan.lock().unwrap();
        for _ in 0..n {
            plan.queued
                .push_back((status, retry_after.map(str::to_string)));
        }
    }

    /// Every answer waits this long first.
    pub fn delay(&self, delay: Duration) {
        self.plan.lock().unwrap().delay = delay;
    }

    pub fn received(&self) -> Vec<Received> {
        self.plan.lock().unwrap().received.clone()
    }

    /// Waits until at least `n` requests have arrived (panics after `timeout`).
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let deadline = Instant::now() + timeout;
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "receiver got {} of {n} requests in {timeout:?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// What the Python peers import, and the pinned packages pip installs for them into the
/// venv: aiosmtpd (the SMTP sink), http_ece and py_vapid (with cryptography: the Web Push
/// service's independent RFC 8291 decryption and RFC 8292 check, `push_service.py`).
const PEER_IMPORTS: &str = "import aiosmtpd, http_ece, py_vapid, cryptography";
const PEER_PACKAGES: [&str; 3] = ["aiosmtpd==1.4.6", "http_ece==1.2.1", "py_vapid==1.9.6"];

/// A Python with the peers' packages: the system's, if it has them all, else a venv under
/// the target dir, made once per test run.
pub fn peer_python() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let has = |python: &str| {
            Command::new(python)
                .args(["-c", PEER_IMPORTS])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if has("python3") {
            return "python3".into();
        }
        let venv = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("smtp-venv");
        let python = venv.join("bin/python").display().to_string();
        if !has(&python) {
            let made = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .expect("python3 -m venv");
            assert!(made.success(), "python3 -m venv failed");
            let installed = Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(PEER_PACKAGES)
                .status()
                .expect("pip install the peers' packages");
            assert!(installed.success(), "pip install {PEER_PACKAGES:?} failed");
        }
        python
    })
}

/// A real SMTP server (aiosmtpd) on a free port; the messages it accepted, as parsed by
/// Python's `email` package. Killed when dropped.
pub struct SmtpSink {
    pub port: u16,
    child: Child,
    messages: Arc<Mutex<Vec<Value>>>,
}

impl SmtpSink {
    /// `reject`: recipients containing it are refused with 550.
    pub fn start(reject: Option<&str>) -> SmtpSink {
        let python = peer_python();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/smtp_sink.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(reject)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the SMTP sink");
        let stdout = child.stdout.take().expect("sink stdout");
        let messages = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let sink = messages.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(port) = value.get("ready").and_then(Value::as_u64) {
                    let _ = ready_tx.send(u16::try_from(port).expect("a port"));
                } else {
                    sink.lock().unwrap().push(value);
                }
            }
        });
        let port = ready_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the SMTP sink did not start");
        SmtpSink {
            port,
            child,
            messages,
        }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let got = self.messages.lock().unwrap().clone();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "SMTP sink got {} of {n} messages",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
