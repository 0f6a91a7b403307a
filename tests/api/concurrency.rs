//! Versioned writes are compare-and-set: of N parallel writers sending the same
//! `If-Match`, exactly one wins and the others get 412 — on every record type and
//! both backends.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp};

backend_tests!(
    one_of_sixteen_writers_wins_on_every_record_type,
    patches_with_the_same_version_have_one_winner,
);

const WRITERS: usize = 16;

async fn location_of(client: &Client, path: &str, body: &Value) -> String {
    let response = client.post(path, body).await;
    assert_eq!(response.status(), StatusCode::OK, "POST {path}");
    response.headers()["location"]
        .to_str()
        .expect("Location")
        .to_string()
}

/// Reads `path`, then sends WRITERS parallel `method`s of the record with `field` changed
/// (each to its own value) and the ETag read; returns (200s, 412s, the stored record).
async fn race(client: &Client, method: Method, path: &str, edit: impl Fn(&mut Value, usize)) {
    let response = client.get(path).await;
    assert_eq!(response.status(), StatusCode::OK, "GET {path}");
    let etag = response.headers()["etag"]
        .to_str()
        .expect("ETag")
        .to_string();
    let mut record: Value = response.json().await.expect("json");
    if let Some(fields) = record.as_object_mut() {
        // Read-only and unknown to strict schemas (distribution lists).
        fields.remove("SyncToDevices");
    }
    let writers = (0..WRITERS).map(|i| {
        let mut body = record.clone();
        edit(&mut body, i);
        let request = client
            .request(method.clone(), path)
            .header("if-match", &etag)
            .json(&body);
        async move { request.send().await.expect("write").status() }
    });
    let statuses = futures::future::join_all(writers).await;
    let won = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::PRECONDITION_FAILED)
        .count();
    assert_eq!(
        (won, refused),
        (1, WRITERS - 1),
        "{method} {path}: {statuses:?}"
    );
    let after = client.get(path).await;
    assert_ne!(after.headers()["etag"].to_str().unwrap(), etag, "{path}");
}

fn set(field: &'static str, prefix: &'static str) -> impl Fn(&mut Value, usize) {
    move |body, i| body[field] = json!(format!("{prefix} {i}"))
}

async fn one_of_sixteen_writers_wins_on_every_record_type(app: TestApp) {
    let admin = &app.admin;
    let tenant = app.create_tenant("1000", "Racers").await;
    let t = format!("/V2/{tenant}");
    race(admin, Method::PUT, &t, set("Description", "Racers")).await;

    let (user_id, _) = app.create_user(&tenant, "racer@example.com", "User").await;
    let user = format!("{t}/users/{user_id}");
    race(admin, Method::PUT, &user, set("FirstName", "Ann")).await;
    let profile = format!("{t}/userprofile/{user_id}");
    race(admin, Method::PUT, &profile, set("City", "Leeds")).await;

    let group = location_of(admin, &format!("{t}/groups"), &json!({"Name": "Vans"})).await;
    race(admin, Method::PUT, &group, set("Name", "Vans")).await;
    location_of(
        admin,
        &format!("{t}/devices"),
        &json!({"DeviceId": "race-1", "DeviceType": "InReach"}),
    )
    .await;
    let device = format!("{t}/devices/race-1");
    race(admin, Method::PUT, &device, set("FriendlyName", "Van")).await;

    let contact = location_of(
        admin,
        &format!("{t}/addressbookcontacts"),
        &json!({"ContactName": "Duty", "ContactEntries": [{"Address": "+447700900123"}]}),
    )
    .await;
    race(admin, Method::PUT, &contact, set("ContactName", "Duty")).await;
    let list = location_of(
        admin,
        &format!("{t}/addressbookdistributionlists"),
        &json!({"ListName": "Ops", "Recipients": []}),
    )
    .await;
    race(admin, Method::PUT, &list, set("ListName", "Ops")).await;
    let geofence = location_of(
        admin,
        &format!("{t}/geofences"),
        &json!({"Name": "Depot", "GeofenceType": "circle",
                "CircleCentre": {"Lat": 51.5, "Lon": -0.12}, "CircleRadius": 250}),
    )
    .await;
    race(admin, Method::PUT, &geofence, set("Name", "Depot")).await;
    let notification = location_of(
        admin,
        &format!("{t}/eventnotifications"),
        &json!({"NotificationName": "SOS", "EventsExpression": "Emergency"}),
    )
    .await;
    race(
        admin,
        Method::PUT,
        &notification,
        set("NotificationName", "SOS"),
    )
    .await;

    let webhooks = format!("{t}/webhooks");
    let saved = admin
        .put(
            &webhooks,
            &json!({"Urls": [{"Url": "https://hooks.example.com/a", "Device": true}],
                    "Authentication": "None"}),
        )
        .await;
    assert_eq!(saved.status(), StatusCode::OK);
    race(admin, Method::PUT, &webhooks, |body, i| {
        body["Urls"][0]["Url"] = json!(format!("https://hooks.example.com/{i}"));
    })
    .await;
}

async fn patches_with_the_same_version_have_one_winner(app: TestApp) {
    let (user_id, _) = app.create_user("1000", "patched@example.com", "User").await;
    let path = format!("/V2/1000/users/{user_id}");
    let response = app.admin.get(&path).await;
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    let patches = (0..WRITERS).map(|i| {
        let request = app
            .admin
            .request(Method::PATCH, &path)
            .header("if-match", &etag)
            .header("content-type", "application/json-patch+json")
            .body(
                json!([{"op": "replace", "path": "/FirstName", "value": format!("P{i}")}])
                    .to_string(),
            );
        async move { request.send().await.expect("patch").status() }
    });
    let statuses = futures::future::join_all(patches).await;
    let won = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    assert_eq!(won, 1, "{statuses:?}");
    assert!(
        statuses
            .iter()
            .all(|s| *s == StatusCode::OK || *s == StatusCode::PRECONDITION_FAILED)
    );
}
