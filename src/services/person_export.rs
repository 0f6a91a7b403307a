//! A person's data in one JSON document (DESIGN §15, `GET /V2/{t}/users/{id}/export`):
//! their user record (no secret), profile, the devices assigned to them, those devices'
//! messages, alerts with their timelines and monitoring sessions, and the audit entries
//! about them. Written section by section, a page at a time, into a bounded channel the
//! response body reads: memory stays bounded whatever the number of messages.
//!
//! The devices are those assigned now: safetrack keeps no history of `Device.UserId`, so
//! a device's messages from before it was theirs are included, and a device they gave
//! back is not (docs/data-lifecycle.md).

use futures::SinkExt;
use futures::channel::mpsc;
use serde::Serialize;

use crate::domain::audit::ResourceType;
use crate::domain::device::Device;
use crate::domain::ids::{TenantCode, UserId};
use crate::domain::monitoring::view::MonitoringSessionView;
use crate::domain::time::now;
use crate::domain::user::{User, UserRef};
use crate::store::{
    AlertFilter, AuditQuery, MessageQuery, Store, StoreError, StoreResult, TenantSelection,
};

/// Messages (with their files) read per page.
const MESSAGE_PAGE: u32 = 100;
/// Alerts, sessions and audit entries read per page.
const RECORD_PAGE: u32 = 200;
/// The body is sent on in chunks of about this many bytes.
const CHUNK: usize = 64 * 1024;

/// Whose data, found in the caller's scope.
pub struct Subject {
    pub id: UserId,
    pub user: User,
    pub tenant_code: TenantCode,
    /// The user's tenant's materialised path: their devices are in its subtree.
    pub tenant_path: String,
}

/// The document as a stream of chunks. A failure after the first chunk ends the stream
/// with the error (the client sees a cut document, never a complete-looking wrong one).
pub fn export(
    store: Store,
    subject: Subject,
    exported_by: String,
) -> mpsc::Receiver<StoreResult<Vec<u8>>> {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        let mut out = Writer {
            tx,
            buf: Vec::with_capacity(CHUNK),
        };
        match write_document(&store, &subject, &exported_by, &mut out).await {
            Ok(()) => {
                let _ = out.flush().await;
            }
            Err(Stop::Failed(e)) => {
                tracing::error!(error = %e, "a person's data export failed while streaming");
                let _ = out.tx.send(Err(e)).await;
            }
            // The client went away: nothing more to write.
            Err(Stop::Gone) => {}
        }
    });
    rx
}

enum Stop {
    Failed(StoreError),
    Gone,
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        Stop::Failed(e)
    }
}

struct Writer {
    tx: mpsc::Sender<StoreResult<Vec<u8>>>,
    buf: Vec<u8>,
}

impl Writer {
    fn raw(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    /// `value` as JSON, preceded by a comma unless it is the first of its list.
    async fn item<T: Serialize>(&mut self, first: &mut bool, value: &T) -> Result<(), Stop> {
        if !std::mem::take(first) {
            self.raw(",");
        }
        serde_json::to_writer(&mut self.buf, value)
            .map_err(|e| Stop::Failed(StoreError::Corrupt(e.to_string())))?;
        if self.buf.len() >= CHUNK {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), Stop> {
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx.send(Ok(chunk)).await.map_err(|_| Stop::Gone)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Head<'a> {
    exported_at: jiff::Timestamp,
    exported_by: &'a str,
    user: &'a User,
    profile: Option<crate::domain::profile::UserProfile>,
    devices: &'a [Device],
}

async fn write_document(
    store: &Store,
    subject: &Subject,
    exported_by: &str,
    out: &mut Writer,
) -> Result<(), Stop> {
    let devices = store
        .devices_assigned_to(
            &TenantSelection::Subtree(subject.tenant_path.clone()),
            subject.id,
        )
        .await?;
    let profile = store
        .get_profile(&subject.tenant_code, &UserRef::Id(subject.id))
        .await?
        .map(|(_, profile)| profile);
    let head = serde_json::to_string(&Head {
        exported_at: now(),
        exported_by,
        user: &subject.user,
        profile,
        devices: &devices,
    })
    .map_err(|e| Stop::Failed(StoreError::Corrupt(e.to_string())))?;
    // The head object, left open for the sections that follow.
    out.raw(head.strip_suffix('}').unwrap_or(&head));
    out.raw(",\"MoMessages\":[");
    write_messages(store, &devices, out).await?;
    out.raw("],\"Alerts\":[");
    write_alerts(store, &devices, out).await?;
    out.raw("],\"MonitoringSessions\":[");
    write_sessions(store, &devices, out).await?;
    out.raw("],\"AuditEntries\":[");
    write_audit(store, subject, out).await?;
    out.raw("]}");
    Ok(())
}

async fn write_messages(store: &Store, devices: &[Device], out: &mut Writer) -> Result<(), Stop> {
    let mut first = true;
    for device in devices {
        let mut after = None;
        loop {
            let page = store
                .list_messages(MessageQuery {
                    tenant_code: &device.tenant_code,
                    device_id: device.device_id.as_str(),
                    from: None,
                    to: None,
                    after,
                    limit: MESSAGE_PAGE,
                    include_file: true,
                    newest_first: false,
                })
                .await?;
            let full = page.len() as u32 == MESSAGE_PAGE;
            for (message, cursor) in page {
                out.item(&mut first, &message).await?;
                after = Some(cursor);
            }
            if !full {
                break;
            }
        }
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct AlertWithTimeline {
    alert: crate::domain::alert::Alert,
    timeline: Vec<crate::domain::alert::TimelineEntry>,
}

async fn write_alerts(store: &Store, devices: &[Device], out: &mut Writer) -> Result<(), Stop> {
    let mut first = true;
    for device in devices {
        let mut after = 0;
        loop {
            let page = store
                .list_alerts(&AlertFilter {
                    tenant_code: &device.tenant_code,
                    subtree: None,
                    status: None,
                    outcome: None,
                    device_id: Some(device.device_id.as_str()),
                    from: None,
                    to: None,
                    after,
                    limit: RECORD_PAGE,
                })
                .await?;
            let full = page.len() as u32 == RECORD_PAGE;
            for alert in page {
                after = alert.alert_id.get();
                let timeline = store
                    .alert_timeline(&device.tenant_code, alert.alert_id)
                    .await?
                    .unwrap_or_default();
                out.item(&mut first, &AlertWithTimeline { alert, timeline })
                    .await?;
            }
            if !full {
                break;
            }
        }
    }
    Ok(())
}

async fn write_sessions(store: &Store, devices: &[Device], out: &mut Writer) -> Result<(), Stop> {
    let mut first = true;
    for device in devices {
        let (tenant, id) = (&device.tenant_code, device.device_id.as_str());
        if let Some(current) = store.current_monitoring_session(tenant, id).await? {
            out.item(&mut first, &MonitoringSessionView::at(current, now()))
                .await?;
        }
        let mut after = 0;
        loop {
            let page = store
                .monitoring_session_history(tenant, id, after, RECORD_PAGE)
                .await?;
            let full = page.len() as u32 == RECORD_PAGE;
            for session in page {
                let view = MonitoringSessionView::at(session, now());
                after = view.monitoring_session_id.get();
                out.item(&mut first, &view).await?;
            }
            if !full {
                break;
            }
        }
    }
    Ok(())
}

/// The entries whose record is this user, newest first, from their tenant's subtree.
async fn write_audit(store: &Store, subject: &Subject, out: &mut Writer) -> Result<(), Stop> {
    let mut first = true;
    let id = subject.id.get().to_string();
    let mut before = None;
    loop {
        let page = store
            .list_audit_log(&AuditQuery {
                tenants: TenantSelection::Subtree(subject.tenant_path.clone()),
                from: None,
                to: None,
                actor: None,
                action: None,
                resource_type: Some(ResourceType::User),
                before,
                limit: RECORD_PAGE,
            })
            .await?;
        let full = page.len() as u32 == RECORD_PAGE;
        for entry in page {
            before = entry.audit_entry_id.as_deref().and_then(|e| e.parse().ok());
            if entry.resource_id.as_deref() == Some(id.as_str()) {
                out.item(&mut first, &entry).await?;
            }
        }
        if !full || before.is_none() {
            break;
        }
    }
    Ok(())
}
