//! The group commit's tests (`group.rs`).

use super::*;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::domain::audit::{Actor, Audit};
use crate::domain::device::bare_fields;
use crate::domain::mo_message::MoMessage;
use crate::domain::monitoring::SessionSettings;
use crate::services::ingest::PipelineConfig;
use crate::services::stream::EventHub;
use crate::store::Store;

/// Devices whose batches panic at the batch boundary (the test-only hook of
/// `unpanicked`): no input panics there any more, so the boundary is proved this way.
static POISONED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

pub(super) fn poisoned(device_id: &str) -> bool {
    POISONED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .is_some_and(|devices| devices.contains(device_id))
}

fn poison(device_id: &str) {
    POISONED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(device_id.to_string());
}

fn report(seq: i64) -> StorableMessage {
    StorableMessage {
        record: MoMessage {
            sequence_number: Some(seq),
            sent_from_device: jiff::Timestamp::from_second(1_770_000_000 + seq).ok(),
            ..Default::default()
        },
        doc: "{}".into(),
        file: None,
        attachment: None,
    }
}

/// A store on a fresh SQLite file with `MAX_GROUP` devices of the root tenant.
struct Fixture {
    file: std::path::PathBuf,
    store: Store,
    node: TenantNode,
    devices: Vec<String>,
}

impl Fixture {
    async fn new() -> Self {
        let file = std::env::temp_dir().join(format!(
            "safetrack-group-{}.db",
            uuid::Uuid::new_v4().simple()
        ));
        let store = Store::connect(&format!("sqlite://{}?mode=rwc", file.display()))
            .await
            .expect("connect");
        store.migrate().await.expect("migrate");
        crate::app::ensure_root_tenant(&store).await.expect("root");
        let root = crate::domain::tenant::root_tenant_code();
        let node = store.tenant_node(&root).await.unwrap().expect("root");
        let suffix = uuid::Uuid::new_v4().simple().to_string();
        let devices: Vec<String> = (0..MAX_GROUP).map(|i| format!("d{i}-{suffix}")).collect();
        for device_id in &devices {
            let device = bare_fields(device_id);
            store
                .create_device(&root, &device, &audit(&node))
                .await
                .expect("device")
                .expect("no identifier clash");
        }
        Self {
            file,
            store,
            node,
            devices,
        }
    }

    fn pipeline(&self) -> Arc<Pipeline> {
        Pipeline::new(
            self.store.clone(),
            Arc::new(EventHub::default()),
            PipelineConfig::default(),
        )
    }

    async fn remove(self) {
        self.store.close().await;
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.file.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

fn audit(node: &TenantNode) -> Audit {
    Audit::new(Actor::user("test"), None, node)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_that_panics_fails_alone_and_the_others_of_its_group_commit() {
    let fixture = Fixture::new().await;
    let (store, node, devices) = (&fixture.store, &fixture.node, &fixture.devices);
    let root = node.code.clone();
    let poisoned_device = devices[MAX_GROUP / 2].clone();
    poison(&poisoned_device);
    let pipeline = fixture.pipeline();
    for round in 0..5 {
        let posts = devices
            .iter()
            .map(|d| pipeline.ingest(node, DeviceId::from_store(d.clone()), vec![report(round)]));
        let answers = futures::future::join_all(posts).await;
        for (device_id, answer) in devices.iter().zip(answers) {
            if *device_id == poisoned_device {
                assert!(
                    matches!(answer, Err(StoreError::Unavailable(_))),
                    "{answer:?}"
                );
                continue;
            }
            let processed = answer.unwrap_or_else(|e| panic!("{device_id}: {e}"));
            let id = processed[0].message.message_id.unwrap();
            let stored = store
                .get_messages(&root, Some(device_id), &[id])
                .await
                .unwrap();
            assert_eq!(stored.len(), 1, "{device_id}, round {round}");
        }
    }
    drop(pipeline);
    fixture.remove().await;
}

/// API check-ins are jobs of the group beside batches: one on a device without a
/// session is answered `NotFound` alone, one that panics fails alone (the group is then
/// applied job by job), and every other check-in and batch is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_ins_share_the_group_and_one_that_fails_fails_alone() {
    let fixture = Fixture::new().await;
    let (store, node, devices) = (&fixture.store, &fixture.node, &fixture.devices);
    let (checking, posting) = devices.split_at(MAX_GROUP / 2);
    let settings = SessionSettings {
        duration_minutes: 120,
        check_in_interval_minutes: 30,
        grace_minutes: 5,
        reminder_minutes: 10,
        no_motion_minutes: 0,
        note: None,
    };
    // The first device checking in has no session; the second panics.
    for device_id in &checking[1..] {
        store
            .start_monitoring_session(&node.code, device_id, &settings, &audit(node))
            .await
            .expect("start");
    }
    poison(&checking[1]);
    let pipeline = fixture.pipeline();
    for round in 0..3 {
        let check_ins = checking.iter().map(|d| {
            pipeline.check_in(ApiCheckIn {
                tenant_code: node.code.clone(),
                device_id: DeviceId::from_store(d.clone()),
                note: Some(format!("round {round}")),
                audit: audit(node),
            })
        });
        let posts = posting
            .iter()
            .map(|d| pipeline.ingest(node, DeviceId::from_store(d.clone()), vec![report(round)]));
        let (checked, posted) = futures::join!(
            futures::future::join_all(check_ins),
            futures::future::join_all(posts)
        );
        assert!(
            matches!(checked[0], Err(StoreError::NotFound)),
            "{:?}",
            checked[0]
        );
        assert!(
            matches!(checked[1], Err(StoreError::Unavailable(_))),
            "{:?}",
            checked[1]
        );
        for (device_id, answer) in checking.iter().zip(&checked).skip(2) {
            assert!(answer.is_ok(), "{device_id}: {answer:?}");
        }
        for (device_id, answer) in posting.iter().zip(&posted) {
            assert!(answer.is_ok(), "{device_id}: {answer:?}");
        }
    }
    for (i, device_id) in checking.iter().enumerate().skip(1) {
        let session = store
            .current_monitoring_session(&node.code, device_id)
            .await
            .expect("read")
            .expect("current");
        let expected = if i == 1 { 0 } else { 3 };
        assert_eq!(session.check_in_count, expected, "{device_id}");
    }
    drop(pipeline);
    fixture.remove().await;
}
