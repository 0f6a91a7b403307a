//! HTTPS served directly (issue 46, the worker app needs a secure context): the real
//! binary started with `--tls-cert`/`--tls-key` and a certificate made at test time
//! (rcgen) answers HTTPS only, logs a browser in with a `Secure` cookie and sends
//! `Strict-Transport-Security`; plain HTTP on its port gets nothing; and every way the
//! two flags or their files can be wrong stops it at start-up, naming the flag and the
//! file, before anything is opened or served.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::backend_fn_tests;
use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, TestDatabase};

backend_fn_tests!(https_is_served_directly);

/// A directory of its own holding PEM files, removed when dropped.
struct Files(PathBuf);

impl Files {
    fn new() -> Self {
        let dir =
            std::env::temp_dir().join(format!("safetrack-tls-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Self(dir)
    }

    fn write(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("write file");
        path
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A self-signed certificate for `localhost` and 127.0.0.1: (certificate PEM, key PEM).
fn self_signed() -> (String, String) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("self-signed certificate");
    (made.cert.pem(), made.signing_key.serialize_pem())
}

/// The binary serving HTTPS, killed when dropped.
struct TlsServer {
    child: Child,
    address: String,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn safetrack() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_safetrack"));
    command
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LOG", "warn")
        .env_remove("SAFETRACK_TLS_CERT")
        .env_remove("SAFETRACK_TLS_KEY")
        .env_remove("SAFETRACK_DATABASE_URL")
        .env_remove("SAFETRACK_ADMIN_EMAIL")
        .env_remove("SAFETRACK_ADMIN_PASSWORD");
    command
}

/// Starts the binary on `url` with `cert` and `key`; returns once it listens.
async fn start(url: &str, cert: &Path, key: &Path) -> TlsServer {
    let mut child = safetrack()
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", url])
        .args([
            "--admin-email",
            ADMIN_EMAIL,
            "--admin-password",
            ADMIN_PASSWORD,
        ])
        .arg("--tls-cert")
        .arg(cert)
        .arg("--tls-key")
        .arg(key)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start safetrack");
    let stdout = child.stdout.take().expect("piped stdout");
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    // Keeps draining the pipe so the server never blocks on it.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let address = tokio::task::spawn_blocking(move || {
        while let Ok(line) = lines_rx.recv_timeout(Duration::from_secs(60)) {
            if let Some(address) = line.strip_prefix("safetrack listening on ") {
                return Some(address.to_string());
            }
        }
        None
    })
    .await
    .expect("address reader");
    let mut server = TlsServer {
        child,
        address: String::new(),
    };
    match address {
        Some(address) => server.address = address,
        None => panic!("safetrack exited or did not listen within 60 s"),
    }
    server
}

/// A client that trusts only `cert_pem`.
fn trusting(cert_pem: &str) -> reqwest::Client {
    let root = reqwest::Certificate::from_pem(cert_pem.as_bytes()).expect("certificate");
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(root)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

async fn https_is_served_directly(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let files = Files::new();
    let (cert_pem, key_pem) = self_signed();
    let cert = files.write("cert.pem", cert_pem.as_bytes());
    let key = files.write("key.pem", key_pem.as_bytes());
    let server = start(&database.url, &cert, &key).await;
    let client = trusting(&cert_pem);

    // The certificate may be served a moment after the address line: retry briefly.
    let base = format!("https://{}", server.address);
    let healthz = format!("{base}/healthz");
    let mut health = client.get(&healthz).send().await;
    for _ in 0..100 {
        if health.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        health = client.get(&healthz).send().await;
    }
    let health = health.expect("GET /healthz over HTTPS");
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(health.version(), reqwest::Version::HTTP_11);
    assert_eq!(
        health.headers()["strict-transport-security"],
        "max-age=31536000"
    );

    // A browser login: the cookie is Secure, and it opens the session over HTTPS.
    let login = client
        .post(format!("{base}/auth/session"))
        .json(&json!({"Username": ADMIN_EMAIL, "Password": ADMIN_PASSWORD}))
        .send()
        .await
        .expect("POST /auth/session");
    assert_eq!(login.status(), StatusCode::OK);
    let set_cookie = login.headers()["set-cookie"]
        .to_str()
        .expect("cookie text")
        .to_string();
    let attributes: Vec<&str> = set_cookie.split(';').map(str::trim).collect();
    for wanted in ["Secure", "HttpOnly", "SameSite=Strict"] {
        assert!(attributes.contains(&wanted), "{set_cookie}");
    }
    let cookie = attributes[0].to_string();
    let me = client
        .get(format!("{base}/auth/session"))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("GET /auth/session");
    assert_eq!(me.status(), StatusCode::OK);
    let me: serde_json::Value = me.json().await.expect("session body");
    assert_eq!(me["Username"], ADMIN_EMAIL);

    // A client that does not trust the certificate gets nowhere.
    assert!(reqwest::get(&healthz).await.is_err());
    plain_http_gets_nothing(&server.address).await;
    // And the server still serves HTTPS after it.
    let again = client.get(&healthz).send().await.expect("HTTPS again");
    assert_eq!(again.status(), StatusCode::OK);
}

/// Plain HTTP to the HTTPS port: no HTTP answer at all, the connection closed.
async fn plain_http_gets_nothing(address: &str) {
    assert!(
        reqwest::get(format!("http://{address}/healthz"))
            .await
            .is_err()
    );
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("write");
    let mut answer = Vec::new();
    // Closed, or reset: either way at most a TLS alert came back, never an HTTP answer.
    let _ = tokio::time::timeout(Duration::from_secs(15), stream.read_to_end(&mut answer))
        .await
        .expect("closed within 15 s");
    assert!(!answer.starts_with(b"HTTP/"), "{answer:?}");
}

/// Runs `serve` with `args` and `env` on a data directory that does not exist yet; it
/// must exit within 30 s, non-zero, having served and created nothing.
fn refused(files: &Files, args: &[&std::ffi::OsStr], env: &[(&str, &Path)]) -> String {
    let data = files.0.join("data");
    let mut child = safetrack()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start safetrack");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("safetrack {args:?} did not exit");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().expect("output");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr),
    );
    assert!(!status.success(), "{args:?} was accepted: {stdout}");
    assert!(!stdout.contains("listening"), "{args:?} served: {stdout}");
    assert!(!data.exists(), "{args:?} opened the database");
    stderr.into_owned()
}

/// `serve` refuses `args` with a message holding every one of `wanted`.
fn assert_refused(files: &Files, args: &[&Path], wanted: &[&str]) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let stderr = refused(files, &args, &[]);
    for wanted in wanted {
        assert!(
            stderr.contains(wanted),
            "{args:?}: {wanted:?} not in {stderr}"
        );
    }
}

#[test]
fn tls_start_up_errors_name_the_flag_and_the_file() {
    let files = Files::new();
    let (cert_pem, key_pem) = self_signed();
    let (other_cert_pem, _) = self_signed();
    let cert = files.write("cert.pem", cert_pem.as_bytes());
    let key = files.write("key.pem", key_pem.as_bytes());
    let other_cert = files.write("other-cert.pem", other_cert_pem.as_bytes());
    let not_pem = files.write("notes.txt", b"this is no certificate\n");
    let truncated = files.write("truncated.pem", &cert_pem.as_bytes()[..cert_pem.len() / 2]);
    let missing = files.0.join("missing.pem");
    let directory = files.0.clone();
    let [c, k] = [Path::new("--tls-cert"), Path::new("--tls-key")];
    let show = |path: &Path| path.display().to_string();

    // Only one of the two, as a flag or from the environment.
    assert_refused(&files, &[c, &cert], &["--tls-cert needs --tls-key"]);
    assert_refused(&files, &[k, &key], &["--tls-key needs --tls-cert"]);
    let stderr = refused(&files, &[], &[("SAFETRACK_TLS_CERT", &cert)]);
    assert!(stderr.contains("--tls-cert needs --tls-key"), "{stderr}");

    // A file missing or unreadable.
    let cases: [(&[&Path], Vec<String>); 8] = [
        (
            &[c, &missing, k, &key],
            vec![format!("--tls-cert {}: cannot read it", show(&missing))],
        ),
        (
            &[c, &cert, k, &missing],
            vec![format!("--tls-key {}: cannot read it", show(&missing))],
        ),
        (
            &[c, &directory, k, &key],
            vec![format!("--tls-cert {}: cannot read it", show(&directory))],
        ),
        // Not PEM, no certificate, no private key.
        (
            &[c, &not_pem, k, &key],
            vec![format!(
                "--tls-cert {}: no certificate in it",
                show(&not_pem)
            )],
        ),
        (
            &[c, &key, k, &key],
            vec![format!("--tls-cert {}: no certificate in it", show(&key))],
        ),
        (
            &[c, &cert, k, &cert],
            vec![format!("--tls-key {}: no private key in it", show(&cert))],
        ),
        (
            &[c, &truncated, k, &key],
            vec![format!(
                "--tls-cert {}: not a readable PEM file",
                show(&truncated)
            )],
        ),
        // A key that is not the certificate's.
        (
            &[c, &other_cert, k, &key],
            vec![format!(
                "--tls-key {} is not the private key of the certificate in --tls-cert {}",
                show(&key),
                show(&other_cert)
            )],
        ),
    ];
    for (args, wanted) in cases {
        let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
        assert_refused(&files, args, &wanted);
    }
}
