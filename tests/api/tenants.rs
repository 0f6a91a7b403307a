use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    root_tenant_is_bootstrapped,
    create_subtenant_assigns_code_and_lists_it,
    tenant_validation_lists_every_field,
    put_honours_if_match_and_changes_etag,
    if_none_match_answers_304,
    invalid_put_changes_nothing,
    delete_refuses_while_subtenants_exist_and_removes_users,
    nobody_deletes_their_home_tenant,
    tenants_outside_the_subtree_are_404,
    codes_that_name_no_tenant_are_404,
    parent_code_only_when_parent_is_reachable,
    only_administrators_manage_tenants,
    subtenants_true_lists_every_descendant,
);

async fn root_tenant_is_bootstrapped(app: TestApp) {
    let root = app.admin.get_json("/V2/1000").await;
    assert_eq!(root["TenantCode"], "1000");
    assert!(root["ParentTenantCode"].is_null());
    assert!(root["ETag"].is_string());
}

async fn create_subtenant_assigns_code_and_lists_it(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000",
            &json!({"Description": "Acme", "TimeZoneId": "Europe/London", "TenantCode": "9999"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let created: serde_json::Value = response.json().await.unwrap();
    let code = created["TenantCode"].as_str().unwrap().to_string();
    assert_ne!(code, "9999", "client-sent TenantCode is ignored");
    assert!(code.len() >= 4 && code.chars().all(|c| c.is_ascii_digit()));
    assert_eq!(created["ParentTenantCode"], "1000");
    let listed = app.admin.get_json("/V2/1000/tenants").await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["Description"], "Acme");
}

async fn tenant_validation_lists_every_field(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000",
            &json!({
                "Description": "x".repeat(251),
                "AdminContacts": "a@example.com;not-an-email",
                "TimeZoneId": "Mars/Olympus",
                "CultureName": "??",
            }),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["Description", "AdminContacts", "TimeZoneId", "CultureName"]
    );
    assert_eq!(app.admin.get_json("/V2/1000/tenants").await, json!([]));
}

async fn put_honours_if_match_and_changes_etag(app: TestApp) {
    let code = app.create_tenant("1000", "Acme").await;
    let before = app.admin.get_json(&format!("/V2/{code}")).await;
    let etag = before["ETag"].as_str().unwrap().to_string();
    let body = json!({"Description": "Acme Ltd", "CultureName": "en-GB"});

    let stale = app
        .admin
        .request(reqwest::Method::PUT, &format!("/V2/{code}"))
        .header("if-match", "\"not-the-etag\"")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(
        app.admin.get_json(&format!("/V2/{code}")).await["Description"],
        "Acme"
    );

    let ok = app
        .admin
        .request(reqwest::Method::PUT, &format!("/V2/{code}"))
        .header("if-match", format!("\"{etag}\""))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let after = app.admin.get_json(&format!("/V2/{code}")).await;
    assert_eq!(after["Description"], "Acme Ltd");
    assert_eq!(after["CultureName"], "en-GB");
    assert_ne!(after["ETag"], before["ETag"]);
}

async fn if_none_match_answers_304(app: TestApp) {
    let response = app.admin.get("/V2/1000").await;
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    let again = app
        .admin
        .request(reqwest::Method::GET, "/V2/1000")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    let other = app
        .admin
        .request(reqwest::Method::GET, "/V2/1000")
        .header("if-none-match", "\"something-else\"")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::OK);
}

async fn invalid_put_changes_nothing(app: TestApp) {
    let code = app.create_tenant("1000", "Acme").await;
    let before = app.admin.get_json(&format!("/V2/{code}")).await;
    for body in [
        json!({"Description": ""}),
        json!({}),
        json!({"Description": "ok", "SalesContacts": "x@"}),
        json!({"Description": 12}),
    ] {
        let response = app.admin.put(&format!("/V2/{code}"), &body).await;
        assert_problem(response, 400, "validation_failed").await;
    }
    assert_eq!(app.admin.get_json(&format!("/V2/{code}")).await, before);
}

async fn delete_refuses_while_subtenants_exist_and_removes_users(app: TestApp) {
    let parent = app.create_tenant("1000", "Parent").await;
    let child = app.create_tenant(&parent, "Child").await;
    let (_, child_user) = app.create_user(&child, "worker@example.com", "User").await;
    assert_eq!(
        child_user.get(&format!("/V2/{child}")).await.status(),
        StatusCode::OK
    );

    assert_problem(
        app.admin.delete(&format!("/V2/{parent}")).await,
        409,
        "conflict",
    )
    .await;
    assert_eq!(
        app.admin.get(&format!("/V2/{child}")).await.status(),
        StatusCode::OK
    );

    assert_eq!(
        app.admin.delete(&format!("/V2/{child}")).await.status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&format!("/V2/{child}")).await).await;
    // The tenant's users went with it.
    assert_problem(
        child_user.get(&format!("/V2/{parent}")).await,
        401,
        "unauthorized",
    )
    .await;
    assert_eq!(
        app.admin.delete(&format!("/V2/{parent}")).await.status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.get_json("/V2/1000/tenants").await, json!([]));
}

async fn nobody_deletes_their_home_tenant(app: TestApp) {
    assert_problem(app.admin.delete("/V2/1000").await, 403, "forbidden").await;
    let code = app.create_tenant("1000", "Acme").await;
    let (_, admin) = app
        .create_user(&code, "boss@acme.example", "Administrator")
        .await;
    assert_problem(admin.delete(&format!("/V2/{code}")).await, 403, "forbidden").await;
    assert_eq!(
        app.admin.get(&format!("/V2/{code}")).await.status(),
        StatusCode::OK
    );
}

async fn tenants_outside_the_subtree_are_404(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    let sibling = a_admin.get(&format!("/V2/{b}")).await;
    let sibling = assert_not_found(sibling).await;
    let missing = assert_not_found(a_admin.get("/V2/987654").await).await;
    assert_eq!(sibling["detail"], missing["detail"], "no existence leak");
    assert_not_found(a_admin.get("/V2/1000").await).await;
    assert_not_found(a_admin.get(&format!("/V2/{b}/users")).await).await;
    assert_not_found(
        a_admin
            .put(&format!("/V2/{b}"), &json!({"Description": "hijacked"}))
            .await,
    )
    .await;
    assert_not_found(a_admin.delete(&format!("/V2/{b}")).await).await;
    assert_not_found(
        a_admin
            .post(&format!("/V2/{b}"), &json!({"Description": "x"}))
            .await,
    )
    .await;
    assert_eq!(
        app.admin.get_json(&format!("/V2/{b}")).await["Description"],
        "B"
    );
    assert_eq!(
        app.admin.get_json(&format!("/V2/{b}/tenants")).await,
        json!([])
    );
}

async fn codes_that_name_no_tenant_are_404(app: TestApp) {
    // Not a tenant code at all (letters, a sign, too long): the same 404 as an unknown one.
    let missing = assert_not_found(app.admin.get("/V2/987654").await).await;
    let too_long = "1".repeat(21);
    for code in ["10a0", "abc", "-1000", "+1000", too_long.as_str()] {
        for path in [format!("/V2/{code}"), format!("/V2/{code}/users")] {
            let answer = assert_not_found(app.admin.get(&path).await).await;
            assert_eq!(answer["detail"], missing["detail"], "{path}");
        }
    }
}

async fn parent_code_only_when_parent_is_reachable(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let child = app.create_tenant(&a, "A child").await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    assert!(a_admin.get_json(&format!("/V2/{a}")).await["ParentTenantCode"].is_null());
    assert_eq!(
        a_admin.get_json(&format!("/V2/{child}")).await["ParentTenantCode"],
        a.as_str()
    );
    assert_eq!(
        app.admin.get_json(&format!("/V2/{a}")).await["ParentTenantCode"],
        "1000"
    );
}

async fn only_administrators_manage_tenants(app: TestApp) {
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    for client in [&manager, &reader] {
        assert_problem(
            client.post("/V2/1000", &json!({"Description": "x"})).await,
            403,
            "forbidden",
        )
        .await;
        assert_problem(
            client.put("/V2/1000", &json!({"Description": "x"})).await,
            403,
            "forbidden",
        )
        .await;
        assert_eq!(client.get("/V2/1000").await.status(), StatusCode::OK);
    }
    assert_eq!(app.admin.get_json("/V2/1000/tenants").await, json!([]));
    assert_eq!(app.admin.get_json("/V2/1000").await["Description"], "Root");
}

/// `?subtenants=true`: the whole subtree below the path tenant (what the console's tenant
/// switcher offers), each after its parent; never the tenant itself or anything outside.
async fn subtenants_true_lists_every_descendant(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let a1 = app.create_tenant(&a, "A1").await;
    let a1x = app.create_tenant(&a1, "A1x").await;
    let b = app.create_tenant("1000", "B").await;
    let codes = |list: serde_json::Value| -> Vec<(String, String)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["TenantCode"].as_str().unwrap().to_string(),
                    t["ParentTenantCode"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let all = codes(app.admin.get_json("/V2/1000/tenants?subtenants=true").await);
    assert_eq!(all.len(), 4, "{all:?}");
    for (code, parent) in [(&a, "1000"), (&a1, &a), (&a1x, &a1), (&b, "1000")] {
        let at = all.iter().position(|(c, _)| c == code).unwrap();
        assert_eq!(all[at].1, parent);
        if let Some(parent_at) = all.iter().position(|(c, _)| c == parent) {
            assert!(parent_at < at, "{all:?}");
        }
    }
    // Direct children only without it.
    assert_eq!(codes(app.admin.get_json("/V2/1000/tenants").await).len(), 2);
    // A user of A sees A's subtree only.
    let (_, a_reader) = app.create_user(&a, "reader@a.example", "ReadOnly").await;
    assert_eq!(
        codes(
            a_reader
                .get_json(&format!("/V2/{a}/tenants?subtenants=true"))
                .await
        ),
        [(a1.clone(), a.clone()), (a1x.clone(), a1.clone())]
    );
    assert_not_found(
        a_reader
            .get(&format!("/V2/{b}/tenants?subtenants=true"))
            .await,
    )
    .await;
    assert_problem(
        a_reader
            .get(&format!("/V2/{a}/tenants?subtenants=maybe"))
            .await,
        400,
        "validation_failed",
    )
    .await;
}
