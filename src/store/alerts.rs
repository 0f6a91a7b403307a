//! Alerts: raised or joined inside the ingest (or scheduler) transaction; listed and
//! moved through their workflow by the API.

use jiff::Timestamp;

use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::stored;
use super::stored_time;
use super::{Float, Store, StoreError, StoreResult, WriteTx, from_micros, new_etag, to_micros};
use crate::domain::alert::{Alert, AlertStatus, Outcome};
use crate::domain::ids::{AlertId, DeviceId, MoMessageId, NotificationId, TenantCode};
use crate::domain::notification::Severity;

/// An alert's columns (alias `a`), and its raising message's type and stored record (whose
/// `Message` is the text the worker sent) by subquery: every read of an alert carries
/// them, a `RETURNING` too (`RETURNING_COLUMNS`), so the stream's alert events have them.
pub(super) const COLUMNS: &str = "a.id, a.tenant_code, a.device_id, a.notification_id, a.notification_name, \
     a.severity, a.status, a.raised_at, a.last_match_at, a.match_count, a.latitude, a.longitude, \
     a.geofences, a.message_id, a.late, a.acknowledged_by, a.acknowledged_at, a.resolved_by, \
     a.resolved_at, a.resolution, a.escalation_level, a.etag, a.outcome, a.note_count, \
     a.escalation_policy_id, a.escalation_doc, a.next_escalation_at AS next_step_at, \
     (SELECT m.message_type FROM mo_messages m WHERE m.id = a.message_id) AS message_type, \
     (SELECT m.doc FROM mo_messages m WHERE m.id = a.message_id) AS message_doc";

/// `COLUMNS` for an `INSERT`/`UPDATE … RETURNING` on `alerts` (no alias there).
fn returning_columns() -> String {
    COLUMNS.replace("a.", "alerts.")
}

/// What a match tells an alert.
#[derive(Debug, Clone)]
pub struct AlertMatch<'a> {
    pub tenant_code: &'a TenantCode,
    pub device_id: &'a str,
    pub notification_id: NotificationId,
    pub notification_name: &'a str,
    pub severity: Severity,
    pub at: Timestamp,
    pub position: Option<(f64, f64)>,
    pub geofences: &'a [String],
    pub message_id: Option<MoMessageId>,
    pub late: bool,
    /// When an unacknowledged alert of this severity escalates (None: never).
    pub escalate_at: Option<Timestamp>,
}

/// Which alerts a listing covers.
#[derive(Debug, Clone)]
pub struct AlertFilter<'a> {
    pub tenant_code: &'a TenantCode,
    /// Also the subtenants' (the subtree under this path).
    pub subtree: Option<&'a str>,
    pub status: Option<AlertStatus>,
    pub outcome: Option<Outcome>,
    pub device_id: Option<&'a str>,
    /// Raised at or after (inclusive).
    pub from: Option<Timestamp>,
    /// Raised before (exclusive).
    pub to: Option<Timestamp>,
    /// Ids greater than this.
    pub after: i64,
    pub limit: u32,
}

/// An `alerts` row as `COLUMNS` selects it.
#[derive(sqlx::FromRow)]
struct AlertRow {
    id: i64,
    tenant_code: String,
    device_id: String,
    notification_id: Option<i64>,
    notification_name: String,
    severity: String,
    status: String,
    raised_at: i64,
    last_match_at: i64,
    match_count: i64,
    latitude: Option<f64>,
    longitude: Option<f64>,
    geofences: String,
    message_id: Option<i64>,
    late: i64,
    acknowledged_by: Option<String>,
    acknowledged_at: Option<i64>,
    resolved_by: Option<String>,
    resolved_at: Option<i64>,
    resolution: Option<String>,
    escalation_level: i64,
    etag: String,
    outcome: Option<String>,
    note_count: i64,
    escalation_policy_id: Option<i64>,
    escalation_doc: Option<String>,
    next_step_at: Option<i64>,
    message_type: Option<String>,
    message_doc: Option<String>,
}

/// What an alert shows of its raising message's stored record.
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct MessageText {
    message: Option<String>,
}

impl AlertRow {
    fn into_alert(self) -> StoreResult<Alert> {
        Ok(Alert {
            alert_id: AlertId::new(self.id),
            tenant_code: TenantCode::from_store(self.tenant_code),
            device_id: DeviceId::from_store(self.device_id),
            notification_id: self.notification_id.map(NotificationId::new),
            notification_name: self.notification_name,
            severity: stored(&self.severity)?,
            status: stored(&self.status)?,
            raised_at: stored_time(self.raised_at)?,
            last_match_at: stored_time(self.last_match_at)?,
            match_count: self.match_count,
            latitude: self.latitude,
            longitude: self.longitude,
            geofences: serde_json::from_str(&self.geofences)
                .map_err(|e| StoreError::Corrupt(format!("alert geofences: {e}")))?,
            message_id: self.message_id.map(MoMessageId::new),
            message_type: self.message_type,
            message_text: self
                .message_doc
                .as_deref()
                .map(serde_json::from_str::<MessageText>)
                .transpose()
                .map_err(|e| StoreError::Corrupt(format!("alert's message doc: {e}")))?
                .and_then(|m| m.message),
            late: self.late != 0,
            acknowledged_by: self.acknowledged_by,
            acknowledged_at: from_micros(self.acknowledged_at)?,
            resolved_by: self.resolved_by,
            resolved_at: from_micros(self.resolved_at)?,
            resolution: self.resolution,
            outcome: self.outcome.as_deref().map(stored).transpose()?,
            note_count: self.note_count,
            escalation_level: self.escalation_level,
            escalation: super::escalation_steps::escalation_from(
                self.escalation_doc.as_deref(),
                self.escalation_policy_id,
                self.escalation_level,
                from_micros(self.next_step_at)?,
            )?,
            etag: self.etag,
        })
    }
}

/// A time from a `NOT NULL` column.
pub(super) fn alert_from_row(row: &AnyRow) -> StoreResult<Alert> {
    AlertRow::from_row(row)?.into_alert()
}

/// The alert a match raised or joined.
pub struct MatchedAlert {
    pub alert: Alert,
    /// Whether the match raised it (else it joined an open one).
    pub raised: bool,
}

fn matched_alert(row: &AnyRow, raised: bool) -> StoreResult<MatchedAlert> {
    Ok(MatchedAlert {
        alert: alert_from_row(row)?,
        raised,
    })
}

impl WriteTx {
    /// Joins the open (or acknowledged) alert of this notification and device (of the
    /// match's tenant): its MatchCount and LastMatchAt move, and its position becomes
    /// the match's when the match has one. Else raises a new one.  The device's state row is
    /// locked by the caller, so no other transaction raises one meanwhile.
    pub async fn raise_or_join_alert(&mut self, m: &AlertMatch<'_>) -> StoreResult<MatchedAlert> {
        let sql = format!(
            "UPDATE alerts SET match_count = match_count + 1, last_match_at = $1, etag = $2,
                latitude = COALESCE($6, latitude), longitude = COALESCE($7, longitude)
             WHERE notification_id = $3 AND tenant_code = $4 AND device_id = $5
               AND status IN ({joinable})
             RETURNING {}",
            returning_columns(),
            joinable = AlertStatus::JOINABLE.map(AlertStatus::sql).join(", "),
        );
        let joined = sqlx::query(&sql)
            .bind(to_micros(m.at))
            .bind(new_etag())
            .bind(m.notification_id.get())
            .bind(m.tenant_code.as_str())
            .bind(m.device_id)
            .bind(Float(m.position.map(|p| p.0)))
            .bind(Float(m.position.map(|p| p.1)))
            .fetch_optional(&mut *self.tx)
            .await?;
        if let Some(row) = joined {
            return matched_alert(&row, false);
        }
        let sql = format!(
            "INSERT INTO alerts (tenant_code, device_id, notification_id, notification_name,
                severity, status, raised_at, last_match_at, match_count, latitude, longitude,
                geofences, message_id, late, next_escalation_at, etag)
             VALUES ($1, $2, $3, $4, $5, {open}, $6, $6, 1, $7, $8, $9, $10, $11, $12, $13)
             RETURNING {}",
            returning_columns(),
            open = AlertStatus::Open.sql(),
        );
        // Optional floats: not a cached statement (see `store/mod.rs`, NULL floats).
        let row = sqlx::query(&sql)
            .bind(m.tenant_code.as_str())
            .bind(m.device_id)
            .bind(m.notification_id.get())
            .bind(m.notification_name)
            .bind(m.severity.as_str())
            .bind(to_micros(m.at))
            .bind(Float(m.position.map(|p| p.0)))
            .bind(Float(m.position.map(|p| p.1)))
            .bind(serde_json::to_string(m.geofences).unwrap_or_else(|_| "[]".into()))
            .bind(m.message_id.map(MoMessageId::get))
            .bind(i64::from(m.late))
            .bind(m.escalate_at.map(to_micros))
            .bind(new_etag())
            .fetch_one(&mut *self.tx)
            .await?;
        let raised = alert_from_row(&row)?;
        let follows = self
            .follow_escalation_policy(&super::escalation_steps::RaisedAlert {
                alert_id: raised.alert_id,
                tenant_code: m.tenant_code,
                notification_id: m.notification_id,
                severity: m.severity,
                raised_at: raised.raised_at,
            })
            .await?;
        let alert = if follows {
            // Read back with the policy it follows (the stream's event shows it).
            self.alert(raised.alert_id).await?
        } else {
            raised
        };
        Ok(MatchedAlert {
            alert,
            raised: true,
        })
    }
}

/// The subtree filter: `t.path LIKE $n` when listing subtenants too.
fn scope_filter(filter: &AlertFilter<'_>) -> (&'static str, String) {
    match filter.subtree {
        Some(path) => ("t.path LIKE $1", format!("{path}%")),
        None => ("a.tenant_code = $1", filter.tenant_code.to_string()),
    }
}

impl Store {
    /// A page of alerts in id order.
    pub async fn list_alerts(&self, filter: &AlertFilter<'_>) -> StoreResult<Vec<Alert>> {
        let (scope, key) = scope_filter(filter);
        let sql = format!(
            "SELECT {COLUMNS} FROM alerts a JOIN tenants t ON t.code = a.tenant_code
             WHERE {scope} AND ($2 = '' OR a.status = $2) AND ($3 = '' OR a.device_id = $3)
               AND a.raised_at >= $4 AND a.raised_at < $5 AND a.id > $6
               AND ($8 = '' OR a.outcome = $8)
             ORDER BY a.id LIMIT $7"
        );
        let rows = sqlx::query(&sql)
            .bind(key)
            .bind(filter.status.map_or("", AlertStatus::as_str))
            .bind(filter.device_id.unwrap_or(""))
            .bind(filter.from.map_or(i64::MIN, to_micros))
            .bind(filter.to.map_or(i64::MAX, to_micros))
            .bind(filter.after)
            .bind(i64::from(filter.limit))
            .bind(filter.outcome.map_or("", Outcome::as_str))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(alert_from_row).collect()
    }

    /// An alert of exactly this tenant (`/alerts/{id}` addresses the path tenant's alerts,
    /// as `/users/{x}` does; only the list widens to subtenants).
    pub async fn get_alert(
        &self,
        tenant_code: &TenantCode,
        id: AlertId,
    ) -> StoreResult<Option<Alert>> {
        let sql = format!("SELECT {COLUMNS} FROM alerts a WHERE a.id = $1 AND a.tenant_code = $2");
        let row = sqlx::query(&sql)
            .bind(id.get())
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(alert_from_row).transpose()
    }
}

/// An alert due for an escalation round, as the escalation step sees it (locked).
#[derive(Debug, Clone)]
pub struct DueEscalation {
    pub alert: Alert,
    pub node: crate::domain::tenant::TenantNode,
    pub due: Timestamp,
}

impl Store {
    /// Ids of alerts whose escalation round is due at `at`, earliest first.
    pub async fn due_escalations(&self, at: Timestamp, limit: u32) -> StoreResult<Vec<AlertId>> {
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM alerts WHERE next_escalation_at IS NOT NULL AND next_escalation_at <= $1
             ORDER BY next_escalation_at LIMIT $2",
        )
        .bind(to_micros(at))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        Ok(ids.into_iter().map(AlertId::new).collect())
    }
}

/// What `lock_due_escalation` selects besides the alert's columns.
#[derive(sqlx::FromRow)]
struct DueRow {
    next_escalation_at: Option<i64>,
    parent_code: Option<String>,
    path: String,
}

impl WriteTx {
    /// Locks alert `id` if its escalation is still due at `at` and it is still `Open`
    /// (another process, or an acknowledgement, may have got there first).
    pub async fn lock_due_escalation(
        &mut self,
        id: AlertId,
        at: Timestamp,
    ) -> StoreResult<Option<DueEscalation>> {
        let sql = format!(
            "SELECT {COLUMNS}, a.next_escalation_at, t.parent_code, t.path FROM alerts a
             JOIN tenants t ON t.code = a.tenant_code
             WHERE a.id = $1 AND a.status = {open} AND a.next_escalation_at IS NOT NULL
               AND a.next_escalation_at <= $2{}",
            self.backend.lock_rows_of("a"),
            open = AlertStatus::Open.sql(),
        );
        let row = sqlx::query(&sql)
            .bind(id.get())
            .bind(to_micros(at))
            .fetch_optional(&mut *self.tx)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let alert = alert_from_row(&row)?;
        let due = DueRow::from_row(&row)?;
        let node = crate::domain::tenant::TenantNode {
            code: alert.tenant_code.clone(),
            parent_code: due.parent_code.map(TenantCode::from_store),
            path: due.path,
        };
        let due = from_micros(due.next_escalation_at)?.unwrap_or(at);
        Ok(Some(DueEscalation { alert, node, due }))
    }

    /// Records an escalation round: the new level and when the next is due (None: no more).
    pub async fn escalated(
        &mut self,
        id: AlertId,
        level: i64,
        next: Option<Timestamp>,
    ) -> StoreResult<()> {
        sqlx::query(
            "UPDATE alerts SET escalation_level = $1, next_escalation_at = $2, etag = $3 WHERE id = $4",
        )
        .bind(level)
        .bind(next.map(to_micros))
        .bind(new_etag())
        .bind(id.get())
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }
}
