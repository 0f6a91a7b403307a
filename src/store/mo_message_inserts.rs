//! MO messages written: a device's batch inserted inside the ingest transaction, each
//! retry of a stored message recognised by the dedupe index and answered with the
//! original's id.

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::{Backend, Float, StoreError, StoreResult, WriteTx, new_etag, to_micros};
use crate::domain::ids::{DeviceId, MoMessageId, TenantCode};
use crate::domain::mo_message::{EmergencyState, StorableMessage};

/// Rows per INSERT statement: 17 values each stays well under both backends' limit on
/// bound parameters.
const INSERT_CHUNK: usize = 200;
const INSERT_COLUMNS: usize = 17;

/// SQLite: the ids of the `rows` rows one multi-row INSERT just stored (all it was
/// offered), from the last one. `id` is `INTEGER PRIMARY KEY AUTOINCREMENT`: SQLite gives
/// each new row one more than the largest id the table ever held, row by row in VALUES
/// order, and no other writer runs inside the statement, so they are consecutive.
fn consecutive_ids(rows: usize, stored: i64, last: i64) -> StoreResult<Vec<i64>> {
    match i64::try_from(rows) {
        Ok(count) if stored == count && last >= count => Ok((last - count + 1..=last).collect()),
        _ => Err(StoreError::Corrupt(format!(
            "an insert of {rows} messages stored {stored}, the last id {last}"
        ))),
    }
}

/// A message ready to insert.
pub struct NewMessage<'a> {
    pub message: &'a StorableMessage,
    /// `ContainingGeofences` as JSON (None: none).
    pub geofences: Option<String>,
    pub received_at: Timestamp,
    pub message_time: Timestamp,
}

/// How `find_stored_messages` reads a batch's candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyLookup {
    /// The device's rows numbered from `least` to `greatest`: one range of the dedupe
    /// index (a device numbers its messages in order, so a batch is usually a short run
    /// of numbers, and a range is one seek where a list is one per message).
    Range { least: i64, greatest: i64 },
    /// This many sequence numbers, each looked up: numbers spread too far apart for one
    /// range to stay short.
    Each(usize),
}

/// A range spans fewer numbers than this many times the batch's keys.
const RANGE_SPREAD: i64 = 4;

impl KeyLookup {
    fn for_keys(sequences: &[i64]) -> Self {
        let (Some(&least), Some(&greatest)) = (sequences.iter().min(), sequences.iter().max())
        else {
            return KeyLookup::Each(sequences.len());
        };
        let keys = i64::try_from(sequences.len()).unwrap_or(i64::MAX);
        match greatest.checked_sub(least) {
            Some(spread) if spread < keys.saturating_mul(RANGE_SPREAD) => {
                KeyLookup::Range { least, greatest }
            }
            _ => KeyLookup::Each(sequences.len()),
        }
    }
}

/// `find_stored_messages`' statement: the tenant and the device are the first two
/// parameters, then the two bounds of a range or each sequence number.
pub(super) fn stored_keys_sql(backend: Backend, lookup: KeyLookup) -> String {
    let tenant = backend.placeholders(1, 1);
    let device = backend.placeholders(2, 1);
    let sequences = match lookup {
        KeyLookup::Range { .. } => format!(
            "BETWEEN {} AND {}",
            backend.placeholders(3, 1),
            backend.placeholders(4, 1)
        ),
        KeyLookup::Each(count) => format!("IN ({})", backend.placeholders(3, count)),
    };
    format!(
        "SELECT id, sequence_number, sent_at FROM mo_messages
         WHERE tenant_code = {tenant} AND device_id = {device}
           AND sequence_number {sequences} AND sent_at IS NOT NULL"
    )
}

impl WriteTx {
    /// The ids of stored messages of the device (of `tenant_code`) with these
    /// `(SequenceNumber, SentFromDevice)` keys: the retries among a batch.
    pub async fn find_stored_messages(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        keys: &[(i64, Timestamp)],
    ) -> StoreResult<HashMap<(i64, i64), i64>> {
        let wanted: HashSet<(i64, i64)> = keys
            .iter()
            .map(|(sequence, sent)| (*sequence, to_micros(*sent)))
            .collect();
        let mut found = HashMap::new();
        for chunk in keys.chunks(500) {
            let sequences: Vec<i64> = chunk.iter().map(|(sequence, _)| *sequence).collect();
            let lookup = KeyLookup::for_keys(&sequences);
            let sql = stored_keys_sql(self.backend, lookup);
            let mut query = sqlx::query(&sql)
                .bind(tenant_code.as_str())
                .bind(device_id.as_str());
            match lookup {
                KeyLookup::Range { least, greatest } => query = query.bind(least).bind(greatest),
                KeyLookup::Each(_) => {
                    for sequence in sequences {
                        query = query.bind(sequence);
                    }
                }
            }
            for row in query.fetch_all(&mut *self.tx).await? {
                let stored = KeyRow::from_row(&row)?.into_stored();
                // A range also reads the device's other messages numbered in between.
                if let Some(key) = stored.key.filter(|key| wanted.contains(key)) {
                    found.insert(key, stored.id);
                }
            }
        }
        Ok(found)
    }

    /// Inserts the messages not stored before and tells, in order, what became of each:
    /// a new id and ETag, or the id of the message with the same (`SequenceNumber`,
    /// `SentFromDevice`) stored earlier — a device's retry. No two of `messages` may
    /// share that key (the caller settles repeats within a batch).
    ///
    /// Retries are rare, so the insert does not look for them first: the dedupe index
    /// skips them (`ON CONFLICT … DO NOTHING`) and only an insert that stored fewer rows
    /// than offered reads which ones it skipped (a lookup per batch was a statement, and
    /// a round trip to SQLite's thread, inside the one writer's turn).
    pub async fn insert_new_messages(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &DeviceId,
        messages: &[NewMessage<'_>],
    ) -> StoreResult<Vec<Inserted>> {
        let mut outcomes = Vec::with_capacity(messages.len());
        for chunk in messages.chunks(INSERT_CHUNK) {
            let sql = insert_sql(self.backend, chunk.len());
            // The ETags are made here, so only the ids need to come back.
            let etags: Vec<String> = chunk.iter().map(|_| new_etag()).collect();
            let mut query = sqlx::query(&sql);
            for (new, etag) in chunk.iter().zip(&etags) {
                let record = &new.message.record;
                let position = record.position.as_ref();
                query = query
                    .bind(tenant_code.as_str())
                    .bind(device_id.as_str())
                    .bind(record.sequence_number)
                    .bind(record.sent_from_device.map(to_micros))
                    .bind(to_micros(new.received_at))
                    .bind(to_micros(new.message_time))
                    .bind(record.message_type.as_deref())
                    .bind(Float(position.and_then(|p| p.latitude)))
                    .bind(Float(position.and_then(|p| p.longitude)))
                    .bind(Float(position.and_then(|p| p.speed)))
                    .bind(Float(position.and_then(|p| p.heading)))
                    .bind(record.emergency_state.map(EmergencyState::as_str))
                    .bind(new.message.doc.as_str())
                    .bind(new.geofences.as_deref())
                    .bind(new.message.file.as_deref())
                    .bind(new.message.attachment.as_deref())
                    .bind(etag.as_str());
            }
            let rows = query.fetch_all(&mut *self.tx).await?;
            let stored = match self.backend {
                Backend::Sqlite => self.stored_by_sqlite_insert(chunk, &rows).await?,
                Backend::Postgres => stored_rows(&rows)?,
            };
            let new_ids = match_inserted(chunk, stored)?;
            let skipped: Vec<(i64, Timestamp)> = chunk
                .iter()
                .zip(&new_ids)
                .filter(|(_, id)| id.is_none())
                .filter_map(|(new, _)| key_of(new))
                .collect();
            let originals = if skipped.is_empty() {
                HashMap::new()
            } else {
                self.find_stored_messages(tenant_code, device_id, &skipped)
                    .await?
            };
            for ((new, id), etag) in chunk.iter().zip(new_ids).zip(etags) {
                outcomes.push(match id {
                    Some(id) => Inserted::New {
                        id: MoMessageId::new(id),
                        etag,
                    },
                    None => {
                        let key = key_of(new)
                            .map(|(sequence, sent)| (sequence, to_micros(sent)))
                            .and_then(|key| originals.get(&key));
                        Inserted::Stored(MoMessageId::new(*key.ok_or_else(|| {
                            StoreError::Corrupt("a skipped message has no stored original".into())
                        })?))
                    }
                });
            }
        }
        Ok(outcomes)
    }

    /// SQLite: the rows one insert (`insert_sql`) stored, in id order. When it stored all
    /// it was offered they are the consecutive ids ending at the last one (see
    /// `consecutive_ids`); otherwise they are read back: every row past the largest id
    /// before the insert is the insert's (the one writer holds the transaction).
    async fn stored_by_sqlite_insert(
        &mut self,
        chunk: &[NewMessage<'_>],
        rows: &[AnyRow],
    ) -> StoreResult<Vec<StoredRow>> {
        let (Some(before), Some(after)) = (rows.first(), rows.get(1)) else {
            return Err(StoreError::Corrupt(
                "the insert's ids were not returned".into(),
            ));
        };
        let before: i64 = before.try_get("before_id")?;
        let stored: i64 = after.try_get("stored")?;
        if usize::try_from(stored).ok() == Some(chunk.len()) {
            let ids = consecutive_ids(chunk.len(), stored, after.try_get("last_id")?)?;
            return Ok(ids
                .into_iter()
                .zip(chunk)
                .map(|(id, new)| StoredRow {
                    id,
                    key: key_of(new).map(|(sequence, sent)| (sequence, to_micros(sent))),
                })
                .collect());
        }
        let rows = sqlx::query(
            "SELECT id, sequence_number, sent_at FROM mo_messages WHERE id > $1 ORDER BY id",
        )
        .bind(before)
        .fetch_all(&mut *self.tx)
        .await?;
        stored_rows(&rows)
    }
}

/// What became of a message offered to `insert_new_messages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    New {
        id: MoMessageId,
        etag: String,
    },
    /// A retry: the message stored earlier with the same key.
    Stored(MoMessageId),
}

/// A row an insert stored: its id and dedupe key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StoredRow {
    id: i64,
    /// (`sequence_number`, `sent_at` in microseconds), when the message has both.
    key: Option<(i64, i64)>,
}

fn key_of(new: &NewMessage<'_>) -> Option<(i64, Timestamp)> {
    let record = &new.message.record;
    record.sequence_number.zip(record.sent_from_device)
}

/// A row of `id, sequence_number, sent_at`: a stored message and its dedupe key.
#[derive(sqlx::FromRow)]
struct KeyRow {
    id: i64,
    sequence_number: Option<i64>,
    sent_at: Option<i64>,
}

impl KeyRow {
    fn into_stored(self) -> StoredRow {
        StoredRow {
            id: self.id,
            key: self.sequence_number.zip(self.sent_at),
        }
    }
}

/// Rows of `id, sequence_number, sent_at`.
fn stored_rows(rows: &[AnyRow]) -> StoreResult<Vec<StoredRow>> {
    rows.iter()
        .map(|row| Ok(KeyRow::from_row(row)?.into_stored()))
        .collect()
}

/// Lines the rows an insert stored (any order) up with the messages it was offered: each
/// message its new id, or None where the dedupe index skipped it. Ids are handed out in
/// VALUES order, so in id order the rows are the stored messages in order; a message with
/// a key was stored exactly when a row has its key (keys are unique among the offered).
fn match_inserted(
    offered: &[NewMessage<'_>],
    mut stored: Vec<StoredRow>,
) -> StoreResult<Vec<Option<i64>>> {
    stored.sort_unstable_by_key(|row| row.id);
    let stored_keys: HashSet<(i64, i64)> = stored.iter().filter_map(|row| row.key).collect();
    let mut rows = stored.into_iter();
    let mut ids = Vec::with_capacity(offered.len());
    for new in offered {
        let key = key_of(new).map(|(sequence, sent)| (sequence, to_micros(sent)));
        if key.is_some_and(|key| !stored_keys.contains(&key)) {
            ids.push(None);
            continue;
        }
        match rows.next() {
            Some(row) if row.key == key => ids.push(Some(row.id)),
            found => {
                return Err(StoreError::Corrupt(format!(
                    "an insert's rows do not line up with its messages: {found:?} for {key:?}"
                )));
            }
        }
    }
    if let Some(extra) = rows.next() {
        return Err(StoreError::Corrupt(format!(
            "an insert stored a row none of its messages has: {extra:?}"
        )));
    }
    Ok(ids)
}

/// `insert_new_messages`' statement for `rows` messages. On SQLite, in the same round
/// trip, the largest id before it and what it stored (sqlx's `Any` driver drops SQLite's
/// last insert id; `RETURNING` cost each batch 100 rows passed back from SQLite's
/// connection thread one by one: a quarter of the insert's time on the one writer).
fn insert_sql(backend: Backend, rows: usize) -> String {
    let insert = format!(
        "INSERT INTO mo_messages (tenant_code, device_id, sequence_number, sent_at,
            received_at, message_time, message_type, latitude, longitude, speed, heading,
            emergency_state, doc, geofences, file, attachment, etag)
         VALUES {}
         ON CONFLICT (tenant_code, device_id, sequence_number, sent_at)
            WHERE sequence_number IS NOT NULL AND sent_at IS NOT NULL DO NOTHING",
        backend.value_rows(rows, INSERT_COLUMNS)
    );
    match backend {
        Backend::Sqlite => format!(
            "SELECT COALESCE(MAX(id), 0) AS before_id FROM mo_messages; {insert};
             SELECT last_insert_rowid() AS last_id, changes() AS stored"
        ),
        Backend::Postgres => format!("{insert} RETURNING id, sequence_number, sent_at"),
    }
}

#[cfg(test)]
mod tests {
    use super::{KeyLookup, NewMessage, StoredRow, consecutive_ids, match_inserted, to_micros};
    use crate::domain::mo_message::{MoMessage, StorableMessage};
    use jiff::Timestamp;

    fn message(sequence: Option<i64>, sent_second: Option<i64>) -> StorableMessage {
        StorableMessage {
            record: MoMessage {
                sequence_number: sequence,
                sent_from_device: sent_second.and_then(|s| Timestamp::from_second(s).ok()),
                ..Default::default()
            },
            doc: "{}".into(),
            file: None,
            attachment: None,
        }
    }

    fn offered(messages: &[StorableMessage]) -> Vec<NewMessage<'_>> {
        messages
            .iter()
            .map(|message| NewMessage {
                message,
                geofences: None,
                received_at: Timestamp::UNIX_EPOCH,
                message_time: Timestamp::UNIX_EPOCH,
            })
            .collect()
    }

    fn row(id: i64, sequence: Option<i64>, sent_second: Option<i64>) -> StoredRow {
        let sent = sent_second.and_then(|s| Timestamp::from_second(s).ok());
        StoredRow {
            id,
            key: sequence.zip(sent.map(to_micros)),
        }
    }

    #[test]
    fn stored_rows_line_up_with_the_messages_in_id_order() {
        let messages = [
            message(Some(1), Some(10)),
            message(None, Some(11)),
            message(Some(3), Some(12)),
            message(Some(4), None),
        ];
        // Returned in any order (PostgreSQL's RETURNING promises none).
        let stored = vec![
            row(42, Some(3), Some(12)),
            row(40, Some(1), Some(10)),
            row(43, Some(4), None),
            row(41, None, Some(11)),
        ];
        assert_eq!(
            match_inserted(&offered(&messages), stored).ok(),
            Some(vec![Some(40), Some(41), Some(42), Some(43)])
        );
    }

    #[test]
    fn messages_the_dedupe_index_skipped_have_no_id() {
        let messages = [
            message(Some(1), Some(10)),
            message(None, None),
            message(Some(2), Some(11)),
            message(Some(3), Some(12)),
        ];
        // 1 and 3 were stored before; ids may skip where a row was refused.
        let stored = vec![row(7, None, None), row(9, Some(2), Some(11))];
        assert_eq!(
            match_inserted(&offered(&messages), stored).ok(),
            Some(vec![None, Some(7), Some(9), None])
        );
        let none_stored = match_inserted(&offered(&messages[..1]), Vec::new());
        assert_eq!(none_stored.ok(), Some(vec![None]));
    }

    #[test]
    fn rows_that_do_not_line_up_are_an_error() {
        let messages = [message(None, None), message(None, None)];
        // One row for two keyless messages: neither can be skipped, so one is missing.
        assert!(match_inserted(&offered(&messages), vec![row(1, None, None)]).is_err());
        // A row with a key no message has.
        let keyed = [message(Some(1), Some(10))];
        assert!(match_inserted(&offered(&keyed), vec![row(1, Some(2), Some(10))]).is_err());
    }

    #[test]
    fn an_insert_s_ids_end_at_the_last_one() {
        assert_eq!(consecutive_ids(3, 3, 12).ok(), Some(vec![10, 11, 12]));
        assert_eq!(consecutive_ids(1, 1, 1).ok(), Some(vec![1]));
    }

    #[test]
    fn an_insert_that_did_not_store_every_row_is_an_error() {
        assert!(consecutive_ids(3, 2, 12).is_err());
        assert!(consecutive_ids(3, 3, 2).is_err());
    }

    #[test]
    fn a_run_of_sequence_numbers_is_read_as_one_range() {
        let run: Vec<i64> = (1000..1100).collect();
        assert_eq!(
            KeyLookup::for_keys(&run),
            KeyLookup::Range {
                least: 1000,
                greatest: 1099
            }
        );
        // Out of order, with gaps, still short: a range.
        assert_eq!(
            KeyLookup::for_keys(&[7, 3, 12]),
            KeyLookup::Range {
                least: 3,
                greatest: 12
            }
        );
    }

    #[test]
    fn spread_out_sequence_numbers_are_each_looked_up() {
        assert_eq!(KeyLookup::for_keys(&[1, 1_000_000]), KeyLookup::Each(2));
        // No overflow at the ends of the range.
        assert_eq!(
            KeyLookup::for_keys(&[i64::MIN, i64::MAX]),
            KeyLookup::Each(2)
        );
    }
}
