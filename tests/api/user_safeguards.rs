//! The rules that keep the platform administrable and passwords in the right hands: the
//! root tenant's last active Administrator stays one, a PUT without `UserRoleId` keeps the
//! role, and only an Administrator (or the user) sets a peer's password.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{ADMIN_EMAIL, Client, PASSWORD, TestApp, assert_problem};

backend_tests!(
    put_without_role_keeps_the_stored_role,
    new_users_are_approved_unless_said_and_approval_does_not_gate_login,
    last_root_administrator_cannot_be_demoted_disabled_or_deleted,
    only_active_administrators_count,
    administrators_demoting_each_other_at_once_leave_one,
    subtenant_administrators_are_left_to_the_parent,
    managers_set_their_own_password_not_a_peers,
    administrators_set_anyones_password,
);

const ADMIN: &str = "/V2/1000/users/admin@safetrack.test";

/// Whether `client` can still do something only an Administrator may (create a tenant).
async fn can_administer(client: &Client) -> bool {
    let response = client
        .post("/V2/1000", &json!({"Description": "probe"}))
        .await;
    response.status() == StatusCode::OK
}

async fn assert_last_administrator(response: reqwest::Response) {
    let problem = assert_problem(response, 409, "conflict").await;
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("last active Administrator of the root tenant"),
        "{problem}"
    );
}

fn patch(path: &str, value: Value) -> Value {
    json!([{"op": "replace", "path": path, "value": value}])
}

async fn put_without_role_keeps_the_stored_role(app: TestApp) {
    let (id, _) = app.create_user("1000", "m@example.com", "Manager").await;
    // The first hour's trap: a new password with the Username it requires, nothing else.
    let response = app
        .admin
        .put(
            ADMIN,
            &json!({"Username": ADMIN_EMAIL, "Password": "a-new-admin-password"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let admin = app.client(ADMIN_EMAIL, "a-new-admin-password");
    assert_eq!(admin.get_json(ADMIN).await["UserRoleId"], "Administrator");
    assert!(can_administer(&admin).await);

    let path = format!("/V2/1000/users/{id}");
    for body in [
        json!({"Username": "m@example.com", "LastName": "Kept"}),
        json!({"Username": "m@example.com", "UserRoleId": ""}),
        json!({"Username": "m@example.com", "UserRoleId": null}),
    ] {
        let response = admin.put(&path, &body).await;
        assert_eq!(response.status(), StatusCode::OK, "{body}");
        assert_eq!(
            admin.get_json(&path).await["UserRoleId"],
            "Manager",
            "{body}"
        );
    }
    // Said explicitly, the role changes.
    let response = admin
        .put(
            &path,
            &json!({"Username": "m@example.com", "UserRoleId": "User"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(admin.get_json(&path).await["UserRoleId"], "User");
}

async fn new_users_are_approved_unless_said_and_approval_does_not_gate_login(app: TestApp) {
    let (id, user) = app.create_user("1000", "a@example.com", "User").await;
    let path = format!("/V2/1000/users/{id}");
    assert_eq!(app.admin.get_json(&path).await["IsApproved"], true);
    assert_eq!(app.admin.get_json(ADMIN).await["IsApproved"], true);
    let response = app
        .admin
        .patch(&path, &patch("/IsApproved", json!(false)))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(app.admin.get_json(&path).await["IsApproved"], false);
    // A record of the organisation's process: an unapproved user still logs in…
    assert_eq!(user.get("/V2/1000").await.status(), StatusCode::OK);
    // …and IsDisabled is what stops a login.
    let response = app
        .admin
        .patch(&path, &patch("/IsDisabled", json!(true)))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        user.get("/V2/1000").await.status(),
        StatusCode::UNAUTHORIZED
    );
}

async fn last_root_administrator_cannot_be_demoted_disabled_or_deleted(app: TestApp) {
    let before = app.admin.get_json(ADMIN).await;
    for body in [
        json!({"Username": ADMIN_EMAIL, "UserRoleId": "Manager"}),
        json!({"Username": ADMIN_EMAIL, "UserRoleId": "ReadOnly"}),
        json!({"Username": ADMIN_EMAIL, "IsDisabled": true}),
    ] {
        assert_last_administrator(app.admin.put(ADMIN, &body).await).await;
    }
    for operation in [
        patch("/UserRoleId", json!("User")),
        patch("/IsDisabled", json!(true)),
    ] {
        assert_last_administrator(app.admin.patch(ADMIN, &operation).await).await;
    }
    assert_problem(app.admin.delete(ADMIN).await, 403, "forbidden").await;
    assert_eq!(app.admin.get_json(ADMIN).await, before, "nothing changed");
    assert!(can_administer(&app.admin).await);
    // What does not demote goes through.
    let response = app
        .admin
        .put(
            ADMIN,
            &json!({"Username": ADMIN_EMAIL, "UserRoleId": "Administrator", "FirstName": "Ada"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

async fn only_active_administrators_count(app: TestApp) {
    let (second, second_client) = app
        .create_user("1000", "second@example.com", "Administrator")
        .await;
    let second_path = format!("/V2/1000/users/{second}");
    // Two active: either may step down; a disabled one does not count.
    let response = app
        .admin
        .patch(&second_path, &patch("/IsDisabled", json!(true)))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_last_administrator(
        app.admin
            .patch(ADMIN, &patch("/UserRoleId", json!("Manager")))
            .await,
    )
    .await;
    // A disabled administrator may go: the active one remains.
    assert_eq!(
        app.admin.delete(&second_path).await.status(),
        StatusCode::OK
    );
    drop(second_client);

    let (third, third_client) = app
        .create_user("1000", "third@example.com", "Administrator")
        .await;
    let response = app
        .admin
        .put(
            ADMIN,
            &json!({"Username": ADMIN_EMAIL, "UserRoleId": "Manager"}),
        )
        .await;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "another active one remains"
    );
    assert!(!can_administer(&app.admin).await);
    // Now the third is the last: nobody may take it away, itself included.
    let third_path = format!("/V2/1000/users/{third}");
    assert_last_administrator(
        third_client
            .patch(&third_path, &patch("/IsDisabled", json!(true)))
            .await,
    )
    .await;
    assert_last_administrator(
        third_client
            .put(
                &third_path,
                &json!({"Username": "third@example.com", "UserRoleId": "User"}),
            )
            .await,
    )
    .await;
    assert!(can_administer(&third_client).await);
}

async fn administrators_demoting_each_other_at_once_leave_one(app: TestApp) {
    let (second, second_client) = app
        .create_user("1000", "second@example.com", "Administrator")
        .await;
    let first = app.admin.get_json(ADMIN).await["UserId"]
        .as_str()
        .unwrap()
        .to_string();
    let demote = patch("/UserRoleId", json!("Manager"));
    let (second_path, first_path) = (
        format!("/V2/1000/users/{second}"),
        format!("/V2/1000/users/{first}"),
    );
    let (a, b) = tokio::join!(
        app.admin.patch(&second_path, &demote),
        second_client.patch(&first_path, &demote),
    );
    let mut statuses = [a.status().as_u16(), b.status().as_u16()];
    statuses.sort_unstable();
    // The loser either saw it was the last one (409) or, having lost its role first,
    // was no longer allowed to act on an Administrator (403).
    assert!(
        statuses == [200, 409] || statuses == [200, 403],
        "{statuses:?}"
    );
    // Whoever lost is a Manager now, who still reads the users.
    let users = app.admin.get_json("/V2/1000/users").await;
    let admins = users
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["UserRoleId"] == "Administrator" && u["IsDisabled"] == false)
        .count();
    assert_eq!(admins, 1);
}

async fn subtenant_administrators_are_left_to_the_parent(app: TestApp) {
    let tenant = app.create_tenant("1000", "Acme").await;
    let (id, sub_admin) = app
        .create_user(&tenant, "boss@acme.example", "Administrator")
        .await;
    let path = format!("/V2/{tenant}/users/{id}");
    // The only Administrator of a subtenant may step down: its parent's can restore it.
    let response = sub_admin
        .patch(&path, &patch("/UserRoleId", json!("Manager")))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = app
        .admin
        .patch(&path, &patch("/UserRoleId", json!("Administrator")))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        sub_admin.get_json(&path).await["UserRoleId"],
        "Administrator"
    );
    // The parent tenant's Administrator may disable and delete it too.
    let response = app
        .admin
        .patch(&path, &patch("/IsDisabled", json!(true)))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
}

async fn managers_set_their_own_password_not_a_peers(app: TestApp) {
    let (own, manager) = app.create_user("1000", "m1@example.com", "Manager").await;
    let (peer, peer_client) = app.create_user("1000", "m2@example.com", "Manager").await;
    let (user, _) = app.create_user("1000", "u@example.com", "User").await;
    let admin_id = app.admin.get_json(ADMIN).await["UserId"]
        .as_str()
        .unwrap()
        .to_string();

    for (target, username) in [
        (peer.as_str(), "m2@example.com"),
        (admin_id.as_str(), ADMIN_EMAIL),
    ] {
        let path = format!("/V2/1000/users/{target}");
        let before = app.admin.get_json(&path).await;
        let put = manager
            .put(
                &path,
                &json!({"Username": username, "UserRoleId": before["UserRoleId"],
                        "Password": "taken-over-password"}),
            )
            .await;
        assert_problem(put, 403, "forbidden").await;
        let patched = manager
            .patch(&path, &patch("/Password", json!("taken-over-password")))
            .await;
        assert_problem(patched, 403, "forbidden").await;
        assert_eq!(app.admin.get_json(&path).await, before, "nothing stored");
    }
    assert_eq!(peer_client.get("/V2/1000").await.status(), StatusCode::OK);
    assert!(can_administer(&app.admin).await);
    // A peer's other fields stay a Manager's to change.
    let response = manager
        .patch(
            &format!("/V2/1000/users/{peer}"),
            &patch("/LastName", json!("Peer")),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    // Its own, by PUT and by PATCH; a User's below it.
    let own_path = format!("/V2/1000/users/{own}");
    let response = manager
        .put(
            &own_path,
            &json!({"Username": "m1@example.com", "Password": "manager-password-2"}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let manager = app.client("m1@example.com", "manager-password-2");
    assert_eq!(manager.get_json(&own_path).await["UserRoleId"], "Manager");
    let response = manager
        .patch(&own_path, &patch("/Password", json!("manager-password-3")))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let manager = app.client("m1@example.com", "manager-password-3");
    let response = manager
        .patch(
            &format!("/V2/1000/users/{user}"),
            &patch("/Password", json!("user-password-2")),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let user_client = app.client("u@example.com", "user-password-2");
    assert_eq!(user_client.get("/V2/1000").await.status(), StatusCode::OK);
}

async fn administrators_set_anyones_password(app: TestApp) {
    let (manager, _) = app.create_user("1000", "m@example.com", "Manager").await;
    let (admin, _) = app
        .create_user("1000", "a2@example.com", "Administrator")
        .await;
    let tenant = app.create_tenant("1000", "Acme").await;
    let (sub, _) = app
        .create_user(&tenant, "s@acme.example", "Administrator")
        .await;
    for (path, username) in [
        (format!("/V2/1000/users/{manager}"), "m@example.com"),
        (format!("/V2/1000/users/{admin}"), "a2@example.com"),
        (format!("/V2/{tenant}/users/{sub}"), "s@acme.example"),
    ] {
        let response = app
            .admin
            .put(
                &path,
                &json!({"Username": username, "Password": "set-by-admin-1"}),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "PUT {path}");
        let client = app.client(username, "set-by-admin-1");
        assert_eq!(client.get(&path).await.status(), StatusCode::OK);
        let response = app
            .admin
            .patch(&path, &patch("/Password", json!("set-by-admin-2")))
            .await;
        assert_eq!(response.status(), StatusCode::OK, "PATCH {path}");
        let client = app.client(username, "set-by-admin-2");
        assert_eq!(client.get(&path).await.status(), StatusCode::OK);
        assert_eq!(
            app.client(username, PASSWORD).get(&path).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
}
