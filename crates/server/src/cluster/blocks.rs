//! Blocks on the world's stream: one node at a time decides (the holder of the world's
//! block lease, `lease.rs`), every node follows its decisions as records.
//!
//! ```text
//!  client block op ──▶ its node: op id, decode ──▶ Block request (cell subject)
//!  the authority, in stream order: decides each request on its own block world (physics,
//!      support, lumps), steps its physics by its clock ──▶ Outcome (blocks subject):
//!      the request's verdict and the records it changed, or the records a step changed
//!  every node and the export: Outcome ──▶ BlockReplica::apply ──▶ the blocks its clients see
//! ```
//!
//! The records are those a client's replica already applies ([`BlockDelta`]: whole held
//! blocks and pieces, poses and motion included), so applying the same outcomes in the same
//! order gives every node the same blocks bit for bit, whatever its own physics would have
//! done: nothing of a node's clock or physics reaches the replica. (Nor its physics step:
//! each authority counts its own from 0, so nodes log and send block ops at step 0; their
//! world files' blocks come from the stream, never from a replay of the physics.)
//!
//! **Who decides.** An authority announces itself with an [`Authority`] message carrying
//! its *epoch* (the lease's revision in the key-value bucket when it took the lease, which
//! only grows). A replica takes an announcement with a higher epoch than its own and from
//! then on applies only outcomes of that epoch: an authority that lost its lease (killed,
//! cut off from NATS, slow) and publishes late is ignored by every node alike, at the same
//! point of the stream. Requests logged and not yet decided when an authority takes over are
//! decided by the new one in stream order (every node knows the same set:
//! [`BlockReplica::undecided`]).

use std::collections::BTreeMap;

use loam_blocks::{BlockDelta, BlockSettings, BlockWorld, BlocksFile, MaterialTable};
use loam_physics::{PhysicsSettings, PhysicsWorld};
use serde::{Deserialize, Serialize};

use super::log::{Kind, OpMessage};

/// What an authority decided, in an [`Kind::Outcome`] message's record (MessagePack).
/// The message's author and op id are the request's (0 and 0 for what a physics step or a
/// terrain op changed; 0 and the cut's stream sequence for a lump).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The epoch of the authority that decided.
    pub epoch: u64,
    /// The verdict on the request, or none (records of a step).
    pub verdict: Verdict,
    /// What changed (a part of it when large: the rest follows as [`Verdict::Event`]s).
    pub delta: BlockDelta,
}

/// The verdict of an [`Outcome`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    /// The request was applied: the op's bytes ([`loam_blocks::BlockOp::encode`]).
    Accepted(Vec<u8>),
    /// The request was refused (nothing changed), and why.
    Refused(String),
    /// Not a request: what the physics or a terrain op changed.
    Event,
}

/// A lump of terrain cut loose, in a [`Kind::Cut`] message's record (MessagePack): the
/// removal ops every node applies to its field as one stroke, and the lump the authority
/// then drops as a block op.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    /// The authority's epoch.
    pub epoch: u64,
    /// The removal ops, each a [`loam_field::LogEntry`] record (its number and stroke are
    /// the journal's when applied).
    pub removals: Vec<Vec<u8>>,
    /// The lump ([`loam_blocks::BlockOp::Lump`], encoded).
    pub lump: Vec<u8>,
}

/// The message that makes a node the world's block authority: author = its node id,
/// op id = its epoch, no record.
pub fn authority_message(node_id: u16, epoch: u64) -> OpMessage {
    OpMessage {
        kind: Kind::Authority,
        author: u64::from(node_id),
        op_id: epoch,
        record: Vec::new(),
    }
}

/// A request logged and not yet decided: who sent it and the op's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Its stream sequence.
    pub seq: u64,
    /// The author (0 for a lump).
    pub author: u64,
    /// The author's op id (the cut's stream sequence for a lump).
    pub op_id: u64,
    /// The op ([`loam_blocks::BlockOp::encode`]).
    pub op: Vec<u8>,
}

/// What [`BlockReplica::apply`] made of a message.
#[derive(Debug)]
pub enum BlockApplied {
    /// An authority took over at this point of the stream.
    Authority {
        /// Its node id.
        node: u16,
        /// Its epoch.
        epoch: u64,
    },
    /// An outcome of the authority in force, applied to the replica.
    Outcome {
        /// The request's author (0 for events).
        author: u64,
        /// The request's op id.
        op_id: u64,
        /// The outcome.
        outcome: Outcome,
    },
    /// A request, noted as undecided.
    Requested,
    /// An outcome of another epoch than the one in force (a late authority's): skipped
    /// by every replica alike.
    Late {
        /// Its epoch.
        epoch: u64,
    },
    /// Not a block message (a terrain op or a cut, for the field's rule).
    NotBlocks,
    /// Skipped by every replica alike: why.
    Skipped(String),
}

/// The blocks every node shows its clients: the records of the authority's outcomes, in
/// stream order, and what the stream has asked for and not yet had decided.
pub struct BlockReplica {
    /// The block world (records only: nothing decided here).
    pub world: BlockWorld,
    /// The physics world its held blocks and pieces live in ([`BlockWorld::apply_delta`]
    /// needs one; it is never stepped).
    pub physics: PhysicsWorld,
    /// The epoch of the authority in force (0: none yet).
    pub epoch: u64,
    /// Requests logged and not decided, by (author, op id).
    undecided: BTreeMap<(u64, u64), Request>,
}

impl std::fmt::Debug for BlockReplica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockReplica")
            .field("epoch", &self.epoch)
            .field("held", &self.world.store().len())
            .field("pieces", &self.world.pieces().count())
            .field("undecided", &self.undecided.len())
            .finish()
    }
}

impl Default for BlockReplica {
    fn default() -> Self {
        Self::new()
    }
}

impl BlockReplica {
    /// An empty replica with the standard materials (as a new world file has).
    pub fn new() -> Self {
        let world = BlockWorld::new(MaterialTable::standard(), BlockSettings::default())
            .expect("the standard materials and default settings are valid");
        let physics = PhysicsWorld::new(PhysicsSettings::default())
            .expect("the default physics settings are valid");
        Self {
            world,
            physics,
            epoch: 0,
            undecided: BTreeMap::new(),
        }
    }

    /// The replica's blocks as a file (what a node bakes, what an export writes).
    pub fn save(&self) -> BlocksFile {
        self.world.save()
    }

    /// Requests logged and not yet decided, in stream order.
    pub fn undecided(&self) -> Vec<Request> {
        let mut v: Vec<Request> = self.undecided.values().cloned().collect();
        v.sort_by_key(|r| r.seq);
        v
    }

    /// Notes a lump's request (the field's side of a cut was applied at stream `seq`).
    pub fn request_lump(&mut self, seq: u64, lump: Vec<u8>) {
        self.undecided.insert(
            (0, seq),
            Request {
                seq,
                author: 0,
                op_id: seq,
                op: lump,
            },
        );
    }

    /// Applies message `seq` of the stream: the one rule of the blocks, the same on every
    /// node. An authority with a higher epoch takes over; an outcome of the authority in
    /// force is applied ([`BlockWorld::apply_delta`]) and settles its request; one of another
    /// epoch, or whose records do not apply, is skipped; a request is noted.
    pub fn apply(&mut self, seq: u64, m: &OpMessage) -> BlockApplied {
        match m.kind {
            Kind::Terrain => BlockApplied::NotBlocks,
            Kind::Cut => {
                // The field's side is the field's rule (`log::apply`); the lump is a request.
                if let Ok(cut) = rmp_serde::from_slice::<Cut>(&m.record) {
                    self.request_lump(seq, cut.lump);
                }
                BlockApplied::NotBlocks
            }
            Kind::Block => {
                self.undecided.insert(
                    (m.author, m.op_id),
                    Request {
                        seq,
                        author: m.author,
                        op_id: m.op_id,
                        op: m.record.clone(),
                    },
                );
                BlockApplied::Requested
            }
            Kind::Authority => {
                let Ok(node) = u16::try_from(m.author) else {
                    return BlockApplied::Skipped(format!("an authority of node {}", m.author));
                };
                if m.op_id <= self.epoch {
                    return BlockApplied::Skipped(format!(
                        "node {node}'s authority of epoch {} comes after epoch {}",
                        m.op_id, self.epoch
                    ));
                }
                self.epoch = m.op_id;
                BlockApplied::Authority {
                    node,
                    epoch: m.op_id,
                }
            }
            Kind::Outcome => {
                let outcome: Outcome = match rmp_serde::from_slice(&m.record) {
                    Ok(o) => o,
                    Err(e) => return BlockApplied::Skipped(format!("an outcome: {e}")),
                };
                if outcome.epoch != self.epoch {
                    return BlockApplied::Late {
                        epoch: outcome.epoch,
                    };
                }
                if !matches!(outcome.verdict, Verdict::Event)
                    && self.undecided.remove(&(m.author, m.op_id)).is_none()
                {
                    return BlockApplied::Skipped(format!(
                        "an outcome of op {} of {} that is not undecided",
                        m.op_id, m.author
                    ));
                }
                if let Err(e) = self.world.apply_delta(&mut self.physics, &outcome.delta) {
                    return BlockApplied::Skipped(format!("an outcome's records: {e}"));
                }
                BlockApplied::Outcome {
                    author: m.author,
                    op_id: m.op_id,
                    outcome,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use loam_blocks::{BlockOp, BlockPos, BlockSize};

    use super::*;

    fn outcome(epoch: u64, verdict: Verdict, delta: BlockDelta) -> Vec<u8> {
        rmp_serde::to_vec_named(&Outcome {
            epoch,
            verdict,
            delta,
        })
        .unwrap()
    }

    /// An authority's world deciding a place, and what it sends.
    fn placed(at: [i32; 3]) -> (Vec<u8>, BlockDelta) {
        let mut w = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
        let mut p = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        w.set_tracking(true);
        let op = BlockOp::Place {
            at: BlockPos::new(BlockSize::Full, at).unwrap(),
            material: MaterialTable::STONE,
            shape: Default::default(),
            paint: None,
        };
        // Solid below y = 0.
        w.apply(&mut p, &|q: [f64; 3]| q[1] as f32, &op).unwrap();
        (op.encode(), w.take_delta())
    }

    #[test]
    fn outcomes_of_the_authority_in_force_apply_and_late_ones_are_skipped() {
        let mut r = BlockReplica::new();
        let msg = |kind, author, op_id, record| OpMessage {
            kind,
            author,
            op_id,
            record,
        };
        let (op, delta) = placed([0, 0, 0]);
        assert!(matches!(
            r.apply(1, &msg(Kind::Block, 9, 1, op.clone())),
            BlockApplied::Requested
        ));
        assert_eq!(r.undecided().len(), 1);
        // No authority yet: epoch 0 is not one.
        let early = outcome(3, Verdict::Accepted(op.clone()), delta.clone());
        assert!(matches!(
            r.apply(2, &msg(Kind::Outcome, 9, 1, early.clone())),
            BlockApplied::Late { epoch: 3 }
        ));
        assert!(matches!(
            r.apply(3, &authority_message(2, 3)),
            BlockApplied::Authority { node: 2, epoch: 3 }
        ));
        assert!(matches!(
            r.apply(4, &msg(Kind::Outcome, 9, 1, early.clone())),
            BlockApplied::Outcome { author: 9, .. }
        ));
        assert_eq!(r.world.store().len(), 1);
        assert!(r.undecided().is_empty());
        // Twice: the request is settled, the second is skipped.
        assert!(matches!(
            r.apply(5, &msg(Kind::Outcome, 9, 1, early)),
            BlockApplied::Skipped(_)
        ));
        // A newer authority; the old one's late outcome changes nothing.
        assert!(matches!(
            r.apply(6, &authority_message(1, 7)),
            BlockApplied::Authority { node: 1, epoch: 7 }
        ));
        assert!(matches!(
            r.apply(7, &authority_message(2, 5)),
            BlockApplied::Skipped(_)
        ));
        let (op2, delta2) = placed([4, 0, 0]);
        r.apply(8, &msg(Kind::Block, 9, 2, op2.clone()));
        let late = outcome(3, Verdict::Accepted(op2.clone()), delta2.clone());
        assert!(matches!(
            r.apply(9, &msg(Kind::Outcome, 9, 2, late)),
            BlockApplied::Late { epoch: 3 }
        ));
        assert_eq!(r.world.store().len(), 1);
        assert_eq!(
            r.undecided()[0].seq,
            8,
            "still undecided for the new authority"
        );
        let ok = outcome(7, Verdict::Accepted(op2), delta2);
        assert!(matches!(
            r.apply(10, &msg(Kind::Outcome, 9, 2, ok)),
            BlockApplied::Outcome { .. }
        ));
        assert_eq!(r.world.store().len(), 2);
        // Corrupt records are skipped, never a panic.
        assert!(matches!(
            r.apply(11, &msg(Kind::Outcome, 0, 0, vec![0xc1, 7])),
            BlockApplied::Skipped(_)
        ));
    }
}
