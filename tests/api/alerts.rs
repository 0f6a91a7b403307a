//! Alerts through HTTP: raised by an SOS through the events engine, joined by further
//! matches, moved through Open → Acknowledged → Resolved (409s, 403, 412, parallel
//! acknowledgements), listed with filters and continuation paging, scoped to tenants.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};
use crate::mo_messages::{DEVICE, position_report, post_processed, register_device};

backend_tests!(
    an_sos_raises_an_alert_and_a_second_joins_it,
    acknowledge_then_resolve,
    resolving_accepts_no_body_or_a_resolution,
    a_new_match_after_resolving_opens_a_new_alert,
    a_late_message_raises_a_late_alert,
    alerts_outside_the_path_tenant_are_404,
    an_id_spelled_otherwise_names_no_alert,
    listing_filters_and_pages,
    bad_list_parameters_are_400,
    one_of_eight_parallel_acknowledgements_wins,
);

/// The notification of the issue: an SOS that raises a High alert, e-mails ops and sends
/// the device a text.
pub fn sos_notification() -> Value {
    json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "RaiseAlert": true,
           "Severity": "2", "Recipients": [
               {"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"},
               {"Type": "SendTextMessage"}]})
}

/// Creates a tenant-level notification; returns its id.
pub async fn create_notification(app: &TestApp, tenant: &str, body: &Value) -> String {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/eventnotifications"), body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create notification");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

/// A 500 m circle named "Depot" around (51.5, -0.12).
pub async fn create_depot(app: &TestApp, tenant: &str) {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/geofences"),
            &json!({"Name": "Depot", "GeofenceType": "circle",
                    "CircleCentre": {"Lat": 51.5, "Lon": -0.12}, "CircleRadius": 500}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create geofence");
}

/// A position report in emergency.
pub fn sos_message(seq: i64, sent: &str, lat: f64, lon: f64) -> Value {
    let mut message = position_report(seq, sent, lat, lon);
    message["EmergencyState"] = json!("Active");
    message
}

/// Posts an SOS; returns (MessageId, AlertId) of the alert it raised or joined.
pub async fn raise(
    app: &TestApp,
    tenant: &str,
    device: &str,
    seq: i64,
    sent: &str,
) -> (String, String) {
    let processed = post_processed(
        app,
        tenant,
        device,
        &json!([sos_message(seq, sent, 51.5, -0.12)]),
    )
    .await;
    let message = &processed[0];
    let alert_id = message["Notifications"][0]["AlertId"]
        .as_str()
        .unwrap_or_else(|| panic!("no alert in {message}"))
        .to_string();
    (message["MessageId"].as_str().unwrap().to_string(), alert_id)
}

/// A device with the SOS notification (and the Depot geofence) in `tenant`.
pub async fn sos_setup(app: &TestApp, tenant: &str, device: &str) -> String {
    create_depot(app, tenant).await;
    register_device(app, tenant, device).await;
    create_notification(app, tenant, &sos_notification()).await
}

pub fn alert_path(tenant: &str, id: &str) -> String {
    format!("/V2/{tenant}/alerts/{id}")
}

/// GET an alert: (its ETag header, its body).
async fn read(app: &TestApp, path: &str) -> (String, Value) {
    let response = app.admin.get(path).await;
    assert_eq!(response.status(), StatusCode::OK, "GET {path}");
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    (etag, response.json().await.unwrap())
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["AlertId"].as_str().unwrap().to_string())
        .collect()
}

async fn an_sos_raises_an_alert_and_a_second_joins_it(app: TestApp) {
    let notification = sos_setup(&app, "1000", DEVICE).await;
    let (message_id, alert_id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let path = alert_path("1000", &alert_id);
    let (etag, alert) = read(&app, &path).await;
    assert_eq!(alert["ETag"], etag.trim_matches('"'));
    assert_eq!(alert["AlertId"], alert_id);
    assert_eq!(alert["TenantCode"], "1000");
    assert_eq!(alert["DeviceId"], DEVICE);
    assert_eq!(alert["NotificationId"], notification);
    assert_eq!(alert["NotificationName"], "SOS");
    assert_eq!(alert["Severity"], "2");
    assert_eq!(alert["Status"], "Open");
    assert_eq!(alert["MatchCount"], 1);
    assert_eq!(alert["Latitude"], 51.5);
    assert_eq!(alert["Longitude"], -0.12);
    assert_eq!(alert["Geofences"], json!(["Depot"]));
    assert_eq!(alert["MessageId"], message_id);
    assert_eq!(alert["Late"], false);
    assert!(alert["RaisedAt"].is_string());
    assert_eq!(alert["LastMatchAt"], alert["RaisedAt"]);
    for field in [
        "AcknowledgedBy",
        "AcknowledgedAt",
        "ResolvedBy",
        "ResolvedAt",
        "Resolution",
    ] {
        assert!(alert[field].is_null(), "{field} in {alert}");
    }

    // A second SOS from the same device joins the open alert.
    let (_, joined) = raise(&app, "1000", DEVICE, 2, "2026-03-01T10:05:00Z").await;
    assert_eq!(joined, alert_id);
    let (etag_after, after) = read(&app, &path).await;
    assert_ne!(etag_after, etag, "joining changes the version");
    assert_eq!(after["MatchCount"], 2);
    assert_eq!(after["RaisedAt"], alert["RaisedAt"]);
    assert_eq!(after["MessageId"], message_id, "the raising message stays");
    let first: jiff::Timestamp = alert["LastMatchAt"].as_str().unwrap().parse().unwrap();
    let last: jiff::Timestamp = after["LastMatchAt"].as_str().unwrap().parse().unwrap();
    assert!(last > first, "LastMatchAt moves: {first} -> {last}");
    let listed = app.admin.get_json("/V2/1000/alerts").await;
    assert_eq!(ids(&listed), [alert_id.as_str()]);
    assert_eq!(listed[0], after);

    // Outside every geofence, on another device: its own alert, no geofence names.
    register_device(&app, "1000", "second-device").await;
    let processed = post_processed(
        &app,
        "1000",
        "second-device",
        &json!([sos_message(1, "2026-03-01T10:00:00Z", 48.85, 2.35)]),
    )
    .await;
    let other = processed[0]["Notifications"][0]["AlertId"]
        .as_str()
        .unwrap();
    assert_ne!(other, alert_id);
    let (_, other) = read(&app, &alert_path("1000", other)).await;
    assert_eq!(other["Geofences"], json!([]));
    assert_eq!(other["Latitude"], 48.85);
    assert_eq!(other["MatchCount"], 1);
    // A message that is no emergency raises nothing.
    register_device(&app, "1000", "calm-device").await;
    let calm = post_processed(
        &app,
        "1000",
        "calm-device",
        &json!([position_report(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
    )
    .await;
    assert_eq!(calm[0]["Notifications"], json!([]));
    assert_eq!(
        app.admin
            .get_json("/V2/1000/alerts")
            .await
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn acknowledge_then_resolve(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let (_, alert_id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let path = alert_path("1000", &alert_id);
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, worker) = app.create_user("1000", "worker@example.com", "User").await;
    let (etag, open) = read(&app, &path).await;

    // ReadOnly may read but not act; nothing changes.
    assert_eq!(reader.get(&path).await.status(), StatusCode::OK);
    for action in ["acknowledge", "resolve"] {
        let response = reader.post(&format!("{path}/{action}"), &json!({})).await;
        assert_problem(response, 403, "forbidden").await;
    }
    assert_eq!(read(&app, &path).await, (etag.clone(), open.clone()));

    // A stale If-Match is 412, and changes nothing.
    let stale = worker
        .request(Method::POST, &format!("{path}/acknowledge"))
        .header("if-match", "\"stale\"")
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(read(&app, &path).await, (etag.clone(), open.clone()));

    // The first acknowledgement wins (with the current If-Match, and with no body).
    let acknowledged = worker
        .request(Method::POST, &format!("{path}/acknowledge"))
        .header("if-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(acknowledged.status(), StatusCode::OK);
    let ack_etag = acknowledged.headers()["etag"].to_str().unwrap().to_string();
    let acknowledged: Value = acknowledged.json().await.unwrap();
    assert_eq!(acknowledged["Status"], "Acknowledged");
    assert_eq!(acknowledged["AcknowledgedBy"], "worker@example.com");
    assert!(acknowledged["AcknowledgedAt"].is_string());
    assert!(acknowledged["ResolvedBy"].is_null());
    assert_ne!(ack_etag, etag);
    assert_eq!(
        read(&app, &path).await,
        (ack_etag.clone(), acknowledged.clone())
    );

    // A second acknowledgement is a 409 and leaves the first in place.
    let again = app
        .admin
        .post(&format!("{path}/acknowledge"), &json!({}))
        .await;
    let problem = assert_problem(again, 409, "conflict").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("already Acknowledged"),
        "{problem}"
    );
    // The old version no longer resolves it.
    let stale = app
        .admin
        .request(Method::POST, &format!("{path}/resolve"))
        .header("if-match", &etag)
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(
        read(&app, &path).await,
        (ack_etag.clone(), acknowledged.clone())
    );

    // Resolve (by someone else), with a resolution.
    let resolved = app
        .admin
        .request(Method::POST, &format!("{path}/resolve"))
        .header("if-match", &ack_etag)
        .json(&json!({"Resolution": "False alarm: pocket dial"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resolved.status(), StatusCode::OK);
    let resolved: Value = resolved.json().await.unwrap();
    assert_eq!(resolved["Status"], "Resolved");
    assert_eq!(resolved["ResolvedBy"], crate::common::ADMIN_EMAIL);
    assert!(resolved["ResolvedAt"].is_string());
    assert_eq!(resolved["Resolution"], "False alarm: pocket dial");
    assert_eq!(resolved["AcknowledgedBy"], "worker@example.com");
    assert_eq!(resolved["AcknowledgedAt"], acknowledged["AcknowledgedAt"]);
    let (resolved_etag, stored) = read(&app, &path).await;
    assert_eq!(stored, resolved);

    // Resolved is final: resolving or acknowledging again is a 409, nothing changes.
    for action in ["resolve", "acknowledge"] {
        let response = worker
            .post(&format!("{path}/{action}"), &json!({"Resolution": "again"}))
            .await;
        assert_problem(response, 409, "conflict").await;
    }
    assert_eq!(read(&app, &path).await, (resolved_etag, resolved));
    // A ReadOnly user still gets 403 (the role is checked first), even on a resolved one.
    let response = reader.post(&format!("{path}/resolve"), &json!({})).await;
    assert_problem(response, 403, "forbidden").await;
}

async fn resolving_accepts_no_body_or_a_resolution(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let resolve = |id: &str| {
        app.admin
            .request(Method::POST, &format!("{}/resolve", alert_path("1000", id)))
    };
    let long = "é".repeat(4000);
    // (case, Content-Type, body, the Resolution stored). An Open alert may be resolved
    // directly.
    let cases: Vec<(&str, Option<&str>, Option<String>, Value)> = vec![
        ("no body", None, None, Value::Null),
        (
            "empty JSON body",
            Some("application/json"),
            Some(String::new()),
            Value::Null,
        ),
        (
            "empty form body (curl -d '')",
            Some("application/x-www-form-urlencoded"),
            Some(String::new()),
            Value::Null,
        ),
        (
            "{}",
            Some("application/json"),
            Some("{}".into()),
            Value::Null,
        ),
        (
            "JSON null",
            Some("application/json"),
            Some("null".into()),
            Value::Null,
        ),
        (
            "null resolution",
            Some("application/json"),
            Some(r#"{"Resolution": null}"#.into()),
            Value::Null,
        ),
        (
            "blank resolution",
            Some("application/json"),
            Some(r#"{"Resolution": "   "}"#.into()),
            Value::Null,
        ),
        (
            "unknown fields are ignored",
            Some("application/json"),
            Some(r#"{"Resolution": "Called back", "Other": 1}"#.into()),
            json!("Called back"),
        ),
        (
            "XML",
            Some("application/xml"),
            Some("<Resolution><Resolution>Drill</Resolution></Resolution>".into()),
            json!("Drill"),
        ),
        (
            "4,000 characters",
            None,
            Some(json!({"Resolution": long}).to_string()),
            json!(long),
        ),
    ];
    for (seq, (name, content_type, body, expected)) in cases.into_iter().enumerate() {
        let sent = format!("2026-03-01T10:{seq:02}:00Z");
        let (_, id) = raise(&app, "1000", DEVICE, seq as i64, &sent).await;
        let mut request = resolve(&id);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{name}");
        let alert: Value = response.json().await.unwrap();
        assert_eq!(alert["AlertId"], id, "{name}");
        assert_eq!(alert["Status"], "Resolved", "{name}");
        assert!(alert["AcknowledgedBy"].is_null(), "{name}");
        assert_eq!(alert["Resolution"], expected, "{name}");
    }

    // Bad bodies are 400 and change nothing.
    let (_, id) = raise(&app, "1000", DEVICE, 99, "2026-03-01T11:00:00Z").await;
    let path = alert_path("1000", &id);
    let (etag, before) = read(&app, &path).await;
    let too_long = resolve(&id)
        .json(&json!({"Resolution": "x".repeat(4001)}))
        .send()
        .await
        .unwrap();
    let problem = assert_problem(too_long, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Resolution"]);
    let not_text = resolve(&id)
        .json(&json!({"Resolution": 5}))
        .send()
        .await
        .unwrap();
    let problem = assert_problem(not_text, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Resolution"]);
    let not_an_object = resolve(&id).json(&json!("done")).send().await.unwrap();
    assert_problem(not_an_object, 400, "validation_failed").await;
    let malformed = resolve(&id)
        .header("content-type", "application/json")
        .body("{\"Resolution\": ")
        .send()
        .await
        .unwrap();
    assert_problem(malformed, 400, "malformed_json").await;
    let form = resolve(&id)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("Resolution=done")
        .send()
        .await
        .unwrap();
    assert_problem(form, 415, "unsupported_media_type").await;
    assert_eq!(read(&app, &path).await, (etag, before));
}

async fn a_new_match_after_resolving_opens_a_new_alert(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let (_, first) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let (_, joined) = raise(&app, "1000", DEVICE, 2, "2026-03-01T10:01:00Z").await;
    assert_eq!(joined, first);
    // Acknowledged alerts are still joined.
    let response = app
        .admin
        .post(
            &format!("{}/acknowledge", alert_path("1000", &first)),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let (_, joined) = raise(&app, "1000", DEVICE, 3, "2026-03-01T10:02:00Z").await;
    assert_eq!(joined, first);
    let (_, acknowledged) = read(&app, &alert_path("1000", &first)).await;
    assert_eq!(acknowledged["MatchCount"], 3);
    assert_eq!(acknowledged["Status"], "Acknowledged");

    let response = app
        .admin
        .post(
            &format!("{}/resolve", alert_path("1000", &first)),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let (message, second) = raise(&app, "1000", DEVICE, 4, "2026-03-01T10:03:00Z").await;
    assert_ne!(second, first);
    let (_, alert) = read(&app, &alert_path("1000", &second)).await;
    assert_eq!(alert["Status"], "Open");
    assert_eq!(alert["MatchCount"], 1);
    assert_eq!(alert["MessageId"], message);
    let (_, old) = read(&app, &alert_path("1000", &first)).await;
    assert_eq!(old["Status"], "Resolved");
    assert_eq!(old["MatchCount"], 3);
    let open = app.admin.get_json("/V2/1000/alerts?status=Open").await;
    assert_eq!(ids(&open), [second.as_str()]);
    let resolved = app.admin.get_json("/V2/1000/alerts?status=Resolved").await;
    assert_eq!(ids(&resolved), [first.as_str()]);
}

async fn a_late_message_raises_a_late_alert(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    // The device reported at 10:30 ...
    post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([position_report(2, "2026-03-01T10:30:00Z", 51.6, -0.2)]),
    )
    .await;
    // ... and an SOS sent at 10:00 arrives afterwards.
    let processed = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([sos_message(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
    )
    .await;
    assert_eq!(processed[0]["Late"], true);
    let alert_id = processed[0]["Notifications"][0]["AlertId"]
        .as_str()
        .expect("a late SOS still raises an alert");
    let (_, alert) = read(&app, &alert_path("1000", alert_id)).await;
    assert_eq!(alert["Late"], true);
    assert_eq!(alert["MessageId"], processed[0]["MessageId"]);
    // Where the SOS was sent from, not where the device is now.
    assert_eq!(alert["Latitude"], 51.5);
    assert_eq!(alert["Geofences"], json!(["Depot"]));
    // A later, in-order SOS joins it.
    let (_, joined) = raise(&app, "1000", DEVICE, 3, "2026-03-01T10:40:00Z").await;
    assert_eq!(joined, alert_id);
}

/// An id has one spelling, decimal digits: `+12`, ` 12`, `1e3` name nothing, and acting
/// on them changes nothing.
async fn an_id_spelled_otherwise_names_no_alert(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let (_, id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let before = read(&app, &alert_path("1000", &id)).await;
    for spelling in [
        format!("+{id}"),
        format!("0{id}x"),
        format!("%20{id}"),
        "1e3".into(),
    ] {
        let path = alert_path("1000", &spelling);
        assert_not_found(app.admin.get(&path).await).await;
        let acknowledge = app
            .admin
            .post(&format!("{path}/acknowledge"), &json!({}))
            .await;
        assert_not_found(acknowledge).await;
    }
    assert_eq!(read(&app, &alert_path("1000", &id)).await, before);
}

async fn alerts_outside_the_path_tenant_are_404(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    sos_setup(&app, &child, "child-device").await;
    let (_, child_alert) = raise(&app, &child, "child-device", 1, "2026-03-01T10:00:00Z").await;
    sos_setup(&app, "1000", DEVICE).await;
    let (_, root_alert) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;

    // Through its own tenant's path it is there; through the parent's it is not.
    let (etag, before) = read(&app, &alert_path(&child, &child_alert)).await;
    assert_eq!(before["TenantCode"], child);
    let through_parent = alert_path("1000", &child_alert);
    assert_not_found(app.admin.get(&through_parent).await).await;
    for action in ["acknowledge", "resolve"] {
        let response = app
            .admin
            .post(&format!("{through_parent}/{action}"), &json!({}))
            .await;
        assert_not_found(response).await;
    }
    assert_eq!(
        read(&app, &alert_path(&child, &child_alert)).await,
        (etag, before)
    );
    // The parent's list shows it only with subtenants=true.
    let own = app.admin.get_json("/V2/1000/alerts").await;
    assert_eq!(ids(&own), [root_alert.as_str()]);
    let all = app.admin.get_json("/V2/1000/alerts?subtenants=true").await;
    let mut expected = vec![child_alert.clone(), root_alert.clone()];
    expected.sort_by_key(|id| id.parse::<i64>().unwrap());
    assert_eq!(ids(&all), expected);

    // The child's administrator sees nothing of the parent's.
    let (_, child_admin) = app
        .create_user(&child, "admin@child.example", "Administrator")
        .await;
    for path in [
        alert_path(&child, &root_alert),
        alert_path("1000", &root_alert),
    ] {
        assert_not_found(child_admin.get(&path).await).await;
        assert_not_found(
            child_admin
                .post(&format!("{path}/acknowledge"), &json!({}))
                .await,
        )
        .await;
    }
    assert_not_found(child_admin.get("/V2/1000/alerts").await).await;
    let listed = child_admin
        .get_json(&format!("/V2/{child}/alerts?subtenants=true"))
        .await;
    assert_eq!(ids(&listed), [child_alert.as_str()]);
    // The child's admin acknowledges its own.
    let response = child_admin
        .post(
            &format!("{}/acknowledge", alert_path(&child, &child_alert)),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // Ids that are no alert.
    for id in ["abc", "999999", "-1", "1.0"] {
        assert_not_found(app.admin.get(&alert_path("1000", id)).await).await;
        let response = app
            .admin
            .post(&format!("{}/resolve", alert_path("1000", id)), &json!({}))
            .await;
        assert_not_found(response).await;
    }
}

/// Walks every page of `query` (pageSize 2); returns the ids in order.
async fn walk(app: &TestApp, query: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut request = app
            .admin
            .request(Method::GET, &format!("/V2/1000/alerts?pageSize=2&{query}"));
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
        pages += 1;
        assert!(pages < 20, "paging does not end");
        if token.is_none() {
            break;
        }
    }
    seen
}

async fn listing_filters_and_pages(app: TestApp) {
    create_depot(&app, "1000").await;
    create_notification(&app, "1000", &sos_notification()).await;
    let mut alerts = Vec::new();
    for i in 0..5 {
        let device = format!("device-{i}");
        register_device(&app, "1000", &device).await;
        alerts.push(
            raise(&app, "1000", &device, 1, "2026-03-01T10:00:00Z")
                .await
                .1,
        );
    }
    for i in [1, 3] {
        let path = format!("{}/acknowledge", alert_path("1000", &alerts[i]));
        assert_eq!(
            app.admin.post(&path, &json!({})).await.status(),
            StatusCode::OK
        );
    }
    let response = app
        .admin
        .post(
            &format!("{}/resolve", alert_path("1000", &alerts[4])),
            &json!({}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    // Every alert exactly once, in id order, across pages.
    assert_eq!(walk(&app, "").await, alerts);
    assert_eq!(
        walk(&app, "status=Open").await,
        [alerts[0].clone(), alerts[2].clone()]
    );
    assert_eq!(
        walk(&app, "status=Acknowledged").await,
        [alerts[1].clone(), alerts[3].clone()]
    );
    assert_eq!(walk(&app, "status=Resolved").await, [alerts[4].clone()]);
    assert_eq!(walk(&app, "deviceId=device-2").await, [alerts[2].clone()]);
    assert_eq!(
        walk(&app, "deviceId=device-3&status=Open").await,
        Vec::<String>::new()
    );
    assert_eq!(walk(&app, "deviceId=nope").await, Vec::<String>::new());
    // fromDate is inclusive, toDate exclusive (both on RaisedAt).
    let raised_at = |alert: Value| alert["RaisedAt"].as_str().unwrap().to_string();
    let t1 = raised_at(read(&app, &alert_path("1000", &alerts[1])).await.1);
    let t3 = raised_at(read(&app, &alert_path("1000", &alerts[3])).await.1);
    assert_eq!(
        walk(&app, &format!("fromDate={t1}")).await,
        alerts[1..].to_vec()
    );
    assert_eq!(
        walk(&app, &format!("toDate={t1}")).await,
        alerts[..1].to_vec()
    );
    assert_eq!(
        walk(&app, &format!("fromDate={t1}&toDate={t3}")).await,
        alerts[1..3].to_vec()
    );
    assert_eq!(
        walk(&app, &format!("fromDate={t1}&toDate={t1}")).await,
        Vec::<String>::new()
    );
    // Also with an offset and without paging.
    let listed = app
        .admin
        .get_json(&format!(
            "/V2/1000/alerts?fromDate={}&status=Acknowledged",
            t1.replace('Z', "%2B00:00")
        ))
        .await;
    assert_eq!(ids(&listed), [alerts[1].clone(), alerts[3].clone()]);
    let first_page = app.admin.get("/V2/1000/alerts?pageSize=5").await;
    assert!(first_page.headers().get("x-continuationtoken").is_none());
    assert_eq!(ids(&first_page.json().await.unwrap()), alerts);
}

async fn bad_list_parameters_are_400(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    register_device(&app, "1000", "other").await;
    raise(&app, "1000", "other", 1, "2026-03-01T10:00:00Z").await;
    for (query, field) in [
        ("status=Closed", "status"),
        ("status=open", "status"),
        ("status=", "status"),
        ("fromDate=yesterday", "fromDate"),
        ("toDate=2026-13-01T00:00:00Z", "toDate"),
        (
            "fromDate=2026-03-02T00:00:00Z&toDate=2026-03-01T00:00:00Z",
            "fromDate",
        ),
        ("subtenants=maybe", "subtenants"),
        ("pageSize=0", "pageSize"),
        ("pageSize=1001", "pageSize"),
        ("pageSize=many", "pageSize"),
        // PostgreSQL text cannot hold NUL: refused before any query.
        ("deviceId=a%00b", "deviceId"),
    ] {
        let response = app.admin.get(&format!("/V2/1000/alerts?{query}")).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{query}");
    }
    // A token is bound to its listing (filters included) and cannot be forged.
    let first = app.admin.get("/V2/1000/alerts?pageSize=1").await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .unwrap()
        .to_string();
    for (query, token) in [
        ("pageSize=1&status=Open", token.as_str()),
        ("pageSize=1&subtenants=true", token.as_str()),
        ("pageSize=1", "forged.token"),
    ] {
        let response = app
            .admin
            .request(Method::GET, &format!("/V2/1000/alerts?{query}"))
            .header("X-CONTINUATIONTOKEN", token)
            .send()
            .await
            .unwrap();
        assert_problem(response, 400, "invalid_continuation_token").await;
    }
    let second = app
        .admin
        .request(Method::GET, "/V2/1000/alerts?pageSize=1")
        .header("X-CONTINUATIONTOKEN", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), StatusCode::OK);
    assert!(second.headers().get("x-continuationtoken").is_none());
    assert_eq!(
        second
            .json::<Value>()
            .await
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

const CLIENTS: usize = 8;

/// Of 8 parallel acknowledgements of one Open alert exactly one wins; the rest are 409.
/// Then the same for resolving. (`transition_alert` locks the row: `check_version`.)
async fn one_of_eight_parallel_acknowledgements_wins(app: TestApp) {
    sos_setup(&app, "1000", DEVICE).await;
    let (_, alert_id) = raise(&app, "1000", DEVICE, 1, "2026-03-01T10:00:00Z").await;
    let path = alert_path("1000", &alert_id);
    for (action, status) in [("acknowledge", "Acknowledged"), ("resolve", "Resolved")] {
        let requests = (0..CLIENTS).map(|i| {
            let request = app
                .admin
                .request(Method::POST, &format!("{path}/{action}"))
                .json(&json!({"Resolution": format!("by client {i}")}));
            async move {
                let response = request.send().await.expect("POST");
                let status = response.status();
                let body: Value = response.json().await.expect("json");
                (status, body)
            }
        });
        let outcomes = futures::future::join_all(requests).await;
        let winners: Vec<&Value> = outcomes
            .iter()
            .filter(|(s, _)| *s == StatusCode::OK)
            .map(|(_, b)| b)
            .collect();
        let conflicts = outcomes
            .iter()
            .filter(|(s, b)| *s == StatusCode::CONFLICT && b["code"] == "conflict")
            .count();
        assert_eq!(
            (winners.len(), conflicts),
            (1, CLIENTS - 1),
            "{action}: {outcomes:?}"
        );
        let (etag, stored) = read(&app, &path).await;
        assert_eq!(stored["Status"], status);
        assert_eq!(&stored, winners[0], "the stored alert is the winner's");
        assert_eq!(stored["ETag"], etag.trim_matches('"'));
    }
}
