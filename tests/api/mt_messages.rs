//! MT messages through HTTP: queued by POST and by a notification's device commands,
//! read, listed (by status, paged), and moved by a device gateway with JSON Patch of
//! `Status` along Queued → Sent → Delivered (final states stay; other fields read-only).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::alerts::{create_notification, sos_message};
use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};
use crate::mo_messages::{DEVICE, post_processed, register_device};

backend_tests!(
    queue_read_and_list,
    a_gateway_reports_progress,
    status_moves_forward_only,
    bad_messages_and_patches_change_nothing,
    listing_pages_and_filters,
    devices_out_of_scope_are_404,
    read_only_users_cannot_queue_or_report,
    notification_commands_queue_messages,
    racing_reports_never_overwrite_a_final_status,
);

fn messages_path(tenant: &str, device: &str) -> String {
    format!("/V2/{tenant}/devices/{device}/mtmessages")
}

/// POSTs a message as the admin; returns its path (the `Location`).
async fn queue(app: &TestApp, device: &str, body: &Value) -> String {
    let response = app.admin.post(&messages_path("1000", device), body).await;
    assert_eq!(response.status(), StatusCode::OK, "queue {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    assert!(
        response.bytes().await.unwrap().is_empty(),
        "200 with no body"
    );
    location
}

/// GET a message: (its ETag header, its body).
async fn read(app: &TestApp, path: &str) -> (String, Value) {
    let response = app.admin.get(path).await;
    assert_eq!(response.status(), StatusCode::OK, "GET {path}");
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    (etag, response.json().await.unwrap())
}

fn set_status(status: &str) -> Value {
    json!([{"op": "replace", "path": "/Status", "value": status}])
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|m| m["MessageId"].as_str().unwrap().to_string())
        .collect()
}

fn id_of(path: &str) -> String {
    path.rsplit('/').next().unwrap().to_string()
}

async fn queue_read_and_list(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let text = queue(
        &app,
        DEVICE,
        &json!({"Type": "Text", "Message": "Return to depot"}),
    )
    .await;
    assert!(text.starts_with(&format!("{}/", messages_path("1000", DEVICE))));
    let (etag, message) = read(&app, &text).await;
    assert_eq!(message["MessageId"], id_of(&text));
    assert_eq!(message["DeviceId"], DEVICE);
    assert_eq!(message["Type"], "Text");
    assert_eq!(message["Message"], "Return to depot");
    assert_eq!(message["Parameters"], json!({}));
    assert_eq!(message["Status"], "Queued");
    assert!(message["CreatedAt"].is_string());
    assert_eq!(message["Timestamp"], message["CreatedAt"]);
    assert!(message["NotificationId"].is_null());
    assert_eq!(message["ETag"], etag.trim_matches('"'));
    let not_modified = app
        .admin
        .request(Method::GET, &text)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(not_modified.status(), StatusCode::NOT_MODIFIED);

    // Read-only fields sent are ignored; a command carries its parameters.
    let command = queue(
        &app,
        DEVICE,
        &json!({"Type": "CheckInRequest", "Parameters": {"Interval": "30", "Nested": {"a": [1]}},
                "Status": "Delivered", "MessageId": "99", "DeviceId": "someone-else",
                "NotificationId": "5", "CreatedAt": "2020-01-01T00:00:00Z"}),
    )
    .await;
    let (_, command_message) = read(&app, &command).await;
    assert_eq!(command_message["Status"], "Queued");
    assert_eq!(command_message["DeviceId"], DEVICE);
    assert_ne!(command_message["MessageId"], "99");
    assert!(command_message["NotificationId"].is_null());
    assert_ne!(command_message["CreatedAt"], "2020-01-01T00:00:00Z");
    assert!(command_message["Message"].is_null());
    assert_eq!(
        command_message["Parameters"],
        json!({"Interval": "30", "Nested": {"a": [1]}})
    );
    // XML in.
    let response = app
        .admin
        .request(Method::POST, &messages_path("1000", DEVICE))
        .header("content-type", "application/xml")
        .body("<MtMessage><Type>LocationRequest</Type></MtMessage>")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    let listed = app.admin.get_json(&messages_path("1000", DEVICE)).await;
    assert_eq!(listed.as_array().unwrap().len(), 3);
    assert_eq!(listed[0], message);
    assert_eq!(listed[1], command_message);
    assert_eq!(listed[2]["Type"], "LocationRequest");
    let queued = app
        .admin
        .get_json(&format!("{}?status=Queued", messages_path("1000", DEVICE)))
        .await;
    assert_eq!(queued, listed);
}

async fn a_gateway_reports_progress(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let (_, gateway) = app.create_user("1000", "gateway@example.com", "User").await;
    let first = queue(&app, DEVICE, &json!({"Type": "Text", "Message": "one"})).await;
    let second = queue(&app, DEVICE, &json!({"Type": "LocationRequest"})).await;
    let list = |status: &str| format!("{}?status={status}", messages_path("1000", DEVICE));

    // The gateway picks up what is queued ...
    let queued = gateway.get_json(&list("Queued")).await;
    assert_eq!(ids(&queued), [id_of(&first), id_of(&second)]);
    // ... reports the first sent (with the version it read) ...
    let etag = queued[0]["ETag"].as_str().unwrap();
    let response = gateway
        .request(Method::PATCH, &first)
        .header("content-type", "application/json-patch+json")
        .header("if-match", format!("\"{etag}\""))
        .body(set_status("Sent").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let (sent_etag, sent) = read(&app, &first).await;
    assert_eq!(sent["Status"], "Sent");
    assert_ne!(sent_etag.trim_matches('"'), etag);
    assert_ne!(sent["Timestamp"], queued[0]["Timestamp"]);
    assert_eq!(sent["CreatedAt"], queued[0]["CreatedAt"]);
    assert_eq!(
        ids(&gateway.get_json(&list("Queued")).await),
        [id_of(&second)]
    );
    assert_eq!(ids(&gateway.get_json(&list("Sent")).await), [id_of(&first)]);
    // ... then delivered (without If-Match).
    let response = gateway.patch(&first, &set_status("Delivered")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        ids(&gateway.get_json(&list("Delivered")).await),
        [id_of(&first)]
    );
    // The second one failed.
    let response = gateway.patch(&second, &set_status("Failed")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        ids(&gateway.get_json(&list("Failed")).await),
        [id_of(&second)]
    );
    assert_eq!(gateway.get_json(&list("Queued")).await, json!([]));

    // Reporting the current status again (a gateway's retry) changes nothing.
    let (etag, delivered) = read(&app, &first).await;
    let response = gateway.patch(&first, &set_status("Delivered")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(read(&app, &first).await, (etag.clone(), delivered.clone()));
    // A stale If-Match is 412 and changes nothing.
    let response = gateway
        .request(Method::PATCH, &first)
        .header("content-type", "application/json-patch+json")
        .header("if-match", "\"stale\"")
        .body(set_status("Delivered").to_string())
        .send()
        .await
        .unwrap();
    assert_problem(response, 412, "precondition_failed").await;
    // A `test` of a read-only field is fine; a failing test applies nothing.
    let tested = json!([{"op": "test", "path": "/Type", "value": "Text"},
                        {"op": "replace", "path": "/Status", "value": "Delivered"}]);
    assert_eq!(
        gateway.patch(&first, &tested).await.status(),
        StatusCode::OK
    );
    let failing = json!([{"op": "test", "path": "/Type", "value": "Call"},
                         {"op": "replace", "path": "/Status", "value": "Failed"}]);
    assert_problem(gateway.patch(&first, &failing).await, 400, "patch_failed").await;
    assert_eq!(read(&app, &first).await, (etag, delivered));
}

async fn status_moves_forward_only(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    // (the way there, a step that is refused from there)
    let cases: [(&[&str], &str); 7] = [
        (&["Sent"], "Queued"),
        (&["Delivered"], "Queued"),
        (&["Delivered"], "Sent"),
        (&["Delivered"], "Failed"),
        (&["Sent", "Delivered"], "Failed"),
        (&["Failed"], "Queued"),
        (&["Sent", "Failed"], "Delivered"),
    ];
    for (way, refused) in cases {
        let path = queue(&app, DEVICE, &json!({"Type": "StartMonitoring"})).await;
        for step in way {
            let response = app.admin.patch(&path, &set_status(step)).await;
            assert_eq!(response.status(), StatusCode::OK, "{way:?}");
        }
        let (etag, before) = read(&app, &path).await;
        let response = app.admin.patch(&path, &set_status(refused)).await;
        let problem = assert_problem(response, 409, "conflict").await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains(way[way.len() - 1]),
            "{problem}"
        );
        assert_eq!(
            read(&app, &path).await,
            (etag, before),
            "{way:?} -> {refused}"
        );
    }
    // Queued straight to Delivered (a gateway that only learns of delivery) is fine.
    let path = queue(&app, DEVICE, &json!({"Type": "Call"})).await;
    let response = app.admin.patch(&path, &set_status("Delivered")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(read(&app, &path).await.1["Status"], "Delivered");
}

async fn bad_messages_and_patches_change_nothing(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let path = messages_path("1000", DEVICE);
    for (body, fields) in [
        (json!({"Type": "Shout"}), vec!["Type"]),
        (
            json!({"Type": "text", "Message": "case matters"}),
            vec!["Type"],
        ),
        (json!({"Message": "no type"}), vec!["Type"]),
        (json!({"Type": ""}), vec!["Type"]),
        (json!({"Type": "Text"}), vec!["Message"]),
        (json!({"Type": "Text", "Message": "  "}), vec!["Message"]),
        (
            json!({"Type": "Text", "Message": "x".repeat(4001)}),
            vec!["Message"],
        ),
        (
            json!({"Type": "Call", "Parameters": [1, 2]}),
            vec!["Parameters"],
        ),
        (
            json!({"Type": "Call", "Parameters": "x"}),
            vec!["Parameters"],
        ),
        (json!({"Type": 7}), vec!["Type"]),
        (json!([{"Type": "Call"}]), vec!["body"]),
    ] {
        let response = app.admin.post(&path, &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}");
    }
    let response = app
        .admin
        .request(Method::POST, &path)
        .header("content-type", "application/json")
        .body("{\"Type\": ")
        .send()
        .await
        .unwrap();
    assert_problem(response, 400, "malformed_json").await;
    let response = app
        .admin
        .request(Method::POST, &path)
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_problem(response, 400, "missing_body").await;
    assert_eq!(app.admin.get_json(&path).await, json!([]));
    // 4,000 characters is fine.
    queue(
        &app,
        DEVICE,
        &json!({"Type": "Text", "Message": "x".repeat(4000)}),
    )
    .await;

    let message = queue(&app, DEVICE, &json!({"Type": "Text", "Message": "hello"})).await;
    let (etag, before) = read(&app, &message).await;
    for (patch, field) in [
        (
            json!([{"op": "replace", "path": "/Message", "value": "changed"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/Type", "value": "Call"}]),
            "[0].path",
        ),
        (
            json!([{"op": "add", "path": "/Parameters/Interval", "value": "5"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/DeviceId", "value": "x"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/MessageId", "value": "1"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/NotificationId", "value": "1"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/CreatedAt", "value": "2020-01-01T00:00:00Z"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/Timestamp", "value": "2020-01-01T00:00:00Z"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/ETag", "value": "x"}]),
            "[0].path",
        ),
        (
            json!([{"op": "replace", "path": "/Status", "value": "Sent"},
                   {"op": "replace", "path": "/message", "value": "sneaky"}]),
            "[1].path",
        ),
        (
            json!([{"op": "move", "from": "/Message", "path": "/Status"}]),
            "[0].from",
        ),
        (
            json!([{"op": "replace", "path": "/Status", "value": "Lost"}]),
            "Status",
        ),
        (
            json!([{"op": "replace", "path": "/Status", "value": "sent"}]),
            "Status",
        ),
        (
            json!([{"op": "replace", "path": "/Status", "value": null}]),
            "Status",
        ),
        (json!([{"op": "remove", "path": "/Status"}]), "Status"),
        (
            json!([{"op": "replace", "path": "/Status", "value": 3}]),
            "Status",
        ),
        (
            json!({"op": "replace", "path": "/Status", "value": "Sent"}),
            "body",
        ),
    ] {
        let response = app.admin.patch(&message, &patch).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{patch}");
    }
    let response = app
        .admin
        .patch(
            &message,
            &json!([{"op": "replace", "path": "/Nope/x", "value": 1}]),
        )
        .await;
    assert_problem(response, 400, "patch_failed").await;
    assert_eq!(read(&app, &message).await, (etag, before));
    for bad in [
        "status=Bogus",
        "status=queued",
        "status=",
        "pageSize=0",
        "pageSize=1001",
    ] {
        let response = app.admin.get(&format!("{path}?{bad}")).await;
        assert_problem(response, 400, "validation_failed").await;
    }
}

async fn listing_pages_and_filters(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let mut queued = Vec::new();
    for i in 0..5 {
        let message = queue(
            &app,
            DEVICE,
            &json!({"Type": "Text", "Message": format!("message {i}")}),
        )
        .await;
        queued.push(id_of(&message));
    }
    // Another device's messages are not this one's.
    register_device(&app, "1000", "other-device").await;
    queue(&app, "other-device", &json!({"Type": "Call"})).await;
    for i in [1, 3] {
        let path = format!("{}/{}", messages_path("1000", DEVICE), queued[i]);
        assert_eq!(
            app.admin.patch(&path, &set_status("Sent")).await.status(),
            StatusCode::OK
        );
    }
    let walk = |query: &'static str| {
        let app = &app;
        async move {
            let path = format!("{}?pageSize=2&{query}", messages_path("1000", DEVICE));
            ids(&Value::Array(app.admin.get_all_pages(&path).await))
        }
    };
    assert_eq!(walk("").await, queued);
    assert_eq!(
        walk("status=Queued").await,
        [queued[0].clone(), queued[2].clone(), queued[4].clone()]
    );
    assert_eq!(
        walk("status=Sent").await,
        [queued[1].clone(), queued[3].clone()]
    );
    assert_eq!(walk("status=Delivered").await, Vec::<String>::new());
    // A token belongs to its device and status.
    let first = app
        .admin
        .get(&format!("{}?pageSize=1", messages_path("1000", DEVICE)))
        .await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .unwrap()
        .to_string();
    for path in [
        format!("{}?pageSize=1&status=Queued", messages_path("1000", DEVICE)),
        format!("{}?pageSize=1", messages_path("1000", "other-device")),
    ] {
        let response = app
            .admin
            .request(Method::GET, &path)
            .header("X-CONTINUATIONTOKEN", &token)
            .send()
            .await
            .unwrap();
        assert_problem(response, 400, "invalid_continuation_token").await;
    }
}

async fn devices_out_of_scope_are_404(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let child = app.create_tenant("1000", "Child").await;
    register_device(&app, &child, "child-device").await;
    let child_message = {
        let response = app
            .admin
            .post(
                &messages_path(&child, "child-device"),
                &json!({"Type": "LocationRequest"}),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        response.headers()["location"].to_str().unwrap().to_string()
    };
    let child_id = id_of(&child_message);
    let (etag, before) = read(&app, &child_message).await;
    let body = json!({"Type": "Call"});

    // Unknown devices, and the child's device through the parent's path.
    for device in ["nope", "child-device"] {
        let path = messages_path("1000", device);
        assert_not_found(app.admin.get(&path).await).await;
        assert_not_found(app.admin.post(&path, &body).await).await;
        let one = format!("{path}/{child_id}");
        assert_not_found(app.admin.get(&one).await).await;
        assert_not_found(app.admin.patch(&one, &set_status("Sent")).await).await;
    }
    // The child's message through another device of its tenant's path.
    register_device(&app, &child, "child-device-2").await;
    let wrong_device = format!("{}/{child_id}", messages_path(&child, "child-device-2"));
    assert_not_found(app.admin.get(&wrong_device).await).await;
    assert_not_found(app.admin.patch(&wrong_device, &set_status("Sent")).await).await;
    // A child administrator cannot reach the parent's device.
    let (_, child_admin) = app
        .create_user(&child, "admin@child.example", "Administrator")
        .await;
    for path in [messages_path("1000", DEVICE), messages_path(&child, DEVICE)] {
        assert_not_found(child_admin.get(&path).await).await;
        assert_not_found(child_admin.post(&path, &body).await).await;
    }
    for id in ["abc", "999999", "-1"] {
        let one = format!("{}/{id}", messages_path(&child, "child-device"));
        assert_not_found(app.admin.get(&one).await).await;
        assert_not_found(app.admin.patch(&one, &set_status("Sent")).await).await;
    }
    assert_eq!(read(&app, &child_message).await, (etag, before));
    assert_eq!(
        app.admin.get_json(&messages_path("1000", DEVICE)).await,
        json!([])
    );
    assert_eq!(
        ids(&app
            .admin
            .get_json(&messages_path(&child, "child-device"))
            .await),
        [child_id]
    );
}

async fn read_only_users_cannot_queue_or_report(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "worker@example.com", "User").await;
    let path = messages_path("1000", DEVICE);
    let body = json!({"Type": "Text", "Message": "hi"});
    assert_problem(reader.post(&path, &body).await, 403, "forbidden").await;
    assert_eq!(app.admin.get_json(&path).await, json!([]));
    let response = user.post(&path, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let message = response.headers()["location"].to_str().unwrap().to_string();
    let (etag, before) = read(&app, &message).await;
    assert_eq!(reader.get_json(&path).await.as_array().unwrap().len(), 1);
    assert_eq!(reader.get(&message).await.status(), StatusCode::OK);
    assert_problem(
        reader.patch(&message, &set_status("Sent")).await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(read(&app, &message).await, (etag, before));
    assert_eq!(
        user.patch(&message, &set_status("Sent")).await.status(),
        StatusCode::OK
    );
}

async fn notification_commands_queue_messages(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let notification = create_notification(
        &app,
        "1000",
        &json!({"NotificationName": "SOS commands", "NotificationText": "Stay where you are",
                "EventsExpression": "Emergency", "Recipients": [
                    {"Type": "SendLocationRequest"},
                    {"Type": "SendCheckInRequest", "Interval": "30"},
                    {"Type": "ChangeReportingFrequency", "ReportingFrequency": "5"},
                    {"Type": "StartMonitoring"}]}),
    )
    .await;
    post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([sos_message(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
    )
    .await;
    let listed = app
        .admin
        .get_json(&format!("{}?status=Queued", messages_path("1000", DEVICE)))
        .await;
    let listed = listed.as_array().unwrap();
    let kinds: Vec<&str> = listed.iter().map(|m| m["Type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "LocationRequest",
            "CheckInRequest",
            "ReportingFrequency",
            "StartMonitoring"
        ]
    );
    for m in listed {
        assert_eq!(m["NotificationId"], notification);
        assert_eq!(m["DeviceId"], DEVICE);
        assert_eq!(m["Message"], "Stay where you are");
    }
    assert_eq!(listed[1]["Parameters"], json!({"Interval": 30.0}));
    assert_eq!(listed[2]["Parameters"], json!({"ReportingFrequency": 5.0}));
    // Each has its Mt delivery, already Sent (queued in the same transaction).
    let deliveries = app.admin.get_json("/V2/1000/deliveries?channel=Mt").await;
    let deliveries = deliveries.as_array().unwrap();
    assert_eq!(deliveries.len(), 4);
    for (d, m) in deliveries.iter().zip(listed) {
        assert_eq!(d["MtMessageId"], m["MessageId"]);
        assert_eq!(d["Status"], "Sent");
        assert_eq!(d["Subject"], m["Type"]);
        assert_eq!(d["Target"], DEVICE);
    }
    // The gateway moves them like any other.
    let first = format!(
        "{}/{}",
        messages_path("1000", DEVICE),
        listed[0]["MessageId"].as_str().unwrap()
    );
    assert_eq!(
        app.admin.patch(&first, &set_status("Sent")).await.status(),
        StatusCode::OK
    );
}

/// Gateways racing to report a Sent message both Delivered and Failed: one final status
/// is stored, and only requests that asked for it succeed (the others see the change:
/// 412 when they read before it, 409 when after and they asked for the other).
async fn racing_reports_never_overwrite_a_final_status(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let path = queue(&app, DEVICE, &json!({"Type": "Call"})).await;
    assert_eq!(
        app.admin.patch(&path, &set_status("Sent")).await.status(),
        StatusCode::OK
    );
    let reports = (0..8).map(|i| {
        let status = if i % 2 == 0 { "Delivered" } else { "Failed" };
        let request = app
            .admin
            .request(Method::PATCH, &path)
            .header("content-type", "application/json-patch+json")
            .body(set_status(status).to_string());
        async move { (status, request.send().await.expect("PATCH").status()) }
    });
    let outcomes = futures::future::join_all(reports).await;
    let (_, stored) = read(&app, &path).await;
    let final_status = stored["Status"].as_str().unwrap();
    assert!(["Delivered", "Failed"].contains(&final_status));
    for (asked, status) in &outcomes {
        match *status {
            StatusCode::OK => assert_eq!(*asked, final_status, "{outcomes:?}"),
            // Read after the change: the step from a final status is refused.
            StatusCode::CONFLICT => assert_ne!(*asked, final_status, "{outcomes:?}"),
            // Read before the change: its version is gone, whatever it asked for.
            StatusCode::PRECONDITION_FAILED => {}
            other => panic!("unexpected {other}: {outcomes:?}"),
        }
    }
    assert!(outcomes.iter().any(|(_, s)| *s == StatusCode::OK));
}
