//! Deliveries through HTTP: what an SOS's recipients yield (an e-mail recorded as
//! `NotConfigured` while no SMTP server is configured, a text queued for the device),
//! filters, continuation paging, tenant scope.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::alerts::{create_notification, raise, sos_message, sos_notification, sos_setup};
use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};
use crate::mo_messages::{DEVICE, position_report, post_processed, register_device};

backend_tests!(
    an_sos_writes_its_deliveries,
    recipients_without_an_address_are_recorded,
    filters_and_paging,
    bad_filters_are_400,
    deliveries_outside_the_tenant_are_404,
    webhook_targets_show_only_their_origin_to_readers,
);

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|d| d["DeliveryId"].as_str().unwrap().to_string())
        .collect()
}

async fn an_sos_writes_its_deliveries(app: TestApp) {
    let notification = sos_setup(&app, "1000", DEVICE).await;
    let (message_id, alert_id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let listed = app.admin.get_json("/V2/1000/deliveries").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let (email, mt) = (&listed[0], &listed[1]);

    assert_eq!(email["Channel"], "Email");
    assert_eq!(email["Target"], "ops@example.com");
    // No SMTP server is configured: recorded, never dropped.
    assert_eq!(email["Status"], "NotConfigured");
    assert_eq!(email["Subject"], "[High] SOS — Van 3");
    let body = email["Body"].as_str().unwrap();
    assert!(
        body.contains("https://www.openstreetmap.org/?mlat=51.50000&mlon=-0.12000"),
        "{body}"
    );
    assert!(body.contains("Notification: SOS"), "{body}");
    assert!(body.contains("Event: Emergency"), "{body}");
    assert!(
        body.contains(&format!("Device: Van 3 ({DEVICE})")),
        "{body}"
    );
    assert!(body.contains("Geofences: Depot"), "{body}");
    assert!(body.contains("2026-03-01T10:00:00Z"), "{body}");
    for d in [email, mt] {
        assert_eq!(d["TenantCode"], "1000");
        assert_eq!(d["NotificationId"], notification);
        assert_eq!(d["AlertId"], alert_id);
        assert_eq!(d["MessageId"], message_id);
        assert_eq!(d["DeviceId"], DEVICE);
        assert_eq!(d["Attempts"], 0);
        assert!(d["CreatedAt"].is_string());
    }
    assert!(email["MtMessageId"].is_null());

    // The text to the device was queued in the same transaction: the delivery is Sent.
    assert_eq!(mt["Channel"], "Mt");
    assert_eq!(mt["Target"], DEVICE);
    assert_eq!(mt["Status"], "Sent");
    assert!(mt["SentAt"].is_string());
    let mt_id = mt["MtMessageId"].as_str().expect("MtMessageId");
    let queued = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}/mtmessages/{mt_id}"))
        .await;
    assert_eq!(queued["Type"], "Text");
    assert_eq!(queued["Status"], "Queued");
    assert_eq!(queued["NotificationId"], notification);
    assert_eq!(queued["Message"], "SOS: Emergency (Van 3)");
    assert_eq!(queued["Message"], mt["Body"]);

    // One delivery reads as listed.
    for d in listed {
        let id = d["DeliveryId"].as_str().unwrap();
        let one = app
            .admin
            .get_json(&format!("/V2/1000/deliveries/{id}"))
            .await;
        assert_eq!(&one, d);
    }
    // A second SOS joins the alert without notifying again: no e-mail, no text.
    let (_, joined) = raise(&app, "1000", DEVICE, 2, "2026-03-01T10:05:00Z").await;
    assert_eq!(joined, alert_id);
    let by_alert = app
        .admin
        .get_json(&format!("/V2/1000/deliveries?alertId={alert_id}"))
        .await;
    assert_eq!(by_alert.as_array().unwrap().len(), 2);
    let queued = app
        .admin
        .get_json(&format!(
            "/V2/1000/devices/{DEVICE}/mtmessages?status=Queued"
        ))
        .await;
    assert_eq!(queued.as_array().unwrap().len(), 1);
}

async fn recipients_without_an_address_are_recorded(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    // The device has no user: its user's SMS has nowhere to go.
    create_notification(
        &app,
        "1000",
        &json!({"NotificationName": "Lone worker", "EventsExpression": "Emergency",
                "Severity": "1", "Recipients": [{"Type": "DeviceUserSms"}]}),
    )
    .await;
    let processed = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([sos_message(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
    )
    .await;
    // No RaiseAlert: a match, but no alert.
    assert!(processed[0]["Notifications"][0]["AlertId"].is_null());
    let listed = app.admin.get_json("/V2/1000/deliveries").await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let d = &listed[0];
    assert_eq!(d["Channel"], "Sms");
    assert_eq!(d["Status"], "NoAddress");
    assert!(d["Target"].is_null());
    assert!(d["AlertId"].is_null());
    assert_eq!(d["Subject"], "[Warning] Lone worker — Van 3");
    assert_eq!(d["Body"], "the device has no user");
}

/// Walks every page of `query` (pageSize 2); returns the ids in order.
async fn walk(app: &TestApp, query: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..50 {
        let mut request = app.admin.request(
            Method::GET,
            &format!("/V2/1000/deliveries?pageSize=2&{query}"),
        );
        if let Some(t) = &token {
            request = request.header("X-CONTINUATIONTOKEN", t);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{query}");
        token = response
            .headers()
            .get("x-continuationtoken")
            .map(|v| v.to_str().unwrap().to_string());
        let page: Value = response.json().await.unwrap();
        assert!(page.as_array().unwrap().len() <= 2);
        seen.extend(ids(&page));
        if token.is_none() {
            return seen;
        }
    }
    panic!("paging does not end");
}

/// Three devices, one SOS each: six deliveries (an e-mail and a text per alert).
async fn three_sos(app: &TestApp) -> (Vec<String>, Value) {
    create_notification(app, "1000", &sos_notification()).await;
    let mut alerts = Vec::new();
    for i in 0..3 {
        let device = format!("device-{i}");
        register_device(app, "1000", &device).await;
        alerts.push(
            raise(app, "1000", &device, 1, "2026-03-01T10:00:00Z")
                .await
                .1,
        );
    }
    (alerts, app.admin.get_json("/V2/1000/deliveries").await)
}

async fn filters_and_paging(app: TestApp) {
    let (alerts, all) = three_sos(&app).await;
    let all_ids = ids(&all);
    assert_eq!(all_ids.len(), 6);
    let mut sorted = all_ids.clone();
    sorted.sort_by_key(|id| id.parse::<i64>().unwrap());
    assert_eq!(all_ids, sorted, "id order");
    let where_ = |f: &dyn Fn(&Value) -> bool| -> Vec<String> {
        all.as_array()
            .unwrap()
            .iter()
            .filter(|d| f(d))
            .map(|d| d["DeliveryId"].as_str().unwrap().to_string())
            .collect()
    };

    assert_eq!(walk(&app, "").await, all_ids);
    let emails = where_(&|d| d["Channel"] == "Email");
    assert_eq!(emails.len(), 3);
    assert_eq!(walk(&app, "channel=Email").await, emails);
    assert_eq!(walk(&app, "status=NotConfigured").await, emails);
    // The unsent statuses are read through their own index: the other filters still apply.
    assert_eq!(
        walk(&app, "status=NotConfigured&channel=Email").await,
        emails
    );
    assert_eq!(
        walk(&app, "status=NotConfigured&channel=Mt").await,
        Vec::<String>::new()
    );
    assert_eq!(
        walk(&app, "status=NotConfigured&deviceId=device-1").await,
        where_(&|d| d["Channel"] == "Email" && d["DeviceId"] == "device-1")
    );
    for status in ["Failed", "Expired"] {
        assert_eq!(
            walk(&app, &format!("status={status}")).await,
            Vec::<String>::new()
        );
    }
    let texts = where_(&|d| d["Channel"] == "Mt");
    assert_eq!(walk(&app, "channel=Mt&status=Sent").await, texts);
    assert_eq!(
        walk(&app, "channel=Mt&status=Pending").await,
        Vec::<String>::new()
    );
    assert_eq!(walk(&app, "channel=Sms").await, Vec::<String>::new());
    let second = where_(&|d| d["AlertId"] == alerts[1].as_str());
    assert_eq!(second.len(), 2);
    assert_eq!(walk(&app, &format!("alertId={}", alerts[1])).await, second);
    assert_eq!(walk(&app, "deviceId=device-1").await, second);
    assert_eq!(
        walk(&app, &format!("deviceId=device-2&alertId={}", alerts[1])).await,
        Vec::<String>::new()
    );
    assert_eq!(
        walk(
            &app,
            &format!("deviceId=device-1&channel=Email&alertId={}", alerts[1])
        )
        .await,
        where_(&|d| d["AlertId"] == alerts[1].as_str() && d["Channel"] == "Email")
    );
    assert_eq!(walk(&app, "alertId=999999").await, Vec::<String>::new());
    // A full page without more has no token.
    let page = app.admin.get("/V2/1000/deliveries?pageSize=6").await;
    assert!(page.headers().get("x-continuationtoken").is_none());
    let page = app.admin.get("/V2/1000/deliveries?pageSize=5").await;
    assert!(page.headers().get("x-continuationtoken").is_some());
}

async fn bad_filters_are_400(app: TestApp) {
    three_sos(&app).await;
    for (query, field) in [
        ("status=Delivered", "status"),
        ("status=sent", "status"),
        ("status=", "status"),
        ("channel=Fax", "channel"),
        ("channel=email", "channel"),
        ("alertId=abc", "alertId"),
        ("alertId=0", "alertId"),
        ("alertId=-4", "alertId"),
        ("alertId=1.5", "alertId"),
        ("pageSize=0", "pageSize"),
        ("pageSize=1001", "pageSize"),
        ("deviceId=device-1%00", "deviceId"),
    ] {
        let response = app.admin.get(&format!("/V2/1000/deliveries?{query}")).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{query}");
    }
    let first = app.admin.get("/V2/1000/deliveries?pageSize=2").await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .unwrap()
        .to_string();
    for query in ["pageSize=2&channel=Email", "pageSize=2&deviceId=device-1"] {
        let response = app
            .admin
            .request(Method::GET, &format!("/V2/1000/deliveries?{query}"))
            .header("X-CONTINUATIONTOKEN", &token)
            .send()
            .await
            .unwrap();
        assert_problem(response, 400, "invalid_continuation_token").await;
    }
    // A token of another listing (alerts) is refused too.
    let alerts = app.admin.get("/V2/1000/alerts?pageSize=1").await;
    let alert_token = alerts.headers()["x-continuationtoken"]
        .to_str()
        .unwrap()
        .to_string();
    let response = app
        .admin
        .request(Method::GET, "/V2/1000/deliveries?pageSize=1")
        .header("X-CONTINUATIONTOKEN", alert_token)
        .send()
        .await
        .unwrap();
    assert_problem(response, 400, "invalid_continuation_token").await;
}

async fn deliveries_outside_the_tenant_are_404(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    sos_setup(&app, &child, "child-device").await;
    let (_, child_alert) = raise(&app, &child, "child-device", 1, "2026-03-01T10:00:00Z").await;
    let child_deliveries = app.admin.get_json(&format!("/V2/{child}/deliveries")).await;
    let child_ids = ids(&child_deliveries);
    assert_eq!(child_ids.len(), 2);
    assert_eq!(child_deliveries[0]["TenantCode"], child);
    // Not the parent's: neither listed nor readable through the parent's path.
    assert_eq!(app.admin.get_json("/V2/1000/deliveries").await, json!([]));
    // Nor by a status read through the unsent index (the child's e-mail is NotConfigured).
    assert_eq!(
        app.admin
            .get_json("/V2/1000/deliveries?status=NotConfigured")
            .await,
        json!([])
    );
    let child_unsent = app
        .admin
        .get_json(&format!("/V2/{child}/deliveries?status=NotConfigured"))
        .await;
    assert_eq!(child_unsent.as_array().map(Vec::len), Some(1));
    // Nor by the child's alert: read by alert, the deliveries still keep to the tenant.
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/1000/deliveries?alertId={child_alert}"))
            .await,
        json!([])
    );
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/{child}/deliveries?alertId={child_alert}"))
            .await,
        child_deliveries
    );
    for id in &child_ids {
        assert_not_found(app.admin.get(&format!("/V2/1000/deliveries/{id}")).await).await;
    }
    // A sibling's administrator reaches neither.
    let sibling = app.create_tenant("1000", "Sibling").await;
    let (_, sibling_admin) = app
        .create_user(&sibling, "admin@sibling.example", "Administrator")
        .await;
    assert_not_found(sibling_admin.get(&format!("/V2/{child}/deliveries")).await).await;
    for id in &child_ids {
        for tenant in [child.as_str(), sibling.as_str()] {
            let response = sibling_admin
                .get(&format!("/V2/{tenant}/deliveries/{id}"))
                .await;
            assert_not_found(response).await;
        }
    }
    // Reading needs only Read.
    let (_, reader) = app
        .create_user(&child, "reader@child.example", "ReadOnly")
        .await;
    assert_eq!(
        reader.get_json(&format!("/V2/{child}/deliveries")).await,
        child_deliveries
    );
    let one = reader
        .get_json(&format!("/V2/{child}/deliveries/{}", child_ids[0]))
        .await;
    assert_eq!(one, child_deliveries[0]);
    for id in ["abc", "999999", "-1"] {
        assert_not_found(app.admin.get(&format!("/V2/1000/deliveries/{id}")).await).await;
    }
}

/// A webhook URL often carries a token in its path or query: without ManageConfiguration
/// a delivery's `Target` is only the URL's origin, in every format and in one delivery
/// read alone; other channels' targets are shown whole.
async fn webhook_targets_show_only_their_origin_to_readers(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let hooks = json!({"Urls": [
        {"Url": "https://hooks.example.com:8443/in/s3cret-path?token=s3cret", "MoMessage": true},
        {"Url": "http://plain.example.com/x?token=s3cret", "MoMessage": true},
    ]});
    assert_eq!(
        app.admin.put("/V2/1000/webhooks", &hooks).await.status(),
        StatusCode::OK
    );
    raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([position_report(2, "2026-03-01T10:01:00Z", 51.5, -0.12)]),
    )
    .await;
    let targets = |list: &Value, channel: &str| -> Vec<String> {
        let mut found: Vec<String> = list
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["Channel"] == channel)
            .map(|d| d["Target"].as_str().unwrap().to_string())
            .collect();
        found.sort();
        found
    };
    let all = app.admin.get_json("/V2/1000/deliveries").await;
    let full = targets(&all, "Webhook");
    assert_eq!(full.len(), 4, "{all}");
    assert!(full.iter().all(|t| t.contains("s3cret")), "{full:?}");
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    assert_eq!(
        targets(&manager.get_json("/V2/1000/deliveries").await, "Webhook"),
        full
    );

    let origins = [
        "http://plain.example.com:80",
        "http://plain.example.com:80",
        "https://hooks.example.com:8443",
        "https://hooks.example.com:8443",
    ];
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    for client in [&reader, &user] {
        let listed = client.get_json("/V2/1000/deliveries").await;
        assert_eq!(targets(&listed, "Webhook"), origins);
        assert_eq!(targets(&listed, "Email"), targets(&all, "Email"));
        assert_eq!(targets(&listed, "Mt"), targets(&all, "Mt"));
        assert!(targets(&listed, "Email").contains(&"ops@example.com".to_string()));
        let filtered = client.get_json("/V2/1000/deliveries?channel=Webhook").await;
        assert_eq!(targets(&filtered, "Webhook"), origins);
        for d in listed.as_array().unwrap() {
            let id = d["DeliveryId"].as_str().unwrap();
            let one = client.get_json(&format!("/V2/1000/deliveries/{id}")).await;
            assert_eq!(one["Target"], d["Target"]);
        }
        for accept in ["application/xml", "text/csv", "text/plain"] {
            let text = client
                .request(Method::GET, "/V2/1000/deliveries")
                .header("accept", accept)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(text.contains("hooks.example.com:8443"), "{accept}: {text}");
            assert!(!text.contains("s3cret"), "{accept}: {text}");
        }
    }
}
