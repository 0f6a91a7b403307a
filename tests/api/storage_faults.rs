//! A storage fault while one device's batch is written fails that batch alone: batches
//! of other devices posted at the same time (on SQLite, applied in the same group
//! transaction) are stored, move their devices' state and are acknowledged; the failed
//! one leaves nothing behind. The fault is a trigger refusing one device's state update,
//! which comes after its messages were inserted.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Connection;

use crate::backend_tests;
use crate::common::{Backend, TestApp};
use crate::mo_messages::{position_report, register_device};

backend_tests!(a_batch_that_fails_after_writing_fails_alone);

const FAULTY: &str = "faulty-1";
const DEVICES: usize = 8;

async fn refuse_state_updates_of(app: &TestApp, device_id: &str) {
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(app.database_url())
        .await
        .expect("connect");
    let statements: Vec<String> = match app.backend {
        Backend::Sqlite => vec![format!(
            "CREATE TRIGGER storage_fault BEFORE UPDATE ON device_states
             WHEN NEW.device_id = '{device_id}' BEGIN SELECT RAISE(ABORT, 'storage fault'); END"
        )],
        Backend::Postgres => vec![
            "CREATE FUNCTION storage_fault() RETURNS trigger AS $$
             BEGIN RAISE EXCEPTION 'storage fault'; END $$ LANGUAGE plpgsql"
                .to_string(),
            format!(
                "CREATE TRIGGER storage_fault BEFORE UPDATE ON device_states FOR EACH ROW
                 WHEN (NEW.device_id = '{device_id}') EXECUTE FUNCTION storage_fault()"
            ),
        ],
    };
    for statement in statements {
        sqlx::query(&statement)
            .execute(&mut db)
            .await
            .expect("create the fault");
    }
    db.close().await.ok();
}

fn batch(round: i64) -> Value {
    let messages: Vec<Value> = (0..10)
        .map(|i| {
            let seq = round * 10 + i;
            let sent = format!("2026-03-01T10:{:02}:{:02}Z", seq / 60, seq % 60);
            position_report(seq, &sent, 51.5, -0.12)
        })
        .collect();
    json!(messages)
}

async fn messages_of(app: &TestApp, device: &str) -> usize {
    app.admin
        .get_json(&format!("/V2/1000/devices/{device}/momessages"))
        .await
        .as_array()
        .expect("a list")
        .len()
}

async fn a_batch_that_fails_after_writing_fails_alone(app: TestApp) {
    let good: Vec<String> = (0..DEVICES).map(|i| format!("good-{i}")).collect();
    for device in good.iter().map(String::as_str).chain([FAULTY]) {
        register_device(&app, "1000", device).await;
    }
    refuse_state_updates_of(&app, FAULTY).await;
    for round in 0..3 {
        let body = batch(round);
        let posts = good
            .iter()
            .map(String::as_str)
            .chain([FAULTY])
            .map(|device| {
                let body = &body;
                let path = format!("/V2/1000/devices/{device}/momessages");
                let admin = &app.admin;
                async move { (device, admin.post(&path, body).await) }
            });
        for (device, response) in join_all(posts).await {
            let status = response.status();
            if device == FAULTY {
                assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "round {round}");
                let problem: Value = response.json().await.expect("problem+json");
                assert!(
                    !problem.to_string().contains("storage fault"),
                    "the database's words stay in the log: {problem}"
                );
            } else {
                assert_eq!(status, StatusCode::OK, "{device}, round {round}");
            }
        }
    }
    for device in &good {
        assert_eq!(messages_of(&app, device).await, 30, "{device}");
        let shown = app
            .admin
            .get_json(&format!("/V2/1000/devices/{device}"))
            .await;
        assert_eq!(
            shown["LastMessageTime"], "2026-03-01T10:00:29Z",
            "{device}: {shown}"
        );
    }
    assert_eq!(messages_of(&app, FAULTY).await, 0);
    let faulty = app
        .admin
        .get_json(&format!("/V2/1000/devices/{FAULTY}"))
        .await;
    assert!(faulty["LastMessageTime"].is_null(), "{faulty}");
}
