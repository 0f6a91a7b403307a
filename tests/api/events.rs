//! The events engine through HTTP: what each posted message triggers (the `?process=true`
//! answer), for every kind of fact — message types, emergency transitions, geofence
//! enter/exit/inside, speed, battery, properties, local time — and which notifications
//! apply to which device.

use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::TestApp;
use crate::mo_messages::{DEVICE, position_report, post_processed, register_device};

backend_tests!(
    emergencies_trigger_while_active_and_cancel_once,
    geofence_enter_exit_and_inside,
    inherited_geofences_count,
    speed_battery_and_properties,
    time_and_day_in_the_notification_zone,
    device_type_devices_groups_and_disabled,
    late_messages_are_evaluated_without_moving_state,
    retries_trigger_nothing_twice,
    rule_changes_apply_to_the_next_message,
);

async fn notification(app: &TestApp, tenant: &str, body: Value) -> String {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/eventnotifications"), &body)
        .await;
    assert_eq!(response.status(), reqwest::StatusCode::OK, "{body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

fn rule(name: &str, expression: &str) -> Value {
    json!({"NotificationName": name, "EventsExpression": expression})
}

/// The names of the notifications each message of a processed answer triggered.
fn fired(processed: &Value) -> Vec<Vec<String>> {
    processed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["Notifications"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n["NotificationName"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

fn message(seq: i64, sent: &str, extra: Value) -> Value {
    let mut m = json!({"MessageType": "AutomaticPositionReport", "SequenceNumber": seq,
                       "SentFromDevice": sent});
    if let (Some(m), Some(extra)) = (m.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            m.insert(k.clone(), v.clone());
        }
    }
    m
}

async fn post(app: &TestApp, batch: Value) -> Vec<Vec<String>> {
    fired(&post_processed(app, "1000", DEVICE, &batch).await)
}

async fn emergencies_trigger_while_active_and_cancel_once(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    notification(&app, "1000", rule("SOS", "Emergency")).await;
    notification(&app, "1000", rule("Stood down", "EmergencyCancelled")).await;
    notification(&app, "1000", rule("Check", "CheckIn")).await;
    let fired = post(
        &app,
        json!([
            message(1, "2026-03-01T10:00:00Z", json!({"EmergencyState": "None"})),
            message(
                2,
                "2026-03-01T10:01:00Z",
                json!({"EmergencyState": "Active"})
            ),
            message(3, "2026-03-01T10:02:00Z", json!({})),
            message(
                4,
                "2026-03-01T10:03:00Z",
                json!({"MessageType": "CheckIn", "EmergencyState": "None"})
            ),
            message(5, "2026-03-01T10:04:00Z", json!({"EmergencyState": "None"}))
        ]),
    )
    .await;
    assert_eq!(
        fired,
        vec![
            vec![],
            vec!["SOS".to_string()],
            vec!["SOS".to_string()],
            vec!["Stood down".to_string(), "Check".to_string()],
            vec![],
        ]
    );
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["EmergencyState"], "None");
}

async fn depot(app: &TestApp, tenant: &str, shared: bool) {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/geofences"),
            &json!({"Name": "Depot", "GeofenceType": "circle", "AppliesToSubtenants": shared,
                    "CircleCentre": {"Lat": 51.5, "Lon": -0.12}, "CircleRadius": 500}),
        )
        .await;
    assert_eq!(response.status(), reqwest::StatusCode::OK);
}

async fn geofence_enter_exit_and_inside(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    depot(&app, "1000", false).await;
    notification(&app, "1000", rule("In", "GeofenceEnter(\"depot\")")).await;
    notification(&app, "1000", rule("Out", "GeofenceExit(\"Depot\")")).await;
    notification(&app, "1000", rule("Inside", "InGeofence")).await;
    let outside = (51.6, -0.12);
    let inside = (51.501, -0.121);
    let processed = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([
            position_report(1, "2026-03-01T10:00:00Z", outside.0, outside.1),
            position_report(2, "2026-03-01T10:01:00Z", inside.0, inside.1),
            position_report(3, "2026-03-01T10:02:00Z", inside.0, inside.1),
            {"MessageType": "FreeText", "SequenceNumber": 4, "SentFromDevice": "2026-03-01T10:03:00Z"},
            position_report(5, "2026-03-01T10:04:00Z", outside.0, outside.1)
        ]),
    )
    .await;
    assert_eq!(
        fired(&processed),
        vec![
            vec![],
            vec!["In".to_string(), "Inside".to_string()],
            vec!["Inside".to_string()],
            // No position: still inside, no crossing.
            vec!["Inside".to_string()],
            vec!["Out".to_string()],
        ]
    );
    assert_eq!(
        processed[1]["ContainingGeofences"][0]["GeofenceName"],
        "Depot"
    );
    assert_eq!(processed[0]["ContainingGeofences"], json!([]));
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["ContainingGeofences"], json!([]));
    // Stored with the message.
    let id = processed[1]["MessageId"].as_str().unwrap();
    let stored = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}/momessages/{id}"))
        .await;
    assert_eq!(stored["ContainingGeofences"][0]["GeofenceName"], "Depot");
}

async fn inherited_geofences_count(app: TestApp) {
    let child = app.create_tenant("1000", "Depot crew").await;
    register_device(&app, &child, DEVICE).await;
    depot(&app, "1000", true).await;
    notification(&app, &child, rule("In", "GeofenceEnter(\"Depot\")")).await;
    let processed = post_processed(
        &app,
        &child,
        DEVICE,
        &json!([position_report(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
    )
    .await;
    assert_eq!(fired(&processed), vec![vec!["In".to_string()]]);
    // The parent's notifications do not apply to the child's devices.
    notification(&app, "1000", rule("Parent", "InGeofence")).await;
    let processed = post_processed(
        &app,
        &child,
        DEVICE,
        &json!([position_report(2, "2026-03-01T10:01:00Z", 51.5, -0.12)]),
    )
    .await;
    assert_eq!(fired(&processed), vec![Vec::<String>::new()]);
}

async fn speed_battery_and_properties(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    notification(&app, "1000", rule("Fast", "Speed > 100")).await;
    notification(&app, "1000", rule("Flat", "Battery < 20")).await;
    notification(
        &app,
        "1000",
        rule("Night shift", "Property(\"shift\") = \"night\""),
    )
    .await;
    let fired = post(
        &app,
        json!([
            message(
                1,
                "2026-03-01T10:00:00Z",
                json!({"Position": {"Latitude": 51.0, "Longitude": 0.0, "Speed": 130.0}})
            ),
            message(
                2,
                "2026-03-01T10:01:00Z",
                json!({"Properties": {"battery": "15%", "shift": "night"}})
            ),
            message(
                3,
                "2026-03-01T10:02:00Z",
                json!({"Properties": {"battery": "80", "shift": "day"},
                "Position": {"Latitude": 51.0, "Longitude": 0.0, "Speed": 99.0}})
            )
        ]),
    )
    .await;
    assert_eq!(
        fired,
        vec![
            vec!["Fast".to_string()],
            vec!["Flat".to_string(), "Night shift".to_string()],
            vec![],
        ]
    );
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["BatteryPercentage"], 80.0);
}

async fn time_and_day_in_the_notification_zone(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let mut night = rule("Night", "Time BETWEEN \"22:00\" AND \"06:00\"");
    night["TimeZoneId"] = json!("Europe/London");
    notification(&app, "1000", night).await;
    let mut weekend = rule("Weekend", "Day IN (Sat, Sun)");
    weekend["TimeZoneId"] = json!("Pacific/Auckland");
    notification(&app, "1000", weekend).await;
    // 2026-07-03 is a Friday: 21:30 UTC is 22:30 in London (BST) and Saturday 09:30 in
    // Auckland; 2026-01-02 20:30 UTC is 20:30 in London, Saturday in Auckland.
    let fired = post(
        &app,
        json!([
            message(1, "2026-07-03T21:30:00Z", json!({})),
            message(2, "2026-07-03T04:00:00Z", json!({})),
            message(3, "2026-01-02T20:30:00Z", json!({}))
        ]),
    )
    .await;
    assert_eq!(
        fired,
        vec![
            vec!["Night".to_string(), "Weekend".to_string()],
            vec!["Night".to_string()],
            vec!["Weekend".to_string()],
        ]
    );
}

async fn device_type_devices_groups_and_disabled(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let response = app
        .admin
        .post(
            "/V2/1000/devices",
            &json!({"DeviceId": "other-1", "DeviceType": "Spot"}),
        )
        .await;
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let group = app
        .admin
        .post("/V2/1000/groups", &json!({"Name": "Vans"}))
        .await;
    let group = group.headers()["location"]
        .to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let moved = app
        .admin
        .patch(
            "/V2/1000/devices/other-1",
            &json!([{"op": "add", "path": "/GroupId", "value": group}]),
        )
        .await;
    assert_eq!(moved.status(), reqwest::StatusCode::OK);
    let mut by_type = rule("InReach only", "CheckIn");
    by_type["DeviceType"] = json!("InReach");
    notification(&app, "1000", by_type).await;
    let mut by_id = rule("Other only", "CheckIn");
    by_id["Devices"] = json!("other-1");
    notification(&app, "1000", by_id).await;
    let mut disabled = rule("Off", "CheckIn");
    disabled["NotificationDisabled"] = json!(true);
    notification(&app, "1000", disabled).await;
    let response = app
        .admin
        .post(
            &format!("/V2/1000/groups/{group}/eventnotifications"),
            &rule("Vans", "CheckIn"),
        )
        .await;
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    notification(&app, "1000", rule("Everyone", "CheckIn")).await;
    let checkin = json!([{"MessageType": "CheckIn"}]);
    let mine = fired(&post_processed(&app, "1000", DEVICE, &checkin).await);
    assert_eq!(
        mine,
        vec![vec!["InReach only".to_string(), "Everyone".to_string()]]
    );
    let other = fired(&post_processed(&app, "1000", "other-1", &checkin).await);
    assert_eq!(
        other,
        vec![vec![
            "Other only".to_string(),
            "Vans".to_string(),
            "Everyone".to_string()
        ]]
    );
}

async fn late_messages_are_evaluated_without_moving_state(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    notification(&app, "1000", rule("SOS", "Emergency")).await;
    post(
        &app,
        json!([position_report(1, "2026-03-01T12:00:00Z", 51.0, 0.5)]),
    )
    .await;
    // An SOS from an hour ago arrives now: it is still an SOS.
    let processed = post_processed(
        &app,
        "1000",
        DEVICE,
        &json!([message(
            2,
            "2026-03-01T11:00:00Z",
            json!({"EmergencyState": "Active",
            "Position": {"Latitude": 52.0, "Longitude": 1.0}})
        )]),
    )
    .await;
    assert_eq!(fired(&processed), vec![vec!["SOS".to_string()]]);
    assert_eq!(processed[0]["Late"], true);
    let device = app
        .admin
        .get_json(&format!("/V2/1000/devices/{DEVICE}"))
        .await;
    assert_eq!(device["LastMessageTime"], "2026-03-01T12:00:00Z");
    assert_eq!(device["LastPosition"]["Lat"], 51.0);
    // But for its word on the emergency: no newer message said one (issue 43).
    assert_eq!(device["EmergencyState"], "Active");
}

async fn retries_trigger_nothing_twice(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    notification(&app, "1000", rule("SOS", "Emergency")).await;
    let sos = json!([message(
        1,
        "2026-03-01T10:00:00Z",
        json!({"EmergencyState": "Active"})
    )]);
    assert_eq!(post(&app, sos.clone()).await, vec![vec!["SOS".to_string()]]);
    let again = post_processed(&app, "1000", DEVICE, &sos).await;
    assert_eq!(fired(&again), vec![Vec::<String>::new()]);
    assert_eq!(again[0]["Duplicate"], true);
}

async fn rule_changes_apply_to_the_next_message(app: TestApp) {
    register_device(&app, "1000", DEVICE).await;
    let id = notification(&app, "1000", rule("Rule", "CheckIn")).await;
    let checkin = json!([{"MessageType": "CheckIn"}]);
    assert_eq!(
        post(&app, checkin.clone()).await,
        vec![vec!["Rule".to_string()]]
    );
    let changed = app
        .admin
        .put(
            &format!("/V2/1000/eventnotifications/{id}"),
            &rule("Rule", "FreeText"),
        )
        .await;
    assert_eq!(changed.status(), reqwest::StatusCode::OK);
    assert_eq!(post(&app, checkin).await, vec![Vec::<String>::new()]);
    let deleted = app
        .admin
        .delete(&format!("/V2/1000/eventnotifications/{id}"))
        .await;
    assert_eq!(deleted.status(), reqwest::StatusCode::OK);
    assert_eq!(
        post(&app, json!([{"MessageType": "FreeText"}])).await,
        vec![Vec::<String>::new()]
    );
}
