//! The delivery worker: claims due deliveries under a lease (`claim_due_deliveries`),
//! attempts each through its channel, and settles it by the retry policy. At least once:
//! a process that dies between sending and settling leaves the row leased; once the lease
//! runs out any process sends it again, with the same `webhook-id`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;

use super::StepOutcome;
use crate::channels::webhook::WebhookAuth;
use crate::channels::{Attempt, Channels};
use crate::domain::delivery;
use crate::domain::retry::{RetryPolicy, Settlement};
use crate::domain::time::now;
use crate::store::{ClaimScope, ClaimedDelivery, Store};

/// How the worker runs (`serve` flags).
#[derive(Debug, Clone, Copy)]
pub struct DeliveryWorkerConfig {
    pub retry: RetryPolicy,
    /// A claim lasts this long: longer than any attempt's timeout (SMTP's is 30 s).
    pub lease: Duration,
    /// Deliveries claimed (and attempted concurrently) per step.
    pub batch: u32,
    /// How often an idle worker looks for due deliveries.
    pub poll_interval: Duration,
    /// Worker loops per process (`--delivery-workers`).
    pub loops: usize,
}

impl Default for DeliveryWorkerConfig {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            lease: Duration::from_secs(120),
            batch: 32,
            poll_interval: Duration::from_millis(250),
            loops: 2,
        }
    }
}

pub struct DeliveryWorker {
    store: Store,
    channels: Arc<Channels>,
    config: DeliveryWorkerConfig,
    /// Which deliveries it claims: all, or people's channels only (`serve` runs one such
    /// loop beside the others, so a webhook backlog never holds up an alert's message).
    scope: ClaimScope,
    /// This worker's name on the leases it holds.
    owner: String,
}

impl DeliveryWorker {
    pub fn new(
        store: Store,
        channels: Arc<Channels>,
        config: DeliveryWorkerConfig,
        scope: ClaimScope,
    ) -> Self {
        Self {
            store,
            channels,
            config,
            scope,
            owner: format!("worker-{}", uuid::Uuid::new_v4().simple()),
        }
    }

    /// Claims the deliveries due now (at most a batch), attempts them concurrently and
    /// settles them together.
    pub async fn step(&self) -> anyhow::Result<StepOutcome> {
        let claimed = self
            .store
            .claim_due_deliveries(
                &self.owner,
                now(),
                self.config.lease,
                self.config.batch,
                self.scope,
            )
            .await?;
        if claimed.is_empty() {
            return Ok(StepOutcome::Idle);
        }
        let auths = self.webhook_auths(&claimed).await?;
        let count = claimed.len();
        let settlements: Vec<(i64, Settlement)> =
            futures::future::join_all(claimed.iter().map(|d| {
                let auth = auths.get(&(d.tenant_code.clone(), d.target.clone()));
                async move { (d.id, self.attempt(d, auth.and_then(Option::as_ref)).await) }
            }))
            .await;
        // One transaction for the step's outcomes. If it fails, the leases run out and the
        // deliveries are attempted again: at least once.
        match self
            .store
            .settle_deliveries(&self.owner, &settlements)
            .await
        {
            Ok(settled) => {
                for ((id, _), ours) in settlements.iter().zip(settled) {
                    if !ours {
                        tracing::warn!(
                            delivery = id,
                            "lease lost before settling: another worker has taken the delivery over"
                        );
                    }
                }
            }
            Err(e) => {
                tracing::error!(deliveries = count, error = %e, "could not settle deliveries")
            }
        }
        Ok(StepOutcome::Worked(count))
    }

    /// The authentication of each webhook delivery's URL, from its tenant's settings as
    /// they are now (a changed secret applies to retries too).
    async fn webhook_auths(
        &self,
        claimed: &[ClaimedDelivery],
    ) -> anyhow::Result<HashMap<(String, Option<String>), Option<WebhookAuth>>> {
        let mut settings = HashMap::new();
        let mut auths = HashMap::new();
        for d in claimed.iter().filter(|d| d.channel == delivery::WEBHOOK) {
            if !settings.contains_key(&d.tenant_code) {
                let stored = self.store.get_webhooks(&d.tenant_code).await?;
                settings.insert(d.tenant_code.clone(), stored);
            }
            let auth = settings
                .get(&d.tenant_code)
                .and_then(Option::as_ref)
                .zip(d.target.as_deref())
                .and_then(|(s, url)| WebhookAuth::for_url(s, url));
            auths.insert((d.tenant_code.clone(), d.target.clone()), auth);
        }
        Ok(auths)
    }

    /// Attempts one delivery and decides its settlement (recorded by the caller).
    async fn attempt(&self, d: &ClaimedDelivery, auth: Option<&WebhookAuth>) -> Settlement {
        let started = Instant::now();
        let outcome = self
            .channels
            .attempt(Attempt {
                channel: &d.channel,
                target: d.target.as_deref(),
                subject: d.subject.as_deref(),
                body: &d.body,
                event_id: d.event_id.as_deref(),
                webhook_auth: auth,
            })
            .await;
        let jitter = rand::thread_rng().gen_range(-1.0..=1.0);
        let settlement = self
            .config
            .retry
            .settle(outcome, d.attempt, d.queued_at, now(), jitter);
        let took = started.elapsed();
        let label = settlement_label(&settlement);
        metrics::counter!("safetrack_delivery_attempts_total",
            "channel" => d.channel.clone(), "outcome" => label)
        .increment(1);
        if let Settlement::Sent { at, .. } = &settlement {
            let latency = at.duration_since(d.created_at).as_secs_f64().max(0.0);
            metrics::histogram!("safetrack_delivery_latency_seconds", "channel" => d.channel.clone())
                .record(latency);
        }
        // Never the target, body or any credential: ids, channel, outcome, timing.
        let error = match &settlement {
            Settlement::Retry { error, .. }
            | Settlement::Failed { error }
            | Settlement::Expired { error } => Some(error.as_str()),
            _ => None,
        };
        tracing::info!(
            delivery = d.id,
            channel = %d.channel,
            attempt = d.attempt,
            outcome = label,
            latency_ms = took.as_millis() as u64,
            error,
            "delivery attempt"
        );
        settlement
    }
}

fn settlement_label(s: &Settlement) -> &'static str {
    match s {
        Settlement::Sent { .. } => "sent",
        Settlement::Retry { .. } => "retry",
        Settlement::Failed { .. } => "failed",
        Settlement::Expired { .. } => "expired",
        Settlement::NotConfigured => "not_configured",
    }
}
