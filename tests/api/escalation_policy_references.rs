//! An escalation policy's step recipients are references (`recipient_references`,
//! migration 0064), exactly as a notification's are: a contact, list or group a step names
//! is not deleted, emptied of a named entry or un-shared (409 naming the policy) until the
//! policy stops naming it or is deleted; a step naming another tenant's record is a 400.
//! Deleting a tenant removes its references with it.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_problem, problem_fields};

backend_tests!(
    a_contact_a_step_names_is_not_deleted_until_the_policy_changes,
    a_list_a_step_names_is_not_deleted_until_the_policy_is_deleted,
    a_step_naming_a_foreign_contact_is_refused_and_changes_nothing,
    a_record_a_subtenant_step_names_stays_shared_and_its_entries_stay,
    a_group_a_step_names_is_not_deleted,
    a_tenant_whose_policy_names_its_own_contact_is_deleted_whole,
);

async fn created(client: &Client, path: &str, body: Value) -> String {
    let response = client.post(path, &body).await;
    assert_eq!(response.status(), StatusCode::OK, "POST {path} {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

fn contact(name: &str) -> Value {
    json!({"ContactName": name, "AppliesToSubtenants": true,
           "ContactEntries": [{"Address": "+447700900123"}, {"Address": "duty@example.com"}]})
}

/// A policy whose second step names `recipient`.
fn policy_naming(name: &str, recipient: Value) -> Value {
    json!({"Name": name, "Steps": [
        {"AfterMinutes": 0, "Instructions": "Call the worker."},
        {"AfterMinutes": 10, "Recipients": [recipient], "Instructions": "Call the duty manager."},
    ]})
}

fn mail_only(name: &str) -> Value {
    json!({"Name": name, "Steps": [{"AfterMinutes": 0, "Recipients": [
        {"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]}]})
}

/// A 409 whose detail names the policy (its name and id).
async fn refused_naming(response: reqwest::Response, name: &str, id: &str) {
    let problem = assert_problem(response, 409, "conflict").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("escalation policy {name} ({id})")),
        "{detail}"
    );
}

async fn a_contact_a_step_names_is_not_deleted_until_the_policy_changes(app: TestApp) {
    let id = created(&app.admin, "/V2/1000/addressbookcontacts", contact("Duty")).await;
    let recipient = json!({"Type": "TenantContact", "ContactId": id});
    let policy = created(
        &app.admin,
        "/V2/1000/escalationpolicies",
        policy_naming("Nights", recipient.clone()),
    )
    .await;
    let contact_path = format!("/V2/1000/addressbookcontacts/{id}");
    refused_naming(app.admin.delete(&contact_path).await, "Nights", &policy).await;
    assert_eq!(app.admin.get(&contact_path).await.status(), StatusCode::OK);

    // Renamed, the policy is named as it is now; a PATCH keeping the step keeps the hold.
    let policy_path = format!("/V2/1000/escalationpolicies/{policy}");
    let renamed = policy_naming("Nights v2", recipient);
    assert_eq!(
        app.admin.put(&policy_path, &renamed).await.status(),
        StatusCode::OK
    );
    let patch = json!([{"op": "replace", "path": "/Description", "value": "Still names it"}]);
    assert_eq!(
        app.admin.patch(&policy_path, &patch).await.status(),
        StatusCode::OK
    );
    refused_naming(app.admin.delete(&contact_path).await, "Nights v2", &policy).await;

    // A PATCH that drops the step's recipient frees the contact.
    let patch = json!([{"op": "replace", "path": "/Steps/1/Recipients", "value": []}]);
    assert_eq!(
        app.admin.patch(&policy_path, &patch).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.delete(&contact_path).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get(&contact_path).await.status(),
        StatusCode::NOT_FOUND
    );
}

async fn a_list_a_step_names_is_not_deleted_until_the_policy_is_deleted(app: TestApp) {
    let contact_id = created(&app.admin, "/V2/1000/addressbookcontacts", contact("Duty")).await;
    let list = created(
        &app.admin,
        "/V2/1000/addressbookdistributionlists",
        json!({"ListName": "Managers", "Recipients": []}),
    )
    .await;
    // Two steps naming the same list, and a PUT that names it again: one hold, one policy.
    let body = json!({"Name": "Days", "Steps": [
        {"AfterMinutes": 0, "Recipients": [{"Type": "TenantList", "ListId": list}]},
        {"AfterMinutes": 5, "Recipients": [{"Type": "TenantList", "ListId": list},
                                           {"Type": "TenantContact", "ContactId": contact_id}]},
    ]});
    let policy = created(&app.admin, "/V2/1000/escalationpolicies", body.clone()).await;
    let policy_path = format!("/V2/1000/escalationpolicies/{policy}");
    assert_eq!(
        app.admin.put(&policy_path, &body).await.status(),
        StatusCode::OK
    );
    let list_path = format!("/V2/1000/addressbookdistributionlists/{list}");
    let contact_path = format!("/V2/1000/addressbookcontacts/{contact_id}");
    refused_naming(app.admin.delete(&list_path).await, "Days", &policy).await;
    refused_naming(app.admin.delete(&contact_path).await, "Days", &policy).await;

    // The policy deleted, what its steps named is free.
    assert_eq!(
        app.admin.delete(&policy_path).await.status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.delete(&list_path).await.status(), StatusCode::OK);
    assert_eq!(
        app.admin.delete(&contact_path).await.status(),
        StatusCode::OK
    );
}

async fn a_step_naming_a_foreign_contact_is_refused_and_changes_nothing(app: TestApp) {
    let sibling = app.create_tenant("1000", "Sibling").await;
    let other = app.create_tenant("1000", "Other").await;
    let theirs = created(
        &app.admin,
        &format!("/V2/{sibling}/addressbookcontacts"),
        contact("Theirs"),
    )
    .await;
    let foreign = json!({"Type": "TenantContact", "ContactId": theirs});
    let policies = format!("/V2/{other}/escalationpolicies");
    let response = app
        .admin
        .post(&policies, &policy_naming("Foreign", foreign.clone()))
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["Steps[1].Recipients[0].ContactId"]
    );
    assert!(
        app.admin
            .get_json(&policies)
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    // A PUT naming it is refused too, and the policy keeps what it had.
    let own = created(&app.admin, &policies, mail_only("Own")).await;
    let own_path = format!("{policies}/{own}");
    let before = app.admin.get_json(&own_path).await;
    let response = app
        .admin
        .put(&own_path, &policy_naming("Own", foreign))
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        ["Steps[1].Recipients[0].ContactId"]
    );
    assert_eq!(app.admin.get_json(&own_path).await, before);
    // Nothing holds the sibling's contact.
    let theirs_path = format!("/V2/{sibling}/addressbookcontacts/{theirs}");
    assert_eq!(
        app.admin.delete(&theirs_path).await.status(),
        StatusCode::OK
    );
}

async fn a_record_a_subtenant_step_names_stays_shared_and_its_entries_stay(app: TestApp) {
    let child = app.create_tenant("1000", "Depot").await;
    let id = created(
        &app.admin,
        "/V2/1000/addressbookcontacts",
        contact("HQ duty"),
    )
    .await;
    let recipient = json!({"Type": "TenantContact", "ContactId": id, "ContactDetailId": "1"});
    let policy = created(
        &app.admin,
        &format!("/V2/{child}/escalationpolicies"),
        policy_naming("Depot nights", recipient),
    )
    .await;
    let contact_path = format!("/V2/1000/addressbookcontacts/{id}");
    let mut unshared = contact("HQ duty");
    unshared["AppliesToSubtenants"] = json!(false);
    refused_naming(
        app.admin.put(&contact_path, &unshared).await,
        "Depot nights",
        &policy,
    )
    .await;
    assert_eq!(
        app.admin.get_json(&contact_path).await["AppliesToSubtenants"],
        true
    );
    // Entry 1 (the phone) is named; entry 2 is not.
    let without_phone = json!({"ContactName": "HQ duty", "AppliesToSubtenants": true,
        "ContactEntries": [{"EntryId": "2", "Address": "duty@example.com"}]});
    refused_naming(
        app.admin.put(&contact_path, &without_phone).await,
        "Depot nights",
        &policy,
    )
    .await;
    let without_mail = json!({"ContactName": "HQ duty", "AppliesToSubtenants": true,
        "ContactEntries": [{"EntryId": "1", "Address": "+447700900123"}]});
    assert_eq!(
        app.admin.put(&contact_path, &without_mail).await.status(),
        StatusCode::OK
    );
}

async fn a_group_a_step_names_is_not_deleted(app: TestApp) {
    let group = created(
        &app.admin,
        "/V2/1000/groups",
        json!({"Name": "Night shift"}),
    )
    .await;
    let policy = created(
        &app.admin,
        "/V2/1000/escalationpolicies",
        policy_naming("Move", json!({"Type": "ChangeGroup", "GroupId": group})),
    )
    .await;
    let group_path = format!("/V2/1000/groups/{group}");
    refused_naming(app.admin.delete(&group_path).await, "Move", &policy).await;
    let policy_path = format!("/V2/1000/escalationpolicies/{policy}");
    assert_eq!(
        app.admin
            .put(&policy_path, &mail_only("Move"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.delete(&group_path).await.status(), StatusCode::OK);
}

async fn a_tenant_whose_policy_names_its_own_contact_is_deleted_whole(app: TestApp) {
    let tenant = app.create_tenant("1000", "Closing").await;
    let id = created(
        &app.admin,
        &format!("/V2/{tenant}/addressbookcontacts"),
        contact("Duty"),
    )
    .await;
    let recipient = json!({"Type": "TenantContact", "ContactId": id});
    created(
        &app.admin,
        &format!("/V2/{tenant}/escalationpolicies"),
        policy_naming("Nights", recipient.clone()),
    )
    .await;
    // A notification and a list of the tenant naming its own records go with it as well.
    let list = created(
        &app.admin,
        &format!("/V2/{tenant}/addressbookdistributionlists"),
        json!({"ListName": "Duty", "Recipients": [recipient.clone()]}),
    )
    .await;
    created(
        &app.admin,
        &format!("/V2/{tenant}/eventnotifications"),
        json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "Recipients": [
            recipient, {"Type": "TenantList", "ListId": list}]}),
    )
    .await;
    assert_eq!(
        app.admin.delete(&format!("/V2/{tenant}")).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get(&format!("/V2/{tenant}")).await.status(),
        StatusCode::NOT_FOUND
    );
}
