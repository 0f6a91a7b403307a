//! An alert's shared record (`alert_events`): each step — raised, a further match, an
//! escalation round, acknowledged, a note, resolved — written in the transaction that
//! made it; the timeline merges them with the alert's deliveries, read as they are now.
//! The API's actions on an alert (acknowledge, resolve, note) commit here together with
//! their step and the stream's announcement.

use jiff::Timestamp;
use sqlx::FromRow;

use super::stored;
use super::stored_time;
use super::{
    Float, Key, Store, StoreError, StoreResult, VersionedRow, WriteTx, from_micros, new_etag,
    to_micros,
};
use crate::domain::alert::{
    Alert, AlertStatus, Notified, Outcome, TimelineEntry, TimelineKind, merge_timeline,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::delivery::{Channel, DeliveryStatus};
use crate::domain::ids::{AlertId, DeliveryId, MoMessageId, TenantCode};
use crate::domain::push_subscription::PushPayload;
use crate::domain::tenant::TenantNode;
use crate::store::PushCause;
use crate::store::{StreamAnnouncement, StreamRecord};
use std::sync::Arc;

/// A step to record on an alert's timeline.
#[derive(Debug, Clone)]
pub struct AlertEvent<'a> {
    pub kind: TimelineKind,
    pub at: Timestamp,
    /// None: the system.
    pub by: Option<&'a str>,
    pub message_id: Option<MoMessageId>,
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

/// An `alert_events` row as `EVENT_COLUMNS` selects it.
#[derive(sqlx::FromRow)]
struct EventRow {
    kind: String,
    at: i64,
    actor: Option<String>,
    message_id: Option<i64>,
    latitude: Option<f64>,
    longitude: Option<f64>,
    count: Option<i64>,
    text: Option<String>,
    outcome: Option<String>,
    notified: Option<String>,
}

impl EventRow {
    /// The step as the timeline shows it.
    fn into_entry(self) -> StoreResult<TimelineEntry> {
        let kind: TimelineKind = stored(&self.kind)?;
        let at = stored_time(self.at)?;
        let mut entry = TimelineEntry::new(kind, at, self.actor);
        match kind {
            TimelineKind::Raised | TimelineKind::Matched => {
                entry.message_id = self.message_id.map(MoMessageId::new);
                entry.latitude = self.latitude;
                entry.longitude = self.longitude;
                entry.match_count = self.count.filter(|_| kind == TimelineKind::Matched);
            }
            TimelineKind::Escalated => {
                entry.round = self.count;
                entry.notified = Some(
                    self.notified
                        .as_deref()
                        .map(serde_json::from_str)
                        .transpose()
                        .map_err(|e| StoreError::Corrupt(format!("escalation notified: {e}")))?
                        .unwrap_or_default(),
                );
            }
            TimelineKind::EscalationStep => {
                // A policy's step (`store/escalation_steps.rs`): count is its number,
                // text its instructions.
                entry.step = self.count;
                entry.instructions = self.text;
                entry.notified = Some(
                    self.notified
                        .as_deref()
                        .map(serde_json::from_str)
                        .transpose()
                        .map_err(|e| StoreError::Corrupt(format!("step notified: {e}")))?
                        .unwrap_or_default(),
                );
            }
            TimelineKind::Acknowledged => entry.note = self.text,
            TimelineKind::Note => entry.text = self.text,
            TimelineKind::Resolved => {
                entry.resolution = self.text;
                entry.outcome = self.outcome.as_deref().map(stored).transpose()?;
            }
            TimelineKind::Delivery => {}
        }
        Ok(entry)
    }
}

/// A `deliveries` row as the timeline selects it.
#[derive(sqlx::FromRow)]
struct DeliveryRow {
    id: i64,
    channel: String,
    target: Option<String>,
    status: String,
    attempts: i64,
    created_at: i64,
    sent_at: Option<i64>,
    last_error: Option<String>,
}

impl DeliveryRow {
    fn into_entry(self) -> StoreResult<TimelineEntry> {
        let at = stored_time(self.created_at)?;
        let mut entry = TimelineEntry::new(TimelineKind::Delivery, at, None);
        entry.delivery_id = Some(DeliveryId::new(self.id));
        entry.channel = Some(stored::<Channel>(&self.channel)?);
        entry.target = self.target;
        entry.status = Some(stored::<DeliveryStatus>(&self.status)?);
        entry.attempts = Some(self.attempts);
        entry.sent_at = from_micros(self.sent_at)?;
        entry.last_error = self.last_error;
        Ok(entry)
    }
}

impl WriteTx {
    /// Changes alert `id` as `action` says, by `by` at `at`, if its status allows;
    /// answers the step to record.
    async fn apply_alert_action<'a>(
        &mut self,
        id: AlertId,
        by: &'a str,
        action: AlertAction<'a>,
        at: Timestamp,
    ) -> StoreResult<AlertEvent<'a>> {
        let current: String = sqlx::query_scalar("SELECT status FROM alerts WHERE id = $1")
            .bind(id.get())
            .fetch_one(&mut *self.tx)
            .await?;
        let current: AlertStatus = stored(&current)?;
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
                .bind(id.get())
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
                .bind(id.get())
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
                .bind(id.get())
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
        alert_id: AlertId,
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
        .bind(alert_id.get())
        .bind(event.kind.as_str())
        .bind(to_micros(event.at))
        .bind(event.by)
        .bind(event.message_id.map(MoMessageId::get))
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

    /// Records a further match (`event`, kind `Matched`, its count the alert's
    /// MatchCount) as one collapsed line: if the alert's newest step is a `Matched` one,
    /// that step becomes this match (its time, message, position and count); otherwise a
    /// new `Matched` step is added (so matches after an acknowledgement start a new line).
    pub async fn record_match(
        &mut self,
        alert_id: AlertId,
        event: &AlertEvent<'_>,
    ) -> StoreResult<()> {
        let newest: Option<(i64, String)> = sqlx::query_as(
            "SELECT id, kind FROM alert_events WHERE alert_id = $1 ORDER BY id DESC LIMIT 1",
        )
        .bind(alert_id.get())
        .fetch_optional(&mut *self.tx)
        .await?;
        let Some((id, _)) = newest.filter(|(_, kind)| kind == TimelineKind::Matched.as_str())
        else {
            return self.record_alert_event(alert_id, event).await;
        };
        sqlx::query(
            "UPDATE alert_events SET at = $1, message_id = $2, latitude = $3, longitude = $4,
                count = $5
             WHERE id = $6",
        )
        .bind(to_micros(event.at))
        .bind(event.message_id.map(MoMessageId::get))
        .bind(Float(event.position.map(|p| p.0)))
        .bind(Float(event.position.map(|p| p.1)))
        .bind(event.count)
        .bind(id)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    /// Alert `id` as this transaction sees it.
    pub async fn alert(&mut self, id: AlertId) -> StoreResult<Alert> {
        let row = sqlx::query(&format!(
            "SELECT {} FROM alerts a WHERE a.id = $1",
            super::alerts::COLUMNS
        ))
        .bind(id.get())
        .fetch_one(&mut *self.tx)
        .await?;
        super::alerts::alert_from_row(&row)
    }

    /// Announces the change to `alert` on the live stream once this transaction is
    /// committed (`WriteTx::announce`).
    pub fn announce_alert(&mut self, node: &TenantNode, alert: &Alert) {
        let record = StreamRecord::Alert(Arc::new(alert.clone()));
        self.announce(StreamAnnouncement::of(node, &alert.device_id, vec![record]));
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
        id: AlertId,
        by: &str,
        action: AlertAction<'_>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<(Alert, TimelineEntry)> {
        let mut tx = self.begin().await?;
        let keys = [Key::Id(id.get()), Key::Text(&node.code)];
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
        if let AlertAction::Acknowledge { .. } = action {
            // The person whose alert it is hears of it in the worker app (§12).
            let push = PushPayload::for_acknowledgement(&alert.notification_name, by);
            let cause = PushCause {
                alert_id: Some(id),
                ..PushCause::default()
            };
            tx.queue_pushes(&node.code, &alert.device_id, &push, cause)
                .await?;
        }
        tx.announce_alert(node, &alert);
        tx.commit().await?;
        Ok((alert, action.timeline_entry(&event, by)))
    }

    /// Alert `id`'s timeline (it must be `tenant_code`'s: `None` otherwise), oldest first:
    /// its recorded steps and its deliveries with their current status.
    pub async fn alert_timeline(
        &self,
        tenant_code: &TenantCode,
        id: AlertId,
    ) -> StoreResult<Option<Vec<TimelineEntry>>> {
        let exists = sqlx::query("SELECT id FROM alerts WHERE id = $1 AND tenant_code = $2")
            .bind(id.get())
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        if exists.is_none() {
            return Ok(None);
        }
        let steps = sqlx::query(&format!(
            "SELECT {EVENT_COLUMNS} FROM alert_events WHERE alert_id = $1 ORDER BY id"
        ))
        .bind(id.get())
        .fetch_all(&self.pool)
        .await?;
        let deliveries = sqlx::query(
            "SELECT id, channel, target, status, attempts, created_at, sent_at, last_error
             FROM deliveries WHERE alert_id = $1 AND tenant_code = $2 ORDER BY id",
        )
        .bind(id.get())
        .bind(tenant_code.as_str())
        .fetch_all(&self.pool)
        .await?;
        let steps = steps
            .iter()
            .map(|row| EventRow::from_row(row)?.into_entry())
            .collect::<StoreResult<_>>()?;
        let deliveries = deliveries
            .iter()
            .map(|row| DeliveryRow::from_row(row)?.into_entry())
            .collect::<StoreResult<_>>()?;
        Ok(Some(merge_timeline(steps, deliveries)))
    }
}
