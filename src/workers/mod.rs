//! Background workers: started and stopped with the server, sharing its shutdown. Each
//! does one claimable step at a time (`step` returns what it did), so a test — or a second
//! process on the same PostgreSQL — can drive or share the work, and a crash between
//! steps loses nothing: all their state is in the database.

pub mod audit_retention;
pub mod check_ins;
pub mod deliveries;
pub mod escalations;
pub mod message_retention;
pub mod monitoring;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// Nothing was due.
    Idle,
    /// Handled this many items; more may be due.
    Worked(usize),
}

/// Runs `step` every `interval` (or at once when `wake` is told) until `stop` turns true,
/// draining (stepping again at once) while steps find work. A failing step is logged and
/// retried at the next tick.
pub fn spawn_loop<F, Fut>(
    name: &'static str,
    interval: Duration,
    wake: Option<Arc<Notify>>,
    mut stop: watch::Receiver<bool>,
    mut step: F,
) -> JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = anyhow::Result<StepOutcome>> + Send,
{
    tokio::spawn(async move {
        loop {
            loop {
                if *stop.borrow() {
                    return;
                }
                match step().await {
                    Ok(StepOutcome::Worked(_)) => continue,
                    Ok(StepOutcome::Idle) => break,
                    Err(e) => {
                        tracing::error!(worker = name, error = %format!("{e:#}"), "worker step failed");
                        break;
                    }
                }
            }
            let woken = async {
                match &wake {
                    Some(wake) => wake.notified().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = stop.changed() => {}
                _ = tokio::time::sleep(interval) => {}
                _ = woken => {}
            }
        }
    })
}
