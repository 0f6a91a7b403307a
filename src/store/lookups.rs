//! Reads a match needs inside the transaction that stores the message: who a recipient
//! is (lists, contacts, users and their profiles, other devices), and the rules ingest
//! evaluates (notifications, geofences, and the version that says when they changed).

use sqlx::Row;

use super::{Store, StoreError, StoreResult, WriteTx, from_doc};
use crate::domain::address_book::{Contact, DistributionList};
use crate::domain::ids::{ContactId, DistributionListId, GroupId, NotificationId, TenantCode};
use crate::domain::notification::EventNotification;
pub use crate::domain::recipient_targets::{DevicePosition, UserContact};
use crate::domain::tenant::TenantNode;

/// A notification as ingest evaluates it.
#[derive(Debug, Clone)]
pub struct StoredNotification {
    pub id: NotificationId,
    /// `None`: tenant level.
    pub group_id: Option<GroupId>,
    pub record: EventNotification,
}

/// Own, or shared by an ancestor (`$1` the tenant's code, `$2` its path).
const VISIBLE: &str =
    "(x.tenant_code = $1 OR (x.applies_to_subtenants = 1 AND $2 LIKE o.path || '%'))";

impl WriteTx {
    /// A distribution list visible from `node`.
    pub async fn visible_list(
        &mut self,
        node: &TenantNode,
        id: DistributionListId,
    ) -> StoreResult<Option<DistributionList>> {
        let sql = format!(
            "SELECT x.doc FROM distribution_lists x JOIN tenants o ON o.code = x.tenant_code
             WHERE {VISIBLE} AND x.id = $3"
        );
        let row = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .bind(id.get())
            .fetch_optional(&mut *self.tx)
            .await?;
        row.map(|r| from_doc(&r, "doc")).transpose()
    }

    /// A contact visible from `node`.
    pub async fn visible_contact(
        &mut self,
        node: &TenantNode,
        id: ContactId,
    ) -> StoreResult<Option<Contact>> {
        let sql = format!(
            "SELECT x.doc FROM address_book_contacts x JOIN tenants o ON o.code = x.tenant_code
             WHERE {VISIBLE} AND x.id = $3"
        );
        let row = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .bind(id.get())
            .fetch_optional(&mut *self.tx)
            .await?;
        row.map(|r| from_doc(&r, "doc")).transpose()
    }

    /// The escalation contacts visible from `node` (own, and ancestors' shared ones).
    pub async fn escalation_contacts(&mut self, node: &TenantNode) -> StoreResult<Vec<Contact>> {
        let sql = format!(
            "SELECT x.doc FROM address_book_contacts x JOIN tenants o ON o.code = x.tenant_code
             WHERE {VISIBLE} ORDER BY x.id"
        );
        let rows = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .fetch_all(&mut *self.tx)
            .await?;
        let contacts: Vec<Contact> = rows
            .iter()
            .map(|r| from_doc(r, "doc"))
            .collect::<StoreResult<_>>()?;
        Ok(contacts
            .into_iter()
            .filter(|c| c.is_escalation_contact)
            .collect())
    }

    /// A user's e-mail, manager and profile.
    pub async fn user_contact(&mut self, user_id: i64) -> StoreResult<Option<UserContact>> {
        let row = sqlx::query("SELECT username, doc, profile_doc FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_optional(&mut *self.tx)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let user: crate::domain::user::UserDetails = from_doc(&row, "doc")?;
        Ok(Some(UserContact {
            username: row.try_get("username")?,
            manager_user_id: user.manager_user_id.map(|m| m.get()),
            profile: from_doc(&row, "profile_doc")?,
        }))
    }

    /// The devices of a group (ids in order).
    pub async fn group_devices(
        &mut self,
        tenant_code: &TenantCode,
        group_id: i64,
    ) -> StoreResult<Vec<String>> {
        let rows = sqlx::query(
            "SELECT device_id FROM devices WHERE tenant_code = $1 AND group_id = $2 ORDER BY id",
        )
        .bind(tenant_code.as_str())
        .bind(group_id)
        .fetch_all(&mut *self.tx)
        .await?;
        rows.iter()
            .map(|r| r.try_get("device_id").map_err(StoreError::from))
            .collect()
    }

    /// Last positions of the tenant's devices within a lat/lon box (the caller measures
    /// the exact distance).
    pub async fn devices_in_box(
        &mut self,
        tenant_code: &TenantCode,
        (lat_min, lat_max): (f64, f64),
        (lon_min, lon_max): (f64, f64),
    ) -> StoreResult<Vec<DevicePosition>> {
        let rows = sqlx::query(
            "SELECT device_id, latitude, longitude FROM device_states
             WHERE tenant_code = $1 AND latitude BETWEEN $2 AND $3 AND longitude BETWEEN $4 AND $5
             ORDER BY device_id",
        )
        .bind(tenant_code.as_str())
        .bind(lat_min)
        .bind(lat_max)
        .bind(lon_min)
        .bind(lon_max)
        .fetch_all(&mut *self.tx)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(DevicePosition {
                    device_id: r.try_get("device_id")?,
                    lat: r.try_get("latitude")?,
                    lon: r.try_get("longitude")?,
                })
            })
            .collect()
    }

    /// Moves a device to another group of its tenant (`ChangeGroup`); false when the
    /// group is gone.
    pub async fn move_device(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
        group_id: i64,
    ) -> StoreResult<bool> {
        let result = sqlx::query(
            "UPDATE devices SET group_id = $1, etag = $2, updated_at = $3
             WHERE device_id = $4 AND tenant_code = $5
               AND EXISTS (SELECT 1 FROM device_groups g WHERE g.id = $1 AND g.tenant_code = $5)",
        )
        .bind(group_id)
        .bind(super::new_etag())
        .bind(super::to_micros(crate::domain::time::now()))
        .bind(device_id)
        .bind(tenant_code.as_str())
        .execute(&mut *self.tx)
        .await?;
        Ok(result.rows_affected() == 1)
    }
}

impl Store {
    /// A counter moved by every change to geofences or notifications, in any process
    /// (triggers in migration 0011).
    pub async fn rules_version(&self) -> StoreResult<i64> {
        let row = sqlx::query("SELECT value FROM counters WHERE name = 'rules_version'")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("value")?)
    }

    /// Every notification of the tenant, at any level, in id order.
    pub async fn tenant_notifications(
        &self,
        tenant_code: &TenantCode,
    ) -> StoreResult<Vec<StoredNotification>> {
        notifications_of(&self.pool, tenant_code).await
    }
}

impl WriteTx {
    /// `Store::tenant_notifications`, read through this transaction's connection.
    pub async fn tenant_notifications(
        &mut self,
        tenant_code: &TenantCode,
    ) -> StoreResult<Vec<StoredNotification>> {
        notifications_of(&mut *self.tx, tenant_code).await
    }
}

async fn notifications_of<'e, E>(
    executor: E,
    tenant_code: &TenantCode,
) -> StoreResult<Vec<StoredNotification>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(
        "SELECT id, group_id, doc FROM event_notifications WHERE tenant_code = $1 ORDER BY id",
    )
    .bind(tenant_code.as_str())
    .fetch_all(executor)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(StoredNotification {
                id: NotificationId::new(r.try_get("id")?),
                group_id: r.try_get::<Option<i64>, _>("group_id")?.map(GroupId::new),
                record: from_doc(r, "doc")?,
            })
        })
        .collect()
}
