//! Escalation policies (`/V2/{t}/escalationpolicies`, issue 45 §3) and a notification's
//! `EscalationPolicyId`.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    create_get_list_put_patch_delete,
    etag_and_if_match,
    every_bad_value_is_named_and_nothing_is_stored,
    wrong_types_and_missing_fields_are_named,
    step_recipients_must_resolve_in_the_tenant,
    names_are_unique_per_tenant,
    one_default_per_tenant,
    foreign_tenants_see_nothing_and_shared_ones_are_read_only,
    subtenants_listing_and_paging,
    read_only_users_cannot_write,
    writes_are_audited,
    a_notification_names_a_visible_policy,
    a_policy_in_use_is_not_deleted_or_unshared,
    xml_round_trip,
    a_tenant_with_policies_in_use_is_deleted_whole,
);

fn mail(address: &str) -> Value {
    json!({"Type": "MessagingAddress", "MessagingAddress": format!("mail:{address}")})
}

fn policy(name: &str) -> Value {
    json!({
        "Name": name,
        "Description": "Night shift procedure",
        "Steps": [
            {"AfterMinutes": 0, "Recipients": [mail("duty@example.com")],
             "Instructions": "Call the worker."},
            {"AfterMinutes": 10, "Recipients": [{"Type": "DeviceUserManagerSms"}]},
            {"AfterMinutes": 30, "Instructions": "Send the site supervisor."},
        ],
    })
}

/// POSTs a policy that must be accepted; returns its id.
async fn create(client: &Client, tenant: &str, body: &Value) -> String {
    let response = client
        .post(&format!("/V2/{tenant}/escalationpolicies"), body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create policy {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let id = location.rsplit('/').next().unwrap().to_string();
    assert_eq!(location, format!("/V2/{tenant}/escalationpolicies/{id}"));
    id
}

async fn names(client: &Client, path: &str) -> Vec<String> {
    client
        .get_all_pages(path)
        .await
        .iter()
        .map(|p| p["Name"].as_str().unwrap().to_string())
        .collect()
}

async fn etag_of(client: &Client, path: &str) -> String {
    let response = client.get(path).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.headers()["etag"].to_str().unwrap().to_string()
}

fn notification(name: &str, policy: Option<&str>) -> Value {
    json!({
        "NotificationName": name,
        "EventsExpression": "Emergency",
        "RaiseAlert": true,
        "Severity": "2",
        "EscalationPolicyId": policy,
    })
}

async fn create_notification(client: &Client, tenant: &str, body: &Value) -> String {
    let response = client
        .post(&format!("/V2/{tenant}/eventnotifications"), body)
        .await;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "create notification {body}"
    );
    let location = response.headers()["location"].to_str().unwrap();
    location.rsplit('/').next().unwrap().to_string()
}

async fn create_get_list_put_patch_delete(app: TestApp) {
    let mut body = policy("Nights");
    body["EscalationPolicyId"] = json!("999");
    body["TenantCode"] = json!("4242");
    let id = create(&app.admin, "1000", &body).await;
    assert_ne!(id, "999", "client-sent EscalationPolicyId is ignored");
    let path = format!("/V2/1000/escalationpolicies/{id}");

    let response = app.admin.get(&path).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().contains_key("etag"));
    let got: Value = response.json().await.unwrap();
    assert_eq!(got["EscalationPolicyId"], id);
    assert_eq!(got["TenantCode"], "1000");
    assert_eq!(got["Name"], "Nights");
    assert_eq!(got["Description"], "Night shift procedure");
    assert_eq!(got["AppliesToSubtenants"], false);
    assert_eq!(got["IsTenantDefault"], false);
    assert!(got["Timestamp"].is_string());
    assert!(
        got.get("ETag").is_none(),
        "the version travels in the header"
    );
    let steps = got["Steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0]["AfterMinutes"], 0);
    assert_eq!(
        steps[0]["Recipients"][0]["MessagingAddress"],
        "mail:duty@example.com"
    );
    assert_eq!(steps[0]["Instructions"], "Call the worker.");
    assert_eq!(steps[1]["Recipients"][0]["Type"], "DeviceUserManagerSms");
    assert!(steps[1]["Instructions"].is_null());
    assert_eq!(steps[2]["Recipients"], json!([]));
    assert_eq!(
        names(&app.admin, "/V2/1000/escalationpolicies").await,
        ["Nights"]
    );

    let mut changed = policy("Nights v2");
    changed["Steps"] = json!([{"AfterMinutes": 5, "Instructions": "Only this."}]);
    assert_eq!(
        app.admin.put(&path, &changed).await.status(),
        StatusCode::OK
    );
    let got = app.admin.get_json(&path).await;
    assert_eq!(got["Name"], "Nights v2");
    assert_eq!(got["Steps"].as_array().unwrap().len(), 1);

    let patch = json!([
        {"op": "replace", "path": "/Steps/0/AfterMinutes", "value": 7},
        {"op": "replace", "path": "/IsTenantDefault", "value": true},
    ]);
    assert_eq!(
        app.admin.patch(&path, &patch).await.status(),
        StatusCode::OK
    );
    let got = app.admin.get_json(&path).await;
    assert_eq!(got["Steps"][0]["AfterMinutes"], 7);
    assert_eq!(got["IsTenantDefault"], true);
    // A patch that breaks a rule is refused like a PUT; read-only fields cannot be patched.
    let bad = json!([{"op": "replace", "path": "/Steps/0/AfterMinutes", "value": 5000}]);
    let problem =
        assert_problem(app.admin.patch(&path, &bad).await, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Steps[0].AfterMinutes"]);
    let read_only = json!([{"op": "replace", "path": "/TenantCode", "value": "1001"}]);
    assert_problem(
        app.admin.patch(&path, &read_only).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(
        app.admin.get_json(&path).await["Steps"][0]["AfterMinutes"],
        7
    );

    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
    assert_not_found(app.admin.delete(&path).await).await;
    assert_not_found(app.admin.get("/V2/1000/escalationpolicies/abc").await).await;
    assert!(
        names(&app.admin, "/V2/1000/escalationpolicies")
            .await
            .is_empty()
    );
}

async fn etag_and_if_match(app: TestApp) {
    let id = create(&app.admin, "1000", &policy("Nights")).await;
    let path = format!("/V2/1000/escalationpolicies/{id}");
    let etag = etag_of(&app.admin, &path).await;
    let not_modified = app
        .admin
        .request(Method::GET, &path)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(not_modified.status(), StatusCode::NOT_MODIFIED);

    let stale = app
        .admin
        .request(Method::PUT, &path)
        .header("if-match", "\"stale\"")
        .json(&policy("Changed"))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 412, "precondition_failed").await;
    assert_eq!(app.admin.get_json(&path).await["Name"], "Nights");

    let fresh = app
        .admin
        .request(Method::PUT, &path)
        .header("if-match", &etag)
        .json(&policy("Changed"))
        .send()
        .await
        .unwrap();
    assert_eq!(fresh.status(), StatusCode::OK);
    let new_etag = etag_of(&app.admin, &path).await;
    assert_ne!(new_etag, etag);

    let stale_patch = app
        .admin
        .request(Method::PATCH, &path)
        .header("if-match", &etag)
        .header("content-type", "application/json-patch+json")
        .body(json!([{"op": "replace", "path": "/Name", "value": "P"}]).to_string())
        .send()
        .await
        .unwrap();
    assert_problem(stale_patch, 412, "precondition_failed").await;

    let stale_delete = app
        .admin
        .request(Method::DELETE, &path)
        .header("if-match", &etag)
        .send()
        .await
        .unwrap();
    assert_problem(stale_delete, 412, "precondition_failed").await;
    assert_eq!(app.admin.get_json(&path).await["Name"], "Changed");
    let delete = app
        .admin
        .request(Method::DELETE, &path)
        .header("if-match", &new_etag)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), StatusCode::OK);
}

/// Posts `body` (and PUTs it over `existing`), expecting a 400 naming exactly `fields`.
async fn refused(app: &TestApp, existing: &str, body: &Value, fields: &[&str]) {
    let post = app.admin.post("/V2/1000/escalationpolicies", body).await;
    let problem = assert_problem(post, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), fields, "POST {body}");
    let put = app
        .admin
        .put(&format!("/V2/1000/escalationpolicies/{existing}"), body)
        .await;
    let problem = assert_problem(put, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), fields, "PUT {body}");
}

async fn every_bad_value_is_named_and_nothing_is_stored(app: TestApp) {
    let existing = create(&app.admin, "1000", &policy("Kept")).await;
    let with_steps = |steps: Value| {
        let mut body = policy("New");
        body["Steps"] = steps;
        body
    };
    let step = |after: Value| json!({"AfterMinutes": after, "Instructions": "x"});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (with_steps(json!([])), vec!["Steps"]),
        (
            with_steps(Value::Array((0..11).map(|i| step(json!(i))).collect())),
            vec!["Steps"],
        ),
        (
            with_steps(json!([step(json!(-1))])),
            vec!["Steps[0].AfterMinutes"],
        ),
        (
            with_steps(json!([step(json!(1441))])),
            vec!["Steps[0].AfterMinutes"],
        ),
        (
            with_steps(json!([step(json!(10)), step(json!(10))])),
            vec!["Steps[1].AfterMinutes"],
        ),
        (
            with_steps(json!([step(json!(10)), step(json!(5))])),
            vec!["Steps[1].AfterMinutes"],
        ),
        (with_steps(json!([{"AfterMinutes": 0}])), vec!["Steps[0]"]),
        (
            with_steps(json!([{"AfterMinutes": 0, "Instructions": "x".repeat(2001)}])),
            vec!["Steps[0].Instructions"],
        ),
        (
            with_steps(json!([{"AfterMinutes": 0, "Recipients": [mail("not-an-address")]}])),
            vec!["Steps[0].Recipients[0].MessagingAddress"],
        ),
        (
            with_steps(json!([{"AfterMinutes": 0, "Recipients": [{"Type": "Pigeon"}]}])),
            vec!["Steps[0].Recipients[0].Type"],
        ),
        (
            with_steps(json!([{"AfterMinutes": 0,
                "Recipients": vec![mail("a@example.com"); 101]}])),
            vec!["Steps[0].Recipients"],
        ),
        (
            json!({"Name": " ", "Steps": [step(json!(0))]}),
            vec!["Name"],
        ),
        (
            json!({"Name": "n".repeat(201), "Steps": [step(json!(0))]}),
            vec!["Name"],
        ),
        (
            json!({"Name": "D", "Description": "d".repeat(1001), "Steps": [step(json!(0))]}),
            vec!["Description"],
        ),
    ];
    for (body, fields) in &cases {
        refused(&app, &existing, body, fields).await;
    }
    assert_eq!(
        names(&app.admin, "/V2/1000/escalationpolicies").await,
        ["Kept"]
    );
    let kept = app
        .admin
        .get_json(&format!("/V2/1000/escalationpolicies/{existing}"))
        .await;
    assert_eq!(kept["Name"], "Kept");
    assert_eq!(kept["Steps"].as_array().unwrap().len(), 3);
}

async fn wrong_types_and_missing_fields_are_named(app: TestApp) {
    let existing = create(&app.admin, "1000", &policy("Kept")).await;
    refused(&app, &existing, &json!({"Name": "No steps"}), &["Steps"]).await;
    refused(
        &app,
        &existing,
        &json!({"Steps": [{"AfterMinutes": 0, "Instructions": "x"}]}),
        &["Name"],
    )
    .await;
    refused(
        &app,
        &existing,
        &json!({"Name": "x", "Steps": [{"Instructions": "x"}]}),
        &["Steps[0].AfterMinutes"],
    )
    .await;
    for (body, field) in [
        (
            json!({"Name": "x", "Steps": [{"AfterMinutes": "soon", "Instructions": "x"}]}),
            "Steps[0].AfterMinutes",
        ),
        (
            json!({"Name": "x", "Steps": [{"AfterMinutes": 1.5, "Instructions": "x"}]}),
            "Steps[0].AfterMinutes",
        ),
        (json!({"Name": "x", "Steps": {"AfterMinutes": 0}}), "Steps"),
        (json!({"Name": 7, "Steps": []}), "Name"),
        (
            json!({"Name": "x", "IsTenantDefault": "yes", "Steps": []}),
            "IsTenantDefault",
        ),
    ] {
        let response = app.admin.post("/V2/1000/escalationpolicies", &body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let problem: Value = response.json().await.unwrap();
        let named = problem_fields(&problem);
        assert!(
            named.iter().any(|f| f == field)
                || problem["detail"].as_str().unwrap_or("").contains(field),
            "{body} should name {field}: {problem}"
        );
    }
    let array = app
        .admin
        .post(
            "/V2/1000/escalationpolicies",
            &json!([policy("In an array")]),
        )
        .await;
    assert_eq!(array.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        names(&app.admin, "/V2/1000/escalationpolicies").await,
        ["Kept"]
    );
}

async fn step_recipients_must_resolve_in_the_tenant(app: TestApp) {
    let sibling = app.create_tenant("1000", "Sibling").await;
    let list = app
        .admin
        .post(
            &format!("/V2/{sibling}/addressbookdistributionlists"),
            &json!({"ListName": "Theirs", "Recipients": [mail("x@example.com")]}),
        )
        .await;
    assert_eq!(list.status(), StatusCode::OK);
    let lists = app
        .admin
        .get_json(&format!("/V2/{sibling}/addressbookdistributionlists"))
        .await;
    let list_id = lists[0]["ListId"].as_str().unwrap().to_string();
    let child = app.create_tenant("1000", "Child").await;
    let body = json!({"Name": "Foreign list", "Steps": [
        {"AfterMinutes": 0, "Instructions": "x"},
        {"AfterMinutes": 5, "Recipients": [{"Type": "TenantList", "ListId": list_id}]},
    ]});
    let problem = assert_problem(
        app.admin
            .post(&format!("/V2/{child}/escalationpolicies"), &body)
            .await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Steps[1].Recipients[0].ListId"]);
    let unknown = json!({"Name": "Unknown contact", "Steps": [
        {"AfterMinutes": 0, "Recipients": [{"Type": "TenantContact", "ContactId": "987654"}]},
    ]});
    let problem = assert_problem(
        app.admin
            .post("/V2/1000/escalationpolicies", &unknown)
            .await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(
        problem_fields(&problem),
        ["Steps[0].Recipients[0].ContactId"]
    );
    assert!(
        names(&app.admin, &format!("/V2/{child}/escalationpolicies"))
            .await
            .is_empty()
    );
    // The list's own tenant may name it.
    create(&app.admin, &sibling, &body).await;
}

async fn names_are_unique_per_tenant(app: TestApp) {
    create(&app.admin, "1000", &policy("Nights")).await;
    let again = app
        .admin
        .post("/V2/1000/escalationpolicies", &policy("NIGHTS "))
        .await;
    assert_problem(again, 409, "conflict").await;
    let other = create(&app.admin, "1000", &policy("Days")).await;
    let rename = app
        .admin
        .put(
            &format!("/V2/1000/escalationpolicies/{other}"),
            &policy("nights"),
        )
        .await;
    assert_problem(rename, 409, "conflict").await;
    let child = app.create_tenant("1000", "Child").await;
    create(&app.admin, &child, &policy("Nights")).await;
    assert_eq!(
        names(&app.admin, "/V2/1000/escalationpolicies").await,
        ["Nights", "Days"]
    );
}

async fn one_default_per_tenant(app: TestApp) {
    let mut first = policy("First");
    first["IsTenantDefault"] = json!(true);
    let first_id = create(&app.admin, "1000", &first).await;
    let first_path = format!("/V2/1000/escalationpolicies/{first_id}");
    let before = etag_of(&app.admin, &first_path).await;
    let child = app.create_tenant("1000", "Child").await;
    let mut child_default = policy("Child's");
    child_default["IsTenantDefault"] = json!(true);
    let child_id = create(&app.admin, &child, &child_default).await;

    let mut second = policy("Second");
    second["IsTenantDefault"] = json!(true);
    let second_id = create(&app.admin, "1000", &second).await;
    let got = app.admin.get_json(&first_path).await;
    assert_eq!(
        got["IsTenantDefault"], false,
        "the previous default is unmarked"
    );
    assert_ne!(
        etag_of(&app.admin, &first_path).await,
        before,
        "and its version moved"
    );
    let second_path = format!("/V2/1000/escalationpolicies/{second_id}");
    assert_eq!(
        app.admin.get_json(&second_path).await["IsTenantDefault"],
        true
    );
    // Another tenant's default is its own.
    let got = app
        .admin
        .get_json(&format!("/V2/{child}/escalationpolicies/{child_id}"))
        .await;
    assert_eq!(got["IsTenantDefault"], true);

    // Marking the first again by PUT moves the mark back.
    assert_eq!(
        app.admin.put(&first_path, &first).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json(&first_path).await["IsTenantDefault"],
        true
    );
    assert_eq!(
        app.admin.get_json(&second_path).await["IsTenantDefault"],
        false
    );
    // Re-saving the default as the default keeps it.
    assert_eq!(
        app.admin.put(&first_path, &first).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json(&first_path).await["IsTenantDefault"],
        true
    );
}

async fn foreign_tenants_see_nothing_and_shared_ones_are_read_only(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let a_child = app.create_tenant(&a, "A child").await;
    let private = create(&app.admin, &a, &policy("Private")).await;
    let mut shared_body = policy("Shared");
    shared_body["AppliesToSubtenants"] = json!(true);
    let shared = create(&app.admin, &a, &shared_body).await;
    let (_, b_admin) = app
        .create_user(&b, "b-admin@example.com", "Administrator")
        .await;

    for id in [&private, &shared] {
        for path in [
            format!("/V2/{b}/escalationpolicies/{id}"),
            format!("/V2/{a}/escalationpolicies/{id}"),
        ] {
            assert_not_found(b_admin.get(&path).await).await;
            assert_not_found(b_admin.put(&path, &policy("Taken")).await).await;
            assert_not_found(b_admin.delete(&path).await).await;
        }
        // Through the sibling's own path, the id names nothing either.
        assert_not_found(
            app.admin
                .get(&format!("/V2/{b}/escalationpolicies/{id}"))
                .await,
        )
        .await;
    }
    assert!(
        names(&b_admin, &format!("/V2/{b}/escalationpolicies"))
            .await
            .is_empty()
    );

    // The child sees the shared one, read-only, and not the private one.
    assert_eq!(
        names(&app.admin, &format!("/V2/{a_child}/escalationpolicies")).await,
        ["Shared"]
    );
    let inherited = format!("/V2/{a_child}/escalationpolicies/{shared}");
    assert_eq!(
        app.admin.get_json(&inherited).await["TenantCode"],
        a.as_str()
    );
    assert_problem(
        app.admin.put(&inherited, &policy("Mine")).await,
        403,
        "forbidden",
    )
    .await;
    assert_problem(app.admin.delete(&inherited).await, 403, "forbidden").await;
    assert_not_found(
        app.admin
            .get(&format!("/V2/{a_child}/escalationpolicies/{private}"))
            .await,
    )
    .await;
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/{a}/escalationpolicies/{shared}"))
            .await["Name"],
        "Shared"
    );
}

async fn subtenants_listing_and_paging(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let grandchild = app.create_tenant(&child, "Grandchild").await;
    create(&app.admin, "1000", &policy("Root")).await;
    create(&app.admin, &child, &policy("Child")).await;
    create(&app.admin, &grandchild, &policy("Grandchild")).await;
    assert_eq!(
        names(&app.admin, "/V2/1000/escalationpolicies").await,
        ["Root"]
    );
    assert_eq!(
        names(&app.admin, "/V2/1000/escalationpolicies?subtenants=true").await,
        ["Root", "Child", "Grandchild"]
    );
    assert_eq!(
        names(
            &app.admin,
            "/V2/1000/escalationpolicies?subtenants=true&pageSize=1"
        )
        .await,
        ["Root", "Child", "Grandchild"]
    );
    let first = app
        .admin
        .get("/V2/1000/escalationpolicies?subtenants=true&pageSize=2")
        .await;
    assert!(first.headers().contains_key("x-continuationtoken"));
    let listed = app
        .admin
        .get_json(&format!("/V2/{child}/escalationpolicies?subtenants=true"))
        .await;
    let codes: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["TenantCode"].as_str().unwrap())
        .collect();
    assert_eq!(codes, [child.as_str(), grandchild.as_str()]);
    for bad in ["0", "1001", "x"] {
        let response = app
            .admin
            .get(&format!("/V2/1000/escalationpolicies?pageSize={bad}"))
            .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "pageSize={bad}");
    }
    let forged = app
        .admin
        .request(Method::GET, "/V2/1000/escalationpolicies")
        .header("x-continuationtoken", "forged.token")
        .send()
        .await
        .unwrap();
    assert_problem(forged, 400, "invalid_continuation_token").await;
}

async fn read_only_users_cannot_write(app: TestApp) {
    let id = create(&app.admin, "1000", &policy("Nights")).await;
    let path = format!("/V2/1000/escalationpolicies/{id}");
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    let (_, user) = app.create_user("1000", "user@example.com", "User").await;
    for client in [&reader, &user] {
        assert_problem(
            client
                .post("/V2/1000/escalationpolicies", &policy("New"))
                .await,
            403,
            "forbidden",
        )
        .await;
        assert_problem(client.put(&path, &policy("New")).await, 403, "forbidden").await;
        let patch = json!([{"op": "replace", "path": "/Name", "value": "P"}]);
        assert_problem(client.patch(&path, &patch).await, 403, "forbidden").await;
        assert_problem(client.delete(&path).await, 403, "forbidden").await;
        assert_eq!(client.get_json(&path).await["Name"], "Nights");
    }
    let (_, manager) = app
        .create_user("1000", "manager@example.com", "Manager")
        .await;
    create(&manager, "1000", &policy("By manager")).await;
}

async fn writes_are_audited(app: TestApp) {
    let mut body = policy("Nights");
    body["IsTenantDefault"] = json!(true);
    let first = create(&app.admin, "1000", &body).await;
    let second = create(&app.admin, "1000", &{
        let mut b = policy("Days");
        b["IsTenantDefault"] = json!(true);
        b
    })
    .await;
    let path = format!("/V2/1000/escalationpolicies/{second}");
    assert_eq!(
        app.admin.put(&path, &policy("Days")).await.status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    let entries = app
        .admin
        .get_all_pages("/V2/1000/auditlog?resourceType=EscalationPolicy")
        .await;
    let what: Vec<(String, String)> = entries
        .iter()
        .rev()
        .map(|e| {
            (
                e["Action"].as_str().unwrap().to_string(),
                e["ResourceId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("Create", &first),
        // Marking the second the default unmarked the first: an update of it.
        ("Update", &first),
        ("Create", &second),
        ("Update", &second),
        ("Delete", &second),
    ]
    .iter()
    .map(|(a, id)| (a.to_string(), id.to_string()))
    .collect();
    assert_eq!(what, expected);
    assert!(entries.iter().all(|e| e["Actor"] == "admin@safetrack.test"));
}

async fn a_notification_names_a_visible_policy(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let a_child = app.create_tenant(&a, "A child").await;
    let own = create(&app.admin, &a_child, &policy("Own")).await;
    let mut shared_body = policy("Shared");
    shared_body["AppliesToSubtenants"] = json!(true);
    let shared = create(&app.admin, &a, &shared_body).await;
    let unshared = create(&app.admin, &a, &policy("Unshared")).await;
    let foreign = create(&app.admin, &b, &policy("Foreign")).await;

    let base = format!("/V2/{a_child}/eventnotifications");
    for (policy_id, raise_alert) in [
        (unshared.as_str(), true),
        (foreign.as_str(), true),
        ("987654", true),
        ("x", true),
        ("-1", true),
        (own.as_str(), false),
    ] {
        let mut body = notification("SOS", Some(policy_id));
        body["RaiseAlert"] = json!(raise_alert);
        let problem =
            assert_problem(app.admin.post(&base, &body).await, 400, "validation_failed").await;
        assert_eq!(
            problem_fields(&problem),
            ["EscalationPolicyId"],
            "{policy_id}"
        );
        let validate = app.admin.post(&format!("{base}/validate"), &body).await;
        let problem = assert_problem(validate, 400, "validation_failed").await;
        assert_eq!(
            problem_fields(&problem),
            ["EscalationPolicyId"],
            "validate {policy_id}"
        );
    }
    assert_eq!(app.admin.get_json(&base).await, json!([]), "nothing stored");

    let with_own =
        create_notification(&app.admin, &a_child, &notification("Own", Some(&own))).await;
    let with_shared =
        create_notification(&app.admin, &a_child, &notification("Shared", Some(&shared))).await;
    let without = create_notification(&app.admin, &a_child, &notification("None", None)).await;
    let got = app.admin.get_json(&format!("{base}/{with_own}")).await;
    assert_eq!(got["EscalationPolicyId"], own.as_str());
    let got = app.admin.get_json(&format!("{base}/{with_shared}")).await;
    assert_eq!(got["EscalationPolicyId"], shared.as_str());
    let path = format!("{base}/{without}");
    assert!(app.admin.get_json(&path).await["EscalationPolicyId"].is_null());
    let validate = app
        .admin
        .post(
            &format!("{base}/validate"),
            &notification("Ok", Some(&shared)),
        )
        .await;
    assert_eq!(validate.status(), StatusCode::OK);

    // A PUT naming a foreign policy changes nothing; one naming a visible one is kept.
    let put = app
        .admin
        .put(&path, &notification("None", Some(&foreign)))
        .await;
    let problem = assert_problem(put, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["EscalationPolicyId"]);
    assert!(app.admin.get_json(&path).await["EscalationPolicyId"].is_null());
    assert_eq!(
        app.admin
            .put(&path, &notification("None", Some(&own)))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json(&path).await["EscalationPolicyId"],
        own.as_str()
    );

    // Group-level notifications follow the same rule.
    let group = app
        .admin
        .post(&format!("/V2/{a_child}/groups"), &json!({"Name": "Crew"}))
        .await;
    assert_eq!(group.status(), StatusCode::OK);
    let location = group.headers()["location"].to_str().unwrap().to_string();
    let group_id = location.rsplit('/').next().unwrap();
    let group_base = format!("/V2/{a_child}/groups/{group_id}/eventnotifications");
    let refused = app
        .admin
        .post(&group_base, &notification("G", Some(&foreign)))
        .await;
    let problem = assert_problem(refused, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["EscalationPolicyId"]);
    create_notification_at(&app.admin, &group_base, &notification("G", Some(&shared))).await;
}

async fn create_notification_at(client: &Client, base: &str, body: &Value) {
    let response = client.post(base, body).await;
    assert_eq!(response.status(), StatusCode::OK, "create {body} at {base}");
}

async fn a_policy_in_use_is_not_deleted_or_unshared(app: TestApp) {
    let child = app.create_tenant("1000", "Child").await;
    let mut shared_body = policy("Shared");
    shared_body["AppliesToSubtenants"] = json!(true);
    let shared = create(&app.admin, "1000", &shared_body).await;
    let own_use =
        create_notification(&app.admin, "1000", &notification("Root SOS", Some(&shared))).await;
    let child_use = create_notification(
        &app.admin,
        &child,
        &notification("Child SOS", Some(&shared)),
    )
    .await;
    let path = format!("/V2/1000/escalationpolicies/{shared}");

    let problem = assert_problem(app.admin.delete(&path).await, 409, "conflict").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("Root SOS") && detail.contains(&own_use),
        "{detail}"
    );
    assert!(
        detail.contains("Child SOS") && detail.contains(&child_use),
        "{detail}"
    );

    // Un-sharing it while the child's notification names it: 409 naming that one only.
    let problem = assert_problem(
        app.admin.put(&path, &policy("Shared")).await,
        409,
        "conflict",
    )
    .await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("Child SOS") && !detail.contains("Root SOS"),
        "{detail}"
    );
    assert_eq!(app.admin.get_json(&path).await["AppliesToSubtenants"], true);

    // Once the child names none, un-sharing is fine; deleting still waits for the root's.
    let child_path = format!("/V2/{child}/eventnotifications/{child_use}");
    assert_eq!(
        app.admin
            .put(&child_path, &notification("Child SOS", None))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.put(&path, &policy("Shared")).await.status(),
        StatusCode::OK
    );
    assert_problem(app.admin.delete(&path).await, 409, "conflict").await;
    let root_path = format!("/V2/1000/eventnotifications/{own_use}");
    assert_eq!(app.admin.delete(&root_path).await.status(), StatusCode::OK);
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
}

async fn xml_round_trip(app: TestApp) {
    let id = create(&app.admin, "1000", &policy("Nights")).await;
    let path = format!("/V2/1000/escalationpolicies/{id}");
    let xml = app
        .admin
        .request(Method::GET, &path)
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(xml.contains("<EscalationPolicy>"), "{xml}");
    let before = app.admin.get_json(&path).await;
    let put = app
        .admin
        .request(Method::PUT, &path)
        .header("content-type", "application/xml")
        .body(xml.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::OK, "{xml}");
    let after = app.admin.get_json(&path).await;
    for field in [
        "Name",
        "Description",
        "Steps",
        "AppliesToSubtenants",
        "IsTenantDefault",
    ] {
        assert_eq!(
            before[field], after[field],
            "{field} after the XML round trip"
        );
    }
}

async fn a_tenant_with_policies_in_use_is_deleted_whole(app: TestApp) {
    let parent = app.create_tenant("1000", "Parent").await;
    let child = app.create_tenant(&parent, "Child").await;
    let mut shared = policy("Shared");
    shared["AppliesToSubtenants"] = json!(true);
    let shared = create(&app.admin, &parent, &shared).await;
    let own = create(&app.admin, &child, &policy("Own")).await;
    create_notification(&app.admin, &child, &notification("Parent's", Some(&shared))).await;
    create_notification(&app.admin, &child, &notification("Own", Some(&own))).await;
    create_notification(&app.admin, &parent, &notification("Parent", Some(&shared))).await;
    assert_eq!(
        app.admin.delete(&format!("/V2/{child}")).await.status(),
        StatusCode::OK
    );
    // The child's uses are gone with it; the parent's own still holds its policy.
    let path = format!("/V2/{parent}/escalationpolicies/{shared}");
    assert_problem(app.admin.delete(&path).await, 409, "conflict").await;
    assert_eq!(
        app.admin.delete(&format!("/V2/{parent}")).await.status(),
        StatusCode::OK
    );
    assert_not_found(app.admin.get(&path).await).await;
}
