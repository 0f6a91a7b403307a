//! Escalation policy steps firing (issue 45 §3): each step fires once its time since the
//! raise has passed and nobody acknowledged, in order, with its e-mails received by a
//! real SMTP server and its `EscalationStep` on the alert's timeline; the alert shows
//! the current step's instructions and the next step's time; acknowledging stops the
//! chain; a restart between steps fires the next once; the tenant default applies (a
//! parent's shared one too); without a policy the old rounds; racing workers on two
//! stores (two processes) fire each step once. A policy minute lasts 500 ms here
//! (`PipelineConfig::escalation_minute`, a test-only setting).

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use safetrack::app::AppConfig;
use safetrack::services::escalation::Escalator;
use safetrack::workers::StepOutcome;
use safetrack::workers::escalations::EscalationWorker;

use crate::backend_fn_tests;
use crate::common::{Backend, TestApp, spawn_app_with};
use crate::delivery_worker::{Peers, peers_config};
use crate::mo_messages::{DEVICE, register_device};
use crate::peers::SmtpSink;

backend_fn_tests!(
    steps_fire_in_order_at_their_times,
    acknowledging_stops_the_chain,
    a_restart_between_steps_fires_the_next_once,
    the_tenant_default_applies_and_without_a_policy_the_old_rounds,
    racing_workers_fire_each_step_once,
    severity_none_follows_only_a_named_policy,
);

const MINUTE: Duration = Duration::from_millis(500);
const WAIT: Duration = Duration::from_secs(20);

fn config(smtp: Option<&SmtpSink>) -> AppConfig {
    let mut config = peers_config(Peers {
        smtp,
        ..Default::default()
    });
    config.pipeline.escalation_minute = SignedDuration::try_from(MINUTE).expect("a duration");
    // Today's rounds would come after an hour: none during a test.
    config.pipeline.escalation_after = Some(SignedDuration::from_hours(1));
    config.worker_interval = Duration::from_millis(100);
    config
}

/// Three steps: at the raise, 2 and 4 policy minutes after it.
fn three_steps() -> Value {
    json!([
        {"AfterMinutes": 0, "Instructions": "Call the worker.",
         "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:first@example.com"}]},
        {"AfterMinutes": 2, "Instructions": "No answer: call the site supervisor.",
         "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:second@example.com"}]},
        {"AfterMinutes": 4, "Instructions": "Send someone to the last position.",
         "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:third@example.com"}]},
    ])
}

async fn create_policy(app: &TestApp, tenant: &str, body: Value) -> String {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/escalationpolicies"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create policy");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

/// The device and an SOS notification (High, e-mailing ops) naming `policy`.
async fn setup(app: &TestApp, tenant: &str, policy: Option<&str>, severity: &str) {
    register_device(app, tenant, DEVICE).await;
    let mut notification = json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
        "RaiseAlert": true, "Severity": severity,
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"}]});
    if let Some(policy) = policy {
        notification["EscalationPolicyId"] = json!(policy);
    }
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/eventnotifications"), &notification)
        .await;
    assert_eq!(response.status(), StatusCode::OK, "create notification");
}

async fn sos(app: &TestApp, tenant: &str) -> String {
    let batch = json!([{"MessageType": "FreeText", "EmergencyState": "Active",
        "Position": {"Latitude": 51.5, "Longitude": -0.12}}]);
    let processed = crate::mo_messages::post_processed(app, tenant, DEVICE, &batch).await;
    processed[0]["Notifications"][0]["AlertId"]
        .as_str()
        .expect("an alert")
        .to_string()
}

async fn alert(app: &TestApp, tenant: &str, id: &str) -> Value {
    app.admin
        .get_json(&format!("/V2/{tenant}/alerts/{id}"))
        .await
}

async fn wait_for_steps(app: &TestApp, tenant: &str, id: &str, fired: i64) -> Value {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let alert = alert(app, tenant, id).await;
        if alert["EscalationLevel"] == fired {
            return alert;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "alert {id} never fired {fired} steps: {alert}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn timeline(app: &TestApp, tenant: &str, id: &str) -> Vec<Value> {
    let entries = app
        .admin
        .get_json(&format!("/V2/{tenant}/alerts/{id}/timeline"))
        .await;
    entries.as_array().expect("a timeline").clone()
}

fn steps_of(timeline: &[Value]) -> Vec<&Value> {
    timeline
        .iter()
        .filter(|e| e["Kind"] == "EscalationStep")
        .collect()
}

/// The deliveries of alert `id` to `target`.
async fn deliveries_to(app: &TestApp, tenant: &str, id: &str, target: &str) -> Vec<Value> {
    let listed = app
        .admin
        .get_json(&format!("/V2/{tenant}/deliveries?alertId={id}"))
        .await;
    listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["Target"] == target)
        .cloned()
        .collect()
}

fn time(value: &Value) -> Timestamp {
    value
        .as_str()
        .expect("a time")
        .parse()
        .expect("a timestamp")
}

/// Whom the SMTP sink's messages were sent to, in the order received.
fn recipients(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m["rcpt_tos"][0].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn steps_fire_in_order_at_their_times(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let Some(app) = spawn_app_with(backend, config(Some(&smtp))).await else {
        return;
    };
    let policy = create_policy(
        &app,
        "1000",
        json!({"Name": "Lone worker", "Steps": three_steps()}),
    )
    .await;
    setup(&app, "1000", Some(&policy), "2").await;
    let id = sos(&app, "1000").await;
    let raised = alert(&app, "1000", &id).await;
    assert_eq!(raised["Escalation"]["PolicyId"], json!(policy));
    assert_eq!(raised["Escalation"]["PolicyName"], "Lone worker");
    assert_eq!(raised["Escalation"]["StepCount"], 3);

    // Step 1 at the raise, told besides the notification's own recipient.
    let first = wait_for_steps(&app, "1000", &id, 1).await;
    let escalation = &first["Escalation"];
    assert_eq!(escalation["StepsFired"], 1);
    assert_eq!(escalation["CurrentStep"]["Number"], 1);
    assert_eq!(
        escalation["CurrentStep"]["Instructions"],
        "Call the worker."
    );
    let raised_at = time(&first["RaisedAt"]);
    let next = time(&escalation["NextStepAt"]);
    assert_eq!(next.duration_since(raised_at), SignedDuration::from_secs(1));
    let mut told = recipients(&smtp.wait_for(2, WAIT).await);
    told.sort();
    assert_eq!(told, ["first@example.com", "ops@example.com"]);

    let second = wait_for_steps(&app, "1000", &id, 2).await;
    assert_eq!(
        second["Escalation"]["CurrentStep"]["Instructions"],
        "No answer: call the site supervisor."
    );
    let third = wait_for_steps(&app, "1000", &id, 3).await;
    assert_eq!(third["Escalation"]["CurrentStep"]["AfterMinutes"], 4);
    assert!(
        third["Escalation"]["NextStepAt"].is_null(),
        "the chain is done"
    );
    let messages = smtp.wait_for(4, WAIT).await;
    assert_eq!(
        recipients(&messages[2..]),
        ["second@example.com", "third@example.com"]
    );
    let body = messages[3]["body"].as_str().unwrap_or_default();
    assert!(
        body.contains("Send someone to the last position."),
        "{body}"
    );
    assert!(
        messages[3]["headers"]["Subject"]
            .as_str()
            .unwrap_or_default()
            .contains("Escalation step 3 of 3"),
        "{:?}",
        messages[3]["headers"]
    );

    // Each step on the timeline, never before its time, with whom it told and the
    // delivery after it.
    let entries = timeline(&app, "1000", &id).await;
    let steps = steps_of(&entries);
    assert_eq!(steps.len(), 3);
    for (i, (step, target)) in steps.iter().zip(["first", "second", "third"]).enumerate() {
        assert_eq!(step["Step"], i as i64 + 1);
        assert_eq!(
            step["Notified"],
            json!([{"Channel": "Email", "Target": format!("{target}@example.com")}])
        );
        let after = time(&step["At"]).duration_since(raised_at);
        assert!(
            after >= SignedDuration::from_secs(i as i64),
            "step {} fired {after:?} after the raise",
            i + 1
        );
    }
    assert_eq!(steps[0]["Instructions"], "Call the worker.");
    // Nothing more, ever.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(steps_of(&timeline(&app, "1000", &id).await).len(), 3);
    assert_eq!(
        deliveries_to(&app, "1000", &id, "third@example.com")
            .await
            .len(),
        1
    );
}

async fn acknowledging_stops_the_chain(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(None)).await else {
        return;
    };
    let policy = create_policy(
        &app,
        "1000",
        json!({"Name": "Lone worker", "Steps": three_steps()}),
    )
    .await;
    setup(&app, "1000", Some(&policy), "1").await;
    let id = sos(&app, "1000").await;
    wait_for_steps(&app, "1000", &id, 1).await;
    let response = app
        .admin
        .post(&format!("/V2/1000/alerts/{id}/acknowledge"), &json!({}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let acknowledged: Value = response.json().await.unwrap();
    assert!(acknowledged["Escalation"]["NextStepAt"].is_null());
    // Steps 2 and 3 were due 1 s and 2 s after the raise.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let after = alert(&app, "1000", &id).await;
    assert_eq!(after["EscalationLevel"], 1);
    assert_eq!(
        after["Escalation"]["CurrentStep"]["Instructions"],
        "Call the worker."
    );
    assert_eq!(steps_of(&timeline(&app, "1000", &id).await).len(), 1);
    assert!(
        deliveries_to(&app, "1000", &id, "second@example.com")
            .await
            .is_empty()
    );
}

async fn a_restart_between_steps_fires_the_next_once(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(None)).await else {
        return;
    };
    let steps = json!([
        {"AfterMinutes": 0, "Instructions": "Call the worker.",
         "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:first@example.com"}]},
        {"AfterMinutes": 4, "Instructions": "Call the supervisor.",
         "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:second@example.com"}]},
    ]);
    let policy = create_policy(&app, "1000", json!({"Name": "Two", "Steps": steps})).await;
    setup(&app, "1000", Some(&policy), "2").await;
    let id = sos(&app, "1000").await;
    wait_for_steps(&app, "1000", &id, 1).await;
    let app = app.restart().await;
    let second = wait_for_steps(&app, "1000", &id, 2).await;
    assert!(
        time(&steps_of(&timeline(&app, "1000", &id).await)[1]["At"])
            .duration_since(time(&second["RaisedAt"]))
            >= SignedDuration::from_secs(2)
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(steps_of(&timeline(&app, "1000", &id).await).len(), 2);
    assert_eq!(
        deliveries_to(&app, "1000", &id, "first@example.com")
            .await
            .len(),
        1
    );
    assert_eq!(
        deliveries_to(&app, "1000", &id, "second@example.com")
            .await
            .len(),
        1
    );
}

async fn the_tenant_default_applies_and_without_a_policy_the_old_rounds(backend: Backend) {
    let mut config = config(None);
    config.pipeline.escalation_after = Some(SignedDuration::from_secs(1));
    config.pipeline.escalation_rounds = 1;
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    // Without any policy: today's round to the escalation contacts.
    let contact = json!({"ContactName": "Duty", "IsEscalationContact": true,
                         "ContactEntries": [{"Address": "duty@hq.example"}]});
    let response = app
        .admin
        .post("/V2/1000/addressbookcontacts", &contact)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    setup(&app, "1000", None, "2").await;
    let old = sos(&app, "1000").await;
    assert!(alert(&app, "1000", &old).await["Escalation"].is_null());
    wait_for_steps(&app, "1000", &old, 1).await;
    let kinds: Vec<Value> = timeline(&app, "1000", &old)
        .await
        .iter()
        .map(|e| e["Kind"].clone())
        .collect();
    assert!(kinds.contains(&json!("Escalated")), "{kinds:?}");
    assert!(!kinds.contains(&json!("EscalationStep")), "{kinds:?}");
    assert_eq!(
        deliveries_to(&app, "1000", &old, "duty@hq.example")
            .await
            .len(),
        1
    );

    // The root's default, shared, is the policy of a subtenant's alerts whose
    // notification names none.
    let child = app.create_tenant("1000", "Field team").await;
    let default = create_policy(
        &app,
        "1000",
        json!({"Name": "Default", "IsTenantDefault": true, "AppliesToSubtenants": true,
               "Steps": [{"AfterMinutes": 0, "Instructions": "Follow the default.",
                 "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:default@example.com"}]}]}),
    )
    .await;
    setup(&app, &child, None, "2").await;
    let id = sos(&app, &child).await;
    let fired = wait_for_steps(&app, &child, &id, 1).await;
    assert_eq!(fired["Escalation"]["PolicyId"], json!(default));
    assert_eq!(
        fired["Escalation"]["CurrentStep"]["Instructions"],
        "Follow the default."
    );
    assert_eq!(
        deliveries_to(&app, &child, &id, "default@example.com")
            .await
            .len(),
        1
    );
    // The child's own default, once it has one, wins for its next alert.
    let own = create_policy(
        &app,
        &child,
        json!({"Name": "Own", "IsTenantDefault": true,
               "Steps": [{"AfterMinutes": 0, "Instructions": "Follow our own."}]}),
    )
    .await;
    let response = app
        .admin
        .post(&format!("/V2/{child}/alerts/{id}/resolve"), &json!({}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let next = sos(&app, &child).await;
    assert_ne!(next, id);
    let fired = wait_for_steps(&app, &child, &next, 1).await;
    assert_eq!(fired["Escalation"]["PolicyId"], json!(own));
    assert_eq!(
        fired["Escalation"]["CurrentStep"]["Instructions"],
        "Follow our own."
    );
}

/// Steps every worker at once; the steps they fired together.
async fn race(workers: &[Arc<EscalationWorker>]) -> usize {
    let tasks: Vec<_> = workers
        .iter()
        .map(|w| {
            let w = w.clone();
            tokio::spawn(async move { w.step().await })
        })
        .collect();
    let mut handled = 0;
    for task in tasks {
        if let StepOutcome::Worked(n) = task.await.expect("worker task").expect("step") {
            handled += n;
        }
    }
    handled
}

async fn racing_workers_fire_each_step_once(backend: Backend) {
    // Policy minutes long enough that each race falls a whole minute clear of every
    // step's time, however loaded the machine.
    let minute = Duration::from_millis(1000);
    let mut config = config(None);
    config.pipeline.escalation_minute = SignedDuration::try_from(minute).expect("a duration");
    // The app's own worker stays idle: only the racers below work.
    config.worker_interval = Duration::from_secs(3600);
    let pipeline = config.pipeline;
    let Some(app) = spawn_app_with(backend, config).await else {
        return;
    };
    let policy = create_policy(
        &app,
        "1000",
        json!({"Name": "Lone worker", "Steps": three_steps()}),
    )
    .await;
    setup(&app, "1000", Some(&policy), "2").await;
    let mut workers = Vec::new();
    for _ in 0..2 {
        let store = safetrack::app::open_store(app.database_url())
            .await
            .expect("open store");
        for _ in 0..4 {
            workers.push(Arc::new(EscalationWorker::new(
                store.clone(),
                Escalator::new(store.clone(), pipeline),
            )));
        }
    }
    let raised = std::time::Instant::now();
    let id = sos(&app, "1000").await;
    // Steps fall due at the raise, 2 and 4 policy minutes after it: races at 0, 3, 5, 5.
    for (at, fired, ran) in [(0, 1, 1), (3, 2, 1), (5, 3, 1), (5, 3, 0)] {
        tokio::time::sleep_until((raised + minute * at).into()).await;
        assert_eq!(
            race(&workers).await,
            ran,
            "step {fired}: fired by one worker"
        );
        let alert = alert(&app, "1000", &id).await;
        assert_eq!(alert["EscalationLevel"], fired);
        assert_eq!(
            steps_of(&timeline(&app, "1000", &id).await).len(),
            fired as usize
        );
    }
    for target in ["first", "second", "third"] {
        let to = format!("{target}@example.com");
        assert_eq!(deliveries_to(&app, "1000", &id, &to).await.len(), 1, "{to}");
    }
}

async fn severity_none_follows_only_a_named_policy(backend: Backend) {
    let Some(app) = spawn_app_with(backend, config(None)).await else {
        return;
    };
    let steps = json!([{"AfterMinutes": 0, "Instructions": "Look at it.",
        "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "mail:look@example.com"}]}]);
    // A tenant default does not make an alert of severity None escalate...
    create_policy(
        &app,
        "1000",
        json!({"Name": "Default", "IsTenantDefault": true, "Steps": steps}),
    )
    .await;
    setup(&app, "1000", None, "0").await;
    let root = sos(&app, "1000").await;
    assert!(alert(&app, "1000", &root).await["Escalation"].is_null());
    // ...but a notification naming a policy asks for it, whatever the severity.
    let child = app.create_tenant("1000", "Field team").await;
    let named = create_policy(&app, &child, json!({"Name": "Named", "Steps": steps})).await;
    setup(&app, &child, Some(&named), "0").await;
    let id = sos(&app, &child).await;
    let fired = wait_for_steps(&app, &child, &id, 1).await;
    assert_eq!(fired["Escalation"]["PolicyId"], json!(named));
    assert_eq!(
        deliveries_to(&app, &child, &id, "look@example.com")
            .await
            .len(),
        1
    );
    let untouched = alert(&app, "1000", &root).await;
    assert_eq!(untouched["EscalationLevel"], 0);
    assert!(
        deliveries_to(&app, "1000", &root, "look@example.com")
            .await
            .is_empty()
    );
}
