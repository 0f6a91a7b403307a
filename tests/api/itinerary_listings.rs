//! Itinerary listings: window, approval and PNR filters, bad query parameters, paging.

use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_problem, problem_fields};
use crate::itineraries::{create_itinerary, id_list, ids, with_flight};

backend_tests!(
    window_and_approval_filters,
    bad_query_parameters_are_named,
    pnr_number_ignores_every_other_parameter,
    paged_list,
);

async fn window_and_approval_filters(app: TestApp) {
    let june = with_flight(
        &app.admin,
        "1000",
        "2026-06-10T08:00:00Z",
        "2026-06-12T08:00:00Z",
    )
    .await;
    let july = with_flight(
        &app.admin,
        "1000",
        "2026-07-01T08:00:00Z",
        "2026-07-05T18:00:00Z",
    )
    .await;
    let spanning = with_flight(
        &app.admin,
        "1000",
        "2026-06-30T22:00:00Z",
        "2026-08-02T06:00:00Z",
    )
    .await;
    let empty = create_itinerary(&app.admin, "1000", &json!({})).await;

    let list = "/V2/1000/itineraries";
    assert_eq!(
        ids(&app.admin, list).await,
        id_list(&[&june, &spanning, &july, &empty]),
        "by Start, then id; without segments last"
    );
    for (query, expected) in [
        (
            "startDate=2026-07-01T00:00:00Z&endDate=2026-07-31T23:59:59Z",
            vec![&spanning, &july],
        ),
        (
            "startDate=2026-06-12T08:00:00Z",
            vec![&june, &spanning, &july],
        ),
        ("startDate=2026-06-12T08:00:01Z", vec![&spanning, &july]),
        ("endDate=2026-06-10T08:00:00Z", vec![&june]),
        ("endDate=2026-06-10T07:59:59Z", vec![]),
        ("startDate=2026-07-06&endDate=2026-07-07", vec![&spanning]),
        (
            "startDate=2026-07-05T20:00:00%2B02:00&endDate=2026-07-05T20:00:00%2B02:00",
            vec![&spanning, &july],
        ),
        ("startDate=2027-01-01", vec![]),
    ] {
        assert_eq!(
            ids(&app.admin, &format!("{list}?{query}")).await,
            id_list(&expected),
            "{query}"
        );
    }
    let path = |id: &str| format!("/V2/1000/itineraries/{id}");
    app.admin
        .put(&path(&july), &json!({"ApprovalState": 1}))
        .await;
    app.admin
        .put(&path(&june), &json!({"ApprovalState": 2}))
        .await;
    for (state, expected) in [
        ("-1", vec![&june, &spanning, &july, &empty]),
        ("0", vec![&spanning, &empty]),
        ("1", vec![&july]),
        ("2", vec![&june]),
    ] {
        assert_eq!(
            ids(&app.admin, &format!("{list}?approvalState={state}")).await,
            id_list(&expected),
            "approvalState={state}"
        );
    }
    assert_eq!(
        ids(
            &app.admin,
            &format!("{list}?approvalState=0&startDate=2026-07-01")
        )
        .await,
        id_list(&[&spanning])
    );
}

async fn bad_query_parameters_are_named(app: TestApp) {
    create_itinerary(&app.admin, "1000", &json!({})).await;
    for list in ["/V2/1000/itineraries", "/V2/1000/itinerariesList"] {
        for (query, fields) in [
            ("startDate=yesterday", vec!["startDate"]),
            ("endDate=2026-13-01", vec!["endDate"]),
            ("startDate=2026-07-02&endDate=2026-07-01", vec!["endDate"]),
            ("approvalState=3", vec!["approvalState"]),
            ("approvalState=-2", vec!["approvalState"]),
            ("approvalState=Approved", vec!["approvalState"]),
            ("subtenants=yes", vec!["subtenants"]),
            ("byTravelerOnly=1", vec!["byTravelerOnly"]),
            (
                "approvalState=9&startDate=x",
                vec!["startDate", "approvalState"],
            ),
        ] {
            let response = app.admin.get(&format!("{list}?{query}")).await;
            let problem = assert_problem(response, 400, "validation_failed").await;
            assert_eq!(problem_fields(&problem), fields, "{list}?{query}");
        }
    }
    for (query, fields) in [
        ("page=0", vec!["page"]),
        ("page=-1", vec!["page"]),
        ("page=x", vec!["page"]),
        ("page=2147483648", vec!["page"]),
        ("pageSize=0", vec!["pageSize"]),
        ("pageSize=1001", vec!["pageSize"]),
        ("pageSize=1.5", vec!["pageSize"]),
        (
            "approvalState=5&pageSize=0",
            vec!["approvalState", "pageSize"],
        ),
    ] {
        let response = app
            .admin
            .get(&format!("/V2/1000/itinerariesList?{query}"))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{query}");
    }
}

async fn pnr_number_ignores_every_other_parameter(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let a = create_itinerary(&app.admin, "1000", &json!({"PnrNumber": "X7K2QP"})).await;
    let b = with_flight(
        &app.admin,
        "1000",
        "2026-07-01T08:00:00Z",
        "2026-07-01T10:00:00Z",
    )
    .await;
    app.admin
        .put(
            &format!("/V2/1000/itineraries/{b}"),
            &json!({"PnrNumber": "x7k2qp", "ApprovalState": 2}),
        )
        .await;
    create_itinerary(&app.admin, "1000", &json!({"PnrNumber": "OTHER1"})).await;
    create_itinerary(&app.admin, &child, &json!({"PnrNumber": "X7K2QP"})).await;
    for query in [
        "pnrNumber=X7K2QP",
        "pnrNumber=x7k2qp&approvalState=1",
        "pnrNumber=X7K2QP&approvalState=banana&startDate=never&subtenants=true",
        "pnrNumber=X7K2QP&startDate=2030-01-01&byTravelerOnly=maybe",
    ] {
        assert_eq!(
            ids(&app.admin, &format!("/V2/1000/itineraries?{query}")).await,
            id_list(&[&b, &a]),
            "{query}"
        );
    }
    assert_eq!(
        ids(
            &app.admin,
            "/V2/1000/itinerariesList?pnrNumber=X7K2QP&approvalState=7&pageSize=1&page=2"
        )
        .await,
        id_list(&[&a]),
        "paging still applies"
    );
    assert!(
        ids(&app.admin, "/V2/1000/itineraries?pnrNumber=NOPE")
            .await
            .is_empty()
    );
    // A blank pnrNumber counts as absent.
    assert_eq!(
        ids(&app.admin, "/V2/1000/itineraries?pnrNumber=")
            .await
            .len(),
        3
    );
    // A User finds only their own by PNR.
    let (_, alice) = app.create_user("1000", "alice@example.com", "User").await;
    assert!(
        ids(&alice, "/V2/1000/itineraries?pnrNumber=X7K2QP")
            .await
            .is_empty()
    );
}

async fn paged_list(app: TestApp) {
    let mut all = Vec::new();
    for day in [5, 3, 4, 1, 2] {
        all.push((
            day,
            with_flight(
                &app.admin,
                "1000",
                &format!("2026-07-0{day}T08:00:00Z"),
                &format!("2026-07-0{day}T10:00:00Z"),
            )
            .await,
        ));
    }
    all.sort();
    let ordered: Vec<i64> = all.iter().map(|(_, id)| id.parse().unwrap()).collect();
    let list = "/V2/1000/itinerariesList";
    assert_eq!(
        ids(&app.admin, list).await,
        ordered,
        "default page 1 of 100"
    );
    assert_eq!(
        ids(&app.admin, &format!("{list}?page=1&pageSize=2")).await,
        ordered[0..2]
    );
    assert_eq!(
        ids(&app.admin, &format!("{list}?page=2&pageSize=2")).await,
        ordered[2..4]
    );
    assert_eq!(
        ids(&app.admin, &format!("{list}?page=3&pageSize=2")).await,
        ordered[4..5]
    );
    assert!(
        ids(&app.admin, &format!("{list}?page=4&pageSize=2"))
            .await
            .is_empty()
    );
    assert!(
        ids(&app.admin, &format!("{list}?page=2147483647&pageSize=1000"))
            .await
            .is_empty()
    );
    assert_eq!(
        ids(
            &app.admin,
            &format!("{list}?pageSize=2&startDate=2026-07-02&endDate=2026-07-04")
        )
        .await,
        ordered[1..3]
    );
    let full = app.admin.get_json(&format!("{list}?pageSize=1")).await;
    assert_eq!(
        full[0]["Flights"].as_array().unwrap().len(),
        1,
        "full itineraries"
    );
}
