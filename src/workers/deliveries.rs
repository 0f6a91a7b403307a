//! The delivery worker: claims due deliveries under a lease (`claim_due_deliveries`),
//! attempts each through its channel, and settles it by the retry policy. At least once:
//! a process that dies between sending and settling leaves the row leased; once the lease
//! runs out any process sends it again, with the same `webhook-id`.
//!
//! A step's outcomes are settled by the worker's next step, in the transaction of its
//! claim (`settle_then_claim`): on SQLite every write transaction takes the one writer's
//! turn from ingest, so a step takes it once. The loop steps again at once after a step
//! that worked, so they wait no longer than its lull; `settle_unsettled` records what is
//! left when the loops stop.
//!
//! One receiver cannot hold the others up: a step waits for its attempts only
//! `straggler_after` (the slow ones finish and are settled in the background, still under
//! their lease), and a URL with `slow_attempts_per_url` such slow attempts is not claimed from
//! until some end; its deliveries at the head of the queue are held back meanwhile.
//!
//! A receiver that could not be reached (or whose deliveries were held back) and then
//! answers gets its waiting retries at once, instead of each at its own backoff.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::{BoxFuture, FutureExt};
use futures::stream::FuturesUnordered;
use rand::Rng;

mod push;
mod receivers;

use receivers::{Outages, SlowAttempts, UrlSlot};

use super::StepOutcome;
use crate::channels::webhook::WebhookAuth;
use crate::channels::{Attempt, Channels};
use crate::domain::delivery::{Channel, Receiver};
use crate::domain::device_protocols::garmin_mt::GarminMt;
use crate::domain::ids::{DeliveryId, TenantCode};
use crate::domain::mt_message::MtStatus;
use crate::domain::retry::{AttemptOutcome, RetryPolicy, Settlement};
use crate::domain::time::now;
use crate::store::{ClaimFilter, ClaimRequest, ClaimedDelivery, Store};

/// How long a step that found only busy URLs' deliveries due waits before the loop goes
/// on: another URL's delivery queued meanwhile waits up to this long. A claim that finds
/// nothing to send still costs the database its work; repeated at every ingest commit
/// while a receiver hangs, those claims take a clear share of ingest on PostgreSQL
/// (`bench/outage.sh`), and shorter pauses take more of it.
const BUSY_BACKOFF: Duration = Duration::from_secs(1);

/// How long a busy URL's deliveries are held back (`DeliveryWorker::hold_back`): at least
/// the webhook timeout, by when its slow attempts have ended; at most so long that a
/// receiver back without a word from us (no attempt of ours got through) waits no longer.
const HOLD_AT_LEAST: Duration = Duration::from_secs(15);
const HOLD_AT_MOST: Duration = Duration::from_secs(600);

/// How long a claim of the general loops waits for SQLite's writer to have no ingest
/// batch waiting (see `DeliveryWorker::yielding_to_ingest`).
const YIELD_AT_MOST: Duration = Duration::from_millis(250);

/// The share of its lease an attempt may run: it is abandoned (a retry) before the lease
/// ends, so no other worker takes the delivery over while it is still being sent — with
/// the default lease (120 s) after 108 s, far past every channel's own timeout; it
/// matters where `--delivery-lease-seconds` is set lower, or a server drips its answer.
const LEASE_USE: f64 = 0.9;
/// No attempt runs longer than this, whatever the lease.
const MAX_ATTEMPT: Duration = Duration::from_secs(86_400);

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
    /// How long a step waits for its attempts; the ones still running then are settled in
    /// the background when they end, and the loop goes on.
    pub straggler_after: Duration,
    /// Webhook attempts to one URL still running after `straggler_after` (per process)
    /// from which on its deliveries are not claimed. The claims made meanwhile can pass it
    /// by up to a batch per loop.
    pub slow_attempts_per_url: usize,
}

impl Default for DeliveryWorkerConfig {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            lease: Duration::from_secs(120),
            batch: 32,
            poll_interval: Duration::from_millis(250),
            loops: 2,
            straggler_after: Duration::from_secs(2),
            slow_attempts_per_url: 8,
        }
    }
}

pub struct DeliveryWorker {
    store: Store,
    channels: Arc<Channels>,
    config: DeliveryWorkerConfig,
    /// Which deliveries it claims: all, or what a matched notification sends (`serve` runs
    /// one such loop beside the others, so a webhook backlog never holds up an alert).
    filter: ClaimFilter,
    /// This worker's name on the leases it holds.
    owner: String,
    /// Slow webhook attempts (running on in the background), by URL.
    slow_attempts: SlowAttempts,
    /// Whether this worker's claims let the writes waiting for the one writer (ingest's
    /// batches, on SQLite) go first (`Store::writer_lull`).
    yields_to_ingest: bool,
    /// Outcomes of attempts that ended within their step, settled by the next step's
    /// claim (shared by the loops running this worker).
    unsettled: Mutex<Vec<(DeliveryId, Settlement)>>,
    /// Receivers this process could not reach or held back, until one answers (shared with
    /// the process's other delivery worker: a message event that goes through releases an
    /// alert's retries).
    outages: Outages,
}

/// What a step's claim came to.
enum Claim {
    /// Deliveries to attempt now.
    Deliveries(Vec<ClaimedDelivery>),
    /// Nothing claimed, but busy URLs' deliveries were held back: the next claim may
    /// find the deliveries behind them.
    HeldBack,
    /// Nothing due.
    Nothing,
}

/// A step's attempts still running, and the webhook URL of each (while it runs).
struct Attempts {
    running: FuturesUnordered<BoxFuture<'static, Attempted>>,
    urls: HashMap<DeliveryId, String>,
}

impl Attempts {
    /// The attempts that end within `wait`, in the order they end.
    async fn ending_within(&mut self, wait: Duration) -> Vec<Attempted> {
        let mut ended = Vec::with_capacity(self.running.len());
        let waited = tokio::time::sleep(wait);
        tokio::pin!(waited);
        loop {
            tokio::select! {
                next = self.running.next() => match next {
                    Some(attempted) => {
                        self.urls.remove(&attempted.id);
                        ended.push(attempted);
                    }
                    None => break,
                },
                _ = &mut waited => break,
            }
        }
        ended
    }
}

/// One attempt's outcome, to be recorded by whoever holds it.
struct Attempted {
    id: DeliveryId,
    settlement: Settlement,
    receiver: Receiver,
    heard: Heard,
}

/// What an attempt says of its receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Heard {
    /// No connection could be made: the receiver is down.
    Unreachable,
    /// It took the delivery.
    Answered,
    /// Nothing about the receiver as a whole (a failure that may be this delivery's own).
    Nothing,
}

impl DeliveryWorker {
    pub fn new(
        store: Store,
        channels: Arc<Channels>,
        config: DeliveryWorkerConfig,
        filter: ClaimFilter,
    ) -> Self {
        Self {
            store,
            channels,
            config,
            filter,
            owner: format!("worker-{}", uuid::Uuid::new_v4().simple()),
            slow_attempts: SlowAttempts::default(),
            yields_to_ingest: false,
            unsettled: Mutex::default(),
            outages: Outages::default(),
        }
    }

    /// Shares `other`'s knowledge of failing receivers: either worker's attempt that goes
    /// through releases the retries both claim from.
    pub fn sharing_outages_with(mut self, other: &DeliveryWorker) -> Self {
        self.outages = other.outages.clone();
        self
    }

    /// Ingest first: each claim waits (at most `YIELD_AT_MOST`) until no ingest batch
    /// waits for the one writer (SQLite; nothing waits elsewhere). Under a load that
    /// keeps the writer busy, a claim and its settlement would take the writer from
    /// ingest at every step; the webhook backlog waits instead, and is sent when ingest
    /// eases. Only for loops that send no alert: an alert's deliveries never wait.
    pub fn yielding_to_ingest(mut self) -> Self {
        self.yields_to_ingest = self.filter == ClaimFilter::All;
        self
    }

    /// Claims the deliveries due now (at most a batch), attempts them concurrently and
    /// settles together those that end within `straggler_after`; the others are settled
    /// in the background as each ends.
    pub async fn step(&self) -> anyhow::Result<StepOutcome> {
        if self.yields_to_ingest {
            self.store.writer_lull(YIELD_AT_MOST).await;
        }
        // Before the claim: the lease it takes ends no earlier than this plus the lease.
        let give_up_at =
            tokio::time::Instant::now() + self.config.lease.min(MAX_ATTEMPT).mul_f64(LEASE_USE);
        let claimed = match self.claim().await? {
            Claim::Deliveries(claimed) => claimed,
            Claim::HeldBack => return Ok(StepOutcome::Worked(0)),
            Claim::Nothing => return Ok(StepOutcome::Idle),
        };
        let count = claimed.len();
        let mut attempts = self.start_attempts(claimed, give_up_at).await?;
        let ended = attempts.ending_within(self.config.straggler_after).await;
        let recovered = self.outages.hear(&ended);
        self.lock_unsettled()
            .extend(ended.into_iter().map(|a| (a.id, a.settlement)));
        release(&self.store, recovered).await;
        if !attempts.running.is_empty() {
            self.settle_in_background(attempts);
        }
        Ok(StepOutcome::Worked(count))
    }

    /// Settles the previous step's outcomes and claims the deliveries due now, past the
    /// busy URLs'. When that finds less than a batch, the busy URLs' deliveries may fill
    /// the head of the queue: they are held back, so the claims reach those behind them.
    async fn claim(&self) -> anyhow::Result<Claim> {
        let busy_urls = self
            .slow_attempts
            .at_least(self.config.slow_attempts_per_url);
        let settlements = std::mem::take(&mut *self.lock_unsettled());
        let request = ClaimRequest {
            owner: &self.owner,
            now: now(),
            lease: self.config.lease,
            limit: self.config.batch,
            filter: self.filter,
            busy_urls: &busy_urls,
        };
        let claimed = match self.store.settle_then_claim(&settlements, &request).await {
            Ok((ours, claimed)) => {
                warn_of_lost_leases(&settlements, &ours);
                claimed
            }
            Err(e) => {
                // Settled at the next step (the leases hold meanwhile).
                self.lock_unsettled().extend(settlements);
                return Err(e.into());
            }
        };
        if !busy_urls.is_empty() && claimed.len() < self.config.batch as usize {
            let held = self.hold_back(&busy_urls).await?;
            if claimed.is_empty() {
                if held {
                    return Ok(Claim::HeldBack);
                }
                // Claiming again at every ingest commit would read the same window over
                // and over for nothing.
                tokio::time::sleep(BUSY_BACKOFF).await;
            }
        }
        Ok(if claimed.is_empty() {
            Claim::Nothing
        } else {
            Claim::Deliveries(claimed)
        })
    }

    /// Starts an attempt of each claimed delivery, with its webhook's authentication.
    async fn start_attempts(
        &self,
        claimed: Vec<ClaimedDelivery>,
        give_up_at: tokio::time::Instant,
    ) -> anyhow::Result<Attempts> {
        let auths = self.webhook_auths(&claimed).await?;
        let mut urls = HashMap::new();
        let running = claimed
            .into_iter()
            .map(|d| {
                let auth = auths
                    .get(&(d.tenant_code.clone(), d.target.clone()))
                    .cloned()
                    .flatten();
                if let (true, Some(url)) = (d.channel == Channel::Webhook, &d.target) {
                    urls.insert(d.id, url.clone());
                }
                attempt(
                    self.store.clone(),
                    self.channels.clone(),
                    self.config.retry,
                    d,
                    auth,
                    give_up_at,
                )
                .boxed()
            })
            .collect();
        Ok(Attempts { running, urls })
    }

    /// Settles the attempts still running as each ends. They are still under their lease
    /// (longer than any attempt's timeout): nobody else takes them, and the loop goes on
    /// to the deliveries behind them. Only these slow attempts count against their URL's
    /// limit: a receiver that answers in time is never held to it.
    fn settle_in_background(&self, attempts: Attempts) {
        let Attempts { mut running, urls } = attempts;
        tracing::info!(
            deliveries = running.len(),
            "attempts still running: settled as each ends"
        );
        let mut slow: HashMap<DeliveryId, UrlSlot> = urls
            .into_iter()
            .map(|(id, url)| (id, self.slow_attempts.enter(url)))
            .collect();
        let (store, owner) = (self.store.clone(), self.owner.clone());
        let outages = self.outages.clone();
        tokio::spawn(async move {
            while let Some(attempted) = running.next().await {
                slow.remove(&attempted.id);
                let recovered = outages.hear(std::slice::from_ref(&attempted));
                settle(&store, &owner, vec![(attempted.id, attempted.settlement)]).await;
                release(&store, recovered).await;
            }
        });
    }

    /// Holds back the busy URLs' deliveries at the head of the queue for as long as the
    /// URLs have been slow (at least `HOLD_AT_LEAST`, at most `HOLD_AT_MOST`: a receiver
    /// hanging for long is looked at less and less often, so its backlog is rewritten
    /// about as fast as it grows). Only the general loops: what the alerting loop claims
    /// is never held. Returns whether any delivery was held.
    async fn hold_back(&self, busy_urls: &[String]) -> anyhow::Result<bool> {
        if self.filter != ClaimFilter::All {
            return Ok(false);
        }
        let hold = self
            .slow_attempts
            .slow_for(busy_urls)
            .clamp(HOLD_AT_LEAST, HOLD_AT_MOST);
        let at = now();
        let until = at
            .checked_add(jiff::SignedDuration::try_from(hold)?)
            .unwrap_or(at);
        let held = self.store.hold_back_busy_urls(busy_urls, at, until).await?;
        for (tenant_code, url) in &held {
            self.outages
                .held_back(Receiver::of(Channel::Webhook, tenant_code, Some(url)));
        }
        if !held.is_empty() {
            tracing::info!(
                deliveries = held.len(),
                hold_seconds = hold.as_secs(),
                "held back deliveries to busy receivers"
            );
        }
        Ok(!held.is_empty())
    }

    /// Records the outcomes no step has settled yet: for when the loops have stopped.
    pub async fn settle_unsettled(&self) {
        let settlements = std::mem::take(&mut *self.lock_unsettled());
        settle(&self.store, &self.owner, settlements).await;
    }

    fn lock_unsettled(&self) -> std::sync::MutexGuard<'_, Vec<(DeliveryId, Settlement)>> {
        // A panic while holding it leaves the outcomes usable.
        self.unsettled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The authentication of each webhook delivery's URL, from its tenant's settings as
    /// they are now (a changed secret applies to retries too).
    async fn webhook_auths(
        &self,
        claimed: &[ClaimedDelivery],
    ) -> anyhow::Result<HashMap<(TenantCode, Option<String>), Option<WebhookAuth>>> {
        let mut settings = HashMap::new();
        let mut auths = HashMap::new();
        for d in claimed.iter().filter(|d| d.channel == Channel::Webhook) {
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
}

/// Records attempts' outcomes (one transaction). If that fails, the leases run out and
/// the deliveries are attempted again: at least once.
async fn settle(store: &Store, owner: &str, settlements: Vec<(DeliveryId, Settlement)>) {
    if settlements.is_empty() {
        return;
    }
    match store.settle_deliveries(owner, &settlements).await {
        Ok(ours) => warn_of_lost_leases(&settlements, &ours),
        Err(e) => {
            tracing::error!(deliveries = settlements.len(), error = %e, "could not settle deliveries")
        }
    }
}

/// Brings forward the waiting retries of receivers that answer again. A failure here
/// only delays them: each is still retried at its own time.
async fn release(store: &Store, recovered: Vec<Receiver>) {
    for receiver in recovered {
        match store.release_waiting_retries(&receiver, now()).await {
            Ok(0) => {}
            Ok(released) => {
                metrics::counter!("safetrack_delivery_retries_released_total",
                    "channel" => receiver.channel.as_str())
                .increment(released);
                // The channel, never the URL (it may carry a token).
                tracing::info!(
                    channel = %receiver.channel,
                    released,
                    "receiver answers again: its waiting retries are due now"
                );
            }
            Err(e) => tracing::error!(
                channel = %receiver.channel,
                error = %e,
                "could not bring forward a recovered receiver's retries"
            ),
        }
    }
}

/// Settling answers, for each outcome, whether the lease was still ours.
fn warn_of_lost_leases(settlements: &[(DeliveryId, Settlement)], ours: &[bool]) {
    for ((id, _), ours) in settlements.iter().zip(ours) {
        if !ours {
            tracing::warn!(
                delivery = %id,
                "lease lost before settling: another worker has taken the delivery over"
            );
        }
    }
}

/// A `Garmin` delivery's MT message follows its outcome: `Sent` once Garmin took it,
/// `Failed` once it failed for good; a retry leaves it `Queued`.
async fn follow_mt(store: &Store, d: &ClaimedDelivery, settlement: &Settlement) {
    let status = match settlement {
        Settlement::Sent { .. } => MtStatus::Sent,
        Settlement::Failed { .. } | Settlement::Expired { .. } => MtStatus::Failed,
        Settlement::Retry { .. } | Settlement::NotConfigured => return,
    };
    let Ok(mt) = serde_json::from_str::<GarminMt>(&d.body) else {
        return;
    };
    if let Err(e) = store
        .follow_mt_delivery(&d.tenant_code, &mt.device_id, mt.mt_message_id, status)
        .await
    {
        tracing::warn!(delivery = %d.id, mt_message = %mt.mt_message_id, error = %e,
            "the MT message's status could not follow its delivery");
    }
}

/// Attempts one delivery and decides its settlement (recorded by the caller). Owns what
/// it needs: an attempt may outlive the step that started it.
async fn attempt(
    store: Store,
    channels: Arc<Channels>,
    retry: RetryPolicy,
    d: ClaimedDelivery,
    auth: Option<WebhookAuth>,
    give_up_at: tokio::time::Instant,
) -> Attempted {
    let started = Instant::now();
    let sending = async {
        if d.channel == Channel::Push {
            return push::send(&store, &channels, &d).await;
        }
        channels
            .attempt(Attempt {
                channel: d.channel,
                target: d.target.as_deref(),
                subject: d.subject.as_deref(),
                body: &d.body,
                event_id: d.event_id.as_deref(),
                webhook_auth: auth.as_ref(),
            })
            .await
    };
    // Never still sending when the lease ends: another worker may take the delivery
    // over then, and the two must not send it at the same time.
    let outcome = match tokio::time::timeout_at(give_up_at, sending).await {
        Ok(outcome) => outcome,
        Err(_) => AttemptOutcome::Retryable {
            error: "abandoned: no answer before the claim's lease ran out".into(),
            retry_after: None,
        },
    };
    let heard = match &outcome {
        AttemptOutcome::Sent { .. } => Heard::Answered,
        AttemptOutcome::Unreachable { .. } => Heard::Unreachable,
        _ => Heard::Nothing,
    };
    let jitter = rand::thread_rng().gen_range(-1.0..=1.0);
    let settlement = retry.settle(outcome, d.attempt, d.queued_at, now(), jitter);
    if d.channel == Channel::Garmin {
        follow_mt(&store, &d, &settlement).await;
    }
    let took = started.elapsed();
    let label = settlement_label(&settlement);
    metrics::counter!("safetrack_delivery_attempts_total",
        "channel" => d.channel.as_str(), "outcome" => label)
    .increment(1);
    if let Settlement::Sent { at, .. } = &settlement {
        let latency = at.duration_since(d.created_at).as_secs_f64().max(0.0);
        metrics::histogram!("safetrack_delivery_latency_seconds", "channel" => d.channel.as_str())
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
        delivery = %d.id,
        channel = %d.channel,
        attempt = d.attempt,
        outcome = label,
        latency_ms = took.as_millis() as u64,
        error,
        "delivery attempt"
    );
    Attempted {
        id: d.id,
        settlement,
        receiver: Receiver::of(d.channel, &d.tenant_code, d.target.as_deref()),
        heard,
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
