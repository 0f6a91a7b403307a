//! An alert's shared record (`alert_events`): each step — raised, a further match, an
//! escalation round, acknowledged, a note, resolved — written in the transaction that
//! made it; the timeline merges them with the alert's deliveries, read as they are now.
//! The API's actions on an alert (acknowledge, resolve, note) commit here together with
//! their step and the stream's announcement.

use jiff::Timestamp;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::{
    Float, Key, Store, StoreError, StoreResult, VersionedRow, WriteTx, from_micros, new_etag,
    to_micros,
};
use crate::domain::alert::{
    Alert, AlertStatus, Notified, Outcome, TimelineEntry, TimelineKind, merge_timeline,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::tenant::TenantNode;
use crate::store::StreamAnnouncement;

/// A step to record on an alert's timeline.
#[derive(Debug, Clone)]
pub struct AlertEvent<'a> {
    pub kind: TimelineKind,
    pub at: Timestamp,
    /// None: the system.
    pub by: Option<&'a str>,
    pub message_id: Option<i64>,
    pub position: Option<(f64, f64)>,
    /// Matched: the MatchCount after it; Escalated: the round.
    pub count: Option<i64>,
    /// Note's text, Acknowledged's note, Resolved's resolution.
    pub text: Option<&'a str>,
    pub outcome: Option<Outcome>,
    pub notified: Option<&'a [Notified]>,
}

impl<'a> AlertEvent<'a> {
    pub fn new(kind: TimelineKind, at: Timestamp, by: Option<&'a str>) -> Self {
        Self {
            kind,
            at,
            by,
            message_id: None,
            position: None,
            count: None,
            text: None,
            outcome: None,
            notified: None,
        }
    }
}

/// What a caller does to an alert through the API.
#[derive(Debug, Clone, Copy)]
pub enum AlertAction<'a> {
    /// `Open` → `Acknowledged` (the first acknowledgement wins), with an optional note.
    Acknowledge { note: Option<&'a str> },
    /// `Open` or `Acknowledged` → `Resolved`.
    Resolve {
        resolution: Option<&'a str>,
        outcome: Option<Outcome>,
    },
    /// A note, in any status (a note after resolution is follow-up).
    Note { text: &'a str },
}

impl AlertAction<'_> {
    fn audit_action(&self) -> AuditAction {
        match self {
            AlertAction::Acknowledge { .. } => AuditAction::Acknowledge,
            AlertAction::Resolve { .. } => AuditAction::Resolve,
            AlertAction::Note { .. } => AuditAction::Note,
        }
    }

    /// The step `event` (this action's, by `by`) as the timeline shows it.
    fn timeline_entry(&self, event: &AlertEvent<'_>, by: &str) -> TimelineEntry {
        let mut entry = TimelineEntry::new(event.kind, event.at, Some(by.to_string()));
        match *self {
            AlertAction::Acknowledge { note } => entry.note = note.map(str::to_string),
            AlertAction::Resolve {
                resolution,
                outcome,
            } => {
                entry.resolution = resolution.map(str::to_string);
                entry.outcome = outcome;
            }
            AlertAction::Note { text } => entry.text = Some(text.to_string()),
        }
        entry
    }
}

/// `Conflict` unless an alert in status `current` may become `to` (from one of `from`).
fn check_transition(
    current: AlertStatus,
    from: &[AlertStatus],
    to: AlertStatus,
) -> StoreResult<()> {
    if current == to {
        return Err(StoreError::Conflict(format!("the alert is already {to}")));
    }
    if !from.contains(&current) {
        return Err(StoreError::Conflict(format!(
            "the alert is {current}; it cannot become {to}"
        )));
    }
    Ok(())
}

const EVENT_COLUMNS: &str =
    "kind, at, actor, message_id, latitude, longitude, count, text, outcome, notified";

/// An `alert_events` row as a timeline entry.
fn entry_from_row(row: &AnyRow) -> StoreResult<TimelineEntry> {
    let kind: String = row.try_get("kind")?;
    let kind = TimelineKind::parse(&kind)
        .ok_or_else(|| StoreError::Corrupt(format!("alert event kind {kind}")))?;
    let at = from_micros(Some(row.try_get("at")?))?
        .ok_or_else(|| StoreError::Corrupt("alert event time".into()))?;
    let mut entry = TimelineEntry::new(kind, at, row.try_get("actor")?);
    let count: Option<i64> = row.try_get("count")?;
    let text: Option<String> = row.try_get("text")?;
    match kind {
        TimelineKind::Raised | TimelineKind::Matched => {
            entry.message_id = row
                .try_get::<Option<i64>, _>("message_id")?
                .map(|id| id.to_string());
            entry.latitude = row.try_get("latitude")?;
            entry.longitude = row.try_get("longitude")?;
            entry.match_count = count.filter(|_| kind == TimelineKind::Matched);
        }
        TimelineKind::Escalated => {
            entry.round = count;
            let notified: Option<String> = row.try_get("notified")?;
            entry.notified = Some(
                notified
                    .as_deref()
                    .map(serde_json::from_str)
                    .transpose()
                    .map_err(|e| StoreError::Corrupt(format!("escalation notified: {e}")))?
                    .unwrap_or_default(),
            );
        }
        TimelineKind::Acknowledged => entry.note = text,
        TimelineKind::Note => entry.text = text,
        TimelineKind::Resolved => {
            entry.resolution = text;
            let outcome: Option<String> = row.try_get("outcome")?;
            entry.outcome = outcome.as_deref().and_then(Outcome::parse);
        }
        TimelineKind::Delivery => {}
    }
    Ok(entry)
}

fn delivery_entry(row: &AnyRow) -> StoreResult<TimelineEntry> {
    let at = from_micros(Some(row.try_get("created_at")?))?
        .ok_or_else(|| StoreError::Corrupt("delivery time".into()))?;
    let mut entry = TimelineEntry::new(TimelineKind::Delivery, at, None);
    entry.delivery_id = Some(row.try_get::<i64, _>("id")?.to_string());
    entry.channel = Some(row.try_get("channel")?);
    entry.target = row.try_get("target")?;
    entry.status = Some(row.try_get("status")?);
    entry.attempts = Some(row.try_get("attempts")?);
    entry.sent_at = from_micros(row.try_get("sent_at")?)?;
    entry.last_error = row.try_get("last_error")?;
    Ok(entry)
}

impl WriteTx {
    /// Changes alert `id` as `action` says, by `by` at `at`, if its status allows;
    /// answers the step to record.
    async fn apply_alert_action<'a>(
        &mut self,
        id: i64,
        by: &'a str,
        action: AlertAction<'a>,
        at: Timestamp,
    ) -> StoreResult<AlertEvent<'a>> {
        let current: AlertStatus = sqlx::query("SELECT status FROM alerts WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *self.tx)
            .await?
            .try_get::<String, _>("status")?
            .parse()
            .map_err(|e| StoreError::Corrupt(format!("alert {id}: {e}")))?;
        Ok(match action {
            AlertAction::Acknowledge { note } => {
                check_transition(current, &[AlertStatus::Open], AlertStatus::Acknowledged)?;
                sqlx::query(
                    "UPDATE alerts SET status = $1, acknowledged_by = $2, acknowledged_at = $3,
                        next_escalation_at = NULL, etag = $4 WHERE id = $5",
                )
                .bind(AlertStatus::Acknowledged.as_str())
                .bind(by)
                .bind(to_micros(at))
                .bind(new_etag())
                .bind(id)
                .execute(&mut *self.tx)
                .await?;
                AlertEvent {
                    text: note,
                    ..AlertEvent::new(TimelineKind::Acknowledged, at, Some(by))
                }
            }
            AlertAction::Resolve {
                resolution,
                outcome,
            } => {
                check_transition(current, &AlertStatus::JOINABLE, AlertStatus::Resolved)?;
                sqlx::query(
                    "UPDATE alerts SET status = $1, resolved_by = $2, resolved_at = $3,
                        resolution = $4, outcome = $5, next_escalation_at = NULL, etag = $6
                     WHERE id = $7",
                )
                .bind(AlertStatus::Resolved.as_str())
                .bind(by)
                .bind(to_micros(at))
                .bind(resolution)
                .bind(outcome.map(Outcome::as_str))
                .bind(new_etag())
                .bind(id)
                .execute(&mut *self.tx)
                .await?;
                AlertEvent {
                    text: resolution,
                    outcome,
                    ..AlertEvent::new(TimelineKind::Resolved, at, Some(by))
                }
            }
            AlertAction::Note { text } => {
                sqlx::query(
                    "UPDATE alerts SET note_count = note_count + 1, etag = $1 WHERE id = $2",
                )
                .bind(new_etag())
                .bind(id)
                .execute(&mut *self.tx)
                .await?;
                AlertEvent {
                    text: Some(text),
                    ..AlertEvent::new(TimelineKind::Note, at, Some(by))
                }
            }
        })
    }
}

impl WriteTx {
    /// Records a step on alert `alert_id`'s timeline, in this transaction.
    pub async fn record_alert_event(
        &mut self,
        alert_id: i64,
        event: &AlertEvent<'_>,
    ) -> StoreResult<()> {
        let notified = event
            .notified
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        sqlx::query(&format!(
            "INSERT INTO alert_events (alert_id, {EVENT_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        ))
        .bind(alert_id)
        .bind(event.kind.as_str())
        .bind(to_micros(event.at))
        .bind(event.by)
        .bind(event.message_id)
        .bind(Float(event.position.map(|p| p.0)))
        .bind(Float(event.position.map(|p| p.1)))
        .bind(event.count)
        .bind(event.text)
        .bind(event.outcome.map(Outcome::as_str))
        .bind(notified)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    /// Alert `id` as this transaction sees it.
    pub async fn alert(&mut self, id: i64) -> StoreResult<Alert> {
        let row = sqlx::query(&format!(
            "SELECT {} FROM alerts a WHERE a.id = $1",
            super::alerts::COLUMNS
        ))
        .bind(id)
        .fetch_one(&mut *self.tx)
        .await?;
        super::alerts::alert_from_row(&row)
    }

    /// Announces alert changes to every process's live stream (PostgreSQL; nothing on
    /// SQLite): call it last, just before `commit` (`announce_stream`).
    pub async fn announce_alert(&mut self, node: &TenantNode, alert: &Alert) -> StoreResult<()> {
        let Some(id) = alert.alert_id.as_deref().and_then(|id| id.parse().ok()) else {
            return Ok(());
        };
        self.announce_stream(&StreamAnnouncement {
            tenant_code: node.code.clone(),
            tenant_path: node.path.clone(),
            device_id: alert.device_id.clone().unwrap_or_default(),
            alerts: vec![id],
            ..Default::default()
        })
        .await
    }
}

impl Store {
    /// Acknowledges, resolves or adds a note to alert `id` of tenant `node`, by `by`: the
    /// change, its step on the timeline and the stream's announcement commit together.
    /// Answers the alert as it now is and the step. `NotFound` outside the tenant,
    /// `PreconditionFailed` when `if_match` names another version, `Conflict` when the
    /// alert's status does not allow the step.
    pub async fn act_on_alert(
        &self,
        node: &TenantNode,
        id: i64,
        by: &str,
        action: AlertAction<'_>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<(Alert, TimelineEntry)> {
        let mut tx = self.begin().await?;
        let keys = [Key::Id(id), Key::Text(&node.code)];
        self.check_version(&mut tx.tx, VersionedRow::by_id("alerts", &keys), if_match)
            .await?;
        let at = crate::domain::time::now();
        let mut event = tx.apply_alert_action(id, by, action, at).await?;
        // Microseconds, as stored: the answer equals what the timeline reads back.
        event.at = from_micros(Some(to_micros(at)))?.unwrap_or(at);
        tx.record_alert_event(id, &event).await?;
        tx.audit(&audit.entry(action.audit_action(), ResourceType::Alert, id))
            .await?;
        let alert = tx.alert(id).await?;
        tx.announce_alert(node, &alert).await?;
        tx.commit().await?;
        Ok((alert, action.timeline_entry(&event, by)))
    }

    /// Alert `id`'s timeline (it must be `tenant_code`'s: `None` otherwise), oldest first:
    /// its recorded steps and its deliveries with their current status.
    pub async fn alert_timeline(
        &self,
        tenant_code: &str,
        id: i64,
    ) -> StoreResult<Option<Vec<TimelineEntry>>> {
        let exists = sqlx::query("SELECT id FROM alerts WHERE id = $1 AND tenant_code = $2")
            .bind(id)
            .bind(tenant_code)
            .fetch_optional(&self.pool)
            .await?;
        if exists.is_none() {
            return Ok(None);
        }
        let steps = sqlx::query(&format!(
            "SELECT {EVENT_COLUMNS} FROM alert_events WHERE alert_id = $1 ORDER BY id"
        ))
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let deliveries = sqlx::query(
            "SELECT id, channel, target, status, attempts, created_at, sent_at, last_error
             FROM deliveries WHERE alert_id = $1 AND tenant_code = $2 ORDER BY id",
        )
        .bind(id)
        .bind(tenant_code)
        .fetch_all(&self.pool)
        .await?;
        let steps = steps
            .iter()
            .map(entry_from_row)
            .collect::<StoreResult<_>>()?;
        let deliveries = deliveries
            .iter()
            .map(delivery_entry)
            .collect::<StoreResult<_>>()?;
        Ok(Some(merge_timeline(steps, deliveries)))
    }
}
