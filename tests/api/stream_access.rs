//! An open stream ends within 5 s of its caller losing access: the user deleted or
//! disabled, its role lowered, its password changed. A change that keeps the access
//! (another field of the user) does not end it.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_tests;
use crate::common::TestApp;
use crate::mo_messages::register_device;
use crate::stream::{EventStream, post_report};

backend_tests!(
    a_deleted_users_stream_ends,
    a_disabled_users_stream_ends,
    a_lowered_roles_stream_ends,
    a_changed_passwords_stream_ends,
);

/// The bound on how long a stream outlives its caller's access.
const ENDS_WITHIN: Duration = Duration::from_secs(5);
const EMAIL: &str = "watcher@example.com";

enum Cause {
    Deleted,
    Disabled,
    RoleLowered,
    PasswordChanged,
}

async fn a_deleted_users_stream_ends(app: TestApp) {
    loses_access(app, Cause::Deleted).await;
}

async fn a_disabled_users_stream_ends(app: TestApp) {
    loses_access(app, Cause::Disabled).await;
}

async fn a_lowered_roles_stream_ends(app: TestApp) {
    loses_access(app, Cause::RoleLowered).await;
}

async fn a_changed_passwords_stream_ends(app: TestApp) {
    loses_access(app, Cause::PasswordChanged).await;
}

async fn loses_access(app: TestApp, cause: Cause) {
    register_device(&app, "1000", "van-3").await;
    let (id, client) = app.create_user("1000", EMAIL, "Manager").await;
    let path = format!("/V2/1000/users/{id}");
    let mut stream = EventStream::open(&client, "/V2/1000/stream", None).await;

    // A change that keeps its access, then a wait past a re-check: the stream goes on.
    let harmless = json!({"Username": EMAIL, "UserRoleId": "Manager", "LastName": "Kept"});
    assert_eq!(
        app.admin.put(&path, &harmless).await.status(),
        StatusCode::OK
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let message = post_report(&app, "1000", "van-3", 1).await;
    assert_eq!(stream.expect().await.data["MessageId"], message);
    stream.expect().await;

    let changed = match cause {
        Cause::Deleted => app.admin.delete(&path).await,
        Cause::Disabled => {
            let body = json!({"Username": EMAIL, "UserRoleId": "Manager", "IsDisabled": true});
            app.admin.put(&path, &body).await
        }
        Cause::RoleLowered => {
            let body = json!({"Username": EMAIL, "UserRoleId": "User"});
            app.admin.put(&path, &body).await
        }
        Cause::PasswordChanged => {
            let body = json!({"Username": EMAIL, "UserRoleId": "Manager",
                              "Password": "a brand new password"});
            app.admin.put(&path, &body).await
        }
    };
    assert!(changed.status().is_success(), "{}", changed.status());
    ends_in_time(&mut stream).await;
}

/// The stream ends within 5 s: nothing more is sent, and its last comment says why.
pub async fn ends_in_time(stream: &mut EventStream) {
    let rest = tokio::time::timeout(ENDS_WITHIN, async {
        let mut rest = Vec::new();
        while let Some(event) = stream.next().await {
            rest.push(event);
        }
        rest
    })
    .await
    .expect("the stream ended in time");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(
        stream
            .comments()
            .iter()
            .any(|c| c.contains("access revoked")),
        "{:?}",
        stream.comments()
    );
}
