//! Web Push subscriptions (`push_subscriptions`, migration 0066): written by the API, one
//! row per endpoint; read by the delivery worker for each `Push` delivery (its target is
//! the subscription's id), and dropped when the push service answers 404/410. The pushes
//! themselves are `Push` deliveries queued in the transaction of what caused them.

use sqlx::Row;

use super::deliveries::NewDelivery;
use super::write_tx::Wake;
use super::{Store, StoreError, StoreResult, WriteTx, stored_time, to_micros};
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::ids::{AlertId, DeviceId, MtMessageId, PushSubscriptionId, TenantCode, UserId};
use crate::domain::push_subscription::{
    MAX_PER_USER, NewPushSubscription, PushEndpoint, PushKeys, PushPayload, PushSubscription,
};
use crate::domain::time::now;

const COLUMNS: &str = "id, tenant_code, user_id, device_id, endpoint, created_at, updated_at";

/// A `push_subscriptions` row as selected by `COLUMNS`.
#[derive(sqlx::FromRow)]
struct SubscriptionRow {
    id: i64,
    tenant_code: String,
    user_id: i64,
    device_id: String,
    endpoint: String,
    created_at: i64,
    updated_at: i64,
}

impl SubscriptionRow {
    fn into_subscription(self) -> StoreResult<PushSubscription> {
        let endpoint = PushEndpoint::parse(&self.endpoint)
            .map_err(|e| StoreError::Corrupt(format!("push endpoint: {e}")))?;
        Ok(PushSubscription {
            push_subscription_id: PushSubscriptionId::new(self.id),
            tenant_code: TenantCode::from_store(self.tenant_code),
            user_id: UserId::new(self.user_id),
            device_id: DeviceId::from_store(self.device_id),
            endpoint_origin: endpoint.origin(),
            endpoint: Some(self.endpoint),
            created_at: stored_time(self.created_at)?,
            updated_at: stored_time(self.updated_at)?,
        })
    }
}

/// Where a `Push` delivery goes: the subscription's endpoint and keys.
#[derive(Debug, Clone)]
pub struct PushTarget {
    pub endpoint: PushEndpoint,
    pub keys: PushKeys,
}

/// Who a subscription is written for.
#[derive(Debug, Clone, Copy)]
pub struct Subscriber<'a> {
    pub tenant_code: &'a TenantCode,
    pub user_id: UserId,
    pub device_id: &'a DeviceId,
}

impl Store {
    /// Writes `subscription` for `who`: a new row (`true`), or the row of the same
    /// endpoint updated to it (`false`; a browser subscribing again, perhaps for another
    /// user who now uses it). A user already holding `MAX_PER_USER` others: conflict.
    pub async fn put_push_subscription(
        &self,
        who: Subscriber<'_>,
        subscription: &NewPushSubscription,
    ) -> StoreResult<(PushSubscription, bool)> {
        let mut tx = self.begin_write().await?;
        let endpoint = subscription.endpoint.as_str();
        let existing: Option<i64> =
            sqlx::query_scalar("SELECT id FROM push_subscriptions WHERE endpoint = $1")
                .bind(endpoint)
                .fetch_optional(&mut *tx)
                .await?;
        let held: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM push_subscriptions WHERE user_id = $1 AND endpoint <> $2",
        )
        .bind(who.user_id.get())
        .bind(endpoint)
        .fetch_one(&mut *tx)
        .await?;
        if held >= MAX_PER_USER {
            return Err(StoreError::Conflict(format!(
                "the user already has {MAX_PER_USER} push subscriptions (the most one may \
                 hold); delete one first"
            )));
        }
        let (p256dh, auth) = subscription.keys.encoded();
        let at = to_micros(now());
        let sql = match existing {
            Some(_) => format!(
                "UPDATE push_subscriptions SET tenant_code = $1, user_id = $2, device_id = $3,
                    p256dh = $5, auth = $6, updated_at = $7
                 WHERE endpoint = $4 RETURNING {COLUMNS}"
            ),
            None => format!(
                "INSERT INTO push_subscriptions (tenant_code, user_id, device_id, endpoint,
                    p256dh, auth, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING {COLUMNS}"
            ),
        };
        let row: SubscriptionRow = sqlx::query_as(&sql)
            .bind(who.tenant_code.as_str())
            .bind(who.user_id.get())
            .bind(who.device_id.as_str())
            .bind(endpoint)
            .bind(p256dh)
            .bind(auth)
            .bind(at)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok((row.into_subscription()?, existing.is_none()))
    }

    /// A tenant's subscriptions in id order: `user`'s only, or everyone's.
    pub async fn list_push_subscriptions(
        &self,
        tenant_code: &TenantCode,
        user: Option<UserId>,
    ) -> StoreResult<Vec<PushSubscription>> {
        let rows: Vec<SubscriptionRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM push_subscriptions
             WHERE tenant_code = $1 AND ($2 = 0 OR user_id = $2) ORDER BY id"
        ))
        .bind(tenant_code.as_str())
        .bind(user.map_or(0, UserId::get))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(SubscriptionRow::into_subscription)
            .collect()
    }

    /// Deletes subscription `id` of the tenant (`user`'s only, when given); `NotFound`
    /// when there is no such one.
    pub async fn delete_push_subscription(
        &self,
        tenant_code: &TenantCode,
        id: PushSubscriptionId,
        user: Option<UserId>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let deleted = sqlx::query(
            "DELETE FROM push_subscriptions
             WHERE tenant_code = $1 AND id = $2 AND ($3 = 0 OR user_id = $3)",
        )
        .bind(tenant_code.as_str())
        .bind(id.get())
        .bind(user.map_or(0, UserId::get))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Where a `Push` delivery of the tenant goes (`None`: the subscription is gone).
    pub async fn push_target(
        &self,
        tenant_code: &TenantCode,
        id: PushSubscriptionId,
    ) -> StoreResult<Option<PushTarget>> {
        let row = sqlx::query(
            "SELECT endpoint, p256dh, auth FROM push_subscriptions
             WHERE tenant_code = $1 AND id = $2",
        )
        .bind(tenant_code.as_str())
        .bind(id.get())
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let corrupt = |e: String| StoreError::Corrupt(format!("push subscription {id}: {e}"));
        let endpoint: String = row.try_get("endpoint")?;
        let (p256dh, auth): (String, String) = (row.try_get("p256dh")?, row.try_get("auth")?);
        Ok(Some(PushTarget {
            endpoint: PushEndpoint::parse(&endpoint).map_err(corrupt)?,
            keys: PushKeys::from_kept(&p256dh, &auth).map_err(corrupt)?,
        }))
    }

    /// Drops a subscription its push service no longer knows (404/410).
    pub async fn drop_push_subscription(
        &self,
        tenant_code: &TenantCode,
        id: PushSubscriptionId,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM push_subscriptions WHERE tenant_code = $1 AND id = $2")
            .bind(tenant_code.as_str())
            .bind(id.get())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// What a push is linked to in `GET /deliveries`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PushCause {
    pub alert_id: Option<AlertId>,
    pub mt_message_id: Option<MtMessageId>,
}

impl WriteTx {
    /// Queues `payload` as a `Push` delivery to each subscription of the device's user
    /// at this device (the user it is assigned to now), in this transaction; wakes the
    /// delivery loops at commit. None when nobody is subscribed.
    pub async fn queue_pushes(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        payload: &PushPayload,
        cause: PushCause,
    ) -> StoreResult<usize> {
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT s.id FROM push_subscriptions s
             JOIN devices d ON d.tenant_code = s.tenant_code AND d.device_id = s.device_id
             WHERE s.tenant_code = $1 AND s.device_id = $2 AND d.user_id = s.user_id
             ORDER BY s.id",
        )
        .bind(tenant_code.as_str())
        .bind(device_id.as_str())
        .fetch_all(&mut *self.tx)
        .await?;
        if ids.is_empty() {
            return Ok(0);
        }
        let at = now();
        let body = payload.to_json();
        let deliveries: Vec<NewDelivery> = ids
            .iter()
            .map(|id| NewDelivery {
                tenant_code: tenant_code.clone(),
                channel: Channel::Push,
                target: Some(id.to_string()),
                subject: Some(payload.title.clone()),
                body: body.clone(),
                status: DeliveryStatus::Pending,
                notification_id: None,
                alert_id: cause.alert_id,
                message_id: None,
                mt_message_id: cause.mt_message_id,
                device_id: Some(device_id.clone()),
                event_id: None,
                created_at: at,
                next_attempt_at: Some(at),
                sent_at: None,
            })
            .collect();
        self.insert_deliveries(&deliveries).await?;
        self.wake(Wake::Deliveries);
        Ok(deliveries.len())
    }
}
