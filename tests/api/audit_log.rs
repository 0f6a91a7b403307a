//! The audit log (`GET /V2/{t}/auditlog`): an entry for every audited change, written in
//! the change's transaction (none for a refused write), for logins and failed logins
//! with the client's address, alert actions and delivery retries, none for MO messages;
//! filters, paging, CSV, tenant scope, Administrators only, no secret, retention.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::alerts::{raise, sos_setup};
use crate::backend_tests;
use crate::common::{
    ADMIN_EMAIL, Backend, Client, PASSWORD, TestApp, assert_not_found, assert_problem,
    problem_fields, spawn_app_with,
};
use crate::mo_messages::{DEVICE, position_report, post_processed};
use safetrack::app::AppConfig;

backend_tests!(
    configuration_writes_are_audited,
    logins_and_failed_logins_carry_the_client_address,
    alert_actions_and_delivery_retries_are_audited_mo_messages_are_not,
    refused_writes_leave_no_entry,
    filters_paging_and_csv,
    scope_and_permissions,
    no_secret_enters_the_log,
    tokens_are_audited_and_act_under_their_name,
    sessions_opened_and_closed_are_audited,
);

/// Tests that start an app of their own (one macro per module).
mod own_app {
    crate::backend_fn_tests!(entries_past_their_retention_are_pruned);
    use super::entries_past_their_retention_are_pruned;
}

/// Every entry `path` lists (all pages), newest first.
async fn entries(app: &TestApp, path: &str) -> Vec<Value> {
    app.admin.get_all_pages(path).await
}

/// The entries of `tenant` except logins (the admin's own Basic logins come and go with
/// the credential cache).
async fn changes(app: &TestApp, tenant: &str) -> Vec<Value> {
    entries(app, &format!("/V2/{tenant}/auditlog"))
        .await
        .into_iter()
        .filter(|e| e["Action"] != "Login")
        .collect()
}

/// (Action, ResourceType, ResourceId) of each entry, oldest first.
fn what(list: &[Value]) -> Vec<(String, String, String)> {
    list.iter()
        .rev()
        .map(|e| {
            (
                e["Action"].as_str().unwrap().to_string(),
                e["ResourceType"].as_str().unwrap().to_string(),
                e["ResourceId"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn entry(action: &str, kind: &str, id: &str) -> (String, String, String) {
    (action.into(), kind.into(), id.into())
}

fn location_id(response: &reqwest::Response) -> String {
    let location = response.headers()["location"].to_str().unwrap();
    location.rsplit('/').next().unwrap().to_string()
}

fn circle(name: &str) -> Value {
    json!({"Name": name, "GeofenceType": "circle",
           "CircleCentre": {"Lat": 51.5, "Lon": -0.12}, "CircleRadius": 500})
}

async fn create_group(app: &TestApp, tenant: &str, name: &str) -> String {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/groups"), &json!({"Name": name}))
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create group");
    location_id(&response)
}

async fn configuration_writes_are_audited(app: TestApp) {
    let created = app.admin.post("/V2/1000/geofences", &circle("Depot")).await;
    assert_eq!(created.status(), StatusCode::OK);
    let geofence = location_id(&created);
    let path = format!("/V2/1000/geofences/{geofence}");
    assert_eq!(
        app.admin.put(&path, &circle("Yard")).await.status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    let group = create_group(&app, "1000", "Vans").await;
    let device = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "van-1", "DeviceType": "InReach"}),
        )
        .await;
    assert_eq!(device.status(), StatusCode::OK);
    let child = app.create_tenant("1000", "Child").await;
    let (user, _) = app.create_user("1000", "ops@example.com", "User").await;
    let profile = app
        .admin
        .patch(
            &format!("/V2/1000/userprofile/{user}"),
            &json!([{"op": "add", "path": "/FirstName", "value": "Olga"}]),
        )
        .await;
    assert_eq!(
        profile.status(),
        StatusCode::OK,
        "{:?}",
        profile.text().await
    );

    let listed = changes(&app, "1000").await;
    assert_eq!(
        what(&listed),
        vec![
            entry("Create", "Geofence", &geofence),
            entry("Update", "Geofence", &geofence),
            entry("Delete", "Geofence", &geofence),
            entry("Create", "Group", &group),
            entry("Create", "Device", "van-1"),
            entry("Create", "Tenant", &child),
            entry("Create", "User", &user),
            entry("Update", "Profile", &user),
        ]
    );
    let newest = &listed[0];
    assert_eq!(newest["Actor"], ADMIN_EMAIL);
    assert_eq!(newest["ClientAddress"], "127.0.0.1");
    assert_eq!(newest["TenantCode"], "1000");
    assert!(newest["AuditEntryId"].is_string());
    let at: jiff::Timestamp = newest["At"].as_str().unwrap().parse().unwrap();
    assert!(
        (jiff::Timestamp::now() - at).get_seconds().abs() < 60,
        "{at}"
    );
    // Newest first: ids go down.
    let ids: Vec<i64> = listed
        .iter()
        .map(|e| e["AuditEntryId"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "{ids:?}");
}

async fn logins_and_failed_logins_carry_the_client_address(app: TestApp) {
    let (user, _) = app.create_user("1000", "ops@example.com", "User").await;
    let wrong = app.client_from("127.0.0.9", "ops@example.com", "not-the-password");
    assert_eq!(
        wrong.get("/V2/1000/devices").await.status(),
        StatusCode::UNAUTHORIZED
    );
    let right = app.client_from("127.0.0.9", "ops@example.com", PASSWORD);
    assert_eq!(right.get("/V2/1000/devices").await.status(), StatusCode::OK);
    // A second request is served from the credential cache: no second login.
    assert_eq!(right.get("/V2/1000/devices").await.status(), StatusCode::OK);
    // Nobody of that name: no tenant to list it in, nothing recorded.
    let nobody = app.client_from("127.0.0.9", "nobody@example.com", "whatever-1234");
    assert_eq!(
        nobody.get("/V2/1000/devices").await.status(),
        StatusCode::UNAUTHORIZED
    );

    let ops: Vec<Value> = entries(&app, "/V2/1000/auditlog?actor=ops%40example.com").await;
    assert_eq!(
        what(&ops),
        vec![
            entry("LoginFailed", "User", &user),
            entry("Login", "User", &user),
        ]
    );
    for e in &ops {
        assert_eq!(e["ClientAddress"], "127.0.0.9");
        assert_eq!(e["Actor"], "ops@example.com");
        assert_eq!(e["TenantCode"], "1000");
    }
    let all = entries(&app, "/V2/1000/auditlog").await;
    assert!(
        !all.iter().any(|e| e["Actor"] == "nobody@example.com"),
        "{all:?}"
    );
    // The administrator's own first request was a login too.
    assert!(
        all.iter()
            .any(|e| e["Action"] == "Login" && e["Actor"] == ADMIN_EMAIL),
        "{all:?}"
    );
}

async fn alert_actions_and_delivery_retries_are_audited_mo_messages_are_not(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let before = changes(&app, "1000").await.len();
    let (_, alert) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([position_report(2, "2026-03-01T10:01:00Z", 51.6, -0.1)]),
    )
    .await;
    assert_eq!(
        changes(&app, "1000").await.len(),
        before,
        "MO messages (and what they raise) write no audit entry"
    );

    let alert_path = format!("/V2/1000/alerts/{alert}");
    for action in ["acknowledge", "resolve"] {
        let response = app
            .admin
            .post(&format!("{alert_path}/{action}"), &json!({}))
            .await;
        assert_eq!(response.status(), StatusCode::OK, "{action}");
    }
    let deliveries = app
        .admin
        .get_json("/V2/1000/deliveries?channel=Email")
        .await;
    let delivery = deliveries[0]["DeliveryId"].as_str().unwrap().to_string();
    let retried = app
        .admin
        .post(&format!("/V2/1000/deliveries/{delivery}/retry"), &json!({}))
        .await;
    assert_eq!(retried.status(), StatusCode::OK);

    let listed = changes(&app, "1000").await;
    assert_eq!(
        what(&listed[..3]),
        vec![
            entry("Acknowledge", "Alert", &alert),
            entry("Resolve", "Alert", &alert),
            entry("Retry", "Delivery", &delivery),
        ]
    );
    assert!(
        !listed.iter().any(|e| e["ResourceType"] == "MoMessage"),
        "{listed:?}"
    );
}

async fn refused_writes_leave_no_entry(app: TestApp) {
    let created = app.admin.post("/V2/1000/geofences", &circle("Depot")).await;
    let path = format!("/V2/1000/geofences/{}", location_id(&created));
    let before = changes(&app, "1000").await;

    // 400: invalid.
    let invalid = app
        .admin
        .post(
            "/V2/1000/geofences",
            &json!({"Name": "No shape", "GeofenceType": "circle"}),
        )
        .await;
    assert_problem(invalid, 400, "validation_failed").await;
    // 409: the name is taken.
    let duplicate = app.admin.post("/V2/1000/geofences", &circle("Depot")).await;
    assert_problem(duplicate, 409, "conflict").await;
    // 412: If-Match names another version (checked inside the write's transaction).
    let stale = app
        .admin
        .request(Method::PUT, &path)
        .header("if-match", "\"not-the-version\"")
        .json(&circle("Yard"))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    let stale_delete = app
        .admin
        .request(Method::DELETE, &path)
        .header("if-match", "\"not-the-version\"")
        .send()
        .await
        .unwrap();
    assert_problem(stale_delete, 412, "precondition_failed").await;
    // 409 inside the transaction: a group with a device in it cannot go.
    let group = create_group(&app, "1000", "Vans").await;
    let device = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "van-1", "DeviceType": "InReach", "GroupId": group}),
        )
        .await;
    assert_eq!(device.status(), StatusCode::OK);
    let with_device = changes(&app, "1000").await;
    let busy = app.admin.delete(&format!("/V2/1000/groups/{group}")).await;
    assert_problem(busy, 409, "conflict").await;
    // 403: a ReadOnly user may not write.
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    assert_problem(
        reader.post("/V2/1000/geofences", &circle("R")).await,
        403,
        "forbidden",
    )
    .await;

    let after = changes(&app, "1000").await;
    assert_eq!(with_device.len(), before.len() + 2, "{with_device:?}");
    // Only the reader's creation was added since (a User Create; its login is filtered).
    assert_eq!(after.len(), with_device.len() + 1, "{after:?}");
    assert_eq!(after[0]["ResourceType"], "User");
    assert!(
        !after
            .iter()
            .any(|e| e["Action"] != "Create" && e["ResourceType"] == "Geofence"),
        "{after:?}"
    );
}

async fn filters_paging_and_csv(app: TestApp) {
    let start = jiff::Timestamp::now();
    let mut groups = Vec::new();
    for i in 0..5 {
        groups.push(create_group(&app, "1000", &format!("G{i}")).await);
    }
    let geofence = app.admin.post("/V2/1000/geofences", &circle("Depot")).await;
    assert_eq!(geofence.status(), StatusCode::OK);
    let end = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1);

    let group_creates = "/V2/1000/auditlog?action=Create&resourceType=Group";
    let listed = entries(&app, group_creates).await;
    let ids: Vec<&str> = listed
        .iter()
        .map(|e| e["ResourceId"].as_str().unwrap())
        .collect();
    let newest_first: Vec<&str> = groups.iter().rev().map(String::as_str).collect();
    assert_eq!(ids, newest_first);

    // Paged two at a time: every entry once, in the same order.
    let paged = entries(&app, &format!("{group_creates}&pageSize=2")).await;
    assert_eq!(paged, listed);
    let first = app.admin.get(&format!("{group_creates}&pageSize=2")).await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .unwrap()
        .to_string();
    let page: Value = first.json().await.unwrap();
    assert_eq!(page.as_array().unwrap().len(), 2);
    // The token belongs to this tenant's listing: not to the subtree's.
    let elsewhere = app
        .admin
        .request(Method::GET, "/V2/1000/auditlog?subtenants=true")
        .header("X-CONTINUATIONTOKEN", &token)
        .send()
        .await
        .unwrap();
    assert_problem(elsewhere, 400, "invalid_continuation_token").await;

    let by_actor = entries(
        &app,
        &format!(
            "/V2/1000/auditlog?resourceType=Geofence&actor={}",
            "admin%40safetrack.test"
        ),
    )
    .await;
    assert_eq!(by_actor.len(), 1);
    assert!(
        entries(&app, "/V2/1000/auditlog?actor=someone%40else.test")
            .await
            .is_empty()
    );
    let window = format!("/V2/1000/auditlog?resourceType=Group&from={start}&to={end}");
    assert_eq!(entries(&app, &window).await.len(), 5);
    let later = format!("/V2/1000/auditlog?resourceType=Group&from={end}");
    assert!(entries(&app, &later).await.is_empty());
    let earlier = format!("/V2/1000/auditlog?resourceType=Group&to={start}");
    assert!(entries(&app, &earlier).await.is_empty());

    // Bad filters: 400 naming each.
    for (query, field) in [
        ("action=Explode", "action"),
        ("resourceType=Planet", "resourceType"),
        ("from=yesterday", "from"),
        ("pageSize=0", "pageSize"),
    ] {
        let response = app.admin.get(&format!("/V2/1000/auditlog?{query}")).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem_fields(&problem), vec![field.to_string()], "{query}");
    }

    // CSV, like every list.
    let csv = app
        .admin
        .request(Method::GET, group_creates)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(
        csv.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let text = csv.text().await.unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    for column in [
        "AuditEntryId",
        "At",
        "Actor",
        "ClientAddress",
        "Action",
        "ResourceType",
        "ResourceId",
    ] {
        assert!(header.contains(column), "{header}");
    }
    assert_eq!(lines.filter(|l| !l.is_empty()).count(), 5, "{text}");
    assert!(text.contains(",Create,Group,"), "{text}");
}

async fn scope_and_permissions(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let in_a = create_group(&app, &a, "In A").await;
    let in_b = create_group(&app, &b, "In B").await;

    let own = changes(&app, "1000").await;
    assert!(!own.iter().any(|e| e["ResourceType"] == "Group"), "{own:?}");
    let subtree = entries(&app, "/V2/1000/auditlog?subtenants=true&resourceType=Group").await;
    assert_eq!(
        what(&subtree),
        vec![
            entry("Create", "Group", &in_a),
            entry("Create", "Group", &in_b)
        ]
    );
    assert_eq!(subtree[1]["TenantCode"], a);

    // A's administrator sees A's entries, never B's, even with subtenants.
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    let a_list = a_admin
        .get_all_pages(&format!("/V2/{a}/auditlog?subtenants=true"))
        .await;
    assert!(a_list.iter().any(|e| e["ResourceId"] == in_a.as_str()));
    assert!(
        a_list.iter().all(|e| e["TenantCode"] == a.as_str()),
        "{a_list:?}"
    );
    assert_not_found(a_admin.get(&format!("/V2/{b}/auditlog")).await).await;
    assert_not_found(a_admin.get("/V2/1000/auditlog").await).await;

    // Administrators only.
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    assert_problem(manager.get("/V2/1000/auditlog").await, 403, "forbidden").await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    assert_problem(user.get("/V2/1000/auditlog").await, 403, "forbidden").await;
    assert_eq!(
        app.anonymous().get("/V2/1000/auditlog").await.status(),
        StatusCode::UNAUTHORIZED
    );

    // A deleted tenant's history stays under its ancestor (tenant codes are never reused).
    let deleted = app.admin.delete(&format!("/V2/{b}")).await;
    assert_eq!(deleted.status(), StatusCode::OK);
    let after = entries(
        &app,
        "/V2/1000/auditlog?subtenants=true&resourceType=Tenant",
    )
    .await;
    assert!(
        after
            .iter()
            .any(|e| e["Action"] == "Delete" && e["ResourceId"] == b.as_str()),
        "{after:?}"
    );
    let b_history = entries(&app, "/V2/1000/auditlog?subtenants=true&resourceType=Group").await;
    assert_eq!(b_history.len(), 2);
}

async fn no_secret_enters_the_log(app: TestApp) {
    const USER_SECRET: &str = "Very-secret-password-42";
    const HOOK_SECRET: &str = "whsec-never-in-the-audit-log";
    let (user, _) = app.create_user("1000", "ops@example.com", "User").await;
    let put = app
        .admin
        .put(
            &format!("/V2/1000/users/{user}"),
            &json!({"Username": "ops@example.com", "Password": USER_SECRET, "UserRoleId": "User"}),
        )
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    // The new password logs in (an entry), a wrong one fails (an entry).
    let client = app.client("ops@example.com", USER_SECRET);
    assert_eq!(
        client.get("/V2/1000/devices").await.status(),
        StatusCode::OK
    );
    let wrong = app.client("ops@example.com", "Wrong-password-1234");
    assert_eq!(
        wrong.get("/V2/1000/devices").await.status(),
        StatusCode::UNAUTHORIZED
    );
    let hooks = app
        .admin
        .put(
            "/V2/1000/webhooks",
            &json!({"Urls": [{"Url": "https://hooks.example.com/in", "Device": true}],
                    "Authentication": "Bearer", "Password": HOOK_SECRET}),
        )
        .await;
    assert_eq!(hooks.status(), StatusCode::OK, "{:?}", hooks.text().await);

    let listed = entries(&app, "/V2/1000/auditlog").await;
    assert!(
        listed
            .iter()
            .any(|e| e["Action"] == "Update" && e["ResourceType"] == "User")
    );
    assert!(listed.iter().any(|e| e["ResourceType"] == "Webhooks"));
    let text = serde_json::to_string(&listed).unwrap();
    for secret in [USER_SECRET, HOOK_SECRET, PASSWORD, "Wrong-password-1234"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
}

async fn entries_past_their_retention_are_pruned(backend: Backend) {
    let config = AppConfig {
        audit_retention: Duration::from_secs(3),
        worker_interval: Duration::from_millis(200),
        ..AppConfig::default()
    };
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    create_group(&app, "1000", "Old").await;
    let kept = entries(&app, "/V2/1000/auditlog?resourceType=Group").await;
    assert_eq!(kept.len(), 1, "kept until its retention passes");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let left = entries(&app, "/V2/1000/auditlog?resourceType=Group").await;
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the entry outlived its retention: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // New entries are still written (and listed) after a prune.
    create_group(&app, "1000", "New").await;
    assert_eq!(
        entries(&app, "/V2/1000/auditlog?resourceType=Group")
            .await
            .len(),
        1
    );
}

async fn tokens_are_audited_and_act_under_their_name(app: TestApp) {
    let created = crate::api_tokens::create_token(
        &app.admin,
        "1000",
        &json!({"Name": "Deploy", "Permissions": ["AccessAllDevices", "Read"]}),
    )
    .await;
    let token_id = created["TokenId"].as_str().unwrap().to_string();
    let secret = created["Token"].as_str().unwrap().to_string();
    let token = app.bearer(&secret);
    let response = token
        .post("/V2/1000/groups", &json!({"Name": "By token"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let group = location_id(&response);
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/apitokens/{token_id}"))
            .await
            .status(),
        StatusCode::OK
    );
    // A revoked token writes nothing more.
    let refused = token
        .post("/V2/1000/groups", &json!({"Name": "Late"}))
        .await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);

    let listed = changes(&app, "1000").await;
    assert_eq!(
        what(&listed),
        vec![
            entry("Create", "ApiToken", &token_id),
            entry("Create", "Group", &group),
            entry("Revoke", "ApiToken", &token_id),
        ]
    );
    assert_eq!(listed[1]["Actor"], "token:Deploy");
    assert_eq!(listed[0]["Actor"], ADMIN_EMAIL);
    let by_token = entries(&app, "/V2/1000/auditlog?actor=token%3ADeploy").await;
    assert_eq!(by_token.len(), 1);
    let text = serde_json::to_string(&listed).unwrap();
    assert!(!text.contains(&secret), "{text}");
}

async fn sessions_opened_and_closed_are_audited(app: TestApp) {
    let body = json!({"Username": "ops@example.com", "Password": PASSWORD,
                      "UserRoleId": "User", "IsPortalEnabled": true});
    let created = app.admin.post("/V2/1000/users", &body).await;
    assert_eq!(created.status(), StatusCode::OK);
    let user = location_id(&created);
    let response = app
        .anonymous()
        .post(
            "/auth/session",
            &json!({"Username": "ops@example.com", "Password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    let cookie = set_cookie
        .strip_prefix("safetrack_session=")
        .and_then(|rest| rest.split(';').next())
        .unwrap()
        .to_string();
    let session: Value = response.json().await.unwrap();
    let browser = Client::with_session(&app.base, &cookie, session["CsrfToken"].as_str().unwrap());
    assert_eq!(
        browser.delete("/auth/session").await.status(),
        StatusCode::OK
    );

    let ops = entries(&app, "/V2/1000/auditlog?actor=ops%40example.com").await;
    let listed = what(&ops);
    assert_eq!(listed.len(), 3, "{ops:?}");
    assert_eq!(listed[0], entry("Login", "User", &user));
    let opened = &listed[1];
    assert_eq!(
        (opened.0.as_str(), opened.1.as_str()),
        ("Create", "Session")
    );
    assert_eq!(listed[2], entry("Revoke", "Session", &opened.2));
    for e in &ops {
        assert_eq!(e["ClientAddress"], "127.0.0.1");
        assert_eq!(e["TenantCode"], "1000");
    }
    let text = serde_json::to_string(&ops).unwrap();
    assert!(!text.contains(&cookie), "{text}");
}
