//! Ingest and the events engine: a device's batch of MO messages is stored, its device
//! state moved, every applicable notification evaluated, and each match's alert and
//! deliveries written — all in one transaction, committed before the caller answers.
//! The scheduler's missed check-ins go through the same matching (`run_missed_check_in`).
//!
//! - `batch.rs` — one batch inside a transaction, and its answer after the commit;
//! - `matching.rs` — notifications evaluated, and each match's facts looked up and its
//!   effects planned (`domain::match_effects`);
//! - `effects.rs` — a match's effects applied in the transaction;
//! - `group.rs` — on SQLite, batches of concurrent requests share one transaction (group
//!   commit): one fsync for several acknowledgements, each still sent after its commit.

mod batch;
mod effects;
mod group;
mod matching;

pub use group::IngestBacklog;

use std::sync::Arc;

use jiff::SignedDuration;
use jiff::tz::TimeZone;
use serde::Serialize;
use tokio::sync::Notify;
use utoipa::ToSchema;

use super::rules::RulesCache;
use super::stream::{EventHub, Payload};
use crate::domain::device::Device;
use crate::domain::device_state::DeviceState;
use crate::domain::ids::{AlertId, DeviceId, NotificationId, TenantCode};
use crate::domain::mo_message::{MoMessage, StorableMessage};
use crate::domain::tenant::TenantNode;
use crate::domain::time::resolve_time_zone;
use crate::store::{Backend, Store, StoreResult, StreamAnnouncement, WriteTx};
use matching::Changes;

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
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            email: false,
            sms: false,
            voice: false,
            escalation_after: Some(SignedDuration::from_secs(300)),
            escalation_rounds: 3,
        }
    }
}

/// A notification a message triggered.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct Triggered {
    #[schema(value_type = String)]
    pub notification_id: NotificationId,
    pub notification_name: String,
    /// The alert raised or joined (`RaiseAlert`).
    #[schema(value_type = Option<String>)]
    pub alert_id: Option<AlertId>,
}

/// One posted message as processed (the `?process=true` answer).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct ProcessedMessage {
    #[serde(flatten)]
    #[schema(value_type = crate::http::records::mo_message::MoMessageRecord)]
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
    hub: Arc<EventHub>,
    config: PipelineConfig,
    /// SQLite: the group-commit writer batches go through.
    writer: Option<group::GroupWriter>,
    /// Told after a commit that queued `Pending` deliveries, so this process's delivery worker
    /// sends them at once instead of at its next poll (other processes still poll).
    outbox: Arc<Notify>,
    /// Told after a commit in which a match queued `Pending` deliveries: wakes the
    /// alerting loop.
    alerting: Arc<Notify>,
}

impl Pipeline {
    /// The pipeline; on SQLite it starts the group-commit writer (within a tokio runtime).
    pub fn new(store: Store, hub: Arc<EventHub>, config: PipelineConfig) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            writer: (store.backend() == Backend::Sqlite)
                .then(|| group::GroupWriter::start(me.clone())),
            store,
            rules: RulesCache::default(),
            hub,
            config,
            outbox: Arc::new(Notify::new()),
            alerting: Arc::new(Notify::new()),
        })
    }

    /// SQLite: the batches waiting for the one writer, which writes that can wait let go
    /// first. PostgreSQL has no such queue (each request commits on its own).
    pub fn ingest_backlog(&self) -> Option<Arc<IngestBacklog>> {
        self.writer.as_ref().map(group::GroupWriter::backlog)
    }

    /// What the delivery worker waits on besides its poll interval.
    pub fn outbox_signal(&self) -> Arc<Notify> {
        self.outbox.clone()
    }

    /// What the alerting delivery loop waits on: a match queued `Pending` deliveries
    /// (e-mail, SMS, voice or its EventNotification webhooks).
    pub fn alerting_signal(&self) -> Arc<Notify> {
        self.alerting.clone()
    }

    pub fn hub(&self) -> &Arc<EventHub> {
        &self.hub
    }

    /// The tenant's time zone, inside ingest's transaction: from the read cache, or read
    /// through the transaction (never a second pool connection: see `RulesCache::get_at`).
    async fn tenant_zone(
        &self,
        tx: &mut WriteTx,
        tenant_code: &TenantCode,
    ) -> StoreResult<TimeZone> {
        let tenant = match self.store.cached_tenant(tenant_code) {
            Some(tenant) => Some(tenant),
            None => tx.tenant(tenant_code).await?,
        };
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
        tx.announce_stream(&applied.announcement()).await?;
        tx.commit().await?;
        self.finish_batch(applied).await
    }

    /// Whether this process publishes to its hub itself (SQLite, one process) or the
    /// hub hears every process's commits from the database (PostgreSQL: the writing
    /// transaction announces them with `WriteTx::announce_stream`).
    fn streams_locally(&self) -> bool {
        self.store.backend() == Backend::Sqlite
    }

    fn publish(
        &self,
        node: &TenantNode,
        device: &Device,
        state: &DeviceState,
        changes: Changes,
        mut payloads: Vec<Payload>,
    ) {
        if changes.queued_deliveries {
            self.outbox.notify_one();
        }
        if changes.alerting_queued {
            self.alerting.notify_one();
        }
        if !self.streams_locally() {
            return;
        }
        payloads.extend(
            changes
                .alerts
                .into_iter()
                .map(|a| Payload::Alert(Arc::new(a))),
        );
        if changes.device_changed {
            payloads.push(Payload::Device(Arc::new(device.clone().with_state(state))));
        }
        self.hub.publish(&node.path, payloads);
    }
}

/// What the stream shows of a unit of work: its new messages, then the alerts it raised
/// or joined, then the device if its state changed (the order `Pipeline::publish` uses),
/// as this unit of work left it.
fn announcement(
    node: &TenantNode,
    device_id: &DeviceId,
    device: &Device,
    state: &DeviceState,
    messages: Vec<i64>,
    changes: &Changes,
) -> StreamAnnouncement {
    StreamAnnouncement {
        tenant_code: node.code.clone(),
        tenant_path: node.path.clone(),
        device_id: device_id.to_string(),
        messages,
        alerts: changes.alerts.iter().map(|a| a.alert_id.get()).collect(),
        device: changes.device_changed,
        device_record: changes
            .device_changed
            .then(|| Arc::new(device.clone().with_state(state))),
    }
}
