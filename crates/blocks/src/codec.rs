//! Bytes for the world file: the blocks snapshot ([`BlocksFile::encode`]) and logged block
//! ops ([`BlockOp::encode`]), MessagePack with named fields, plus the replay of logged ops
//! at their physics steps ([`BlockReplay`]).
//!
//! loam-store keeps these bytes without reading them (it does not depend on this crate or
//! on Rapier): the snapshot written at a bake (zstd, checksummed), and each block op in the
//! op log with its sequence number (one numbering with terrain ops) and the physics step it
//! was applied at. A collapse follows from the ops *and* the steps between them, so a
//! replay must step the physics world exactly as the live session did:
//!
//! ```text
//!   live:    for each frame: ops (log each with step = base + physics.step_count()),
//!            then BlockWorld::step(physics, timestep)        ← one step per update
//!   replay:  BlockWorld::load(snapshot); BlockReplay::new(snapshot step);
//!            for each logged op: replay.apply(.., op.step, op)  (steps up to op.step first)
//! ```
//!
//! `base` is the step of the snapshot the live session was restored from (0 for a new
//! world): a restored physics world counts its steps from 0 again.
//!
//! What is exact and what is not (tested in `tests/persist.rs`):
//! - A snapshot restores bit for bit (blocks, shapes, paint, poses and motion), and two
//!   replays of the same log from it end bit for bit alike.
//! - A replay equals the live session bit for bit only if that session itself went on from
//!   the snapshot (restored its physics world from it at the bake, as a server and its
//!   clients would). A session that never restored keeps Rapier's contact caches, warm
//!   starts and body order, which no snapshot holds: its replay gives the same pieces of the
//!   same blocks, in the same states, at poses that differ slightly (1.3 cm in the test).
//! - The live session must run [`BlockWorld::update`] after every single physics step (a
//!   frame that runs two steps before one update reports their impacts together).
//! - Terrain ops carry no physics step in the log, and the app swaps a dig's colliders when
//!   its meshes are ready, frames later: a replay applies a terrain op (and its colliders)
//!   in the step of the block op before it. Near moving pieces that can differ from what
//!   the live session saw; logging collider swaps with their steps would close that gap.

use loam_physics::PhysicsWorld;
use serde::{Deserialize, Serialize};

use crate::error::BlockError;
use crate::ground::Ground;
use crate::ops::BlockOp;
use crate::save::{BLOCKS_FILE_VERSION, BlocksFile};
use crate::update::StepReport;
use crate::world::{BlockWorld, Changes};

/// The block op record version [`BlockOp::encode`] writes and the newest it reads.
pub const BLOCK_OP_VERSION: u32 = 1;

/// A logged block op as encoded: `{"v": 1, "op": {"kind": …, …}}`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpRecord {
    v: u32,
    op: BlockOp,
}

#[derive(Deserialize)]
struct Version {
    v: u32,
}

#[derive(Deserialize)]
struct FileVersion {
    version: u32,
}

/// Decodes one MessagePack value that must use every byte.
fn whole<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let mut cursor = std::io::Cursor::new(bytes);
    let value = {
        let mut de = rmp_serde::Deserializer::new(&mut cursor);
        T::deserialize(&mut de).map_err(|e| e.to_string())?
    };
    let used = cursor.position() as usize;
    if used == bytes.len() {
        Ok(value)
    } else {
        Err(format!("{} bytes after the value", bytes.len() - used))
    }
}

/// Decodes a map that carries a version field first, so that a newer record is reported as
/// newer rather than as malformed.
fn versioned<V: serde::de::DeserializeOwned, T: serde::de::DeserializeOwned>(
    what: &'static str,
    bytes: &[u8],
    version: impl Fn(&V) -> u32,
    max: u32,
) -> Result<T, BlockError> {
    let bad = |reason: String| BlockError::Decode { what, reason };
    // Reading only the version ignores the other fields.
    let v: V = rmp_serde::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    let v = version(&v);
    if v == 0 || v > max {
        return Err(bad(format!("version {v}; this build reads 1 to {max}")));
    }
    whole(bytes).map_err(bad)
}

impl BlocksFile {
    /// MessagePack bytes (named fields): what the world file keeps as the blocks snapshot.
    /// Deterministic: the same file, the same bytes.
    pub fn encode(&self) -> Vec<u8> {
        rmp_serde::to_vec_named(self).expect("a blocks file always serialises")
    }

    /// Decodes [`Self::encode`]'s bytes. The records are checked by [`BlockWorld::load`].
    ///
    /// # Errors
    /// [`BlockError::Decode`] for bytes that are not such a file (or have bytes after it),
    /// or a version newer than [`BLOCKS_FILE_VERSION`].
    pub fn decode(bytes: &[u8]) -> Result<Self, BlockError> {
        versioned::<FileVersion, _>("blocks file", bytes, |v| v.version, BLOCKS_FILE_VERSION)
    }
}

impl BlockOp {
    /// MessagePack bytes of a versioned record (`{"v": 1, "op": …}`, named fields): what the
    /// op log keeps.
    pub fn encode(&self) -> Vec<u8> {
        rmp_serde::to_vec_named(&OpRecord {
            v: BLOCK_OP_VERSION,
            op: self.clone(),
        })
        .expect("a block op always serialises")
    }

    /// Decodes [`Self::encode`]'s bytes. The numbers are checked when the op is applied.
    ///
    /// # Errors
    /// [`BlockError::Decode`] for malformed bytes, an unknown kind or field, trailing bytes,
    /// or a version newer than [`BLOCK_OP_VERSION`].
    pub fn decode(bytes: &[u8]) -> Result<Self, BlockError> {
        versioned::<Version, OpRecord>("block op", bytes, |v| v.v, BLOCK_OP_VERSION).map(|r| r.op)
    }
}

/// Replays logged block ops at their physics steps (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockReplay {
    step: u64,
}

impl BlockReplay {
    /// A replay whose physics world stands at `step` of the log's numbering (the step the
    /// blocks snapshot was taken at; 0 for a new world).
    pub fn new(step: u64) -> Self {
        Self { step }
    }

    /// The step reached, in the log's numbering.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Steps the physics world one timestep at a time, with [`BlockWorld::update`] after
    /// each, until `step` is reached; returns each step's report.
    ///
    /// # Errors
    /// [`BlockError::StepBehind`] if `step` was passed already (nothing runs); as
    /// [`BlockWorld::step`].
    pub fn run_to(
        &mut self,
        world: &mut BlockWorld,
        physics: &mut PhysicsWorld,
        step: u64,
    ) -> Result<Vec<StepReport>, BlockError> {
        if step < self.step {
            return Err(BlockError::StepBehind {
                step,
                reached: self.step,
            });
        }
        let dt = physics.settings().timestep;
        let mut reports = Vec::new();
        while self.step < step {
            let before = physics.step_count();
            reports.push(world.step(physics, dt)?);
            self.step += physics.step_count() - before;
        }
        Ok(reports)
    }

    /// [`Self::run_to`] `step`, then applies `op` ([`BlockWorld::apply`]).
    ///
    /// # Errors
    /// As both.
    pub fn apply(
        &mut self,
        world: &mut BlockWorld,
        physics: &mut PhysicsWorld,
        ground: &dyn Ground,
        step: u64,
        op: &BlockOp,
    ) -> Result<Changes, BlockError> {
        self.run_to(world, physics, step)?;
        world.apply(physics, ground, op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BlockPos, BlockSize, MaterialTable};

    #[test]
    fn ops_round_trip_and_bad_bytes_are_typed_errors() {
        let op = BlockOp::Place {
            at: BlockPos::new(BlockSize::Half, [1, -2, 3]).unwrap(),
            material: MaterialTable::BRICK,
            shape: Default::default(),
            paint: Some([1, 2, 3]),
        };
        let bytes = op.encode();
        assert_eq!(BlockOp::decode(&bytes).unwrap(), op);
        let mut trailing = bytes.clone();
        trailing.push(0);
        for bad in [
            &b""[..],
            &b"\x01\x02"[..],
            &trailing[..],
            &bytes[..bytes.len() - 1],
        ] {
            assert!(
                matches!(BlockOp::decode(bad), Err(BlockError::Decode { .. })),
                "{bad:?}"
            );
        }
        let newer = rmp_serde::to_vec_named(&OpRecord {
            v: 2,
            op: op.clone(),
        })
        .unwrap();
        let e = BlockOp::decode(&newer).unwrap_err();
        assert!(e.to_string().contains("version 2"), "{e}");
        // An unknown kind.
        #[derive(Serialize)]
        struct Fake {
            v: u32,
            op: Kind,
        }
        #[derive(Serialize)]
        struct Kind {
            kind: &'static str,
        }
        let unknown = rmp_serde::to_vec_named(&Fake {
            v: 1,
            op: Kind { kind: "explode" },
        })
        .unwrap();
        assert!(matches!(
            BlockOp::decode(&unknown),
            Err(BlockError::Decode { .. })
        ));
    }
}
