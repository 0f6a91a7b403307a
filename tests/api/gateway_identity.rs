//! One device per gateway identifier (issue 42): an IridiumImei or SecondaryDeviceId
//! names one device in the whole installation and is no other device's DeviceId, so a
//! device in one customer's tenant cannot capture another customer's gateway reports.
//! Conflicting writes (POST, PUT, PATCH) are refused 409 and change nothing, naming the
//! other device only to a caller who may see it; two at once cannot both succeed; and an
//! identifier that names several devices anyway (DeviceIds repeat across tenants, data
//! from before the rule) is refused by every gateway, storing nothing.

use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Connection;

use crate::alerts::{create_notification, sos_notification};
use crate::backend_tests;
use crate::common::{
    Backend, Client, TestApp, TestDatabase, assert_problem, migrated_before, spawn_app_on,
};
use crate::gateway_support::{
    DIRECTIP_ACCEPTED, DIRECTIP_REFUSED, alerts, device, directip_message, directip_send,
    gateway_token, messages, register, with_directip,
};
use safetrack::app::AppConfig;

backend_tests!(
    another_tenants_device_id_as_an_imei_is_refused_and_reports_stay_home,
    a_caller_outside_the_other_tenant_learns_nothing_of_it,
    put_and_patch_are_refused_and_identifiers_are_released,
    an_id_naming_two_devices_is_refused_by_every_gateway,
    two_conflicting_creates_at_once_one_wins,
);

const IMEI: &str = "300234063904190";
const T0: i64 = 1_772_359_200_000; // 2026-03-01T10:00:00Z in ms

async fn create(client: &Client, tenant: &str, body: Value) -> reqwest::Response {
    client.post(&format!("/V2/{tenant}/devices"), &body).await
}

fn garmin_sos(imei: &str, at_ms: i64) -> Value {
    json!({"Version": "2.0", "Events": [crate::gateway_garmin::event(imei, 4, at_ms, json!({}))]})
}

async fn garmin(app: &TestApp, token: &str, body: &Value) -> StatusCode {
    reqwest::Client::new()
        .post(format!("{}/gateways/garmin", app.base))
        .header("X-Outbound-Auth-Token", token)
        .json(body)
        .send()
        .await
        .unwrap()
        .status()
}

async fn osmand(app: &TestApp, token: &str, id: &str) -> reqwest::Response {
    reqwest::get(format!(
        "{}/gateways/osmand/{token}?id={id}&lat=51.5&lon=-0.12&timestamp=1772359260",
        app.base
    ))
    .await
    .unwrap()
}

/// Two customers, A and B, under the root. B's device is registered by its IMEI as its
/// DeviceId; a device of A's naming that IMEI as its IridiumImei is refused, and B's
/// Garmin SOS, DirectIP message and OsmAnd report are B's.
async fn another_tenants_device_id_as_an_imei_is_refused_and_reports_stay_home(app: TestApp) {
    let a = app.create_tenant("1000", "Customer A").await;
    let b = app.create_tenant("1000", "Customer B").await;
    register(&app, &b, IMEI, json!({})).await;
    create_notification(&app, &b, &sos_notification()).await;
    create_notification(&app, &a, &sos_notification()).await;

    let refused = create(
        &app.admin,
        &a,
        json!({"DeviceId": "buoy-a", "DeviceType": "InReach", "IridiumImei": IMEI}),
    )
    .await;
    let problem = assert_problem(refused, 409, "conflict").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.starts_with("IridiumImei"), "{detail}");
    // The root's administrator may see B: told which device has it.
    assert!(detail.contains(&b) && detail.contains(IMEI), "{detail}");
    assert_eq!(
        app.admin
            .get(&format!("/V2/{a}/devices/buoy-a"))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    // Nor the other way round: B's IMEI-named device cannot be A's SecondaryDeviceId,
    // and a DeviceId that is another device's IridiumImei is refused.
    register(
        &app,
        &a,
        "buoy-a",
        json!({"IridiumImei": "300234063904191"}),
    )
    .await;
    let refused = create(
        &app.admin,
        &a,
        json!({"DeviceId": "phone-a", "DeviceType": "InReach", "SecondaryDeviceId": IMEI}),
    )
    .await;
    let problem = assert_problem(refused, 409, "conflict").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("SecondaryDeviceId")
    );
    let refused = create(
        &app.admin,
        &b,
        json!({"DeviceId": "300234063904191", "DeviceType": "InReach"}),
    )
    .await;
    let problem = assert_problem(refused, 409, "conflict").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("DeviceId") && detail.contains("buoy-a"),
        "{detail}"
    );
    // The same DeviceId in two tenants stays legal.
    register(&app, &a, "truck1", json!({})).await;
    register(&app, &b, "truck1", json!({})).await;

    let root = gateway_token(&app, "1000", &["DeviceMessages"], "root").await;
    assert_eq!(
        garmin(&app, &root, &garmin_sos(IMEI, T0)).await,
        StatusCode::OK
    );
    assert_eq!(osmand(&app, &root, IMEI).await.status(), StatusCode::OK);
    let (app, address) = with_directip(app, &root).await;
    assert_eq!(
        directip_send(address, &directip_message(IMEI, 1, b"hi")).await,
        DIRECTIP_ACCEPTED
    );

    let stored = messages(&app, &b, IMEI).await;
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert_eq!(alerts(&app, &b).await.len(), 1);
    assert!(alerts(&app, &a).await.is_empty());
    assert!(messages(&app, &a, "buoy-a").await.is_empty());
}

/// A Manager of A is refused without a word of B's tenant or device; the root's
/// administrator, for the same write, is told.
async fn a_caller_outside_the_other_tenant_learns_nothing_of_it(app: TestApp) {
    let a = app.create_tenant("1000", "Customer A").await;
    let b = app.create_tenant("1000", "Customer B").await;
    register(&app, &b, "b-secret-device", json!({"IridiumImei": IMEI})).await;
    let (_, manager) = app.create_user(&a, "manager@a.example", "Manager").await;
    for body in [
        json!({"DeviceId": "mine", "DeviceType": "InReach", "IridiumImei": IMEI}),
        json!({"DeviceId": "mine", "DeviceType": "InReach", "SecondaryDeviceId": IMEI}),
        json!({"DeviceId": IMEI, "DeviceType": "InReach"}),
    ] {
        let refused = create(&manager, &a, body.clone()).await;
        let problem = assert_problem(refused, 409, "conflict").await;
        let text = problem.to_string();
        assert!(
            !text.contains("b-secret-device") && !text.contains(&format!("tenant {b}")),
            "{text}"
        );
        assert!(problem["detail"].as_str().unwrap().contains(IMEI), "{text}");
        let told = create(&app.admin, &a, body).await;
        let problem = assert_problem(told, 409, "conflict").await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("b-secret-device"),
            "{problem}"
        );
    }
    assert!(
        app.admin
            .get_json(&format!("/V2/{a}/devices"))
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// PUT and PATCH that would give a device another's identifier are refused and change
/// nothing; a device keeps its own identifiers on a write; an identifier given up is
/// free for another device.
async fn put_and_patch_are_refused_and_identifiers_are_released(app: TestApp) {
    let a = app.create_tenant("1000", "Customer A").await;
    let b = app.create_tenant("1000", "Customer B").await;
    register(
        &app,
        &b,
        "b-1",
        json!({"IridiumImei": IMEI, "SecondaryDeviceId": "phone-b"}),
    )
    .await;
    register(&app, &a, "a-1", json!({"IridiumImei": "300234063904191"})).await;
    let before = device(&app, &a, "a-1").await;

    let put = app
        .admin
        .put(
            &format!("/V2/{a}/devices/a-1"),
            &json!({"DeviceType": "InReach", "IridiumImei": IMEI}),
        )
        .await;
    assert_problem(put, 409, "conflict").await;
    let patch = app
        .admin
        .patch(
            &format!("/V2/{a}/devices/a-1"),
            &json!([{"op": "add", "path": "/SecondaryDeviceId", "value": "phone-b"}]),
        )
        .await;
    let problem = assert_problem(patch, 409, "conflict").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("SecondaryDeviceId"),
        "{problem}"
    );
    let patch = app
        .admin
        .patch(
            &format!("/V2/{a}/devices/a-1"),
            &json!([{"op": "replace", "path": "/IridiumImei", "value": IMEI}]),
        )
        .await;
    assert_problem(patch, 409, "conflict").await;
    let after = device(&app, &a, "a-1").await;
    assert_eq!(after["ETag"], before["ETag"]);
    assert_eq!(after["IridiumImei"], "300234063904191");

    // Its own identifiers are no conflict.
    let keep = app.admin.put(&format!("/V2/{a}/devices/a-1"), &json!({"DeviceType": "InReach", "FriendlyName": "Buoy", "IridiumImei": "300234063904191", "SecondaryDeviceId": "300234063904191"})).await;
    assert_eq!(keep.status(), StatusCode::OK);
    // B gives its IMEI up (PATCH), and A's device may take it (PUT).
    let give_up = app
        .admin
        .patch(
            &format!("/V2/{b}/devices/b-1"),
            &json!([{"op": "remove", "path": "/IridiumImei"}]),
        )
        .await;
    assert_eq!(give_up.status(), StatusCode::OK);
    let take = app
        .admin
        .put(
            &format!("/V2/{a}/devices/a-1"),
            &json!({"DeviceType": "InReach", "IridiumImei": IMEI}),
        )
        .await;
    assert_eq!(take.status(), StatusCode::OK);
    // A deleted device's identifiers are free too.
    assert_eq!(
        app.admin
            .delete(&format!("/V2/{b}/devices/b-1"))
            .await
            .status(),
        StatusCode::OK
    );
    register(&app, &a, "a-2", json!({"SecondaryDeviceId": "phone-b"})).await;
}

/// The same DeviceId in two tenants (legal) is ambiguous to a token over both: each
/// gateway refuses it (Garmin skips it; OsmAnd 409; DirectIP unconfirmed) and stores
/// nothing; a token of one tenant finds its own.
async fn an_id_naming_two_devices_is_refused_by_every_gateway(app: TestApp) {
    let a = app.create_tenant("1000", "Customer A").await;
    let b = app.create_tenant("1000", "Customer B").await;
    register(&app, &a, IMEI, json!({})).await;
    register(&app, &b, IMEI, json!({})).await;
    let root = gateway_token(&app, "1000", &["DeviceMessages"], "root").await;
    let only_a = gateway_token(&app, &a, &["DeviceMessages"], "a").await;

    assert_eq!(
        garmin(&app, &root, &garmin_sos(IMEI, T0)).await,
        StatusCode::OK
    );
    let problem = assert_problem(osmand(&app, &root, IMEI).await, 409, "conflict").await;
    assert!(
        problem["detail"].as_str().unwrap().contains(IMEI),
        "{problem}"
    );
    let (app, address) = with_directip(app, &root).await;
    assert_eq!(
        directip_send(address, &directip_message(IMEI, 1, b"hi")).await,
        DIRECTIP_REFUSED
    );
    assert!(messages(&app, &a, IMEI).await.is_empty());
    assert!(messages(&app, &b, IMEI).await.is_empty());

    assert_eq!(
        garmin(&app, &only_a, &garmin_sos(IMEI, T0)).await,
        StatusCode::OK
    );
    assert_eq!(messages(&app, &a, IMEI).await.len(), 1);
    assert!(messages(&app, &b, IMEI).await.is_empty());
}

/// Two creates at once that would clash (an IMEI as one's IridiumImei and the other's
/// DeviceId, in two tenants; the same SecondaryDeviceId): exactly one succeeds.
async fn two_conflicting_creates_at_once_one_wins(app: TestApp) {
    let a = app.create_tenant("1000", "Customer A").await;
    let b = app.create_tenant("1000", "Customer B").await;
    for round in 0..6u32 {
        let imei = format!("3002340639042{round:02}");
        let (first, second) = if round % 2 == 0 {
            (
                json!({"DeviceId": format!("a-{round}"), "DeviceType": "InReach", "IridiumImei": imei}),
                json!({"DeviceId": imei, "DeviceType": "InReach"}),
            )
        } else {
            (
                json!({"DeviceId": format!("a-{round}"), "DeviceType": "InReach", "SecondaryDeviceId": imei}),
                json!({"DeviceId": format!("b-{round}"), "DeviceType": "InReach", "SecondaryDeviceId": imei}),
            )
        };
        let (one, two) = tokio::join!(
            create(&app.admin, &a, first),
            create(&app.admin, &b, second)
        );
        let statuses = [one.status(), two.status()];
        let created = statuses.iter().filter(|s| **s == StatusCode::OK).count();
        let refused = statuses
            .iter()
            .filter(|s| **s == StatusCode::CONFLICT)
            .count();
        assert_eq!((created, refused), (1, 1), "round {round}: {statuses:?}");
    }
}

/// Devices stored before the rule whose identifiers clash (A's IridiumImei is B's
/// DeviceId; two devices share a SecondaryDeviceId) survive the migration. No gateway
/// files a report by a clashing identifier (the key-by-key lookup gave B's Garmin SOS to
/// A's device); a write of such a device is refused until it no longer clashes; once it
/// does, B's reports are B's.
async fn identifiers_stored_before_the_rule_stay_ambiguous(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let mut conn = migrated_before(&database, backend, 48).await;
    let devices = [
        ("a-buoy", "1001", format!("{{\"IridiumImei\":\"{IMEI}\"}}")),
        (IMEI, "1002", "{}".to_string()),
        (
            "a-phone",
            "1001",
            "{\"SecondaryDeviceId\":\"shared-phone\"}".to_string(),
        ),
        (
            "b-phone",
            "1002",
            "{\"SecondaryDeviceId\":\"shared-phone\"}".to_string(),
        ),
        (
            "a-solo",
            "1001",
            "{\"IridiumImei\":\"300234063904199\"}".to_string(),
        ),
    ];
    let mut statements = vec![
        "INSERT INTO tenants (code, parent_code, path, doc, etag, updated_at)
         VALUES ('1000', NULL, '/1000/', '{\"Description\":\"Root\"}', 'e1', 0),
                ('1001', '1000', '/1000/1001/', '{\"Description\":\"A\"}', 'e2', 0),
                ('1002', '1000', '/1000/1002/', '{\"Description\":\"B\"}', 'e3', 0)"
            .to_string(),
        "UPDATE counters SET value = 1002 WHERE name = 'tenant_code'".to_string(),
    ];
    for (id, tenant, doc) in &devices {
        statements.push(format!(
            "INSERT INTO devices (device_id, tenant_code, device_type, status, doc, etag, updated_at)
             VALUES ('{id}', '{tenant}', 'InReach', 'Active', '{doc}', 'd-{id}', 1)"
        ));
        statements.push(format!(
            "INSERT INTO device_states (device_id, tenant_code) VALUES ('{id}', '{tenant}')"
        ));
    }
    for statement in statements {
        sqlx::query(&statement).execute(&mut conn).await.unwrap();
    }
    conn.close().await.unwrap();

    let app = spawn_app_on(backend, database, AppConfig::default()).await;
    create_notification(&app, "1001", &sos_notification()).await;
    create_notification(&app, "1002", &sos_notification()).await;
    let root = gateway_token(&app, "1000", &["DeviceMessages"], "root").await;
    // Garmin looks an IMEI up as IridiumImei and DeviceId: two devices. Skipped, not A's.
    assert_eq!(
        garmin(&app, &root, &garmin_sos(IMEI, T0)).await,
        StatusCode::OK
    );
    assert_problem(osmand(&app, &root, "shared-phone").await, 409, "conflict").await;
    for (id, tenant) in [
        ("a-buoy", "1001"),
        (IMEI, "1002"),
        ("a-phone", "1001"),
        ("b-phone", "1002"),
    ] {
        assert!(messages(&app, tenant, id).await.is_empty(), "{id}");
    }
    assert!(alerts(&app, "1001").await.is_empty());
    // The one identifier that was no clash is still A's alone.
    let taken = create(
        &app.admin,
        "1002",
        json!({"DeviceId": "b-2", "DeviceType": "InReach", "IridiumImei": "300234063904199"}),
    )
    .await;
    assert_problem(taken, 409, "conflict").await;

    // A's device cannot be written while it clashes; without the IMEI it can.
    let rename = json!([{"op": "replace", "path": "/FriendlyName", "value": "A's buoy"}]);
    assert_problem(
        app.admin.patch("/V2/1001/devices/a-buoy", &rename).await,
        409,
        "conflict",
    )
    .await;
    let fixed = app
        .admin
        .patch(
            "/V2/1001/devices/a-buoy",
            &json!([{"op": "remove", "path": "/IridiumImei"}]),
        )
        .await;
    assert_eq!(fixed.status(), StatusCode::OK);
    assert_eq!(
        garmin(&app, &root, &garmin_sos(IMEI, T0)).await,
        StatusCode::OK
    );
    assert_eq!(messages(&app, "1002", IMEI).await.len(), 1);
    assert_eq!(alerts(&app, "1002").await.len(), 1);
    assert!(alerts(&app, "1001").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_identifiers_stored_before_the_rule_stay_ambiguous() {
    identifiers_stored_before_the_rule_stay_ambiguous(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_identifiers_stored_before_the_rule_stay_ambiguous() {
    identifiers_stored_before_the_rule_stay_ambiguous(Backend::Postgres).await;
}
