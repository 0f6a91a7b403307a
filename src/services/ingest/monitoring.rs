//! Device messages and the person's check-ins (docs/monitoring.md): a stored message
//! that confirms a check-in (`message_confirmation`, the closed set — never an automatic
//! report) is the device's standing check-in and its current session's, in the batch's
//! transaction.

use jiff::Timestamp;

use crate::domain::device_state::DeviceState;
use crate::domain::ids::{DeviceId, MoMessageId};
use crate::domain::mo_message::MoMessage;
use crate::domain::monitoring::{Confirmation, message_confirmation};
use crate::domain::tenant::TenantNode;
use crate::store::{StoreResult, WriteTx};

/// Records each confirming message of those stored now, oldest first (`stored`: id,
/// message, the message's time), on the device's standing check-in schedule (`state`)
/// and its current session.
///
/// The clocks count from when the person acted, so a check-in's time is the message's
/// `SentFromDevice` (the batch's arrival when it has none) — but never later than the
/// arrival: a device whose clock runs ahead would otherwise push its next due time into
/// the future and hide a missed check-in.
pub(super) async fn confirm_check_ins(
    tx: &mut WriteTx,
    node: &TenantNode,
    device_id: &DeviceId,
    state: &mut DeviceState,
    stored: &[(MoMessageId, &MoMessage, Timestamp)],
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
        state.confirmed_check_in(check_in.2);
        tx.confirm_monitoring_session(&node.code, device_id.as_str(), check_in)
            .await?;
    }
    Ok(())
}
