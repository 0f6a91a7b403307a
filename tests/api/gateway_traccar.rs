//! Traccar forwarding through a real HTTP client: position and event forwarding bodies
//! as Traccar writes them, into the one ingest pipeline; a `fallDown` raising the `Fall`
//! alert with its deliveries; each alarm its event; a retried position (and the same
//! position by event forwarding) stored once; every refusal a 4xx that stores nothing.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::create_notification;
use crate::backend_tests;
use crate::common::{
    ADMIN_EMAIL, ADMIN_PASSWORD, TestApp, assert_not_found, assert_problem, problem_fields,
};
use crate::gateway_support::{alerts, device, gateway_token, messages, register};

backend_tests!(
    forwarded_positions_are_stored,
    a_fall_raises_the_fall_alert_and_its_deliveries,
    each_alarm_becomes_its_event,
    retries_and_event_forwarding_store_a_position_once,
    refusals_store_nothing,
);

/// Position forwarding's body (Traccar's PositionData) for the device `unique_id`: a fix
/// at 2026-03-01T10:00:`second`Z with `attributes`.
pub fn forwarded(unique_id: &str, second: u32, attributes: Value) -> Value {
    json!({
        "position": {
            "id": 0, "attributes": attributes, "deviceId": 3, "protocol": "watch",
            "serverTime": format!("2026-03-01T10:00:{second:02}.500+00:00"),
            "deviceTime": format!("2026-03-01T10:00:{second:02}.000+00:00"),
            "fixTime": format!("2026-03-01T10:00:{second:02}.000+00:00"),
            "valid": true, "latitude": 51.5007, "longitude": -0.1246, "altitude": 21.0,
            "speed": 5.0, "course": 90.0, "address": null, "accuracy": 8.0,
            "network": null, "geofenceIds": null
        },
        "device": {
            "id": 3, "attributes": {}, "groupId": 0, "calendarId": 0, "name": "Watch",
            "uniqueId": unique_id, "status": "online",
            "lastUpdate": "2026-03-01T10:00:00.500+00:00", "positionId": 0, "phone": null,
            "model": null, "contact": null, "category": null, "disabled": false,
            "expirationTime": null
        }
    })
}

pub async fn post(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/gateways/traccar", app.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

async fn forwarded_positions_are_stored(app: TestApp) {
    register(&app, "1000", "watch-1", json!({})).await;
    register(
        &app,
        "1000",
        "pendant",
        json!({"IridiumImei": "300234010000001"}),
    )
    .await;
    register(
        &app,
        "1000",
        "phone",
        json!({"SecondaryDeviceId": "865284041968706"}),
    )
    .await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "traccar").await;
    let body = forwarded(
        "watch-1",
        0,
        json!({"batteryLevel": 64, "battery": 4.02, "steps": 88}),
    );
    let response = post(&app, &token, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.text().await.unwrap().is_empty());
    let stored = messages(&app, "1000", "watch-1").await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    let m = &stored[0];
    assert_eq!(m["MessageType"], "AutomaticPositionReport");
    assert_eq!(m["SentFromDevice"], "2026-03-01T10:00:00Z");
    assert_eq!(m["Position"]["Latitude"], 51.5007);
    assert_eq!(m["Position"]["Speed"], 9.26, "knots to km/h");
    assert_eq!(m["Position"]["Heading"], 90.0);
    assert_eq!(m["Position"]["Altitude"], 21.0);
    assert_eq!(m["Position"]["Accuracy"], "8");
    assert_eq!(m["Properties"]["battery"], "64");
    assert_eq!(m["Properties"]["batteryVoltage"], "4.02");
    assert_eq!(m["Properties"]["steps"], "88");
    assert_eq!(m["Properties"]["protocol"], "watch");
    let state = device(&app, "1000", "watch-1").await;
    assert_eq!(state["BatteryPercentage"], 64.0);
    assert_eq!(state["LastPosition"]["Lat"], 51.5007);

    // uniqueId as an IridiumImei and as a SecondaryDeviceId.
    for (unique_id, device_id) in [("300234010000001", "pendant"), ("865284041968706", "phone")] {
        let response = post(&app, &token, &forwarded(unique_id, 1, json!({}))).await;
        assert_eq!(response.status(), StatusCode::OK, "{unique_id}");
        assert_eq!(
            messages(&app, "1000", device_id).await.len(),
            1,
            "{device_id}"
        );
    }
    // An invalid fix keeps no position.
    let mut invalid = forwarded("watch-1", 5, json!({"batteryLevel": 63}));
    invalid["position"]["valid"] = json!(false);
    assert_eq!(post(&app, &token, &invalid).await.status(), StatusCode::OK);
    let stored = messages(&app, "1000", "watch-1").await;
    assert_eq!(stored.len(), 2);
    assert!(stored[1]["Position"].is_null(), "{stored:?}");
    assert_eq!(
        device(&app, "1000", "watch-1").await["BatteryPercentage"],
        63.0
    );
}

async fn a_fall_raises_the_fall_alert_and_its_deliveries(app: TestApp) {
    register(&app, "1000", "watch-2", json!({})).await;
    let notification = create_notification(
        &app,
        "1000",
        &json!({"NotificationName": "Fall", "EventsExpression": "Fall", "RaiseAlert": true,
                "Severity": "2", "Recipients": [
                    {"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]}),
    )
    .await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "fall").await;
    let response = post(
        &app,
        &token,
        &forwarded("watch-2", 0, json!({"alarm": "fallDown"})),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let stored = messages(&app, "1000", "watch-2").await;
    assert_eq!(stored[0]["EmergencyState"], "Fall");
    assert_eq!(stored[0]["Properties"]["alarm"], "fallDown");
    assert_eq!(
        device(&app, "1000", "watch-2").await["EmergencyState"],
        "Fall"
    );
    let raised = alerts(&app, "1000").await;
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert_eq!(raised[0]["DeviceId"], "watch-2");
    assert_eq!(raised[0]["NotificationId"], notification.as_str());
    assert_eq!(raised[0]["Status"], "Open");
    let alert_id = raised[0]["AlertId"].as_str().unwrap();
    let deliveries = app
        .admin
        .get_json(&format!("/V2/1000/deliveries?alertId={alert_id}"))
        .await;
    let deliveries = deliveries.as_array().unwrap();
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0]["Channel"], "Email");
}

async fn each_alarm_becomes_its_event(app: TestApp) {
    register(&app, "1000", "watch-3", json!({})).await;
    for (name, expression) in [
        ("SOS", "Emergency AND NOT Fall"),
        ("Tamper", "Tamper"),
        ("Low battery", "LowBattery"),
        ("Power down", "PowerDown"),
        ("Battery level", "Battery < 10"),
    ] {
        create_notification(
            &app,
            "1000",
            &json!({"NotificationName": name, "EventsExpression": expression,
                    "RaiseAlert": true, "Severity": "1", "Recipients": []}),
        )
        .await;
    }
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "alarms").await;
    let post_alarm = |second: u32, attributes: Value| {
        let body = forwarded("watch-3", second, attributes);
        let token = token.clone();
        let app = &app;
        async move { post(app, &token, &body).await.status() }
    };
    let named = |raised: &[Value]| -> Vec<String> {
        let mut names: Vec<String> = raised
            .iter()
            .map(|a| a["NotificationName"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        post_alarm(1, json!({"alarm": "removing"})).await,
        StatusCode::OK
    );
    assert_eq!(named(&alerts(&app, "1000").await), ["Tamper"]);
    assert_eq!(
        post_alarm(2, json!({"alarm": "lowPower", "batteryLevel": 8})).await,
        StatusCode::OK
    );
    assert_eq!(
        named(&alerts(&app, "1000").await),
        ["Battery level", "Low battery", "Tamper"]
    );
    assert_eq!(
        post_alarm(3, json!({"alarm": "sos,powerOff"})).await,
        StatusCode::OK
    );
    assert_eq!(
        named(&alerts(&app, "1000").await),
        [
            "Battery level",
            "Low battery",
            "Power down",
            "SOS",
            "Tamper"
        ]
    );
    let stored = messages(&app, "1000", "watch-3").await;
    assert_eq!(stored[2]["MessageType"], "PowerDown");
    assert_eq!(stored[2]["EmergencyState"], "Active");
    // An alarm the platform has no meaning for is kept, and raises nothing more.
    assert_eq!(
        post_alarm(4, json!({"alarm": "overspeed"})).await,
        StatusCode::OK
    );
    assert_eq!(alerts(&app, "1000").await.len(), 5);
    assert_eq!(
        messages(&app, "1000", "watch-3").await[3]["Properties"]["alarm"],
        "overspeed"
    );
}

async fn retries_and_event_forwarding_store_a_position_once(app: TestApp) {
    register(&app, "1000", "watch-4", json!({})).await;
    crate::alerts::create_notification(&app, "1000", &crate::alerts::sos_notification()).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "retry").await;
    let body = forwarded("watch-4", 0, json!({"alarm": "sos"}));
    for _ in 0..3 {
        assert_eq!(post(&app, &token, &body).await.status(), StatusCode::OK);
    }
    // A retry after Traccar stored the position carries its id.
    let mut stored_since = body.clone();
    stored_since["position"]["id"] = json!(4711);
    assert_eq!(
        post(&app, &token, &stored_since).await.status(),
        StatusCode::OK
    );
    // The alarm's event forwarded too: the same position.
    let mut event = stored_since.clone();
    event["event"] = json!({"id": 99, "attributes": {"alarm": "sos"}, "deviceId": 3,
        "type": "alarm", "eventTime": "2026-03-01T10:00:00.000+00:00", "positionId": 4711,
        "geofenceId": 0, "maintenanceId": 0});
    assert_eq!(post(&app, &token, &event).await.status(), StatusCode::OK);
    let stored = messages(&app, "1000", "watch-4").await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    let raised = alerts(&app, "1000").await;
    assert_eq!(raised.len(), 1);
    assert_eq!(raised[0]["MatchCount"], 1, "fired once: {raised:?}");
    // An event without a position (Traccar's "offline") stores nothing.
    let offline = json!({"event": {"id": 100, "attributes": {}, "deviceId": 3,
        "type": "deviceOffline", "eventTime": "2026-03-01T11:00:00.000+00:00",
        "positionId": 0, "geofenceId": 0, "maintenanceId": 0}, "device": body["device"]});
    assert_eq!(post(&app, &token, &offline).await.status(), StatusCode::OK);
    assert_eq!(messages(&app, "1000", "watch-4").await.len(), 1);
    // A later position is a new one.
    let next = forwarded("watch-4", 30, json!({}));
    assert_eq!(post(&app, &token, &next).await.status(), StatusCode::OK);
    assert_eq!(messages(&app, "1000", "watch-4").await.len(), 2);
}

async fn refusals_store_nothing(app: TestApp) {
    register(&app, "1000", "watch-5", json!({})).await;
    let sub = app.create_tenant("1000", "Sub").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    register(&app, &sibling, "watch-foreign", json!({})).await;
    let good = gateway_token(&app, "1000", &["DeviceMessages"], "good").await;
    let in_sub = gateway_token(&app, &sub, &["DeviceMessages"], "sub").await;
    let read_only = gateway_token(&app, "1000", &["Read"], "ro").await;
    let ok = forwarded("watch-5", 0, json!({"alarm": "sos"}));
    let http = reqwest::Client::new();

    let none = http
        .post(format!("{}/gateways/traccar", app.base))
        .json(&ok)
        .send()
        .await
        .unwrap();
    assert_problem(none, 401, "unauthorized").await;
    let basic = http
        .post(format!("{}/gateways/traccar", app.base))
        .basic_auth(ADMIN_EMAIL, Some(ADMIN_PASSWORD))
        .json(&ok)
        .send()
        .await
        .unwrap();
    assert_problem(basic, 401, "unauthorized").await;
    assert_problem(
        post(&app, "st_nosuchtoken", &ok).await,
        401,
        "token_malformed",
    )
    .await;
    assert_problem(post(&app, &read_only, &ok).await, 403, "forbidden").await;
    // Outside the token's subtree (its parent's device, its sibling's), and unknown.
    assert_not_found(post(&app, &in_sub, &ok).await).await;
    let foreign = forwarded("watch-foreign", 0, json!({}));
    assert_not_found(post(&app, &in_sub, &foreign).await).await;
    assert_not_found(post(&app, &good, &forwarded("nobody", 0, json!({}))).await).await;
    let offline_unknown =
        json!({"event": {"type": "deviceOffline"}, "device": {"uniqueId": "nobody"}});
    assert_not_found(post(&app, &good, &offline_unknown).await).await;
    // Unreadable bodies.
    let garbage = http
        .post(format!("{}/gateways/traccar", app.base))
        .bearer_auth(&good)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_problem(garbage, 400, "invalid_json").await;
    let mut no_id = ok.clone();
    no_id["device"]["uniqueId"] = json!(null);
    let problem = assert_problem(post(&app, &good, &no_id).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["device.uniqueId"]);
    let mut bad_lat = ok.clone();
    bad_lat["position"]["latitude"] = json!("north");
    let problem = assert_problem(post(&app, &good, &bad_lat).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["position.latitude"]);
    let mut nul = ok.clone();
    nul["position"]["attributes"]["note"] = json!("a\u{0}b");
    assert_problem(post(&app, &good, &nul).await, 400, "validation_failed").await;

    assert!(messages(&app, "1000", "watch-5").await.is_empty());
    assert!(messages(&app, &sibling, "watch-foreign").await.is_empty());
    assert!(alerts(&app, "1000").await.is_empty());
}
