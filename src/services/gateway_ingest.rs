//! The one service behind every device gateway (README, "Devices that speak other protocols"): who the gateway's
//! credential is, which device a report names within its scope (the one device any of
//! its keys names; several are an ambiguity, refused: `domain::device_protocols::identity`), and
//! handing each device's reports to the ingest `Pipeline` — the same limits, dedupe,
//! events, alerts, deliveries, webhooks and stream as `POST …/momessages`, in batches of
//! at most `MAX_BATCH` messages, in order. The HTTP routes
//! (`http/gateways/`) and the DirectIP listener (`listeners/directip_listener.rs`) parse
//! with `domain::device_protocols` and call this; nothing here knows a protocol.

use std::sync::Arc;

use futures::StreamExt;

use super::ingest::{Pipeline, ProcessedMessage};
use crate::auth::{AuthError, Authenticator};
use crate::domain::access::Permission;
use crate::domain::device_protocols::{DeviceKey, DeviceRef, GatewayReport};
use crate::domain::mo_message::{
    BatchRejection, MAX_BATCH, MoMessage, StorableMessage, validated_batch,
};
use crate::domain::mt_message::MtType;
use crate::domain::validation::FieldError;
use crate::store::{GatewayDevice, Store, StoreError};

/// Device batches of one post ingested at once (a Garmin post names many devices; on
/// SQLite concurrent batches share a group commit).
const CONCURRENT_DEVICES: usize = 16;

/// Who a gateway's credential is: the subtree it serves and whether it may post MO
/// messages (`DeviceMessages`).
#[derive(Debug, Clone)]
pub struct GatewayCaller {
    /// Materialised path of the credential's tenant: devices are looked up below it.
    pub tenant_path: String,
    pub may_post: bool,
}

/// The credential check of every gateway, HTTP or TCP: an API token, checked by the
/// same `Authenticator::authenticate_token` as a `/V2` Bearer request (a revoked or
/// expired token is refused on its next use).
pub async fn authenticate(auth: &Authenticator, token: &str) -> Result<GatewayCaller, AuthError> {
    let principal = auth.authenticate_token(token).await?;
    Ok(GatewayCaller {
        may_post: principal.has(Permission::DeviceMessages),
        tenant_path: principal.tenant_path,
    })
}

/// Why a device's reports were not stored.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("no device `{0}` in the credential's scope")]
    UnknownDevice(String),
    #[error("`{id}` names more than one device in the credential's scope (as {keys})")]
    Ambiguous { id: String, keys: String },
    #[error("the report is not a valid MO message: {0:?}")]
    Invalid(Vec<FieldError>),
    #[error("the report is over the MO message limits: {0:?}")]
    TooLarge(Vec<FieldError>),
    #[error(transparent)]
    Store(StoreError),
}

/// One device's reports of a post, and what became of them.
#[derive(Debug)]
pub struct DeviceOutcome {
    /// The identifier the reports named the device by.
    pub id: String,
    /// Indexes of the reports (in the order given) that were this device's.
    pub reports: Vec<usize>,
    pub result: Result<Ingested, GatewayError>,
}

/// Reports stored (or recognised as already stored) for a device.
#[derive(Debug)]
pub struct Ingested {
    pub device: GatewayDevice,
    pub processed: Vec<ProcessedMessage>,
}

pub struct GatewayIngest {
    store: Store,
    pipeline: Arc<Pipeline>,
}

impl GatewayIngest {
    pub fn new(store: Store, pipeline: Arc<Pipeline>) -> Self {
        Self { store, pipeline }
    }

    /// The device `device` names within the subtree at `subtree_path`: every device any
    /// of its keys names is collected, and exactly one must be — several are an
    /// ambiguity (a `DeviceId` is unique per tenant only, and identifiers stored before
    /// `identity`'s rule may clash), never a guess.
    pub async fn find_device(
        &self,
        subtree_path: &str,
        device: &DeviceRef,
    ) -> Result<GatewayDevice, GatewayError> {
        let mut found = self
            .store
            .gateway_devices(subtree_path, device.keys, &device.id)
            .await
            .map_err(GatewayError::Store)?;
        match found.len() {
            0 => Err(GatewayError::UnknownDevice(device.id.clone())),
            1 => Ok(found.remove(0)),
            _ => Err(GatewayError::Ambiguous {
                id: device.id.clone(),
                keys: key_names(device.keys),
            }),
        }
    }

    /// Stores `reports` (grouped by device, in their order) for the caller: each device's
    /// batch in one ingest transaction, committed before this returns. Every device has
    /// its own outcome, so one unknown device does not hold back the others.
    pub async fn ingest(
        &self,
        caller: &GatewayCaller,
        reports: Vec<GatewayReport>,
    ) -> Vec<DeviceOutcome> {
        let mut groups: Vec<(DeviceRef, Vec<usize>, Vec<MoMessage>)> = Vec::new();
        for (index, report) in reports.into_iter().enumerate() {
            match groups
                .iter_mut()
                .find(|(device, ..)| *device == report.device)
            {
                Some((_, indexes, messages)) => {
                    indexes.push(index);
                    messages.push(report.message);
                }
                None => groups.push((report.device, vec![index], vec![report.message])),
            }
        }
        futures::stream::iter(groups)
            .map(|(device, indexes, messages)| async move {
                let result = self
                    .ingest_device(&caller.tenant_path, &device, messages)
                    .await;
                DeviceOutcome {
                    id: device.id,
                    reports: indexes,
                    result,
                }
            })
            .buffered(CONCURRENT_DEVICES)
            .collect()
            .await
    }

    /// One device's messages: all checked first (one that cannot be stored refuses them
    /// all, as for a post to `…/momessages`), then stored in batches of at most
    /// `MAX_BATCH`, in order, each committed before the next. A failure leaves the
    /// batches before it stored (a resend dedupes them).
    async fn ingest_device(
        &self,
        subtree_path: &str,
        device: &DeviceRef,
        messages: Vec<MoMessage>,
    ) -> Result<Ingested, GatewayError> {
        let batches = checked_batches(messages)?;
        let found = self.find_device(subtree_path, device).await?;
        let node = self
            .store
            .tenant_node(&found.tenant_code)
            .await
            .map_err(GatewayError::Store)?
            .ok_or_else(|| GatewayError::UnknownDevice(device.id.clone()))?;
        let mut processed = Vec::new();
        for batch in batches {
            let stored = self
                .pipeline
                .ingest(&node, found.device_id.clone(), batch)
                .await
                .map_err(|e| match e {
                    // Deleted between the lookup and the transaction.
                    StoreError::NotFound => GatewayError::UnknownDevice(device.id.clone()),
                    other => GatewayError::Store(other),
                })?;
            processed.extend(stored);
        }
        Ok(Ingested {
            device: found,
            processed,
        })
    }

    /// The oldest queued MT text for a device, marked `Sent`: what a gateway whose answer
    /// can carry text (OsmAnd) hands over.
    pub async fn take_text(&self, device: &GatewayDevice) -> Result<Option<String>, GatewayError> {
        let message = self
            .store
            .take_queued_mt(&device.tenant_code, &device.device_id, MtType::Text)
            .await
            .map_err(GatewayError::Store)?;
        Ok(message.and_then(|m| m.message))
    }
}

/// `messages` checked, in batches of at most `MAX_BATCH` (the MO limit a batch is held
/// to), in order.
fn checked_batches(messages: Vec<MoMessage>) -> Result<Vec<Vec<StorableMessage>>, GatewayError> {
    // Neither backend's text holds NUL (PostgreSQL refuses it): a clear 4xx instead.
    if let Some(field) = messages.iter().find_map(nul_field) {
        return Err(GatewayError::Invalid(vec![FieldError {
            field,
            message: "must not contain the NUL character (U+0000)".into(),
        }]));
    }
    let mut batches = Vec::with_capacity(messages.len().div_ceil(MAX_BATCH));
    let mut messages = messages.into_iter().peekable();
    while messages.peek().is_some() {
        let chunk: Vec<MoMessage> = messages.by_ref().take(MAX_BATCH).collect();
        let batch = validated_batch(chunk).map_err(|rejection| match rejection {
            BatchRejection::TooLarge(fields) => GatewayError::TooLarge(fields),
            BatchRejection::Invalid(errors) => GatewayError::Invalid(errors.0),
        })?;
        batches.push(batch);
    }
    Ok(batches)
}

/// `keys` as the device fields they are, for an ambiguity's text.
fn key_names(keys: &[DeviceKey]) -> String {
    let names: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    names.join(" or ")
}

/// The first field of `message` whose text holds NUL, as the API names it.
fn nul_field(message: &MoMessage) -> Option<String> {
    fn walk(value: &serde_json::Value, path: &str) -> Option<String> {
        match value {
            serde_json::Value::String(s) if s.contains('\0') => Some(path.to_string()),
            serde_json::Value::Object(map) => map.iter().find_map(|(key, value)| {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                if key.contains('\0') {
                    return Some(path);
                }
                walk(value, &path)
            }),
            _ => None,
        }
    }
    walk(&serde_json::to_value(message).ok()?, "")
}
