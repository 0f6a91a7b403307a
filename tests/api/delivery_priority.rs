//! Who waits for whom in the outbox. People first: an alert's e-mail is sent at once
//! even while the general delivery loops are held up by a webhook receiver that answers
//! only after its timeout, with a backlog of webhook deliveries queued ahead of the
//! e-mail (`serve` runs a loop for people's channels beside the others). And one
//! receiver cannot hold up the others: a hanging URL gets a bounded number of attempts in
//! flight while other tenants' webhooks go out, and a failing URL's backlog waits for the
//! retry of the attempt that failed instead of each delivery failing in turn.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::alerts::{raise, sos_setup};
use crate::backend_fn_tests;
use crate::common::{Backend, TestApp};
use crate::delivery_worker::{
    Peers, all_status, app_with, post_message, post_report_batches, subscribe_mo_messages,
    subscribe_mo_messages_to, wait_deliveries, wait_deliveries_for,
};
use crate::mo_messages::{DEVICE, position_report, register_device};
use crate::peers::{Receiver, SmtpSink};

backend_fn_tests!(
    an_sos_email_overtakes_a_hanging_webhook_backlog,
    an_sos_webhook_overtakes_a_backlog_of_message_events,
    a_hanging_receiver_holds_up_no_other_tenants_webhooks,
    a_hanging_receivers_long_backlog_holds_up_no_other_tenants_webhooks,
);

const BRANCH_DEVICE: &str = "300234010753371";

async fn an_sos_email_overtakes_a_hanging_webhook_backlog(backend: Backend) {
    let smtp = SmtpSink::start(None);
    let receiver = Receiver::start().await;
    // Longer than the 15 s webhook timeout: every attempt holds its loop until then.
    receiver.delay(Duration::from_secs(30));
    let Some(app) = app_with(
        backend,
        Peers {
            smtp: Some(&smtp),
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    sos_setup(&app, "1000", DEVICE).await;
    subscribe_mo_messages(&app, &receiver).await;
    // 100 webhook deliveries, more than both general loops take in a step (2 × 32).
    for seq in 1..=100 {
        post_message(&app, seq).await;
    }
    // Both general loops have claimed their step and are waiting on the receiver.
    tokio::time::sleep(Duration::from_millis(1000)).await;

    let queued = Instant::now();
    raise(&app, "1000", DEVICE, 101, "2026-03-01T10:05:00Z").await;
    let sent = wait_deliveries(&app, "?channel=Email", all_status("Sent")).await;
    let waited = queued.elapsed();
    assert_eq!(sent.len(), 1);
    assert_eq!(smtp.wait_for(1, Duration::from_secs(5)).await.len(), 1);
    // The general loops are stuck until the webhook timeout (15 s): the e-mail went out
    // well before any of them could have taken it.
    assert!(
        waited < Duration::from_secs(10),
        "the e-mail waited {waited:?} behind the webhooks"
    );
    let webhooks = wait_deliveries(&app, "?channel=Webhook", |_| true).await;
    assert!(
        webhooks.iter().all(|d| d["Status"] == "Pending"),
        "the webhooks were still waiting on their receiver"
    );
}

async fn a_hanging_receiver_holds_up_no_other_tenants_webhooks(backend: Backend) {
    let Some(HangingScene {
        app,
        hanging,
        healthy,
        branch,
    }) = hanging_scene(backend).await
    else {
        return;
    };
    // 100 deliveries to the hanging URL, more than both general loops claim in a step.
    for seq in 1..=100 {
        post_message(&app, seq).await;
    }

    let waited = branch_webhook_wait(&app, &branch, &healthy).await;
    // Every attempt to the hanging URL holds on until its 15 s timeout; the branch's
    // webhook went out while they all still hung.
    assert!(
        waited < Duration::from_secs(8),
        "the branch's webhook waited {waited:?} behind another tenant's hanging receiver"
    );
    let attempted = hanging.received().len();
    assert!(
        attempted <= 2 * 32 + 2,
        "{attempted} attempts in flight to one hanging URL: the per-URL limit was not kept"
    );
    // Operators see them: attempts still running past 2 s.
    let metrics = app.anonymous().get("/metrics").await.text().await.unwrap();
    let slow: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("safetrack_delivery_slow_attempts "))
        .unwrap_or_else(|| panic!("/metrics lacks safetrack_delivery_slow_attempts:\n{metrics}"))
        .trim()
        .parse()
        .unwrap();
    assert!(
        slow >= 8.0,
        "{slow} slow attempts shown while {attempted} hang"
    );

    // Once they time out, the attempts are settled for a retry by the background tasks
    // that took them over from the steps; the rest follow as the URL stops being busy.
    // Each was sent once (no retry within the test): none was taken over while it hung.
    let timed_out = |list: &[Value]| {
        list.len() == 100
            && list.iter().all(|d| {
                d["Status"] == "Pending"
                    && d["Attempts"] == 1
                    && d["LastError"]
                        .as_str()
                        .is_some_and(|e| e.starts_with("timed out"))
            })
    };
    let all_webhooks = "?channel=Webhook&pageSize=1000";
    wait_deliveries_for(&app, all_webhooks, Duration::from_secs(50), timed_out).await;
    assert_eq!(hanging.received().len(), 100, "one request per delivery");
    assert_eq!(healthy.received().len(), 1, "the branch's one event, once");
}

async fn an_sos_webhook_overtakes_a_backlog_of_message_events(backend: Backend) {
    let receiver = Receiver::start().await;
    // A healthy but slow receiver: the general loops send 2 × 32 events a half second,
    // so the backlog below takes them about 15 s.
    receiver.delay(Duration::from_millis(500));
    let Some(app) = app_with(backend, Peers::default()).await else {
        return;
    };
    sos_setup(&app, "1000", DEVICE).await;
    // One endpoint for everything, as a dispatch centre would subscribe.
    let url = format!("{}/hook", receiver.base);
    let settings = json!({"Urls": [{"Url": url, "MoMessage": true, "EventNotification": true}]});
    let response = app.admin.put("/V2/1000/webhooks", &settings).await;
    assert_eq!(response.status(), StatusCode::OK);
    post_report_batches(&app, 20, |_| "2026-03-01T10:00:00Z".into()).await;

    let raised = Instant::now();
    raise(&app, "1000", DEVICE, 5000, "2026-03-01T10:05:00Z").await;
    let fired = loop {
        let fired = receiver
            .received()
            .into_iter()
            .find(|r| r.json()["Category"] == "EventNotification");
        if let Some(fired) = fired {
            break fired;
        }
        assert!(
            raised.elapsed() < Duration::from_secs(10),
            "the SOS webhook is still queued behind the message events"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let waited = fired.at.duration_since(raised);
    assert!(
        waited < Duration::from_secs(3),
        "the SOS webhook waited {waited:?} behind the message events"
    );
    assert_eq!(fired.json()["Type"], "Fired");
    let backlog = receiver.received().len();
    assert!(
        backlog < 1500,
        "the backlog was mostly still queued ({backlog} sent)"
    );
    // The delivery names the notification that fired: that is what puts it first.
    let id = fired.header("webhook-id").unwrap();
    let delivery = app
        .admin
        .get_all_pages("/V2/1000/deliveries?channel=Webhook&pageSize=1000")
        .await
        .into_iter()
        .find(|d| d["EventId"] == id)
        .unwrap_or_else(|| panic!("no delivery for {id}"));
    assert!(delivery["NotificationId"].is_string(), "{delivery}");
}

/// A hanging receiver's backlog longer than the window a claim reads past busy URLs
/// (512 deliveries) used to stand at the head of the queue: another tenant's webhook
/// waited behind it. The busy URL's deliveries at the head are held back instead.
async fn a_hanging_receivers_long_backlog_holds_up_no_other_tenants_webhooks(backend: Backend) {
    let Some(HangingScene {
        app,
        hanging,
        healthy,
        branch,
    }) = hanging_scene(backend).await
    else {
        return;
    };
    // 700 events to the hanging URL, in batches of 100.
    post_report_batches(&app, 7, |seq| {
        format!("2026-03-01T10:{:02}:{:02}Z", seq / 60 % 60, seq % 60)
    })
    .await;
    // The hanging URL is busy once its first attempts run past 2 s.
    let deadline = Instant::now() + Duration::from_secs(10);
    while hanging.received().len() < 8 {
        assert!(
            Instant::now() < deadline,
            "no attempts reached the hanging receiver"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;

    let waited = branch_webhook_wait(&app, &branch, &healthy).await;
    assert!(
        waited < Duration::from_secs(8),
        "the branch's webhook waited {waited:?} behind another tenant's hanging backlog"
    );
    // The held deliveries were not attempted, and say why they wait.
    let listed = wait_deliveries(&app, "?channel=Webhook&pageSize=1000", |l| l.len() == 700).await;
    let held: Vec<&Value> = listed
        .iter()
        .filter(|d| d["Attempts"] == 0 && d["Status"] == "Pending")
        .collect();
    assert!(held.len() > 500, "{} held back", held.len());
    assert!(held.iter().all(|d| {
        d["LastError"]
            .as_str()
            .is_some_and(|e| e.starts_with("held back"))
    }));
    assert!(
        hanging.received().len() <= 2 * 32 + 8 + 2,
        "attempts in flight stay bounded"
    );
}

/// Tenant 1000's MoMessage webhooks go to a receiver that hangs past the 15 s timeout;
/// a branch's go to a healthy one. No retry within a test: every attempt is a first one.
struct HangingScene {
    app: TestApp,
    hanging: Receiver,
    healthy: Receiver,
    branch: String,
}

async fn hanging_scene(backend: Backend) -> Option<HangingScene> {
    let hanging = Receiver::start().await;
    hanging.delay(Duration::from_secs(30));
    let healthy = Receiver::start().await;
    let app = app_with(
        backend,
        Peers {
            retry_initial: Duration::from_secs(60),
            ..Default::default()
        },
    )
    .await?;
    register_device(&app, "1000", DEVICE).await;
    subscribe_mo_messages(&app, &hanging).await;
    let branch = app.create_tenant("1000", "Branch").await;
    register_device(&app, &branch, BRANCH_DEVICE).await;
    subscribe_mo_messages_to(&app, &branch, &format!("{}/hook", healthy.base)).await;
    Some(HangingScene {
        app,
        hanging,
        healthy,
        branch,
    })
}

/// Posts one message from the branch's device; how long until its webhook arrived.
async fn branch_webhook_wait(app: &TestApp, branch: &str, healthy: &Receiver) -> Duration {
    let posted = Instant::now();
    let response = app
        .admin
        .post(
            &format!("/V2/{branch}/devices/{BRANCH_DEVICE}/momessages"),
            &json!([position_report(1, "2026-03-01T10:00:00Z", 51.5, -0.12)]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    healthy.wait_for(1, Duration::from_secs(14)).await;
    posted.elapsed()
}
