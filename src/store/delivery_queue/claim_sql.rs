//! The claim's statements: which due deliveries a worker's claim takes, read from the
//! partial index of due deliveries whose predicate each statement repeats word for word.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::super::deliveries::{PENDING, WEBHOOK};
use super::super::{AnyQuery, Backend, to_micros};

/// Which deliveries a claim may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimFilter {
    /// Every channel, oldest due first.
    All,
    /// What a matched notification sends, oldest due first: people's channels (e-mail,
    /// SMS, voice, MT) and its `EventNotification` webhook events (those carry the
    /// notification's id). What a loop claims so that an alert never waits behind a
    /// backlog of other webhooks.
    Alerting,
}

/// What a worker asks to claim.
#[derive(Debug, Clone, Copy)]
pub struct ClaimRequest<'a> {
    /// The worker's name on the leases.
    pub owner: &'a str,
    pub now: Timestamp,
    /// How long the claim lasts.
    pub lease: Duration,
    pub limit: u32,
    pub filter: ClaimFilter,
    /// Webhook URLs not to claim from now: the worker already has as many attempts in
    /// flight to each as it allows one receiver.
    pub busy_urls: &'a [String],
}

/// The claim (parameters: `$1` owner, `$2` lease end, `$3` now, `$4` limit, then the
/// busy URLs): leases the due deliveries, oldest first, and counts the attempt. The
/// candidates come from the partial index of due deliveries (`deliveries_due`, or
/// `deliveries_due_alerting`, whose conditions the query repeats term for term). SQLite is
/// told the index: without statistics its planner may take another one and sort every
/// pending row on every claim, on the one writer, at a cost that grows with the queue.
/// PostgreSQL locks the candidates, skipping rows other processes hold.
pub(in crate::store) fn claim_statement(
    filter: ClaimFilter,
    backend: Backend,
    busy_urls: usize,
) -> String {
    format!(
        "UPDATE deliveries SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
         WHERE id IN ({})
         RETURNING id, tenant_code, channel, target, subject, body, event_id, message_id,
             attempts, created_at, queued_at",
        due_candidates(filter, backend, busy_urls)
    )
}

/// The ids a claim takes (parameters `$3` now, `$4` limit, then the busy URLs).
pub(super) fn due_candidates(filter: ClaimFilter, backend: Backend, busy_urls: usize) -> String {
    let (index, alerting) = filter_index(filter);
    let (indexed_by, lock) = match backend {
        Backend::Sqlite => (format!(" INDEXED BY {index}"), ""),
        Backend::Postgres => (String::new(), " FOR UPDATE SKIP LOCKED"),
    };
    if busy_urls == 0 {
        format!(
            "SELECT id FROM deliveries{indexed_by}
             WHERE status = {PENDING}{alerting} AND next_attempt_at <= $3
               AND (lease_until IS NULL OR lease_until <= $3)
             ORDER BY next_attempt_at LIMIT $4{lock}"
        )
    } else {
        // Busy URLs are left out of the oldest `BUSY_WINDOW` due rows only: filtering the
        // whole queue would scan every row of a busy URL's backlog on each claim (on the
        // writer, woken by every ingest commit). `target IS NULL OR`: NOT IN is never true
        // of a NULL. Numbered on both backends (a `?` here would take SQLite's numbers
        // ahead of `$3` and `$4`); the list is short.
        let numbered: Vec<String> = (5..5 + busy_urls).map(|i| format!("${i}")).collect();
        let head = due_window(filter, backend, "$3");
        let not_busy = format!("target IS NULL OR target NOT IN ({})", numbered.join(", "));
        match backend {
            // No row locks: the window is filtered as it is read. (Selecting from
            // `deliveries … WHERE id IN (window)` instead made SQLite scan every pending
            // row through the `(status, channel)` index.)
            Backend::Sqlite => format!(
                "SELECT id FROM ({head}) head WHERE {not_busy}
                 ORDER BY next_attempt_at LIMIT $4"
            ),
            // The window is read without locks; only the rows chosen from it are locked
            // (and checked again), not 512 a claim.
            Backend::Postgres => format!(
                "SELECT id FROM deliveries
                 WHERE id IN (SELECT id FROM ({head}) head WHERE {not_busy})
                   AND status = {PENDING} AND (lease_until IS NULL OR lease_until <= $3)
                 ORDER BY next_attempt_at LIMIT $4{lock}"
            ),
        }
    }
}

/// The oldest `BUSY_WINDOW` due deliveries of `filter` (`id`, `target`, `next_attempt_at`),
/// read from its due index in order; `now` is the placeholder of the time. What a claim
/// leaving busy URLs out reads past, and what holding them back rewrites.
pub(in crate::store) fn due_window(filter: ClaimFilter, backend: Backend, now: &str) -> String {
    let (index, alerting) = filter_index(filter);
    let indexed_by = match backend {
        Backend::Sqlite => format!(" INDEXED BY {index}"),
        Backend::Postgres => String::new(),
    };
    format!(
        "SELECT id, target, next_attempt_at FROM deliveries{indexed_by}
         WHERE status = {PENDING}{alerting} AND next_attempt_at <= {now}
           AND (lease_until IS NULL OR lease_until <= {now})
         ORDER BY next_attempt_at LIMIT {BUSY_WINDOW}"
    )
}

/// The partial index of `filter`'s due deliveries, and its condition beyond `Pending`
/// (repeated term for term by the queries reading it).
fn filter_index(filter: ClaimFilter) -> (&'static str, String) {
    match filter {
        ClaimFilter::All => ("deliveries_due", String::new()),
        ClaimFilter::Alerting => (
            "deliveries_due_alerting",
            format!(" AND (channel <> {WEBHOOK} OR notification_id IS NOT NULL)"),
        ),
    }
}

/// How many of the oldest due deliveries a claim looks through when it leaves busy URLs
/// out. A busy URL's backlog longer than this holds the claims up until its slow attempts
/// end (as every backlog did before the limit).
const BUSY_WINDOW: usize = 512;

/// `claim_statement`'s parameters bound.
pub(super) fn claim_query<'q>(sql: &'q str, request: &ClaimRequest<'q>) -> AnyQuery<'q> {
    let mut query = sqlx::query(sql)
        .bind(request.owner)
        .bind(to_micros(plus(request.now, request.lease)))
        .bind(to_micros(request.now))
        .bind(i64::from(request.limit));
    for url in request.busy_urls {
        query = query.bind(url.as_str());
    }
    query
}

fn plus(at: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|d| at.checked_add(d).ok())
        .unwrap_or(Timestamp::MAX)
}
