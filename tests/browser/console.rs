//! The operator console's end-to-end scenarios (`console/e2e/run.mjs`, playwright-core) in
//! headless Chromium against the real binary, on SQLite and PostgreSQL. Its other tests
//! (headers, routing, `npm test`) are in the API binary (`tests/api/console.rs`).

use crate::Suite;
use crate::harness::database::Backend;

/// The console's suite: `scenarios` on `backend`, no deliveries attempted.
fn console(backend: Backend, scenarios: &str) -> Suite {
    Suite::new(backend, scenarios).server_flags(&["--delivery-workers", "0"])
}

/// What runs without a session: the login page loads from the binary alone (no request
/// outside its origin, no policy violation) and axe finds nothing serious on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_login_page_in_chromium() {
    console(Backend::Sqlite, "login-page").run().await;
}

mod end_to_end {
    use super::*;

    /// Every scenario (`SCENARIOS=name,… node e2e/run.mjs` runs some): among them, no
    /// user or device text reaches the page as HTML (issue 42: records named with markup
    /// on every screen, the map's tooltips opened, a map left mid-zoom) and the world
    /// outline lies under the markers (a real click on a device marker opens it). Log in,
    /// an SOS in the queue within 2 s with its announcement, acknowledge with a note seen
    /// by a second console within 2 s, resolve with an outcome, a foreign tenant's alert never shown, session expiry back to login and
    /// back, axe on the queue and the alert page — no request outside the origin in any.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        console(Backend::Sqlite, "all").run().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[cfg_attr(
        safetrack_no_postgres,
        ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
    )]
    async fn postgres() {
        console(Backend::Postgres, "all").run().await;
    }

    /// The Working alone board and the alert page's panel live from the stream (issue 45
    /// §4), a session minute of `WORKING_ALONE_MINUTE_MS` so its timers fire within
    /// seconds: a session started through the API appears on two consoles, counts down,
    /// turns due soon and overdue, then alerting (its missed check-in), raising an alert
    /// whose page shows the policy step's instructions; a check-in clears it on the second
    /// console and on the alert page, the end removes it — the pages refused any read of
    /// the sessions after the first. Latencies are printed (bench/console-live.sh).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn working_alone_live_sqlite() {
        working_alone_live(Backend::Sqlite).run().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[cfg_attr(
        safetrack_no_postgres,
        ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
    )]
    async fn working_alone_live_postgres() {
        working_alone_live(Backend::Postgres).run().await;
    }

    /// `monitoring-live` with the server's monitoring minute shortened (the hidden
    /// `--monitoring-minute-ms`; the scenarios read it as `SAFETRACK_MONITORING_MINUTE_MS`,
    /// and only then define those that need it).
    fn working_alone_live(backend: Backend) -> Suite {
        let minute = WORKING_ALONE_MINUTE_MS.to_string();
        console(backend, "monitoring-live")
            .server_flags(&["--monitoring-minute-ms", &minute])
            .env("SAFETRACK_MONITORING_MINUTE_MS", &minute)
    }

    /// A session minute of 2 s: a 4-minute check-in interval is 8 s.
    const WORKING_ALONE_MINUTE_MS: u32 = 2000;
}
