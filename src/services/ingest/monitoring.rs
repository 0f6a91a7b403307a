//! Device messages and the person's session and check-ins (docs/monitoring.md), in the
//! batch's transaction, oldest first: MO `BeginMonitoring` starts a session (its
//! `Properties` may carry the settings), `EndMonitoring` ends it, and a message that
//! confirms a check-in (`message_confirmation`, the closed set — never an automatic
//! report) is the device's standing check-in and its current session's; every report
//! moves the session's no-motion record on (`domain/monitoring/motion.rs`).

use jiff::Timestamp;

use super::Pipeline;
use crate::domain::device::Device;
use crate::domain::device_state::{DeviceState, silent_after};
use crate::domain::ids::{DeviceId, MoMessageId};
use crate::domain::mo_message::MoMessage;
use crate::domain::monitoring::session::minutes as session_minutes;
use crate::domain::monitoring::{
    DefaultSources, EndKind, RequestedSettings, SessionEnd, message_confirmation,
};
use crate::domain::tenant::{Tenant, TenantNode};
use crate::store::{DEVICE_ACTOR, StoreResult, WriteTx};

/// Whose messages they are: the device (as its unit of work holds it) and its state.
pub(super) struct PersonActs<'a> {
    pub(super) node: &'a TenantNode,
    pub(super) device_id: &'a DeviceId,
    pub(super) device: &'a Device,
    pub(super) state: &'a mut DeviceState,
}

impl Pipeline {
    /// After a batch stored `stored` (its new messages; none when all were resent): the
    /// person's acts among them (`apply_person_acts`), and the device's silence timer
    /// moved on (any message at all: `Silent` is due its `SilentAfterMinutes` after this
    /// arrival).
    pub(super) async fn apply_person_acts(
        &self,
        tx: &mut WriteTx,
        acts: PersonActs<'_>,
        stored: &[(MoMessageId, &MoMessage, Timestamp)],
        received: Timestamp,
    ) -> StoreResult<()> {
        if stored.is_empty() {
            return Ok(());
        }
        let tenant = self.tenant_in(tx, &acts.node.code).await?;
        let properties = tenant.as_ref().map(|t| &t.properties);
        let after = silent_after(&acts.device.properties, properties);
        let minute = self.config.monitoring_minute;
        acts.state
            .heard_from(received, after.map(|n| session_minutes(n, minute)));
        apply_person_acts(tx, acts, tenant.as_ref(), stored, received).await
    }
}

/// Applies the person's acts among the messages stored now (`stored`: id, message, the
/// message's time), oldest first.
///
/// The clocks count from when the person acted, so an act's time is the message's
/// `SentFromDevice` (the batch's arrival when it has none) — but never later than the
/// arrival: a device whose clock runs ahead would otherwise push its next due time into
/// the future and hide a missed check-in.
async fn apply_person_acts(
    tx: &mut WriteTx,
    acts: PersonActs<'_>,
    tenant: Option<&Tenant>,
    stored: &[(MoMessageId, &MoMessage, Timestamp)],
    received: Timestamp,
) -> StoreResult<()> {
    let mut in_order: Vec<(MoMessageId, &MoMessage, Timestamp)> = stored
        .iter()
        .map(|(id, message, at)| (*id, *message, (*at).min(received)))
        .collect();
    in_order.sort_by_key(|(id, _, at)| (*at, id.get()));
    let code = &acts.node.code;
    let device_id = acts.device_id.as_str();
    let reports: Vec<(Timestamp, Option<(f64, f64)>)> = in_order
        .iter()
        .map(|(_, message, at)| (*at, message.position.as_ref().and_then(|p| p.lat_lon())))
        .collect();
    for (id, message, at) in in_order {
        let kind = message.message_type.as_deref().unwrap_or("");
        if kind.eq_ignore_ascii_case("BeginMonitoring") {
            let sources = DefaultSources {
                message: Some(&message.properties),
                device: Some(&acts.device.properties),
                tenant: tenant.map(|t| &t.properties),
            };
            let settings =
                RequestedSettings::settle_from_device(message.message.as_deref(), sources);
            tx.begin_device_monitoring(code, device_id, &settings, (at, DEVICE_ACTOR))
                .await?;
        } else if kind.eq_ignore_ascii_case("EndMonitoring") {
            let end = SessionEnd {
                at,
                by: DEVICE_ACTOR.to_string(),
                kind: EndKind::Normal,
                reason: Some("EndMonitoring".to_string()),
            };
            tx.end_device_monitoring(code, device_id, &end).await?;
        }
        if let Some(confirmation) = message_confirmation(message) {
            acts.state.confirmed_check_in(at);
            tx.confirm_monitoring_session(code, device_id, (id, confirmation, at))
                .await?;
        }
    }
    // After the acts: a session this batch began watches its reports too.
    tx.track_monitoring_motion(code, device_id, &reports)
        .await?;
    Ok(())
}
