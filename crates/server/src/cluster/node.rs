//! A node's two tasks between its ordering thread and the world's stream: the publisher
//! (its clients' ops, in order, each with its message id, a bounded number awaiting
//! JetStream's ack) and the follower (every message of the stream, in order, to the
//! ordering thread).

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::header::NATS_MESSAGE_ID;
use async_nats::jetstream;
use futures_util::StreamExt;
use futures_util::stream::FuturesOrdered;
use tokio::sync::mpsc;

use super::ClusterError;
use super::stream::WorldStream;
use crate::order::{Command, Outgoing};

/// Ops published and not yet acknowledged by JetStream, at most.
pub(crate) const IN_FLIGHT: usize = 256;

/// How long the follower waits for a message before it asks whether the stream holds one.
const QUIET: Duration = Duration::from_secs(1);

/// How long the follower reads the stream message by message, when no consumer could be
/// made, before it asks for one again.
const BY_SEQUENCE: Duration = Duration::from_secs(5);

/// How often the follower asks for the next message while it reads message by message.
const POLL: Duration = Duration::from_millis(50);

/// How long to wait between tries while NATS is away.
const RETRY: Duration = Duration::from_millis(250);

/// Publishes the ordering thread's ops in the order given, at most [`IN_FLIGHT`] awaiting
/// their ack. An op whose publish or ack fails (NATS away, a timeout) is published again
/// under the same message id until JetStream takes it (a copy that did land is dropped by
/// JetStream as a duplicate): it is never lost, and its author is acknowledged only when
/// it comes back from the stream. Ends when the ordering thread's end is dropped.
pub(crate) async fn publish(js: jetstream::Context, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
    type Acked =
        std::pin::Pin<Box<dyn std::future::Future<Output = (Outgoing, Result<(), String>)> + Send>>;
    let mut queue: VecDeque<Outgoing> = VecDeque::new();
    let mut waiting: FuturesOrdered<Acked> = FuturesOrdered::new();
    let mut open = true;
    loop {
        while waiting.len() < IN_FLIGHT
            && let Some(o) = queue.pop_front()
        {
            let mut h = HeaderMap::new();
            h.insert(NATS_MESSAGE_ID, o.msg_id.as_str());
            match js
                .publish_with_headers(o.subject.clone(), h, o.payload.clone().into())
                .await
            {
                Ok(ack) => waiting.push_back(Box::pin(async move {
                    let r = ack.await.map(|_| ()).map_err(|e| e.to_string());
                    (o, r)
                })),
                Err(e) => {
                    tracing::warn!("publishing op {}: {e}; trying again", o.msg_id);
                    queue.push_front(o);
                    tokio::time::sleep(RETRY).await;
                    break;
                }
            }
        }
        if !open && queue.is_empty() && waiting.is_empty() {
            return;
        }
        tokio::select! {
            Some((o, r)) = waiting.next(), if !waiting.is_empty() => {
                if let Err(e) = r {
                    tracing::warn!(
                        "op {} was not acknowledged by JetStream: {e}; publishing it again",
                        o.msg_id
                    );
                    queue.push_front(o);
                    // Paced: a stream that answers at once with an error (gone, full)
                    // must not be asked again thousands of times a second.
                    tokio::time::sleep(RETRY).await;
                }
            }
            o = rx.recv(), if open => match o {
                Some(o) => queue.push_back(o),
                None => open = false,
            },
            () = tokio::time::sleep(RETRY), if waiting.is_empty() && !queue.is_empty() => {}
        }
    }
}

/// Feeds every message of the stream after `applied` to the ordering thread, in order,
/// for ever: a consumer that fails (NATS away, its server of a cluster dead) is made again
/// from the next sequence, and while none can be made, the stream's leader is asked for the
/// messages one by one. Ends when the ordering thread is gone.
pub(crate) async fn follow(mut world: WorldStream, applied: u64, tx: mpsc::Sender<Command>) {
    let mut next = applied + 1;
    let mut up = world.up.clone();
    loop {
        let mut msgs = match world.messages_from(next).await {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(
                    "following the world's stream from {next}: {e}; reading it message by \
                     message meanwhile"
                );
                // Polled for a while (a new op shows within `POLL`), then a consumer is
                // asked for again.
                let until = tokio::time::Instant::now() + BY_SEQUENCE;
                while tokio::time::Instant::now() < until {
                    match world.message_at(next).await {
                        Ok(Some(m)) => {
                            if !hand_on(&world, &tx, m.seq, &m.subject, &m.payload, &mut next).await
                            {
                                return;
                            }
                        }
                        Ok(None) => tokio::time::sleep(POLL).await,
                        Err(e) => {
                            tracing::warn!("reading message {next} of the world's stream: {e}");
                            tokio::time::sleep(RETRY).await;
                        }
                    }
                }
                continue;
            }
        };
        loop {
            let m = tokio::select! {
                m = msgs.next() => m,
                Ok(()) = up.changed() => {
                    if *up.borrow_and_update() {
                        tracing::info!("NATS is back: following the stream again from {next}");
                        break;
                    }
                    continue;
                }
                () = tokio::time::sleep(QUIET) => {
                    // A consumer can vanish without a word (its server of a cluster died,
                    // or restarted): when the stream holds what it did not deliver, a new
                    // one is made. (The question is not let to hang: a cluster electing
                    // leaders may not answer it.)
                    let last = tokio::time::timeout(QUIET * 2, world.last_seq()).await;
                    match last.unwrap_or_else(|_| Ok(0)) {
                        Ok(last) if last >= next => {
                            tracing::warn!(
                                "the stream holds messages up to {last} and its consumer \
                                 delivered none after {}: following it again",
                                next - 1
                            );
                            break;
                        }
                        _ => continue,
                    }
                }
            };
            let Some(m) = m else { break };
            let m = match m {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!("reading the world's stream at {next}: {e}; trying again");
                    break;
                }
            };
            let seq = match m.info() {
                Ok(i) => i.stream_sequence,
                Err(e) => {
                    tracing::warn!("a message of the stream without its sequence: {e}");
                    break;
                }
            };
            if seq > next {
                tracing::warn!("the consumer skipped from {next} to {seq}: following again");
                break;
            }
            if !hand_on(&world, &tx, seq, m.subject.as_str(), &m.payload, &mut next).await {
                return;
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Hands message `seq` to the ordering thread if it is the `next` one (a redelivered one is
/// dropped, the genesis is not an op) and moves `next` on; `false` when the ordering
/// thread is gone.
async fn hand_on(
    world: &WorldStream,
    tx: &mpsc::Sender<Command>,
    seq: u64,
    subject: &str,
    payload: &bytes::Bytes,
    next: &mut u64,
) -> bool {
    if seq < *next {
        return true;
    }
    *next = seq + 1;
    if subject == world.names.meta() {
        return true;
    }
    let cmd = Command::Logged {
        seq,
        bytes: payload.clone(),
    };
    tx.send(cmd).await.is_ok()
}

/// Tells the ordering thread each time NATS goes or comes back (its clients are told).
async fn tell_reach(mut up: tokio::sync::watch::Receiver<bool>, tx: mpsc::Sender<Command>) {
    while up.changed().await.is_ok() {
        let now = *up.borrow_and_update();
        if tx.send(Command::LogReach { up: now }).await.is_err() {
            return;
        }
    }
}

/// A node's tasks: the publisher and the follower, and the lease keeper with the signal
/// that makes it give its leases up.
#[derive(Default)]
pub(crate) struct NodeTasks {
    pub tasks: Vec<tokio::task::JoinHandle<()>>,
    pub lease: Option<(
        tokio::task::JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    )>,
}

impl NodeTasks {
    /// Gives the leases up (waiting a second at most) and stops the tasks.
    pub(crate) async fn stop(&mut self) {
        if let Some((task, release)) = self.lease.take() {
            let _ = release.send(());
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// A node, its world opened and its world file ready, before its ordering thread runs.
pub(crate) struct Prepared {
    world: WorldStream,
    /// The world's snapshot store (`snapshot.rs`), if it could be had.
    snapshots: Option<async_nats::jetstream::object_store::ObjectStore>,
    /// The stream sequence of the snapshot the node's file was made from, if it was.
    from_snapshot: Option<u64>,
    node_id: u16,
    applied: super::log::Position,
    secret: [u8; 32],
    /// The stream's last sequence when the node started.
    stream_last: u64,
    /// The blocks as of `applied` (`cluster/blocks.rs`).
    replica: super::blocks::BlockReplica,
    /// Each author's last op id in the stream up to `applied`.
    last_ops: BTreeMap<u64, u64>,
    /// The world's lease bucket and the keeper of this node id's lease.
    leases: (async_nats::jetstream::kv::Store, super::lease::NodeIdKeeper),
}

/// The blocks every node shows as of stream sequence `upto` (the block messages of the
/// stream up to there, by the one rule, [`super::blocks::BlockReplica::apply`]) and each
/// author's last op id there. A node keeps neither in its world file, so a restart reads
/// them again: a client that resumes on it is told the last op of its that the stream
/// holds, and sends again those after it (ops its last node never published).
async fn blocks_upto(
    world: &WorldStream,
    upto: u64,
) -> Result<(super::blocks::BlockReplica, BTreeMap<u64, u64>), ClusterError> {
    let mut replica = super::blocks::BlockReplica::new();
    let mut last_ops = BTreeMap::new();
    if upto == 0 {
        return Ok((replica, last_ops));
    }
    let start = std::time::Instant::now();
    let mut applied = 0u64;
    world
        .read_upto(upto, |seq, _, payload| {
            let Ok(op) = super::log::OpMessage::decode(payload) else {
                return Ok(());
            };
            if matches!(op.kind, super::log::Kind::Terrain | super::log::Kind::Block) {
                let last = last_ops.entry(op.author).or_insert(op.op_id);
                *last = (*last).max(op.op_id);
            }
            if op.kind != super::log::Kind::Terrain {
                replica.apply(seq, &op);
                applied += 1;
            }
            Ok(())
        })
        .await?;
    tracing::info!(
        "read the blocks of the stream up to {upto} ({applied} messages) in {:.3} s",
        start.elapsed().as_secs_f64()
    );
    Ok((replica, last_ops))
}

/// Opens the node's world on the stream, checks (or makes, from the genesis) its world
/// file `cfg.world`, and sets `cfg` for a node: the generator checked against the
/// genesis; takes the node id's lease and reads the stream's blocks up to the file's
/// position.
///
/// # Errors
/// [`ClusterError`]: a bad node id, NATS unreachable, no such world, another generator,
/// a world file of another world.
pub(crate) async fn prepare(
    node: &super::NodeConfig,
    cfg: &mut crate::ServerConfig,
) -> Result<Prepared, ClusterError> {
    if !(1..=4095).contains(&node.node_id) {
        return Err(ClusterError::BadNodeId { id: node.node_id });
    }
    let mut world = WorldStream::open(node).await?;
    world.generator(&cfg.generator)?;
    let g = &world.genesis;
    let secret: [u8; 32] = super::unhex(&g.resume_secret)
        .and_then(|v| v.try_into().ok())
        .ok_or_else(|| ClusterError::Genesis {
            stream: world.names.stream(),
            world_id: g.world_id.clone(),
            why: "its resume secret is not 64 hex digits".into(),
        })?;
    // The node id first: a node refused for a clash leaves no file behind. Kept from here
    // on, however long the start takes.
    let kv = super::lease::bucket(&world.js, &world.names, world.replicas()).await?;
    let node_rev = super::lease::claim_node_id(&kv, node.node_id).await?;
    let keeper = super::lease::NodeIdKeeper::start(kv.clone(), node.node_id, node_rev);
    let rest = async {
        let (applied, from_snapshot, snapshots) = world_file(&world, &cfg.world).await?;
        let stream_last = world.last_seq_patiently().await?;
        if applied.seq > stream_last {
            return Err(ClusterError::OtherSnapshot {
                file: cfg.world.clone(),
                world_id: world.genesis.world_id.clone(),
                why: format!(
                    "it has applied the stream up to {}, and the stream ends at {stream_last}",
                    applied.seq
                ),
            });
        }
        let (replica, last_ops) = blocks_upto(&world, applied.seq).await?;
        Ok((
            applied,
            from_snapshot,
            snapshots,
            stream_last,
            replica,
            last_ops,
        ))
    };
    let (applied, from_snapshot, snapshots, stream_last, replica, last_ops) = match rest.await {
        Ok(r) => r,
        Err(e) => {
            keeper.give_up().await;
            return Err(e);
        }
    };
    Ok(Prepared {
        world,
        snapshots,
        from_snapshot: from_snapshot.map(|p| p.seq),
        node_id: node.node_id,
        applied,
        secret,
        stream_last,
        replica,
        last_ops,
        leases: (kv, keeper),
    })
}

/// The node's world file at `path`, checked against the world, or made: from the world's
/// snapshot if there is one, else from the genesis. Returns where it stands, the snapshot's
/// position if it was made from one, and the world's snapshot store (`None` if it cannot
/// be had: the node then neither takes nor puts snapshots).
async fn world_file(
    world: &WorldStream,
    path: &std::path::Path,
) -> Result<
    (
        super::log::Position,
        Option<super::log::Position>,
        Option<async_nats::jetstream::object_store::ObjectStore>,
    ),
    ClusterError,
> {
    let snapshots = match super::snapshot::bucket(&world.js, &world.names, world.replicas()).await {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("no snapshots for this node: {}", crate::error_chain(&e));
            None
        }
    };
    // A node without its file starts from the world's snapshot, if a node made one.
    let from_snapshot = match &snapshots {
        Some(s) if !path.exists() => super::snapshot::download(s, &world.genesis, path).await,
        _ => None,
    };
    let g = &world.genesis;
    let applied = match super::check_snapshot(path, g)? {
        Some(p) => p,
        None => {
            let mut store = loam_store::Store::create(
                path,
                &g.generator_json,
                &g.field,
                g.heightmap_blake3.as_deref(),
            )?;
            let start = super::log::Position {
                world: g.tag(),
                ..Default::default()
            };
            store.append_records_followed(&[], &start.encode())?;
            start
        }
    };
    Ok((applied, from_snapshot, snapshots))
}

impl Prepared {
    /// Where the node starts in the stream.
    pub(crate) fn start_info(&self) -> super::NodeStart {
        super::NodeStart {
            file_seq: self.applied.seq,
            from_snapshot: self.from_snapshot,
            stream_last: self.stream_last,
        }
    }

    /// Makes `order` a node (its client ids, the world's resume secret, where it stands in
    /// the stream) and starts the publisher, the follower and the lease keeper.
    pub(crate) fn start(
        self,
        order: &mut crate::order::Order,
        tx: mpsc::Sender<Command>,
    ) -> NodeTasks {
        let (publish_tx, publish_rx) = mpsc::unbounded_channel();
        order.clients.resume_secret = self.secret;
        // Client ids carry the node in their top 12 bits: two nodes never give out the same.
        let micros = order.clients.next_client & ((1 << 52) - 1);
        order.clients.next_client = (u64::from(self.node_id) << 52) | micros.max(1);
        order.journal.set_open_stroke(self.applied.open);
        order.node = Some(crate::order::NodeLink {
            names: self.world.names.clone(),
            publish: publish_tx.clone(),
            applied: self.applied.seq,
            tag: self.applied.world.clone(),
            waiting_joins: Vec::new(),
            catching_up: (self.stream_last > self.applied.seq).then(|| {
                (
                    self.applied.seq,
                    self.stream_last,
                    std::time::Instant::now(),
                )
            }),
            node_id: self.node_id,
            log_away: false,
            blocks: crate::order::NodeBlocks {
                replica: self.replica,
                islands: order.sim_islands(),
                ..Default::default()
            },
        });
        // A node decides nothing until it holds the block lease.
        order.empty_simulation();
        order.note_op_ids(self.last_ops);
        let js = self.world.js.clone();
        let (kv, keeper) = self.leases;
        let (release, released) = tokio::sync::oneshot::channel();
        let holds_blocks = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let lease = super::lease::hold(
            kv,
            self.world.names.clone(),
            self.node_id,
            keeper,
            tx.clone(),
            publish_tx,
            holds_blocks.clone(),
            released,
        );
        let reach = tell_reach(self.world.up.clone(), tx.clone());
        let (js_up, names, tag) = (
            self.world.js.clone(),
            self.world.names.clone(),
            self.world.genesis.tag(),
        );
        let snapshots = self.snapshots;
        let mut tasks = vec![
            tokio::spawn(reach),
            tokio::spawn(publish(js, publish_rx)),
            tokio::spawn(follow(self.world, self.applied.seq, tx)),
        ];
        let copies = order.durability.snapshot_copies.take();
        if let (Some(copies), Some(store)) = (copies, snapshots) {
            let up = super::snapshot::uploader(
                store,
                super::snapshot::Uploading {
                    js: js_up,
                    names,
                    world: tag,
                    node: self.node_id,
                    holds_blocks,
                },
                copies,
            );
            tasks.push(tokio::spawn(up));
        }
        NodeTasks {
            tasks,
            lease: Some((tokio::spawn(lease), release)),
        }
    }
}
