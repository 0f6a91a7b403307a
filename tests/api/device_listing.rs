//! Listing devices the way the console reads them (docs/api.md, "Devices"): a tenant's
//! devices, or its whole subtree with `subtenants=true`, paged with `X-CONTINUATIONTOKEN`,
//! each device naming its `TenantCode`; and a device's MO messages newest first.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};
use crate::mo_messages::position_report;

backend_tests!(
    subtenants_lists_the_subtree_in_pages_and_names_each_tenant,
    a_subtree_listing_never_reaches_outside_the_callers_scope,
    bad_paging_of_devices_is_400,
    tenant_code_is_read_only,
    messages_are_listed_newest_first_in_pages,
    mt_messages_are_listed_newest_first_in_pages,
);

async fn register(app: &TestApp, tenant: &str, id: &str) {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices"),
            &json!({"DeviceId": id, "DeviceType": "InReach", "FriendlyName": format!("{id} van")}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "register {id}");
}

/// (device id, tenant code) of each listed device, in listing order.
fn owners(devices: &[Value]) -> Vec<(String, String)> {
    devices
        .iter()
        .map(|d| {
            (
                d["DeviceId"].as_str().expect("DeviceId").to_string(),
                d["TenantCode"].as_str().expect("TenantCode").to_string(),
            )
        })
        .collect()
}

/// A tenant `parent` with a child and a grandchild, a sibling of `parent`, and devices
/// in each: (parent, child, grandchild, sibling).
async fn family(app: &TestApp) -> (String, String, String, String) {
    let parent = app.create_tenant("1000", "Parent").await;
    let child = app.create_tenant(&parent, "Child").await;
    let grandchild = app.create_tenant(&child, "Grandchild").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    register(app, "1000", "root-1").await;
    register(app, &parent, "p-1").await;
    register(app, &child, "c-1").await;
    register(app, &parent, "p-2").await;
    register(app, &grandchild, "g-1").await;
    register(app, &sibling, "s-1").await;
    // The same id in two tenants of the subtree: both are listed, each with its tenant.
    register(app, &child, "p-1").await;
    (parent, child, grandchild, sibling)
}

async fn subtenants_lists_the_subtree_in_pages_and_names_each_tenant(app: TestApp) {
    let (parent, child, grandchild, _) = family(&app).await;
    let first = app
        .admin
        .get(&format!("/V2/{parent}/devices?subtenants=true&pageSize=2"))
        .await;
    assert_eq!(first.status(), StatusCode::OK);
    assert!(first.headers().contains_key("x-continuationtoken"));
    let page: Vec<Value> = first.json().await.expect("json");
    assert_eq!(page.len(), 2);
    let all = app
        .admin
        .get_all_pages(&format!("/V2/{parent}/devices?subtenants=true&pageSize=2"))
        .await;
    let expected: Vec<(String, String)> = [
        ("p-1", &parent),
        ("c-1", &child),
        ("p-2", &parent),
        ("g-1", &grandchild),
        ("p-1", &child),
    ]
    .iter()
    .map(|(id, t)| (id.to_string(), t.to_string()))
    .collect();
    assert_eq!(owners(&all), expected, "registration order, whole subtree");
    // The device state is on every listed record.
    assert!(all.iter().all(|d| d.get("LastPosition").is_some()));
    // Without subtenants: the tenant's own devices, in one page when they fit.
    let own = app.admin.get(&format!("/V2/{parent}/devices")).await;
    assert!(!own.headers().contains_key("x-continuationtoken"));
    let own: Vec<Value> = own.json().await.expect("json");
    assert_eq!(
        owners(&own),
        [
            ("p-1".to_string(), parent.clone()),
            ("p-2".to_string(), parent.clone())
        ]
    );
    // A single device names its tenant too.
    let one = app
        .admin
        .get_json(&format!("/V2/{grandchild}/devices/g-1"))
        .await;
    assert_eq!(one["TenantCode"], grandchild.as_str());
}

async fn a_subtree_listing_never_reaches_outside_the_callers_scope(app: TestApp) {
    let (parent, child, grandchild, sibling) = family(&app).await;
    let (_, manager) = app
        .create_user(&child, "fleet@child.example", "ReadOnly")
        .await;
    let seen = manager
        .get_all_pages(&format!("/V2/{child}/devices?subtenants=true&pageSize=1"))
        .await;
    let mut tenants: Vec<String> = owners(&seen).into_iter().map(|(_, t)| t).collect();
    tenants.sort();
    tenants.dedup();
    let mut expected = vec![child.clone(), grandchild.clone()];
    expected.sort();
    assert_eq!(tenants, expected);
    // The parent, a sibling and the root are out of the caller's scope: 404, as if absent.
    for outside in [&parent, &sibling, &"1000".to_string()] {
        assert_not_found(
            manager
                .get(&format!("/V2/{outside}/devices?subtenants=true"))
                .await,
        )
        .await;
    }
    // The root's administrator sees everything, its own devices included.
    let everything = app
        .admin
        .get_all_pages("/V2/1000/devices?subtenants=true")
        .await;
    assert!(owners(&everything).contains(&("s-1".to_string(), sibling.clone())));
    assert!(owners(&everything).contains(&("root-1".to_string(), "1000".to_string())));
}

async fn bad_paging_of_devices_is_400(app: TestApp) {
    register(&app, "1000", "a").await;
    register(&app, "1000", "b").await;
    for (query, field) in [
        ("pageSize=0", "pageSize"),
        ("pageSize=10001", "pageSize"),
        ("pageSize=many", "pageSize"),
        ("subtenants=maybe", "subtenants"),
    ] {
        let response = app.admin.get(&format!("/V2/1000/devices?{query}")).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{query}");
    }
    let first = app.admin.get("/V2/1000/devices?pageSize=1").await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .expect("token")
        .to_string();
    // A token belongs to its listing (tenant and subtenants) and cannot be forged.
    let other = app.create_tenant("1000", "Other").await;
    for (path, token) in [
        (
            "/V2/1000/devices?pageSize=1&subtenants=true".to_string(),
            token.as_str(),
        ),
        (format!("/V2/{other}/devices?pageSize=1"), token.as_str()),
        ("/V2/1000/devices?pageSize=1".to_string(), "forged.token"),
    ] {
        let response = app
            .admin
            .request(Method::GET, &path)
            .header("X-CONTINUATIONTOKEN", token)
            .send()
            .await
            .expect("GET");
        assert_problem(response, 400, "invalid_continuation_token").await;
    }
    let second = app
        .admin
        .request(Method::GET, "/V2/1000/devices?pageSize=1")
        .header("X-CONTINUATIONTOKEN", &token)
        .send()
        .await
        .expect("GET");
    assert_eq!(second.status(), StatusCode::OK);
    assert!(!second.headers().contains_key("x-continuationtoken"));
    let page: Vec<Value> = second.json().await.expect("json");
    assert_eq!(page[0]["DeviceId"], "b");
}

async fn tenant_code_is_read_only(app: TestApp) {
    let other = app.create_tenant("1000", "Other").await;
    // Sent on POST: ignored, the device is the path tenant's.
    let response = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "x1", "DeviceType": "InReach", "TenantCode": other}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        app.admin.get_json("/V2/1000/devices/x1").await["TenantCode"],
        "1000"
    );
    assert_not_found(app.admin.get(&format!("/V2/{other}/devices/x1")).await).await;
    // A patch of it is refused and changes nothing.
    let patched = app
        .admin
        .patch(
            "/V2/1000/devices/x1",
            &json!([{"op": "replace", "path": "/TenantCode", "value": other}]),
        )
        .await;
    assert_problem(patched, 400, "validation_failed").await;
    assert_eq!(
        app.admin.get_json("/V2/1000/devices/x1").await["TenantCode"],
        "1000"
    );
}

async fn messages_are_listed_newest_first_in_pages(app: TestApp) {
    register(&app, "1000", "m1").await;
    let batch = json!([
        position_report(1, "2026-03-01T10:00:00Z", 51.0, -1.0),
        position_report(2, "2026-03-01T12:00:00Z", 51.2, -1.2),
        position_report(3, "2026-03-01T11:00:00Z", 51.1, -1.1),
        position_report(4, "2026-03-01T13:00:00Z", 51.3, -1.3),
    ]);
    let response = app
        .admin
        .post("/V2/1000/devices/m1/momessages", &batch)
        .await;
    assert!(response.status().is_success(), "post messages");
    let times = |messages: &[Value]| -> Vec<String> {
        messages
            .iter()
            .map(|m| m["SentFromDevice"].as_str().expect("time")[11..13].to_string())
            .collect()
    };
    let newest = app
        .admin
        .get_all_pages("/V2/1000/devices/m1/momessages?newestFirst=true&pageSize=3")
        .await;
    assert_eq!(times(&newest), ["13", "12", "11", "10"]);
    let oldest = app
        .admin
        .get_all_pages("/V2/1000/devices/m1/momessages?pageSize=3")
        .await;
    assert_eq!(times(&oldest), ["10", "11", "12", "13"]);
    // With a window: the newest inside it first.
    let window = app
        .admin
        .get_all_pages(
            "/V2/1000/devices/m1/momessages?newestFirst=true&pageSize=1\
             &fromDate=2026-03-01T10:30:00Z&toDate=2026-03-01T13:00:00Z",
        )
        .await;
    assert_eq!(times(&window), ["12", "11"]);
    // The order is part of the listing: an oldest-first token does not page newest first.
    let first = app
        .admin
        .get("/V2/1000/devices/m1/momessages?pageSize=1")
        .await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .expect("token")
        .to_string();
    let mixed = app
        .admin
        .request(
            Method::GET,
            "/V2/1000/devices/m1/momessages?pageSize=1&newestFirst=true",
        )
        .header("X-CONTINUATIONTOKEN", token)
        .send()
        .await
        .expect("GET");
    assert_problem(mixed, 400, "invalid_continuation_token").await;
    let bad = app
        .admin
        .get("/V2/1000/devices/m1/momessages?newestFirst=sometimes")
        .await;
    let problem = assert_problem(bad, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["newestFirst"]);
}

async fn mt_messages_are_listed_newest_first_in_pages(app: TestApp) {
    register(&app, "1000", "mt1").await;
    for text in ["one", "two", "three"] {
        let response = app
            .admin
            .post(
                "/V2/1000/devices/mt1/mtmessages",
                &json!({"Type": "Text", "Message": text}),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "queue {text}");
    }
    let texts = |messages: &[Value]| -> Vec<String> {
        messages
            .iter()
            .map(|m| m["Message"].as_str().expect("text").to_string())
            .collect()
    };
    let newest = app
        .admin
        .get_all_pages("/V2/1000/devices/mt1/mtmessages?newestFirst=true&pageSize=2")
        .await;
    assert_eq!(texts(&newest), ["three", "two", "one"]);
    let oldest = app
        .admin
        .get_all_pages("/V2/1000/devices/mt1/mtmessages?pageSize=2")
        .await;
    assert_eq!(texts(&oldest), ["one", "two", "three"]);
    // With a status filter, and an oldest-first token refused newest first.
    let queued = app
        .admin
        .get_all_pages("/V2/1000/devices/mt1/mtmessages?newestFirst=true&status=Queued")
        .await;
    assert_eq!(texts(&queued), ["three", "two", "one"]);
    let first = app
        .admin
        .get("/V2/1000/devices/mt1/mtmessages?pageSize=1")
        .await;
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .expect("token")
        .to_string();
    let mixed = app
        .admin
        .request(
            Method::GET,
            "/V2/1000/devices/mt1/mtmessages?pageSize=1&newestFirst=true",
        )
        .header("X-CONTINUATIONTOKEN", token)
        .send()
        .await
        .expect("GET");
    assert_problem(mixed, 400, "invalid_continuation_token").await;
    let bad = app
        .admin
        .get("/V2/1000/devices/mt1/mtmessages?newestFirst=2")
        .await;
    let problem = assert_problem(bad, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["newestFirst"]);
}
