//! MO messages' retention (DESIGN §15): a tenant's `MessageRetentionDays` property,
//! inherited by its subtenants, else `--message-retention-days`, else kept for ever; the
//! pruner deletes what is older and keeps device state, and what a waiting delivery still
//! renders.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Backend, TestApp, assert_problem, problem_fields, spawn_app_with};
use crate::mo_messages::{position_report, register_device};
use safetrack::app::AppConfig;
use safetrack::domain::retention::RetentionDays;
use safetrack::workers::message_retention::MessageRetentionConfig;

crate::backend_fn_tests!(
    old_messages_go_by_the_nearest_setting,
    the_server_default_applies_where_no_tenant_says,
    a_message_a_waiting_delivery_renders_is_kept,
    bad_retention_properties_are_refused,
);

fn config(default_days: Option<u32>) -> AppConfig {
    AppConfig {
        message_retention: MessageRetentionConfig {
            default_days: default_days.and_then(RetentionDays::new),
            interval: Duration::from_millis(200),
        },
        ..AppConfig::default()
    }
}

async fn set_retention(app: &TestApp, tenant: &str, days: &str) {
    let body = json!({"Description": format!("Tenant {tenant}"), "Properties": {"MessageRetentionDays": days}});
    let response = app.admin.put(&format!("/V2/{tenant}"), &body).await;
    assert_eq!(response.status(), 200, "set the retention of {tenant}");
}

/// Two messages from 2020 and one from now.
async fn post_old_and_new(app: &TestApp, tenant: &str, device: &str) {
    register_device(app, tenant, device).await;
    let now = jiff::Timestamp::now().to_string();
    let batch = json!([
        position_report(1, "2020-01-01T10:00:00Z", 54.60, -3.13),
        position_report(2, "2020-01-02T10:00:00Z", 54.61, -3.13),
        position_report(3, &now, 54.62, -3.13),
    ]);
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/devices/{device}/momessages"), &batch)
        .await;
    assert_eq!(response.status(), 200, "post to {device}");
}

async fn sequences(app: &TestApp, tenant: &str, device: &str) -> Vec<i64> {
    let messages = app
        .admin
        .get_json(&format!("/V2/{tenant}/devices/{device}/momessages"))
        .await;
    let mut seqs: Vec<i64> = messages
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|m| m["SequenceNumber"].as_i64())
        .collect();
    seqs.sort_unstable();
    seqs
}

/// Waits until `device` holds exactly `want`; fails after 20 s.
async fn until_holds(app: &TestApp, tenant: &str, device: &str, want: &[i64]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let held = sequences(app, tenant, device).await;
        if held == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{device} holds {held:?}, not {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn old_messages_go_by_the_nearest_setting(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(None)).await else {
        return;
    };
    let thirty = app.create_tenant("1000", "Thirty days").await;
    set_retention(&app, &thirty, "30").await;
    let inherits = app.create_tenant(&thirty, "Inherits").await;
    let keeps = app.create_tenant("1000", "Keeps").await;
    for (tenant, device) in [
        ("1000", "r-root"),
        (&thirty, "r-30"),
        (&inherits, "r-inherits"),
        (&keeps, "r-keeps"),
    ] {
        post_old_and_new(&app, tenant, device).await;
    }
    // A device whose every message is past the retention keeps its state.
    register_device(&app, &thirty, "r-quiet").await;
    let batch = json!([position_report(1, "2020-05-01T08:00:00Z", 51.5, -0.12)]);
    assert_eq!(
        app.admin
            .post(&format!("/V2/{thirty}/devices/r-quiet/momessages"), &batch)
            .await
            .status(),
        200
    );

    until_holds(&app, &thirty, "r-30", &[3]).await;
    until_holds(&app, &inherits, "r-inherits", &[3]).await;
    until_holds(&app, &thirty, "r-quiet", &[]).await;
    assert_eq!(
        sequences(&app, "1000", "r-root").await,
        [1, 2, 3],
        "the root sets nothing"
    );
    assert_eq!(
        sequences(&app, &keeps, "r-keeps").await,
        [1, 2, 3],
        "a sibling sets nothing"
    );
    let quiet = app
        .admin
        .get_json(&format!("/V2/{thirty}/devices/r-quiet"))
        .await;
    assert_eq!(
        quiet["LastPosition"]["Lat"], 51.5,
        "the state stays: {quiet}"
    );
    assert_eq!(quiet["LastMessageTime"], "2020-05-01T08:00:00Z", "{quiet}");
}

async fn the_server_default_applies_where_no_tenant_says(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(Some(30))).await else {
        return;
    };
    let decade = app.create_tenant("1000", "Ten years").await;
    set_retention(&app, &decade, "3650").await;
    post_old_and_new(&app, "1000", "d-root").await;
    post_old_and_new(&app, &decade, "d-decade").await;
    until_holds(&app, "1000", "d-root", &[3]).await;
    // Some prune steps have run since the root's: the ten-year tenant's 2020 messages stay.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(sequences(&app, &decade, "d-decade").await, [1, 2, 3]);
}

async fn a_message_a_waiting_delivery_renders_is_kept(backend: Backend) {
    let mut config = config(None);
    // No delivery loop: the webhook event's delivery stays Pending.
    config.delivery.loops = 0;
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    let tenant = app.create_tenant("1000", "Hooked").await;
    set_retention(&app, &tenant, "30").await;
    let hooks = json!({"Urls": [{"Url": "https://hooks.example.com/retention", "Device": false,
        "EventNotification": false, "MoMessage": true, "MtMessage": false, "Tenant": false, "User": false}],
        "Authentication": "None"});
    assert_eq!(
        app.admin
            .put(&format!("/V2/{tenant}/webhooks"), &hooks)
            .await
            .status(),
        200
    );
    post_old_and_new(&app, &tenant, "h-1").await;
    let pending = app
        .admin
        .get_json(&format!("/V2/{tenant}/deliveries?status=Pending"))
        .await;
    assert!(
        !pending.as_array().expect("a list").is_empty(),
        "the events wait: {pending}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        sequences(&app, &tenant, "h-1").await,
        [1, 2, 3],
        "kept while their events wait"
    );
}

async fn bad_retention_properties_are_refused(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(None)).await else {
        return;
    };
    let tenant = app.create_tenant("1000", "Strict").await;
    let before = app.admin.get_json(&format!("/V2/{tenant}")).await;
    let subtenants = app.admin.get_json(&format!("/V2/{tenant}/tenants")).await;
    for bad in [
        json!("0"),
        json!("-5"),
        json!("36501"),
        json!("7.5"),
        json!("a month"),
        json!(""),
    ] {
        let body = json!({"Description": "Strict", "Properties": {"MessageRetentionDays": bad}});
        // PUT changes the tenant, POST makes a subtenant of it: both refuse.
        for response in [
            app.admin.put(&format!("/V2/{tenant}"), &body).await,
            app.admin.post(&format!("/V2/{tenant}"), &body).await,
        ] {
            let problem = assert_problem(response, 400, "validation_failed").await;
            let fields = problem_fields(&problem);
            assert_eq!(
                fields,
                ["Properties.MessageRetentionDays"],
                "{bad}: {problem}"
            );
        }
    }
    // Not a string at all: the body is refused as a whole.
    let body = json!({"Description": "Strict", "Properties": {"MessageRetentionDays": 30}});
    assert_eq!(
        app.admin
            .put(&format!("/V2/{tenant}"), &body)
            .await
            .status(),
        400
    );
    assert_eq!(
        app.admin.get_json(&format!("/V2/{tenant}")).await,
        before,
        "unchanged"
    );
    assert_eq!(
        app.admin.get_json(&format!("/V2/{tenant}/tenants")).await,
        subtenants,
        "none created"
    );
}

#[test]
fn the_server_flag_is_held_to_its_limits() {
    for bad in ["0", "36501", "-1", "many"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_safetrack"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                &format!("--message-retention-days={bad}"),
            ])
            .env_remove("SAFETRACK_DATABASE_URL")
            .output()
            .expect("run safetrack");
        assert!(!out.status.success(), "{bad} accepted");
        let message = String::from_utf8_lossy(&out.stderr);
        assert!(
            message.contains("--message-retention-days"),
            "{bad}: {message}"
        );
    }
}
