//! Who sees and changes which itineraries: roles, approval, travelers, owners, tenant scope.

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem};
use crate::itineraries::{add, create_itinerary, flight, id_list, ids, with_flight};

backend_tests!(
    user_role_sees_and_changes_only_its_own,
    only_managers_decide_approval,
    read_only_reads_its_own_and_changes_nothing,
    travelers_see_their_itineraries_and_by_traveler_only,
    tenant_scope,
    deleting_the_owner_or_the_tenant,
);

async fn user_role_sees_and_changes_only_its_own(app: TestApp) {
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let (_, bob) = app.create_user("1000", "bob@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    let mine = create_itinerary(&alice, "1000", &json!({"Notes": "Alice's"})).await;
    let bobs = create_itinerary(&bob, "1000", &json!({"Notes": "Bob's"})).await;
    let admins = create_itinerary(&app.admin, "1000", &json!({})).await;

    assert_eq!(ids(&alice, "/V2/1000/itineraries").await, id_list(&[&mine]));
    assert_eq!(
        ids(&alice, "/V2/1000/itinerariesList").await,
        id_list(&[&mine])
    );
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries").await,
        id_list(&[&mine, &bobs, &admins])
    );
    let bobs_path = format!("/V2/1000/itineraries/{bobs}");
    assert_not_found(alice.get(&bobs_path).await).await;
    assert_not_found(alice.put(&bobs_path, &json!({"Notes": "mine now"})).await).await;
    assert_not_found(alice.delete(&bobs_path).await).await;
    assert_not_found(
        alice
            .post(
                &format!("{bobs_path}/flights"),
                &flight("2026-07-01T08:00:00Z", "2026-07-01T09:00:00Z"),
            )
            .await,
    )
    .await;
    assert_not_found(alice.get(&format!("{bobs_path}/travelers")).await).await;
    assert_eq!(manager.get_json(&bobs_path).await["Notes"], "Bob's");

    let mine_path = format!("/V2/1000/itineraries/{mine}");
    assert_eq!(
        alice
            .put(&mine_path, &json!({"Notes": "Changed"}))
            .await
            .status(),
        StatusCode::OK
    );
    add(
        &alice,
        &format!("{mine_path}/flights"),
        &flight("2026-07-01T08:00:00Z", "2026-07-01T09:00:00Z"),
    )
    .await;
    // A manager changes anyone's itinerary in scope.
    assert_eq!(
        manager
            .put(&mine_path, &json!({"Notes": "By manager"}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(alice.get_json(&mine_path).await["Notes"], "By manager");
    assert_eq!(alice.delete(&mine_path).await.status(), StatusCode::OK);
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries").await,
        id_list(&[&bobs, &admins])
    );
}

async fn only_managers_decide_approval(app: TestApp) {
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    // A User may not create an itinerary already decided.
    for state in [json!("Approved"), json!(2)] {
        let response = alice
            .post("/V2/1000/itineraries", &json!({"ApprovalState": state}))
            .await;
        assert_problem(response, 403, "forbidden").await;
    }
    assert!(ids(&manager, "/V2/1000/itineraries").await.is_empty());
    let id = create_itinerary(&alice, "1000", &json!({"ApprovalState": "NoDecision"})).await;
    let path = format!("/V2/1000/itineraries/{id}");
    for state in [json!(1), json!("Approved"), json!("Declined")] {
        let response = alice
            .put(&path, &json!({"ApprovalState": state, "Notes": "x"}))
            .await;
        assert_problem(response, 403, "forbidden").await;
    }
    let got = alice.get_json(&path).await;
    assert_eq!(got["ApprovalState"], "NoDecision");
    assert!(got["Notes"].is_null(), "a refused PUT changes nothing");
    // Sending the current state back is fine.
    assert_eq!(
        alice
            .put(&path, &json!({"ApprovalState": 0, "Notes": "same"}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        manager
            .put(&path, &json!({"ApprovalState": 1, "Notes": "same"}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(alice.get_json(&path).await["ApprovalState"], "Approved");
    let read = alice.get_json(&path).await;
    assert_eq!(alice.put(&path, &read).await.status(), StatusCode::OK);
    assert_problem(
        alice
            .put(&path, &json!({"ApprovalState": "NoDecision"}))
            .await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(alice.get_json(&path).await["ApprovalState"], "Approved");
    // A manager may create one already approved.
    let approved = create_itinerary(&manager, "1000", &json!({"ApprovalState": "Approved"})).await;
    assert_eq!(
        manager
            .get_json(&format!("/V2/1000/itineraries/{approved}"))
            .await["ApprovalState"],
        "Approved"
    );
}

async fn read_only_reads_its_own_and_changes_nothing(app: TestApp) {
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    assert_problem(
        reader.post("/V2/1000/itineraries", &json!({})).await,
        403,
        "forbidden",
    )
    .await;
    let other = create_itinerary(&app.admin, "1000", &json!({})).await;
    let named = create_itinerary(&app.admin, "1000", &json!({"Notes": "named"})).await;
    add(
        &app.admin,
        &format!("/V2/1000/itineraries/{named}/travelers"),
        &json!({"EmailAddress": "READER@example.com"}),
    )
    .await;
    assert_eq!(
        ids(&reader, "/V2/1000/itineraries").await,
        id_list(&[&named])
    );
    assert_not_found(reader.get(&format!("/V2/1000/itineraries/{other}")).await).await;
    let path = format!("/V2/1000/itineraries/{named}");
    assert_eq!(reader.get_json(&path).await["Notes"], "named");
    assert_problem(
        reader.put(&path, &json!({"Notes": "no"})).await,
        403,
        "forbidden",
    )
    .await;
    assert_problem(reader.delete(&path).await, 403, "forbidden").await;
    assert_problem(
        reader
            .post(
                &format!("{path}/flights"),
                &flight("2026-07-01T08:00:00Z", "2026-07-01T09:00:00Z"),
            )
            .await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(app.admin.get_json(&path).await["Flights"], json!([]));
}

async fn travelers_see_their_itineraries_and_by_traveler_only(app: TestApp) {
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    let for_alice = create_itinerary(&manager, "1000", &json!({"Notes": "for Alice"})).await;
    add(
        &manager,
        &format!("/V2/1000/itineraries/{for_alice}/travelers"),
        &json!({"EmailAddress": "Alice@Example.com"}),
    )
    .await;
    let managers_own = create_itinerary(&manager, "1000", &json!({})).await;
    let alices_own = create_itinerary(&alice, "1000", &json!({})).await;
    let others = create_itinerary(&app.admin, "1000", &json!({})).await;
    add(
        &app.admin,
        &format!("/V2/1000/itineraries/{others}/travelers"),
        &json!({"EmailAddress": "someone@example.com"}),
    )
    .await;

    // A traveler sees and (as a User) changes the itinerary naming them.
    assert_eq!(
        ids(&alice, "/V2/1000/itineraries").await,
        id_list(&[&for_alice, &alices_own])
    );
    let path = format!("/V2/1000/itineraries/{for_alice}");
    add(
        &alice,
        &format!("{path}/hotels"),
        &json!({"Name": "Inn", "CheckInTime": "2026-07-01T15:00:00Z", "CheckOutTime": "2026-07-02T10:00:00Z"}),
    )
    .await;
    assert_eq!(alice.get_json(&path).await["Hotels"][0]["Name"], "Inn");
    // byTravelerOnly narrows a manager's list to their own.
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries?byTravelerOnly=true").await,
        id_list(&[&for_alice, &managers_own])
    );
    assert_eq!(
        ids(&manager, "/V2/1000/itineraries?byTravelerOnly=false")
            .await
            .len(),
        4
    );
    assert_eq!(
        ids(&alice, "/V2/1000/itineraries?byTravelerOnly=true").await,
        ids(&alice, "/V2/1000/itineraries").await
    );
    assert_eq!(
        ids(&app.admin, "/V2/1000/itinerariesList?byTravelerOnly=true").await,
        id_list(&[&others])
    );
    // Removing Alice as traveler takes the itinerary out of her view.
    let travelers = manager.get_json(&format!("{path}/travelers")).await;
    let traveler = travelers[0]["Id"].as_i64().unwrap();
    assert_eq!(
        manager
            .delete(&format!("{path}/travelers/{traveler}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_not_found(alice.get(&path).await).await;
    assert_eq!(
        ids(&alice, "/V2/1000/itineraries").await,
        id_list(&[&alices_own])
    );
}

async fn tenant_scope(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let grandchild = app.create_tenant(&a, "A1").await;
    let in_a = with_flight(
        &app.admin,
        &a,
        "2026-07-01T08:00:00Z",
        "2026-07-01T10:00:00Z",
    )
    .await;
    let in_a1 = create_itinerary(&app.admin, &grandchild, &json!({})).await;
    let in_root = create_itinerary(&app.admin, "1000", &json!({})).await;
    let (_, b_admin) = app
        .create_user(&b, "b-admin@example.com", "Administrator")
        .await;
    let (_, a_admin) = app
        .create_user(&a, "a-admin@example.com", "Administrator")
        .await;

    // A sibling sees nothing of A, through either tenant's path.
    for path in [
        format!("/V2/{b}/itineraries/{in_a}"),
        format!("/V2/{a}/itineraries/{in_a}"),
        format!("/V2/{a}/itineraries"),
        format!("/V2/{a}/itinerariesList"),
        format!("/V2/{a}/itineraries/{in_a}/flights"),
        format!("/V2/{b}/itineraries/{in_a}/flights"),
        format!("/V2/{a}/itineraries/{in_a}/regions"),
    ] {
        assert_not_found(b_admin.get(&path).await).await;
    }
    for path in [
        format!("/V2/{b}/itineraries/{in_a}"),
        format!("/V2/{a}/itineraries/{in_a}"),
    ] {
        assert_not_found(b_admin.put(&path, &json!({"Notes": "x"})).await).await;
        assert_not_found(b_admin.delete(&path).await).await;
        assert_not_found(
            b_admin
                .post(
                    &format!("{path}/travelers"),
                    &json!({"EmailAddress": "x@example.com"}),
                )
                .await,
        )
        .await;
    }
    assert!(
        ids(&b_admin, &format!("/V2/{b}/itineraries"))
            .await
            .is_empty()
    );
    assert!(
        ids(&b_admin, &format!("/V2/{b}/itineraries?subtenants=true"))
            .await
            .is_empty()
    );
    // A child cannot reach its parent's itineraries.
    assert_not_found(
        a_admin
            .get(&format!("/V2/1000/itineraries/{in_root}"))
            .await,
    )
    .await;
    assert_not_found(a_admin.get(&format!("/V2/{a}/itineraries/{in_root}")).await).await;

    // An itinerary is addressed under its own tenant only; lists widen on request.
    assert_not_found(app.admin.get(&format!("/V2/1000/itineraries/{in_a}")).await).await;
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/{a}/itineraries/{in_a}"))
            .await["TenantCode"],
        a
    );
    assert_eq!(
        ids(&app.admin, "/V2/1000/itineraries").await,
        id_list(&[&in_root])
    );
    let all = app
        .admin
        .get_json("/V2/1000/itineraries?subtenants=true")
        .await;
    let tenants: Vec<(i64, String)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["Id"].as_i64().unwrap(),
                i["TenantCode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        tenants,
        [
            (in_a.parse().unwrap(), a.clone()),
            (in_a1.parse().unwrap(), grandchild.clone()),
            (in_root.parse().unwrap(), "1000".to_string()),
        ]
    );
    assert_eq!(
        ids(
            &a_admin,
            &format!("/V2/{a}/itinerariesList?subtenants=true")
        )
        .await,
        id_list(&[&in_a, &in_a1])
    );
    assert_eq!(
        ids(&a_admin, &format!("/V2/{grandchild}/itineraries")).await,
        id_list(&[&in_a1])
    );
}

async fn deleting_the_owner_or_the_tenant(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let (alice_id, alice) = app.create_user(&child, "alice@example.com", "User").await;
    let id = with_flight(
        &alice,
        &child,
        "2026-07-01T08:00:00Z",
        "2026-07-01T10:00:00Z",
    )
    .await;
    let path = format!("/V2/{child}/itineraries/{id}");
    add(
        &alice,
        &format!("{path}/travelers"),
        &json!({"EmailAddress": "alice@example.com"}),
    )
    .await;
    // The itinerary outlives its creator: travel history stays with the tenant.
    assert_eq!(
        app.admin
            .delete(&format!("/V2/{child}/users/{alice_id}"))
            .await
            .status(),
        StatusCode::OK
    );
    let got = app.admin.get_json(&path).await;
    assert_eq!(got["Flights"].as_array().unwrap().len(), 1);
    assert_eq!(got["Travelers"][0]["EmailAddress"], "alice@example.com");
    // Deleting the tenant removes its itineraries, with a region attached.
    let region = json!({"GeometryId": "zone", "Name": "Zone", "RiskLevel": 2,
        "Polygon": [[{"Lat": 0, "Lon": 0}, {"Lat": 0, "Lon": 1}, {"Lat": 1, "Lon": 1}]]});
    assert_eq!(
        app.admin
            .post(&format!("/V2/{child}/riskregions"), &region)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin
            .post(&format!("{path}/regions/zone"), &json!(null))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.delete(&format!("/V2/{child}")).await.status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&path).await).await;
    assert!(
        ids(&app.admin, "/V2/1000/itineraries?subtenants=true")
            .await
            .is_empty()
    );
}
