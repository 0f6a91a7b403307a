//! The real binary (`CARGO_BIN_EXE_safetrack`, which cargo builds for every test binary
//! of the crate) started on a database: on `--listen 127.0.0.1:0`, its address read from
//! the line it prints, so two servers started at once never race for one port. Killed
//! (`kill -9`) when its `Server` is dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::database::{ADMIN_EMAIL, ADMIN_PASSWORD};

/// A running binary and its base URL (`http://127.0.0.1:port`).
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Server {
    /// SIGKILL: nothing is flushed, nothing is finished.
    pub fn kill_9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill_9();
    }
}

/// The real binary, and the address of its `/metrics` listener when it has one.
pub struct Binary {
    pub server: Server,
    #[allow(
        dead_code,
        reason = "read by the API binary's tests; no browser suite has one"
    )]
    pub metrics: Option<String>,
}

/// Starts the binary serving `url` with `extra` flags; `nofile` sets its descriptor limit
/// (soft and hard, so it cannot raise it).
pub async fn start_binary(url: &str, extra: &[&str], nofile: Option<u64>) -> Binary {
    let mut command = Command::new(env!("CARGO_BIN_EXE_safetrack"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", url])
        .args(extra)
        .args([
            "--admin-email",
            ADMIN_EMAIL,
            "--admin-password",
            ADMIN_PASSWORD,
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(limit) = nofile {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only setrlimit runs (one system call, no
        // allocation, async-signal-safe).
        unsafe {
            command.pre_exec(move || rlimit::setrlimit(rlimit::Resource::NOFILE, limit, limit));
        }
    }
    let mut child = command.spawn().expect("start safetrack");
    let stdout = child.stdout.take().expect("piped stdout");
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    // The metrics address line comes before the API's; then keep draining the pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let addresses = tokio::task::spawn_blocking(move || {
        let mut metrics = None;
        while let Ok(line) = lines_rx.recv_timeout(Duration::from_secs(30)) {
            if let Some(address) = line.strip_prefix("safetrack metrics listening on ") {
                metrics = Some(format!("http://{address}"));
            }
            if let Some(address) = line.strip_prefix("safetrack listening on ") {
                return Some((format!("http://{address}"), metrics));
            }
        }
        None
    })
    .await
    .expect("address reader");
    let Some((base, metrics)) = addresses else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("safetrack exited or did not listen within 30 s");
    };
    let server = Server { child, base };
    for _ in 0..200 {
        if reqwest::get(format!("{}/healthz", server.base))
            .await
            .is_ok()
        {
            return Binary { server, metrics };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("safetrack did not answer /healthz");
}
