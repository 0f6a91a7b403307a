use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{PASSWORD, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    create_and_get_by_id_and_username,
    password_is_write_only_and_photo_on_request,
    duplicate_username_is_409_case_insensitively,
    invalid_user_lists_every_field_and_stores_nothing,
    wrong_types_and_malformed_json_are_400,
    manager_must_exist_in_scope,
    put_replaces_and_keeps_password_when_omitted,
    password_change_takes_effect_at_once,
    patch_applies_json_patch,
    patch_of_read_only_or_into_invalid_is_refused,
    delete_removes_user_and_login,
    paging_returns_every_user_exactly_once,
    paging_rejects_forged_and_foreign_tokens_and_bad_sizes,
    subtenants_parameter_includes_the_subtree,
    users_of_other_tenants_are_404,
    roles_limit_user_management,
    user_bodies_allow_large_photos_but_not_beyond_the_limit,
);

async fn user_count(app: &TestApp, tenant: &str) -> usize {
    app.admin
        .get_json(&format!("/V2/{tenant}/users"))
        .await
        .as_array()
        .unwrap()
        .len()
}

async fn create_and_get_by_id_and_username(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({
                "Username": "Jane.Doe@Example.com", "Password": PASSWORD, "FirstName": "Jane",
                "Gender": "Female", "Tags": {"Team": "North"}, "SecondaryFacilityIds": ["a", "b"],
                "UserId": "999", "FailedPasswordAttemptCount": 7
            }),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let id = location.rsplit('/').next().unwrap();
    assert_ne!(id, "999", "UserId is server-assigned");

    let by_id = app.admin.get_json(&location).await;
    assert_eq!(by_id["Username"], "Jane.Doe@Example.com");
    assert_eq!(by_id["UserId"], id);
    assert_eq!(by_id["TenantCode"], "1000");
    assert_eq!(by_id["UserRoleId"], "User");
    assert_eq!(by_id["FailedPasswordAttemptCount"], 0);
    assert_eq!(by_id["Tags"]["Team"], "North");
    assert_eq!(by_id["SecondaryFacilityIds"], json!(["a", "b"]));
    let by_name = app
        .admin
        .get_json("/V2/1000/users/jane.doe@example.com")
        .await;
    assert_eq!(by_name, by_id);
    assert_not_found(app.admin.get("/V2/1000/users/nobody@example.com").await).await;
    assert_not_found(app.admin.get("/V2/1000/users/not-an-id").await).await;
}

async fn password_is_write_only_and_photo_on_request(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": "p@example.com", "Password": PASSWORD, "Photo": "aGVsbG8="}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let user = app.admin.get_json("/V2/1000/users/p@example.com").await;
    assert!(user["Password"].is_null());
    assert!(user["Photo"].is_null());
    let with_photo = app
        .admin
        .get_json("/V2/1000/users/p@example.com?photo=true")
        .await;
    assert_eq!(with_photo["Photo"], "aGVsbG8=");
    let listed = app.admin.get_json("/V2/1000/users?photo=true").await;
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["Photo"] == "aGVsbG8=")
    );
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["Password"].is_null())
    );
    let body = app.admin.get("/V2/1000/users").await.text().await.unwrap();
    assert!(!body.contains(PASSWORD) && !body.contains("argon2"));
}

async fn duplicate_username_is_409_case_insensitively(app: TestApp) {
    let other = app.create_tenant("1000", "Other").await;
    app.create_user("1000", "dup@example.com", "User").await;
    let again = app
        .admin
        .post(
            &format!("/V2/{other}/users"),
            &json!({"Username": "DUP@example.com", "Password": PASSWORD}),
        )
        .await;
    assert_problem(again, 409, "conflict").await;
    assert_eq!(user_count(&app, &other).await, 0);
}

async fn invalid_user_lists_every_field_and_stores_nothing(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": "not-an-email", "Password": "short", "UserRoleId": "Emperor", "Gender": "Robot"}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["Username", "Password", "UserRoleId", "Gender"]
    );
    let missing = app
        .admin
        .post("/V2/1000/users", &json!({"FirstName": "x"}))
        .await;
    let problem = assert_problem(missing, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Username", "Password"]);
    assert_eq!(user_count(&app, "1000").await, 1);
}

async fn wrong_types_and_malformed_json_are_400(app: TestApp) {
    let wrong = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": 5, "Password": PASSWORD}),
        )
        .await;
    let problem = assert_problem(wrong, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Username"]);
    let wrong = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": "t@example.com", "Password": PASSWORD, "IsDisabled": "yes"}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(wrong, 400, "validation_failed").await),
        ["IsDisabled"]
    );
    let malformed = app
        .admin
        .request(Method::POST, "/V2/1000/users")
        .header("content-type", "application/json")
        .body("{\"Username\": ")
        .send()
        .await
        .unwrap();
    assert_problem(malformed, 400, "malformed_json").await;
    let empty = app
        .admin
        .request(Method::POST, "/V2/1000/users")
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_problem(empty, 400, "missing_body").await;
    assert_eq!(user_count(&app, "1000").await, 1);
}

async fn manager_must_exist_in_scope(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let (b_user, _) = app.create_user(&b, "b@example.com", "User").await;
    let (a_admin_id, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    let foreign = a_admin
        .post(
            &format!("/V2/{a}/users"),
            &json!({"Username": "w@a.example", "Password": PASSWORD, "ManagerUserId": b_user}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(foreign, 400, "validation_failed").await),
        ["ManagerUserId"]
    );
    let missing = a_admin
        .post(
            &format!("/V2/{a}/users"),
            &json!({"Username": "w@a.example", "Password": PASSWORD, "ManagerUserId": "424242"}),
        )
        .await;
    assert_problem(missing, 400, "validation_failed").await;
    let ok = a_admin
        .post(
            &format!("/V2/{a}/users"),
            &json!({"Username": "w@a.example", "Password": PASSWORD, "ManagerUserId": a_admin_id}),
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/{a}/users/w@a.example"))
            .await["ManagerUserId"],
        a_admin_id
    );
}

async fn put_replaces_and_keeps_password_when_omitted(app: TestApp) {
    let (id, user) = app.create_user("1000", "k@example.com", "User").await;
    let response = app
        .admin
        .put(
            &format!("/V2/1000/users/{id}"),
            &json!({"Username": "k@example.com", "LastName": "Keep", "IsPortalEnabled": true}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        user.get("/V2/1000").await.status(),
        StatusCode::OK,
        "password kept"
    );
    let stored = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(stored["LastName"], "Keep");
    assert_eq!(stored["IsPortalEnabled"], true);
    let bad = app
        .admin
        .put(
            &format!("/V2/1000/users/{id}"),
            &json!({"Username": "k@example.com", "Password": "short"}),
        )
        .await;
    assert_problem(bad, 400, "validation_failed").await;
    assert_eq!(
        app.admin.get_json(&format!("/V2/1000/users/{id}")).await,
        stored
    );
}

async fn password_change_takes_effect_at_once(app: TestApp) {
    let (id, old) = app.create_user("1000", "c@example.com", "User").await;
    assert_eq!(old.get("/V2/1000").await.status(), StatusCode::OK);
    let response = app
        .admin
        .put(
            &format!("/V2/1000/users/{id}"),
            &json!({"Username": "c@example.com", "Password": "a brand new password"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_problem(old.get("/V2/1000").await, 401, "unauthorized").await;
    let new = app.client("c@example.com", "a brand new password");
    assert_eq!(new.get("/V2/1000").await.status(), StatusCode::OK);
}

async fn patch_applies_json_patch(app: TestApp) {
    let (id, _) = app.create_user("1000", "patch@example.com", "User").await;
    let response = app
        .admin
        .patch(
            &format!("/V2/1000/users/{id}"),
            &json!([
                {"op": "replace", "path": "/FirstName", "value": "Pat"},
                {"op": "add", "path": "/Tags/Shift", "value": "Night"},
                {"op": "replace", "path": "/UserRoleId", "value": "ReadOnly"}
            ]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let user = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(user["FirstName"], "Pat");
    assert_eq!(user["Tags"]["Shift"], "Night");
    assert_eq!(user["UserRoleId"], "ReadOnly");
}

async fn patch_of_read_only_or_into_invalid_is_refused(app: TestApp) {
    let (id, _) = app.create_user("1000", "ro@example.com", "User").await;
    let before = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    let path = format!("/V2/1000/users/{id}");
    for patch in [
        json!([{"op": "replace", "path": "/UserId", "value": "1"}]),
        json!([{"op": "replace", "path": "/FirstName", "value": "X"}, {"op": "replace", "path": "/LastLoggedIn", "value": null}]),
        json!([{"op": "replace", "path": "/TenantCode", "value": "1001"}]),
    ] {
        let problem = assert_problem(
            app.admin.patch(&path, &patch).await,
            400,
            "validation_failed",
        )
        .await;
        assert!(
            problem["errors"][0]["message"]
                .as_str()
                .unwrap()
                .contains("read-only")
        );
    }
    let invalid = app
        .admin
        .patch(
            &path,
            &json!([{"op": "replace", "path": "/Username", "value": "nope"}]),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(invalid, 400, "validation_failed").await),
        ["Username"]
    );
    let wrong_type = app
        .admin
        .patch(
            &path,
            &json!([{"op": "replace", "path": "/IsDisabled", "value": "no"}]),
        )
        .await;
    assert_problem(wrong_type, 400, "validation_failed").await;
    let unappliable = app
        .admin
        .patch(&path, &json!([{"op": "remove", "path": "/Nope/Deeper"}]))
        .await;
    assert_problem(unappliable, 400, "patch_failed").await;
    let not_a_patch = app.admin.patch(&path, &json!({"FirstName": "X"})).await;
    assert_eq!(not_a_patch.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        app.admin.get_json(&format!("/V2/1000/users/{id}")).await,
        before
    );
}

async fn delete_removes_user_and_login(app: TestApp) {
    let (id, user) = app.create_user("1000", "gone@example.com", "User").await;
    assert_eq!(user.get("/V2/1000").await.status(), StatusCode::OK);
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/users/{id}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&format!("/V2/1000/users/{id}")).await).await;
    assert_problem(user.get("/V2/1000").await, 401, "unauthorized").await;
    assert_not_found(app.admin.delete(&format!("/V2/1000/users/{id}")).await).await;
    let me = app
        .admin
        .get_json("/V2/1000/users/admin@safetrack.test")
        .await;
    let own = app
        .admin
        .delete(&format!(
            "/V2/1000/users/{}",
            me["UserId"].as_str().unwrap()
        ))
        .await;
    assert_problem(own, 403, "forbidden").await;
}

async fn page(app: &TestApp, path: &str, token: Option<&str>) -> (Vec<Value>, Option<String>) {
    let mut request = app.admin.request(Method::GET, path);
    if let Some(token) = token {
        request = request.header("X-CONTINUATIONTOKEN", token);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let next = response
        .headers()
        .get("x-continuationtoken")
        .map(|v| v.to_str().unwrap().to_string());
    (response.json::<Vec<Value>>().await.unwrap(), next)
}

async fn paging_returns_every_user_exactly_once(app: TestApp) {
    let tenant = app.create_tenant("1000", "Paged").await;
    for i in 0..12 {
        app.create_user(&tenant, &format!("u{i}@example.com"), "User")
            .await;
    }
    let path = format!("/V2/{tenant}/users?pageSize=5");
    let mut seen = Vec::new();
    let (first, mut token) = page(&app, &path, None).await;
    assert_eq!(first.len(), 5);
    seen.extend(first);
    // Users added between pages still show up, once.
    app.create_user(&tenant, "late1@example.com", "User").await;
    app.create_user(&tenant, "late2@example.com", "User").await;
    let mut pages = 1;
    while let Some(t) = token {
        let (items, next) = page(&app, &path, Some(&t)).await;
        seen.extend(items);
        token = next;
        pages += 1;
    }
    assert_eq!(pages, 3);
    let mut names: Vec<String> = seen
        .iter()
        .map(|u| u["Username"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 14);
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 14, "no duplicates");
    let (all, none) = page(&app, &format!("/V2/{tenant}/users"), None).await;
    assert_eq!(all.len(), 14);
    assert!(none.is_none());
}

async fn paging_rejects_forged_and_foreign_tokens_and_bad_sizes(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    for i in 0..3 {
        app.create_user(&a, &format!("a{i}@example.com"), "User")
            .await;
        app.create_user(&b, &format!("b{i}@example.com"), "User")
            .await;
    }
    let (_, token) = page(&app, &format!("/V2/{a}/users?pageSize=1"), None).await;
    let token = token.unwrap();
    for (path, bad) in [
        (format!("/V2/{b}/users?pageSize=1"), token.clone()),
        (
            format!("/V2/{a}/users?pageSize=1&subtenants=true"),
            token.clone(),
        ),
        (format!("/V2/{a}/users"), format!("{token}x")),
        (format!("/V2/{a}/users"), "forged.token".to_string()),
    ] {
        let response = app
            .admin
            .request(Method::GET, &path)
            .header("X-CONTINUATIONTOKEN", bad)
            .send()
            .await
            .unwrap();
        assert_problem(response, 400, "invalid_continuation_token").await;
    }
    for size in ["0", "10001", "-1", "many"] {
        let response = app
            .admin
            .get(&format!("/V2/{a}/users?pageSize={size}"))
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), ["pageSize"]);
    }
    assert_eq!(
        page(&app, &format!("/V2/{a}/users?pageSize=10000"), None)
            .await
            .0
            .len(),
        3
    );
}

async fn subtenants_parameter_includes_the_subtree(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let a1 = app.create_tenant(&a, "A1").await;
    let b = app.create_tenant("1000", "B").await;
    app.create_user(&a, "a@example.com", "User").await;
    app.create_user(&a1, "a1@example.com", "User").await;
    app.create_user(&b, "b@example.com", "User").await;
    let names = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|u| u["Username"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(app.admin.get_json(&format!("/V2/{a}/users")).await),
        ["a@example.com"]
    );
    assert_eq!(
        names(
            app.admin
                .get_json(&format!("/V2/{a}/users?subtenants=true"))
                .await
        ),
        ["a@example.com", "a1@example.com"]
    );
    assert_problem(
        app.admin
            .get(&format!("/V2/{a}/users?subtenants=maybe"))
            .await,
        400,
        "validation_failed",
    )
    .await;
}

async fn users_of_other_tenants_are_404(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let (b_id, _) = app.create_user(&b, "b@example.com", "User").await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    // Through the own tenant's path, a user of another tenant does not exist.
    assert_not_found(a_admin.get(&format!("/V2/{a}/users/{b_id}")).await).await;
    assert_not_found(a_admin.get(&format!("/V2/{a}/users/b@example.com")).await).await;
    assert_not_found(
        a_admin
            .put(
                &format!("/V2/{a}/users/{b_id}"),
                &json!({"Username": "x@example.com"}),
            )
            .await,
    )
    .await;
    assert_not_found(a_admin.delete(&format!("/V2/{a}/users/{b_id}")).await).await;
    assert_not_found(a_admin.get(&format!("/V2/{b}/users/{b_id}")).await).await;
    assert_eq!(
        app.admin.get_json(&format!("/V2/{b}/users/{b_id}")).await["Username"],
        "b@example.com"
    );
}

async fn roles_limit_user_management(app: TestApp) {
    let (_, manager) = app.create_user("1000", "m@example.com", "Manager").await;
    let (_, reader) = app.create_user("1000", "r@example.com", "ReadOnly").await;
    let (_, user) = app.create_user("1000", "u@example.com", "User").await;
    let new_admin =
        json!({"Username": "x@example.com", "Password": PASSWORD, "UserRoleId": "Administrator"});
    assert_problem(
        manager.post("/V2/1000/users", &new_admin).await,
        403,
        "forbidden",
    )
    .await;
    for client in [&reader, &user] {
        let plain = json!({"Username": "y@example.com", "Password": PASSWORD});
        assert_problem(
            client.post("/V2/1000/users", &plain).await,
            403,
            "forbidden",
        )
        .await;
        assert_eq!(client.get("/V2/1000/users").await.status(), StatusCode::OK);
    }
    let admin_id = app
        .admin
        .get_json("/V2/1000/users/admin@safetrack.test")
        .await["UserId"]
        .clone();
    let demote = manager
        .put(
            &format!("/V2/1000/users/{}", admin_id.as_str().unwrap()),
            &json!({"Username": "admin@safetrack.test", "UserRoleId": "User"}),
        )
        .await;
    assert_problem(demote, 403, "forbidden").await;
    let ok = manager
        .post(
            "/V2/1000/users",
            &json!({"Username": "z@example.com", "Password": PASSWORD, "UserRoleId": "User"}),
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(user_count(&app, "1000").await, 5);
}

async fn user_bodies_allow_large_photos_but_not_beyond_the_limit(app: TestApp) {
    use base64::Engine;
    let photo = base64::engine::general_purpose::STANDARD.encode(vec![7u8; 2 * 1024 * 1024]);
    let response = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": "big@example.com", "Password": PASSWORD, "Photo": photo}),
        )
        .await;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "2 MiB photo fits the user limit"
    );
    let too_big = base64::engine::general_purpose::STANDARD.encode(vec![7u8; 4 * 1024 * 1024]);
    let response = app
        .admin
        .post(
            "/V2/1000/users",
            &json!({"Username": "huge@example.com", "Password": PASSWORD, "Photo": too_big}),
        )
        .await;
    assert_problem(response, 413, "payload_too_large").await;
    assert_not_found(app.admin.get("/V2/1000/users/huge@example.com").await).await;
}
