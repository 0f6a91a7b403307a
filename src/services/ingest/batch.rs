//! One device's batch inside a transaction (`apply_batch`), and what happens once it is
//! committed (`finish_batch`): the processed answer and the live stream.

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;

use super::matching::{Changes, Context, Occurrence};
use super::{Pipeline, ProcessedMessage, Triggered};
use crate::domain::device::Device;
use crate::domain::device_state::DeviceState;
use crate::domain::mo_message::{GeofenceRef, StorableMessage};
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;
use crate::domain::webhook::Category;
use crate::domain::webhook_event::WebhookEvent;
use crate::services::rules::TenantRules;
use crate::services::stream::Payload;
use crate::store::{
    IngestContext, Inserted, NewMessage, StoreError, StoreResult, StreamAnnouncement, WriteTx,
};

/// A batch applied inside a transaction, waiting for its commit.
pub(super) struct AppliedBatch {
    node: TenantNode,
    device_id: String,
    batch: Vec<StorableMessage>,
    placement: Vec<Result<usize, Duplicate>>,
    ids: Vec<(i64, String)>,
    received: Timestamp,
    inside: Vec<Option<Vec<GeofenceRef>>>,
    late: Vec<bool>,
    triggered: Vec<Vec<Triggered>>,
    device: Device,
    state: DeviceState,
    changes: Changes,
}

impl AppliedBatch {
    /// The batch as submitted, to apply again in another transaction.
    pub(super) fn into_submitted(self) -> (TenantNode, String, Vec<StorableMessage>) {
        (self.node, self.device_id, self.batch)
    }

    /// What the stream shows of this batch (see `announcement`).
    pub(super) fn announcement(&self) -> StreamAnnouncement {
        let stored = self
            .placement
            .iter()
            .filter_map(|p| p.as_ref().ok())
            .map(|slot| self.ids[*slot].0)
            .collect();
        super::announcement(&self.node, &self.device, &self.state, stored, &self.changes)
    }
}

/// The geofences containing each message's position, worked out before the writer's
/// turn with the tenant's rules as cached then (on SQLite that turn is the one writer's
/// time, the pipeline's bottleneck). Used inside the transaction only if the rules are
/// still at `rules_version`; otherwise worked out again there.
pub(super) struct Containment {
    rules_version: i64,
    inside: Vec<Option<Vec<GeofenceRef>>>,
}

impl Containment {
    pub(super) fn of(rules_version: i64, rules: &TenantRules, batch: &[StorableMessage]) -> Self {
        Self {
            rules_version,
            inside: containing(rules, batch),
        }
    }
}

fn containing(rules: &TenantRules, batch: &[StorableMessage]) -> Vec<Option<Vec<GeofenceRef>>> {
    batch
        .iter()
        .map(|m| {
            let (lat, lon) = m.record.position.as_ref()?.lat_lon()?;
            Some(rules.containing(lat, lon))
        })
        .collect()
}

/// A batch message that is not stored again.
#[derive(Debug, Clone, Copy)]
enum Duplicate {
    /// Stored by an earlier request: its id.
    Stored(i64),
    /// The same key earlier in this batch: that message's index.
    InBatch(usize),
}

impl Pipeline {
    /// Stores a validated batch from `device_id` of tenant `node` and processes it inside
    /// `tx` (not committed here). `NotFound` when the device is not the tenant's.
    pub(super) async fn apply_batch(
        &self,
        tx: &mut WriteTx,
        node: &TenantNode,
        device_id: &str,
        batch: Vec<StorableMessage>,
        containment: Option<Containment>,
    ) -> StoreResult<AppliedBatch> {
        // One statement: the device, its state (locked), the rules version, the webhooks.
        let context = tx
            .ingest_context(&node.code, device_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        self.apply_batch_in(tx, context, node, device_id, batch, containment)
            .await
    }

    /// `apply_batch` once the device's context is read (nothing is written before).
    pub(super) async fn apply_batch_in(
        &self,
        tx: &mut WriteTx,
        context: IngestContext,
        node: &TenantNode,
        device_id: &str,
        batch: Vec<StorableMessage>,
        containment: Option<Containment>,
    ) -> StoreResult<AppliedBatch> {
        let IngestContext {
            mut device,
            mut state,
            rules_version,
            webhooks,
        } = context;
        let rules = self.rules.get_at(tx, node, rules_version).await?;
        let received = now();
        let times: Vec<Timestamp> = batch
            .iter()
            .map(|m| m.record.sent_from_device.unwrap_or(received))
            .collect();
        let inside = match containment.filter(|c| c.rules_version == rules_version) {
            Some(worked_out) => worked_out.inside,
            None => containing(&rules, &batch),
        };
        let state_before = state.clone();

        // Repeats within the batch are settled here; retries of messages stored by
        // earlier requests by the insert itself (`insert_new_messages`).
        let mut first_in_batch: HashMap<(i64, i64), usize> = HashMap::new();
        // For each message: Ok(index into the insert list) or Err(which one it repeats).
        let mut placement: Vec<Result<usize, Duplicate>> = Vec::with_capacity(batch.len());
        let mut inserts = Vec::new();
        for (i, m) in batch.iter().enumerate() {
            let key = m
                .record
                .sequence_number
                .zip(m.record.sent_from_device)
                .map(|(seq, sent)| (seq, sent.as_microsecond()));
            if let Some(key) = key {
                if let Some(first) = first_in_batch.get(&key) {
                    placement.push(Err(Duplicate::InBatch(*first)));
                    continue;
                }
                first_in_batch.insert(key, i);
            }
            placement.push(Ok(inserts.len()));
            inserts.push(NewMessage {
                message: m,
                geofences: inside[i]
                    .as_ref()
                    .filter(|g| !g.is_empty())
                    .and_then(|g| serde_json::to_string(g).ok()),
                received_at: received,
                message_time: times[i],
            });
        }
        let outcomes = if inserts.is_empty() {
            Vec::new()
        } else {
            tx.insert_new_messages(&node.code, device_id, &inserts)
                .await?
        };
        // Renumbered: slots index the messages stored now; a retry of a stored message
        // (and any repeat of it in this batch) points at the original.
        let mut ids = Vec::with_capacity(outcomes.len());
        let mut slots = Vec::with_capacity(outcomes.len());
        for outcome in outcomes {
            slots.push(match outcome {
                Inserted::New { id, etag } => {
                    ids.push((id, etag));
                    Ok(ids.len() - 1)
                }
                Inserted::Stored(id) => Err(Duplicate::Stored(id)),
            });
        }
        for i in 0..placement.len() {
            placement[i] = match placement[i] {
                Ok(offered) => slots[offered],
                Err(Duplicate::InBatch(first)) => match placement[first] {
                    Err(Duplicate::Stored(id)) => Err(Duplicate::Stored(id)),
                    _ => Err(Duplicate::InBatch(first)),
                },
                stored => stored,
            };
        }
        let mut emitted = 0;
        if let Some(webhooks) = webhooks
            .as_ref()
            .filter(|w| !ids.is_empty() && w.urls.iter().any(|u| u.wants(Category::MoMessage)))
        {
            // Rendered from the stored message when the delivery is read.
            let events: Vec<WebhookEvent> = placement
                .iter()
                .filter_map(|p| p.as_ref().ok())
                .map(|slot| WebhookEvent::for_stored_message(received, ids[*slot].0, device_id))
                .collect();
            emitted = tx
                .emit_events_with(webhooks, &node.code, Category::MoMessage, &events)
                .await?;
        }

        // Evaluate in message-time order, so the state moves forward through the batch.
        let mut order: Vec<usize> = (0..batch.len()).filter(|i| placement[*i].is_ok()).collect();
        order.sort_by_key(|i| (times[*i], *i));
        let context = Context {
            node,
            webhooks: webhooks.as_ref(),
        };
        let mut changes = Changes {
            queued_deliveries: emitted > 0,
            ..Changes::default()
        };
        let mut late = vec![false; batch.len()];
        let mut triggered: Vec<Vec<Triggered>> = vec![Vec::new(); batch.len()];
        for i in order {
            let Ok(slot) = placement[i] else { continue };
            let id = ids[slot].0;
            let message = &batch[i].record;
            let observation = state.observe(message, id, times[i], inside[i].clone());
            late[i] = observation.late;
            triggered[i] = self
                .match_notifications(
                    tx,
                    &context,
                    &rules,
                    &mut device,
                    &mut state,
                    observation,
                    Occurrence {
                        message: Some((id, message)),
                        time: times[i],
                    },
                    &mut changes,
                )
                .await?;
        }
        super::matching::write_deliveries(tx, &mut changes).await?;
        changes.device_changed |= state != state_before;
        if state != state_before {
            tx.save_state(&node.code, device_id, &state).await?;
        }
        Ok(AppliedBatch {
            node: node.clone(),
            device_id: device_id.to_string(),
            batch,
            placement,
            ids,
            received,
            inside,
            late,
            triggered,
            device,
            state,
            changes,
        })
    }

    /// After the batch's transaction committed: the answer, and the stream told.
    /// (`AppliedBatch::announcement` tells it on PostgreSQL, before the commit.)
    pub(super) async fn finish_batch(
        &self,
        applied: AppliedBatch,
    ) -> StoreResult<Vec<ProcessedMessage>> {
        let AppliedBatch {
            node,
            device_id,
            batch,
            placement,
            ids,
            received,
            inside,
            late,
            mut triggered,
            device,
            state,
            changes,
        } = applied;
        let (node, device_id) = (&node, device_id.as_str());
        // Retries of messages stored by earlier requests are answered with those
        // originals, read in one query (a gateway may resend a whole batch).
        let resent: Vec<i64> = placement
            .iter()
            .filter_map(|p| match p {
                Err(Duplicate::Stored(id)) => Some(*id),
                _ => None,
            })
            .collect();
        let originals = if resent.is_empty() {
            HashMap::new()
        } else {
            self.store
                .get_messages(&node.code, Some(device_id), &resent)
                .await?
        };
        let mut processed = Vec::with_capacity(batch.len());
        let mut payloads = Vec::new();
        for (i, m) in batch.into_iter().enumerate() {
            let (id, etag, duplicate) = match placement[i] {
                Ok(slot) => (ids[slot].0, Some(ids[slot].1.clone()), false),
                Err(Duplicate::Stored(id)) => (id, None, true),
                Err(Duplicate::InBatch(first)) => match placement[first] {
                    Ok(slot) => (ids[slot].0, Some(ids[slot].1.clone()), true),
                    Err(_) => continue,
                },
            };
            let mut record = match placement[i] {
                // A retry of a message stored by an earlier request: answer with that one.
                Err(Duplicate::Stored(_)) => originals.get(&id).cloned().unwrap_or(m.record),
                _ => m.record,
            };
            record.message_id = Some(id.to_string());
            if etag.is_some() {
                record.etag = etag;
            }
            record.device_id = Some(device_id.to_string());
            if !matches!(placement[i], Err(Duplicate::Stored(_))) {
                record.received_at_server = Some(received);
                record.containing_geofences = inside[i].clone().unwrap_or_default();
            }
            if !duplicate && self.streams_locally() {
                payloads.push(Payload::MoMessage(Arc::new(record.clone())));
            }
            processed.push(ProcessedMessage {
                message: record,
                late: late[i],
                duplicate,
                notifications: std::mem::take(&mut triggered[i]),
            });
        }
        self.publish(node, &device, &state, changes, payloads);
        Ok(processed)
    }
}
