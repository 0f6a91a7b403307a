use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    tenant_notifications_round_trip,
    group_notifications_are_separate,
    expressions_are_parsed_with_positions,
    notification_rules_store_nothing,
    devices_and_recipients_must_exist,
    unknown_groups_and_foreign_tenants_are_404,
    notifications_need_manage_configuration,
    recipients_in_use_by_notifications_cannot_be_deleted,
);

pub(crate) async fn location_id(response: reqwest::Response) -> String {
    assert_eq!(response.status(), StatusCode::OK);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

pub(crate) fn sos() -> Value {
    json!({
        "NotificationName": "SOS", "NotificationText": "Worker needs help",
        "EventsExpression": "Emergency OR (MissedCheckIn AND NOT Day IN (Sat, Sun))",
        "TimeZoneId": "Europe/London", "RaiseAlert": true, "Severity": "2",
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}, {"Type": "DeviceUserManagerSms"}]
    })
}

pub(crate) async fn count(app: &TestApp, path: &str) -> usize {
    app.admin.get_json(path).await.as_array().unwrap().len()
}

pub(crate) async fn create_group(app: &TestApp, tenant: &str) -> String {
    location_id(
        app.admin
            .post(
                &format!("/V2/{tenant}/groups"),
                &json!({"Name": "Lone workers"}),
            )
            .await,
    )
    .await
}

async fn tenant_notifications_round_trip(app: TestApp) {
    let id = location_id(app.admin.post("/V2/1000/eventnotifications", &sos()).await).await;
    let path = format!("/V2/1000/eventnotifications/{id}");
    let stored = app.admin.get_json(&path).await;
    assert_eq!(stored["NotificationId"], id);
    assert_eq!(stored["EventsExpression"], sos()["EventsExpression"]);
    assert_eq!(stored["Severity"], "2");
    assert_eq!(stored["RaiseAlert"], true);
    assert_eq!(stored["NotificationDisabled"], false);
    assert_eq!(stored["Recipients"].as_array().unwrap().len(), 2);
    let mut changed = sos();
    changed["NotificationDisabled"] = json!(true);
    changed["EventsExpression"] = json!("speed > 130");
    assert_eq!(
        app.admin.put(&path, &changed).await.status(),
        StatusCode::OK
    );
    let after = app.admin.get_json(&path).await;
    assert_eq!(after["NotificationDisabled"], true);
    assert_eq!(after["EventsExpression"], "speed > 130");
    let stale = app
        .admin
        .request(Method::PUT, &path)
        .header("if-match", "\"stale\"")
        .json(&sos())
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(count(&app, "/V2/1000/eventnotifications").await, 1);
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
}

async fn group_notifications_are_separate(app: TestApp) {
    let group = create_group(&app, "1000").await;
    let base = format!("/V2/1000/groups/{group}/eventnotifications");
    let id = location_id(app.admin.post(&base, &sos()).await).await;
    assert_eq!(count(&app, &base).await, 1);
    assert_eq!(count(&app, "/V2/1000/eventnotifications").await, 0);
    assert_not_found(
        app.admin
            .get(&format!("/V2/1000/eventnotifications/{id}"))
            .await,
    )
    .await;
    assert_eq!(
        app.admin.get_json(&format!("{base}/{id}")).await["NotificationName"],
        "SOS"
    );
    let mut with_devices = sos();
    with_devices["DeviceType"] = json!("InReach");
    with_devices["Devices"] = json!("a,b");
    let response = app.admin.post(&base, &with_devices).await;
    assert_eq!(
        problem_fields(&assert_problem(response, 400, "validation_failed").await),
        ["DeviceType", "Devices"]
    );
    let put = app.admin.put(&format!("{base}/{id}"), &with_devices).await;
    assert_problem(put, 400, "validation_failed").await;
    assert_eq!(
        app.admin
            .put(&format!("{base}/{id}"), &sos())
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.delete(&format!("{base}/{id}")).await.status(),
        StatusCode::OK
    );
    assert_eq!(count(&app, &base).await, 0);
}

async fn expressions_are_parsed_with_positions(app: TestApp) {
    for (expression, position) in [
        ("Emergency AND", 14),
        ("Speed > fast", 9),
        ("Sped > 100", 1),
        ("CheckIn Emergency", 9),
        ("Time BETWEEN \"18:00\" \"06:00\"", 22),
        ("(CheckIn", 9),
    ] {
        let mut body = sos();
        body["EventsExpression"] = json!(expression);
        let response = app.admin.post("/V2/1000/eventnotifications", &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["EventsExpression"]);
        let message = problem["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("position {position}: expected ")),
            "{expression}: {message}"
        );
    }
    assert_eq!(count(&app, "/V2/1000/eventnotifications").await, 0);
}

async fn notification_rules_store_nothing(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000/eventnotifications",
            &json!({"Severity": "3", "TimeZoneId": "Moon/Base", "EventsExpression": ""}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        [
            "NotificationName",
            "EventsExpression",
            "TimeZoneId",
            "Severity"
        ]
    );
    let wrong_type = app
        .admin
        .post(
            "/V2/1000/eventnotifications",
            &json!({"NotificationName": "x", "EventsExpression": "CheckIn", "RaiseAlert": "yes"}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(wrong_type, 400, "validation_failed").await),
        ["RaiseAlert"]
    );
    let mut bad_recipient = sos();
    bad_recipient["Recipients"] = json!([{"Type": "NearestDevices", "Radius": "0"}]);
    let response = app
        .admin
        .post("/V2/1000/eventnotifications", &bad_recipient)
        .await;
    assert_eq!(
        problem_fields(&assert_problem(response, 400, "validation_failed").await),
        ["Recipients[0].Radius"]
    );
    assert_eq!(count(&app, "/V2/1000/eventnotifications").await, 0);
}

async fn devices_and_recipients_must_exist(app: TestApp) {
    let other = app.create_tenant("1000", "Other").await;
    let created = app
        .admin
        .post(
            &format!("/V2/{other}/devices"),
            &json!({"DeviceId": "elsewhere", "DeviceType": "X"}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let created = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "mine", "DeviceType": "X"}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let mut body = sos();
    body["Devices"] = json!("mine, elsewhere, ghost");
    body["DeviceType"] = json!("X");
    let problem = assert_problem(
        app.admin.post("/V2/1000/eventnotifications", &body).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Devices", "Devices"]);
    body["Devices"] = json!("mine");
    body["Recipients"] = json!([{"Type": "TenantList", "ListId": "4242"}]);
    let problem = assert_problem(
        app.admin.post("/V2/1000/eventnotifications", &body).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Recipients[0].ListId"]);
    body["Recipients"] = json!([]);
    let id = location_id(app.admin.post("/V2/1000/eventnotifications", &body).await).await;
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/1000/eventnotifications/{id}"))
            .await["Devices"],
        "mine"
    );
}

async fn unknown_groups_and_foreign_tenants_are_404(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let b_group = create_group(&app, &b).await;
    let b_notification = location_id(
        app.admin
            .post(&format!("/V2/{b}/eventnotifications"), &sos())
            .await,
    )
    .await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    assert_not_found(
        a_admin
            .get(&format!("/V2/{a}/groups/{b_group}/eventnotifications"))
            .await,
    )
    .await;
    assert_not_found(
        a_admin
            .post(
                &format!("/V2/{a}/groups/{b_group}/eventnotifications"),
                &sos(),
            )
            .await,
    )
    .await;
    assert_not_found(
        a_admin
            .get(&format!("/V2/{a}/groups/999999/eventnotifications"))
            .await,
    )
    .await;
    assert_not_found(
        a_admin
            .get(&format!("/V2/{a}/eventnotifications/{b_notification}"))
            .await,
    )
    .await;
    assert_not_found(a_admin.get(&format!("/V2/{b}/eventnotifications")).await).await;
    assert_not_found(
        a_admin
            .delete(&format!("/V2/{a}/eventnotifications/{b_notification}"))
            .await,
    )
    .await;
    assert_eq!(count(&app, &format!("/V2/{b}/eventnotifications")).await, 1);
}

async fn notifications_need_manage_configuration(app: TestApp) {
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    for client in [&reader, &user] {
        assert_problem(
            client.post("/V2/1000/eventnotifications", &sos()).await,
            403,
            "forbidden",
        )
        .await;
        assert_eq!(
            client.get("/V2/1000/eventnotifications").await.status(),
            StatusCode::OK
        );
    }
    assert_eq!(
        manager
            .post("/V2/1000/eventnotifications", &sos())
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(count(&app, "/V2/1000/eventnotifications").await, 1);
}

async fn recipients_in_use_by_notifications_cannot_be_deleted(app: TestApp) {
    let contact = location_id(
        app.admin
            .post(
                "/V2/1000/addressbookcontacts",
                &json!({"ContactName": "Duty officer"}),
            )
            .await,
    )
    .await;
    let mut body = sos();
    body["Recipients"] = json!([{"Type": "TenantContact", "ContactId": contact}]);
    let id = location_id(app.admin.post("/V2/1000/eventnotifications", &body).await).await;
    let problem = assert_problem(
        app.admin
            .delete(&format!("/V2/1000/addressbookcontacts/{contact}"))
            .await,
        409,
        "conflict",
    )
    .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("event notification SOS")
    );
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/eventnotifications/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/addressbookcontacts/{contact}"))
            .await
            .status(),
        StatusCode::OK
    );
}
