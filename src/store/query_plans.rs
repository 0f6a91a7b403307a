//! SQLite query plans of the lookups whose plan decides whether they scale. SQLite has
//! no statistics here (never ANALYZEd), so its planner guesses; a guess that reads a
//! whole tenant through its tenant index instead of looking ids up passes every
//! functional test and only shows as throughput falling while a table grows. These
//! tests read the plans the way EXPLAIN QUERY PLAN shows them.

use super::collections::devices_in_subtree_sql;
use super::deliveries::{ListRoute, list_deliveries_sql, unsent_predicate};
use super::delivery_queue::{claim_statement, queue_counts_sql};
use super::device_states::DEVICE_AND_STATE_BY_KEY;
use super::devices::existing_devices_sql;
use super::mo_message_inserts::{KeyLookup, stored_keys_sql};
use super::mo_messages::{list_messages_sql, messages_by_id_sql};
use super::receiver_backlog::{hold_back_statement, release_statement};
use super::reports::{ODOMETER_CANDIDATE_SQL, TRACK_CHUNK_SQL};
use super::temp_file::TempSqliteFile;
use super::{Backend, ClaimFilter, Store};
use crate::domain::delivery::DeliveryStatus;
use sqlx::Row;

/// A migrated SQLite store in a fresh file, removed on drop.
struct PlanStore {
    store: Store,
    _file: TempSqliteFile,
}

async fn plan_store() -> PlanStore {
    let file = TempSqliteFile::new("safetrack-plans");
    let store = Store::connect(&file.url()).await.expect("connect");
    store.migrate().await.expect("migrate");
    PlanStore { store, _file: file }
}

/// The plan's lines (EXPLAIN QUERY PLAN's `detail` column), parameters unbound.
async fn plan(store: &Store, sql: &str) -> Vec<String> {
    sqlx::query(&format!("EXPLAIN QUERY PLAN {sql}"))
        .fetch_all(&store.pool)
        .await
        .expect("explain")
        .iter()
        .map(|row| row.try_get::<String, _>("detail").expect("detail"))
        .collect()
}

#[tokio::test]
async fn messages_by_id_are_looked_up_by_id_not_read_through_the_tenant() {
    let db = plan_store().await;
    for with_device in [false, true] {
        // From ten ids on, the planner without the hint took the tenant index.
        for count in [1, 10, 32, 500] {
            let lines = plan(
                &db.store,
                &messages_by_id_sql(Backend::Sqlite, with_device, count),
            )
            .await;
            assert_eq!(
                lines,
                ["SEARCH mo_messages USING INTEGER PRIMARY KEY (rowid=?)"],
                "{count} ids, device {with_device}"
            );
        }
    }
}

/// Ingest's dedupe lookup reads the device's part of the dedupe index: one range for a
/// run of sequence numbers, one seek per number otherwise.
#[tokio::test]
async fn a_batchs_retries_are_looked_up_in_the_dedupe_index() {
    let db = plan_store().await;
    for (lookup, expected) in [
        (
            KeyLookup::Range {
                least: 1,
                greatest: 100,
            },
            "SEARCH mo_messages USING COVERING INDEX mo_messages_dedupe \
             (tenant_code=? AND device_id=? AND sequence_number>? AND sequence_number<?)",
        ),
        (
            KeyLookup::Each(100),
            "SEARCH mo_messages USING COVERING INDEX mo_messages_dedupe \
             (tenant_code=? AND device_id=? AND sequence_number=? AND sent_at>?)",
        ),
    ] {
        let lines = plan(&db.store, &stored_keys_sql(Backend::Sqlite, lookup)).await;
        assert_eq!(lines, [expected], "{lookup:?}");
    }
}

/// A device's messages in a window — the listing, a report's track, the odometer lookup —
/// are read from the tenant's and device's range of one index, in its order: not through
/// every device's messages in the window, and not sorted again.
#[tokio::test]
async fn a_devices_messages_are_read_in_index_order() {
    let db = plan_store().await;
    for (what, sql) in [
        ("listing", list_messages_sql(false, false)),
        ("listing with files", list_messages_sql(true, false)),
        ("listing newest first", list_messages_sql(false, true)),
        ("track", TRACK_CHUNK_SQL.to_string()),
        ("odometer", ODOMETER_CANDIDATE_SQL.to_string()),
    ] {
        let lines = plan(&db.store, &sql).await;
        assert!(
            lines.iter().any(|l| l.starts_with(
                "SEARCH mo_messages USING INDEX mo_messages_tenant_device_time \
                 (tenant_code=? AND device_id=? AND message_time"
            )),
            "{what}: {lines:?}"
        );
        // (The track's `string_agg(… ORDER BY)` sorts its chunk of at most 2,000 in a
        // temporary B-tree of its own: that is the aggregate, not the read.)
        assert!(
            !lines.iter().any(|l| l.contains("TEMP B-TREE FOR ORDER BY")),
            "{what} sorts: {lines:?}"
        );
    }
}

#[tokio::test]
async fn existing_devices_are_looked_up_by_device_id_and_tenant() {
    let db = plan_store().await;
    for count in [1, 32, 500] {
        let lines = plan(&db.store, &existing_devices_sql(count)).await;
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with(
                "SEARCH devices USING COVERING INDEX devices_device_tenant (device_id=? AND tenant_code=?)"
            ),
            "{count} ids: {lines:?}"
        );
    }
}

/// Ingest's first read of every batch (the device, its state row locked): one seek each,
/// by (DeviceId, tenant).
#[tokio::test]
async fn a_device_and_its_state_are_found_by_their_key() {
    let db = plan_store().await;
    let lines = plan(
        &db.store,
        &format!("SELECT d.doc, s.latitude {DEVICE_AND_STATE_BY_KEY}"),
    )
    .await;
    assert_eq!(
        lines,
        [
            "SEARCH d USING INDEX devices_device_tenant (device_id=? AND tenant_code=?)",
            "SEARCH s USING INDEX sqlite_autoindex_device_states_1 (tenant_code=? AND device_id=?)"
        ]
    );
}

/// A collection's ids across a subtree: each id looked up, not the subtree's devices read.
#[tokio::test]
async fn devices_across_a_subtree_are_looked_up_by_device_id() {
    let db = plan_store().await;
    for count in [1, 32, 500] {
        let lines = plan(&db.store, &devices_in_subtree_sql(Backend::Sqlite, count)).await;
        assert!(
            lines[0]
                .starts_with("SEARCH d USING COVERING INDEX devices_device_tenant (device_id=?)"),
            "{count} ids: {lines:?}"
        );
    }
}

#[tokio::test]
async fn a_claim_reads_the_due_index_in_order() {
    let db = plan_store().await;
    for (filter, index) in [
        (ClaimFilter::All, "deliveries_due"),
        (ClaimFilter::Alerting, "deliveries_due_alerting"),
    ] {
        for busy_urls in [0, 3] {
            let lines = plan(
                &db.store,
                &claim_statement(filter, Backend::Sqlite, busy_urls),
            )
            .await;
            let due = format!("USING INDEX {index} (next_attempt_at<?)");
            assert!(
                lines.iter().any(|l| l.contains(&due)),
                "{filter:?}, {busy_urls} busy: {lines:?}"
            );
            // No sort of the due rows: they come in index order. (With busy URLs the
            // window of at most `BUSY_WINDOW` rows read from the index is sorted again.)
            let sorted = lines.iter().any(|l| l.contains("TEMP B-TREE FOR ORDER BY"));
            assert_eq!(
                sorted,
                busy_urls > 0,
                "{filter:?}, {busy_urls} busy: {lines:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_receivers_waiting_retries_are_read_through_their_index() {
    let db = plan_store().await;
    for webhook in [true, false] {
        let lines = plan(&db.store, &release_statement(Backend::Sqlite, webhook)).await;
        assert!(
            lines
                .iter()
                .any(|l| l.contains("USING INDEX deliveries_retrying (channel=?")),
            "webhook {webhook}: {lines:?}"
        );
    }
}

#[tokio::test]
async fn held_back_deliveries_are_read_from_the_due_index_window() {
    let db = plan_store().await;
    let lines = plan(&db.store, &hold_back_statement(Backend::Sqlite, 2)).await;
    assert!(
        lines
            .iter()
            .any(|l| l.contains("USING INDEX deliveries_due (next_attempt_at<?)")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn an_alerts_deliveries_are_read_through_the_alert_index() {
    let db = plan_store().await;
    assert_eq!(
        plan(
            &db.store,
            &list_deliveries_sql(ListRoute::Alert, false, Backend::Sqlite)
        )
        .await,
        ["SEARCH d USING INDEX deliveries_alert (alert_id=? AND rowid>?)"]
    );
    // Without an alert: the tenant's deliveries in id order, no sort.
    assert_eq!(
        plan(
            &db.store,
            &list_deliveries_sql(ListRoute::Tenant, false, Backend::Sqlite)
        )
        .await,
        ["SEARCH d USING INDEX deliveries_tenant (tenant_code=? AND id>?)"]
    );
    // Newest first (the console's log): the same index walked backwards, still no sort.
    assert_eq!(
        plan(
            &db.store,
            &list_deliveries_sql(ListRoute::Tenant, true, Backend::Sqlite)
        )
        .await,
        ["SEARCH d USING INDEX deliveries_tenant (tenant_code=? AND id<?)"]
    );
}

#[tokio::test]
async fn pending_deliveries_are_listed_from_the_due_index() {
    let db = plan_store().await;
    assert_eq!(
        plan(
            &db.store,
            &list_deliveries_sql(ListRoute::Pending, false, Backend::Sqlite)
        )
        .await,
        [
            "SCAN d USING INDEX deliveries_due",
            "USE TEMP B-TREE FOR ORDER BY"
        ]
    );
}

#[tokio::test]
async fn a_rare_status_is_listed_through_the_unsent_index() {
    let db = plan_store().await;
    for status in DeliveryStatus::UNSENT {
        assert_eq!(
            plan(
                &db.store,
                &list_deliveries_sql(ListRoute::Unsent(status), false, Backend::Sqlite)
            )
            .await,
            ["SEARCH d USING INDEX deliveries_unsent (status=? AND tenant_code=? AND id>?)"],
            "{status}"
        );
    }
}

#[tokio::test]
async fn queue_counts_read_their_indexes_only() {
    let db = plan_store().await;
    let lines = plan(&db.store, &queue_counts_sql()).await;
    // Both halves index-only: neither reads the table, whose rows are mostly sent history.
    for index in ["deliveries_due", "deliveries_unsent"] {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("USING COVERING INDEX {index}"))),
            "{index}: {lines:?}"
        );
    }
    assert!(
        !lines.iter().any(|l| l.ends_with("SCAN deliveries")),
        "{lines:?}"
    );
}

/// The migrations declaring the deliveries' partial indexes, on both backends.
const INDEX_MIGRATIONS: [&str; 8] = [
    include_str!("../../migrations/sqlite/0011_message_pipeline.sql"),
    include_str!("../../migrations/sqlite/0036_deliveries_due_alerting.sql"),
    include_str!("../../migrations/sqlite/0038_deliveries_retrying.sql"),
    include_str!("../../migrations/sqlite/0039_deliveries_status_partial.sql"),
    include_str!("../../migrations/postgres/0011_message_pipeline.sql"),
    include_str!("../../migrations/postgres/0036_deliveries_due_alerting.sql"),
    include_str!("../../migrations/postgres/0038_deliveries_retrying.sql"),
    include_str!("../../migrations/postgres/0039_deliveries_status_partial.sql"),
];

/// The statements name statuses and channels through their enums (`sql()`), yet their
/// text must still read as the partial indexes' predicates do, word for word: the
/// planners (SQLite's and PostgreSQL's) use a partial index only for a query whose
/// condition they can match to its predicate.
#[test]
fn statements_repeat_the_partial_index_predicates_word_for_word() {
    let due = "status = 'Pending'";
    let alerting = "status = 'Pending' AND (channel <> 'Webhook' OR notification_id IS NOT NULL)";
    let retrying = "status = 'Pending' AND last_error IS NOT NULL";
    let unsent = "status IN ('NotConfigured', 'Failed', 'Expired')";
    for (index, predicate, files) in [
        ("deliveries_due", due, [0, 4]),
        ("deliveries_due_alerting", alerting, [1, 5]),
        ("deliveries_retrying", retrying, [2, 6]),
        ("deliveries_unsent", unsent, [3, 7]),
    ] {
        for file in files {
            assert!(
                INDEX_MIGRATIONS[file].contains(&format!("WHERE {predicate}")),
                "{index}: {predicate}"
            );
        }
    }
    assert_eq!(unsent_predicate(), unsent);
    for backend in [Backend::Sqlite, Backend::Postgres] {
        for busy_urls in [0, 2] {
            let all = claim_statement(ClaimFilter::All, backend, busy_urls);
            assert!(
                all.contains(&format!("WHERE {due} AND next_attempt_at")),
                "{all}"
            );
            let claim = claim_statement(ClaimFilter::Alerting, backend, busy_urls);
            assert!(claim.contains(alerting), "{claim}");
        }
        for webhook in [true, false] {
            let release = release_statement(backend, webhook);
            assert!(release.contains(retrying), "{release}");
        }
        let hold = hold_back_statement(backend, 2);
        assert!(hold.contains(due), "{hold}");
        let pending = list_deliveries_sql(ListRoute::Pending, false, backend);
        assert!(pending.contains(&format!("d.{due} AND")), "{pending}");
        for status in DeliveryStatus::UNSENT {
            let listing = list_deliveries_sql(ListRoute::Unsent(status), false, backend);
            let terms = format!("d.{unsent} AND d.status = '{status}' AND");
            assert!(listing.contains(&terms), "{listing}");
        }
    }
    let counts = queue_counts_sql();
    assert!(counts.contains("'Pending' AS status"), "{counts}");
    assert!(
        counts.contains(&format!("WHERE {due} GROUP BY")),
        "{counts}"
    );
    assert!(
        counts.contains(&format!("WHERE {unsent} GROUP BY")),
        "{counts}"
    );
}
