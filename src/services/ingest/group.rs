//! Group commit on SQLite. SQLite has one writer and every commit is fsynced; with one
//! transaction per request, concurrent devices queue for the write lock and pay a
//! commit each. Here one task writes: it takes every batch waiting (up to `MAX_GROUP`),
//! applies them in one transaction, commits once, and hands each request its applied
//! batch only when that commit is on disk — so a 200 still means on disk. The flush to
//! disk happens after the writer's turn (`store/wal_sync.rs`): meanwhile the next group
//! is applied.
//!
//! The writer task runs on a thread of its own (`writer_runtime`), not among the request
//! tasks.
//!
//! A batch that fails after writing gives the group's transaction up: it is answered
//! with its error and every other batch of the group is applied again in a transaction
//! of its own. (Savepoints per batch would roll back only the failed one, but cost two
//! statements per batch — each a round trip to SQLite's thread inside the one writer's
//! turn — for a failure that is a storage fault, not a bad request. A device not the
//! tenant's is found before anything is written and fails alone.) A batch that panics
//! is such a failure too (`unpanicked`): the panic is caught at the batch's boundary, so
//! one tenant's bad data never fails another's batches.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{OnceLock, Weak};

use futures::FutureExt;
use tokio::sync::{mpsc, oneshot};

use super::batch::{AppliedBatch, Containment};
use super::{Pipeline, ProcessedMessage};
use crate::domain::ids::DeviceId;
use crate::domain::mo_message::StorableMessage;
use crate::domain::tenant::TenantNode;
use crate::store::{StoreError, StoreResult, WaitingForWriter};

/// Most batches in one transaction.
const MAX_GROUP: usize = 16;
/// Batches that may wait for the writer before submitters wait to enqueue.
const QUEUE: usize = 256;

struct Job {
    /// Declared to the store until the writer takes the batch into a group: a write that
    /// can wait lets ingest go first meanwhile (`Store::writer_lull`).
    waiting: WaitingForWriter,
    node: TenantNode,
    device_id: DeviceId,
    batch: Vec<StorableMessage>,
    containment: Option<Containment>,
    reply: oneshot::Sender<StoreResult<AppliedBatch>>,
}

pub(super) struct GroupWriter {
    jobs: mpsc::Sender<Job>,
}

/// The runtime the group writer runs on: a thread of its own for the life of the
/// process (`None` if it could not be started: the writer runs on the caller's runtime).
/// The writer's turn is the pipeline's bottleneck, and half of it is this side's work
/// between SQLite's statements (binding, matching, the next statement): on the shared
/// threads each of those steps would queue behind request parsing and webhook sending,
/// stretching every turn.
fn writer_runtime() -> Option<tokio::runtime::Handle> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("safetrack-ingest-writer")
                .enable_all()
                .build()
                .inspect_err(
                    |e| tracing::warn!(error = %e, "the ingest writer runs on the shared threads"),
                )
                .ok()
        })
        .as_ref()
        .map(|runtime| runtime.handle().clone())
}

fn writer_gone() -> StoreError {
    StoreError::Unavailable("the ingest writer stopped".into())
}

impl GroupWriter {
    /// Starts the writer task; it ends when the pipeline is gone.
    pub(super) fn start(pipeline: Weak<Pipeline>) -> Self {
        let (jobs, mut queue) = mpsc::channel::<Job>(QUEUE);
        let runtime = writer_runtime().unwrap_or_else(tokio::runtime::Handle::current);
        runtime.spawn(async move {
            while let Some(mut first) = queue.recv().await {
                first.waiting.taken();
                let mut group = vec![first];
                while group.len() < MAX_GROUP {
                    match queue.try_recv() {
                        Ok(mut job) => {
                            job.waiting.taken();
                            group.push(job);
                        }
                        Err(_) => break,
                    }
                }
                let Some(pipeline) = pipeline.upgrade() else {
                    return;
                };
                // Its own task: a panic fails this group's requests, not the writer.
                let _ = tokio::spawn(async move { pipeline.commit_group(group).await }).await;
            }
        });
        Self { jobs }
    }

    /// Queues a batch and waits until it is committed (or failed).
    pub(super) async fn submit(
        &self,
        pipeline: &Pipeline,
        node: TenantNode,
        device_id: DeviceId,
        batch: Vec<StorableMessage>,
        containment: Option<Containment>,
    ) -> StoreResult<Vec<ProcessedMessage>> {
        let (reply, answer) = oneshot::channel();
        // Counted from here: a batch blocked on a full queue waits for the writer too.
        let waiting = pipeline.store.waiting_for_writer();
        let sent = self
            .jobs
            .send(Job {
                waiting,
                node,
                device_id,
                batch,
                containment,
                reply,
            })
            .await;
        if sent.is_err() {
            return Err(writer_gone());
        }
        let applied = answer.await.map_err(|_| writer_gone())??;
        pipeline.finish_batch(applied).await
    }
}

type Applied = Vec<(AppliedBatch, oneshot::Sender<StoreResult<AppliedBatch>>)>;

/// The group's applied batches failed with it: their commit, or its flush to disk.
fn answer_all(applied: Applied, failure: &str) {
    for (_, reply) in applied {
        let _ = reply.send(Err(StoreError::Unavailable(failure.to_string())));
    }
}

impl Pipeline {
    /// Applies a group of batches in one transaction (see the module's notes) and
    /// commits it; its requests are answered once the commit is on disk, while the
    /// writer may already apply the next group.
    async fn commit_group(&self, group: Vec<Job>) {
        let mut tx = match self.store.begin().await {
            Ok(tx) => tx,
            Err(e) => {
                let message = e.to_string();
                for job in group {
                    let _ = job
                        .reply
                        .send(Err(StoreError::Unavailable(message.clone())));
                }
                return;
            }
        };
        let mut applied = Vec::with_capacity(group.len());
        let mut jobs = group.into_iter();
        while let Some(job) = jobs.next() {
            let context = match tx.ingest_context(&job.node.code, &job.device_id).await {
                Ok(Some(context)) => context,
                // Nothing of it written: the others go on.
                Ok(None) => {
                    let _ = job.reply.send(Err(StoreError::NotFound));
                    continue;
                }
                Err(e) => {
                    drop(tx);
                    let retried = std::iter::once(job).chain(jobs);
                    return self.commit_each(&e.to_string(), applied, retried).await;
                }
            };
            let Job {
                waiting: _,
                node,
                device_id,
                batch,
                containment,
                reply,
            } = job;
            let work = self.apply_batch_in(&mut tx, context, &node, &device_id, batch, containment);
            match unpanicked(&device_id, work).await {
                Ok(batch) => applied.push((batch, reply)),
                Err(e) => {
                    // Part of it may be written: the transaction is given up.
                    drop(tx);
                    let cause = e.to_string();
                    let _ = reply.send(Err(e));
                    return self.commit_each(&cause, applied, jobs).await;
                }
            }
        }
        let committed = match tx.commit_pending().await {
            Ok(committed) => committed,
            Err(e) => return answer_all(applied, &e.to_string()),
        };
        // The writer goes on with the next group while this one is flushed to disk; its
        // requests are answered once it is there (`Committed::durable`).
        tokio::spawn(async move {
            match committed.durable().await {
                Ok(()) => {
                    for (batch, reply) in applied {
                        let _ = reply.send(Ok(batch));
                    }
                }
                Err(e) => answer_all(applied, &e.to_string()),
            }
        });
    }

    /// After a group's transaction was given up: its batches (those it had applied, then
    /// the rest), each in a transaction of its own.
    async fn commit_each(&self, cause: &str, applied: Applied, rest: impl Iterator<Item = Job>) {
        let again = applied.into_iter().map(|(batch, reply)| {
            let (node, device_id, batch) = batch.into_submitted();
            Job {
                waiting: WaitingForWriter::default(),
                node,
                device_id,
                batch,
                containment: None,
                reply,
            }
        });
        let jobs: Vec<Job> = again.chain(rest).collect();
        tracing::warn!(
            batches = jobs.len(),
            error = %cause,
            "a batch failed inside a group transaction: the group's others are applied one by one"
        );
        for job in jobs {
            let result = self.commit_alone(&job.node, &job.device_id, job.batch, job.containment);
            let _ = job.reply.send(result.await);
        }
    }

    async fn commit_alone(
        &self,
        node: &TenantNode,
        device_id: &DeviceId,
        batch: Vec<StorableMessage>,
        containment: Option<Containment>,
    ) -> StoreResult<AppliedBatch> {
        let mut tx = self.store.begin().await?;
        let work = self.apply_batch(&mut tx, node, device_id, batch, containment);
        let applied = unpanicked(device_id, work).await?;
        tx.commit().await?;
        Ok(applied)
    }
}

/// One batch's work inside a group's writer turn, a panic in it made its failure (the
/// transaction is then given up like after any failure, and the others go on).
async fn unpanicked<T>(
    device_id: &str,
    work: impl Future<Output = StoreResult<T>>,
) -> StoreResult<T> {
    #[cfg(test)]
    let work = async {
        if tests::poisoned(device_id) {
            panic!("a poisoned batch of {device_id}");
        }
        work.await
    };
    match AssertUnwindSafe(work).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(%device_id, panic = %what, "a batch panicked while applied: it fails alone");
            Err(StoreError::Unavailable(
                "the batch could not be applied".into(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::{Arc, Mutex};

    use crate::domain::device::bare_fields;
    use crate::domain::mo_message::MoMessage;
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_that_panics_fails_alone_and_the_others_of_its_group_commit() {
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
        let poisoned_device = devices[MAX_GROUP / 2].clone();
        for device_id in &devices {
            let device = bare_fields(device_id);
            let audit = crate::domain::audit::Audit::new(
                crate::domain::audit::Actor::user("test"),
                None,
                &node,
            );
            store
                .create_device(&root, &device, &audit)
                .await
                .expect("device")
                .expect("no identifier clash");
        }
        poison(&poisoned_device);
        let pipeline = Pipeline::new(
            store.clone(),
            Arc::new(EventHub::default()),
            PipelineConfig::default(),
        );
        for round in 0..5 {
            let posts = devices.iter().map(|d| {
                pipeline.ingest(&node, DeviceId::from_store(d.clone()), vec![report(round)])
            });
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
        drop((pipeline, store));
        for suffix in ["", "-wal", "-shm"] {
            let mut path = file.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}
