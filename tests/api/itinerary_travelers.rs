//! Itinerary travelers: profile fields copied at read time, refusals, the per-itinerary limit.

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};
use crate::itineraries::{add, create_itinerary};
use crate::itinerary_parts::{etag, itinerary};

backend_tests!(
    travelers_and_profile_fields,
    traveler_refusals_store_nothing,
    limits_per_itinerary,
);

async fn travelers_and_profile_fields(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let sibling = app.create_tenant("1000", "Sibling").await;
    let (jane_id, _) = app.create_user(&child, "jane@acme.example", "User").await;
    let (outsider_id, _) = app
        .create_user(&sibling, "outsider@acme.example", "User")
        .await;
    let profile = json!({"Citizenship": "British", "Address": "1 High Street", "City": "London",
        "State": "Greater London", "PostalCode": "SW1A 1AA", "Country": "United Kingdom",
        "DaytimePhone": "+44 20 7946 0958", "CellPhone": "+447700900123",
        "EmergencyContactName": "John Doe", "EmergencyContactTelephoneNumber": "+447700900124",
        "EmergencyContactName2": "Mary Doe", "EmergencyContactAddress2": "mary@example.com"});
    for (tenant, id) in [(&child, &jane_id), (&sibling, &outsider_id)] {
        let put = app
            .admin
            .put(&format!("/V2/{tenant}/userprofile/{id}"), &profile)
            .await;
        assert_eq!(put.status(), StatusCode::OK);
    }
    let (_, child_manager) = app
        .create_user(&child, "manager@acme.example", "Manager")
        .await;
    let id = create_itinerary(&child_manager, &child, &json!({})).await;
    let path = format!("/V2/{child}/itineraries/{id}");
    let jane = add(
        &child_manager,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": " JANE@acme.example ", "Firstname": "Jane", "Lastname": "Doe",
                "DateOfBirth": "1985-04-12", "PhoneNumber": "+447700900123",
                "Citizenship": "ignored", "Country": "ignored", "Id": 5}),
    )
    .await;
    let outsider = add(
        &child_manager,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "outsider@acme.example"}),
    )
    .await;
    let stranger = add(
        &child_manager,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "nobody@elsewhere.example", "Citizenship": "ignored"}),
    )
    .await;
    let got = child_manager
        .get_json(&format!("{path}/travelers/{jane}"))
        .await;
    assert_eq!(got["EmailAddress"], "JANE@acme.example");
    assert_eq!(got["Firstname"], "Jane");
    assert_eq!(got["DateOfBirth"], "1985-04-12T00:00:00Z");
    assert_eq!(got["Citizenship"], "British");
    assert_eq!(got["Address"], "1 High Street");
    assert_eq!(
        got["CityStatePostalCode"],
        "London, Greater London, SW1A 1AA"
    );
    assert_eq!(got["Country"], "United Kingdom");
    assert_eq!(got["PhoneNumbersAll"], "+44 20 7946 0958; +447700900123");
    assert_eq!(got["EmergencyContact1"], "John Doe, +447700900124");
    assert_eq!(got["EmergencyContact2"], "Mary Doe, mary@example.com");
    // A user outside the caller's scope, and no user at all: nothing copied.
    for other in [&outsider, &stranger] {
        let got = child_manager
            .get_json(&format!("{path}/travelers/{other}"))
            .await;
        for field in [
            "Citizenship",
            "Address",
            "Country",
            "PhoneNumbersAll",
            "EmergencyContact1",
        ] {
            assert!(got[field].is_null(), "{field} of {got}");
        }
    }
    // The root administrator's scope covers the sibling: the outsider is enriched there.
    let listed = app.admin.get_json(&format!("{path}/travelers")).await;
    assert_eq!(listed.as_array().unwrap().len(), 3);
    assert_eq!(listed[1]["Citizenship"], "British");
    // Profile fields are read at read time: a profile change shows at once.
    let mut changed = profile.clone();
    changed["Citizenship"] = json!("Irish");
    app.admin
        .put(&format!("/V2/{child}/userprofile/{jane_id}"), &changed)
        .await;
    let itinerary = child_manager.get_json(&path).await;
    assert_eq!(itinerary["Travelers"][0]["Citizenship"], "Irish");
    assert_eq!(
        itinerary["Travelers"][0]["Id"],
        jane.parse::<i64>().unwrap()
    );

    // Travelers are unique per itinerary (ignoring case); no PUT; DELETE removes.
    let response = child_manager
        .post(
            &format!("{path}/travelers"),
            &json!({"EmailAddress": "jane@ACME.example"}),
        )
        .await;
    assert_problem(response, 409, "conflict").await;
    let response = child_manager
        .put(
            &format!("{path}/travelers/{jane}"),
            &json!({"EmailAddress": "jane@acme.example"}),
        )
        .await;
    assert_problem(response, 405, "method_not_allowed").await;
    assert_eq!(
        child_manager
            .delete(&format!("{path}/travelers/{jane}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_not_found(child_manager.get(&format!("{path}/travelers/{jane}")).await).await;
    assert_eq!(
        child_manager
            .get_json(&format!("{path}/travelers"))
            .await
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn traveler_refusals_store_nothing(app: TestApp) {
    let path = itinerary(&app.admin).await;
    let before = etag(&app.admin, &path).await;
    for (body, fields) in [
        (json!({}), vec!["EmailAddress"]),
        (json!({"EmailAddress": "  "}), vec!["EmailAddress"]),
        (
            json!({"EmailAddress": "not-an-address"}),
            vec!["EmailAddress"],
        ),
        (json!({"EmailAddress": "a@b"}), vec!["EmailAddress"]),
        (json!({"EmailAddress": 7}), vec!["EmailAddress"]),
        (
            json!({"EmailAddress": "a@example.com", "PhoneNumber": "07700 900123"}),
            vec!["PhoneNumber"],
        ),
        (
            json!({"EmailAddress": "a@example.com", "DateOfBirth": "2999-01-01"}),
            vec!["DateOfBirth"],
        ),
        (
            json!({"EmailAddress": "a@example.com", "DateOfBirth": "long ago"}),
            vec!["DateOfBirth"],
        ),
        (
            json!({"EmailAddress": "a@example.com", "Firstname": "f".repeat(201)}),
            vec!["Firstname"],
        ),
    ] {
        let response = app.admin.post(&format!("{path}/travelers"), &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}");
    }
    assert_eq!(
        app.admin.get_json(&format!("{path}/travelers")).await,
        json!([])
    );
    assert_eq!(etag(&app.admin, &path).await, before);
}

async fn limits_per_itinerary(app: TestApp) {
    // 100 travelers at most; the 101st is a conflict and changes nothing.
    let path = itinerary(&app.admin).await;
    for i in 0..100 {
        add(
            &app.admin,
            &format!("{path}/travelers"),
            &json!({"EmailAddress": format!("t{i}@example.com")}),
        )
        .await;
    }
    let before = etag(&app.admin, &path).await;
    let response = app
        .admin
        .post(
            &format!("{path}/travelers"),
            &json!({"EmailAddress": "one-more@example.com"}),
        )
        .await;
    assert_problem(response, 409, "conflict").await;
    assert_eq!(etag(&app.admin, &path).await, before);
}
