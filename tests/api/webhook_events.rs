//! Webhook events are written to the outbox in the transaction of the change: one
//! `Webhook` delivery per subscribed URL, with the Standard Webhooks envelope as its body.
//! (Sending them is the delivery worker's part.)

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_problem};
use crate::mo_messages::register_device;

backend_tests!(
    device_user_and_mt_changes_become_events,
    tenant_events_reach_the_parent,
    messages_and_matches_become_events,
    only_subscribed_urls_get_events_and_failed_writes_none,
);

fn all(url: &str) -> Value {
    json!({"Url": url, "Device": true, "EventNotification": true, "MoMessage": true,
           "MtMessage": true, "Tenant": true, "User": true})
}

async fn subscribe(app: &TestApp, tenant: &str, urls: Value) {
    let response = app
        .admin
        .put(
            &format!("/V2/{tenant}/webhooks"),
            &json!({"Urls": urls, "Authentication": "None"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// The webhook deliveries of a tenant, oldest first, with their envelopes parsed.
async fn events(app: &TestApp, tenant: &str) -> Vec<(Value, Value)> {
    let deliveries = app
        .admin
        .get_json(&format!("/V2/{tenant}/deliveries?channel=Webhook"))
        .await;
    deliveries
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let envelope: Value = serde_json::from_str(d["Body"].as_str().unwrap()).unwrap();
            (d.clone(), envelope)
        })
        .collect()
}

fn kinds(events: &[(Value, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(_, e)| {
            format!(
                "{}.{}",
                e["Category"].as_str().unwrap(),
                e["Type"].as_str().unwrap()
            )
        })
        .collect()
}

async fn device_user_and_mt_changes_become_events(app: TestApp) {
    subscribe(&app, "1000", json!([all("https://hooks.example.com/a")])).await;
    register_device(&app, "1000", "hooked-1").await;
    let updated = app
        .admin
        .put(
            "/V2/1000/devices/hooked-1",
            &json!({"DeviceType": "InReach", "FriendlyName": "Renamed"}),
        )
        .await;
    assert_eq!(updated.status(), StatusCode::OK);
    let (user, _) = app.create_user("1000", "hooked@example.com", "User").await;
    let patched = app
        .admin
        .patch(
            &format!("/V2/1000/users/{user}"),
            &json!([{"op": "replace", "path": "/FirstName", "value": "Ann"}]),
        )
        .await;
    assert_eq!(patched.status(), StatusCode::OK);
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/users/{user}"))
            .await
            .status(),
        StatusCode::OK
    );
    let queued = app
        .admin
        .post(
            "/V2/1000/devices/hooked-1/mtmessages",
            &json!({"Type": "Text", "Message": "Call base"}),
        )
        .await;
    assert_eq!(queued.status(), StatusCode::OK);
    assert_eq!(
        app.admin.delete("/V2/1000/devices/hooked-1").await.status(),
        StatusCode::OK
    );
    let events = events(&app, "1000").await;
    assert_eq!(
        kinds(&events),
        [
            "Device.Created",
            "Device.Updated",
            "User.Created",
            "User.Updated",
            "User.Deleted",
            "MtMessage.Created",
            "Device.Deleted",
        ]
    );
    for (delivery, envelope) in &events {
        assert_eq!(delivery["Channel"], "Webhook");
        assert_eq!(delivery["Target"], "https://hooks.example.com/a");
        assert_eq!(delivery["Status"], "Pending");
        assert_eq!(delivery["EventId"], envelope["Id"]);
        assert_eq!(envelope["TenantCode"], "1000");
        assert!(envelope["Timestamp"].is_string());
    }
    assert_eq!(events[1].1["Data"]["FriendlyName"], "Renamed");
    assert_eq!(events[1].1["Data"]["DeviceId"], "hooked-1");
    let user_data = &events[3].1["Data"];
    assert_eq!(user_data["FirstName"], "Ann");
    assert!(user_data.get("Password").is_none() && user_data.get("Photo").is_none());
    assert_eq!(events[5].1["Data"]["Message"], "Call base");
}

async fn tenant_events_reach_the_parent(app: TestApp) {
    subscribe(&app, "1000", json!([all("https://hooks.example.com/root")])).await;
    let child = app.create_tenant("1000", "Branch").await;
    subscribe(
        &app,
        &child,
        json!([all("https://hooks.example.com/child")]),
    )
    .await;
    let renamed = app
        .admin
        .put(
            &format!("/V2/{child}"),
            &json!({"Description": "Branch office"}),
        )
        .await;
    assert_eq!(renamed.status(), StatusCode::OK);
    let child_events = events(&app, &child).await;
    assert_eq!(kinds(&child_events), ["Tenant.Updated"]);
    assert_eq!(child_events[0].1["Data"]["Description"], "Branch office");
    assert_eq!(
        app.admin.delete(&format!("/V2/{child}")).await.status(),
        StatusCode::OK
    );
    let root_events = events(&app, "1000").await;
    assert_eq!(kinds(&root_events), ["Tenant.Created", "Tenant.Deleted"]);
    for (_, envelope) in &root_events {
        assert_eq!(envelope["TenantCode"], child);
        assert_eq!(envelope["Data"]["TenantCode"], child);
    }
}

async fn messages_and_matches_become_events(app: TestApp) {
    register_device(&app, "1000", "hooked-2").await;
    let response = app
        .admin
        .post(
            "/V2/1000/eventnotifications",
            &json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "RaiseAlert": true,
                    "Severity": "2", "Recipients": [{"Type": "SendTextMessage"}]}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // Two URLs: every event goes to both, with one Id.
    subscribe(
        &app,
        "1000",
        json!([
            all("https://hooks.example.com/a"),
            all("https://hooks.example.com/b")
        ]),
    )
    .await;
    let posted = app
        .admin
        .post(
            "/V2/1000/devices/hooked-2/momessages?process=true",
            &json!([{"MessageType": "CheckIn", "File": "aGVsbG8="},
                    {"MessageType": "FreeText", "EmergencyState": "Active"}]),
        )
        .await;
    assert_eq!(posted.status(), StatusCode::OK);
    let processed: Value = posted.json().await.unwrap();
    let events = events(&app, "1000").await;
    assert_eq!(
        kinds(&events),
        [
            "MoMessage.Created",
            "MoMessage.Created",
            "MoMessage.Created",
            "MoMessage.Created",
            "EventNotification.Fired",
            "EventNotification.Fired",
            "MtMessage.Created",
            "MtMessage.Created",
        ]
    );
    // Each event twice (one per URL) under one Id.
    for pair in events.chunks(2) {
        assert_eq!(pair[0].1["Id"], pair[1].1["Id"]);
        assert_ne!(pair[0].0["Target"], pair[1].0["Target"]);
    }
    assert_ne!(events[0].1["Id"], events[2].1["Id"]);
    let message = &events[0].1["Data"];
    assert_eq!(message["MessageId"], processed[0]["MessageId"]);
    assert!(message.get("File").is_none(), "no File in events");
    let fired = &events[4].1["Data"];
    assert_eq!(fired["NotificationName"], "SOS");
    assert_eq!(fired["MessageId"], processed[1]["MessageId"]);
    assert_eq!(
        fired["AlertId"],
        processed[1]["Notifications"][0]["AlertId"]
    );
    assert_eq!(fired["Alert"]["Status"], "Open");

    // A stored message's event is rendered from the message on every read: its Data is
    // the message as the API shows it (without File), the same bytes each time (the
    // signature covers them). Deleted before it was sent, the event still goes out,
    // with Data null.
    let path = format!(
        "/V2/1000/devices/hooked-2/momessages/{}",
        processed[0]["MessageId"].as_str().unwrap()
    );
    let mut stored = app.admin.get_json(&path).await;
    for private in ["File", "Attachment"] {
        stored.as_object_mut().unwrap().remove(private);
    }
    assert_eq!(message, &stored);
    let again = self::events(&app, "1000").await;
    for (first, second) in events.iter().zip(&again) {
        assert_eq!(first.0["Body"], second.0["Body"]);
    }
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    let after = self::events(&app, "1000").await;
    assert_eq!(after[0].1["Id"], events[0].1["Id"]);
    assert_eq!(after[0].1["Category"], "MoMessage");
    assert_eq!(after[0].1["Data"], Value::Null);
    assert_eq!(after[2].1["Data"], events[2].1["Data"]);
}

async fn only_subscribed_urls_get_events_and_failed_writes_none(app: TestApp) {
    // No settings: nothing.
    register_device(&app, "1000", "quiet").await;
    assert!(events(&app, "1000").await.is_empty());
    subscribe(
        &app,
        "1000",
        json!([{"Url": "https://hooks.example.com/users-only", "User": true}]),
    )
    .await;
    register_device(&app, "1000", "still-quiet").await;
    assert!(events(&app, "1000").await.is_empty());
    // A refused write leaves no event behind.
    let refused = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": "not-an-email", "Password": "x"}),
        )
        .await;
    assert_problem(refused, 400, "validation_failed").await;
    let duplicate = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": crate::common::ADMIN_EMAIL, "Password": "a-long-password"}),
        )
        .await;
    assert_problem(duplicate, 409, "conflict").await;
    assert!(events(&app, "1000").await.is_empty());
    app.create_user("1000", "counted@example.com", "User").await;
    assert_eq!(kinds(&events(&app, "1000").await), ["User.Created"]);
}
