//! OwnTracks in HTTP mode through a real HTTP client: the app's payloads (location,
//! transition, lwt, and those with nothing to store) with its Basic authentication and
//! `X-Limit-D`, into the one ingest pipeline; a manual publish a person's check-in; the
//! queued text in the answer; a resend stored once; every refusal a 4xx storing nothing.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{
    ADMIN_EMAIL, ADMIN_PASSWORD, TestApp, assert_not_found, assert_problem, problem_fields,
};
use crate::gateway_support::{device, gateway_token, messages, register};

backend_tests!(
    payloads_as_the_app_posts_them,
    a_manual_publish_is_a_check_in_a_ping_is_not,
    the_answer_carries_the_oldest_queued_text,
    a_resent_payload_is_stored_once,
    refusals_store_nothing,
);

/// A POST as the app makes it: Basic with `user` and the token as the password, the
/// Device ID in `X-Limit-D` (`None`: not sent).
async fn post(app: &TestApp, token: &str, device: Option<&str>, body: &str) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{}/gateways/owntracks", app.base))
        .basic_auth("jane", Some(token))
        .header("content-type", "application/json")
        .header("X-Limit-U", "jane")
        .body(body.to_string());
    if let Some(device) = device {
        request = request.header("X-Limit-D", device);
    }
    request.send().await.unwrap()
}

async fn answer(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), StatusCode::OK);
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(kind.starts_with("application/json"), "{kind}");
    response.json().await.unwrap()
}

const LOCATION: &str = r#"{"_type":"location","acc":15,"alt":440,"batt":46,"bs":1,"conn":"w","lat":46.0681247,"lon":11.1512805,"t":"p","tid":"5t","tst":1772359200,"vac":2,"vel":12,"cog":90,"topic":"owntracks/jane/phone"}"#;

async fn payloads_as_the_app_posts_them(app: TestApp) {
    register(&app, "1000", "jane-phone", json!({})).await;
    register(&app, "1000", "other", json!({"SecondaryDeviceId": "phone"})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "owntracks").await;
    assert_eq!(
        answer(post(&app, &token, Some("jane-phone"), LOCATION).await).await,
        json!([])
    );
    let transition = r#"{"_type":"transition","desc":"Depot","event":"leave","lat":46.07,"lon":11.15,"acc":10,"rid":"f7676c","tid":"5t","tst":1772359200,"wtst":1610104395,"t":"c"}"#;
    assert_eq!(
        answer(post(&app, &token, Some("jane-phone"), transition).await).await,
        json!([])
    );
    let lwt = r#"{"_type":"lwt","tst":1772350000}"#;
    assert_eq!(
        answer(post(&app, &token, Some("jane-phone"), lwt).await).await,
        json!([])
    );
    // Payloads with nothing to store, and the empty body the app posts for a deleted friend.
    for body in [
        r#"{"_type":"waypoint","desc":"Home","lat":46.0,"lon":11.0,"rad":50,"tst":1772359000}"#,
        r#"{"_type":"card","name":"Jane","tid":"5t"}"#,
        "",
    ] {
        assert_eq!(
            answer(post(&app, &token, Some("jane-phone"), body).await).await,
            json!([])
        );
    }
    let stored = messages(&app, "1000", "jane-phone").await;
    assert_eq!(stored.len(), 3, "{stored:?}");
    let lwt = &stored[0];
    assert_eq!(lwt["Properties"]["event"], "lwt");
    assert!(
        lwt["Position"].is_null() && lwt["MessageType"].is_null(),
        "{lwt}"
    );
    let location = stored
        .iter()
        .find(|m| m["MessageType"] == "AutomaticPositionReport")
        .unwrap_or_else(|| panic!("the location in {stored:?}"));
    assert_eq!(location["SentFromDevice"], "2026-03-01T10:00:00Z");
    assert_eq!(location["Position"]["Latitude"], 46.0681247);
    assert_eq!(location["Position"]["Speed"], 12.0, "km/h as sent");
    assert_eq!(location["Position"]["Heading"], 90.0);
    assert_eq!(location["Position"]["Altitude"], 440.0);
    assert_eq!(location["Position"]["Accuracy"], "15");
    assert_eq!(location["Properties"]["battery"], "46");
    assert_eq!(location["Properties"]["tid"], "5t");
    assert_eq!(location["Properties"]["t"], "p");
    let crossed = stored
        .iter()
        .find(|m| m["MessageType"] == "GeofenceCrossed")
        .unwrap_or_else(|| panic!("the transition in {stored:?}"));
    assert_eq!(crossed["Properties"]["event"], "leave");
    assert_eq!(crossed["Properties"]["desc"], "Depot");
    let state = device(&app, "1000", "jane-phone").await;
    assert_eq!(state["BatteryPercentage"], 46.0);

    // Without X-Limit-D the topic's device (`phone`, a SecondaryDeviceId here).
    let response = post(
        &app,
        &token,
        None,
        &LOCATION.replace("1772359200", "1772359260"),
    )
    .await;
    assert_eq!(answer(response).await, json!([]));
    assert_eq!(messages(&app, "1000", "other").await.len(), 1);
    // A Bearer token works as well (a proxy in front).
    let bearer = reqwest::Client::new()
        .post(format!("{}/gateways/owntracks", app.base))
        .bearer_auth(&token)
        .header("X-Limit-D", "jane-phone")
        .body(LOCATION.replace("1772359200", "1772359320"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer(bearer).await, json!([]));
    assert_eq!(messages(&app, "1000", "jane-phone").await.len(), 4);
}

/// `t: u` (the user's manual publish) checks the person in; a ping does not.
async fn a_manual_publish_is_a_check_in_a_ping_is_not(app: TestApp) {
    register(
        &app,
        "1000",
        "jane-phone",
        json!({"CheckInIntervalMinutes": 60}),
    )
    .await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "checkin").await;
    let started = app
        .admin
        .post(
            "/V2/1000/devices/jane-phone/monitoring",
            &json!({"DurationMinutes": 120, "CheckInIntervalMinutes": 30}),
        )
        .await;
    assert_eq!(started.status(), StatusCode::OK);
    let now = jiff::Timestamp::now().as_second();
    let ping = format!(r#"{{"_type":"location","lat":46.0,"lon":11.0,"t":"p","tst":{now}}}"#);
    assert_eq!(
        post(&app, &token, Some("jane-phone"), &ping).await.status(),
        StatusCode::OK
    );
    let session = app
        .admin
        .get_json("/V2/1000/devices/jane-phone/monitoring")
        .await;
    assert!(
        session["LastCheckInAt"].is_null(),
        "a ping is no check-in: {session}"
    );
    let manual = format!(
        r#"{{"_type":"location","lat":46.0,"lon":11.0,"t":"u","tst":{}}}"#,
        now + 1
    );
    assert_eq!(
        post(&app, &token, Some("jane-phone"), &manual)
            .await
            .status(),
        StatusCode::OK
    );
    let session = app
        .admin
        .get_json("/V2/1000/devices/jane-phone/monitoring")
        .await;
    assert!(
        !session["LastCheckInAt"].is_null(),
        "the manual publish checks in: {session}"
    );
    let stored = messages(&app, "1000", "jane-phone").await;
    assert_eq!(stored[1]["MessageType"], "ManualPositionReport");
}

async fn the_answer_carries_the_oldest_queued_text(app: TestApp) {
    register(&app, "1000", "jane-phone", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "mt").await;
    for text in ["Come back to base", "Second"] {
        let queued = app
            .admin
            .post(
                "/V2/1000/devices/jane-phone/mtmessages",
                &json!({"Type": "Text", "Message": text}),
            )
            .await;
        assert_eq!(queued.status(), StatusCode::OK);
    }
    let at = |tst: i64| LOCATION.replace("1772359200", &tst.to_string());
    let first = answer(post(&app, &token, Some("jane-phone"), &at(1_772_359_200)).await).await;
    assert_eq!(
        first,
        json!([{"_type": "cmd", "action": "action",
                "notification": "Come back to base", "content": "Come back to base"}])
    );
    let second = answer(post(&app, &token, Some("jane-phone"), &at(1_772_359_201)).await).await;
    assert_eq!(second[0]["notification"], "Second");
    let third = answer(post(&app, &token, Some("jane-phone"), &at(1_772_359_202)).await).await;
    assert_eq!(third, json!([]));
    let sent = app
        .admin
        .get_json("/V2/1000/devices/jane-phone/mtmessages?status=Sent")
        .await;
    assert_eq!(sent.as_array().unwrap().len(), 2);
}

async fn a_resent_payload_is_stored_once(app: TestApp) {
    register(&app, "1000", "jane-phone", json!({})).await;
    let token = gateway_token(&app, "1000", &["DeviceMessages"], "resend").await;
    for _ in 0..3 {
        assert_eq!(
            post(&app, &token, Some("jane-phone"), LOCATION)
                .await
                .status(),
            StatusCode::OK
        );
    }
    assert_eq!(messages(&app, "1000", "jane-phone").await.len(), 1);
}

async fn refusals_store_nothing(app: TestApp) {
    register(&app, "1000", "jane-phone", json!({})).await;
    let sub = app.create_tenant("1000", "Sub").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    register(&app, &sibling, "foreign-phone", json!({})).await;
    let good = gateway_token(&app, "1000", &["DeviceMessages"], "good").await;
    let in_sub = gateway_token(&app, &sub, &["DeviceMessages"], "sub").await;
    let read_only = gateway_token(&app, "1000", &["Read"], "ro").await;
    let http = reqwest::Client::new();
    let url = format!("{}/gateways/owntracks", app.base);

    let none = http.post(&url).body(LOCATION).send().await.unwrap();
    let www = none.headers().get("www-authenticate").cloned();
    assert_problem(none, 401, "unauthorized").await;
    assert!(www.is_some(), "the app is asked for Basic credentials");
    let admin = http
        .post(&url)
        .basic_auth(ADMIN_EMAIL, Some(ADMIN_PASSWORD))
        .header("X-Limit-D", "jane-phone")
        .body(LOCATION)
        .send()
        .await
        .unwrap();
    assert_problem(admin, 401, "token_malformed").await;
    let wrong = post(&app, "st_nosuchtoken", Some("jane-phone"), LOCATION).await;
    assert_problem(wrong, 401, "token_malformed").await;
    let no_password = http
        .post(&url)
        .basic_auth("jane", None::<&str>)
        .body(LOCATION)
        .send()
        .await
        .unwrap();
    assert_problem(no_password, 401, "unauthorized").await;
    assert_problem(
        post(&app, &read_only, Some("jane-phone"), LOCATION).await,
        403,
        "forbidden",
    )
    .await;
    // Outside the token's subtree, and unknown.
    assert_not_found(post(&app, &in_sub, Some("jane-phone"), LOCATION).await).await;
    assert_not_found(post(&app, &in_sub, Some("foreign-phone"), LOCATION).await).await;
    assert_not_found(post(&app, &good, Some("nobody"), LOCATION).await).await;
    // Unreadable payloads.
    assert_problem(
        post(&app, &good, Some("jane-phone"), "{not json").await,
        400,
        "invalid_json",
    )
    .await;
    for (body, field) in [
        (r#"{"_type":"location","lat":1,"lon":2}"#, "tst"),
        (
            r#"{"_type":"location","lat":"north","lon":2,"tst":5}"#,
            "lat",
        ),
        (r#"{"_type":"location","lat":1,"lon":200,"tst":5}"#, "lon"),
        (r#"{"lat":1,"lon":2,"tst":5}"#, "_type"),
    ] {
        let problem = assert_problem(
            post(&app, &good, Some("jane-phone"), body).await,
            400,
            "validation_failed",
        )
        .await;
        assert_eq!(problem_fields(&problem), [field], "{body}");
    }
    let anonymous = r#"{"_type":"location","lat":1,"lon":2,"tst":5}"#;
    let problem = assert_problem(
        post(&app, &good, None, anonymous).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["X-Limit-D"]);
    let encrypted = r#"{"_type":"encrypted","data":"c2VjcmV0"}"#;
    assert_problem(
        post(&app, &good, Some("jane-phone"), encrypted).await,
        400,
        "encrypted_payload",
    )
    .await;

    assert!(messages(&app, "1000", "jane-phone").await.is_empty());
    assert!(messages(&app, &sibling, "foreign-phone").await.is_empty());
}
