//! MO messages through HTTP: posting (limits, atomic batches, idempotent retries), the
//! processed answer, listing by message time with continuation paging, one message,
//! deleting.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    a_batch_is_stored_and_processed,
    each_processed_id_names_its_message,
    retries_are_stored_once,
    retries_are_found_among_runs_and_spread_out_numbers,
    a_batch_resent_in_parallel_is_stored_once,
    bad_batches_store_nothing,
    size_limits_are_413_and_store_nothing,
    listing_pages_by_message_time,
    messages_within_a_millisecond_keep_their_order,
    one_message_with_and_without_file,
    delete_honours_if_match,
    devices_out_of_scope_are_404,
    read_only_users_cannot_post,
    positions_may_come_and_go,
    xml_and_csv,
);

pub const DEVICE: &str = "300234010753370";

pub async fn register_device(app: &TestApp, tenant: &str, device_id: &str) {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices"),
            &json!({"DeviceId": device_id, "DeviceType": "InReach", "FriendlyName": "Van 3"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "register device");
}

pub fn position_report(seq: i64, sent: &str, lat: f64, lon: f64) -> Value {
    json!({"MessageType": "AutomaticPositionReport", "SequenceNumber": seq, "SentFromDevice": sent,
           "Position": {"Latitude": lat, "Longitude": lon, "Speed": 42.5}})
}

pub async fn post_processed(app: &TestApp, tenant: &str, device: &str, batch: &Value) -> Value {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices/{device}/momessages?process=true"),
            batch,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "post messages");
    response.json().await.expect("processed json")
}

fn messages_path(device: &str) -> String {
    format!("/V2/1000/devices/{device}/momessages")
}

async fn count(app: &TestApp, device: &str) -> usize {
    app.admin
        .get_json(&messages_path(device))
        .await
        .as_array()
        .unwrap()
        .len()
}

async fn a_batch_is_stored_and_processed(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    // Without process=true: 200 and no body.
    let plain = app
        .admin
        .post(
            &messages_path(DEVICE),
            &json!([position_report(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
        )
        .await;
    assert_eq!(plain.status(), StatusCode::OK);
    assert!(plain.bytes().await.unwrap().is_empty());
    let processed = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([
            position_report(2, "2026-03-01T10:01:00Z", 51.5, -0.12),
            {"MessageType": "FreeText", "Message": "at depot"}
        ]),
    )
    .await;
    let items = processed.as_array().unwrap();
    assert_eq!(items.len(), 2);
    let first: i64 = items[0]["MessageId"].as_str().unwrap().parse().unwrap();
    let second: i64 = items[1]["MessageId"].as_str().unwrap().parse().unwrap();
    assert!(second > first, "ids increase");
    assert!(items[0]["ReceivedAtServer"].is_string());
    assert_eq!(items[0]["SentFromDevice"], "2026-03-01T10:01:00Z");
    assert_eq!(items[0]["Late"], false);
    assert_eq!(items[0]["Duplicate"], false);
    assert_eq!(items[0]["Notifications"], json!([]));
    // No SentFromDevice: the message time is ReceivedAtServer.
    assert!(items[1]["SentFromDevice"].is_null());
    assert_eq!(count(&app, DEVICE).await, 3);
    // The device state moved (read-only on the device record).
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["LastPosition"]["Lat"], 51.5);
    assert_eq!(device["LastPosition"]["Speed"], 42.5);
    assert!(device["LastMessageTime"].is_string());
}

/// Concurrent batches from several devices (on SQLite they share group commits): every
/// processed `MessageId` names the message it answers for. 18 at once, more than
/// PostgreSQL's pool has connections, all the tenant's first (the rules not yet cached):
/// when a batch read the rules through a second pool connection while holding its
/// transaction's, they waited for each other until the pool's timeout (500s). Every
/// message matches a rule with a recipient, so each match also reads the tenant's time
/// zone inside the transaction.
async fn each_processed_id_names_its_message(app: TestApp) {
    let devices: Vec<String> = (0..6).map(|d| format!("ids-{d}")).collect();
    for device in &devices {
        register_device(&app, "1000", device).await;
    }
    let response = app
        .admin
        .post(
            "/V2/1000/eventnotifications",
            &json!({"NotificationName": "Every text", "EventsExpression": "FreeText",
                    "Recipients": [{"Type": "MessagingAddress",
                                    "MessagingAddress": "mail:ops@example.com"}]}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut posts = Vec::new();
    for device in &devices {
        for round in 0..3 {
            let admin = app.admin.clone();
            let device = device.clone();
            posts.push(tokio::spawn(async move {
                let batch: Vec<Value> = (0..7)
                    .map(|i| json!({"MessageType": "FreeText", "Message": format!("{device}/{round}/{i}")}))
                    .collect();
                let path = format!("/V2/1000/devices/{device}/momessages?process=true");
                let response = admin.post(&path, &Value::Array(batch)).await;
                let status = response.status();
                let processed: Value = response.json().await.expect("processed json");
                assert_eq!(status, StatusCode::OK, "{processed:#}");
                (device, processed)
            }));
        }
    }
    let mut ids = std::collections::HashSet::new();
    for post in posts {
        let (device, processed) = post.await.expect("post");
        let items = processed.as_array().expect("processed array");
        assert_eq!(items.len(), 7);
        for item in items {
            let id = item["MessageId"].as_str().expect("MessageId");
            assert!(ids.insert(id.to_string()), "{id} answered twice");
            assert_eq!(
                item["Notifications"].as_array().map(Vec::len),
                Some(1),
                "{item:#}"
            );
            let stored = app
                .admin
                .get_json(&format!("/V2/1000/devices/{device}/momessages/{id}"))
                .await;
            assert_eq!(stored["Message"], item["Message"]);
            assert_eq!(stored["MessageId"], item["MessageId"]);
        }
    }
    assert_eq!(ids.len(), 6 * 3 * 7);
}

async fn retries_are_stored_once(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let batch = json!([
        position_report(7, "2026-03-01T10:00:00.000001Z", 51.5, -0.12),
        position_report(8, "2026-03-01T10:00:01Z", 51.5, -0.12)
    ]);
    let first = post_processed(&app, "1000", DEVICE, &batch).await;
    // The gateway resends the same two, plus one new, and one twice in the same batch.
    let again = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([
            position_report(7, "2026-03-01T10:00:00.000001Z", 51.5, -0.12),
            position_report(8, "2026-03-01T10:00:01Z", 51.5, -0.12),
            position_report(9, "2026-03-01T10:00:02Z", 51.5, -0.12),
            position_report(9, "2026-03-01T10:00:02Z", 51.5, -0.12)
        ]),
    )
    .await;
    assert_eq!(again[0]["MessageId"], first[0]["MessageId"]);
    assert_eq!(again[1]["MessageId"], first[1]["MessageId"]);
    assert_eq!(again[0]["Duplicate"], true);
    assert_eq!(again[2]["Duplicate"], false);
    assert_eq!(again[3]["Duplicate"], true);
    assert_eq!(again[3]["MessageId"], again[2]["MessageId"]);
    // A resend is answered with the original as stored (read back, not the copy sent).
    for i in 0..2 {
        assert_eq!(again[i]["ReceivedAtServer"], first[i]["ReceivedAtServer"]);
        assert_eq!(again[i]["ETag"], first[i]["ETag"]);
    }
    assert_eq!(count(&app, DEVICE).await, 3);
    // The same stored message resent twice in one batch: both answered with it.
    let twice = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([
            position_report(8, "2026-03-01T10:00:01Z", 51.5, -0.12),
            position_report(8, "2026-03-01T10:00:01Z", 51.5, -0.12)
        ]),
    )
    .await;
    for resent in twice.as_array().unwrap() {
        assert_eq!(resent["Duplicate"], true);
        assert_eq!(resent["MessageId"], first[1]["MessageId"]);
        assert_eq!(resent["ReceivedAtServer"], first[1]["ReceivedAtServer"]);
    }
    assert_eq!(count(&app, DEVICE).await, 3);
    // Same sequence number at another time is another message.
    post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([position_report(7, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
    )
    .await;
    assert_eq!(count(&app, DEVICE).await, 4);
}

/// A batch's retries are looked up by a range of sequence numbers when they run close
/// together, by each number when they are spread out: either way only an exact
/// (SequenceNumber, SentFromDevice) match is a retry, whatever else the device stored.
async fn retries_are_found_among_runs_and_spread_out_numbers(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let at = |second: u32| format!("2026-03-01T10:00:{second:02}Z");
    let first: Vec<Value> = (1..=6)
        .map(|seq| position_report(seq, &at(seq as u32), 51.5, -0.12))
        .collect();
    let first = post_processed(&app, "1000", DEVICE, &json!(first)).await;
    // A run: 2 and 5 resent, 3 and 4 reused at other times (new messages), 7 new.
    let run = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([
            position_report(2, &at(2), 51.5, -0.12),
            position_report(3, &at(30), 51.5, -0.12),
            position_report(4, &at(40), 51.5, -0.12),
            position_report(5, &at(5), 51.5, -0.12),
            position_report(7, &at(7), 51.5, -0.12)
        ]),
    )
    .await;
    assert_eq!(duplicate_flags(&run), [true, false, false, true, false]);
    assert_eq!(run[0]["MessageId"], first[1]["MessageId"]);
    assert_eq!(run[3]["MessageId"], first[4]["MessageId"]);
    assert_eq!(count(&app, DEVICE).await, 9);
    // Spread out: 1 resent beside numbers far away, one of them new.
    let spread_out = json!([
        position_report(1_000_000_000, &at(50), 51.5, -0.12),
        position_report(1, &at(1), 51.5, -0.12),
        position_report(-5, &at(51), 51.5, -0.12)
    ]);
    let spread = post_processed(&app, "1000", DEVICE, &spread_out).await;
    assert_eq!(duplicate_flags(&spread), [false, true, false]);
    assert_eq!(spread[1]["MessageId"], first[0]["MessageId"]);
    assert_eq!(count(&app, DEVICE).await, 11);
    // The spread-out batch resent whole: all three found.
    let again = post_processed(&app, "1000", DEVICE, &spread_out).await;
    assert_eq!(duplicate_flags(&again), [true, true, true]);
    for (resent, original) in again
        .as_array()
        .unwrap()
        .iter()
        .zip(spread.as_array().unwrap())
    {
        assert_eq!(resent["MessageId"], original["MessageId"]);
    }
    assert_eq!(count(&app, DEVICE).await, 11);
}

/// Each processed message's `Duplicate` flag, in order.
fn duplicate_flags(processed: &Value) -> Vec<bool> {
    processed
        .as_array()
        .expect("processed messages")
        .iter()
        .map(|m| m["Duplicate"].as_bool().expect("Duplicate"))
        .collect()
}

/// A gateway resending a batch while the first send is still being written (its
/// transaction not yet committed): every send is answered 200 with the same messages,
/// which are stored once.
async fn a_batch_resent_in_parallel_is_stored_once(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let batch: Vec<Value> = (0..20)
        .map(|i| position_report(i, &format!("2026-03-01T11:00:{i:02}Z"), 51.5, -0.12))
        .collect();
    let batch = json!(batch);
    let sends = (0..8).map(|_| post_processed(&app, "1000", DEVICE, &batch));
    let answers = futures::future::join_all(sends).await;
    let ids = |answer: &Value| -> Vec<Value> {
        answer
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["MessageId"].clone())
            .collect()
    };
    for answer in &answers {
        assert_eq!(ids(answer), ids(&answers[0]));
    }
    let fresh = answers
        .iter()
        .filter(|a| {
            a.as_array()
                .unwrap()
                .iter()
                .all(|m| m["Duplicate"] == false)
        })
        .count();
    assert_eq!(fresh, 1, "one send stored them, the others are retries");
    assert_eq!(count(&app, DEVICE).await, 20);
}

async fn bad_batches_store_nothing(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let path = messages_path(DEVICE);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!([]), vec!["body"]),
        (
            json!([position_report(1, "2026-03-01T10:00:00Z", 91.0, 0.0)]),
            vec!["[0].Position.Latitude"],
        ),
        (
            json!([
                position_report(1, "2026-03-01T10:00:00Z", 50.0, 0.0),
                position_report(2, "2026-03-01T10:00:00Z", 50.0, 181.0)
            ]),
            vec!["[1].Position.Longitude"],
        ),
        (
            json!([{"MessageType": "CheckIn", "EmergencyState": "Panic"}]),
            vec!["[0].EmergencyState"],
        ),
        (
            json!([{"MessageType": "CheckIn", "File": "not base64!"}]),
            vec!["[0].File"],
        ),
        (
            json!([{"MessageType": "CheckIn", "SequenceNumber": "seven"}]),
            vec!["[0].SequenceNumber"],
        ),
        (
            json!([{"MessageType": "CheckIn", "SentFromDevice": "yesterday"}]),
            vec!["[0].SentFromDevice"],
        ),
        (json!({"MessageType": "CheckIn"}), vec!["body"]),
    ];
    for (body, fields) in cases {
        let response = app.admin.post(&path, &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}");
    }
    let too_many: Vec<Value> = (0..1001)
        .map(|i| position_report(i, "2026-03-01T10:00:00Z", 50.0, 0.0))
        .collect();
    let response = app.admin.post(&path, &Value::Array(too_many)).await;
    assert_problem(response, 400, "validation_failed").await;
    let malformed = app
        .admin
        .request(reqwest::Method::POST, &path)
        .header("content-type", "application/json")
        .body("[{\"MessageType\": ")
        .send()
        .await
        .unwrap();
    assert_problem(malformed, 400, "malformed_json").await;
    assert_eq!(count(&app, DEVICE).await, 0);
    // The device state did not move either.
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert!(device["LastMessageTime"].is_null());
}

async fn size_limits_are_413_and_store_nothing(app: TestApp) {
    use base64::Engine;
    register_device(&app, "1000", DEVICE).await;
    let path = messages_path(DEVICE);
    let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
    let big_text = json!([
        {"MessageType": "FreeText", "Message": "ok"},
        {"MessageType": "FreeText", "Message": "x".repeat(48 * 1024)}
    ]);
    let problem = assert_problem(
        app.admin.post(&path, &big_text).await,
        413,
        "payload_too_large",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["[1]"]);
    let big_attachment = json!([{"MessageType": "FreeText", "Attachment": b64(64 * 1024 + 1)}]);
    let problem = assert_problem(
        app.admin.post(&path, &big_attachment).await,
        413,
        "payload_too_large",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["[0].Attachment"]);
    let big_file = json!([{"MessageType": "FreeText", "File": b64(4 * 1024 * 1024 + 1)}]);
    let problem = assert_problem(
        app.admin.post(&path, &big_file).await,
        413,
        "payload_too_large",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["[0].File"]);
    assert_eq!(count(&app, DEVICE).await, 0);
    // Just under every limit is fine, File and Attachment apart from the 48 KB.
    let at_limits = json!([{"MessageType": "FreeText", "Message": "x".repeat(40 * 1024),
        "Attachment": b64(64 * 1024), "File": b64(4 * 1024 * 1024), "MimeType": "image/jpeg",
        "Filename": "photo.jpg"}]);
    assert_eq!(
        app.admin.post(&path, &at_limits).await.status(),
        StatusCode::OK
    );
    assert_eq!(count(&app, DEVICE).await, 1);
}

async fn listing_pages_by_message_time(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    // Posted out of order: listed by message time.
    let batch: Vec<Value> = (0..25)
        .map(|i| {
            let minute = (i * 7) % 25;
            position_report(i, &format!("2026-03-01T10:{minute:02}:00Z"), 51.5, -0.12)
        })
        .collect();
    post_processed(&app, "1000", DEVICE, &Value::Array(batch)).await;
    let path = messages_path(DEVICE);
    let seen: Vec<String> = app
        .admin
        .get_all_pages(&format!(
            "{path}?pageSize=10&fromDate=2026-03-01T10:02:00Z&toDate=2026-03-01T10:22:00Z"
        ))
        .await
        .iter()
        .map(|m| m["SentFromDevice"].as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = (2..22)
        .map(|m| format!("2026-03-01T10:{m:02}:00Z"))
        .collect();
    assert_eq!(seen, expected);
    // A token is bound to its listing.
    let first = app.admin.get(&format!("{path}?pageSize=5")).await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .unwrap()
        .to_string();
    let other = app
        .admin
        .request(
            reqwest::Method::GET,
            &format!("{path}?pageSize=5&includeFile=true"),
        )
        .header("X-CONTINUATIONTOKEN", token)
        .send()
        .await
        .unwrap();
    assert_problem(other, 400, "invalid_continuation_token").await;
    for bad in [
        "pageSize=0",
        "pageSize=1001",
        "fromDate=soon",
        "includeFile=maybe",
    ] {
        let response = app.admin.get(&format!("{path}?{bad}")).await;
        assert_problem(response, 400, "validation_failed").await;
    }
    let response = app
        .admin
        .get(&format!(
            "{path}?fromDate=2026-03-02T00:00:00Z&toDate=2026-03-01T00:00:00Z"
        ))
        .await;
    assert_problem(response, 400, "validation_failed").await;
}

/// Times one microsecond apart sort exactly (they are integers, not text).
async fn messages_within_a_millisecond_keep_their_order(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let times = [
        "2026-03-01T10:00:00.0009Z",
        "2026-03-01T10:00:00Z",
        "2026-03-01T10:00:00.000001Z",
        "2026-03-01T10:00:00.00001Z",
        "2026-03-01T10:00:00.0001Z",
    ];
    let batch: Vec<Value> = times
        .iter()
        .enumerate()
        .map(|(i, t)| position_report(i as i64, t, 51.5, -0.12))
        .collect();
    post_processed(&app, "1000", DEVICE, &Value::Array(batch)).await;
    let listed = app.admin.get_json(&messages_path(DEVICE)).await;
    let order: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["SentFromDevice"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "2026-03-01T10:00:00Z",
            "2026-03-01T10:00:00.000001Z",
            "2026-03-01T10:00:00.00001Z",
            "2026-03-01T10:00:00.0001Z",
            "2026-03-01T10:00:00.0009Z",
        ]
    );
}

async fn one_message_with_and_without_file(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let processed = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([{"MessageType": "FreeText", "File": "aGVsbG8=", "MimeType": "text/plain",
                 "Filename": "hello.txt", "Attachment": "aGk="}]),
    )
    .await;
    let id = processed[0]["MessageId"].as_str().unwrap();
    let path = format!("{}/{id}", messages_path(DEVICE));
    let response = app.admin.get(&path).await;
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    let without: Value = response.json().await.unwrap();
    assert!(without["File"].is_null() && without["Attachment"].is_null());
    assert_eq!(without["Filename"], "hello.txt");
    let with = app
        .admin
        .get_json(&format!("{path}?includeFile=true"))
        .await;
    assert_eq!(with["File"], "aGVsbG8=");
    assert_eq!(with["Attachment"], "aGk=");
    let listed = app
        .admin
        .get_json(&format!("{}?includeFile=true", messages_path(DEVICE)))
        .await;
    assert_eq!(listed[0]["File"], "aGVsbG8=");
    let not_modified = app
        .admin
        .request(reqwest::Method::GET, &path)
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(not_modified.status(), StatusCode::NOT_MODIFIED);
    assert_not_found(
        app.admin
            .get(&format!("{}/999999", messages_path(DEVICE)))
            .await,
    )
    .await;
    assert_not_found(
        app.admin
            .get(&format!("{}/abc", messages_path(DEVICE)))
            .await,
    )
    .await;
}

async fn delete_honours_if_match(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let processed =
        post_processed(&app, "1000", DEVICE, &json!([{"MessageType": "FreeText"}])).await;
    let id = processed[0]["MessageId"].as_str().unwrap();
    let path = format!("{}/{id}", messages_path(DEVICE));
    let stale = app
        .admin
        .request(reqwest::Method::DELETE, &path)
        .header("if-match", "\"not-the-etag\"")
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    let etag = processed[0]["ETag"].as_str().unwrap();
    let deleted = app
        .admin
        .request(reqwest::Method::DELETE, &path)
        .header("if-match", format!("\"{etag}\""))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
    assert_not_found(app.admin.delete(&path).await).await;
}

async fn devices_out_of_scope_are_404(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    register_device(&app, &sibling, "sibling-device").await;
    let (_, child_admin) = app
        .create_user(&child, "admin@child.example", "Administrator")
        .await;
    let body = json!([{"MessageType": "CheckIn"}]);
    // Another tenant's device, through the caller's own tenant or the other's path.
    for path in [
        format!("/V2/{child}/devices/sibling-device/momessages"),
        format!("/V2/{sibling}/devices/sibling-device/momessages"),
        "/V2/1000/devices/sibling-device/momessages".to_string(),
        format!("/V2/{child}/devices/nope/momessages"),
        // Ids no device may have (a space, too long) name none.
        format!("/V2/{child}/devices/has%20space/momessages"),
        format!("/V2/{child}/devices/{}/momessages", "x".repeat(65)),
    ] {
        assert_not_found(child_admin.post(&path, &body).await).await;
        assert_not_found(child_admin.get(&path).await).await;
    }
    // The admin of the root reaches the sibling's device by the sibling's path only.
    assert_not_found(
        app.admin
            .post("/V2/1000/devices/sibling-device/momessages", &body)
            .await,
    )
    .await;
    let ok = app
        .admin
        .post(
            &format!("/V2/{sibling}/devices/sibling-device/momessages"),
            &body,
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
}

async fn read_only_users_cannot_post(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "worker@example.com", "User").await;
    let body = json!([{"MessageType": "CheckIn"}]);
    assert_problem(
        reader.post(&messages_path(DEVICE), &body).await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(
        reader.get(&messages_path(DEVICE)).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        user.post(&messages_path(DEVICE), &body).await.status(),
        StatusCode::OK
    );
    assert_eq!(count(&app, DEVICE).await, 1);
}

/// Messages with and without a position, one after another: optional numbers are stored
/// as NULL or a value whatever the previous write on the same database connection bound.
async fn positions_may_come_and_go(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    for seq in 1..=24 {
        let sent = format!("2026-03-02T11:{seq:02}:00Z");
        let message = if seq % 2 == 1 {
            json!({"MessageType": "CheckIn", "SequenceNumber": seq, "SentFromDevice": sent})
        } else {
            position_report(seq, &sent, 51.5, -0.12)
        };
        let response = app
            .admin
            .post(&messages_path(DEVICE), &json!([message]))
            .await;
        let status = response.status();
        assert_eq!(
            status,
            StatusCode::OK,
            "message {seq}: {}",
            response.text().await.unwrap_or_default()
        );
    }
    let listed = app.admin.get_json(&messages_path(DEVICE)).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(24));
}

/// Lists come as XML and CSV too, and a batch may be posted as XML (.NET style).
async fn xml_and_csv(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let xml = r#"<ArrayOfMoMessage>
        <MoMessage><MessageType>CheckIn</MessageType><SequenceNumber>5</SequenceNumber>
          <SentFromDevice>2026-03-01T10:00:00Z</SentFromDevice>
          <Position><Latitude>51.5</Latitude><Longitude>-0.12</Longitude></Position>
          <Properties><battery>80</battery></Properties></MoMessage>
        <MoMessage><MessageType>FreeText</MessageType><Message>hello</Message></MoMessage>
      </ArrayOfMoMessage>"#;
    let response = app
        .admin
        .request(reqwest::Method::POST, &messages_path(DEVICE))
        .header("content-type", "application/xml")
        .body(xml)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let listed = app.admin.get_json(&messages_path(DEVICE)).await;
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert_eq!(listed[0]["Position"]["Latitude"], 51.5);
    assert_eq!(listed[0]["SequenceNumber"], 5);
    for (accept, starts) in [("application/xml", "<?xml"), ("text/csv", "MessageId,")] {
        let response = app
            .admin
            .request(reqwest::Method::GET, &messages_path(DEVICE))
            .header("accept", accept)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let text = response.text().await.unwrap();
        assert!(text.starts_with(starts), "{accept}: {text}");
        assert!(text.contains("FreeText"));
    }
}
