//! Escalation until someone acknowledges: an open Warning or High alert notifies the
//! escalation contacts (own and an ancestor's shared ones) every interval, for a bounded
//! number of rounds, recorded on the alert; acknowledging stops it; a restart neither
//! skips nor repeats a round. Runs with a one-second interval.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use safetrack::app::AppConfig;
use safetrack::services::ingest::PipelineConfig;

use crate::common::{Backend, TestApp, spawn_app_with};
use crate::mo_messages::register_device;

pub fn config() -> AppConfig {
    AppConfig {
        pipeline: PipelineConfig {
            escalation_after: Some(jiff::SignedDuration::from_secs(1)),
            escalation_rounds: 2,
            ..PipelineConfig::default()
        },
        worker_interval: Duration::from_millis(100),
        ..AppConfig::default()
    }
}

pub async fn setup(app: &TestApp, severity: &str) -> String {
    let child = app.create_tenant("1000", "Field team").await;
    for (tenant, body) in [
        (
            "1000",
            json!({"ContactName": "HQ duty", "IsEscalationContact": true, "AppliesToSubtenants": true,
                        "ContactEntries": [{"Address": "duty@hq.example"}, {"Address": "+447700900001"}]}),
        ),
        (
            "1000",
            json!({"ContactName": "HQ private", "IsEscalationContact": true,
                        "ContactEntries": [{"Address": "private@hq.example"}]}),
        ),
        (
            child.as_str(),
            json!({"ContactName": "Site lead", "IsEscalationContact": true,
                        "ContactEntries": [{"Address": "lead@site.example"}]}),
        ),
        (
            child.as_str(),
            json!({"ContactName": "Not escalated",
                        "ContactEntries": [{"Address": "other@site.example"}]}),
        ),
    ] {
        let response = app
            .admin
            .post(&format!("/V2/{tenant}/addressbookcontacts"), &body)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    register_device(app, &child, "lone-1").await;
    let response = app
        .admin
        .post(
            &format!("/V2/{child}/eventnotifications"),
            &json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
                    "RaiseAlert": true, "Severity": severity}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    child
}

pub async fn sos(app: &TestApp, tenant: &str) -> String {
    let response = app
        .admin
        .post(
            &format!("/V2/{tenant}/devices/lone-1/momessages?process=true"),
            &json!([{"MessageType": "FreeText", "EmergencyState": "Active"}]),
        )
        .await;
    let processed: Value = response.json().await.unwrap();
    processed[0]["Notifications"][0]["AlertId"]
        .as_str()
        .expect("an alert")
        .to_string()
}

pub async fn alert(app: &TestApp, tenant: &str, id: &str) -> Value {
    app.admin
        .get_json(&format!("/V2/{tenant}/alerts/{id}"))
        .await
}

/// Escalation deliveries of an alert: (target, subject).
pub async fn escalations(app: &TestApp, tenant: &str, id: &str) -> Vec<(String, String)> {
    let deliveries = app
        .admin
        .get_json(&format!("/V2/{tenant}/deliveries?alertId={id}"))
        .await;
    deliveries
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| {
            d["Subject"]
                .as_str()
                .unwrap_or_default()
                .contains("Escalation")
        })
        .map(|d| {
            (
                d["Target"].as_str().unwrap_or_default().to_string(),
                d["Subject"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

async fn wait_for_level(app: &TestApp, tenant: &str, id: &str, level: i64) {
    for _ in 0..60 {
        if alert(app, tenant, id).await["EscalationLevel"] == level {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("alert {id} never reached escalation level {level}");
}

async fn rounds_until_acknowledged(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    let child = setup(&app, "2").await;
    let id = sos(&app, &child).await;
    assert_eq!(alert(&app, &child, &id).await["EscalationLevel"], 0);
    wait_for_level(&app, &child, &id, 1).await;
    let mut first: Vec<String> = escalations(&app, &child, &id)
        .await
        .into_iter()
        .map(|(target, subject)| {
            assert!(subject.contains("Escalation 1 of 2"), "{subject}");
            target
        })
        .collect();
    first.sort();
    // The shared HQ contact (both entries) and the site lead; not the private HQ contact
    // nor the one that is no escalation contact.
    assert_eq!(
        first,
        ["+447700900001", "duty@hq.example", "lead@site.example"]
    );
    wait_for_level(&app, &child, &id, 2).await;
    assert_eq!(escalations(&app, &child, &id).await.len(), 6);
    // Two rounds in all.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(alert(&app, &child, &id).await["EscalationLevel"], 2);
    assert_eq!(escalations(&app, &child, &id).await.len(), 6);
}

async fn acknowledging_stops_it(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    let child = setup(&app, "1").await;
    let id = sos(&app, &child).await;
    let acknowledged = app
        .admin
        .post(&format!("/V2/{child}/alerts/{id}/acknowledge"), &json!({}))
        .await;
    assert_eq!(acknowledged.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(alert(&app, &child, &id).await["EscalationLevel"], 0);
    assert!(escalations(&app, &child, &id).await.is_empty());
}

async fn severity_none_never_escalates(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    let child = setup(&app, "0").await;
    let id = sos(&app, &child).await;
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(alert(&app, &child, &id).await["EscalationLevel"], 0);
}

async fn a_restart_neither_skips_nor_repeats(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config()).await else {
        return;
    };
    let child = setup(&app, "2").await;
    let id = sos(&app, &child).await;
    wait_for_level(&app, &child, &id, 1).await;
    let app = app.restart().await;
    wait_for_level(&app, &child, &id, 2).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(escalations(&app, &child, &id).await.len(), 6);
}

#[tokio::test]
async fn sqlite_rounds_until_acknowledged() {
    rounds_until_acknowledged(Backend::Sqlite).await;
}
#[tokio::test]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_rounds_until_acknowledged() {
    rounds_until_acknowledged(Backend::Postgres).await;
}
#[tokio::test]
async fn sqlite_acknowledging_stops_it() {
    acknowledging_stops_it(Backend::Sqlite).await;
}
#[tokio::test]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_acknowledging_stops_it() {
    acknowledging_stops_it(Backend::Postgres).await;
}
#[tokio::test]
async fn sqlite_severity_none_never_escalates() {
    severity_none_never_escalates(Backend::Sqlite).await;
}
#[tokio::test]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_severity_none_never_escalates() {
    severity_none_never_escalates(Backend::Postgres).await;
}
#[tokio::test]
async fn sqlite_a_restart_neither_skips_nor_repeats() {
    a_restart_neither_skips_nor_repeats(Backend::Sqlite).await;
}
#[tokio::test]
#[cfg_attr(
    safetrack_no_postgres,
    ignore = "no PostgreSQL answered when the tests were built (see build.rs)"
)]
async fn postgres_a_restart_neither_skips_nor_repeats() {
    a_restart_neither_skips_nor_repeats(Backend::Postgres).await;
}
