//! Workers racing on one database, as several `serve` processes do: two stores (two
//! connection pools, as two processes have), four workers on each, stepping at once when
//! work falls due. Every due unit of work is done exactly once — one escalation round per
//! due time, one missed check-in per interval — never twice at the same time.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use safetrack::app::AppConfig;
use safetrack::services::escalation::Escalator;
use safetrack::services::ingest::{Pipeline, PipelineConfig};
use safetrack::services::stream::EventHub;
use safetrack::store::Store;
use safetrack::workers::StepOutcome;
use safetrack::workers::check_ins::CheckInScheduler;
use safetrack::workers::escalations::EscalationWorker;

use crate::backend_fn_tests;
use crate::check_ins;
use crate::common::{Backend, TestApp, spawn_app_with};
use crate::escalation;

backend_fn_tests!(
    escalation_rounds_are_run_once_by_racing_workers,
    a_missed_check_in_is_recorded_once_by_racing_schedulers
);

/// Workers per store, and stores.
const WORKERS: usize = 4;
const STORES: usize = 2;

/// The app's own workers stay idle (they step once at start, with nothing due): only
/// the racers below work.
fn quiet(config: AppConfig) -> AppConfig {
    AppConfig {
        worker_interval: Duration::from_secs(3600),
        ..config
    }
}

async fn stores(app: &TestApp) -> Vec<Store> {
    let mut stores = Vec::new();
    for _ in 0..STORES {
        stores.push(
            safetrack::app::open_store(app.database_url())
                .await
                .expect("open store"),
        );
    }
    stores
}

/// Steps every worker at once; returns the items all of them handled together.
async fn race<W, F, Fut>(workers: &[Arc<W>], step: F) -> usize
where
    W: Send + Sync + 'static,
    F: Fn(Arc<W>) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<StepOutcome>> + Send + 'static,
{
    let tasks: Vec<_> = workers
        .iter()
        .map(|w| tokio::spawn(step(w.clone())))
        .collect();
    let mut handled = 0;
    for task in tasks {
        match task.await.expect("worker task").expect("step") {
            StepOutcome::Worked(n) => handled += n,
            StepOutcome::Idle => {}
        }
    }
    handled
}

async fn escalation_rounds_are_run_once_by_racing_workers(backend: Backend) {
    let Some(app) = spawn_app_with(backend, quiet(escalation::config())).await else {
        return;
    };
    let child = escalation::setup(&app, "2").await;
    let pipeline = escalation::config().pipeline;
    let workers: Vec<Arc<EscalationWorker>> = stores(&app)
        .await
        .into_iter()
        .flat_map(|store| {
            (0..WORKERS).map(move |_| {
                Arc::new(EscalationWorker::new(
                    store.clone(),
                    Escalator::new(store.clone(), pipeline),
                ))
            })
        })
        .collect();
    let step = |w: Arc<EscalationWorker>| async move { w.step().await };
    let id = escalation::sos(&app, &child).await;
    // Rounds fall due 1 s and 2 s after the alert was raised; two rounds in all.
    for (round, deliveries, ran) in [(1, 3, 1), (2, 6, 1), (2, 6, 0)] {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let rounds = race(&workers, step).await;
        let alert = escalation::alert(&app, &child, &id).await;
        assert_eq!(alert["EscalationLevel"], round);
        assert_eq!(
            escalation::escalations(&app, &child, &id).await.len(),
            deliveries,
            "round {round}: each escalation contact once"
        );
        assert_eq!(rounds, ran, "round {round}: run by one worker");
    }
}

async fn a_missed_check_in_is_recorded_once_by_racing_schedulers(backend: Backend) {
    let Some(app) = spawn_app_with(backend, quiet(AppConfig::default())).await else {
        return;
    };
    check_ins::setup(&app).await;
    let set = check_ins::set_interval(&app, json!(1)).await;
    assert_eq!(set.status(), reqwest::StatusCode::OK);
    let workers: Vec<Arc<CheckInScheduler>> = stores(&app)
        .await
        .into_iter()
        .flat_map(|store| {
            let hub = Arc::new(EventHub::default());
            let pipeline = Pipeline::new(store.clone(), hub, PipelineConfig::default());
            (0..WORKERS)
                .map(move |_| Arc::new(CheckInScheduler::new(store.clone(), pipeline.clone())))
        })
        .collect();
    let step = |w: Arc<CheckInScheduler>| async move { w.step().await };
    // The last message was 59.8 s ago: the check-in falls due in 0.2 s.
    check_ins::message_sent(&app, Duration::from_millis(59_800)).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(race(&workers, step).await, 1, "one scheduler records it");
    // And nobody again: the next is due a minute later.
    assert_eq!(race(&workers, step).await, 0);
    let alerts = check_ins::missed_alerts(&app).await;
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0]["MatchCount"], 1);
}
