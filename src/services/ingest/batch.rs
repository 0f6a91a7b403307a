//! One device's batch inside a transaction (`apply_batch`, which also records what the
//! live stream shows of it), and its answer once it is committed (`finish_batch`).

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;

use super::monitoring::PersonActs;
use super::unit::{Changes, Occurrence, UnitOfWork, write_deliveries};
use super::{Pipeline, ProcessedMessage, Triggered};
use crate::domain::ids::{DeviceId, MoMessageId, TenantCode};
use crate::domain::mo_message::{GeofenceRef, MoMessage, StorableMessage};
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;
use crate::domain::webhook::{Category, WebhookSettings};
use crate::domain::webhook_event::WebhookEvent;
use crate::services::rules::TenantRules;
use crate::store::{
    IngestContext, Inserted, NewMessage, StoreError, StoreResult, StreamRecord, WriteTx,
};

/// A batch applied inside a transaction, waiting for its commit.
pub(super) struct AppliedBatch {
    node: TenantNode,
    device_id: DeviceId,
    batch: Vec<StorableMessage>,
    placement: Vec<Result<usize, Duplicate>>,
    ids: Vec<(MoMessageId, String)>,
    received: Timestamp,
    inside: Vec<Option<Vec<GeofenceRef>>>,
    late: Vec<bool>,
    triggered: Vec<Vec<Triggered>>,
}

impl AppliedBatch {
    /// The batch as submitted, to apply again in another transaction.
    pub(super) fn into_submitted(self) -> (TenantNode, DeviceId, Vec<StorableMessage>) {
        (self.node, self.device_id, self.batch)
    }

    /// Message `i` (its `record` as posted) as answered, and whether it repeats another:
    /// its id and ETag, or the original of a retry (`originals`, read by id).
    fn answer(
        &self,
        i: usize,
        record: MoMessage,
        originals: &HashMap<MoMessageId, MoMessage>,
    ) -> Option<(MoMessage, bool)> {
        let stored_now = |slot: usize| (self.ids[slot].0, Some(self.ids[slot].1.clone()));
        let ((id, etag), duplicate) = match self.placement[i] {
            Ok(slot) => (stored_now(slot), false),
            Err(Duplicate::Stored(id)) => ((id, None), true),
            Err(Duplicate::InBatch(first)) => {
                (stored_now(*self.placement[first].as_ref().ok()?), true)
            }
        };
        let retry = matches!(self.placement[i], Err(Duplicate::Stored(_)));
        // A retry of a message stored by an earlier request: answer with that one.
        let mut record = if retry {
            originals.get(&id).cloned().unwrap_or(record)
        } else {
            record
        };
        record.message_id = Some(id);
        if etag.is_some() {
            record.etag = etag;
        }
        record.device_id = Some(self.device_id.clone());
        if !retry {
            record.received_at_server = Some(self.received);
            record.containing_geofences = self.inside[i].clone().unwrap_or_default();
        }
        Some((record, duplicate))
    }

    /// The messages stored now as the stream shows them (as answered), in batch order.
    fn stored_records(&self) -> Vec<StreamRecord> {
        let none = HashMap::new();
        (0..self.batch.len())
            .filter(|i| self.placement[*i].is_ok())
            .filter_map(|i| self.answer(i, self.batch[i].record.clone(), &none))
            .map(|(record, _)| StreamRecord::MoMessage(Arc::new(record)))
            .collect()
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
    Stored(MoMessageId),
    /// The same key earlier in this batch: that message's index.
    InBatch(usize),
}

/// A batch and what was worked out for each message before the insert.
struct Prepared<'a> {
    batch: &'a [StorableMessage],
    /// Each message's time: when it was sent, else when the batch arrived.
    times: Vec<Timestamp>,
    /// The geofences containing each message's position (None: it has none).
    inside: Vec<Option<Vec<GeofenceRef>>>,
    received: Timestamp,
}

/// Where each message of a batch went.
struct Placed {
    /// For each message: Ok(its slot in `ids`) or Err(which one it repeats).
    placement: Vec<Result<usize, Duplicate>>,
    /// The messages stored now: id and ETag.
    ids: Vec<(MoMessageId, String)>,
}

/// Settles repeats within the batch (same `SequenceNumber` and `SentFromDevice`): for
/// each message, Ok(its index in the insert list) or Err(the earlier one it repeats);
/// and the insert list. Retries of messages stored by earlier requests are settled by
/// the insert itself (`insert_new_messages`).
fn place_in_batch<'a>(
    prepared: &Prepared<'a>,
) -> (Vec<Result<usize, Duplicate>>, Vec<NewMessage<'a>>) {
    let mut first_in_batch: HashMap<(i64, i64), usize> = HashMap::new();
    let mut placement = Vec::with_capacity(prepared.batch.len());
    let mut inserts = Vec::new();
    for (i, m) in prepared.batch.iter().enumerate() {
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
            geofences: prepared.inside[i]
                .as_ref()
                .filter(|g| !g.is_empty())
                .and_then(|g| serde_json::to_string(g).ok()),
            received_at: prepared.received,
            message_time: prepared.times[i],
        });
    }
    (placement, inserts)
}

/// Inserts the batch's new messages; returns where each message went.
async fn store_messages(
    tx: &mut WriteTx,
    tenant_code: &TenantCode,
    device_id: &DeviceId,
    prepared: &Prepared<'_>,
) -> StoreResult<Placed> {
    let (placement, inserts) = place_in_batch(prepared);
    let outcomes = if inserts.is_empty() {
        Vec::new()
    } else {
        tx.insert_new_messages(tenant_code, device_id, &inserts)
            .await?
    };
    Ok(renumber(placement, outcomes))
}

/// The placement renumbered after the insert: slots index the messages stored now; a
/// retry of a stored message (and any repeat of it in this batch) points at the original.
fn renumber(mut placement: Vec<Result<usize, Duplicate>>, outcomes: Vec<Inserted>) -> Placed {
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
    Placed { placement, ids }
}

/// The `MoMessage` webhook events of the messages stored now, if the tenant's webhooks
/// want them (rendered from the stored message when the delivery is read). Returns how
/// many deliveries were queued.
async fn emit_message_events(
    tx: &mut WriteTx,
    node: &TenantNode,
    device_id: &DeviceId,
    webhooks: Option<&WebhookSettings>,
    placed: &Placed,
    received: Timestamp,
) -> StoreResult<usize> {
    let Some(webhooks) = webhooks
        .filter(|w| !placed.ids.is_empty() && w.urls.iter().any(|u| u.wants(Category::MoMessage)))
    else {
        return Ok(0);
    };
    let events: Vec<WebhookEvent> = placed
        .placement
        .iter()
        .filter_map(|p| p.as_ref().ok())
        .map(|slot| WebhookEvent::for_stored_message(received, placed.ids[*slot].0, device_id))
        .collect();
    tx.emit_events_with(webhooks, &node.code, Category::MoMessage, &events)
        .await
}

/// The messages stored now (not repeats): id, message, its time.
fn stored_in_order<'a>(
    prepared: &Prepared<'a>,
    placed: &Placed,
) -> Vec<(MoMessageId, &'a MoMessage, Timestamp)> {
    let batch = prepared.batch;
    (0..batch.len())
        .filter_map(|i| {
            let slot = *placed.placement[i].as_ref().ok()?;
            Some((placed.ids[slot].0, &batch[i].record, prepared.times[i]))
        })
        .collect()
}

impl Pipeline {
    /// Stores a validated batch from `device_id` of tenant `node` and processes it inside
    /// `tx` (not committed here). `NotFound` when the device is not the tenant's.
    pub(super) async fn apply_batch(
        &self,
        tx: &mut WriteTx,
        node: &TenantNode,
        device_id: &DeviceId,
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
        device_id: &DeviceId,
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
        let prepared = Prepared {
            times: batch
                .iter()
                .map(|m| m.record.sent_from_device.unwrap_or(received))
                .collect(),
            inside: match containment.filter(|c| c.rules_version == rules_version) {
                Some(worked_out) => worked_out.inside,
                None => containing(&rules, &batch),
            },
            batch: &batch,
            received,
        };
        let state_before = state.clone();
        let placed = store_messages(tx, &node.code, device_id, &prepared).await?;
        let emitted =
            emit_message_events(tx, node, device_id, webhooks.as_ref(), &placed, received).await?;
        let mut changes = Changes {
            queued_deliveries: emitted > 0,
            ..Changes::default()
        };
        let mut unit = UnitOfWork {
            tx,
            node,
            webhooks: webhooks.as_ref(),
            device_id,
            device: &mut device,
            state: &mut state,
            changes: &mut changes,
        };
        let (late, triggered) = self
            .evaluate_batch(&mut unit, &rules, &prepared, &placed)
            .await?;
        write_deliveries(tx, &mut changes).await?;
        let stored = stored_in_order(&prepared, &placed);
        let acts = PersonActs {
            node,
            device_id,
            device: &device,
            state: &mut state,
        };
        self.apply_person_acts(tx, acts, &stored, received).await?;
        changes.device_changed |= state != state_before;
        if state != state_before {
            tx.save_state(&node.code, device_id, &state).await?;
        }
        let Prepared { inside, .. } = prepared;
        let applied = AppliedBatch {
            node: node.clone(),
            device_id: device_id.clone(),
            batch,
            placement: placed.placement,
            ids: placed.ids,
            received,
            inside,
            late,
            triggered,
        };
        let shown = changes.device_changed.then(|| device.with_state(&state));
        let messages = applied.stored_records();
        super::record_outbox(tx, node, device_id, messages, changes, shown);
        Ok(applied)
    }

    /// Evaluates the stored messages in message-time order, so the state moves forward
    /// through the batch. Returns, per message, whether it was late and what it triggered.
    async fn evaluate_batch(
        &self,
        unit: &mut UnitOfWork<'_>,
        rules: &TenantRules,
        prepared: &Prepared<'_>,
        placed: &Placed,
    ) -> StoreResult<(Vec<bool>, Vec<Vec<Triggered>>)> {
        let count = prepared.batch.len();
        let times = &prepared.times;
        let mut order: Vec<usize> = (0..count)
            .filter(|i| placed.placement[*i].is_ok())
            .collect();
        order.sort_by_key(|i| (times[*i], *i));
        let mut late = vec![false; count];
        let mut triggered: Vec<Vec<Triggered>> = vec![Vec::new(); count];
        for i in order {
            let Ok(slot) = placed.placement[i] else {
                continue;
            };
            let id = placed.ids[slot].0;
            let message = &prepared.batch[i].record;
            let inside = prepared.inside[i].clone();
            let mut observation = unit.state.observe(message, id.get(), times[i], inside);
            if observation.late && message.emergency_state.is_some() {
                let (code, device) = (&unit.node.code, unit.device_id.as_str());
                let newer = unit.tx.newer_emergency_word(code, device, times[i]).await?;
                unit.state
                    .late_emergency_word(message, newer, &mut observation);
            }
            late[i] = observation.late;
            let occurrence = Occurrence {
                message: Some((id, message)),
                time: times[i],
            };
            triggered[i] = self
                .match_notifications(unit, rules, observation, occurrence)
                .await?;
        }
        Ok((late, triggered))
    }

    /// After the batch's transaction committed: the answer (the stream was told by the
    /// commit itself).
    pub(super) async fn finish_batch(
        &self,
        mut applied: AppliedBatch,
    ) -> StoreResult<Vec<ProcessedMessage>> {
        // Retries of messages stored by earlier requests are answered with those
        // originals, read in one query (a gateway may resend a whole batch).
        let resent: Vec<MoMessageId> = applied
            .placement
            .iter()
            .filter_map(|p| match p {
                Err(Duplicate::Stored(id)) => Some(*id),
                _ => None,
            })
            .collect();
        let originals = if resent.is_empty() {
            HashMap::new()
        } else {
            let (code, device_id) = (&applied.node.code, applied.device_id.as_str());
            self.store
                .get_messages(code, Some(device_id), &resent)
                .await?
        };
        let batch = std::mem::take(&mut applied.batch);
        let mut processed = Vec::with_capacity(batch.len());
        for (i, m) in batch.into_iter().enumerate() {
            let Some((record, duplicate)) = applied.answer(i, m.record, &originals) else {
                continue;
            };
            processed.push(ProcessedMessage {
                message: record,
                late: applied.late[i],
                duplicate,
                notifications: std::mem::take(&mut applied.triggered[i]),
            });
        }
        Ok(processed)
    }
}
