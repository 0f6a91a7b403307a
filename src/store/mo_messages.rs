//! MO messages read: listed by message time, one or several by id, deleted. (Written by
//! ingest: `mo_message_inserts.rs`.)

use std::collections::HashMap;

use jiff::Timestamp;
use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::{Backend, Store, StoreError, StoreResult, WriteTx, from_micros, to_micros};
use crate::domain::ids::{DeviceId, MoMessageId, TenantCode};
use crate::domain::mo_message::MoMessage;

/// Where a page of messages starts: after this (message time, id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageCursor {
    /// Message time, microseconds.
    pub time: i64,
    pub id: MoMessageId,
}

/// One listing request.
#[derive(Debug, Clone, Copy)]
pub struct MessageQuery<'a> {
    pub tenant_code: &'a TenantCode,
    pub device_id: &'a str,
    /// Inclusive.
    pub from: Option<Timestamp>,
    /// Exclusive.
    pub to: Option<Timestamp>,
    pub after: Option<MessageCursor>,
    pub limit: u32,
    pub include_file: bool,
    /// Newest first (the cursor then means "before").
    pub newest_first: bool,
}

fn columns(include_file: bool) -> &'static str {
    if include_file {
        "id, device_id, received_at, message_time, doc, geofences, etag, file, attachment"
    } else {
        "id, device_id, received_at, message_time, doc, geofences, etag"
    }
}

/// An `mo_messages` row as selected by `columns`: `file` and `attachment` only when the
/// files were asked for (absent columns read as `None`).
#[derive(sqlx::FromRow)]
struct MoMessageRow {
    id: i64,
    device_id: String,
    received_at: i64,
    message_time: i64,
    doc: String,
    geofences: Option<String>,
    etag: String,
    #[sqlx(default)]
    file: Option<String>,
    #[sqlx(default)]
    attachment: Option<String>,
}

/// The message columns of a join where the other table has columns of the same names
/// (`m.id AS m_id`, …; files never).
#[derive(sqlx::FromRow)]
struct JoinedMoMessageRow {
    m_id: i64,
    m_device_id: String,
    m_received_at: i64,
    m_message_time: i64,
    m_doc: String,
    m_geofences: Option<String>,
    m_etag: String,
}

impl From<JoinedMoMessageRow> for MoMessageRow {
    fn from(row: JoinedMoMessageRow) -> Self {
        Self {
            id: row.m_id,
            device_id: row.m_device_id,
            received_at: row.m_received_at,
            message_time: row.m_message_time,
            doc: row.m_doc,
            geofences: row.m_geofences,
            etag: row.m_etag,
            file: None,
            attachment: None,
        }
    }
}

impl MoMessageRow {
    /// The message as the API shows it: the columns over the document (`with_files`: the
    /// row's files over the document's).
    fn into_message(self, with_files: bool) -> StoreResult<(MoMessage, MessageCursor)> {
        let stored: MoMessage = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("mo message doc: {e}")))?;
        let containing_geofences = match self.geofences {
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("mo message geofences: {e}")))?,
            None => stored.containing_geofences,
        };
        let cursor = MessageCursor {
            time: self.message_time,
            id: MoMessageId::new(self.id),
        };
        let message = MoMessage {
            message_id: Some(cursor.id),
            device_id: Some(DeviceId::from_store(self.device_id)),
            received_at_server: from_micros(Some(self.received_at))?,
            etag: Some(self.etag),
            containing_geofences,
            ..stored
        };
        let message = if with_files {
            MoMessage {
                file: self.file,
                attachment: self.attachment,
                ..message
            }
        } else {
            message
        };
        Ok((message, cursor))
    }
}

/// A stored message as the API shows it, with its cursor (`include_file`: the row has
/// the `file` and `attachment` columns).
pub fn message_from_row(
    row: &AnyRow,
    include_file: bool,
) -> StoreResult<(MoMessage, MessageCursor)> {
    message_from_columns(row, "", include_file)
}

/// `message_from_row` for a row whose message columns are named with `prefix`: none, or
/// `m_` (a join where the other table has columns of the same names; files never).
pub(super) fn message_from_columns(
    row: &AnyRow,
    prefix: &str,
    include_file: bool,
) -> StoreResult<(MoMessage, MessageCursor)> {
    let row = match prefix {
        "" => MoMessageRow::from_row(row)?,
        "m_" if !include_file => MoMessageRow::from(JoinedMoMessageRow::from_row(row)?),
        other => {
            return Err(StoreError::Corrupt(format!(
                "no message columns are read with the prefix '{other}'"
            )));
        }
    };
    row.into_message(include_file)
}

/// `list_messages`' statement: the tenant and device, a time window, after a cursor in
/// the listing's order (oldest or newest first: the same index, read either way).
pub(super) fn list_messages_sql(include_file: bool, newest_first: bool) -> String {
    let (past, order) = if newest_first {
        (
            "(message_time < $5 OR (message_time = $5 AND id < $6))",
            "message_time DESC, id DESC",
        )
    } else {
        (
            "(message_time > $5 OR (message_time = $5 AND id > $6))",
            "message_time, id",
        )
    };
    format!(
        "SELECT {} FROM mo_messages
         WHERE tenant_code = $1 AND device_id = $2
           AND message_time >= $3 AND message_time < $4
           AND {past}
         ORDER BY {order} LIMIT $7",
        columns(include_file)
    )
}

impl Store {
    /// A page of a device's messages, by message time then id (on
    /// `mo_messages_tenant_device_time`).
    pub async fn list_messages(
        &self,
        q: MessageQuery<'_>,
    ) -> StoreResult<Vec<(MoMessage, MessageCursor)>> {
        let sql = list_messages_sql(q.include_file, q.newest_first);
        let start = if q.newest_first { i64::MAX } else { i64::MIN };
        let after = q.after.unwrap_or(MessageCursor {
            time: start,
            id: MoMessageId::new(start),
        });
        let rows = sqlx::query(&sql)
            .bind(q.tenant_code.as_str())
            .bind(q.device_id)
            .bind(q.from.map_or(i64::MIN, to_micros))
            .bind(q.to.map_or(i64::MAX, to_micros))
            .bind(after.time)
            .bind(after.id.get())
            .bind(i64::from(q.limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| message_from_row(r, q.include_file))
            .collect()
    }

    pub async fn get_message(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        id: MoMessageId,
        include_file: bool,
    ) -> StoreResult<Option<MoMessage>> {
        let sql = format!(
            "SELECT {} FROM mo_messages WHERE tenant_code = $1 AND device_id = $2 AND id = $3",
            columns(include_file)
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(device_id)
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| message_from_row(&r, include_file).map(|(m, _)| m))
            .transpose()
    }

    /// Several of a tenant's messages by id (without files), of one device when
    /// `device_id` is given, in one query per 500: the originals of a resent batch, the
    /// messages webhook events are rendered from. Ids not found are absent.
    pub async fn get_messages(
        &self,
        tenant_code: &TenantCode,
        device_id: Option<&str>,
        ids: &[MoMessageId],
    ) -> StoreResult<HashMap<MoMessageId, MoMessage>> {
        let mut found = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let sql = messages_by_id_sql(self.backend, device_id.is_some(), chunk.len());
            let mut query = sqlx::query(&sql).bind(tenant_code.as_str());
            if let Some(device_id) = device_id {
                query = query.bind(device_id);
            }
            for id in chunk {
                query = query.bind(id.get());
            }
            for row in query.fetch_all(&self.pool).await? {
                let (message, cursor) = message_from_row(&row, false)?;
                found.insert(cursor.id, message);
            }
        }
        Ok(found)
    }

    /// Deletes one message (`If-Match` honoured). Alerts and deliveries it caused stay:
    /// they are history of their own.
    pub async fn delete_message(
        &self,
        tenant_code: &TenantCode,
        device_id: &str,
        id: MoMessageId,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let keys = [
            super::Key::Id(id.get()),
            super::Key::Text(tenant_code),
            super::Key::Text(device_id),
        ];
        let row = super::VersionedRow {
            table: "mo_messages",
            column: "etag",
            filter: "id = $1 AND tenant_code = $2 AND device_id = $3",
            keys: &keys,
        };
        self.write_versioned(
            row,
            if_match,
            sqlx::query("DELETE FROM mo_messages WHERE id = $1").bind(id.get()),
            None,
        )
        .await
    }
}

/// `get_messages`' statement: a tenant's messages (of one device when `with_device`) by
/// `count` ids. The ids are the index; `|| ''` keeps SQLite's planner (no statistics)
/// off the tenant and device indexes: from ten ids on it read the whole tenant through
/// its tenant index, checking each row against the list (EXPLAIN QUERY PLAN; every
/// webhook claim's bodies scanned all of the tenant's messages).
pub(super) fn messages_by_id_sql(backend: Backend, with_device: bool, count: usize) -> String {
    let device_filter = if with_device {
        format!(" AND device_id || '' = {}", backend.placeholders(2, 1))
    } else {
        String::new()
    };
    let first_id = if with_device { 3 } else { 2 };
    // `?`-style on SQLite (see `Backend::placeholders`): every parameter alike.
    format!(
        "SELECT {} FROM mo_messages WHERE tenant_code || '' = {}{device_filter} AND id IN ({})",
        columns(false),
        backend.placeholders(1, 1),
        backend.placeholders(first_id, count)
    )
}

impl WriteTx {
    /// Whether a stored message of the device newer than `time` says an
    /// `EmergencyState` (what decides a late message's word on the emergency:
    /// `DeviceState::late_emergency_word`).
    pub async fn newer_emergency_word(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        time: Timestamp,
    ) -> StoreResult<bool> {
        let found: Option<(i64,)> = sqlx::query_as(
            "SELECT id FROM mo_messages
             WHERE tenant_code = $1 AND device_id = $2 AND message_time > $3
               AND emergency_state IS NOT NULL
             LIMIT 1",
        )
        .bind(tenant_code.as_str())
        .bind(device_id)
        .bind(to_micros(time))
        .fetch_optional(&mut *self.tx)
        .await?;
        Ok(found.is_some())
    }
}
