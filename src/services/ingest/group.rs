//! Group commit on SQLite. SQLite has one writer and every commit is fsynced; with one
//! transaction per request, concurrent devices queue for the write lock and pay a
//! commit each. Here one task writes: it takes every batch waiting (up to `MAX_GROUP`),
//! applies each inside its own savepoint of one transaction (a batch that fails is rolled
//! back alone and answered with its error), commits once, and only then hands each
//! request its applied batch — so a 200 still means on disk.

use std::sync::Weak;

use tokio::sync::{mpsc, oneshot};

use super::batch::AppliedBatch;
use super::{Pipeline, ProcessedMessage};
use crate::domain::mo_message::StorableMessage;
use crate::domain::tenant::TenantNode;
use crate::store::{StoreError, StoreResult};

/// Most batches in one transaction.
const MAX_GROUP: usize = 16;
/// Batches that may wait for the writer before submitters wait to enqueue.
const QUEUE: usize = 256;

struct Job {
    node: TenantNode,
    device_id: String,
    batch: Vec<StorableMessage>,
    reply: oneshot::Sender<StoreResult<AppliedBatch>>,
}

pub(super) struct GroupWriter {
    jobs: mpsc::Sender<Job>,
}

fn writer_gone() -> StoreError {
    StoreError::Unavailable("the ingest writer stopped".into())
}

impl GroupWriter {
    /// Starts the writer task; it ends when the pipeline is gone.
    pub(super) fn start(pipeline: Weak<Pipeline>) -> Self {
        let (jobs, mut queue) = mpsc::channel::<Job>(QUEUE);
        tokio::spawn(async move {
            while let Some(first) = queue.recv().await {
                let mut group = vec![first];
                while group.len() < MAX_GROUP {
                    match queue.try_recv() {
                        Ok(job) => group.push(job),
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
        device_id: String,
        batch: Vec<StorableMessage>,
    ) -> StoreResult<Vec<ProcessedMessage>> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                node,
                device_id,
                batch,
                reply,
            })
            .await
            .map_err(|_| writer_gone())?;
        let applied = answer.await.map_err(|_| writer_gone())??;
        pipeline.finish_batch(applied).await
    }
}

impl Pipeline {
    /// Applies a group of batches in one transaction, each in a savepoint.
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
        for job in group {
            if let Err(e) = tx.savepoint().await {
                let _ = job.reply.send(Err(e));
                continue;
            }
            match self
                .apply_batch(&mut tx, &job.node, &job.device_id, job.batch)
                .await
            {
                Ok(batch) => match tx.release_savepoint().await {
                    Ok(()) => applied.push((batch, job.reply)),
                    Err(e) => {
                        let _ = job.reply.send(Err(e));
                    }
                },
                Err(e) => {
                    let rolled_back = tx.rollback_to_savepoint().await;
                    let _ = job.reply.send(Err(e));
                    if let Err(e) = rolled_back {
                        // The transaction is unusable: fail what is left of the group.
                        let message = e.to_string();
                        for (_, reply) in applied {
                            let _ = reply.send(Err(StoreError::Unavailable(message.clone())));
                        }
                        return;
                    }
                }
            }
        }
        match tx.commit().await {
            Ok(()) => {
                for (batch, reply) in applied {
                    let _ = reply.send(Ok(batch));
                }
            }
            Err(e) => {
                let message = e.to_string();
                for (_, reply) in applied {
                    let _ = reply.send(Err(StoreError::Unavailable(message.clone())));
                }
            }
        }
    }
}
