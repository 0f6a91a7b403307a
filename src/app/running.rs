//! Running the app: the listeners serving requests and, beside them, the workers, until
//! shutdown; then each is stopped in the order that loses nothing.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{App, LOG_CHECKPOINT_INTERVAL};
use crate::services::escalation::Escalator;
use crate::store::{ClaimFilter, Wake};
use crate::workers::audit_retention::AuditPruner;
use crate::workers::deliveries::DeliveryWorker;
use crate::workers::escalations::EscalationWorker;
use crate::workers::message_retention::MessagePruner;
use crate::workers::{self, check_ins::CheckInScheduler, monitoring::MonitoringTimers};

/// Connections `/metrics`'s own listener serves at once (a scraper or two).
const METRICS_CONNECTIONS: usize = 16;

/// Serves until `shutdown` resolves, with the workers running beside; then ends the live
/// streams, finishes in-flight requests, stops the workers between steps (work in
/// progress stays in the database for the next start) and returns.
pub async fn serve(
    listener: TcpListener,
    app: App,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with_metrics(listener, None, app, shutdown).await
}

/// `serve`, with `/metrics` on a listener of its own when the app was built so
/// (`MetricsConfig::own_listener`).
pub async fn serve_with_metrics(
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    mut app: App,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let metrics = metrics_with_listener(&app, metrics_listener)?;
    let (stop, stopped) = watch::channel(false);
    let mut workers = spawn_maintenance(&app, &stopped);
    workers.extend(spawn_retention(&app, &stopped));
    let deliveries = spawn_deliveries(&app, &stopped);
    workers.extend(deliveries.loops);
    workers.extend(spawn_listeners_and_relay(&mut app, &stopped));
    let signal = stop_on(shutdown, &app, stop.clone());
    serve_requests(listener, metrics, app, &stopped).await;
    signal.abort();
    let _ = stop.send(true);
    for worker in workers {
        let _ = worker.await;
    }
    for deliveries in deliveries.settled_on_stop {
        deliveries.settle_unsettled().await;
    }
    Ok(())
}

/// `/metrics`'s router with its own listener, when it has one; the two must agree.
fn metrics_with_listener(
    app: &App,
    metrics_listener: Option<TcpListener>,
) -> anyhow::Result<Option<(axum::Router, TcpListener)>> {
    match (app.metrics_router.clone(), metrics_listener) {
        (Some(router), Some(listener)) => Ok(Some((router, listener))),
        (None, None) => Ok(None),
        (Some(_), None) => anyhow::bail!("/metrics has a listener of its own, but none was bound"),
        (None, Some(_)) => {
            anyhow::bail!("a metrics listener was bound, but /metrics is on the API's")
        }
    }
}

/// The loops that keep the data in shape: missed check-ins, monitoring timers, escalations, SQLite's log
/// checkpoints.
fn spawn_maintenance(app: &App, stopped: &watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let scheduler = Arc::new(CheckInScheduler::new(
        app.store.clone(),
        app.pipeline.clone(),
    ));
    let escalations = Arc::new(EscalationWorker::new(
        app.store.clone(),
        Escalator::new(app.store.clone(), app.pipeline_config),
    ));
    let timers = Arc::new(MonitoringTimers::new(
        app.store.clone(),
        app.pipeline.clone(),
    ));
    let store = app.store.clone();
    vec![
        workers::spawn_loop(
            "check-ins",
            app.worker_interval,
            None,
            stopped.clone(),
            move || {
                let scheduler = scheduler.clone();
                async move { scheduler.step().await }
            },
        ),
        workers::spawn_loop(
            "monitoring-timers",
            app.worker_interval,
            None,
            stopped.clone(),
            move || {
                let timers = timers.clone();
                async move { timers.step().await }
            },
        ),
        workers::spawn_loop(
            "escalations",
            app.worker_interval,
            None,
            stopped.clone(),
            move || {
                let escalations = escalations.clone();
                async move { escalations.step().await }
            },
        ),
        // SQLite's log copied into the database file beside the writer, not in its turn.
        workers::spawn_loop(
            "log-checkpoints",
            LOG_CHECKPOINT_INTERVAL,
            None,
            stopped.clone(),
            move || {
                let store = store.clone();
                async move {
                    store.checkpoint_log().await?;
                    Ok(workers::StepOutcome::Idle)
                }
            },
        ),
    ]
}

/// The retention loops: the audit log's, and the MO messages'.
fn spawn_retention(app: &App, stopped: &watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let pruner = AuditPruner::new(app.store.clone(), app.audit_retention);
    let messages = MessagePruner::new(app.store.clone(), app.message_retention);
    vec![
        workers::spawn_loop(
            "audit-retention",
            pruner.interval(app.worker_interval),
            None,
            stopped.clone(),
            move || {
                let pruner = pruner.clone();
                async move { pruner.step().await }
            },
        ),
        workers::spawn_loop(
            "message-retention",
            app.message_retention.interval,
            None,
            stopped.clone(),
            move || {
                let messages = messages.clone();
                async move { messages.step().await }
            },
        ),
    ]
}

/// The delivery loops, and the workers whose attempted but unsettled deliveries are
/// settled once the loops have stopped.
struct DeliveryLoops {
    loops: Vec<JoinHandle<()>>,
    settled_on_stop: [Arc<DeliveryWorker>; 2],
}

/// `--delivery-workers` general loops (two by default: a receiver that hangs until its
/// timeout holds up one only) and, beside them, one loop for what a matched notification
/// sends (people's channels and its EventNotification webhooks): an alert's e-mail, SMS,
/// call or webhook is never queued behind a backlog of other webhooks (an outage's
/// retries, a flood of MO message events) that the general loops work through.
fn spawn_deliveries(app: &App, stopped: &watch::Receiver<bool>) -> DeliveryLoops {
    let general = Arc::new(
        DeliveryWorker::new(
            app.store.clone(),
            app.channels.clone(),
            app.delivery,
            ClaimFilter::All,
        )
        .yielding_to_ingest(),
    );
    let alerting = Arc::new(
        DeliveryWorker::new(
            app.store.clone(),
            app.channels.clone(),
            app.delivery,
            ClaimFilter::Alerting,
        )
        .sharing_outages_with(&general),
    );
    let outbox = app.store.wake_signal(Wake::Deliveries);
    let mut loops = Vec::new();
    for _ in 0..app.delivery.loops {
        let deliveries = general.clone();
        loops.push(workers::spawn_loop(
            "deliveries",
            app.delivery.poll_interval,
            Some(outbox.clone()),
            stopped.clone(),
            move || {
                let deliveries = deliveries.clone();
                async move { deliveries.step().await }
            },
        ));
    }
    if app.delivery.loops > 0 {
        let deliveries = alerting.clone();
        loops.push(workers::spawn_loop(
            "alerting-deliveries",
            app.delivery.poll_interval,
            Some(app.store.wake_signal(Wake::Alerting)),
            stopped.clone(),
            move || {
                let deliveries = deliveries.clone();
                async move { deliveries.step().await }
            },
        ));
    }
    DeliveryLoops {
        loops,
        settled_on_stop: [general, alerting],
    }
}

/// The DirectIP listener, when configured, and the relay of the stream's announcements
/// (every process's on PostgreSQL, this one's on SQLite) into this process's hub.
fn spawn_listeners_and_relay(
    app: &mut App,
    stopped: &watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    if let Some((listener, config)) = app.directip.take() {
        let service = crate::services::gateway_ingest::GatewayIngest::new(
            app.store.clone(),
            app.pipeline.clone(),
        );
        tasks.push(tokio::spawn(crate::listeners::directip_listener::serve(
            listener,
            config,
            app.auth.clone(),
            service,
            stopped.clone(),
        )));
    }
    if let Some(feed) = app.stream_feed.take() {
        tasks.push(tokio::spawn(crate::services::stream::relay(
            app.store.clone(),
            feed,
            app.hub.clone(),
            stopped.clone(),
        )));
    }
    tasks
}

/// Once `shutdown` resolves: ends the live streams first (they would hold their
/// connections open for ever), then tells the listeners and the workers (`stop` serves
/// both).
fn stop_on(
    shutdown: impl Future<Output = ()> + Send + 'static,
    app: &App,
    stop: watch::Sender<bool>,
) -> JoinHandle<()> {
    let hub = app.hub.clone();
    tokio::spawn(async move {
        shutdown.await;
        hub.close();
        let _ = stop.send(true);
    })
}

/// Serves the API (and `/metrics` on its own listener, if any) until told to stop.
async fn serve_requests(
    listener: TcpListener,
    metrics: Option<(axum::Router, TcpListener)>,
    app: App,
    stopped: &watch::Receiver<bool>,
) {
    let cap = app.serving.connection_cap();
    tracing::info!(
        max_connections = cap,
        header_read_timeout_s = app.serving.header_read_timeout.as_secs_f64(),
        idle_timeout_s = app.serving.idle_timeout.as_secs_f64(),
        body_read_timeout_s = app.serving.body_read_timeout.as_secs_f64(),
        https = app.tls.is_some(),
        "serving connections"
    );
    // HTTPS with `--tls-cert`/`--tls-key`; `/metrics`' own listener stays plain HTTP.
    let api = crate::server::serve(
        listener,
        app.router,
        app.serving,
        cap,
        app.tls,
        stopped.clone(),
    );
    match metrics {
        Some((router, listener)) => {
            let metrics = crate::server::serve(
                listener,
                router,
                app.serving,
                METRICS_CONNECTIONS,
                None,
                stopped.clone(),
            );
            tokio::join!(api, metrics);
        }
        None => api.await,
    }
}
