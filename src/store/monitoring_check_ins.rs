//! A check-in through the API (`POST …/monitoring/checkins`, `ApiCheckIn`) on a device's
//! current session, in the caller's transaction: on SQLite ingest's group commit applies
//! it beside the batches of other requests (`services/ingest/group.rs`), so it takes no
//! writer turn, `BEGIN`, `COMMIT` or flush of its own; elsewhere it commits alone
//! (`Store::check_in_monitoring_session`). Either way it writes the same: the session's
//! check-in (`record_check_in`: its row, its `CheckIn` line, the line's stream and
//! webhook events) and the audit entry.

use super::audit_log::record;
use super::monitoring_sessions::{CheckIn, actor_of, locked_current, record_check_in};
use super::{Store, StoreError, StoreResult, WriteTx};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{DeviceId, TenantCode};
use crate::domain::monitoring::Confirmation;

/// A check-in through the API: who records it for which device, with what note.
#[derive(Debug, Clone)]
pub struct ApiCheckIn {
    pub tenant_code: TenantCode,
    pub device_id: DeviceId,
    /// Kept on the session's history line (`Detail.Note`).
    pub note: Option<String>,
    pub audit: Audit,
}

impl WriteTx {
    /// Records `check_in` on the device's current session now, audited. `false` when
    /// the device has no current session: then nothing is written (the caller's
    /// transaction goes on; ingest's group answers that check-in alone).
    pub async fn check_in_by_api(&mut self, check_in: &ApiCheckIn) -> StoreResult<bool> {
        let current = locked_current(self, &check_in.tenant_code, check_in.device_id.as_str());
        let Some(session) = current.await? else {
            return Ok(false);
        };
        let actor = actor_of(&check_in.audit);
        let confirmed = CheckIn {
            at: crate::domain::time::now(),
            kind: Confirmation::ApiCheckIn,
            actor: &actor,
            mo_message_id: None,
            note: check_in.note.as_deref(),
        };
        record_check_in(self, &session, &confirmed).await?;
        record(
            &mut self.tx,
            &check_in.audit,
            AuditAction::Update,
            ResourceType::MonitoringSession,
            session.id,
        )
        .await?;
        Ok(true)
    }
}

impl Store {
    /// Records a check-in through the API on the current session (now, `ApiCheckIn`)
    /// in a transaction of its own: the next due time counts from it. `NotFound` without
    /// a current session.
    pub async fn check_in_monitoring_session(&self, check_in: &ApiCheckIn) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        if !tx.check_in_by_api(check_in).await? {
            return Err(StoreError::NotFound);
        }
        tx.commit().await
    }
}
