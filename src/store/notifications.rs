//! Event notifications, tenant level (`group_id` NULL) or group level.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Owned, Store, StoreResult, from_doc, new_etag, parse_time, time_text, to_doc};
use crate::domain::notification::{EventNotification, NotificationLevel};
use crate::domain::time::now;

fn group_key(level: NotificationLevel) -> i64 {
    // 0 is never a group id: it stands for "tenant level" in the portable filter below.
    match level {
        NotificationLevel::Tenant => 0,
        NotificationLevel::Group(id) => id,
    }
}

fn group_column(level: NotificationLevel) -> Option<i64> {
    match level {
        NotificationLevel::Tenant => None,
        NotificationLevel::Group(id) => Some(id),
    }
}

fn notification_from_row(row: &AnyRow) -> StoreResult<Owned<EventNotification>> {
    Ok(Owned {
        id: row.try_get("id")?,
        owner: row.try_get("tenant_code")?,
        etag: row.try_get("etag")?,
        updated_at: parse_time(row.try_get("updated_at")?)?,
        record: from_doc(row, "doc")?,
    })
}

const COLUMNS: &str = "id, tenant_code, doc, etag, updated_at";
const AT_LEVEL: &str = "tenant_code = $1 AND COALESCE(group_id, 0) = $2";

impl Store {
    pub async fn list_notifications(
        &self,
        tenant_code: &str,
        level: NotificationLevel,
    ) -> StoreResult<Vec<Owned<EventNotification>>> {
        let sql = format!("SELECT {COLUMNS} FROM event_notifications WHERE {AT_LEVEL} ORDER BY id");
        let rows = sqlx::query(&sql)
            .bind(tenant_code)
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
        tenant_code: &str,
        level: NotificationLevel,
        id: i64,
    ) -> StoreResult<Option<Owned<EventNotification>>> {
        let sql = format!("SELECT {COLUMNS} FROM event_notifications WHERE {AT_LEVEL} AND id = $3");
        let row = sqlx::query(&sql)
            .bind(tenant_code)
            .bind(group_key(level))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(notification_from_row).transpose()
    }

    pub async fn create_notification(
        &self,
        tenant_code: &str,
        level: NotificationLevel,
        notification: &EventNotification,
    ) -> StoreResult<i64> {
        let row = sqlx::query(
            "INSERT INTO event_notifications (tenant_code, group_id, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(tenant_code)
        .bind(group_column(level))
        .bind(to_doc(notification)?)
        .bind(new_etag())
        .bind(time_text(now()))
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get("id")?)
    }

    pub async fn update_notification(
        &self,
        tenant_code: &str,
        level: NotificationLevel,
        id: i64,
        notification: &EventNotification,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let select = format!("SELECT etag FROM event_notifications WHERE {AT_LEVEL} AND id = $3");
        let select = sqlx::query(&select)
            .bind(tenant_code)
            .bind(group_key(level))
            .bind(id);
        let change = sqlx::query(
            "UPDATE event_notifications SET doc = $1, etag = $2, updated_at = $3 WHERE id = $4",
        )
        .bind(to_doc(notification)?)
        .bind(new_etag())
        .bind(time_text(now()))
        .bind(id);
        self.write_versioned(select, if_match, change).await
    }

    pub async fn delete_notification(
        &self,
        tenant_code: &str,
        level: NotificationLevel,
        id: i64,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let select = format!("SELECT etag FROM event_notifications WHERE {AT_LEVEL} AND id = $3");
        let select = sqlx::query(&select)
            .bind(tenant_code)
            .bind(group_key(level))
            .bind(id);
        let delete = sqlx::query("DELETE FROM event_notifications WHERE id = $1").bind(id);
        self.write_versioned(select, if_match, delete).await
    }
}
