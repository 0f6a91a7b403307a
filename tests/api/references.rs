//! What recipients name stays resolvable: a contact entry, a shared record or a group a
//! list or notification names cannot be removed, un-shared or deleted (409), checked in
//! the same transaction as the change — also when both happen at once.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_problem, problem_fields};

backend_tests!(
    a_named_contact_entry_cannot_be_removed,
    a_record_a_subtenant_names_cannot_be_unshared,
    a_group_named_by_change_group_cannot_be_deleted,
    deleting_a_notification_frees_what_it_named,
    delete_and_reference_at_once_never_both_win,
);

async fn created(client: &Client, path: &str, body: Value) -> String {
    let response = client.post(path, &body).await;
    assert_eq!(response.status(), StatusCode::OK, "POST {path} {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

fn two_entries() -> Value {
    json!({"ContactName": "Duty", "AppliesToSubtenants": true,
           "ContactEntries": [{"Address": "+447700900123"}, {"Address": "duty@example.com"}]})
}

async fn a_named_contact_entry_cannot_be_removed(app: TestApp) {
    let contacts = "/V2/1000/addressbookcontacts";
    let id = created(&app.admin, contacts, two_entries()).await;
    created(
        &app.admin,
        "/V2/1000/addressbookdistributionlists",
        json!({"ListName": "Phone only", "Recipients": [
            {"Type": "TenantContact", "ContactId": id, "ContactDetailId": "1"}]}),
    )
    .await;
    let path = format!("{contacts}/{id}");
    let before = app.admin.get_json(&path).await;
    // Dropping entry 1 (the phone) is refused; nothing changes.
    let only_mail = json!({"ContactName": "Duty", "AppliesToSubtenants": true,
        "ContactEntries": [{"EntryId": "2", "Address": "duty@example.com"}]});
    let refused = assert_problem(app.admin.put(&path, &only_mail).await, 409, "conflict").await;
    assert!(
        refused["detail"].as_str().unwrap().contains("Phone only"),
        "{refused}"
    );
    assert_eq!(app.admin.get_json(&path).await, before);
    // Dropping entry 2, which nobody names, is fine.
    let only_phone = json!({"ContactName": "Duty", "AppliesToSubtenants": true,
        "ContactEntries": [{"EntryId": "1", "Address": "+447700900123"}]});
    assert_eq!(
        app.admin.put(&path, &only_phone).await.status(),
        StatusCode::OK
    );
    // A list may not name an entry that does not exist.
    let response = app
        .admin
        .post(
            "/V2/1000/addressbookdistributionlists",
            &json!({"ListName": "Mail", "Recipients": [
                {"Type": "TenantContact", "ContactId": id, "ContactDetailId": "2"}]}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Recipients[0].ContactDetailId"]);
}

async fn a_record_a_subtenant_names_cannot_be_unshared(app: TestApp) {
    let child = app.create_tenant("1000", "Depot").await;
    let contact = created(&app.admin, "/V2/1000/addressbookcontacts", two_entries()).await;
    let shared_list = created(
        &app.admin,
        "/V2/1000/addressbookdistributionlists",
        json!({"ListName": "HQ", "AppliesToSubtenants": true, "Recipients": []}),
    )
    .await;
    // The parent's own list naming them does not hold them shared…
    created(
        &app.admin,
        "/V2/1000/addressbookdistributionlists",
        json!({"ListName": "Own", "Recipients": [{"Type": "TenantContact", "ContactId": contact}]}),
    )
    .await;
    // …a subtenant's notification does.
    created(
        &app.admin,
        &format!("/V2/{child}/eventnotifications"),
        json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "Recipients": [
            {"Type": "TenantContact", "ContactId": contact},
            {"Type": "TenantList", "ListId": shared_list}]}),
    )
    .await;
    let contact_path = format!("/V2/1000/addressbookcontacts/{contact}");
    let mut unshared = two_entries();
    unshared["AppliesToSubtenants"] = json!(false);
    let refused = app.admin.put(&contact_path, &unshared).await;
    let problem = assert_problem(refused, 409, "conflict").await;
    assert!(problem["detail"].as_str().unwrap().contains("SOS"));
    assert_eq!(
        app.admin.get_json(&contact_path).await["AppliesToSubtenants"],
        true
    );
    let list_path = format!("/V2/1000/addressbookdistributionlists/{shared_list}");
    let refused = app
        .admin
        .put(&list_path, &json!({"ListName": "HQ", "Recipients": []}))
        .await;
    assert_problem(refused, 409, "conflict").await;
    // Still shared, the records can change otherwise.
    let renamed = json!({"ListName": "HQ desk", "AppliesToSubtenants": true, "Recipients": []});
    assert_eq!(
        app.admin.put(&list_path, &renamed).await.status(),
        StatusCode::OK
    );
}

async fn a_group_named_by_change_group_cannot_be_deleted(app: TestApp) {
    let group = created(
        &app.admin,
        "/V2/1000/groups",
        json!({"Name": "Night shift"}),
    )
    .await;
    let notification = created(
        &app.admin,
        "/V2/1000/eventnotifications",
        json!({"NotificationName": "Move", "EventsExpression": "CheckIn",
               "Recipients": [{"Type": "ChangeGroup", "GroupId": group}]}),
    )
    .await;
    let path = format!("/V2/1000/groups/{group}");
    let problem = assert_problem(app.admin.delete(&path).await, 409, "conflict").await;
    assert!(problem["detail"].as_str().unwrap().contains("Move"));
    assert_eq!(app.admin.get(&path).await.status(), StatusCode::OK);
    let deleted = app
        .admin
        .delete(&format!("/V2/1000/eventnotifications/{notification}"))
        .await;
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
}

async fn deleting_a_notification_frees_what_it_named(app: TestApp) {
    let contact = created(&app.admin, "/V2/1000/addressbookcontacts", two_entries()).await;
    let notification = created(
        &app.admin,
        "/V2/1000/eventnotifications",
        json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
               "Recipients": [{"Type": "TenantContact", "ContactId": contact}]}),
    )
    .await;
    let contact_path = format!("/V2/1000/addressbookcontacts/{contact}");
    assert_problem(app.admin.delete(&contact_path).await, 409, "conflict").await;
    // Re-pointing the notification elsewhere frees the contact too.
    let notification_path = format!("/V2/1000/eventnotifications/{notification}");
    let repointed = app
        .admin
        .put(
            &notification_path,
            &json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
                    "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]}),
        )
        .await;
    assert_eq!(repointed.status(), StatusCode::OK);
    assert_eq!(
        app.admin.delete(&contact_path).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.delete(&notification_path).await.status(),
        StatusCode::OK
    );
}

/// A contact deleted while a list naming it is created: one of the two wins, never both —
/// a list never names a deleted contact.
async fn delete_and_reference_at_once_never_both_win(app: TestApp) {
    for round in 0..12 {
        let contact = created(&app.admin, "/V2/1000/addressbookcontacts", two_entries()).await;
        let path = format!("/V2/1000/addressbookcontacts/{contact}");
        let delete = app.admin.delete(&path);
        let body = json!({"ListName": format!("Race {round}"), "Recipients": [
            {"Type": "TenantContact", "ContactId": contact}]});
        let create = app
            .admin
            .post("/V2/1000/addressbookdistributionlists", &body);
        let (deleted, listed) = tokio::join!(delete, create);
        let (deleted, listed) = (deleted.status(), listed.status());
        match (deleted, listed) {
            (StatusCode::OK, StatusCode::BAD_REQUEST) => {
                assert_eq!(app.admin.get(&path).await.status(), StatusCode::NOT_FOUND);
            }
            (StatusCode::CONFLICT, StatusCode::OK) => {
                assert_eq!(app.admin.get(&path).await.status(), StatusCode::OK);
            }
            other => panic!("round {round}: delete and create answered {other:?}"),
        }
    }
}
