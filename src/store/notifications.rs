//! Event notifications, tenant level (`group_id` NULL) or group level.

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::address_book::OwnedRow;
use super::audit_log::record;
use super::references::Referrer;
use super::{Key, Owned, Store, StoreResult, VersionedRow, new_etag, to_doc, to_micros};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{NotificationId, TenantCode};
use crate::domain::notification::{EventNotification, NotificationLevel};
use crate::domain::recipient::RecipientReference;
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;

fn group_key(level: NotificationLevel) -> i64 {
    // 0 is never a group id: it stands for "tenant level" in the portable filter below.
    match level {
        NotificationLevel::Tenant => 0,
        NotificationLevel::Group(id) => id.get(),
    }
}

fn group_column(level: NotificationLevel) -> Option<i64> {
    match level {
        NotificationLevel::Tenant => None,
        NotificationLevel::Group(id) => Some(id.get()),
    }
}

fn notification_from_row(row: &AnyRow) -> StoreResult<Owned<EventNotification>> {
    OwnedRow::from_row(row)?.into_owned()
}

const COLUMNS: &str = "id, tenant_code, doc, etag, updated_at";
const AT_LEVEL: &str = "tenant_code = $1 AND COALESCE(group_id, 0) = $2";

/// Keys: tenant code, `group_key`, id.
fn notification_row<'a>(keys: &'a [Key<'a>; 3]) -> VersionedRow<'a> {
    VersionedRow {
        table: "event_notifications",
        column: "etag",
        filter: "tenant_code = $1 AND COALESCE(group_id, 0) = $2 AND id = $3",
        keys,
    }
}

/// A notification replaced (PUT): where it is, its new record and what its recipients
/// name.
pub struct NotificationUpdate<'a> {
    pub node: &'a TenantNode,
    pub level: NotificationLevel,
    pub id: NotificationId,
    pub notification: &'a EventNotification,
    pub references: &'a [RecipientReference],
}

impl Store {
    pub async fn list_notifications(
        &self,
        tenant_code: &TenantCode,
        level: NotificationLevel,
    ) -> StoreResult<Vec<Owned<EventNotification>>> {
        let sql = format!("SELECT {COLUMNS} FROM event_notifications WHERE {AT_LEVEL} ORDER BY id");
        let rows = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(group_key(level))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(notification_from_row).collect()
    }

    /// Every notification, at any level, of the tenants in the subtree rooted at `path`.
    pub async fn list_notifications_in_subtree(
        &self,
        path: &str,
    ) -> StoreResult<Vec<Owned<EventNotification>>> {
        let rows = sqlx::query(
            "SELECT n.id, n.tenant_code, n.doc, n.etag, n.updated_at FROM event_notifications n
             JOIN tenants t ON t.code = n.tenant_code WHERE t.path LIKE $1 ORDER BY n.id",
        )
        .bind(format!("{path}%"))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(notification_from_row).collect()
    }

    pub async fn get_notification(
        &self,
        tenant_code: &TenantCode,
        level: NotificationLevel,
        id: NotificationId,
    ) -> StoreResult<Option<Owned<EventNotification>>> {
        let sql = format!("SELECT {COLUMNS} FROM event_notifications WHERE {AT_LEVEL} AND id = $3");
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(group_key(level))
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(notification_from_row).transpose()
    }

    /// Creates a notification of `node`; its recipients' references are checked and
    /// recorded in the same transaction.
    pub async fn create_notification(
        &self,
        node: &TenantNode,
        level: NotificationLevel,
        notification: &EventNotification,
        references: &[RecipientReference],
        audit: &Audit,
    ) -> StoreResult<NotificationId> {
        let mut tx = self.begin_write().await?;
        self.check_references(&mut tx, node, references).await?;
        self.check_escalation_policy(&mut tx, node, notification.escalation_policy_id)
            .await?;
        let row = sqlx::query(
            "INSERT INTO event_notifications (tenant_code, group_id, doc, etag, updated_at,
                escalation_policy_id)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(node.code.as_str())
        .bind(group_column(level))
        .bind(to_doc(notification)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(notification.escalation_policy_id.map(|p| p.get()))
        .fetch_one(&mut *tx)
        .await?;
        let id = NotificationId::new(row.try_get("id")?);
        self.record_references(&mut tx, Referrer::Notification(id), &node.code, references)
            .await?;
        record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::Notification,
            id.get(),
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Replaces a notification of `node`; its recipients' references are checked and
    /// recorded again in the same transaction.
    pub async fn update_notification(
        &self,
        update: NotificationUpdate<'_>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let NotificationUpdate {
            node,
            level,
            id,
            notification,
            references,
        } = update;
        let mut tx = self.begin_write().await?;
        let keys = [
            Key::Text(&node.code),
            Key::Id(group_key(level)),
            Key::Id(id.get()),
        ];
        self.check_version(&mut tx, notification_row(&keys), if_match)
            .await?;
        self.check_references(&mut tx, node, references).await?;
        self.check_escalation_policy(&mut tx, node, notification.escalation_policy_id)
            .await?;
        sqlx::query(
            "UPDATE event_notifications SET doc = $1, etag = $2, updated_at = $3,
                escalation_policy_id = $4 WHERE id = $5",
        )
        .bind(to_doc(notification)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(notification.escalation_policy_id.map(|p| p.get()))
        .bind(id.get())
        .execute(&mut *tx)
        .await?;
        self.record_references(&mut tx, Referrer::Notification(id), &node.code, references)
            .await?;
        record(
            &mut tx,
            audit,
            AuditAction::Update,
            ResourceType::Notification,
            id.get(),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn delete_notification(
        &self,
        tenant_code: &TenantCode,
        level: NotificationLevel,
        id: NotificationId,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let id = id.get();
        let delete = sqlx::query("DELETE FROM event_notifications WHERE id = $1").bind(id);
        let keys = [
            Key::Text(tenant_code),
            Key::Id(group_key(level)),
            Key::Id(id),
        ];
        let entry = audit.entry(AuditAction::Delete, ResourceType::Notification, id);
        self.write_versioned(notification_row(&keys), if_match, delete, Some(&entry))
            .await
    }
}
