//! Recipient resolution at fire time, inside the transaction that stores the match (so
//! the deliveries it yields are written with it). The rules are the domain's
//! (`recipient_targets::plan_targets`, pure); this reads each fact the plan asks for —
//! a list, a contact, a user, a group's devices, the devices near the match — and asks
//! again until the plan is complete.

use crate::domain::recipient::Recipient;
use crate::domain::recipient_targets::{
    Lookup, MatchedDevice, RecipientFacts, Target, plan_targets, search_box,
};
use crate::domain::tenant::TenantNode;
use crate::store::{StoreResult, WriteTx};

/// The targets of a match's recipients, in order, without duplicates; and the facts read
/// on the way (the device's user among them, when a recipient needed it).
pub struct Resolved {
    pub targets: Vec<Target>,
    pub facts: RecipientFacts,
}

/// Resolves every recipient (lists expanded) for `device` of tenant `node`.
pub async fn resolve_recipients(
    tx: &mut WriteTx,
    node: &TenantNode,
    device: &MatchedDevice<'_>,
    recipients: &[Recipient],
) -> StoreResult<Resolved> {
    let mut facts = RecipientFacts::default();
    loop {
        match plan_targets(recipients, device, &facts) {
            Ok(resolution) => {
                for skipped in resolution.skipped {
                    tracing::warn!(
                        tenant = %node.code,
                        recipient = ?skipped.kind,
                        why = %skipped.why,
                        "a stored recipient does not parse (e.g. a number out of range): that recipient is skipped"
                    );
                }
                return Ok(Resolved {
                    targets: resolution.targets,
                    facts,
                });
            }
            Err(lookup) => look_up(tx, node, device, lookup, &mut facts).await?,
        }
    }
}

/// Reads one fact into `facts` (each lookup adds the fact it names, so the plan never
/// asks for it again).
async fn look_up(
    tx: &mut WriteTx,
    node: &TenantNode,
    device: &MatchedDevice<'_>,
    lookup: Lookup,
    facts: &mut RecipientFacts,
) -> StoreResult<()> {
    match lookup {
        Lookup::List(id) => {
            let list = tx.visible_list(node, id).await?;
            facts.lists.insert(id, list.map(|l| l.recipients));
        }
        Lookup::Contact(id) => {
            let contact = tx.visible_contact(node, id).await?;
            facts.contacts.insert(id, contact);
        }
        Lookup::User(id) => {
            let user = tx.user_contact(id).await?;
            facts.users.insert(id, user);
        }
        Lookup::GroupDevices(group) => {
            let devices = tx.group_devices(&node.code, group).await?;
            facts.group_devices.insert(group, devices);
        }
        Lookup::DevicesNear { radius_km } => {
            // Asked only for a device with a position.
            let devices = match device.position {
                Some(position) => {
                    let (lat, lon) = search_box(position, radius_km);
                    tx.devices_in_box(&node.code, lat, lon).await?
                }
                None => Vec::new(),
            };
            facts.devices_near.insert(radius_km.to_bits(), devices);
        }
    }
    Ok(())
}
