//! One unit of work in its transaction — a device's batch, or a missed check-in — as
//! matching (`matching.rs`) and the effects it applies (`effects.rs`) share it: what they
//! read and change, and the deliveries its matches queued, written together at its end.

use jiff::Timestamp;

use crate::domain::alert::Alert;
use crate::domain::device::Device;
use crate::domain::device_state::DeviceState;
use crate::domain::ids::{DeviceId, MoMessageId};
use crate::domain::mo_message::MoMessage;
use crate::domain::tenant::TenantNode;
use crate::domain::webhook::WebhookSettings;
use crate::store::{NewDelivery, StoreResult, WriteTx};

/// What one unit of work (a batch, or a missed check-in) changed, to publish after commit.
#[derive(Default)]
pub(super) struct Changes {
    pub(super) alerts: Vec<Alert>,
    pub(super) device_changed: bool,
    /// `Pending` deliveries were queued: the delivery worker is woken after the commit.
    /// (Only for those: a match whose channels are not configured leaves work for nobody,
    /// and a claim for nothing takes the SQLite writer's turn from ingest.)
    pub(super) queued_deliveries: bool,
    /// A match queued `Pending` deliveries (people's channels or its EventNotification
    /// webhooks): the alerting loop is woken after the commit.
    pub(super) alerting_queued: bool,
    /// The matches' deliveries, written together once the unit's matching is done
    /// (`write_deliveries`).
    pub(super) deliveries: Vec<NewDelivery>,
}

/// One device's unit of work in its transaction: what matching reads and changes.
pub(super) struct UnitOfWork<'a> {
    pub(super) tx: &'a mut WriteTx,
    pub(super) node: &'a TenantNode,
    /// The tenant's webhook settings, read once per unit of work: every match emits an
    /// `EventNotification` event, and a query per match cost the writer a round trip.
    pub(super) webhooks: Option<&'a WebhookSettings>,
    /// The device's id (the unit found the device by it: no `Option` to read).
    pub(super) device_id: &'a DeviceId,
    pub(super) device: &'a mut Device,
    pub(super) state: &'a mut DeviceState,
    pub(super) changes: &'a mut Changes,
}

/// What happened: a stored message, or (for a missed check-in) nothing at a time.
pub(super) struct Occurrence<'a> {
    pub(super) message: Option<(MoMessageId, &'a MoMessage)>,
    pub(super) time: Timestamp,
}

/// Writes the deliveries the unit's matches queued, in one statement.
pub(super) async fn write_deliveries(tx: &mut WriteTx, changes: &mut Changes) -> StoreResult<()> {
    if changes.deliveries.is_empty() {
        return Ok(());
    }
    if changes
        .deliveries
        .iter()
        .any(|d| d.status == crate::domain::delivery::DeliveryStatus::Pending)
    {
        changes.queued_deliveries = true;
        changes.alerting_queued = true;
    }
    tx.insert_deliveries(&std::mem::take(&mut changes.deliveries))
        .await
}
