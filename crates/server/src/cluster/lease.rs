//! Leases in a JetStream key-value bucket: a node's id (two nodes never serve with the same
//! one) and the world's block authority (one node at a time decides the blocks,
//! `blocks.rs`).
//!
//! A lease is a key of the bucket `LOAM_<world>_LEASE`, whose entries expire after
//! [`LEASE_TTL`] (the bucket's max age). It is taken with a create (refused while the key
//! holds a value), kept by an update every [`RENEW`] that names the revision last written
//! (refused once anyone else wrote the key, or once it expired and someone took it), and
//! lapses by itself when its holder stops renewing it (killed, cut off): another node takes
//! it after at most `LEASE_TTL`. Two nodes never hold the same key at once, because each
//! write names the revision it follows and JetStream orders the writes.
//!
//! The bucket's stream is made by hand (`KV_<bucket>`, subjects `$KV.<bucket>.>`, as the
//! NATS key-value layout has it): async-nats 0.52's `create_key_value` reads account
//! fields that NATS 2.9 does not send and fails there; `get_key_value` then opens it.

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, kv};
use tokio::sync::mpsc;

use super::ClusterError;
use super::blocks::authority_message;
use super::log::Names;
use super::stream::js_err;
use crate::order::{Command, Outgoing};

/// How long a lease lasts without renewal.
pub const LEASE_TTL: Duration = Duration::from_secs(5);
/// How often a holder renews its leases (and a node without the block lease tries to take
/// it).
pub const RENEW: Duration = Duration::from_secs(1);

/// The key of the world's block authority.
const BLOCKS_KEY: &str = "blocks";

fn node_key(id: u16) -> String {
    format!("node.{id}")
}

/// Opens the world's lease bucket, making it if it is missing (any node may: making it
/// twice with the same settings is no error).
///
/// # Errors
/// [`ClusterError::JetStream`] when JetStream refuses.
pub(crate) async fn bucket(
    js: &jetstream::Context,
    names: &Names,
    replicas: usize,
) -> Result<kv::Store, ClusterError> {
    let bucket = names.lease_bucket();
    if let Ok(kv) = js.get_key_value(&bucket).await {
        return Ok(kv);
    }
    js.get_or_create_stream(jetstream::stream::Config {
        name: format!("KV_{bucket}"),
        description: Some(format!("Loam world {}: leases", names.world)),
        subjects: vec![format!("$KV.{bucket}.>")],
        max_messages_per_subject: 1,
        max_age: LEASE_TTL,
        duplicate_window: LEASE_TTL,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: jetstream::stream::DiscardPolicy::New,
        num_replicas: replicas.max(1),
        storage: jetstream::stream::StorageType::File,
        ..Default::default()
    })
    .await
    .map_err(|e| js_err("making the lease bucket")(&e))?;
    js.get_key_value(&bucket)
        .await
        .map_err(|e| js_err("opening the lease bucket")(&e))
}

/// Takes the lease of node id `id`, waiting up to [`LEASE_TTL`] and a second for the lease
/// of a node with that id that was killed to lapse. Returns the revision to renew.
///
/// # Errors
/// [`ClusterError::NodeIdInUse`] when another node holds it all that time;
/// [`ClusterError::JetStream`] when JetStream refuses otherwise.
pub(crate) async fn claim_node_id(kv: &kv::Store, id: u16) -> Result<u64, ClusterError> {
    let until = Instant::now() + LEASE_TTL + Duration::from_secs(1);
    let mut warned = false;
    loop {
        match kv.create(node_key(id), id.to_string().into()).await {
            Ok(rev) => return Ok(rev),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                if Instant::now() >= until {
                    return Err(ClusterError::NodeIdInUse { id });
                }
                if !warned {
                    tracing::info!(
                        "node id {id} is leased: waiting up to {} s for it to lapse \
                         (a node of that id that was stopped a moment ago)",
                        LEASE_TTL.as_secs() + 1
                    );
                    warned = true;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(js_err("taking the node id's lease")(&e)),
        }
    }
}

/// Node id `id`'s lease, claimed and renewed every [`RENEW`] by a task of its own while the
/// node gets ready (a start that reads a long stream or loads a large file must not let it
/// lapse), until [`hold`] takes it over ([`NodeIdKeeper::stop`]).
pub(crate) struct NodeIdKeeper {
    kv: kv::Store,
    id: u16,
    task: tokio::task::JoinHandle<()>,
    stop: tokio::sync::oneshot::Sender<()>,
    /// The revision written last.
    rev: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl NodeIdKeeper {
    /// Keeps node id `id`'s lease, taken at `rev`.
    pub(crate) fn start(kv: kv::Store, id: u16, rev: u64) -> Self {
        use std::sync::atomic::Ordering;
        let shared = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(rev));
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let (kv2, last) = (kv.clone(), shared.clone());
        let task = tokio::spawn(async move {
            let me = id.to_string();
            loop {
                tokio::select! {
                    () = tokio::time::sleep(RENEW) => {}
                    _ = &mut stopped => return,
                }
                // Not stopped while a renewal is on its way: its revision is always known.
                if let Ok(Some(r)) =
                    renew(&kv2, &node_key(id), &me, last.load(Ordering::SeqCst)).await
                {
                    last.store(r, Ordering::SeqCst);
                }
            }
        });
        Self {
            kv,
            id,
            task,
            stop,
            rev: shared,
        }
    }

    /// Stops renewing and returns the revision written last.
    pub(crate) async fn stop(self) -> u64 {
        let _ = self.stop.send(());
        let _ = self.task.await;
        self.rev.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops renewing and gives the lease up (a node that fails to start).
    pub(crate) async fn give_up(self) {
        let (kv, id) = (self.kv.clone(), self.id);
        let rev = self.stop().await;
        let _ = kv.delete_expect_revision(node_key(id), Some(rev)).await;
    }
}

/// Renews `key` (written last at `rev`), or tells why not: `Ok(None)` when someone else
/// wrote it since (the lease is lost), `Err` when NATS did not answer (try again).
async fn renew(kv: &kv::Store, key: &str, value: &str, rev: u64) -> Result<Option<u64>, String> {
    match kv.update(key, value.to_string().into(), rev).await {
        Ok(r) => Ok(Some(r)),
        Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// A held lease: its revision and when it was last written.
struct Held {
    rev: u64,
    at: Instant,
}

/// Keeps the node's leases for as long as the ordering thread runs: renews the node id's,
/// and takes, keeps or loses the block authority's, telling the ordering thread
/// ([`Command::Lease`]) and announcing a lease taken on the stream (the authority acts
/// only from its announcement on: `blocks.rs`). When `release` fires (the node stops), the
/// leases it holds are given up at once, so that a node restarted with the same id, or
/// another node taking over the blocks, need not wait for them to lapse. `holds_blocks` says
/// whether it holds the block lease now (the node's snapshot uploader puts only then: one
/// node puts at a time). It takes the node id's lease over from `keeper`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn hold(
    kv: kv::Store,
    names: Names,
    node_id: u16,
    keeper: NodeIdKeeper,
    tx: mpsc::Sender<Command>,
    publish: mpsc::UnboundedSender<Outgoing>,
    holds_blocks: std::sync::Arc<std::sync::atomic::AtomicBool>,
    mut release: tokio::sync::oneshot::Receiver<()>,
) {
    let node_rev = keeper.stop().await;
    let me = node_id.to_string();
    let mut node = Held {
        rev: node_rev,
        at: Instant::now(),
    };
    let mut blocks: Option<Held> = None;
    // Another node holds this node id's lease (said once).
    let mut clash = false;
    loop {
        tokio::select! {
            () = tokio::time::sleep(RENEW) => {}
            _ = &mut release => {
                // Only while still ours (the revision written last): never another's.
                let _ = kv.delete_expect_revision(node_key(node_id), Some(node.rev)).await;
                if let Some(h) = &blocks {
                    let _ = kv.delete_expect_revision(BLOCKS_KEY, Some(h.rev)).await;
                }
                return;
            }
        }
        match renew(&kv, &node_key(node_id), &me, node.rev).await {
            Ok(Some(rev)) => {
                node = Held {
                    rev,
                    at: Instant::now(),
                }
            }
            // Written by someone else since, or lapsed (NATS away longer than its life):
            // taken again if nobody holds it now.
            Ok(None) => match kv.create(node_key(node_id), me.clone().into()).await {
                Ok(rev) => {
                    tracing::warn!("the lease of node id {node_id} had lapsed: taken again");
                    node = Held {
                        rev,
                        at: Instant::now(),
                    };
                    clash = false;
                }
                Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                    if !clash {
                        tracing::error!(
                            "the lease of node id {node_id} is held by another node: two \
                             nodes run with this id (client ids may collide)"
                        );
                    }
                    clash = true;
                }
                Err(_) => {}
            },
            Err(_) => {}
        }
        let lost = match &blocks {
            Some(h) => match renew(&kv, BLOCKS_KEY, &me, h.rev).await {
                Ok(Some(rev)) => {
                    blocks = Some(Held {
                        rev,
                        at: Instant::now(),
                    });
                    false
                }
                Ok(None) => true,
                // Not renewed for its whole life: someone may hold it by now.
                Err(_) => h.at.elapsed() > LEASE_TTL,
            },
            None => {
                if let Ok(epoch) = kv.create(BLOCKS_KEY, me.clone().into()).await {
                    blocks = Some(Held {
                        rev: epoch,
                        at: Instant::now(),
                    });
                    tracing::info!("took the world's block lease (epoch {epoch})");
                    holds_blocks.store(true, std::sync::atomic::Ordering::SeqCst);
                    let m = authority_message(node_id, epoch);
                    let out = Outgoing {
                        subject: names.blocks(),
                        msg_id: format!("a{epoch}"),
                        payload: m.encode(),
                    };
                    if tx
                        .send(Command::Lease { epoch: Some(epoch) })
                        .await
                        .is_err()
                        || publish.send(out).is_err()
                    {
                        return;
                    }
                }
                false
            }
        };
        if lost {
            tracing::warn!("lost the world's block lease: deciding no more block ops");
            blocks = None;
            holds_blocks.store(false, std::sync::atomic::Ordering::SeqCst);
            if tx.send(Command::Lease { epoch: None }).await.is_err() {
                return;
            }
        }
    }
}
