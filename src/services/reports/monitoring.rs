//! MonitoringReport (docs/monitoring.md, "MonitoringReport"): the sessions overlapping the
//! window, read in row order from the store and totalled as they are read
//! (`MonitoringRows`), each row sent once its person's (or device's) last session is in.
//! Memory holds the selected devices and one row, never the sessions.

use std::collections::HashSet;

use futures::{SinkExt, StreamExt};

use super::{ReportRequest, ReportService, Rows, send};
use crate::domain::ids::TenantCode;
use crate::domain::report::monitoring::{MonitoringRows, SessionFigures};
use crate::domain::report::rows::MonitoringRow;
use crate::store::reports::ReportDevice;

/// Whether a session is in the report: its device is one the filters select (by tenant
/// and id), and, when `UserIds` is given, it watched one of those people.
fn selected(
    session: &SessionFigures,
    devices: &HashSet<(TenantCode, String)>,
    request: &ReportRequest,
) -> bool {
    let people = &request.filter.user_ids;
    let person_passes = people.is_empty()
        || session
            .person
            .as_ref()
            .is_some_and(|p| people.contains(&p.user_id));
    person_passes && devices.contains(&(session.tenant_code.clone(), session.device_id.clone()))
}

impl ReportService {
    /// One row per person (the session's user) in user id order, then one per device for
    /// the sessions that watched no user. `request.filter.user_ids` names the sessions'
    /// people; the devices were selected without it.
    pub async fn monitoring(
        self,
        request: ReportRequest,
        devices: Vec<ReportDevice>,
        mut out: Rows<MonitoringRow>,
    ) {
        let devices: HashSet<(TenantCode, String)> = devices
            .into_iter()
            .map(|d| (d.tenant_code.clone(), d.device_id().to_string()))
            .collect();
        let mut rows = MonitoringRows::new(request.window, request.now);
        let mut sessions =
            self.store
                .monitored_sessions(&request.tenants, request.window, request.now);
        while let Some(session) = sessions.next().await {
            let session = match session {
                Ok(session) => session,
                Err(e) => {
                    let _ = out.send(Err(e.into())).await;
                    return;
                }
            };
            if !selected(&session, &devices, &request) {
                continue;
            }
            if let Some(row) = rows.push(&session)
                && !send(&mut out, row).await
            {
                return;
            }
        }
        if let Some(row) = rows.finish() {
            send(&mut out, row).await;
        }
    }
}
