//! OsmAnd / Traccar Client through a real HTTP client: query, form and JSON reports on
//! both routes (token in the path, token as Bearer), into the one ingest pipeline; the
//! queued MT text in the answer; every refusal a 4xx problem that stores nothing.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::alerts::create_notification;
use crate::alerts::sos_notification;
use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};
use crate::gateway_support::{alerts, device, gateway_token, messages, raw_request_head, register};

backend_tests!(
    query_and_form_reports_on_both_routes,
    traccar_client_json,
    alarm_sos_raises_an_alert,
    the_answer_carries_the_oldest_queued_text,
    a_resent_report_is_stored_once,
    refusals_store_nothing,
    secondary_ids_and_ambiguous_ids,
    the_token_stays_out_of_logs_and_metrics,
    a_trailing_slash_is_the_same_url,
    a_bad_path_token_is_refused_before_the_body_is_read,
);

const T: &str = "1772359200"; // 2026-03-01T10:00:00Z

fn path_url(app: &TestApp, token: &str) -> String {
    format!("{}/gateways/osmand/{}", app.base, urlencoding(token))
}

fn urlencoding(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

async fn query_and_form_reports_on_both_routes(app: TestApp) {
    register(&app, "1000", "phone-1", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "a").await;
    let http = reqwest::Client::new();

    // GET, token in the path.
    let response = http
        .get(format!(
            "{}?id=phone-1&lat=51.5&lon=-0.12&timestamp={T}&speed=10&bearing=90&altitude=12&accuracy=5&batt=77&hdop=1.2&cell=234,15",
            path_url(&app, &token)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.text().await.unwrap().is_empty());

    // POST form body, Bearer token.
    let response = http
        .post(format!("{}/gateways/osmand", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("deviceid=phone-1&location=51.6,-0.2&timestamp=2026-03-01T10:01:00Z")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    // POST with the fields in the query and no body (older Traccar Client).
    let response = http
        .post(format!(
            "{}?id=phone-1&lat=51.7&lon=-0.3&timestamp=1772359320000",
            path_url(&app, &token)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    // GET with the Bearer token.
    let response = http
        .get(format!(
            "{}/gateways/osmand?id=phone-1&lat=51.8&lon=-0.4&timestamp=1772359380",
            app.base
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    let stored = messages(&app, "1000", "phone-1").await;
    assert_eq!(stored.len(), 4, "{stored:?}");
    let first = &stored[0];
    assert_eq!(first["MessageType"], "AutomaticPositionReport");
    assert_eq!(first["SentFromDevice"], "2026-03-01T10:00:00Z");
    assert_eq!(first["Position"]["Latitude"], 51.5);
    assert_eq!(first["Position"]["Longitude"], -0.12);
    assert_eq!(first["Position"]["Speed"], 18.52, "knots to km/h");
    assert_eq!(first["Position"]["Heading"], 90.0);
    assert_eq!(first["Position"]["Altitude"], 12.0);
    assert_eq!(first["Position"]["Accuracy"], "5");
    assert_eq!(first["Properties"]["battery"], "77");
    assert_eq!(first["Properties"]["hdop"], "1.2");
    assert_eq!(first["Properties"]["cell"], "234,15");
    assert_eq!(stored[1]["Position"]["Latitude"], 51.6);
    assert_eq!(stored[2]["SentFromDevice"], "2026-03-01T10:02:00Z");
    let state = device(&app, "1000", "phone-1").await;
    assert_eq!(state["LastPosition"]["Lat"], 51.8);
    assert_eq!(state["BatteryPercentage"], 77.0);
}

async fn traccar_client_json(app: TestApp) {
    register(&app, "1000", "phone-2", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "b").await;
    let http = reqwest::Client::new();
    let post = |body: serde_json::Value| {
        http.post(path_url(&app, &token))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let response = post(json!({
        "device_id": "phone-2",
        "location": {
            "timestamp": "2026-03-01T10:00:00.250Z",
            "coords": {"latitude": -33.8688, "longitude": 151.2093, "accuracy": -1,
                       "speed": -1, "heading": -1, "altitude": -5.5},
            "is_moving": true, "event": "motionchange",
            "battery": {"level": 0.42, "is_charging": false},
            "activity": {"type": "walking"},
            "extras": {"trip": "north", "count": 3}
        }
    }))
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // No position at all: a heartbeat is stored without one.
    let response = post(json!({"device_id": "phone-2"})).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // A batch of two locations.
    let response = post(json!({"device_id": "phone-2", "location": [
        {"timestamp": "2026-03-01T10:05:00Z", "coords": {"latitude": -33.87, "longitude": 151.21, "speed": 2}},
        {"timestamp": "2026-03-01T10:06:00Z", "coords": {"latitude": -33.88, "longitude": 151.22}}
    ]}))
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    let stored = messages(&app, "1000", "phone-2").await;
    assert_eq!(stored.len(), 4, "{stored:?}");
    let first = stored
        .iter()
        .find(|m| m["SentFromDevice"] == "2026-03-01T10:00:00.25Z")
        .unwrap_or_else(|| panic!("the first report in {stored:?}"));
    assert_eq!(first["Position"]["Latitude"], -33.8688);
    assert_eq!(
        first["Position"]["Altitude"], -5.5,
        "a negative altitude is real"
    );
    assert!(
        first["Position"]["Speed"].is_null(),
        "negative speed is unknown"
    );
    assert!(first["Position"]["Accuracy"].is_null());
    assert_eq!(first["Properties"]["battery"], "42");
    assert_eq!(first["Properties"]["charge"], "false");
    assert_eq!(first["Properties"]["is_moving"], "true");
    assert_eq!(first["Properties"]["activity"], "walking");
    assert_eq!(first["Properties"]["trip"], "north");
    assert_eq!(first["Properties"]["count"], "3");
    assert!(
        stored.iter().any(|m| m["Position"].is_null()),
        "the heartbeat has no position: {stored:?}"
    );
    let batch: Vec<_> = stored
        .iter()
        .filter(|m| m["Position"]["Longitude"].as_f64() > Some(151.209_5))
        .collect();
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[0]["Position"]["Speed"], 7.2, "m/s to km/h");
}

async fn alarm_sos_raises_an_alert(app: TestApp) {
    register(&app, "1000", "phone-3", json!({})).await;
    create_notification(&app, "1000", &sos_notification()).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "c").await;
    let response = reqwest::get(format!(
        "{}?id=phone-3&lat=51.5&lon=-0.12&timestamp={T}&alarm=sos",
        path_url(&app, &token)
    ))
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let raised = alerts(&app, "1000").await;
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert_eq!(raised[0]["DeviceId"], "phone-3");
    let stored = messages(&app, "1000", "phone-3").await;
    assert_eq!(stored[0]["EmergencyState"], "Active");
    assert_eq!(stored[0]["Properties"]["alarm"], "sos");
    assert_eq!(
        device(&app, "1000", "phone-3").await["EmergencyState"],
        "Active"
    );
}

async fn the_answer_carries_the_oldest_queued_text(app: TestApp) {
    register(&app, "1000", "phone-4", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "d").await;
    for body in [
        json!({"Type": "LocationRequest"}),
        json!({"Type": "Text", "Message": "Come back to base"}),
        json!({"Type": "Text", "Message": "Second"}),
    ] {
        let response = app
            .admin
            .post("/V2/1000/devices/phone-4/mtmessages", &body)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let report = |seconds: i64| {
        reqwest::get(format!(
            "{}?id=phone-4&lat=51.5&lon=-0.12&timestamp={}",
            path_url(&app, &token),
            1_772_359_200 + seconds
        ))
    };
    let first = report(0).await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(first.text().await.unwrap(), "Come back to base");
    assert_eq!(report(1).await.unwrap().text().await.unwrap(), "Second");
    assert_eq!(report(2).await.unwrap().text().await.unwrap(), "");
    let queued = app
        .admin
        .get_json("/V2/1000/devices/phone-4/mtmessages")
        .await;
    let statuses: Vec<(String, String)> = queued
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["Type"].as_str().unwrap().to_string(),
                m["Status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("LocationRequest".into(), "Queued".into()),
            ("Text".into(), "Sent".into()),
            ("Text".into(), "Sent".into())
        ]
    );
}

async fn a_resent_report_is_stored_once(app: TestApp) {
    register(&app, "1000", "phone-5", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "e").await;
    for _ in 0..3 {
        let response = reqwest::get(format!(
            "{}?id=phone-5&lat=51.5&lon=-0.12&timestamp={T}",
            path_url(&app, &token)
        ))
        .await
        .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_eq!(messages(&app, "1000", "phone-5").await.len(), 1);
}

async fn refusals_store_nothing(app: TestApp) {
    register(&app, "1000", "phone-6", json!({})).await;
    let sub = app.create_tenant("1000", "Other").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    register(&app, &sibling, "phone-foreign", json!({})).await;
    let token = gateway_token(&app, &sub, &["DeviceMessages"], "f").await;
    let read_only = gateway_token(&app, "1000", &["Read"], "g").await;
    let good = gateway_token(&app, "1000", &["DeviceMessages"], "h").await;
    let http = reqwest::Client::new();
    let get = |token: &str, query: &str| {
        http.get(format!("{}?{query}", path_url(&app, token)))
            .send()
    };
    let ok = "id=phone-6&lat=51.5&lon=-0.12";

    let bad = get("nobody:wrong-password", ok).await.unwrap();
    assert_problem(bad, 401, "token_malformed").await;
    let revoked = crate::api_tokens::create_token(
        &app.admin,
        "1000",
        &json!({"Name": "revoked", "Permissions": ["DeviceMessages"]}),
    )
    .await;
    let id = revoked["TokenId"].as_str().unwrap();
    let deleted = app.admin.delete(&format!("/V2/1000/apitokens/{id}")).await;
    assert_eq!(deleted.status(), StatusCode::OK);
    let secret = revoked["Token"].as_str().unwrap();
    assert_problem(get(secret, ok).await.unwrap(), 401, "token_revoked").await;
    let none = http
        .get(format!("{}/gateways/osmand?{ok}", app.base))
        .send()
        .await
        .unwrap();
    assert_problem(none, 401, "unauthorized").await;
    let basic = http
        .get(format!("{}/gateways/osmand?{ok}", app.base))
        .basic_auth(
            crate::common::ADMIN_EMAIL,
            Some(crate::common::ADMIN_PASSWORD),
        )
        .send()
        .await
        .unwrap();
    assert_problem(basic, 401, "unauthorized").await;
    assert_problem(get(&read_only, ok).await.unwrap(), 403, "forbidden").await;
    // Devices outside the token's subtree (its parent's, its sibling's), and one that
    // does not exist.
    assert_not_found(get(&token, ok).await.unwrap()).await;
    assert_not_found(get(&token, "id=phone-foreign&lat=1&lon=1").await.unwrap()).await;
    assert_not_found(get(&good, "id=nobody&lat=1&lon=1").await.unwrap()).await;
    // Unreadable reports.
    let missing = assert_problem(
        get(&good, "lat=1&lon=1").await.unwrap(),
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&missing), ["id"]);
    let lat = assert_problem(
        get(&good, "id=phone-6&lat=north&lon=1").await.unwrap(),
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&lat), ["lat"]);
    let range = get(&good, "id=phone-6&lat=91&lon=1").await.unwrap();
    assert_eq!(range.status(), StatusCode::BAD_REQUEST);
    let nul = get(&good, "id=phone-6&lat=1&lon=1&note=a%00b")
        .await
        .unwrap();
    assert_problem(nul, 400, "validation_failed").await;
    let json = http
        .post(path_url(&app, &good))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_problem(json, 400, "invalid_json").await;
    let method = http
        .request(Method::DELETE, path_url(&app, &good))
        .send()
        .await
        .unwrap();
    assert_eq!(method.status(), StatusCode::METHOD_NOT_ALLOWED);

    assert!(messages(&app, "1000", "phone-6").await.is_empty());
    assert!(messages(&app, &sibling, "phone-foreign").await.is_empty());
}

async fn secondary_ids_and_ambiguous_ids(app: TestApp) {
    register(
        &app,
        "1000",
        "van-7",
        json!({"SecondaryDeviceId": "imei-777"}),
    )
    .await;
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    register(&app, &a, "twin", json!({})).await;
    register(&app, &b, "twin", json!({})).await;
    let root = gateway_token(&app, "1000", &["DeviceMessages"], "i").await;
    let only_a = gateway_token(&app, &a, &["DeviceMessages"], "j").await;
    let get = |token: &str, id: &str| {
        reqwest::get(format!(
            "{}?id={id}&lat=51.5&lon=-0.12&timestamp={T}",
            path_url(&app, token)
        ))
    };
    assert_eq!(
        get(&root, "imei-777").await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(messages(&app, "1000", "van-7").await.len(), 1);
    // Two tenants of the root's subtree have a device `twin`: which is it?
    let ambiguous = assert_problem(get(&root, "twin").await.unwrap(), 409, "conflict").await;
    assert!(ambiguous["detail"].as_str().unwrap().contains("twin"));
    // Within A's subtree it is A's.
    assert_eq!(get(&only_a, "twin").await.unwrap().status(), StatusCode::OK);
    assert_eq!(messages(&app, &a, "twin").await.len(), 1);
    assert!(messages(&app, &b, "twin").await.is_empty());
}

async fn the_token_stays_out_of_logs_and_metrics(app: TestApp) {
    register(&app, "1000", "phone-8", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "k").await;
    let response = reqwest::get(format!(
        "{}?id=phone-8&lat=51.5&lon=-0.12",
        path_url(&app, &token)
    ))
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bad = reqwest::get(format!("{}?id=phone-8", path_url(&app, "secret-token-x")))
        .await
        .unwrap();
    let problem = bad.text().await.unwrap();
    assert!(!problem.contains("secret-token-x"), "{problem}");
    let metrics = reqwest::get(format!("{}/metrics", app.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("route=\"/gateways/osmand/{token}\""),
        "{metrics}"
    );
    assert!(!metrics.contains("secret-token-x"));
    assert!(!metrics.contains(&token));
}

/// `/gateways/osmand/{token}/` (what phone users type) is the URL without the slash:
/// GET and POST reports are stored, a wrong token is refused.
async fn a_trailing_slash_is_the_same_url(app: TestApp) {
    register(&app, "1000", "phone-9", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "slash").await;
    let http = reqwest::Client::new();
    let url = format!("{}/", path_url(&app, &token));
    let got = http
        .get(format!("{url}?id=phone-9&lat=51.5&lon=-0.12&timestamp={T}"))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), StatusCode::OK);
    let posted = http
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("id=phone-9&lat=51.6&lon=-0.13&timestamp=1772359260")
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), StatusCode::OK);
    let stored = messages(&app, "1000", "phone-9").await;
    assert_eq!(stored.len(), 2, "{stored:?}");
    let wrong = http
        .get(format!(
            "{}/?id=phone-9&lat=1&lon=1",
            path_url(&app, "st_wrong")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
}

/// A POST with a wrong path token whose body never arrives (50 MB announced) is
/// answered 401 at once, on both path-token URLs; nothing of the body is read.
async fn a_bad_path_token_is_refused_before_the_body_is_read(app: TestApp) {
    for path in [
        "/gateways/osmand/st_nosuchtoken",
        "/gateways/osmand/st_nosuchtoken/",
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: test\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 50000000\r\n\r\n"
        );
        let wait = std::time::Duration::from_secs(5);
        let answer = raw_request_head(&app.base, &head, b"id=", wait).await;
        let answer = answer.expect("answered before the body arrived");
        assert!(answer.starts_with("HTTP/1.1 401"), "{path}: {answer}");
    }
}
