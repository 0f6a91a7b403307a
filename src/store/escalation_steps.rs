//! An alert's escalation policy (issue 45 §3, migration 0062): which policy it follows,
//! settled in its raise's transaction, and the steps the escalation worker fires.
//!
//! At the raise the alert records the policy (`escalation_policy_id`) and a snapshot for
//! the console (`escalation_doc`: its name, step count and the current step), and its
//! `next_escalation_at` becomes the raise itself: the escalation worker, which finds its
//! work by that column like today's rounds, settles the steps' times (it knows the
//! length of a minute, `PipelineConfig::escalation_minute`) and fires a step at 0
//! minutes on its first pass.

use jiff::Timestamp;
use sqlx::Row;

use super::escalation_policies::{COLUMNS as POLICY_COLUMNS, policy_from_row};
use super::{StoreError, StoreResult, WriteTx, new_etag, to_doc, to_micros};
use crate::domain::alert::AlertEscalation;
use crate::domain::escalation_policy::EscalationPolicy;
use crate::domain::ids::{AlertId, EscalationPolicyId, NotificationId, TenantCode};
use crate::domain::notification::Severity;

/// What the raise tells the alert's escalation.
pub(super) struct RaisedAlert<'a> {
    pub(super) alert_id: AlertId,
    pub(super) tenant_code: &'a TenantCode,
    pub(super) notification_id: NotificationId,
    pub(super) severity: Severity,
    pub(super) raised_at: Timestamp,
}

/// The device facts a step's recipients resolve from (its group and user).
#[derive(Debug, Clone, Copy, Default)]
pub struct StepDevice {
    pub group_id: Option<i64>,
    pub user_id: Option<i64>,
}

impl WriteTx {
    /// Settles the policy a just-raised alert follows: the one its notification names
    /// (whatever the severity: naming one asks for it), else — for a Warning or High
    /// alert, the ones that escalate today — the default of the alert's tenant, else the
    /// nearest ancestor's shared default. Records it on the alert and makes its
    /// escalation due at once (the worker takes it from there). Answers whether the
    /// alert follows a policy (else today's rounds apply, as the raise set them).
    /// PostgreSQL: the policy row is share-locked until commit, so it is not deleted
    /// under the alert's key.
    pub(super) async fn follow_escalation_policy(
        &mut self,
        raised: &RaisedAlert<'_>,
    ) -> StoreResult<bool> {
        let named: Option<Option<i64>> = sqlx::query_scalar(
            "SELECT escalation_policy_id FROM event_notifications WHERE id = $1",
        )
        .bind(raised.notification_id.get())
        .fetch_optional(&mut *self.tx)
        .await?;
        let policy = match named.flatten() {
            Some(id) => self.policy_by_id(EscalationPolicyId::new(id)).await?,
            None if raised.severity.escalates() => self.tenant_default(raised.tenant_code).await?,
            None => None,
        };
        let Some(policy) = policy else {
            return Ok(false);
        };
        let escalation = AlertEscalation {
            policy_id: Some(policy.escalation_policy_id),
            policy_name: policy.name.clone(),
            steps_fired: 0,
            step_count: policy.steps.len() as i64,
            current_step: None,
            next_step_at: None,
        };
        sqlx::query(
            "UPDATE alerts SET escalation_policy_id = $1, escalation_doc = $2,
                next_escalation_at = $3 WHERE id = $4",
        )
        .bind(policy.escalation_policy_id.get())
        .bind(to_doc(&escalation)?)
        .bind(to_micros(raised.raised_at))
        .bind(raised.alert_id.get())
        .execute(&mut *self.tx)
        .await?;
        Ok(true)
    }

    /// A policy by id (a notification's: checked visible when the notification was
    /// written, and kept from deletion while named).
    async fn policy_by_id(
        &mut self,
        id: EscalationPolicyId,
    ) -> StoreResult<Option<EscalationPolicy>> {
        let sql = format!(
            "SELECT {POLICY_COLUMNS} FROM escalation_policies x WHERE x.id = $1{}",
            self.backend.share_rows()
        );
        let row = sqlx::query(&sql)
            .bind(id.get())
            .fetch_optional(&mut *self.tx)
            .await?;
        row.as_ref().map(policy_from_row).transpose()
    }

    /// The default of tenant `code`, else of its nearest ancestor sharing one.
    async fn tenant_default(&mut self, code: &TenantCode) -> StoreResult<Option<EscalationPolicy>> {
        let sql = format!(
            "SELECT {POLICY_COLUMNS} FROM escalation_policies x
             JOIN tenants o ON o.code = x.tenant_code JOIN tenants t ON t.code = $1
             WHERE x.is_tenant_default = 1
               AND (x.tenant_code = t.code OR (x.applies_to_subtenants = 1 AND t.path LIKE o.path || '%'))
             ORDER BY LENGTH(o.path) DESC LIMIT 1{}",
            self.backend.share_rows()
        );
        let row = sqlx::query(&sql)
            .bind(code.as_str())
            .fetch_optional(&mut *self.tx)
            .await?;
        row.as_ref().map(policy_from_row).transpose()
    }

    /// The policy a (locked) alert follows, as it is now; `None` once deleted.
    pub async fn escalation_policy(
        &mut self,
        id: EscalationPolicyId,
    ) -> StoreResult<Option<EscalationPolicy>> {
        self.policy_by_id(id).await
    }

    /// What a step's recipients need of the alert's device (none once it is deleted).
    pub async fn step_device(
        &mut self,
        tenant_code: &TenantCode,
        device_id: &str,
    ) -> StoreResult<StepDevice> {
        let row = sqlx::query(
            "SELECT group_id, user_id FROM devices WHERE tenant_code = $1 AND device_id = $2",
        )
        .bind(tenant_code.as_str())
        .bind(device_id)
        .fetch_optional(&mut *self.tx)
        .await?;
        let Some(row) = row else {
            return Ok(StepDevice::default());
        };
        Ok(StepDevice {
            group_id: row.try_get("group_id")?,
            user_id: row.try_get("user_id")?,
        })
    }

    /// Records the steps fired on alert `id`: `fired` in all (its `EscalationLevel`),
    /// the escalation as the console shows it, and when the next step is due (`None`:
    /// the chain is done).
    pub async fn escalation_steps_fired(
        &mut self,
        id: AlertId,
        fired: i64,
        escalation: &AlertEscalation,
        next: Option<Timestamp>,
    ) -> StoreResult<()> {
        let doc = AlertEscalation {
            steps_fired: 0,
            next_step_at: None,
            ..escalation.clone()
        };
        sqlx::query(
            "UPDATE alerts SET escalation_level = $1, escalation_doc = $2,
                next_escalation_at = $3, etag = $4 WHERE id = $5",
        )
        .bind(fired)
        .bind(to_doc(&doc)?)
        .bind(next.map(to_micros))
        .bind(new_etag())
        .bind(id.get())
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }
}

/// The alert's escalation from its stored snapshot and columns (`None`: no policy).
pub(super) fn escalation_from(
    doc: Option<&str>,
    policy_id: Option<i64>,
    steps_fired: i64,
    next_step_at: Option<Timestamp>,
) -> StoreResult<Option<AlertEscalation>> {
    let Some(doc) = doc else { return Ok(None) };
    let escalation: AlertEscalation = serde_json::from_str(doc)
        .map_err(|e| StoreError::Corrupt(format!("alert escalation document: {e}")))?;
    Ok(Some(AlertEscalation {
        // The column: null once the policy is deleted (the snapshot still names it).
        policy_id: policy_id.map(EscalationPolicyId::new),
        steps_fired,
        next_step_at,
        ..escalation
    }))
}
