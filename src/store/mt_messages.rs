//! MT messages (`mt_messages`): queued by the API or by a notification's device command.

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::NewDelivery;
use super::push_subscriptions::PushCause;
use super::stored;
use super::stored_time;
use super::webhook_events::emit;
use super::{Key, Store, StoreError, StoreResult, VersionedRow, WriteTx, new_etag, to_micros};
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::device_protocols::garmin_mt::{self, GarminMt};
use crate::domain::ids::{DeviceId, MtMessageId, NotificationId, TenantCode};
use crate::domain::mt_message::{MtMessage, MtStatus, MtType, NewMtMessage, check_transition};
use crate::domain::push_subscription::PushPayload;
use crate::domain::time::now;
use crate::domain::webhook::Category;
use crate::domain::webhook_event::{EventType, event_data};

const COLUMNS: &str =
    "id, device_id, kind, status, doc, notification_id, created_at, updated_at, etag";

/// The part of an MT message kept as JSON.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct MtDoc {
    message: Option<String>,
    #[serde(default)]
    parameters: serde_json::Map<String, serde_json::Value>,
}

/// An `mt_messages` row as selected by `COLUMNS`.
#[derive(sqlx::FromRow)]
struct MtRow {
    id: i64,
    device_id: String,
    kind: String,
    status: String,
    doc: String,
    notification_id: Option<i64>,
    created_at: i64,
    updated_at: i64,
    etag: String,
}

impl MtRow {
    /// The message as the API shows it; a `kind` or `status` that names no `MtType` or
    /// `MtStatus` is a corrupt row.
    fn into_message(self) -> StoreResult<MtMessage> {
        let doc: MtDoc = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("mt message {}: {e}", self.id)))?;
        Ok(MtMessage {
            message_id: MtMessageId::new(self.id),
            device_id: DeviceId::from_store(self.device_id),
            r#type: stored(&self.kind)?,
            message: doc.message,
            parameters: doc.parameters,
            status: stored(&self.status)?,
            created_at: stored_time(self.created_at)?,
            timestamp: stored_time(self.updated_at)?,
            notification_id: self.notification_id.map(NotificationId::new),
            etag: self.etag,
        })
    }
}

fn mt_from_row(row: &AnyRow) -> StoreResult<MtMessage> {
    MtRow::from_row(row)?.into_message()
}

/// An `MtMessage` webhook event for message `id` as it is now in the transaction.
async fn mt_event(tx: &mut super::Tx, id: MtMessageId, kind: EventType) -> StoreResult<()> {
    let sql = format!("SELECT {COLUMNS}, tenant_code FROM mt_messages WHERE id = $1");
    let row = sqlx::query(&sql)
        .bind(id.get())
        .fetch_one(&mut **tx)
        .await?;
    let tenant = TenantCode::from_store(row.try_get("tenant_code")?);
    emit(
        tx,
        &tenant,
        Category::MtMessage,
        kind,
        event_data(&mt_from_row(&row)?),
    )
    .await
}

fn mt_row<'a>(keys: &'a [Key<'a>; 3]) -> VersionedRow<'a> {
    VersionedRow {
        table: "mt_messages",
        column: "etag",
        filter: "id = $1 AND tenant_code = $2 AND device_id = $3",
        keys,
    }
}

impl WriteTx {
    /// Queues a message for a device, `Queued`; returns its id.
    pub async fn queue_mt_message(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        message: &NewMtMessage,
        notification_id: Option<NotificationId>,
    ) -> StoreResult<MtMessageId> {
        let doc = MtDoc {
            message: message.message.clone(),
            parameters: message.parameters.clone(),
        };
        let at = to_micros(now());
        let row = sqlx::query(
            "INSERT INTO mt_messages (tenant_code, device_id, kind, status, doc, notification_id,
                created_at, updated_at, etag)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id",
        )
        .bind(tenant_code.as_str())
        .bind(device_id.as_str())
        .bind(message.r#type.as_str())
        .bind(MtStatus::Queued.as_str())
        .bind(serde_json::to_string(&doc).map_err(|e| StoreError::Corrupt(e.to_string()))?)
        .bind(notification_id.map(NotificationId::get))
        .bind(at)
        .bind(new_etag())
        .fetch_one(&mut *self.tx)
        .await?;
        let id = MtMessageId::new(row.try_get("id")?);
        mt_event(&mut self.tx, id, EventType::Created).await?;
        self.queue_garmin_delivery(tenant_code, device_id, (id, message), notification_id)
            .await?;
        // A reminder or a text for the person: pushed to the worker app too (§12).
        if let Some(push) = PushPayload::for_mt(message.r#type, message.message.as_deref()) {
            let cause = PushCause {
                mt_message_id: Some(id),
                ..PushCause::default()
            };
            self.queue_pushes(tenant_code, device_id, &push, cause)
                .await?;
        }
        Ok(id)
    }

    /// For an inReach device (`garmin_mt::is_inreach`), the `Garmin` delivery that sends
    /// the message through IPC Inbound: the delivery worker attempts and retries it, and
    /// the message's status follows (`follow_mt_delivery`).
    async fn queue_garmin_delivery(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        (id, message): (MtMessageId, &NewMtMessage),
        notification_id: Option<NotificationId>,
    ) -> StoreResult<()> {
        let Some(row) = sqlx::query(
            "SELECT device_type, doc FROM devices WHERE tenant_code = $1 AND device_id = $2",
        )
        .bind(tenant_code.as_str())
        .bind(device_id.as_str())
        .fetch_optional(&mut *self.tx)
        .await?
        else {
            return Ok(());
        };
        let device_type: String = row.try_get("device_type")?;
        let doc: String = row.try_get("doc")?;
        let doc: serde_json::Value = serde_json::from_str(&doc)
            .map_err(|e| StoreError::Corrupt(format!("device doc: {e}")))?;
        let imei = doc.get("IridiumImei").and_then(|v| v.as_str());
        if !garmin_mt::is_inreach(&device_type, imei) {
            return Ok(());
        }
        let at = now();
        let body = GarminMt {
            mt_message_id: id,
            device_id: device_id.clone(),
            r#type: message.r#type,
            message: message.message.clone(),
            parameters: message.parameters.clone(),
            queued_at: at,
        };
        let delivery = NewDelivery {
            tenant_code: tenant_code.clone(),
            channel: Channel::Garmin,
            target: imei.map(str::to_string),
            subject: None,
            body: serde_json::to_string(&body).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            status: DeliveryStatus::Pending,
            notification_id,
            alert_id: None,
            message_id: None,
            mt_message_id: Some(id),
            device_id: Some(device_id.clone()),
            event_id: None,
            created_at: at,
            next_attempt_at: Some(at),
            sent_at: None,
        };
        self.insert_deliveries(&[delivery]).await
    }
}

impl Store {
    pub async fn queue_mt_message(
        &self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        message: &NewMtMessage,
    ) -> StoreResult<MtMessageId> {
        let mut tx = self.begin().await?;
        let id = tx
            .queue_mt_message(tenant_code, device_id, message, None)
            .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// A page of a device's MT messages in id order (ids greater than `after`, at most
    /// `limit`; newest first: before `after`), optionally of one status.
    pub async fn list_mt_messages(
        &self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        status: Option<MtStatus>,
        after: Option<MtMessageId>,
        newest_first: bool,
        limit: u32,
    ) -> StoreResult<Vec<MtMessage>> {
        let (past, order, start) = if newest_first {
            ("id < $4", "id DESC", i64::MAX)
        } else {
            ("id > $4", "id", 0)
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM mt_messages
             WHERE tenant_code = $1 AND device_id = $2 AND ($3 = '' OR status = $3) AND {past}
             ORDER BY {order} LIMIT $5"
        );
        let rows = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(device_id.as_str())
            .bind(status.map_or("", MtStatus::as_str))
            .bind(after.map_or(start, MtMessageId::get))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(mt_from_row).collect()
    }

    pub async fn get_mt_message(
        &self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        id: MtMessageId,
    ) -> StoreResult<Option<MtMessage>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM mt_messages WHERE tenant_code = $1 AND device_id = $2 AND id = $3"
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(device_id.as_str())
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(mt_from_row).transpose()
    }

    /// The oldest `Queued` message of `kind` for a device, marked `Sent` (a gateway that
    /// hands it over in its answer), or `None`. Two requests never take the same message:
    /// the update is conditional on the status it read.
    pub async fn take_queued_mt(
        &self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        kind: MtType,
    ) -> StoreResult<Option<MtMessage>> {
        let oldest = "SELECT id FROM mt_messages
             WHERE tenant_code = $1 AND device_id = $2 AND status = $3 AND kind = $4
             ORDER BY id LIMIT 1";
        // Read first, outside a write transaction: most reports find nothing queued.
        let Some(row) = sqlx::query(oldest)
            .bind(tenant_code.as_str())
            .bind(device_id.as_str())
            .bind(MtStatus::Queued.as_str())
            .bind(kind.as_str())
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let mut id = MtMessageId::new(row.try_get("id")?);
        let mut tx = self.begin_write().await?;
        loop {
            let taken = sqlx::query(
                "UPDATE mt_messages SET status = $1, updated_at = $2, etag = $3
                 WHERE id = $4 AND status = $5",
            )
            .bind(MtStatus::Sent.as_str())
            .bind(to_micros(now()))
            .bind(new_etag())
            .bind(id.get())
            .bind(MtStatus::Queued.as_str())
            .execute(&mut *tx)
            .await?;
            if taken.rows_affected() == 1 {
                break;
            }
            // Another request took it meanwhile: the next one, if any.
            match sqlx::query(oldest)
                .bind(tenant_code.as_str())
                .bind(device_id.as_str())
                .bind(MtStatus::Queued.as_str())
                .bind(kind.as_str())
                .fetch_optional(&mut *tx)
                .await?
            {
                Some(row) => id = MtMessageId::new(row.try_get("id")?),
                None => return Ok(None),
            }
        }
        mt_event(&mut tx, id, EventType::Updated).await?;
        let sql = format!("SELECT {COLUMNS} FROM mt_messages WHERE id = $1");
        let row = sqlx::query(&sql).bind(id.get()).fetch_one(&mut *tx).await?;
        let message = mt_from_row(&row)?;
        tx.commit().await?;
        Ok(Some(message))
    }

    /// Moves an MT message sent through a `Garmin` delivery along with it: `Sent` once
    /// Garmin took it, `Failed` once the delivery failed for good. A message already
    /// past that status (a gateway reported `Delivered`) keeps its own. (`id`: the
    /// delivery's `mt_message_id`.)
    pub async fn follow_mt_delivery(
        &self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        id: MtMessageId,
        status: MtStatus,
    ) -> StoreResult<()> {
        match self
            .set_mt_status(tenant_code, device_id, id, status, None)
            .await
        {
            Err(StoreError::Conflict(_) | StoreError::NotFound) => Ok(()),
            other => other,
        }
    }

    /// Sets an MT message's status (the one writable field), if the workflow allows the
    /// step from the status it has now (`mt_message::check_transition`; `Conflict`
    /// otherwise). Both are decided in the writing transaction, after the version check.
    /// Reporting the current status again changes nothing (the ETag stays).
    pub async fn set_mt_status(
        &self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        id: MtMessageId,
        status: MtStatus,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let keys = [
            Key::Id(id.get()),
            Key::Text(tenant_code),
            Key::Text(device_id),
        ];
        let mut tx = self.begin_write().await?;
        self.check_version(&mut tx, mt_row(&keys), if_match).await?;
        let current: MtStatus = sqlx::query("SELECT status FROM mt_messages WHERE id = $1")
            .bind(id.get())
            .fetch_one(&mut *tx)
            .await?
            .try_get::<String, _>("status")?
            .parse()
            .map_err(|e| StoreError::Corrupt(format!("MT message {id}: {e}")))?;
        check_transition(current, status).map_err(StoreError::Conflict)?;
        if current != status {
            sqlx::query(
                "UPDATE mt_messages SET status = $1, updated_at = $2, etag = $3 WHERE id = $4",
            )
            .bind(status.as_str())
            .bind(to_micros(now()))
            .bind(new_etag())
            .bind(id.get())
            .execute(&mut *tx)
            .await?;
            mt_event(&mut tx, id, EventType::Updated).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
