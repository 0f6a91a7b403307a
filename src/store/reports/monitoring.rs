//! What MonitoringReport reads (docs/monitoring.md, "MonitoringReport"): the monitoring
//! sessions of the selected tenants overlapping a window, each with its counts in the
//! window (check-ins, missed check-ins, whether it became overdue, its device's alerts
//! during it), streamed in the report's row order: sessions of people by user id, then
//! those that watched no user by device. One query; memory stays bounded.

use std::sync::LazyLock;

use futures::stream::{BoxStream, StreamExt};
use sqlx::FromRow;
use sqlx::any::AnyRow;

use crate::domain::ids::TenantCode;
use crate::domain::monitoring::SessionEventKind;
use crate::domain::report::Window;
use crate::domain::report::monitoring::{MonitoredPerson, SessionFigures};
use crate::domain::user::UserDetails;
use crate::store::{Store, StoreError, StoreResult, TenantSelection, stored_time, to_micros};

/// `{scope}` is the tenant condition. $1 the tenant (or the subtree's path pattern), $2
/// and $3 the window [from, to), $4 now (the end of a current session), $5–$7 the
/// event kinds counted. A session overlaps the window when it starts before its end and
/// either starts inside it or lasts (to its end, or to now) past its start.
fn sessions_sql(join: &str, scope: &str) -> String {
    let events = |placeholder: &str| {
        format!(
            "(SELECT COUNT(*) FROM monitoring_session_events e
               WHERE e.session_id = m.id AND e.kind = {placeholder}
                 AND e.at >= $2 AND e.at < $3)"
        )
    };
    format!(
        "SELECT m.tenant_code, m.device_id, m.user_id, m.started_at, m.ended_at,
            u.tenant_code AS user_tenant_code, u.doc AS user_doc,
            {} AS check_ins, {} AS missed_check_ins, {} AS overdue_events,
            (SELECT COUNT(*) FROM alerts a
              WHERE a.tenant_code = m.tenant_code AND a.device_id = m.device_id
                AND a.raised_at >= m.started_at AND a.raised_at <= COALESCE(m.ended_at, $4)
                AND a.raised_at >= $2 AND a.raised_at < $3) AS alerts
         FROM monitoring_sessions m {join}
         LEFT JOIN users u ON u.id = m.user_id
         WHERE {scope} AND m.started_at < $3
           AND (m.started_at >= $2 OR COALESCE(m.ended_at, $4) > $2)
         ORDER BY CASE WHEN m.user_id IS NULL THEN 1 ELSE 0 END, m.user_id, m.device_id,
            m.tenant_code, m.id",
        events("$5"),
        events("$6"),
        events("$7"),
    )
}

/// A row of `sessions_sql`.
#[derive(sqlx::FromRow)]
struct MonitoredSessionRow {
    tenant_code: String,
    device_id: String,
    user_id: Option<i64>,
    started_at: i64,
    ended_at: Option<i64>,
    user_tenant_code: Option<String>,
    user_doc: Option<String>,
    check_ins: i64,
    missed_check_ins: i64,
    overdue_events: i64,
    alerts: i64,
}

impl MonitoredSessionRow {
    fn person(&self) -> StoreResult<Option<MonitoredPerson>> {
        let (Some(user_id), Some(tenant), Some(doc)) =
            (self.user_id, &self.user_tenant_code, &self.user_doc)
        else {
            return Ok(None);
        };
        let user: UserDetails =
            serde_json::from_str(doc).map_err(|e| StoreError::Corrupt(format!("user doc: {e}")))?;
        Ok(Some(MonitoredPerson {
            user_id,
            tenant_code: TenantCode::from_store(tenant.clone()),
            first_name: user.first_name,
            last_name: user.last_name,
        }))
    }

    fn into_figures(self) -> StoreResult<SessionFigures> {
        Ok(SessionFigures {
            person: self.person()?,
            tenant_code: TenantCode::from_store(self.tenant_code),
            device_id: self.device_id,
            started_at: stored_time(self.started_at)?,
            ended_at: self.ended_at.map(stored_time).transpose()?,
            check_ins: self.check_ins,
            missed_check_ins: self.missed_check_ins,
            overdue: self.overdue_events > 0,
            alerts: self.alerts,
        })
    }
}

fn figures_from_row(row: &AnyRow) -> StoreResult<SessionFigures> {
    MonitoredSessionRow::from_row(row)?.into_figures()
}

/// The statement for one tenant, and for a subtree (built once each).
static OF_TENANT: LazyLock<String> = LazyLock::new(|| sessions_sql("", "m.tenant_code = $1"));
static OF_SUBTREE: LazyLock<String> =
    LazyLock::new(|| sessions_sql("JOIN tenants t ON t.code = m.tenant_code", "t.path LIKE $1"));

/// The event kinds counted, in the order of their placeholders ($5–$7).
const COUNTED: [SessionEventKind; 3] = [
    SessionEventKind::CheckIn,
    SessionEventKind::MissedCheckIn,
    SessionEventKind::Overdue,
];

impl Store {
    /// The monitoring sessions of `tenants` overlapping `window` (a current one lasting
    /// until `now`), with their counts in the window, as they are read: people's
    /// sessions in user id order, then the others in device order.
    pub fn monitored_sessions<'a>(
        &'a self,
        tenants: &TenantSelection,
        window: Window,
        now: jiff::Timestamp,
    ) -> BoxStream<'a, StoreResult<SessionFigures>> {
        let (sql, key): (&'static str, String) = match tenants {
            TenantSelection::Tenant(code) => (&OF_TENANT, code.to_string()),
            TenantSelection::Subtree(path) => (&OF_SUBTREE, format!("{path}%")),
        };
        let mut query = sqlx::query(sql)
            .bind(key)
            .bind(to_micros(window.from))
            .bind(to_micros(window.to))
            .bind(to_micros(now));
        for kind in COUNTED {
            query = query.bind(kind.as_str());
        }
        query
            .fetch(&self.pool)
            .map(|row| figures_from_row(&row?))
            .boxed()
    }
}
