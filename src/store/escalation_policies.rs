//! Escalation policies (migration 0060). A tenant sees its own policies and those of its
//! ancestors marked `AppliesToSubtenants`; only the owner changes them. A notification
//! names one in its `escalation_policy_id` column (and its document): the policy must be
//! visible from the notification's tenant when it is written (PostgreSQL: share-locked
//! until commit), and is refused deletion, or un-sharing from the tenants that use it,
//! while any notification names it (409 naming them). Its steps' recipients are
//! recorded as its references (`recipient_references`, migration 0064) in the same
//! transaction, so what they name is refused deletion while named (store/references.rs).

use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::references::Referrer;
use super::{
    Key, Store, StoreError, StoreResult, Tx, VersionedRow, conflict_on_duplicate, new_etag,
    stored_time, to_doc, to_micros,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::escalation_policy::{
    EscalationPolicy, EscalationPolicyDoc, EscalationPolicyFields,
};
use crate::domain::ids::{EscalationPolicyId, TenantCode};
use crate::domain::recipient::RecipientReference;
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;
use crate::domain::validation::ValidationErrors;

pub(super) const COLUMNS: &str = "x.id, x.tenant_code, x.name, x.applies_to_subtenants, \
    x.is_tenant_default, x.doc, x.etag, x.updated_at";

/// Policies visible from tenant `$1` whose path is `$2`: its own, and those an ancestor
/// (a tenant whose path is a prefix of `$2`) shares.
const VISIBLE: &str =
    "(x.tenant_code = $1 OR (x.applies_to_subtenants = 1 AND $2 LIKE o.path || '%'))";

const DUPLICATE: &str = "an escalation policy with this Name in this tenant";

/// Most notifications a 409 names (then "and N more").
const NAMED_IN_CONFLICT: usize = 10;

#[derive(sqlx::FromRow)]
struct PolicyRow {
    id: i64,
    tenant_code: String,
    name: String,
    applies_to_subtenants: i64,
    is_tenant_default: i64,
    doc: String,
    etag: String,
    updated_at: i64,
}

impl PolicyRow {
    fn into_policy(self) -> StoreResult<EscalationPolicy> {
        let doc: EscalationPolicyDoc = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("escalation policy document: {e}")))?;
        let fields = EscalationPolicyFields {
            name: self.name,
            description: doc.description,
            applies_to_subtenants: self.applies_to_subtenants != 0,
            is_tenant_default: self.is_tenant_default != 0,
            steps: doc.steps,
        };
        Ok(EscalationPolicy::new(
            EscalationPolicyId::new(self.id),
            TenantCode::from_store(self.tenant_code),
            fields,
            stored_time(self.updated_at)?,
            self.etag,
        ))
    }
}

pub(super) fn policy_from_row(row: &sqlx::any::AnyRow) -> StoreResult<EscalationPolicy> {
    PolicyRow::from_row(row)?.into_policy()
}

/// A notification naming a policy, as a 409 names it.
#[derive(sqlx::FromRow)]
struct UserRow {
    id: i64,
    tenant_code: String,
    doc: String,
}

fn doc_of(fields: &EscalationPolicyFields) -> StoreResult<String> {
    to_doc(&EscalationPolicyDoc {
        description: fields.description.clone(),
        steps: fields.steps.clone(),
    })
}

fn name_key(fields: &EscalationPolicyFields) -> String {
    fields.name.trim().to_lowercase()
}

/// Keys: id, owning tenant code.
fn policy_row<'a>(keys: &'a [Key<'a>; 2]) -> VersionedRow<'a> {
    VersionedRow::by_id("escalation_policies", keys)
}

/// A policy written (POST or PUT): by whom, what, and what its steps' recipients name.
pub struct EscalationPolicyWrite<'a> {
    /// The owning tenant (references resolve from it).
    pub node: &'a TenantNode,
    pub fields: &'a EscalationPolicyFields,
    pub references: &'a [RecipientReference],
}

impl Store {
    /// One page of the policies visible from `node` (own and inherited), with
    /// `subtenants` also every descendant's, in id order after `after`.
    pub async fn list_escalation_policies(
        &self,
        node: &TenantNode,
        subtenants: bool,
        after: i64,
        limit: u32,
    ) -> StoreResult<Vec<EscalationPolicy>> {
        let below = if subtenants {
            " OR o.path LIKE $2 || '%'"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM escalation_policies x JOIN tenants o ON o.code = x.tenant_code
             WHERE ({VISIBLE}{below}) AND x.id > $3 ORDER BY x.id LIMIT $4"
        );
        let rows = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(policy_from_row).collect()
    }

    /// One policy, if visible from `node` (own or inherited).
    pub async fn get_escalation_policy(
        &self,
        node: &TenantNode,
        id: EscalationPolicyId,
    ) -> StoreResult<Option<EscalationPolicy>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM escalation_policies x JOIN tenants o ON o.code = x.tenant_code
             WHERE {VISIBLE} AND x.id = $3"
        );
        let row = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(policy_from_row).transpose()
    }

    /// The policy an alert of a notification of `node` follows: the one it names (if
    /// still visible), else the nearest default along the path (the tenant's own, then
    /// the closest ancestor's shared one). `None`: the single round of today's flags.
    /// For the escalation worker (issue 45 §3).
    pub async fn resolve_escalation_policy(
        &self,
        node: &TenantNode,
        named: Option<EscalationPolicyId>,
    ) -> StoreResult<Option<EscalationPolicy>> {
        if let Some(id) = named {
            return self.get_escalation_policy(node, id).await;
        }
        let sql = format!(
            "SELECT {COLUMNS} FROM escalation_policies x JOIN tenants o ON o.code = x.tenant_code
             WHERE {VISIBLE} AND x.is_tenant_default = 1
             ORDER BY LENGTH(o.path) DESC LIMIT 1"
        );
        let row = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(policy_from_row).transpose()
    }

    /// Inserts a checked policy of `write.node`; `Conflict` when the tenant has the name.
    pub async fn create_escalation_policy(
        &self,
        write: EscalationPolicyWrite<'_>,
        audit: &Audit,
    ) -> StoreResult<EscalationPolicyId> {
        let EscalationPolicyWrite {
            node,
            fields,
            references,
        } = write;
        let mut tx = self.begin_write().await?;
        self.check_references(&mut tx, node, references).await?;
        if fields.is_tenant_default {
            unmark_default(&mut tx, &node.code, None, audit).await?;
        }
        let row = sqlx::query(
            "INSERT INTO escalation_policies (tenant_code, name, name_key, applies_to_subtenants,
                is_tenant_default, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(node.code.as_str())
        .bind(fields.name.clone())
        .bind(name_key(fields))
        .bind(i64::from(fields.applies_to_subtenants))
        .bind(i64::from(fields.is_tenant_default))
        .bind(doc_of(fields)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, DUPLICATE))?;
        let id = EscalationPolicyId::new(row.try_get("id")?);
        self.record_references(
            &mut tx,
            Referrer::EscalationPolicy(id),
            &node.code,
            references,
        )
        .await?;
        record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::EscalationPolicy,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Replaces a policy `write.node` owns. Un-sharing it is refused (409) while a
    /// notification of another tenant names it.
    pub async fn update_escalation_policy(
        &self,
        id: EscalationPolicyId,
        write: EscalationPolicyWrite<'_>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let EscalationPolicyWrite {
            node,
            fields,
            references,
        } = write;
        let mut tx = self.begin_write().await?;
        let keys = [Key::Id(id.get()), Key::Text(&node.code)];
        self.check_version(&mut tx, policy_row(&keys), if_match)
            .await?;
        if !fields.applies_to_subtenants
            && let Some(users) = policy_users(&mut tx, id, Some(&node.code)).await?
        {
            return Err(StoreError::Conflict(format!(
                "escalation policy {id} is used by {users} of subtenants: it must stay \
                 AppliesToSubtenants until they name another"
            )));
        }
        self.check_references(&mut tx, node, references).await?;
        if fields.is_tenant_default {
            unmark_default(&mut tx, &node.code, Some(id), audit).await?;
        }
        sqlx::query(
            "UPDATE escalation_policies SET name = $1, name_key = $2, applies_to_subtenants = $3,
                is_tenant_default = $4, doc = $5, etag = $6, updated_at = $7
             WHERE id = $8",
        )
        .bind(fields.name.clone())
        .bind(name_key(fields))
        .bind(i64::from(fields.applies_to_subtenants))
        .bind(i64::from(fields.is_tenant_default))
        .bind(doc_of(fields)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(id.get())
        .execute(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, DUPLICATE))?;
        self.record_references(
            &mut tx,
            Referrer::EscalationPolicy(id),
            &node.code,
            references,
        )
        .await?;
        record(
            &mut tx,
            audit,
            AuditAction::Update,
            ResourceType::EscalationPolicy,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a policy the tenant owns (and, by cascade, what its steps named); 409
    /// naming the notifications while any names it.
    pub async fn delete_escalation_policy(
        &self,
        tenant_code: &TenantCode,
        id: EscalationPolicyId,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let keys = [Key::Id(id.get()), Key::Text(tenant_code)];
        self.check_version(&mut tx, policy_row(&keys), if_match)
            .await?;
        if let Some(users) = policy_users(&mut tx, id, None).await? {
            return Err(StoreError::Conflict(format!(
                "escalation policy {id} is used by {users}: change their EscalationPolicyId first"
            )));
        }
        sqlx::query("DELETE FROM escalation_policies WHERE id = $1")
            .bind(id.get())
            .execute(&mut *tx)
            .await?;
        record(
            &mut tx,
            audit,
            AuditAction::Delete,
            ResourceType::EscalationPolicy,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Inside a notification's write: refuses (`Invalid`, naming `EscalationPolicyId`) a
    /// policy that is not visible from `node`; on PostgreSQL the policy row is
    /// share-locked until commit, so it cannot be deleted or un-shared meanwhile.
    pub(super) async fn check_escalation_policy(
        &self,
        conn: &mut sqlx::AnyConnection,
        node: &TenantNode,
        id: Option<EscalationPolicyId>,
    ) -> StoreResult<()> {
        let Some(id) = id else { return Ok(()) };
        let sql = format!(
            "SELECT x.id FROM escalation_policies x JOIN tenants o ON o.code = x.tenant_code
             WHERE {VISIBLE} AND x.id = $3{}",
            self.backend.share_rows()
        );
        let found = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .bind(id.get())
            .fetch_optional(&mut *conn)
            .await?;
        match found {
            Some(_) => Ok(()),
            None => Err(StoreError::Invalid(ValidationErrors::single(
                "EscalationPolicyId",
                format!("no escalation policy {id} in this tenant or shared with it"),
            ))),
        }
    }

    /// What `check_escalation_policy` would answer, outside any write.
    pub async fn check_escalation_policy_now(
        &self,
        node: &TenantNode,
        id: Option<EscalationPolicyId>,
    ) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await?;
        self.check_escalation_policy(&mut conn, node, id).await
    }
}

/// Unmarks the tenant's default (other than `except`), changing its version and
/// auditing the change: a tenant has at most one default.
async fn unmark_default(
    tx: &mut Tx,
    tenant_code: &TenantCode,
    except: Option<EscalationPolicyId>,
    audit: &Audit,
) -> StoreResult<()> {
    let rows = sqlx::query(
        "UPDATE escalation_policies SET is_tenant_default = 0, etag = $1, updated_at = $2
         WHERE tenant_code = $3 AND is_tenant_default = 1 AND id <> $4 RETURNING id",
    )
    .bind(new_etag())
    .bind(to_micros(now()))
    .bind(tenant_code.as_str())
    .bind(except.map_or(0, EscalationPolicyId::get))
    .fetch_all(&mut **tx)
    .await?;
    for row in rows {
        let id: i64 = row.try_get("id")?;
        record(
            tx,
            audit,
            AuditAction::Update,
            ResourceType::EscalationPolicy,
            id,
        )
        .await?;
    }
    Ok(())
}

/// The notifications naming policy `id` (only those of tenants other than `except`),
/// described for a 409; `None` when there are none.
async fn policy_users(
    tx: &mut Tx,
    id: EscalationPolicyId,
    except: Option<&TenantCode>,
) -> StoreResult<Option<String>> {
    // '' is no tenant code: without an exception every notification counts.
    let rows = sqlx::query(
        "SELECT id, tenant_code, doc FROM event_notifications
         WHERE escalation_policy_id = $1 AND tenant_code <> $2 ORDER BY id",
    )
    .bind(id.get())
    .bind(except.map_or("", TenantCode::as_str))
    .fetch_all(&mut **tx)
    .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut named = Vec::new();
    for row in rows.iter().take(NAMED_IN_CONFLICT) {
        let user = UserRow::from_row(row)?;
        let name = serde_json::from_str::<serde_json::Value>(&user.doc)
            .ok()
            .and_then(|doc| doc["NotificationName"].as_str().map(str::to_string))
            .unwrap_or_default();
        named.push(format!("{name} ({}, tenant {})", user.id, user.tenant_code));
    }
    let more = rows.len().saturating_sub(NAMED_IN_CONFLICT);
    let mut text = format!("event notifications {}", named.join(", "));
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::super::temp_file::TempSqliteFile;
    use super::*;
    use crate::domain::audit::Actor;
    use crate::domain::escalation_policy::EscalationStep;

    fn node(code: &str, path: &str) -> TenantNode {
        TenantNode {
            code: code.parse().expect("code"),
            parent_code: None,
            path: path.into(),
        }
    }

    async fn tenant(store: &Store, code: &str, parent: Option<&str>, path: &str) {
        sqlx::query(
            "INSERT INTO tenants (code, parent_code, path, doc, etag, updated_at)
             VALUES ($1, $2, $3, '{}', 'e', 0) ON CONFLICT DO NOTHING",
        )
        .bind(code)
        .bind(parent)
        .bind(path)
        .execute(&store.pool)
        .await
        .expect("tenant");
    }

    async fn policy(
        store: &Store,
        at: &TenantNode,
        name: &str,
        shared: bool,
        default: bool,
    ) -> i64 {
        let fields = EscalationPolicyFields {
            name: name.into(),
            description: None,
            applies_to_subtenants: shared,
            is_tenant_default: default,
            steps: vec![EscalationStep {
                after_minutes: 0,
                recipients: Vec::new(),
                instructions: Some("Call".into()),
            }],
        };
        let write = EscalationPolicyWrite {
            node: at,
            fields: &fields,
            references: &[],
        };
        let audit = Audit::new(Actor::user("test@example.com"), None, at);
        store
            .create_escalation_policy(write, &audit)
            .await
            .expect("policy")
            .get()
    }

    async fn resolved(store: &Store, at: &TenantNode, named: Option<i64>) -> Option<String> {
        store
            .resolve_escalation_policy(at, named.map(EscalationPolicyId::new))
            .await
            .expect("resolve")
            .map(|p| p.name)
    }

    /// The named policy (if visible), else the nearest default along the path that the
    /// tenant may use, else none.
    #[tokio::test]
    async fn an_alert_follows_the_named_policy_else_the_nearest_usable_default() {
        let file = TempSqliteFile::new("safetrack-escalation");
        let store = Store::connect(&file.url()).await.expect("connect");
        store.migrate().await.expect("migrate");
        tenant(&store, "1000", None, "/1000/").await;
        tenant(&store, "1001", Some("1000"), "/1000/1001/").await;
        tenant(&store, "1002", Some("1001"), "/1000/1001/1002/").await;
        tenant(&store, "1003", Some("1000"), "/1000/1003/").await;
        let (root, middle, leaf, sibling) = (
            node("1000", "/1000/"),
            node("1001", "/1000/1001/"),
            node("1002", "/1000/1001/1002/"),
            node("1003", "/1000/1003/"),
        );
        assert_eq!(resolved(&store, &leaf, None).await, None);
        policy(&store, &root, "Root default", true, true).await;
        assert_eq!(
            resolved(&store, &leaf, None).await.as_deref(),
            Some("Root default")
        );
        // The middle tenant's default is unshared: its own alerts use it, the leaf's not.
        policy(&store, &middle, "Middle default", false, true).await;
        assert_eq!(
            resolved(&store, &middle, None).await.as_deref(),
            Some("Middle default")
        );
        assert_eq!(
            resolved(&store, &leaf, None).await.as_deref(),
            Some("Root default")
        );
        // Shared, the nearer one wins.
        policy(&store, &middle, "Middle shared default", true, true).await;
        assert_eq!(
            resolved(&store, &leaf, None).await.as_deref(),
            Some("Middle shared default")
        );
        let own = policy(&store, &leaf, "Leaf default", false, true).await;
        assert_eq!(
            resolved(&store, &leaf, None).await.as_deref(),
            Some("Leaf default")
        );
        // A named policy wins when visible; a sibling's names nothing.
        let named = policy(&store, &root, "Named", true, false).await;
        assert_eq!(
            resolved(&store, &leaf, Some(named)).await.as_deref(),
            Some("Named")
        );
        let theirs = policy(&store, &sibling, "Sibling's", true, false).await;
        assert_eq!(resolved(&store, &leaf, Some(theirs)).await, None);
        assert_eq!(resolved(&store, &sibling, Some(own)).await, None);
        store.close().await;
    }
}
