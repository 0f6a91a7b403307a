//! Event notifications: the rules at both levels, versions, scoping and representations
//! (the basic round trips are in event_notifications.rs).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};
use crate::event_notifications::{count, create_group, location_id, sos};

/// A second group of `tenant` (group names are unique per tenant).
async fn other_group(app: &TestApp, tenant: &str) -> String {
    location_id(
        app.admin
            .post(
                &format!("/V2/{tenant}/groups"),
                &json!({"Name": "Night shift"}),
            )
            .await,
    )
    .await
}

backend_tests!(
    group_level_writes_are_validated_and_store_nothing,
    etags_guard_writes_at_both_levels,
    ids_do_not_cross_levels_groups_or_tenants,
    read_only_users_cannot_change_either_level,
    deleting_a_group_deletes_its_notifications,
    device_type_and_devices_rules,
    expression_limits_and_messages,
    client_ids_are_ignored_and_xml_round_trips,
);

/// The tenant-level collection and a fresh group's collection of tenant 1000.
async fn both_levels(app: &TestApp) -> [String; 2] {
    let group = create_group(app, "1000").await;
    [
        "/V2/1000/eventnotifications".to_string(),
        format!("/V2/1000/groups/{group}/eventnotifications"),
    ]
}

async fn etag(client: &Client, path: &str) -> String {
    let response = client.get(path).await;
    assert_eq!(response.status(), StatusCode::OK, "GET {path}");
    response.headers()["etag"].to_str().unwrap().to_string()
}

async fn put_with(client: &Client, path: &str, if_match: &str, body: &Value) -> reqwest::Response {
    client
        .request(Method::PUT, path)
        .header("if-match", if_match)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn delete_with(client: &Client, path: &str, if_match: &str) -> reqwest::Response {
    client
        .request(Method::DELETE, path)
        .header("if-match", if_match)
        .send()
        .await
        .unwrap()
}

async fn group_level_writes_are_validated_and_store_nothing(app: TestApp) {
    let [_, base] = both_levels(&app).await;
    let mut bad = sos();
    bad["EventsExpression"] = json!("Emergency OR Speed >> 3");
    let problem = assert_problem(app.admin.post(&base, &bad).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["EventsExpression"]);
    assert_eq!(
        problem["errors"][0]["message"],
        "position 21: expected a number, found \">\""
    );
    assert_eq!(count(&app, &base).await, 0);

    let id = location_id(app.admin.post(&base, &sos()).await).await;
    let path = format!("{base}/{id}");
    let before = app.admin.get_json(&path).await;
    for (field, value, expected) in [
        (
            "EventsExpression",
            json!("Time BETWEEN \"18:00\""),
            "EventsExpression",
        ),
        ("Severity", json!("3"), "Severity"),
        ("DeviceType", json!("InReach"), "DeviceType"),
        ("Devices", json!(""), "Devices"),
        ("TimeZoneId", json!("Mars/Olympus"), "TimeZoneId"),
        ("NotificationName", json!(""), "NotificationName"),
        (
            "Recipients",
            json!([{"Type": "Nonsense"}]),
            "Recipients[0].Type",
        ),
    ] {
        let mut body = sos();
        body[field] = value;
        let problem =
            assert_problem(app.admin.put(&path, &body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [expected], "{field}");
    }
    assert_eq!(app.admin.get_json(&path).await, before, "nothing changed");
    assert_eq!(count(&app, &base).await, 1);
}

async fn etags_guard_writes_at_both_levels(app: TestApp) {
    for base in both_levels(&app).await {
        let id = location_id(app.admin.post(&base, &sos()).await).await;
        let path = format!("{base}/{id}");
        let first = etag(&app.admin, &path).await;
        let cached = app
            .admin
            .request(Method::GET, &path)
            .header("if-none-match", &first)
            .send()
            .await
            .unwrap();
        assert_eq!(cached.status(), StatusCode::NOT_MODIFIED, "{path}");

        let mut renamed = sos();
        renamed["NotificationName"] = json!("Renamed");
        let ok = put_with(&app.admin, &path, &first, &renamed).await;
        assert_eq!(ok.status(), StatusCode::OK, "{path}");
        let second = etag(&app.admin, &path).await;
        assert_ne!(first, second, "a write makes a new version");

        let stale = put_with(&app.admin, &path, &first, &sos()).await;
        assert_problem(stale, 412, "precondition_failed").await;
        let stale = delete_with(&app.admin, &path, &first).await;
        assert_problem(stale, 412, "precondition_failed").await;
        assert_eq!(
            app.admin.get_json(&path).await["NotificationName"],
            "Renamed"
        );
        let ok = delete_with(&app.admin, &path, &second).await;
        assert_eq!(ok.status(), StatusCode::OK);
        assert_not_found(app.admin.get(&path).await).await;
        assert_not_found(app.admin.put(&path, &sos()).await).await;
        assert_not_found(app.admin.delete(&path).await).await;
    }
}

async fn ids_do_not_cross_levels_groups_or_tenants(app: TestApp) {
    let [tenant_base, group_base] = both_levels(&app).await;
    let other_group = other_group(&app, "1000").await;
    let other_base = format!("/V2/1000/groups/{other_group}/eventnotifications");
    let tenant_id = location_id(app.admin.post(&tenant_base, &sos()).await).await;
    let group_id = location_id(app.admin.post(&group_base, &sos()).await).await;
    for path in [
        format!("{group_base}/{tenant_id}"),
        format!("{tenant_base}/{group_id}"),
        format!("{other_base}/{group_id}"),
        format!("{tenant_base}/not-a-number"),
        format!("{group_base}/99999999"),
        format!("/V2/1000/groups/not-a-number/eventnotifications/{group_id}"),
        format!("/V2/1000/groups/0/eventnotifications/{tenant_id}"),
    ] {
        assert_not_found(app.admin.get(&path).await).await;
        assert_not_found(app.admin.put(&path, &sos()).await).await;
        assert_not_found(app.admin.delete(&path).await).await;
    }
    for base in [
        "/V2/1000/groups/99999999/eventnotifications",
        "/V2/1000/groups/0/eventnotifications",
        "/V2/1000/groups/x/eventnotifications",
    ] {
        assert_not_found(app.admin.get(base).await).await;
        assert_not_found(app.admin.post(base, &sos()).await).await;
    }
    assert_eq!(count(&app, &other_base).await, 0);

    // A sibling tenant's administrator sees none of tenant B's notifications, at any level,
    // whether addressed through B's code or through its own.
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let b_group = create_group(&app, &b).await;
    let b_group_base = format!("/V2/{b}/groups/{b_group}/eventnotifications");
    let b_id = location_id(app.admin.post(&b_group_base, &sos()).await).await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    for path in [
        format!("{b_group_base}/{b_id}"),
        format!("/V2/{a}/groups/{b_group}/eventnotifications/{b_id}"),
        format!("/V2/{a}/eventnotifications/{b_id}"),
    ] {
        assert_not_found(a_admin.get(&path).await).await;
        assert_not_found(a_admin.put(&path, &sos()).await).await;
        assert_not_found(a_admin.delete(&path).await).await;
    }
    assert_not_found(a_admin.get(&b_group_base).await).await;
    assert_not_found(a_admin.post(&b_group_base, &sos()).await).await;
    assert_eq!(count(&app, &b_group_base).await, 1);
    // The parent tenant's administrator reaches B's group notifications.
    assert_eq!(
        app.admin.get_json(&format!("{b_group_base}/{b_id}")).await["NotificationName"],
        "SOS"
    );
}

async fn read_only_users_cannot_change_either_level(app: TestApp) {
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    for base in both_levels(&app).await {
        let id = location_id(app.admin.post(&base, &sos()).await).await;
        let path = format!("{base}/{id}");
        let before = app.admin.get_json(&path).await;
        assert_problem(reader.post(&base, &sos()).await, 403, "forbidden").await;
        let mut changed = sos();
        changed["NotificationDisabled"] = json!(true);
        assert_problem(reader.put(&path, &changed).await, 403, "forbidden").await;
        assert_problem(reader.delete(&path).await, 403, "forbidden").await;
        assert_eq!(reader.get_json(&path).await, before, "readers may read");
        assert_eq!(app.admin.get_json(&path).await, before, "nothing changed");
        assert_eq!(count(&app, &base).await, 1);
    }
}

async fn deleting_a_group_deletes_its_notifications(app: TestApp) {
    let contact = location_id(
        app.admin
            .post(
                "/V2/1000/addressbookcontacts",
                &json!({"ContactName": "Night supervisor"}),
            )
            .await,
    )
    .await;
    let group = create_group(&app, "1000").await;
    let mut body = sos();
    body["Recipients"] = json!([{"Type": "TenantContact", "ContactId": contact}]);
    let base = format!("/V2/1000/groups/{group}/eventnotifications");
    location_id(app.admin.post(&base, &body).await).await;
    let contact_path = format!("/V2/1000/addressbookcontacts/{contact}");
    assert_problem(app.admin.delete(&contact_path).await, 409, "conflict").await;

    let deleted = app.admin.delete(&format!("/V2/1000/groups/{group}")).await;
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&base).await).await;
    // The notification went with the group, so nothing refers to the contact any more.
    assert_eq!(
        app.admin.delete(&contact_path).await.status(),
        StatusCode::OK
    );
}

async fn device_type_and_devices_rules(app: TestApp) {
    let base = "/V2/1000/eventnotifications";
    let mut body = sos();
    body["DeviceType"] = json!("Garmin");
    assert_eq!(
        app.admin.post(base, &body).await.status(),
        StatusCode::OK,
        "any type while the tenant lists none"
    );
    let response = app
        .admin
        .put(
            "/V2/1000",
            &json!({"Description": "Root", "DeviceTypes": "InReach, Spot"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let problem = assert_problem(app.admin.post(base, &body).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["DeviceType"]);
    assert!(
        problem["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("InReach, Spot")
    );
    body["DeviceType"] = json!("Spot");
    for id in ["mine", "yours"] {
        let created = app
            .admin
            .post(
                "/V2/1000/devices",
                &json!({"DeviceId": id, "DeviceType": "Spot"}),
            )
            .await;
        assert_eq!(created.status(), StatusCode::OK);
    }
    for (devices, fields) in [
        ("mine,,yours", vec!["Devices"]),
        ("mine,", vec!["Devices"]),
        ("mine, ghost, phantom", vec!["Devices", "Devices"]),
    ] {
        body["Devices"] = json!(devices);
        let problem =
            assert_problem(app.admin.post(base, &body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{devices}");
    }
    // Too many ids: one error, and none of them looked up.
    let many: Vec<String> = (0..=1000).map(|i| format!("d{i}")).collect();
    body["Devices"] = json!(many.join(","));
    let problem = assert_problem(app.admin.post(base, &body).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Devices"]);
    assert!(
        problem["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("at most 1000")
    );
    assert_eq!(
        count(&app, base).await,
        1,
        "nothing stored after the rejects"
    );

    body["Devices"] = json!(" mine , yours, mine ");
    let id = location_id(app.admin.post(base, &body).await).await;
    let stored = app.admin.get_json(&format!("{base}/{id}")).await;
    assert_eq!(stored["Devices"], " mine , yours, mine ", "kept as written");
    assert_eq!(stored["DeviceType"], "Spot");
    body["Devices"] = Value::Null;
    body["DeviceType"] = Value::Null;
    let path = format!("{base}/{id}");
    assert_eq!(app.admin.put(&path, &body).await.status(), StatusCode::OK);
    let stored = app.admin.get_json(&path).await;
    assert_eq!(
        (&stored["Devices"], &stored["DeviceType"]),
        (&Value::Null, &Value::Null)
    );
}

async fn expression_limits_and_messages(app: TestApp) {
    let base = "/V2/1000/eventnotifications";
    for (expression, message) in [
        (
            "Speed > 100 Sped".to_string(),
            "position 13: expected AND, OR or end of expression, found \"Sped\"".to_string(),
        ),
        (
            "CheckIn & FreeText".to_string(),
            "position 9: expected AND, OR or end of expression, found \"&\"".to_string(),
        ),
        (
            "Day IN (Sat, Someday)".to_string(),
            "position 14: expected a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun), found \"Someday\""
                .to_string(),
        ),
        ("   ".to_string(), "must not be empty".to_string()),
        (
            "CheckIn OR ".repeat(400) + "CheckIn",
            format!(
                "position 4001: expected at most 4000 characters, found {} characters",
                11 * 400 + 7
            ),
        ),
        (
            format!("{}CheckIn{}", "(".repeat(70), ")".repeat(70)),
            "position 65: expected a simpler expression (at most 64 levels of NOT and \
             parentheses), found \"(\""
                .to_string(),
        ),
    ] {
        let mut body = sos();
        body["EventsExpression"] = json!(expression);
        let problem =
            assert_problem(app.admin.post(base, &body).await, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["EventsExpression"]);
        assert_eq!(problem["errors"][0]["message"], message.as_str());
    }
    assert_eq!(count(&app, base).await, 0);
    // Keywords in any case, symbols, the longest chain allowed, and a Windows time zone.
    let mut body = sos();
    body["TimeZoneId"] = json!("GMT Standard Time");
    for expression in [
        "emergency or (missedcheckin and not day in (saturday, SUN))".to_string(),
        "!InGeofence && Battery <= 15 || Property(\"shift\") != \"day\"".to_string(),
        "CheckIn||".repeat(443) + "CheckIn",
    ] {
        body["EventsExpression"] = json!(expression);
        assert_eq!(app.admin.post(base, &body).await.status(), StatusCode::OK);
    }
    assert_eq!(count(&app, base).await, 3);
}

async fn client_ids_are_ignored_and_xml_round_trips(app: TestApp) {
    let base = "/V2/1000/eventnotifications";
    let mut body = sos();
    body["NotificationId"] = json!("424242");
    let id = location_id(app.admin.post(base, &body).await).await;
    assert_ne!(id, "424242");
    let path = format!("{base}/{id}");
    body["NotificationId"] = json!("1");
    body["NotificationText"] = json!("changed");
    assert_eq!(app.admin.put(&path, &body).await.status(), StatusCode::OK);
    let stored = app.admin.get_json(&path).await;
    assert_eq!(
        (
            stored["NotificationId"].as_str(),
            stored["NotificationText"].as_str()
        ),
        (Some(id.as_str()), Some("changed"))
    );

    let xml = "<EventNotification><NotificationName>From XML</NotificationName>\
        <EventsExpression>Speed &gt; 120 AND NOT Day IN (Sat, Sun)</EventsExpression>\
        <RaiseAlert>true</RaiseAlert><Severity>1</Severity>\
        <Recipients><Type>MessagingAddress</Type><MessagingAddress>mail:a@example.com</MessagingAddress></Recipients>\
        <Recipients><Type>DeviceUserSms</Type></Recipients></EventNotification>";
    let response = app
        .admin
        .request(Method::POST, base)
        .header("content-type", "application/xml")
        .body(xml)
        .send()
        .await
        .unwrap();
    let xml_id = location_id(response).await;
    let stored = app.admin.get_json(&format!("{base}/{xml_id}")).await;
    assert_eq!(
        stored["EventsExpression"],
        "Speed > 120 AND NOT Day IN (Sat, Sun)"
    );
    assert_eq!(stored["RaiseAlert"], true);
    assert_eq!(stored["Recipients"].as_array().unwrap().len(), 2);
    let text = app
        .admin
        .request(Method::GET, &format!("{base}/{xml_id}"))
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("<EventNotification><NotificationId>"),
        "{text}"
    );
    assert!(
        text.contains(
            "<EventsExpression>Speed &gt; 120 AND NOT Day IN (Sat, Sun)</EventsExpression>"
        ),
        "{text}"
    );
    let list = app
        .admin
        .request(Method::GET, base)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), StatusCode::OK);
}
