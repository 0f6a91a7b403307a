//! A `DeviceId` is unique within its tenant, not across the platform (issue 30, finding
//! 12): two tenants each register, read, message and delete their own device of the same
//! id, and neither sees the other's messages, state, alerts, MT messages or deliveries. A
//! lookup by id across a subtree that finds two such devices says so (409) instead of
//! choosing. Databases from before migration 0042 keep their devices and what they own.

use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Connection;

use safetrack::app::AppConfig;

use crate::alerts::{create_notification, raise, sos_notification};
use crate::backend_tests;
use crate::common::{
    Backend, TestApp, TestDatabase, assert_not_found, assert_problem, migrated_before, spawn_app_on,
};
use crate::mo_messages::{position_report, post_processed};

backend_tests!(
    two_tenants_register_the_same_device_id,
    a_duplicate_is_409_only_within_one_tenant,
    each_tenant_sees_only_its_own_messages_and_state,
    each_tenant_sees_only_its_own_alerts_mt_messages_and_deliveries,
    deleting_one_leaves_the_other_intact,
    an_id_two_subtenants_share_is_ambiguous_in_their_parents_collections,
    subtree_listings_show_each_tenants_device,
);

const SHARED: &str = "300234010753370";

async fn register(app: &TestApp, tenant: &str, id: &str, name: &str) -> StatusCode {
    app.admin
        .post(
            &format!("/V2/{tenant}/devices"),
            &json!({"DeviceId": id, "DeviceType": "InReach", "FriendlyName": name}),
        )
        .await
        .status()
}

fn device_path(tenant: &str) -> String {
    format!("/V2/{tenant}/devices/{SHARED}")
}

async fn list(app: &TestApp, path: &str) -> Vec<Value> {
    app.admin
        .get_json(path)
        .await
        .as_array()
        .expect("a list")
        .clone()
}

/// Two sibling tenants, each with its own device `SHARED`: (a, b).
async fn siblings(app: &TestApp) -> (String, String) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    assert_eq!(register(app, &a, SHARED, "A's van").await, StatusCode::OK);
    assert_eq!(register(app, &b, SHARED, "B's van").await, StatusCode::OK);
    (a, b)
}

async fn two_tenants_register_the_same_device_id(app: TestApp) {
    let (a, b) = siblings(&app).await;
    assert_eq!(
        app.admin.get_json(&device_path(&a)).await["FriendlyName"],
        "A's van"
    );
    assert_eq!(
        app.admin.get_json(&device_path(&b)).await["FriendlyName"],
        "B's van"
    );
    assert_eq!(list(&app, &format!("/V2/{a}/devices")).await.len(), 1);
    // A change to one is not a change to the other.
    let response = app
        .admin
        .put(
            &device_path(&a),
            &json!({"DeviceType": "InReach", "FriendlyName": "A renamed", "Status": "Inactive"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let theirs = app.admin.get_json(&device_path(&b)).await;
    assert_eq!(theirs["FriendlyName"], "B's van");
    assert_eq!(theirs["Status"], "Active");
    let patched = app
        .admin
        .patch(
            &device_path(&b),
            &json!([{"op": "replace", "path": "/FriendlyName", "value": "B patched"}]),
        )
        .await;
    assert_eq!(patched.status(), StatusCode::OK);
    assert_eq!(
        app.admin.get_json(&device_path(&a)).await["FriendlyName"],
        "A renamed"
    );
    // The root tenant may have it too.
    assert_eq!(
        register(&app, "1000", SHARED, "Root's").await,
        StatusCode::OK
    );
}

async fn a_duplicate_is_409_only_within_one_tenant(app: TestApp) {
    let (a, b) = siblings(&app).await;
    let again = app
        .admin
        .post(
            &format!("/V2/{a}/devices"),
            &json!({"DeviceId": SHARED, "DeviceType": "InReach"}),
        )
        .await;
    let problem = assert_problem(again, 409, "conflict").await;
    // It tells of this tenant's device, never of another tenant.
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(!detail.contains(&b), "{detail}");
    assert_eq!(list(&app, &format!("/V2/{a}/devices")).await.len(), 1);
}

async fn each_tenant_sees_only_its_own_messages_and_state(app: TestApp) {
    let (a, b) = siblings(&app).await;
    let sent = "2026-03-01T10:00:00Z";
    let mine = post_processed(
        &app,
        &a,
        SHARED,
        &json!([
            position_report(1, sent, 51.5, -0.12),
            position_report(2, "2026-03-01T10:01:00Z", 51.6, -0.12)
        ]),
    )
    .await;
    // The same (SequenceNumber, SentFromDevice) from B's device is B's first message,
    // not a retry of A's.
    let theirs = post_processed(
        &app,
        &b,
        SHARED,
        &json!([position_report(1, sent, 10.0, 20.0)]),
    )
    .await;
    assert_eq!(theirs[0]["Duplicate"], false);
    assert_ne!(theirs[0]["MessageId"], mine[0]["MessageId"]);
    // A's retry is still recognised as one.
    let retry = post_processed(
        &app,
        &a,
        SHARED,
        &json!([position_report(1, sent, 51.5, -0.12)]),
    )
    .await;
    assert_eq!(retry[0]["Duplicate"], true);
    assert_eq!(retry[0]["MessageId"], mine[0]["MessageId"]);

    let listed_a = list(&app, &format!("{}/momessages", device_path(&a))).await;
    let listed_b = list(&app, &format!("{}/momessages", device_path(&b))).await;
    assert_eq!(listed_a.len(), 2);
    assert_eq!(listed_b.len(), 1);
    assert_eq!(listed_b[0]["Position"]["Latitude"], 10.0);
    // One message is addressed through its own tenant only.
    let a_id = mine[0]["MessageId"].as_str().unwrap();
    assert_not_found(
        app.admin
            .get(&format!("{}/momessages/{a_id}", device_path(&b)))
            .await,
    )
    .await;
    let b_id = theirs[0]["MessageId"].as_str().unwrap();
    assert_not_found(
        app.admin
            .delete(&format!("{}/momessages/{b_id}", device_path(&a)))
            .await,
    )
    .await;
    // Each device's state moved with its own messages.
    let state_a = app.admin.get_json(&device_path(&a)).await;
    let state_b = app.admin.get_json(&device_path(&b)).await;
    assert_eq!(state_a["LastPosition"]["Lat"], 51.6);
    assert_eq!(state_b["LastPosition"]["Lat"], 10.0);
}

async fn each_tenant_sees_only_its_own_alerts_mt_messages_and_deliveries(app: TestApp) {
    let (a, b) = siblings(&app).await;
    create_notification(&app, &a, &sos_notification()).await;
    create_notification(&app, &b, &sos_notification()).await;
    let (_, alert_a) = raise(&app, &a, SHARED, 1, "2026-03-01T10:00:00Z").await;
    // B's device raises its own alert: it does not join A's.
    let (_, alert_b) = raise(&app, &b, SHARED, 1, "2026-03-01T10:00:00Z").await;
    assert_ne!(alert_a, alert_b);
    let (_, joined) = raise(&app, &a, SHARED, 2, "2026-03-01T10:05:00Z").await;
    assert_eq!(joined, alert_a);
    let alerts_a = list(&app, &format!("/V2/{a}/alerts?deviceId={SHARED}")).await;
    let alerts_b = list(&app, &format!("/V2/{b}/alerts?deviceId={SHARED}")).await;
    assert_eq!(alerts_a.len(), 1);
    assert_eq!(alerts_a[0]["MatchCount"], 2);
    assert_eq!(alerts_b.len(), 1);
    assert_eq!(alerts_b[0]["MatchCount"], 1);
    assert_eq!(alerts_b[0]["TenantCode"], b.as_str());

    // The SOS notification texts the device: each tenant's own.
    let mt_a = list(&app, &format!("{}/mtmessages", device_path(&a))).await;
    let mt_b = list(&app, &format!("{}/mtmessages", device_path(&b))).await;
    assert!(!mt_b.is_empty());
    // A's second match joined its alert and texted nobody again.
    assert_eq!(mt_a.len(), mt_b.len(), "one text per alert raised");
    let queued = app
        .admin
        .post(
            &format!("{}/mtmessages", device_path(&b)),
            &json!({"Type": "Text", "Message": "for B only"}),
        )
        .await;
    assert_eq!(queued.status(), StatusCode::OK);
    assert_eq!(
        list(&app, &format!("{}/mtmessages", device_path(&a)))
            .await
            .len(),
        mt_a.len()
    );
    let mt_id = mt_b[0]["MessageId"].as_str().unwrap();
    assert_not_found(
        app.admin
            .get(&format!("{}/mtmessages/{mt_id}", device_path(&a)))
            .await,
    )
    .await;

    let deliveries_a = list(&app, &format!("/V2/{a}/deliveries?deviceId={SHARED}")).await;
    let deliveries_b = list(&app, &format!("/V2/{b}/deliveries?deviceId={SHARED}")).await;
    assert!(!deliveries_a.is_empty());
    assert!(!deliveries_b.is_empty());
    assert!(deliveries_a.iter().all(|d| d["TenantCode"] == a.as_str()));
    assert!(deliveries_b.iter().all(|d| d["TenantCode"] == b.as_str()));
    assert_eq!(
        deliveries_b.len(),
        deliveries_a.len(),
        "one alert each, notified once"
    );
}

async fn deleting_one_leaves_the_other_intact(app: TestApp) {
    let (a, b) = siblings(&app).await;
    for tenant in [&a, &b] {
        post_processed(
            &app,
            tenant,
            SHARED,
            &json!([position_report(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
        )
        .await;
        let queued = app
            .admin
            .post(
                &format!("{}/mtmessages", device_path(tenant)),
                &json!({"Type": "Text", "Message": "hello"}),
            )
            .await;
        assert_eq!(queued.status(), StatusCode::OK);
    }
    assert_eq!(
        app.admin.delete(&device_path(&a)).await.status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&device_path(&a)).await).await;
    assert_not_found(app.admin.delete(&device_path(&a)).await).await;
    let theirs = app.admin.get_json(&device_path(&b)).await;
    assert_eq!(theirs["FriendlyName"], "B's van");
    assert_eq!(theirs["LastPosition"]["Lat"], 51.5);
    assert_eq!(
        list(&app, &format!("{}/momessages", device_path(&b)))
            .await
            .len(),
        1
    );
    assert_eq!(
        list(&app, &format!("{}/mtmessages", device_path(&b)))
            .await
            .len(),
        1
    );
    // The deletion is A's alone.
    let log_a = list(&app, &format!("/V2/{a}/deleteddevices/{SHARED}")).await;
    assert_eq!(log_a.len(), 1);
    assert_eq!(log_a[0]["FriendlyName"], "A's van");
    assert!(
        list(&app, &format!("/V2/{b}/deleteddevices"))
            .await
            .is_empty()
    );
    // A registers it again, afresh.
    assert_eq!(register(&app, &a, SHARED, "A again").await, StatusCode::OK);
    let fresh = app.admin.get_json(&device_path(&a)).await;
    assert!(fresh["LastPosition"].is_null(), "{fresh}");
    assert!(
        list(&app, &format!("{}/mtmessages", device_path(&a)))
            .await
            .is_empty()
    );
    assert_eq!(
        app.admin.delete(&device_path(&b)).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json(&device_path(&a)).await["FriendlyName"],
        "A again"
    );
}

/// A parent whose subtenants A and B both have `SHARED`: the parent's own device path
/// addresses the parent's devices only (404 here), and a collection — which names devices
/// by id across the caller's subtree — cannot tell A's from B's: 409, naming both tenants.
async fn an_id_two_subtenants_share_is_ambiguous_in_their_parents_collections(app: TestApp) {
    let parent = app.create_tenant("1000", "Parent").await;
    let a = app.create_tenant(&parent, "A").await;
    let b = app.create_tenant(&parent, "B").await;
    assert_eq!(register(&app, &a, SHARED, "A's van").await, StatusCode::OK);
    assert_eq!(
        register(&app, &a, "only-a", "A's car").await,
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&device_path(&parent)).await).await;

    // While only A has it, the collection is A's device.
    let collections = format!("/V2/{parent}/collections");
    let created = app
        .admin
        .post(
            &collections,
            &json!({"Name": "Vans", "DeviceIds": [SHARED, "only-a"]}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let location = created.headers()["location"].to_str().unwrap().to_string();
    let id = location.rsplit('/').next().unwrap().to_string();
    let report = format!(
        "/V2/{parent}/reports/DevicesOverviewReport?IntervalType=yesterday&CollectionId={id}"
    );
    assert_eq!(list(&app, &report).await.len(), 2);

    assert_eq!(register(&app, &b, SHARED, "B's van").await, StatusCode::OK);
    for response in [
        app.admin
            .post(
                &collections,
                &json!({"Name": "Again", "DeviceIds": [SHARED]}),
            )
            .await,
        app.admin
            .put(&location, &json!({"Name": "Vans", "DeviceIds": [SHARED]}))
            .await,
        app.admin.get(&report).await,
    ] {
        let problem = assert_problem(response, 409, "conflict").await;
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(SHARED), "{detail}");
        assert!(detail.contains(&a) && detail.contains(&b), "{detail}");
    }
    assert_eq!(list(&app, &collections).await.len(), 1);
    assert_eq!(
        app.admin.get_json(&location).await["DeviceIds"],
        json!([SHARED, "only-a"])
    );
    // For a manager of A, the id is A's device alone.
    let (_, manager) = app.create_user(&a, "manager@a.example", "Manager").await;
    let created = manager
        .post(
            &format!("/V2/{a}/collections"),
            &json!({"Name": "Mine", "DeviceIds": [SHARED]}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
}

/// Listings over a subtree (`subtenants`, `Subtenants`) are filters, not addresses: the id
/// matches each tenant's device, and each record is that device's own.
async fn subtree_listings_show_each_tenants_device(app: TestApp) {
    let (a, b) = siblings(&app).await;
    create_notification(&app, &a, &sos_notification()).await;
    create_notification(&app, &b, &sos_notification()).await;
    raise(&app, &a, SHARED, 1, "2026-03-02T10:00:00Z").await;
    raise(&app, &b, SHARED, 1, "2026-03-02T11:00:00Z").await;
    let alerts = list(
        &app,
        &format!("/V2/1000/alerts?subtenants=true&deviceId={SHARED}"),
    )
    .await;
    let mut tenants: Vec<&str> = alerts
        .iter()
        .map(|alert| alert["TenantCode"].as_str().unwrap())
        .collect();
    tenants.sort_unstable();
    assert_eq!(tenants, [a.as_str(), b.as_str()]);

    let window = "DateFrom=2026-03-02T00:00:00Z&DateTo=2026-03-03T00:00:00Z";
    let overview = list(
        &app,
        &format!(
            "/V2/1000/reports/DevicesOverviewReport?Subtenants=true&DeviceIds={SHARED}&{window}"
        ),
    )
    .await;
    let mut names: Vec<&str> = overview
        .iter()
        .map(|row| row["DeviceFriendlyName"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["A's van", "B's van"]);
    // Each alert is told of its own device (alerts are placed by when they were raised:
    // A's first).
    let rows = list(
        &app,
        "/V2/1000/reports/AlertsReport?Subtenants=true&IntervalType=this-year",
    )
    .await;
    let named: Vec<&str> = rows
        .iter()
        .map(|row| row["DeviceFriendlyName"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["A's van", "B's van"], "{rows:?}");
}

/// A database from before migration 0042 (devices unique across the platform), with a
/// device in each of two tenants and what each owns, is migrated: every row survives and
/// keys its own device, a retry of a stored message is still recognised, and the other
/// tenant may now register the same id.
async fn devices_survive_the_per_tenant_key_migration(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let mut conn = migrated_before(&database, backend, 42).await;
    let sent = 1_772_359_200_000_000_i64; // 2026-03-01T10:00:00Z
    for statement in [
        "INSERT INTO tenants (code, parent_code, path, doc, etag, updated_at)
         VALUES ('1000', NULL, '/1000/', '{\"Description\":\"Root\"}', 'e1', 0),
                ('1001', '1000', '/1000/1001/', '{\"Description\":\"A\"}', 'e2', 0)"
            .to_string(),
        "UPDATE counters SET value = 1001 WHERE name = 'tenant_code'".to_string(),
        "INSERT INTO devices (device_id, tenant_code, device_type, status, doc, etag, updated_at)
         VALUES ('old-root', '1000', 'InReach', 'Active', '{\"FriendlyName\":\"Root van\"}', 'd1', 1),
                ('old-a', '1001', 'InReach', 'Active', '{\"FriendlyName\":\"A van\"}', 'd2', 1)"
            .to_string(),
        "INSERT INTO device_states (device_id, tenant_code, last_message_time, latitude, longitude)
         VALUES ('old-root', '1000', NULL, NULL, NULL)"
            .to_string(),
        format!(
            "INSERT INTO device_states (device_id, tenant_code, last_message_time, last_message_id,
                latitude, longitude)
             VALUES ('old-a', '1001', {sent}, 1, 51.5, -0.12)"
        ),
        format!(
            "INSERT INTO mo_messages (tenant_code, device_id, sequence_number, sent_at,
                received_at, message_time, message_type, latitude, longitude, doc, etag)
             VALUES ('1001', 'old-a', 7, {sent}, {sent}, {sent}, 'AutomaticPositionReport', 51.5,
                -0.12, '{{\"MessageType\":\"AutomaticPositionReport\",\"SequenceNumber\":7,\"SentFromDevice\":\"2026-03-01T10:00:00Z\",\"Position\":{{\"Latitude\":51.5,\"Longitude\":-0.12}}}}', 'm1')"
        ),
        format!(
            "INSERT INTO alerts (tenant_code, device_id, notification_name, severity, status,
                raised_at, last_match_at, match_count, etag)
             VALUES ('1001', 'old-a', 'SOS', '2', 'Open', {sent}, {sent}, 1, 'a1')"
        ),
        format!(
            "INSERT INTO mt_messages (tenant_code, device_id, kind, status, doc, created_at,
                updated_at, etag)
             VALUES ('1001', 'old-a', 'Text', 'Queued', '{{\"Message\":\"hi\",\"Parameters\":{{}}}}',
                {sent}, {sent}, 't1'),
                    ('1001', 'old-a', 'Text', 'Queued', '{{\"Message\":\"gone\",\"Parameters\":{{}}}}',
                {sent}, {sent}, 't2')"
        ),
        // The newest MT message was deleted: its id is never handed out again.
        "DELETE FROM mt_messages WHERE etag = 't2'".to_string(),
    ] {
        sqlx::query(&statement).execute(&mut conn).await.unwrap();
    }
    conn.close().await.unwrap();

    let app = spawn_app_on(backend, database, AppConfig::default()).await;
    let device = app.admin.get_json("/V2/1001/devices/old-a").await;
    assert_eq!(device["FriendlyName"], "A van");
    assert_eq!(device["LastPosition"]["Lat"], 51.5);
    assert_eq!(
        app.admin.get_json("/V2/1000/devices/old-root").await["FriendlyName"],
        "Root van"
    );
    let messages = list(&app, "/V2/1001/devices/old-a/momessages").await;
    assert_eq!(messages.len(), 1);
    let alerts = list(&app, "/V2/1001/alerts").await;
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0]["DeviceId"], "old-a");
    let mt = list(&app, "/V2/1001/devices/old-a/mtmessages").await;
    assert_eq!(mt.len(), 1);
    assert_eq!(mt[0]["Message"], "hi");
    let old_mt: i64 = mt[0]["MessageId"].as_str().unwrap().parse().unwrap();

    // The stored message's retry is still one.
    let retry = post_processed(
        &app,
        "1001",
        "old-a",
        &json!([position_report(7, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
    )
    .await;
    assert_eq!(retry[0]["Duplicate"], true);
    assert_eq!(retry[0]["MessageId"], messages[0]["MessageId"]);
    let queued = app
        .admin
        .post(
            "/V2/1001/devices/old-a/mtmessages",
            &json!({"Type": "Text", "Message": "after"}),
        )
        .await;
    assert_eq!(queued.status(), StatusCode::OK);
    let mt = list(&app, "/V2/1001/devices/old-a/mtmessages").await;
    let new_mt: i64 = mt[1]["MessageId"].as_str().unwrap().parse().unwrap();
    assert!(new_mt > old_mt + 1, "{old_mt} then {new_mt}");

    // The root tenant may now register A's id, and message it as its own.
    assert_eq!(
        register(&app, "1000", "old-a", "Root's own").await,
        StatusCode::OK
    );
    let first = post_processed(
        &app,
        "1000",
        "old-a",
        &json!([position_report(7, "2026-03-01T10:00:00Z", 1.0, 2.0)]),
    )
    .await;
    assert_eq!(first[0]["Duplicate"], false);
    assert_eq!(
        list(&app, "/V2/1001/devices/old-a/momessages").await.len(),
        1
    );
    // Deleting A's leaves the root's, and the cascade still takes A's state and MT messages.
    assert_eq!(
        app.admin.delete("/V2/1001/devices/old-a").await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json("/V2/1000/devices/old-a").await["LastPosition"]["Lat"],
        1.0
    );
    assert_eq!(
        register(&app, "1001", "old-a", "A again").await,
        StatusCode::OK
    );
    assert!(
        list(&app, "/V2/1001/devices/old-a/mtmessages")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn sqlite_devices_survive_the_per_tenant_key_migration() {
    devices_survive_the_per_tenant_key_migration(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_devices_survive_the_per_tenant_key_migration() {
    devices_survive_the_per_tenant_key_migration(Backend::Postgres).await;
}
