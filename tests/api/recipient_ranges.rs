//! Recipients' numbers have a range (`Interval` and `ReportingFrequency` 1 to 10,080
//! minutes, `Radius` above 0 up to 20,000 km), refused on save with a 400 naming the
//! field; and one tenant's recipient holding a number out of range (stored before the
//! ranges were checked) never fails another tenant's ingest: at fire time it is skipped.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Connection;

use crate::backend_tests;
use crate::common::{TestApp, assert_problem, problem_fields};
use crate::event_notifications::location_id;
use crate::mo_messages::register_device;

backend_tests!(
    numbers_out_of_range_are_refused_on_save,
    a_stored_number_out_of_range_fails_no_batch,
);

/// Recipients whose one number is out of range, with the field to blame.
fn poisoned() -> Vec<(Value, &'static str)> {
    vec![
        (
            json!({"Type": "SendCheckInRequest", "Interval": "1e18"}),
            "Interval",
        ),
        (
            json!({"Type": "SendCheckInRequest", "Interval": "10081"}),
            "Interval",
        ),
        (
            json!({"Type": "SendCheckInRequest", "Interval": "0.5"}),
            "Interval",
        ),
        (
            json!({"Type": "ChangeReportingFrequency", "ReportingFrequency": "1e308"}),
            "ReportingFrequency",
        ),
        (
            json!({"Type": "ChangeReportingFrequency", "ReportingFrequency": "Infinity"}),
            "ReportingFrequency",
        ),
        (
            json!({"Type": "NearestDevices", "Radius": "20000.01"}),
            "Radius",
        ),
        (json!({"Type": "NearestDevices", "Radius": "0"}), "Radius"),
    ]
}

fn notification(recipient: Value) -> Value {
    json!({"NotificationName": "Check", "EventsExpression": "CheckIn",
           "Recipients": [{"Type": "DeviceUserEmail"}, recipient]})
}

fn list(recipient: Value) -> Value {
    json!({"ListName": "Ops", "Recipients": [{"Type": "DeviceUserEmail"}, recipient]})
}

async fn numbers_out_of_range_are_refused_on_save(app: TestApp) {
    let in_range = json!({"Type": "SendCheckInRequest", "Interval": "10080"});
    let notifications = "/V2/1000/eventnotifications";
    let lists = "/V2/1000/addressbookdistributionlists";
    let notification_id = location_id(
        app.admin
            .post(notifications, &notification(in_range.clone()))
            .await,
    )
    .await;
    let list_id = location_id(app.admin.post(lists, &list(in_range)).await).await;
    let kept_notification = app
        .admin
        .get_json(&format!("{notifications}/{notification_id}"))
        .await;
    let kept_list = app.admin.get_json(&format!("{lists}/{list_id}")).await;
    for (recipient, field) in poisoned() {
        let expected = [format!("Recipients[1].{field}")];
        for (collection, id, body) in [
            (
                notifications,
                &notification_id,
                notification(recipient.clone()),
            ),
            (lists, &list_id, list(recipient.clone())),
        ] {
            let post = app.admin.post(collection, &body).await;
            let problem = assert_problem(post, 400, "validation_failed").await;
            assert_eq!(
                problem_fields(&problem),
                expected,
                "POST {collection} {recipient}"
            );
            let put = app.admin.put(&format!("{collection}/{id}"), &body).await;
            let problem = assert_problem(put, 400, "validation_failed").await;
            assert_eq!(
                problem_fields(&problem),
                expected,
                "PUT {collection} {recipient}"
            );
        }
    }
    // Nothing changed.
    for (collection, kept) in [(notifications, &kept_notification), (lists, &kept_list)] {
        assert_eq!(
            app.admin
                .get_json(collection)
                .await
                .as_array()
                .unwrap()
                .len(),
            1
        );
        let id = kept.get("NotificationId").or(kept.get("ListId")).unwrap();
        let now = app
            .admin
            .get_json(&format!("{collection}/{}", id.as_str().unwrap()))
            .await;
        assert_eq!(&now, kept);
    }
}

/// Rewrites every stored `"Interval":"<from>"` to `"Interval":"<to>"`, behind the API's
/// back, as a database from before the ranges could hold it.
async fn store_interval_directly(app: &TestApp, from: &str, to: &str) {
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(app.database_url())
        .await
        .expect("connect");
    let changed = sqlx::query("UPDATE event_notifications SET doc = REPLACE(doc, $1, $2)")
        .bind(format!("\"Interval\":\"{from}\""))
        .bind(format!("\"Interval\":\"{to}\""))
        .execute(&mut db)
        .await
        .expect("poison")
        .rows_affected();
    assert_eq!(changed, 1);
    db.close().await.ok();
}

const POISONED_BATCHES: usize = 30;
const OTHER_BATCHES: usize = 90;
const DEVICES: usize = 10;

async fn a_stored_number_out_of_range_fails_no_batch(app: TestApp) {
    let noisy = app.create_tenant("1000", "Poisoned").await;
    let quiet = app.create_tenant("1000", "Innocent").await;
    let response = app
        .admin
        .post(
            &format!("/V2/{noisy}/eventnotifications"),
            &json!({"NotificationName": "Check", "EventsExpression": "CheckIn",
                    "Recipients": [{"Type": "SendCheckInRequest", "Interval": "45"}]}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // Before any batch: the rules are read from the database at the first.
    store_interval_directly(&app, "45", "1e18").await;
    let noisy_devices: Vec<String> = (0..DEVICES).map(|i| format!("noisy-{i}")).collect();
    let quiet_devices: Vec<String> = (0..DEVICES).map(|i| format!("quiet-{i}")).collect();
    for device in &noisy_devices {
        register_device(&app, &noisy, device).await;
    }
    for device in &quiet_devices {
        register_device(&app, &quiet, device).await;
    }
    let mut posts = Vec::new();
    for i in 0..POISONED_BATCHES.max(OTHER_BATCHES) {
        for (tenant, devices, batches) in [
            (&noisy, &noisy_devices, POISONED_BATCHES),
            (&quiet, &quiet_devices, OTHER_BATCHES),
        ] {
            if i >= batches {
                continue;
            }
            let device = devices[i % DEVICES].clone();
            let path = format!("/V2/{tenant}/devices/{device}/momessages");
            let seq = (i / DEVICES) as i64;
            let body = json!([{"MessageType": "CheckIn", "SequenceNumber": seq,
                               "SentFromDevice": format!("2026-03-01T10:00:{seq:02}Z")}]);
            let admin = app.admin.clone();
            let tenant = tenant.clone();
            posts.push(async move { (tenant, device, admin.post(&path, &body).await.status()) });
        }
    }
    for (tenant, device, status) in join_all(posts).await {
        // The poisoned recipient is skipped (logged): even its own tenant's batches pass.
        assert_eq!(status, StatusCode::OK, "{tenant}/{device}");
    }
    for (tenant, devices, batches) in [
        (&noisy, &noisy_devices, POISONED_BATCHES),
        (&quiet, &quiet_devices, OTHER_BATCHES),
    ] {
        let mut stored = 0;
        for device in devices {
            let messages = app
                .admin
                .get_json(&format!("/V2/{tenant}/devices/{device}/momessages"))
                .await;
            stored += messages.as_array().unwrap().len();
        }
        assert_eq!(stored, batches, "{tenant}");
    }
    // The skipped recipient set no check-in interval and queued no request.
    let device = app
        .admin
        .get_json(&format!("/V2/{noisy}/devices/{}", noisy_devices[0]))
        .await;
    assert!(device["CheckInIntervalMinutes"].is_null(), "{device}");
    let queued = app
        .admin
        .get_json(&format!(
            "/V2/{noisy}/devices/{}/mtmessages",
            noisy_devices[0]
        ))
        .await;
    assert_eq!(queued, json!([]));
}
