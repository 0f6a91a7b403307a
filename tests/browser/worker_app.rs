//! The worker app's end-to-end scenarios (`console/e2e/scenarios/worker.mjs`) in headless
//! Chromium at phone size with an emulated position, against the real binary on SQLite
//! and PostgreSQL: hold-to-SOS raises the alert (with the position, in an operator's
//! queue) and a short press sends nothing; "I am safe" fires `EmergencyCancelled`; a
//! session started in the app is listed by `GET /monitoring`, turns overdue (a session
//! minute of `MINUTE_MS`) and "I'm OK" clears it; an SOS and a check-in made offline go
//! once each on reconnection, after a reload served by the service worker with no
//! network; an operator's text is acknowledged and the acknowledgement stored; a worker
//! with no device is told who must assign one. Its HTTP tests are in the API binary
//! (`tests/api/worker_app.rs`).

use crate::Suite;
use crate::harness::database::Backend;

/// Every scenario of `worker.mjs`.
const SCENARIOS: &str = "worker-sos-hold-and-safe,worker-sos-without-location,worker-session,\
                         worker-offline,worker-texts,worker-no-device";

/// A session minute of 1 s: the 15-minute check-in interval the scenario picks is 15 s.
const MINUTE_MS: u32 = 1000;

fn worker_app(backend: Backend) -> Suite {
    let minute = MINUTE_MS.to_string();
    Suite::new(backend, SCENARIOS)
        .server_flags(&["--delivery-workers", "0", "--monitoring-minute-ms", &minute])
        .env("SAFETRACK_MONITORING_MINUTE_MS", &minute)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    worker_app(Backend::Sqlite).run().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres() {
    worker_app(Backend::Postgres).run().await;
}
