//! A `Push` delivery's attempt: its subscription (the delivery's target is its id) read
//! as it is now, the push sent through `channels::push`, and a subscription the push
//! service no longer knows (404/410) dropped, so nothing is pushed to it again.

use crate::channels::Channels;
use crate::domain::ids::PushSubscriptionId;
use crate::domain::retry::AttemptOutcome;
use crate::store::{ClaimedDelivery, Store};

pub(super) async fn send(
    store: &Store,
    channels: &Channels,
    d: &ClaimedDelivery,
) -> AttemptOutcome {
    let Some(id) = d
        .target
        .as_deref()
        .and_then(|t| t.parse::<PushSubscriptionId>().ok())
    else {
        return AttemptOutcome::Permanent {
            error: "the delivery names no push subscription".into(),
        };
    };
    let target = match store.push_target(&d.tenant_code, id).await {
        Ok(Some(target)) => target,
        Ok(None) => {
            return AttemptOutcome::Permanent {
                error: "the push subscription no longer exists".into(),
            };
        }
        Err(e) => {
            return AttemptOutcome::Retryable {
                error: format!("the push subscription could not be read: {e}"),
                retry_after: None,
            };
        }
    };
    let sent = channels
        .push()
        .send(&target.endpoint, &target.keys, &d.body)
        .await;
    if sent.gone {
        match store.drop_push_subscription(&d.tenant_code, id).await {
            Ok(()) => tracing::info!(delivery = %d.id, subscription = %id,
                "push subscription gone at its push service: dropped"),
            Err(e) => tracing::warn!(delivery = %d.id, subscription = %id, error = %e,
                "a gone push subscription could not be dropped"),
        }
    }
    sent.outcome
}
