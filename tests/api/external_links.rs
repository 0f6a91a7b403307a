use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    create_list_sorted_get_delete,
    invalid_links_are_refused_and_nothing_stored,
    sibling_404_and_permissions,
);

fn link(name: &str, order: i32) -> Value {
    json!({"Name": name, "Link": format!("https://example.com/{name}"), "Order": order})
}

async fn create(client: &Client, tenant: &str, body: &Value) -> String {
    let response = client
        .post(&format!("/V2/{tenant}/tenantexternallinks"), body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create link {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

async fn names(client: &Client, tenant: &str) -> Vec<String> {
    client
        .get_json(&format!("/V2/{tenant}/tenantexternallinks"))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["Name"].as_str().unwrap().to_string())
        .collect()
}

async fn create_list_sorted_get_delete(app: TestApp) {
    let mut body = link("third", 2);
    body["LinkId"] = json!("777");
    let third = create(&app.admin, "1000", &body).await;
    assert_ne!(third, "777", "client-sent LinkId is ignored");
    let first = create(&app.admin, "1000", &link("first", -5)).await;
    create(&app.admin, "1000", &link("second-a", 1)).await;
    create(&app.admin, "1000", &link("second-b", 1)).await;
    assert_eq!(
        names(&app.admin, "1000").await,
        ["first", "second-a", "second-b", "third"]
    );

    let got = app
        .admin
        .get_json(&format!("/V2/1000/tenantexternallinks/{first}"))
        .await;
    assert_eq!(
        got,
        json!({"LinkId": first, "Name": "first", "Link": "https://example.com/first", "Order": -5})
    );
    // Intranet links are fine here (they are shown to users, not called by the server).
    create(
        &app.admin,
        "1000",
        &json!({"Name": "Intranet", "Link": "http://10.1.2.3/wiki", "Order": 9}),
    )
    .await;

    let path = format!("/V2/1000/tenantexternallinks/{third}");
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
    assert_not_found(app.admin.delete(&path).await).await;
    assert_eq!(
        names(&app.admin, "1000").await,
        ["first", "second-a", "second-b", "Intranet"]
    );
    assert_not_found(app.admin.get("/V2/1000/tenantexternallinks/abc").await).await;
}

async fn invalid_links_are_refused_and_nothing_stored(app: TestApp) {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"Link": "https://example.com", "Order": 1}),
            vec!["Name"],
        ),
        (
            json!({"Name": "", "Link": "https://example.com", "Order": 1}),
            vec!["Name"],
        ),
        (json!({"Name": "n", "Order": 1}), vec!["Link"]),
        (json!({"Name": "n", "Link": "", "Order": 1}), vec!["Link"]),
        (
            json!({"Name": "n", "Link": "ftp://example.com/f", "Order": 1}),
            vec!["Link"],
        ),
        (
            json!({"Name": "n", "Link": "example.com", "Order": 1}),
            vec!["Link"],
        ),
        (
            json!({"Name": "n", "Link": "javascript:alert(1)", "Order": 1}),
            vec!["Link"],
        ),
        (
            json!({"Name": "n", "Link": "https://example.com"}),
            vec!["Order"],
        ),
        (json!({}), vec!["Name", "Link", "Order"]),
        (
            json!({"Name": "n", "Link": "https://example.com", "Order": 1.5}),
            vec!["Order"],
        ),
        (
            json!({"Name": "n", "Link": "https://example.com", "Order": "first"}),
            vec!["Order"],
        ),
        (
            json!({"Name": "n", "Link": "https://example.com", "Order": 3_000_000_000_i64}),
            vec!["Order"],
        ),
        (
            json!({"Name": ["n"], "Link": "https://example.com", "Order": 1}),
            vec!["Name"],
        ),
        (json!({"Name": "n", "Link": 5, "Order": 1}), vec!["Link"]),
    ];
    for (body, fields) in cases {
        let response = app.admin.post("/V2/1000/tenantexternallinks", &body).await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), fields, "{body}");
    }
    assert!(names(&app.admin, "1000").await.is_empty());
}

async fn sibling_404_and_permissions(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let id = create(&app.admin, &a, &link("a-link", 1)).await;
    let (_, b_admin) = app.create_user(&b, "b@example.com", "Administrator").await;
    for path in [
        format!("/V2/{a}/tenantexternallinks/{id}"),
        format!("/V2/{b}/tenantexternallinks/{id}"),
        format!("/V2/{a}/tenantexternallinks"),
    ] {
        assert_not_found(b_admin.get(&path).await).await;
    }
    assert_not_found(
        b_admin
            .delete(&format!("/V2/{b}/tenantexternallinks/{id}"))
            .await,
    )
    .await;
    assert_not_found(
        b_admin
            .post(&format!("/V2/{a}/tenantexternallinks"), &link("x", 1))
            .await,
    )
    .await;
    // Links are not inherited: the parent's are not listed below it.
    create(&app.admin, "1000", &link("root-link", 1)).await;
    assert_eq!(names(&app.admin, &a).await, ["a-link"]);
    assert!(names(&b_admin, &b).await.is_empty());

    let (_, reader) = app.create_user(&a, "reader@example.com", "ReadOnly").await;
    let path = format!("/V2/{a}/tenantexternallinks/{id}");
    assert_problem(
        reader
            .post(&format!("/V2/{a}/tenantexternallinks"), &link("r", 1))
            .await,
        403,
        "forbidden",
    )
    .await;
    assert_problem(reader.delete(&path).await, 403, "forbidden").await;
    assert_eq!(reader.get_json(&path).await["Name"], "a-link");
    assert_eq!(names(&reader, &a).await, ["a-link"]);
}
