//! The person a device is assigned to, on the device's reads (issue 43): `AssignedUser`
//! (`UserId`, `TenantCode`, `Username`, `FirstName`, `LastName`) on every listed device
//! and on the single record, null without a user; read-only; a user outside the device's
//! tenant and its subtenants is never shown, even when the device names one. And
//! `GET …/devices?userId=` lists only the devices assigned to one user (the worker app's
//! read), paged like the whole listing.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::Connection;

use crate::backend_tests;
use crate::common::{PASSWORD, TestApp, assert_problem, problem_fields};

backend_tests!(
    listed_and_read_devices_name_their_user,
    a_subtenants_user_is_shown_with_their_tenant,
    a_foreign_tenants_user_is_never_shown,
    the_assigned_user_is_read_only,
    the_devices_of_one_user_are_listed_alone,
);

/// A user of `tenant` named `first last`; answers their id.
async fn named_user(app: &TestApp, tenant: &str, email: &str, first: &str, last: &str) -> String {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/users"),
            &json!({"Username": email, "Password": PASSWORD, "UserRoleId": "User",
                    "FirstName": first, "LastName": last}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create user {email}");
    let location = response.headers()["location"].to_str().expect("Location");
    location.rsplit('/').next().expect("an id").to_string()
}

async fn device(app: &TestApp, tenant: &str, id: &str, user: Option<&str>) {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices"),
            &json!({"DeviceId": id, "DeviceType": "InReach", "UserId": user}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create device {id}");
}

fn listed<'a>(list: &'a Value, id: &str) -> &'a Value {
    list.as_array()
        .expect("a list")
        .iter()
        .find(|d| d["DeviceId"] == id)
        .unwrap_or_else(|| panic!("{id} in {list}"))
}

async fn listed_and_read_devices_name_their_user(app: TestApp) {
    let jane = named_user(&app, "1000", "jane@example.com", "Jane", "Doe").await;
    device(&app, "1000", "van-1", Some(&jane)).await;
    device(&app, "1000", "van-2", None).await;
    let expected = json!({"UserId": jane, "TenantCode": "1000", "Username": "jane@example.com",
                          "FirstName": "Jane", "LastName": "Doe"});

    let list = app.admin.get_json("/V2/1000/devices").await;
    assert_eq!(listed(&list, "van-1")["AssignedUser"], expected, "{list}");
    assert_eq!(
        listed(&list, "van-2")["AssignedUser"],
        Value::Null,
        "{list}"
    );
    assert!(
        listed(&list, "van-2")
            .as_object()
            .expect("a record")
            .contains_key("AssignedUser"),
        "null, not absent"
    );
    let one = app.admin.get_json("/V2/1000/devices/van-1").await;
    assert_eq!(one["AssignedUser"], expected, "{one}");
    assert_eq!(one["UserId"], jane);

    // A renamed user reads renamed; a device given another user shows them.
    let response = app
        .admin
        .patch(
            &format!("/V2/1000/users/{jane}"),
            &json!([{"op": "replace", "path": "/FirstName", "value": "Janet"}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let one = app.admin.get_json("/V2/1000/devices/van-1").await;
    assert_eq!(one["AssignedUser"]["FirstName"], "Janet", "{one}");
    let response = app
        .admin
        .patch(
            "/V2/1000/devices/van-1",
            &json!([{"op": "replace", "path": "/UserId", "value": null}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let one = app.admin.get_json("/V2/1000/devices/van-1").await;
    assert_eq!(one["AssignedUser"], Value::Null, "{one}");

    // The document says what it is.
    let document = app.admin.get_json("/openapi.json").await;
    let field = &document["components"]["schemas"]["Device"]["properties"]["AssignedUser"];
    assert!(field.is_object(), "AssignedUser in the Device schema");
    let text = field.to_string();
    assert!(
        text.contains("readOnly") || text.contains("AssignedUser"),
        "{text}"
    );
}

async fn a_subtenants_user_is_shown_with_their_tenant(app: TestApp) {
    let sub = app.create_tenant("1000", "Depot").await;
    let sam = named_user(&app, &sub, "sam@example.com", "Sam", "Lee").await;
    device(&app, "1000", "van-1", Some(&sam)).await;
    device(&app, &sub, "van-2", Some(&sam)).await;
    let list = app.admin.get_json("/V2/1000/devices?subtenants=true").await;
    for id in ["van-1", "van-2"] {
        let user = &listed(&list, id)["AssignedUser"];
        assert_eq!(user["UserId"], sam, "{id}: {list}");
        assert_eq!(user["TenantCode"], sub.as_str(), "{id}: {list}");
        assert_eq!(user["Username"], "sam@example.com");
    }
    let one = app
        .admin
        .get_json(&format!("/V2/{sub}/devices/van-2"))
        .await;
    assert_eq!(one["AssignedUser"]["LastName"], "Lee", "{one}");
}

async fn a_foreign_tenants_user_is_never_shown(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let bob = named_user(&app, &b, "bob@example.com", "Bob", "Secret").await;
    // The API refuses the assignment outright…
    let response = app
        .admin
        .post(
            &format!("/V2/{a}/devices"),
            &json!({"DeviceId": "van-1", "DeviceType": "InReach", "UserId": bob}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["UserId"]);
    device(&app, &a, "van-1", None).await;
    // …and a device that names one anyway (written before the rule, or by hand) shows
    // nothing of them: not on the record, not in either listing.
    let mut db = sqlx::AnyConnection::connect(app.database_url())
        .await
        .expect("connect");
    let bob_id: i64 = bob.parse().expect("a numeric id");
    sqlx::query("UPDATE devices SET user_id = $1 WHERE device_id = $2 AND tenant_code = $3")
        .bind(bob_id)
        .bind("van-1")
        .bind(a.as_str())
        .execute(&mut db)
        .await
        .expect("update");
    db.close().await.expect("close");

    let one = app.admin.get_json(&format!("/V2/{a}/devices/van-1")).await;
    assert_eq!(one["AssignedUser"], Value::Null, "{one}");
    for path in [
        format!("/V2/{a}/devices"),
        "/V2/1000/devices?subtenants=true".to_string(),
    ] {
        let list = app.admin.get_json(&path).await;
        assert_eq!(
            listed(&list, "van-1")["AssignedUser"],
            Value::Null,
            "{path}: {list}"
        );
        let text = list.to_string();
        assert!(
            !text.contains("bob@example.com") && !text.contains("Secret"),
            "{path}: {text}"
        );
    }
    // A's own user, by contrast, is shown.
    let ann = named_user(&app, &a, "ann@example.com", "Ann", "Ok").await;
    let response = app
        .admin
        .patch(
            &format!("/V2/{a}/devices/van-1"),
            &json!([{"op": "replace", "path": "/UserId", "value": ann}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let one = app.admin.get_json(&format!("/V2/{a}/devices/van-1")).await;
    assert_eq!(one["AssignedUser"]["Username"], "ann@example.com", "{one}");
}

async fn the_assigned_user_is_read_only(app: TestApp) {
    let jane = named_user(&app, "1000", "jane@example.com", "Jane", "Doe").await;
    device(&app, "1000", "van-1", Some(&jane)).await;
    let response = app
        .admin
        .patch(
            "/V2/1000/devices/van-1",
            &json!([{"op": "replace", "path": "/AssignedUser/FirstName", "value": "Mallory"}]),
        )
        .await;
    assert_problem(response, 400, "validation_failed").await;
    // A PUT that sends one is read for its UserId alone.
    let response = app
        .admin
        .put(
            "/V2/1000/devices/van-1",
            &json!({"DeviceId": "van-1", "DeviceType": "InReach", "UserId": jane,
                    "AssignedUser": {"UserId": "999", "TenantCode": "1000",
                                     "Username": "mallory@example.com", "FirstName": "Mallory"}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let one = app.admin.get_json("/V2/1000/devices/van-1").await;
    assert_eq!(one["AssignedUser"]["Username"], "jane@example.com", "{one}");
    assert_eq!(one["AssignedUser"]["FirstName"], "Jane");
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|d| d["DeviceId"].as_str().expect("DeviceId"))
        .collect()
}

async fn the_devices_of_one_user_are_listed_alone(app: TestApp) {
    let sub = app.create_tenant("1000", "Depot").await;
    let jane = named_user(&app, "1000", "jane@example.com", "Jane", "Doe").await;
    let sam = named_user(&app, &sub, "sam@example.com", "Sam", "Lee").await;
    device(&app, "1000", "van-1", Some(&jane)).await;
    device(&app, "1000", "van-2", None).await;
    device(&app, "1000", "van-3", Some(&jane)).await;
    device(&app, &sub, "van-4", Some(&sam)).await;
    device(&app, "1000", "van-5", Some(&sam)).await;

    let janes = app
        .admin
        .get_json(&format!("/V2/1000/devices?userId={jane}"))
        .await;
    assert_eq!(ids(&janes), ["van-1", "van-3"], "{janes}");
    let sams = app
        .admin
        .get_json(&format!("/V2/1000/devices?userId={sam}"))
        .await;
    assert_eq!(ids(&sams), ["van-5"], "the tenant alone: {sams}");
    let sams = app
        .admin
        .get_json(&format!("/V2/1000/devices?userId={sam}&subtenants=true"))
        .await;
    assert_eq!(ids(&sams), ["van-4", "van-5"], "with subtenants: {sams}");
    let nobody = app.admin.get_json("/V2/1000/devices?userId=999999").await;
    assert_eq!(ids(&nobody), Vec::<&str>::new(), "{nobody}");

    // Paged like the whole listing; a token of the whole listing is not one of Jane's.
    let first = app
        .admin
        .get(&format!("/V2/1000/devices?userId={jane}&pageSize=1"))
        .await;
    assert_eq!(first.status(), StatusCode::OK);
    let token = first.headers()["x-continuationtoken"]
        .to_str()
        .expect("token")
        .to_string();
    let page: Value = first.json().await.expect("JSON");
    assert_eq!(ids(&page), ["van-1"]);
    let second: Value = app
        .admin
        .request(
            Method::GET,
            &format!("/V2/1000/devices?userId={jane}&pageSize=1"),
        )
        .header("X-CONTINUATIONTOKEN", &token)
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    assert_eq!(ids(&second), ["van-3"], "{second}");
    let foreign = app
        .admin
        .request(Method::GET, "/V2/1000/devices?pageSize=1")
        .header("X-CONTINUATIONTOKEN", &token)
        .send()
        .await
        .expect("GET");
    assert_problem(foreign, 400, "invalid_continuation_token").await;

    for bad in ["jane", "-1", "1.5", ""] {
        let response = app
            .admin
            .get(&format!("/V2/1000/devices?userId={bad}"))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["userId"], "{bad:?}");
    }
}
