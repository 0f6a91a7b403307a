//! Group commit on SQLite. SQLite has one writer and every commit is fsynced; with one
//! transaction per request, concurrent devices queue for the write lock and pay a
//! commit each. Here one task writes: it takes every job waiting (up to `MAX_GROUP`),
//! applies them in one transaction, commits once, and answers each request only when
//! that commit is on disk — so a 200 still means on disk. The flush to disk happens
//! after the writer's turn (`store/wal_sync.rs`): meanwhile the next group is applied.
//! A job is a device's batch of MO messages (`Pipeline::ingest`) or a check-in through
//! the API (`Pipeline::check_in`, `WriteTx::check_in_by_api`): beside ingest, check-ins
//! each taking a writer turn, a `BEGIN`, a `COMMIT` and a flush of their own held the
//! batches up (bench/README.md, monitoring).
//!
//! The writer task runs on a thread of its own (`writer_runtime`), not among the request
//! tasks.
//!
//! A job that fails after writing gives the group's transaction up: it is answered with
//! its error and every other job of the group is applied again in a transaction of its
//! own. (Savepoints per job would roll back only the failed one, but cost two
//! statements per job — each a round trip to SQLite's thread inside the one writer's
//! turn — for a failure that is a storage fault, not a bad request.) What is found
//! before anything is written fails alone: a device not the tenant's (a batch), a
//! device without a current session (a check-in). A job that panics is such a failure
//! too (`unpanicked`): the panic is caught at the job's boundary, so one tenant's bad
//! data never fails another's jobs.

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
use crate::store::{ApiCheckIn, StoreError, StoreResult, WaitingForWriter, WriteTx};

/// Most batches in one transaction.
const MAX_GROUP: usize = 16;
/// Batches that may wait for the writer before submitters wait to enqueue.
const QUEUE: usize = 256;

struct Job {
    /// Declared to the store until the writer takes the job into a group: a write that
    /// can wait lets ingest go first meanwhile (`Store::writer_lull`).
    waiting: WaitingForWriter,
    work: Work,
}

/// What a job asks of the group's transaction.
enum Work {
    /// A device's batch of MO messages (`Pipeline::ingest`).
    Batch(BatchJob),
    /// A check-in through the API (`Pipeline::check_in`).
    CheckIn(ApiCheckIn, oneshot::Sender<StoreResult<()>>),
}

struct BatchJob {
    node: TenantNode,
    device_id: DeviceId,
    batch: Vec<StorableMessage>,
    containment: Option<Containment>,
    reply: oneshot::Sender<StoreResult<AppliedBatch>>,
}

/// A job applied in the group's transaction, answered once its commit is on disk.
enum Applied {
    Batch(AppliedBatch, oneshot::Sender<StoreResult<AppliedBatch>>),
    CheckIn(ApiCheckIn, oneshot::Sender<StoreResult<()>>),
}

impl Applied {
    /// Its commit is on disk.
    fn answer(self) {
        let _ = match self {
            Applied::Batch(batch, reply) => reply.send(Ok(batch)).map_err(drop),
            Applied::CheckIn(_, reply) => reply.send(Ok(())).map_err(drop),
        };
    }

    /// It failed with its group: the commit, or its flush to disk.
    fn fail(self, failure: &str) {
        let e = || StoreError::Unavailable(failure.to_string());
        let _ = match self {
            Applied::Batch(_, reply) => reply.send(Err(e())).map_err(drop),
            Applied::CheckIn(_, reply) => reply.send(Err(e())).map_err(drop),
        };
    }

    /// The job again, to be applied alone (its group's transaction was given up).
    fn again(self) -> Work {
        match self {
            Applied::Batch(batch, reply) => {
                let (node, device_id, batch) = batch.into_submitted();
                Work::Batch(BatchJob {
                    node,
                    device_id,
                    batch,
                    containment: None,
                    reply,
                })
            }
            Applied::CheckIn(check_in, reply) => Work::CheckIn(check_in, reply),
        }
    }
}

impl Work {
    /// Answered with `e`, nothing of it applied.
    fn fail(self, e: StoreError) {
        let _ = match self {
            Work::Batch(job) => job.reply.send(Err(e)).map_err(drop),
            Work::CheckIn(_, reply) => reply.send(Err(e)).map_err(drop),
        };
    }
}

/// What applying one job in the group's transaction came to.
enum Step {
    Applied(Applied),
    /// Answered on its own (a device not the tenant's, a device without a current
    /// session): nothing of it was written, the group goes on.
    Alone,
    /// The group's transaction is given up; `retry` is the job when nothing of it was
    /// written (it is applied alone with the others), `None` when it was answered with
    /// its error.
    Failed {
        cause: String,
        retry: Option<Work>,
    },
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
                let mut group = vec![first.work];
                while group.len() < MAX_GROUP {
                    match queue.try_recv() {
                        Ok(mut job) => {
                            job.waiting.taken();
                            group.push(job.work);
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

    /// Queues a job for the writer.
    async fn enqueue(&self, pipeline: &Pipeline, work: Work) -> StoreResult<()> {
        // Counted from here: a job blocked on a full queue waits for the writer too.
        let waiting = pipeline.store.waiting_for_writer();
        let job = Job { waiting, work };
        self.jobs.send(job).await.map_err(|_| writer_gone())
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
        let job = BatchJob {
            node,
            device_id,
            batch,
            containment,
            reply,
        };
        self.enqueue(pipeline, Work::Batch(job)).await?;
        let applied = answer.await.map_err(|_| writer_gone())??;
        pipeline.finish_batch(applied).await
    }

    /// Queues a check-in through the API and waits until it is committed (or failed).
    pub(super) async fn check_in(
        &self,
        pipeline: &Pipeline,
        check_in: ApiCheckIn,
    ) -> StoreResult<()> {
        let (reply, answer) = oneshot::channel();
        self.enqueue(pipeline, Work::CheckIn(check_in, reply))
            .await?;
        answer.await.map_err(|_| writer_gone())?
    }
}

/// The group's applied jobs failed with it: their commit, or its flush to disk.
fn answer_all(applied: Vec<Applied>, failure: &str) {
    for job in applied {
        job.fail(failure);
    }
}

impl Pipeline {
    /// Applies a group of jobs in one transaction (see the module's notes) and commits
    /// it; its requests are answered once the commit is on disk, while the writer may
    /// already apply the next group.
    async fn commit_group(&self, group: Vec<Work>) {
        let mut tx = match self.store.begin().await {
            Ok(tx) => tx,
            Err(e) => {
                let message = e.to_string();
                for work in group {
                    work.fail(StoreError::Unavailable(message.clone()));
                }
                return;
            }
        };
        let mut applied = Vec::with_capacity(group.len());
        let mut jobs = group.into_iter();
        while let Some(work) = jobs.next() {
            match self.apply_in_group(&mut tx, work).await {
                Step::Applied(job) => applied.push(job),
                Step::Alone => {}
                Step::Failed { cause, retry } => {
                    // Part of the group is written: its transaction is given up.
                    drop(tx);
                    let rest = retry.into_iter().chain(jobs);
                    return self.commit_each(&cause, applied, rest).await;
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
                Ok(()) => applied.into_iter().for_each(Applied::answer),
                Err(e) => answer_all(applied, &e.to_string()),
            }
        });
    }

    /// One job in the group's transaction.
    async fn apply_in_group(&self, tx: &mut WriteTx, work: Work) -> Step {
        match work {
            Work::Batch(job) => self.batch_in_group(tx, job).await,
            Work::CheckIn(check_in, reply) => check_in_in_group(tx, check_in, reply).await,
        }
    }

    async fn batch_in_group(&self, tx: &mut WriteTx, job: BatchJob) -> Step {
        let context = match tx.ingest_context(&job.node.code, &job.device_id).await {
            Ok(Some(context)) => context,
            Ok(None) => {
                let _ = job.reply.send(Err(StoreError::NotFound));
                return Step::Alone;
            }
            Err(e) => {
                let cause = e.to_string();
                let retry = Some(Work::Batch(job));
                return Step::Failed { cause, retry };
            }
        };
        let BatchJob {
            node,
            device_id,
            batch,
            containment,
            reply,
        } = job;
        let work = self.apply_batch_in(tx, context, &node, &device_id, batch, containment);
        match unpanicked(&device_id, work).await {
            Ok(batch) => Step::Applied(Applied::Batch(batch, reply)),
            Err(e) => {
                let cause = e.to_string();
                let _ = reply.send(Err(e));
                Step::Failed { cause, retry: None }
            }
        }
    }

    /// After a group's transaction was given up: its jobs (those it had applied, then
    /// the rest), each in a transaction of its own.
    async fn commit_each(
        &self,
        cause: &str,
        applied: Vec<Applied>,
        rest: impl Iterator<Item = Work>,
    ) {
        let jobs: Vec<Work> = applied
            .into_iter()
            .map(Applied::again)
            .chain(rest)
            .collect();
        tracing::warn!(
            jobs = jobs.len(),
            error = %cause,
            "a job failed inside a group transaction: the group's others are applied one by one"
        );
        for work in jobs {
            self.commit_alone(work).await;
        }
    }

    /// One job in a transaction of its own, answered.
    async fn commit_alone(&self, work: Work) {
        match work {
            Work::Batch(job) => {
                let BatchJob {
                    node,
                    device_id,
                    batch,
                    containment,
                    reply,
                } = job;
                let result = self.commit_batch_alone(&node, &device_id, batch, containment);
                let _ = reply.send(result.await);
            }
            Work::CheckIn(check_in, reply) => {
                let alone = self.store.check_in_monitoring_session(&check_in);
                let _ = reply.send(unpanicked(check_in.device_id.as_str(), alone).await);
            }
        }
    }

    async fn commit_batch_alone(
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

/// A check-in through the API in the group's transaction: a device without a current
/// session is found before anything is written and answered alone.
async fn check_in_in_group(
    tx: &mut WriteTx,
    check_in: ApiCheckIn,
    reply: oneshot::Sender<StoreResult<()>>,
) -> Step {
    let work = tx.check_in_by_api(&check_in);
    match unpanicked(check_in.device_id.as_str(), work).await {
        Ok(true) => Step::Applied(Applied::CheckIn(check_in, reply)),
        Ok(false) => {
            let _ = reply.send(Err(StoreError::NotFound));
            Step::Alone
        }
        Err(e) => {
            let cause = e.to_string();
            let _ = reply.send(Err(e));
            Step::Failed { cause, retry: None }
        }
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
#[path = "group_tests.rs"]
mod tests;
