//! Ingest and the events engine: a device's batch of MO messages is stored, its device
//! state moved, every applicable notification evaluated, and each match's alert and
//! deliveries written — all in one transaction, committed before the caller answers.
//! The scheduler's missed check-ins go through the same matching (`missed_check_in.rs`).
//!
//! - `batch.rs` — one batch inside a transaction, and its answer after the commit;
//! - `matching.rs` — notifications evaluated, and each match's facts looked up and its
//!   effects planned (`domain::match_effects`);
//! - `effects.rs` — a match's effects applied in the transaction;
//! - `unit.rs` — what a unit of work (a batch, a missed check-in) shares with both, and
//!   its deliveries written at its end;
//! - `missed_check_in.rs` — the scheduler's unit of work;
//! - `group.rs` — on SQLite, batches of concurrent requests share one transaction (group
//!   commit): one fsync for several acknowledgements, each still sent after its commit;
//!   the API's monitoring check-ins (`Pipeline::check_in`) are jobs of it too.

mod batch;
mod effects;
mod group;
mod matching;
mod missed_check_in;
mod monitoring;
mod session_timers;
mod unit;

use std::sync::Arc;

use jiff::SignedDuration;
use jiff::tz::TimeZone;

use super::rules::RulesCache;
use super::stream::EventHub;
use crate::domain::device::Device;
use crate::domain::ids::{AlertId, DeviceId, NotificationId, TenantCode};
use crate::domain::mo_message::{MoMessage, StorableMessage};
use crate::domain::tenant::TenantNode;
use crate::domain::time::resolve_time_zone;
use crate::store::{
    ApiCheckIn, Store, StoreResult, StreamAnnouncement, StreamRecord, Wake, WriteTx,
};
use unit::Changes;

/// Which delivery channels are configured (their deliveries start `Pending`; the others
/// `NotConfigured`), and when unacknowledged alerts escalate.
#[derive(Debug, Clone, Copy)]
pub struct PipelineConfig {
    pub email: bool,
    pub sms: bool,
    pub voice: bool,
    /// An `Open` Warning or High alert escalates this long after it was raised, and
    /// again every as long (None: never).
    pub escalation_after: Option<SignedDuration>,
    /// Escalation rounds in all.
    pub escalation_rounds: i64,
    /// How long an escalation policy step's minute lasts: a minute, except in tests,
    /// which set it (in-process only; no flag) so a policy's steps fire within seconds.
    pub escalation_minute: SignedDuration,
    /// How long a monitoring session's minute lasts (its interval, grace, reminder,
    /// duration; and a device's `SilentAfterMinutes`): likewise a minute, except in tests.
    pub monitoring_minute: SignedDuration,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            email: false,
            sms: false,
            voice: false,
            escalation_after: Some(SignedDuration::from_secs(300)),
            escalation_rounds: 3,
            escalation_minute: SignedDuration::from_mins(1),
            monitoring_minute: SignedDuration::from_mins(1),
        }
    }
}

/// A notification a message triggered.
#[derive(Debug, Clone)]
pub struct Triggered {
    pub notification_id: NotificationId,
    pub notification_name: String,
    /// The alert raised or joined (`RaiseAlert`).
    pub alert_id: Option<AlertId>,
}

/// One posted message as processed: the message as stored (or the original of a retry)
/// and what it triggered (HTTP answers it to `?process=true`).
#[derive(Debug, Clone)]
pub struct ProcessedMessage {
    pub message: MoMessage,
    /// Older than the device's state when it arrived: evaluated, but it moved nothing.
    pub late: bool,
    /// A retry of a stored message (same `SequenceNumber` and `SentFromDevice`): the
    /// original is returned and nothing was triggered again.
    pub duplicate: bool,
    pub notifications: Vec<Triggered>,
}

/// The message pipeline's entry points (shared by HTTP handlers and the scheduler).
pub struct Pipeline {
    store: Store,
    rules: RulesCache,
    /// The hub this process's streams read (the relay feeds it; the pipeline only hands
    /// it to HTTP).
    hub: Arc<EventHub>,
    config: PipelineConfig,
    /// Where writes take turns on one writer: the group commit batches go through.
    writer: Option<group::GroupWriter>,
}

impl Pipeline {
    /// The pipeline; where writes take turns it starts the group-commit writer (within a
    /// tokio runtime).
    pub fn new(store: Store, hub: Arc<EventHub>, config: PipelineConfig) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            writer: store
                .writes_take_turns()
                .then(|| group::GroupWriter::start(me.clone())),
            store,
            rules: RulesCache::default(),
            hub,
            config,
        })
    }

    pub fn hub(&self) -> &Arc<EventHub> {
        &self.hub
    }

    /// The tenant, inside ingest's transaction: from the read cache, or read through the
    /// transaction (never a second pool connection: see `RulesCache::get_at`).
    async fn tenant_in(
        &self,
        tx: &mut WriteTx,
        tenant_code: &TenantCode,
    ) -> StoreResult<Option<crate::domain::tenant::Tenant>> {
        match self.store.cached_tenant(tenant_code) {
            Some(tenant) => Ok(Some(tenant)),
            None => tx.tenant(tenant_code).await,
        }
    }

    /// The tenant's time zone, inside ingest's transaction (`tenant_in`).
    async fn tenant_zone(
        &self,
        tx: &mut WriteTx,
        tenant_code: &TenantCode,
    ) -> StoreResult<TimeZone> {
        let tenant = self.tenant_in(tx, tenant_code).await?;
        Ok(tenant
            .and_then(|t| t.time_zone_id)
            .as_deref()
            .and_then(resolve_time_zone)
            .unwrap_or(TimeZone::UTC))
    }

    /// Stores a validated batch from `device_id` of tenant `node` and processes it; the
    /// answer comes once it is committed. `NotFound` when the device is not the tenant's.
    pub async fn ingest(
        &self,
        node: &TenantNode,
        device_id: DeviceId,
        batch: Vec<StorableMessage>,
    ) -> StoreResult<Vec<ProcessedMessage>> {
        // Outside the transaction, while other batches hold the writer.
        let containment = self
            .rules
            .latest(node)
            .map(|(version, rules)| batch::Containment::of(version, &rules, &batch));
        if let Some(writer) = &self.writer {
            return writer
                .submit(self, node.clone(), device_id, batch, containment)
                .await;
        }
        let mut tx = self.store.begin().await?;
        let applied = self
            .apply_batch(&mut tx, node, &device_id, batch, containment)
            .await?;
        tx.commit().await?;
        self.finish_batch(applied).await
    }

    /// Records a check-in through the API on the device's current session (now,
    /// `ApiCheckIn`; docs/monitoring.md); the answer comes once it is committed. Where
    /// writes take turns it is a job of the group commit, applied beside other requests'
    /// batches in their transaction; elsewhere it commits alone. `NotFound` without a
    /// current session.
    pub async fn check_in(&self, check_in: ApiCheckIn) -> StoreResult<()> {
        if let Some(writer) = &self.writer {
            return writer.check_in(self, check_in).await;
        }
        self.store.check_in_monitoring_session(&check_in).await
    }
}

/// The end of a unit of work, in its transaction: its commit wakes the delivery loops
/// that have work, and announces its new messages (`messages`), then the alerts it
/// raised or joined, then the device (`device`, as the unit left it) when its state
/// changed.
fn record_outbox(
    tx: &mut WriteTx,
    node: &TenantNode,
    device_id: &DeviceId,
    mut records: Vec<StreamRecord>,
    changes: Changes,
    device: Option<Device>,
) {
    if changes.queued_deliveries {
        tx.wake(Wake::Deliveries);
    }
    if changes.alerting_queued {
        tx.wake(Wake::Alerting);
    }
    let alerts = changes.alerts.into_iter();
    records.extend(alerts.map(|a| StreamRecord::Alert(Arc::new(a))));
    records.extend(device.map(|d| StreamRecord::Device(Arc::new(d))));
    tx.announce(StreamAnnouncement::of(node, device_id, records));
}
