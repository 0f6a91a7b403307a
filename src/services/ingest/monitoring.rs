//! Device messages and the device's monitoring session (docs/monitoring.md): a stored
//! message that confirms a check-in (`message_confirmation`, the closed set) is the
//! session's check-in, in the batch's transaction.

use jiff::Timestamp;

use crate::domain::ids::{DeviceId, MoMessageId};
use crate::domain::monitoring::{Confirmation, message_confirmation};
use crate::domain::tenant::TenantNode;
use crate::store::{StoreResult, WriteTx};

/// Records on the device's current session each confirming message of those stored now,
/// oldest first (`stored`: id, message, the message's time).
///
/// The session clock counts from when the person acted, so a check-in's time is the
/// message's `SentFromDevice` (the batch's arrival when it has none) — but never later
/// than the arrival: a device whose clock runs ahead would otherwise push its next due
/// time into the future and hide a missed check-in.
pub(super) async fn confirm_session(
    tx: &mut WriteTx,
    node: &TenantNode,
    device_id: &DeviceId,
    stored: &[(
        MoMessageId,
        &crate::domain::mo_message::MoMessage,
        Timestamp,
    )],
    received: Timestamp,
) -> StoreResult<()> {
    let mut confirming: Vec<(MoMessageId, Confirmation, Timestamp)> = stored
        .iter()
        .filter_map(|(id, message, at)| {
            message_confirmation(message).map(|kind| (*id, kind, (*at).min(received)))
        })
        .collect();
    confirming.sort_by_key(|(id, _, at)| (*at, id.get()));
    for check_in in confirming {
        tx.confirm_monitoring_session(&node.code, device_id.as_str(), check_in)
            .await?;
    }
    Ok(())
}
