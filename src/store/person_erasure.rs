//! Erasing a person (DESIGN §15, `POST /V2/{t}/users/{id}/erase`), in one transaction:
//! their devices' messages and positions go; their name and contact details are replaced
//! by `[erased]` wherever the platform wrote them (alerts and their timelines,
//! deliveries, monitoring sessions and their lines, the audit log's actors); their
//! account stays as an anonymous, disabled record so what refers to it still resolves.

use super::audit_log::record;
use super::user_admin::keep_root_administrator;
use super::users::user_event;
use super::{Store, StoreError, StoreResult, Tx, new_etag, to_micros};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{TenantCode, UserId};
use crate::domain::time::now;
use crate::domain::user::User;
use crate::domain::webhook_event::EventType;

/// What replaces a name, a contact detail or a message body.
pub const ERASED: &str = "[erased]";

/// Whom to erase, and what identifies them in free text.
pub struct Erasure<'a> {
    pub id: UserId,
    /// Their tenant's materialised path: the text is replaced within its subtree.
    pub tenant_path: &'a str,
    /// Their devices, each (tenant, DeviceId).
    pub devices: &'a [(TenantCode, String)],
    /// Their username, full name and phone numbers (each at least 3 characters).
    pub identifiers: &'a [String],
}

/// (table, column, the filter that keeps it to the subtree `$2`) of every column that
/// may hold a person's name or contact details.
const TEXT_COLUMNS: &[(&str, &str, &str)] = &[
    ("alerts", "acknowledged_by", TENANT),
    ("alerts", "resolved_by", TENANT),
    ("alerts", "resolution", TENANT),
    ("alert_events", "actor", ALERT),
    ("alert_events", "text", ALERT),
    ("deliveries", "target", TENANT),
    ("deliveries", "subject", TENANT),
    ("deliveries", "body", TENANT),
    ("monitoring_sessions", "started_by", TENANT),
    ("monitoring_sessions", "ended_by", TENANT),
    ("monitoring_sessions", "end_reason", TENANT),
    ("monitoring_session_events", "actor", TENANT),
    ("monitoring_session_events", "detail", TENANT),
    ("audit_log", "actor", TENANT),
];
const TENANT: &str = "tenant_code IN (SELECT code FROM tenants WHERE path LIKE $2)";
const ALERT: &str = "alert_id IN (SELECT a.id FROM alerts a JOIN tenants t ON t.code = a.tenant_code WHERE t.path LIKE $2)";

impl Store {
    /// Erases the person. `Conflict` while one of their devices has an open or
    /// acknowledged alert or a current monitoring session (nothing is changed).
    pub async fn erase_person(&self, e: Erasure<'_>, audit: &Audit) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        keep_root_administrator(&mut tx, e.id, false).await?;
        for (tenant, device) in e.devices {
            refuse_while_active(&mut tx, tenant, device).await?;
        }
        for (tenant, device) in e.devices {
            erase_device_data(&mut tx, tenant, device).await?;
        }
        let subtree = format!("{}%", e.tenant_path);
        for identifier in e.identifiers.iter().filter(|i| i.chars().count() >= 3) {
            for (table, column, filter) in TEXT_COLUMNS {
                let sql = format!(
                    "UPDATE {table} SET {column} = REPLACE({column}, $1, '{ERASED}')
                     WHERE {column} LIKE '%' || $1 || '%' AND {filter}"
                );
                sqlx::query(&sql)
                    .bind(identifier)
                    .bind(&subtree)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        anonymise_account(&mut tx, e.id).await?;
        user_event(&mut tx, e.id, EventType::Updated).await?;
        record(&mut tx, audit, AuditAction::Erase, ResourceType::User, e.id).await?;
        tx.commit().await?;
        self.users.remove(&e.id.get());
        self.forget_user_sessions(e.id);
        Ok(())
    }
}

async fn refuse_while_active(tx: &mut Tx, tenant: &TenantCode, device: &str) -> StoreResult<()> {
    let open = sqlx::query(
        "SELECT id FROM alerts WHERE tenant_code = $1 AND device_id = $2
           AND status IN ('Open', 'Acknowledged')
         UNION ALL
         SELECT id FROM monitoring_sessions WHERE tenant_code = $1 AND device_id = $2
           AND ended_at IS NULL",
    )
    .bind(tenant.as_str())
    .bind(device)
    .fetch_optional(&mut **tx)
    .await?;
    match open {
        Some(_) => Err(StoreError::Conflict(format!(
            "device {device} has an open alert or a current monitoring session: resolve or end it first"
        ))),
        None => Ok(()),
    }
}

/// The device's messages, positions and what was written about its person's movements.
async fn erase_device_data(tx: &mut Tx, tenant: &TenantCode, device: &str) -> StoreResult<()> {
    let statements = [
        "DELETE FROM mo_messages WHERE tenant_code = $1 AND device_id = $2",
        "UPDATE device_states SET latitude = NULL, longitude = NULL, speed = NULL,
            heading = NULL, altitude = NULL, gps_at = NULL, geofences = '[]'
         WHERE tenant_code = $1 AND device_id = $2",
        "UPDATE alerts SET latitude = NULL, longitude = NULL, geofences = '[]'
         WHERE tenant_code = $1 AND device_id = $2",
        "UPDATE alert_events SET latitude = NULL, longitude = NULL
         WHERE alert_id IN (SELECT id FROM alerts WHERE tenant_code = $1 AND device_id = $2)",
        "UPDATE deliveries SET body = '[erased]', subject = NULL
         WHERE tenant_code = $1 AND (device_id = $2
            OR alert_id IN (SELECT id FROM alerts WHERE tenant_code = $1 AND device_id = $2))",
        "UPDATE monitoring_sessions SET note = NULL WHERE tenant_code = $1 AND device_id = $2",
        "UPDATE monitoring_session_events SET detail = NULL
         WHERE session_id IN (SELECT id FROM monitoring_sessions
                              WHERE tenant_code = $1 AND device_id = $2)",
    ];
    for sql in statements {
        sqlx::query(sql)
            .bind(tenant.as_str())
            .bind(device)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// The account kept as `erased-<id>@erased.invalid`: disabled, no password, no details,
/// no photo, an empty profile, no sessions.
async fn anonymise_account(tx: &mut Tx, id: UserId) -> StoreResult<()> {
    let username = format!("erased-{}@erased.invalid", id.get());
    sqlx::query(
        "UPDATE users SET username = $1, username_key = $2, password_hash = NULL,
            is_disabled = 1, doc = '{}', photo = NULL, profile_doc = '{}',
            etag = $3, updated_at = $4
         WHERE id = $5",
    )
    .bind(&username)
    .bind(User::username_key(&username))
    .bind(new_etag())
    .bind(to_micros(now()))
    .bind(id.get())
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM sessions WHERE user_id = $1")
        .bind(id.get())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
