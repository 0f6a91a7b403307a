use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    profile_round_trip_by_id_and_username,
    invalid_profile_lists_fields_and_changes_nothing,
    profile_patch_and_read_only_username,
    users_edit_only_their_own_profile,
    profiles_of_other_tenants_are_404,
);

async fn profile_round_trip_by_id_and_username(app: TestApp) {
    let (id, _) = app.create_user("1000", "pro@example.com", "User").await;
    let empty = app
        .admin
        .get_json(&format!("/V2/1000/userprofile/{id}"))
        .await;
    assert_eq!(empty["Username"], "pro@example.com");
    let profile = json!({
        "Username": "ignored@example.com", "DateOfBirth": "1990-04-01T00:00:00Z", "City": "Leeds",
        "CellPhone": "+44 7700 900123", "TimeZoneId": "GMT Standard Time", "CultureName": "en-GB",
        "SpeedUnits": "mph", "DistanceUnits": "ft", "PositionFormat": "DegreeMinute",
        "EmergencyContactName": "Sam", "EmergencyContactTelephoneNumber": "+447700900456",
        "Properties": {"BloodType": "O+"}
    });
    let response = app
        .admin
        .put("/V2/1000/userprofile/pro@example.com", &profile)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let stored = app
        .admin
        .get_json(&format!("/V2/1000/userprofile/{id}"))
        .await;
    assert_eq!(stored["Username"], "pro@example.com");
    assert_eq!(stored["City"], "Leeds");
    assert_eq!(stored["SpeedUnits"], "mph");
    assert_eq!(stored["DateOfBirth"], "1990-04-01T00:00:00Z");
    assert_eq!(stored["Properties"]["BloodType"], "O+");
    assert!(stored["Timestamp"].is_string());
    assert_eq!(
        app.admin
            .get_json("/V2/1000/userprofile/PRO@example.com")
            .await,
        stored
    );
    let all = app.admin.get_json("/V2/1000/userprofile").await;
    assert_eq!(all.as_array().unwrap().len(), 2);
}

async fn invalid_profile_lists_fields_and_changes_nothing(app: TestApp) {
    let (id, _) = app.create_user("1000", "bad@example.com", "User").await;
    let before = app
        .admin
        .get_json(&format!("/V2/1000/userprofile/{id}"))
        .await;
    let response = app
        .admin
        .put(
            &format!("/V2/1000/userprofile/{id}"),
            &json!({"DaytimePhone": "0113 496 0000", "SpeedUnits": "furlongs", "DistanceUnits": "km",
                    "PositionFormat": "DMS", "TimeZoneId": "Atlantis/Capital"}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        [
            "DaytimePhone",
            "SpeedUnits",
            "DistanceUnits",
            "PositionFormat",
            "TimeZoneId"
        ]
    );
    let wrong_type = app
        .admin
        .put(&format!("/V2/1000/userprofile/{id}"), &json!({"City": 3}))
        .await;
    assert_eq!(
        problem_fields(&assert_problem(wrong_type, 400, "validation_failed").await),
        ["City"]
    );
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/1000/userprofile/{id}"))
            .await,
        before
    );
}

async fn profile_patch_and_read_only_username(app: TestApp) {
    let (id, _) = app.create_user("1000", "pp@example.com", "User").await;
    let path = format!("/V2/1000/userprofile/{id}");
    let ok = app
        .admin
        .patch(
            &path,
            &json!([{"op": "add", "path": "/City", "value": "York"}]),
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(app.admin.get_json(&path).await["City"], "York");
    let read_only = app
        .admin
        .patch(
            &path,
            &json!([{"op": "replace", "path": "/Username", "value": "x@example.com"}]),
        )
        .await;
    assert_problem(read_only, 400, "validation_failed").await;
    let invalid = app
        .admin
        .patch(
            &path,
            &json!([{"op": "replace", "path": "/SpeedUnits", "value": "warp"}]),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(invalid, 400, "validation_failed").await),
        ["SpeedUnits"]
    );
    let after = app.admin.get_json(&path).await;
    assert_eq!(after["Username"], "pp@example.com");
    assert!(after["SpeedUnits"].is_null());
}

async fn users_edit_only_their_own_profile(app: TestApp) {
    let (me, my_client) = app.create_user("1000", "me@example.com", "User").await;
    let (other, _) = app.create_user("1000", "other@example.com", "User").await;
    let mine = my_client
        .put(
            &format!("/V2/1000/userprofile/{me}"),
            &json!({"City": "Hull"}),
        )
        .await;
    assert_eq!(mine.status(), StatusCode::OK);
    let theirs = my_client
        .put(
            &format!("/V2/1000/userprofile/{other}"),
            &json!({"City": "Hull"}),
        )
        .await;
    assert_problem(theirs, 403, "forbidden").await;
    assert!(
        app.admin
            .get_json(&format!("/V2/1000/userprofile/{other}"))
            .await["City"]
            .is_null()
    );
}

async fn profiles_of_other_tenants_are_404(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let (b_id, _) = app.create_user(&b, "b@example.com", "User").await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    assert_not_found(a_admin.get(&format!("/V2/{a}/userprofile/{b_id}")).await).await;
    assert_not_found(a_admin.get(&format!("/V2/{b}/userprofile/{b_id}")).await).await;
    assert_not_found(
        a_admin
            .put(
                &format!("/V2/{b}/userprofile/{b_id}"),
                &json!({"City": "x"}),
            )
            .await,
    )
    .await;
    assert_eq!(
        a_admin
            .get_json(&format!("/V2/{a}/userprofile"))
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
