//! Web Push (issue 46 §2): the server's VAPID key, generated at first start, kept in the
//! database (the same after a restart and for a second process) and served at
//! `GET /V2/{t}/pushsubscriptions/vapidpublickey`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;

use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem};

backend_tests!(
    the_key_is_an_uncompressed_p256_point_kept_across_restarts,
    every_caller_in_scope_gets_it_and_nobody_else,
);

const PATH: &str = "/V2/1000/pushsubscriptions/vapidpublickey";

async fn public_key(client: &crate::common::Client, path: &str) -> String {
    let response = client.get(path).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: serde_json::Value = response.json().await.expect("json");
    let key = body["PublicKey"].as_str().expect("PublicKey").to_string();
    let point = URL_SAFE_NO_PAD
        .decode(&key)
        .expect("base64url without padding");
    assert_eq!(point.len(), 65, "an uncompressed P-256 point: {key}");
    assert_eq!(point[0], 0x04, "uncompressed form: {key}");
    key
}

async fn the_key_is_an_uncompressed_p256_point_kept_across_restarts(app: TestApp) {
    let first = public_key(&app.admin, PATH).await;
    assert_eq!(public_key(&app.admin, PATH).await, first);
    let app = app.restart().await;
    assert_eq!(public_key(&app.admin, PATH).await, first, "after a restart");
}

async fn every_caller_in_scope_gets_it_and_nobody_else(app: TestApp) {
    let key = public_key(&app.admin, PATH).await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    assert_eq!(public_key(&reader, PATH).await, key);
    // The same key for every tenant.
    let child = app.create_tenant("1000", "Child").await;
    let child_path = format!("/V2/{child}/pushsubscriptions/vapidpublickey");
    assert_eq!(public_key(&app.admin, &child_path).await, key);
    // Outside the caller's subtree: 404; no credential: 401.
    let (_, child_admin) = app
        .create_user(&child, "child-admin@example.com", "Administrator")
        .await;
    assert_not_found(child_admin.get(PATH).await).await;
    assert_not_found(
        app.admin
            .get("/V2/9999/pushsubscriptions/vapidpublickey")
            .await,
    )
    .await;
    assert_problem(app.anonymous().get(PATH).await, 401, "unauthorized").await;
}

mod processes {
    use crate::backend_fn_tests;
    use crate::common::{Backend, TestDatabase};

    backend_fn_tests!(processes_starting_together_agree_on_one_key);

    /// Two stores opened on one fresh database ask for the key at once: one insert wins and
    /// both read the winner's.
    async fn processes_starting_together_agree_on_one_key(backend: Backend) {
        let Some(database) = TestDatabase::create(backend).await else {
            return;
        };
        let first = safetrack::app::open_store(&database.url)
            .await
            .expect("open");
        let second = safetrack::app::open_store(&database.url)
            .await
            .expect("open again");
        let (a, b) = tokio::join!(first.vapid_key(), second.vapid_key());
        let (a, b) = (a.expect("first key"), b.expect("second key"));
        assert_eq!(a.public_key_base64url(), b.public_key_base64url());
        let again = first.vapid_key().await.expect("read again");
        assert_eq!(again.public_key_base64url(), a.public_key_base64url());
        first.close().await;
        second.close().await;
    }
}
