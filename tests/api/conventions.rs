use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    unknown_routes_and_methods_are_problems,
    unsupported_content_type_is_415,
    oversized_body_is_413_and_stores_nothing,
    unsatisfiable_accept_is_406,
    request_ids_are_echoed_or_generated,
    operational_endpoints_answer,
    openapi_describes_every_route,
    docs_page_is_served_offline,
    responses_are_negotiated,
    xml_and_text_inputs_round_trip,
    ieee754_parameter_is_echoed,
    metrics_are_exported,
    data_and_tokens_survive_a_restart,
    an_array_is_not_a_record,
);

async fn unknown_routes_and_methods_are_problems(app: TestApp) {
    assert_not_found(app.admin.get("/nope").await).await;
    assert_not_found(app.admin.get("/V2/1000/nothing-here").await).await;
    let patch = app
        .admin
        .request(Method::PATCH, "/V2/1000")
        .send()
        .await
        .unwrap();
    assert_problem(patch, 405, "method_not_allowed").await;
}

async fn unsupported_content_type_is_415(app: TestApp) {
    let response = app
        .admin
        .request(Method::POST, "/V2/1000")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("Description=Acme")
        .send()
        .await
        .unwrap();
    assert_problem(response, 415, "unsupported_media_type").await;
    assert_eq!(app.admin.get_json("/V2/1000/tenants").await, json!([]));
}

async fn oversized_body_is_413_and_stores_nothing(app: TestApp) {
    let body = json!({"Description": "Big", "Properties": {"blob": "x".repeat(1024 * 1024)}});
    assert_problem(
        app.admin.post("/V2/1000", &body).await,
        413,
        "payload_too_large",
    )
    .await;
    assert_eq!(app.admin.get_json("/V2/1000/tenants").await, json!([]));
}

async fn unsatisfiable_accept_is_406(app: TestApp) {
    let response = app
        .admin
        .request(Method::GET, "/V2/1000")
        .header("accept", "image/png")
        .send()
        .await
        .unwrap();
    assert_problem(response, 406, "not_acceptable").await;
    let csv_single = app
        .admin
        .request(Method::GET, "/V2/1000")
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_problem(csv_single, 406, "not_acceptable").await;
    let fallback = app
        .admin
        .request(Method::GET, "/V2/1000")
        .header("accept", "image/png, application/json;q=0.5")
        .send()
        .await
        .unwrap();
    assert_eq!(fallback.status(), StatusCode::OK);
}

async fn request_ids_are_echoed_or_generated(app: TestApp) {
    let given = app
        .admin
        .request(Method::GET, "/V2/1000")
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(given.headers()["x-request-id"], "abc-123");
    let generated = app.anonymous().get("/healthz").await;
    assert_eq!(
        generated.headers()["x-request-id"].to_str().unwrap().len(),
        36
    );
    let problem = assert_problem(app.anonymous().get("/V2/1000").await, 401, "unauthorized").await;
    assert!(problem["requestId"].is_string());
}

async fn operational_endpoints_answer(app: TestApp) {
    let health = app.anonymous().get("/healthz").await;
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(health.text().await.unwrap(), "ok");
    assert_eq!(
        app.anonymous().get("/readyz").await.status(),
        StatusCode::OK
    );
}

async fn openapi_describes_every_route(app: TestApp) {
    let doc: Value = app
        .anonymous()
        .get("/openapi.json")
        .await
        .json()
        .await
        .unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/V2/{tenantVarCode}", &["get", "post", "put", "delete"][..]),
        ("/V2/{tenantVarCode}/tenants", &["get"]),
        ("/V2/{tenantVarCode}/users", &["get", "post"]),
        (
            "/V2/{tenantVarCode}/users/{userId}",
            &["get", "put", "patch", "delete"],
        ),
        ("/V2/{tenantVarCode}/userprofile", &["get"]),
        (
            "/V2/{tenantVarCode}/userprofile/{userId}",
            &["get", "put", "patch"],
        ),
        ("/V2/{tenantVarCode}/devices", &["get", "post"]),
        (
            "/V2/{tenantVarCode}/devices/{deviceId}",
            &["get", "put", "patch", "delete"],
        ),
        ("/V2/{tenantVarCode}/groups", &["get", "post"]),
        (
            "/V2/{tenantVarCode}/groups/{groupId}",
            &["get", "put", "delete"],
        ),
        ("/V2/{tenantVarCode}/deleteddevices", &["get"]),
        ("/V2/{tenantVarCode}/deleteddevices/{deviceId}", &["get"]),
        ("/V2/{tenantVarCode}/addressbookcontacts", &["get", "post"]),
        (
            "/V2/{tenantVarCode}/addressbookcontacts/{contactId}",
            &["get", "put", "delete"],
        ),
        (
            "/V2/{tenantVarCode}/addressbookdistributionlists",
            &["get", "post"],
        ),
        (
            "/V2/{tenantVarCode}/addressbookdistributionlists/{listId}",
            &["get", "put", "delete"],
        ),
        ("/V2/{tenantVarCode}/eventnotifications", &["get", "post"]),
        (
            "/V2/{tenantVarCode}/eventnotifications/{notificationId}",
            &["get", "put", "delete"],
        ),
        (
            "/V2/{tenantVarCode}/groups/{groupId}/eventnotifications",
            &["get", "post"],
        ),
        (
            "/V2/{tenantVarCode}/groups/{groupId}/eventnotifications/{notificationId}",
            &["get", "put", "delete"],
        ),
        ("/V2/{tenantVarCode}/geofences", &["get", "post"]),
        (
            "/V2/{tenantVarCode}/geofences/{geofenceId}",
            &["get", "put", "delete"],
        ),
        ("/V2/{tenantVarCode}/webhooks", &["get", "put"]),
        ("/V2/{tenantVarCode}/tenantexternallinks", &["get", "post"]),
        (
            "/V2/{tenantVarCode}/tenantexternallinks/{externalLinkId}",
            &["get", "delete"],
        ),
        ("/healthz", &["get"]),
        ("/readyz", &["get"]),
        ("/metrics", &["get"]),
    ] {
        for method in methods {
            assert!(
                paths[path][method].is_object(),
                "{method} {path} documented"
            );
        }
    }
    // Every operation declares each of its parameters once, and every path parameter.
    for (path, item) in paths {
        for (method, operation) in item.as_object().unwrap() {
            let names: Vec<String> = operation["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .map(|p| format!("{}:{}", p["in"], p["name"]))
                        .collect()
                })
                .unwrap_or_default();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(
                unique.len(),
                names.len(),
                "duplicate parameters in {method} {path}: {names:?}"
            );
            for segment in path.split('/').filter(|s| s.starts_with('{')) {
                let name = segment.trim_matches(|c| c == '{' || c == '}');
                assert!(
                    names.contains(&format!("\"path\":\"{name}\"")),
                    "{method} {path} declares {name}"
                );
            }
        }
    }
    let list = &doc["components"]["schemas"]["DistributionListInput"];
    assert_eq!(list["additionalProperties"], false);
    assert!(
        list["required"]
            .as_array()
            .unwrap()
            .contains(&json!("ListName"))
    );
    let tenant = &doc["components"]["schemas"]["Tenant"];
    assert_eq!(tenant["properties"]["Description"]["maxLength"], 250);
    assert!(
        tenant["required"]
            .as_array()
            .unwrap()
            .contains(&json!("Description"))
    );
    assert!(doc["components"]["securitySchemes"]["basic"].is_object());
}

async fn docs_page_is_served_offline(app: TestApp) {
    let page = app.anonymous().get("/docs/").await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("swagger"), "Swagger UI page");
    assert!(!html.contains("https://"), "no CDN assets");
    let script = app.anonymous().get("/docs/swagger-ui-bundle.js").await;
    assert_eq!(script.status(), StatusCode::OK);
}

async fn get_as(app: &TestApp, path: &str, accept: &str) -> (String, String) {
    let response = app
        .admin
        .request(Method::GET, path)
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "GET {path} as {accept}");
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    (content_type, response.text().await.unwrap())
}

async fn responses_are_negotiated(app: TestApp) {
    app.create_tenant("1000", "Acme").await;
    let (ct, xml) = get_as(&app, "/V2/1000", "application/xml").await;
    assert_eq!(ct, "application/xml");
    assert!(xml.contains("<Tenant><TenantCode>1000</TenantCode><Description>Root</Description>"));
    let (ct, _) = get_as(&app, "/V2/1000", "text/xml").await;
    assert_eq!(ct, "text/xml");
    let (ct, text) = get_as(&app, "/V2/1000", "text/plain").await;
    assert!(ct.starts_with("text/plain"));
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["TenantCode"],
        "1000"
    );
    let (ct, _) = get_as(&app, "/V2/1000", "text/json").await;
    assert_eq!(ct, "text/json");
    let (ct, _) = get_as(&app, "/V2/1000", "application/octet-stream").await;
    assert_eq!(ct, "application/octet-stream");
    let (ct, list_xml) = get_as(&app, "/V2/1000/tenants", "application/xml").await;
    assert_eq!(ct, "application/xml");
    assert!(list_xml.contains("<ArrayOfTenant><Tenant>"));
    let (ct, csv) = get_as(&app, "/V2/1000/tenants", "text/csv").await;
    assert!(ct.starts_with("text/csv"));
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("TenantCode,Description,"));
    assert!(lines.next().unwrap().contains(",Acme,"));
}

async fn xml_and_text_inputs_round_trip(app: TestApp) {
    let xml = "<Tenant><Description>From XML</Description><TimeZoneId>Europe/Paris</TimeZoneId>\
               <Properties><Region>EU</Region></Properties></Tenant>";
    let response = app
        .admin
        .request(Method::POST, "/V2/1000")
        .header("content-type", "application/xml")
        .body(xml)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let created: Value = response.json().await.unwrap();
    assert_eq!(created["Description"], "From XML");
    assert_eq!(created["Properties"]["Region"], "EU");
    let code = created["TenantCode"].as_str().unwrap();
    // XML out, XML back in: the same record.
    let (_, out) = get_as(&app, &format!("/V2/{code}"), "application/xml").await;
    let put = app
        .admin
        .request(Method::PUT, &format!("/V2/{code}"))
        .header("content-type", "text/xml")
        .body(out)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::OK);
    let after = app.admin.get_json(&format!("/V2/{code}")).await;
    assert_eq!(after["Description"], "From XML");
    assert_eq!(after["TimeZoneId"], "Europe/Paris");
    assert_eq!(after["Properties"], json!({"Region": "EU"}));

    let text = app
        .admin
        .request(Method::POST, "/V2/1000")
        .header("content-type", "text/plain")
        .body(r#"{"Description":"From text"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), StatusCode::OK);
    let broken = app
        .admin
        .request(Method::POST, "/V2/1000")
        .header("content-type", "application/xml")
        .body("<Tenant><Description>oops</Tenant>")
        .send()
        .await
        .unwrap();
    assert_problem(broken, 400, "malformed_xml").await;
    assert_eq!(
        app.admin
            .get_json("/V2/1000/tenants")
            .await
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn ieee754_parameter_is_echoed(app: TestApp) {
    let response = app
        .admin
        .request(Method::GET, "/V2/1000")
        .header("accept", "application/json;IEEE754Compatible=true")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "application/json; IEEE754Compatible=true"
    );
    let plain = app.admin.get("/V2/1000").await;
    assert_eq!(plain.headers()["content-type"], "application/json");
}

async fn metrics_are_exported(app: TestApp) {
    assert_eq!(app.admin.get("/V2/1000").await.status(), StatusCode::OK);
    let response = app.anonymous().get("/metrics").await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(text.contains("safetrack_http_requests_total"), "{text}");
    assert!(
        text.contains("safetrack_http_request_duration_seconds_bucket"),
        "fixed buckets"
    );
}

/// With a limit configured, a client over it gets 429 with Retry-After.
#[tokio::test]
async fn rate_limit_answers_429_with_retry_after() {
    use safetrack::app::AppConfig;
    use safetrack::http::rate_limit::RateLimit;
    let config = AppConfig {
        rate_limit: RateLimit {
            per_second: 1,
            burst: 2,
        },
        ..AppConfig::default()
    };
    let app = crate::common::spawn_app_with(crate::common::Backend::Sqlite, config)
        .await
        .unwrap();
    assert_eq!(app.admin.get("/V2/1000").await.status(), StatusCode::OK);
    assert_eq!(app.admin.get("/V2/1000").await.status(), StatusCode::OK);
    let limited = app.admin.get("/V2/1000").await;
    let retry_after: u64 = limited.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    assert_problem(limited, 429, "rate_limited").await;
    // Operational endpoints are not limited.
    assert_eq!(
        app.anonymous().get("/healthz").await.status(),
        StatusCode::OK
    );
}

async fn data_and_tokens_survive_a_restart(app: TestApp) {
    let code = app.create_tenant("1000", "Durable").await;
    app.create_user(&code, "first@example.com", "User").await;
    app.create_user(&code, "second@example.com", "User").await;
    let first_page = app.admin.get(&format!("/V2/{code}/users?pageSize=1")).await;
    let token = first_page.headers()["x-continuationtoken"]
        .to_str()
        .unwrap()
        .to_string();

    let app = app.restart().await;
    assert_eq!(
        app.admin.get_json(&format!("/V2/{code}")).await["Description"],
        "Durable"
    );
    let user = app.client("second@example.com", crate::common::PASSWORD);
    assert_eq!(
        user.get(&format!("/V2/{code}")).await.status(),
        StatusCode::OK
    );
    let next = app
        .admin
        .request(Method::GET, &format!("/V2/{code}/users?pageSize=1"))
        .header("X-CONTINUATIONTOKEN", token)
        .send()
        .await
        .unwrap();
    assert_eq!(
        next.status(),
        StatusCode::OK,
        "tokens are signed with the stored secret"
    );
    let page: Value = next.json().await.unwrap();
    assert_eq!(page[0]["Username"], "second@example.com");
    // Bootstrapping again created no second administrator.
    let admins = app.admin.get_json("/V2/1000/users").await;
    assert_eq!(admins.as_array().unwrap().len(), 1);
}

/// serde would read a record from an array, item by item in field order; the API does
/// not: an array where the operation takes a record is a 400 naming the body, and
/// nothing is stored. Operations that take a list still take an array.
async fn an_array_is_not_a_record(app: TestApp) {
    let webhooks = || async {
        let response = app.admin.get("/V2/1000/webhooks").await;
        (response.status(), response.text().await.unwrap())
    };
    let webhooks_before = webhooks().await;
    let registered = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "nested-1", "DeviceType": "InReach"}),
        )
        .await;
    assert_eq!(registered.status(), StatusCode::OK);
    // At the top level (the field is the body), and below it, named by its path.
    let cases = [
        (Method::POST, "/V2/1000/groups", json!(["Vans"]), "body"),
        (
            Method::POST,
            "/V2/1000/users",
            json!(["array@example.com", "Password-1234"]),
            "body",
        ),
        (
            Method::POST,
            "/V2/1000/devices",
            json!(["array-1", "InReach"]),
            "body",
        ),
        (
            Method::PUT,
            "/V2/1000/webhooks",
            json!([[{"Url": "https://example.com/hook", "Device": true}]]),
            "body",
        ),
        (
            Method::PUT,
            "/V2/1000/webhooks",
            json!({"Urls": [["https://example.com/hook", true]]}),
            "Urls[0]",
        ),
        (
            Method::POST,
            "/V2/1000/devices/nested-1/momessages",
            json!([{"MessageType": "AutomaticPositionReport", "Position": [51.5, -0.1]}]),
            "[0].Position",
        ),
    ];
    for (method, path, body, field) in cases {
        let response = app
            .admin
            .request(method.clone(), path)
            .json(&body)
            .send()
            .await
            .unwrap();
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{method} {path}");
        let message = problem["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(message.contains("sequence"), "{method} {path}: {problem:#}");
    }
    assert_eq!(app.admin.get_json("/V2/1000/groups").await, json!([]));
    let devices = app.admin.get_json("/V2/1000/devices").await;
    assert_eq!(devices.as_array().map(Vec::len), Some(1), "{devices:#}");
    assert_eq!(
        devices[0]["DeviceId"], "nested-1",
        "only the one registered above"
    );
    let users = app.admin.get_json("/V2/1000/users").await;
    assert_eq!(users.as_array().map(Vec::len), Some(1), "{users:#}");
    assert_eq!(webhooks().await, webhooks_before);
    assert_eq!(
        app.admin
            .get_json("/V2/1000/devices/nested-1/momessages")
            .await,
        json!([])
    );

    // An operation that takes a list (JSON Patch) still takes an array.
    let (user, _) = app.create_user("1000", "listed@example.com", "User").await;
    let patch = json!([{"op": "replace", "path": "/FirstName", "value": "Ada"}]);
    let response = app
        .admin
        .patch(&format!("/V2/1000/users/{user}"), &patch)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}
