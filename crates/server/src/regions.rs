//! The ordering thread's commands other than ops: a client joining (welcome, resume,
//! snapshot), a viewer moving into new bricks (the bricks sent nearest first), hashes,
//! status, and the ticks that tell idle clients the log moved on and send presence.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use loam_field::FieldHash;

use bytes::Bytes;
use loam_field::{Brick, BrickKey};
use tokio::sync::oneshot;

use super::ServerStatus;
use super::conn::PeerLink;
use super::frames::{CatchUpJob, Frame, charge};
use super::order::{Command, Order, Peer, SEQ_EVERY, push, push_frame};
use crate::protocol::{
    BrickBox, Hello, PROTOCOL_VERSION, ServerMessage, Viewer, WORLD_PART_BYTES, Welcome,
};
use loam_protocol::interest::region_for;

impl Order {
    /// The catch-up of `region` for a viewer: every brick of the server's in `region` but
    /// outside `keep`, and those of `stale` in `region` (the generator's where the server
    /// holds none), nearest first; encoded by the client's writer ([`CatchUpJob`]).
    pub(super) fn catch_up(
        &self,
        viewer: &Viewer,
        region: BrickBox,
        keep: Option<BrickBox>,
        stale: &BTreeSet<[i32; 3]>,
    ) -> CatchUpJob {
        let brick_m = f64::from(loam_field::BRICK_SAMPLES) * self.field.settings().voxel_size;
        let at = viewer.position.map(|c| c / brick_m - 0.5);
        let distance = |k: [i32; 3]| {
            k.iter()
                .zip(at)
                .map(|(&c, p)| (f64::from(c) - p) * (f64::from(c) - p))
                .sum::<f64>()
        };
        let (lo, hi) = (region.min, region.max);
        let mut list: Vec<(f64, BrickKey, Arc<Brick>)> = self
            .field
            .bricks_in(
                BrickKey::new(lo[0], lo[1], lo[2]),
                BrickKey::new(hi[0], hi[1], hi[2]),
            )
            .filter(|(k, _)| {
                let k = [k.x, k.y, k.z];
                keep.is_none_or(|b| !b.contains(k)) || stale.contains(&k)
            })
            .map(|(k, b)| (distance([k.x, k.y, k.z]), k, b.clone()))
            .collect();
        // A stale brick the server does not hold is the generator's: the client may hold a
        // wrong one (an op computed from a stale brick), so it is sent too.
        let (vs, band) = (
            self.field.settings().voxel_size,
            self.field.settings().band(),
        );
        for &k in stale {
            let key = BrickKey::new(k[0], k[1], k[2]);
            if region.contains(k) && self.field.brick(key).is_none() {
                let b = Brick::generate(self.field.generator(), key, vs, band);
                list.push((distance(k), key, Arc::new(b)));
            }
        }
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        CatchUpJob::new(
            self.journal.last_seq(),
            region,
            keep,
            list.into_iter().map(|(_, k, b)| (k, b)).collect(),
            self.max_message,
            self.cache.clone(),
        )
    }

    pub(super) fn join(
        &mut self,
        conn: u64,
        addr: std::net::SocketAddr,
        hello: Hello,
        link: PeerLink,
        over_limit: Option<String>,
        reply: oneshot::Sender<u64>,
    ) {
        let vs = self.field.settings().voxel_size;
        let region = region_for(&hello.viewer, self.margin, vs);
        // A resume keeps its id only with the key this process gave that id: ids are public
        // (presence lists them), and one taken over would kick its player and spoil its op
        // ids. Any other resume (a forged id, a key from before a restart) joins under a new
        // id, still resuming the data from its last sequence number.
        let id = match &hello.resume {
            Some(r) if same_key(r.key, resume_key(&self.clients.resume_secret, r.client_id)) => {
                r.client_id
            }
            _ => {
                self.clients.next_client += 1;
                self.clients.next_client - 1
            }
        };
        // Past the client limit only to replace a connection of the same client (one whose
        // link died without a close): a key of a client that left holds no slot to take.
        if let Some(why) = over_limit
            && !self.clients.peers.contains_key(&id)
        {
            return link.kill(why);
        }
        // A client back with its key keeps its catch-up budget: reconnecting does not refill
        // it. (A new id gets a full one.)
        let mut budget = self.clients.spent_budgets.remove(&id);
        if let Some(old) = self.clients.peers.remove(&id) {
            old.link
                .kill("replaced by a newer connection of the same client");
            budget = Some(old.catch_ups);
        }
        self.hashes.forget(id);
        let plan = hello.resume.as_ref().and_then(|r| {
            self.clients.ring.plan(
                r.last_seq,
                self.journal.last_seq(),
                &r.region,
                id,
                self.clients.outbox.messages / 2,
            )
        });
        let mut world = self.meta.clone();
        let mut frames: Vec<Frame> = Vec::new();
        let part = WORLD_PART_BYTES.min(self.max_message / 4);
        if world.generator_json.len() > part {
            let json = std::mem::take(&mut world.generator_json);
            frames.extend(json.as_bytes().chunks(part).map(|c| {
                Frame::from(Bytes::from(
                    ServerMessage::WorldPart { bytes: c.to_vec() }.encode(),
                ))
            }));
        }
        let welcome = Welcome {
            protocol: PROTOCOL_VERSION,
            client_id: id,
            resume_key: resume_key(&self.clients.resume_secret, id),
            world,
            seq: self.journal.last_seq(),
            resumed: plan.is_some(),
            // A node knows every op of the stream (`cluster/node.rs` reads them at its
            // start): none there means none taken, never "cannot tell".
            last_op_id: match (self.last_op.get(&id), &self.node) {
                (Some(&last), _) => Some(last),
                (None, Some(_)) => Some(0),
                (None, None) => None,
            },
        };
        let welcome_resumed = welcome.resumed;
        frames.push(Bytes::from(ServerMessage::Welcome(welcome).encode()).into());
        let (keep, stale, keep_blocks) = match (&hello.resume, plan) {
            (Some(r), Some(p)) => {
                frames.extend(p.frames.into_iter().map(Frame::from));
                let keep = r.region.intersection(&region);
                (keep, p.stale, if p.blocks_lost { None } else { keep })
            }
            _ => (None, BTreeSet::new(), None),
        };
        let blocks = self.block_catch_up(region, keep_blocks);
        let block_bytes: usize = blocks.iter().map(Bytes::len).sum();
        frames.extend(blocks.into_iter().map(Frame::from));
        let mut bricks = self.catch_up(&hello.viewer, region, keep, &stale);
        // A join's catch-up is never held back, but it is charged like a move's: a client
        // that joins again and again (with its key, keeping its budget) is metered as one
        // that moves, and its next moves wait while the join's bytes are owed.
        let budget = budget.unwrap_or_else(|| self.catch_up_budget());
        let owed = charge(block_bytes, bricks.estimate()) as f64;
        budget.lock().expect("not poisoned").charge(owed);
        bricks.budget = Some((budget.clone(), block_bytes));
        frames.push(Frame::CatchUp(Box::new(bricks)));
        if self.node.as_ref().is_some_and(|n| n.log_away) {
            frames.push(Bytes::from(super::order::log_notice(true).encode()).into());
        }
        let peer = Peer {
            conn,
            link,
            region,
            informed: self.journal.last_seq(),
            informed_at: Instant::now(),
            join_bytes: frames.iter().map(Frame::len).sum(),
            catch_ups: budget,
            waiting_viewer: None,
        };
        let mut dead = Vec::new();
        for f in frames {
            push_frame(id, &peer, f, self.clients.outbox, &mut dead);
        }
        if let Some((_, why)) = dead.pop() {
            return peer.link.kill(why);
        }
        self.clients.peers.insert(id, peer);
        self.clients
            .presence
            .join(id, &hello.name, hello.viewer.position);
        tracing::info!(
            client = id,
            name = ?hello.name,
            peer = %addr,
            resumed = welcome_resumed,
            seq = self.journal.last_seq(),
            "joined"
        );
        let _ = reply.send(id);
    }

    /// The region `viewer` moves `client` (on connection `conn`) into, or `None` where it
    /// asks for no catch-up: the client or connection is gone, or the move keeps its region
    /// (hysteresis: a region stays while it holds the view and is not far too large).
    fn new_region(&self, conn: u64, client: u64, viewer: &Viewer) -> Option<BrickBox> {
        let old = self
            .clients
            .peers
            .get(&client)
            .filter(|p| p.conn == conn)?
            .region;
        let vs = self.field.settings().voxel_size;
        let core = region_for(viewer, 0.0, vs);
        let loose = region_for(viewer, 2.0 * self.margin, vs);
        if old.contains_box(&core) && loose.contains_box(&old) {
            return None;
        }
        Some(region_for(viewer, self.margin, vs))
    }

    /// Takes a viewer move at once, unordered with the ops in flight, where it asks for no
    /// catch-up now: one that keeps the client's region (a move that came back cancels
    /// one still waiting), and one over the client's catch-up budget (it waits as the
    /// client's latest move, for [`Order::tick`]). `false`: it asks for a catch-up now,
    /// which waits until nothing is in flight ([`Order::viewer`]).
    pub(super) fn viewer_at_once(&mut self, conn: u64, client: u64, viewer: &Viewer) -> bool {
        let moves = self.new_region(conn, client, viewer).is_some();
        let Some(peer) = self
            .clients
            .peers
            .get_mut(&client)
            .filter(|p| p.conn == conn)
        else {
            return true;
        };
        self.clients.presence.moved(client, viewer.position);
        if !moves {
            peer.waiting_viewer = None;
            return true;
        }
        if !peer
            .catch_ups
            .lock()
            .expect("not poisoned")
            .has_some(Instant::now())
        {
            peer.waiting_viewer = Some(*viewer);
            return true;
        }
        false
    }

    /// Moves `client`'s region to `viewer`'s and sends the catch-up of the bricks new to it
    /// (charged to the client's catch-up budget), or keeps the move waiting if the budget
    /// is spent. Runs with nothing in flight: the catch-up holds only durable ops.
    pub(super) fn viewer(&mut self, conn: u64, client: u64, viewer: Viewer) {
        let Some(region) = self.new_region(conn, client, &viewer) else {
            if let Some(p) = self
                .clients
                .peers
                .get_mut(&client)
                .filter(|p| p.conn == conn)
            {
                p.waiting_viewer = None;
            }
            return;
        };
        let Some(peer) = self.clients.peers.get_mut(&client) else {
            return;
        };
        let budget = peer.catch_ups.clone();
        if !budget
            .lock()
            .expect("not poisoned")
            .has_some(Instant::now())
        {
            peer.waiting_viewer = Some(viewer);
            return;
        }
        peer.waiting_viewer = None;
        let keep = peer.region.intersection(&region);
        let blocks = self.block_catch_up(region, keep);
        let mut bricks = self.catch_up(&viewer, region, keep, &BTreeSet::new());
        let Some(peer) = self.clients.peers.get_mut(&client) else {
            return;
        };
        // The bricks' estimate now, set right once the writer has encoded them.
        let block_bytes: usize = blocks.iter().map(Bytes::len).sum();
        let charge = charge(block_bytes, bricks.estimate()) as f64;
        budget.lock().expect("not poisoned").charge(charge);
        bricks.budget = Some((budget, block_bytes));
        peer.region = region;
        let mut dead = Vec::new();
        for f in blocks {
            push(client, peer, f, self.clients.outbox, &mut dead);
        }
        push_frame(
            client,
            peer,
            Frame::CatchUp(Box::new(bricks)),
            self.clients.outbox,
            &mut dead,
        );
        self.bury(dead);
    }

    pub(super) fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Join {
                conn,
                peer,
                hello,
                link,
                over_limit,
                reply,
            } => self.join(conn, peer, hello, link, over_limit, reply),
            Command::Viewer {
                conn,
                client,
                viewer,
            } => {
                if self
                    .clients
                    .peers
                    .get(&client)
                    .is_some_and(|p| p.conn == conn)
                {
                    self.clients.presence.moved(client, viewer.position);
                }
                self.viewer(conn, client, viewer);
            }
            Command::Presence {
                conn,
                client,
                report,
            } => {
                if self
                    .clients
                    .peers
                    .get(&client)
                    .is_some_and(|p| p.conn == conn)
                {
                    self.clients.presence.report(client, report);
                }
            }
            Command::HashTo {
                client,
                request,
                region,
            } => self.queue_hash(client, request, region),
            Command::HashFor { region, reply } => {
                let _ = reply.send((self.journal.last_seq(), self.hash(region)));
            }
            Command::BlocksFor { region, reply } => {
                let _ = reply.send((
                    self.journal.last_seq(),
                    self.block_hash(region),
                    self.shown_blocks().save(),
                ));
            }
            Command::Status { reply } => {
                let (blocks, pieces, falling) = self.block_counts();
                let _ = reply.send(ServerStatus {
                    seq: self.journal.last_seq(),
                    clients: self.clients.peers.len(),
                    accepted: self.accepted,
                    made: self.made,
                    refused: self.refused,
                    blocks,
                    block_authority: self.node.as_ref().and_then(|n| n.blocks.acting),
                    pieces,
                    falling,
                    step: self.log_step(),
                    digs_pending: self.sim.pending_cuts.len() + self.sim.ground.searching,
                    latency: self.latency.summary(),
                    ground: self.sim.ground.work(),
                });
            }
            Command::Meta { reply } => {
                let _ = reply.send(self.meta.clone());
            }
            Command::Leave { conn, client } => {
                if self
                    .clients
                    .peers
                    .get(&client)
                    .is_some_and(|p| p.conn == conn)
                {
                    self.left(client);
                    self.hashes.forget(client);
                }
            }
            Command::Tick => {
                self.let_in_joins();
                self.tick();
            }
            Command::TakeLatency { reply } => {
                let _ = reply.send(self.latency.take());
            }
            Command::Op { .. }
            | Command::Logged { .. }
            | Command::Lease { .. }
            | Command::LogReach { .. }
            | Command::BlockOp { .. }
            | Command::Shutdown { .. } => {
                unreachable!("handled by dispatch")
            }
        }
    }

    pub(super) fn bury(&mut self, dead: Vec<(u64, String)>) {
        for (id, why) in dead {
            if let Some(p) = self.left(id) {
                p.link.kill(why);
            }
            self.hashes.forget(id);
        }
    }

    /// Removes client `id`'s peer, keeping its catch-up budget while it is spent.
    fn left(&mut self, id: u64) -> Option<Peer> {
        let p = self.clients.peers.remove(&id)?;
        if !p
            .catch_ups
            .lock()
            .expect("not poisoned")
            .is_full(Instant::now())
        {
            self.clients.spent_budgets.insert(id, p.catch_ups.clone());
        }
        Some(p)
    }

    pub(super) fn hash(&self, region: Option<BrickBox>) -> FieldHash {
        super::order::hash_of(&self.field, region)
    }

    pub(super) fn tick(&mut self) {
        let start = Instant::now();
        self.cut_loose();
        self.start_steps();
        let now = Instant::now();
        self.edit_budgets.prune(now);
        let mut dead = Vec::new();
        for (&id, p) in &mut self.clients.peers {
            if p.informed < self.durability.released
                && now.duration_since(p.informed_at) >= SEQ_EVERY
            {
                let msg = ServerMessage::Seq {
                    seq: self.durability.released,
                };
                push(id, p, msg.encode().into(), self.clients.outbox, &mut dead);
                p.informed = self.durability.released;
                p.informed_at = now;
            }
        }
        self.bury(dead);
        self.send_presence(now);
        self.clients
            .spent_budgets
            .retain(|_, b| !b.lock().expect("not poisoned").is_full(now));
        // Viewer moves that waited for their clients' catch-up budgets, once they allow.
        let due: Vec<Command> = self
            .clients
            .peers
            .iter_mut()
            .filter_map(|(&client, p)| {
                if p.waiting_viewer.is_none()
                    || !p.catch_ups.lock().expect("not poisoned").has_some(now)
                {
                    return None;
                }
                let viewer = p.waiting_viewer.take()?;
                Some(Command::Viewer {
                    conn: p.conn,
                    client,
                    viewer,
                })
            })
            .collect();
        for cmd in due {
            self.dispatch(cmd);
        }
        self.latency.ticked(start.elapsed());
    }

    /// Presence updates due at `now` (players buried above are reported as left).
    fn send_presence(&mut self, now: Instant) {
        let connected: Vec<u64> = self.clients.peers.keys().copied().collect();
        let mut dead = Vec::new();
        for (id, frames) in self.clients.presence.updates(now, &connected) {
            let Some(peer) = self.clients.peers.get(&id) else {
                continue;
            };
            for f in frames {
                push(id, peer, f, self.clients.outbox, &mut dead);
            }
        }
        self.bury(dead);
    }
}

/// The resume key of client `id`: the first 128 bits of BLAKE3 keyed with this process's
/// `secret` over the id's little-endian bytes (a keyed hash as a MAC, so a key for one id
/// tells nothing of another's).
pub(super) fn resume_key(secret: &[u8; 32], id: u64) -> [u64; 2] {
    let h = blake3::keyed_hash(secret, &id.to_le_bytes());
    let b = h.as_bytes();
    let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    [word(0), word(8)]
}

/// Compares two keys in time that does not depend on where they differ.
pub(super) fn same_key(a: [u64; 2], b: [u64; 2]) -> bool {
    ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0
}
