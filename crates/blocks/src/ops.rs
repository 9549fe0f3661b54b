//! Block ops: the serialisable records of block edits, for the op log beside terrain ops.
//!
//! JSON and MessagePack share one shape, `{"kind": "<kind>", ...fields}`, unknown fields
//! refused (as loam-field's `EditOp`). A collapse follows from the ops *and* the physics
//! steps between them, so a log must also say at which physics step each op was applied
//! (the store's job); replaying the same ops at the same steps gives the same pieces.

use std::collections::BTreeMap;

use loam_physics::PhysicsWorld;
use serde::{Deserialize, Serialize};

use crate::block::{BlockId, BlockPos, BlockSize, BlockSpec};
use crate::chisel::ChiselShape;
use crate::error::BlockError;
use crate::ground::Ground;
use crate::material::MaterialId;
use crate::pieces::PieceId;
use crate::world::{BlockWorld, Changes};

/// One block edit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BlockOp {
    /// Place a block ([`BlockWorld::place`]).
    Place {
        /// Where.
        at: BlockPos,
        /// Its material.
        material: MaterialId,
        /// Its chisel shape (sharp if absent).
        #[serde(default)]
        shape: ChiselShape,
        /// A painted colour, sRGB.
        #[serde(default)]
        paint: Option<[u8; 3]>,
    },
    /// Break the held block at `at` ([`BlockWorld::break_block`]).
    Break {
        /// Which.
        at: BlockPos,
    },
    /// Set a held block's chisel shape ([`BlockWorld::chisel`]).
    Chisel {
        /// Which.
        at: BlockPos,
        /// The new shape (round an edge: the old shape with one more bit; sharpen: one
        /// less).
        shape: ChiselShape,
    },
    /// Break a block off a piece or rubble ([`BlockWorld::break_off`]).
    BreakOff {
        /// The piece.
        piece: PieceId,
        /// Its block.
        block: BlockId,
    },
    /// A lump of terrain cut loose by a dig falls as a piece ([`BlockWorld::place_lump`],
    /// made by [`crate::Island::lump`]); the terrain ops that remove it from the field are
    /// logged as terrain ops beside it.
    Lump {
        /// The size of every block.
        size: BlockSize,
        /// The blocks, strictly ascending by cell; block `cell` fills the cell of that size
        /// shifted down by half a block on each axis (centred on `cell · edge`).
        blocks: Vec<LumpBlock>,
    },
}

/// A block of a terrain lump ([`BlockOp::Lump`]): sharp, undamaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LumpBlock {
    /// Its cell on the grid of the lump's size (shifted by half a block).
    pub cell: [i32; 3],
    /// Its material.
    pub material: MaterialId,
    /// A painted colour (the terrain's), sRGB.
    #[serde(default)]
    pub paint: Option<[u8; 3]>,
}

impl BlockOp {
    /// The op's kind as serialised (`"place"`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            BlockOp::Place { .. } => "place",
            BlockOp::Break { .. } => "break",
            BlockOp::Chisel { .. } => "chisel",
            BlockOp::BreakOff { .. } => "break_off",
            BlockOp::Lump { .. } => "lump",
        }
    }

    /// The op that reverses this one, given what is held at a position just before it
    /// (`held`: material, chisel shape, paint): a place is reversed by a break, a break by
    /// placing the same block again (undamaged), a chisel by giving the old shape back.
    /// `None` where there is none: the op would be refused (a place on a held block, a break
    /// or chisel of nothing), or it breaks a block off a piece or makes a lump (what falls
    /// has no history). What a break set falling stays where it fell.
    pub fn inverse(&self, held: impl Fn(BlockPos) -> Option<BlockSpec>) -> Option<BlockOp> {
        match *self {
            BlockOp::Place { at, .. } => held(at).is_none().then_some(BlockOp::Break { at }),
            BlockOp::Break { at } => held(at).map(|b| BlockOp::Place {
                at,
                material: b.material,
                shape: b.shape,
                paint: b.paint,
            }),
            BlockOp::Chisel { at, .. } => held(at).map(|b| BlockOp::Chisel { at, shape: b.shape }),
            BlockOp::BreakOff { .. } | BlockOp::Lump { .. } => None,
        }
    }
}

/// The inverses ([`BlockOp::inverse`]) of a log's block ops, found from the log alone: fed
/// the ops in log order ([`LogInverses::next`]), it keeps what the log's places and chisels
/// left at each position. So the ops of a world file can be undone after the world was
/// closed and opened again, with no block world as it was before each op. Every op fed is
/// taken to have been applied (a log holds the ops that were). A break or chisel of a block
/// placed before the log's first op (a compacted log) has no inverse.
#[derive(Debug, Clone, Default)]
pub struct LogInverses {
    /// What the log's ops so far hold at each position (a block that fell since is still
    /// here: positions are looked up only by ops that were applied, so by a place after its
    /// fall, which replaces it).
    held: BTreeMap<BlockPos, BlockSpec>,
}

impl LogInverses {
    /// The inverse of `op`, the next op of the log, and then what it leaves held.
    pub fn next(&mut self, op: &BlockOp) -> Option<BlockOp> {
        match *op {
            BlockOp::Place {
                at,
                material,
                shape,
                paint,
            } => {
                // Applied, so nothing was held there (a block once placed there fell).
                self.held.remove(&at);
                let inverse = op.inverse(|_| None);
                self.held.insert(
                    at,
                    BlockSpec {
                        material,
                        shape,
                        paint,
                    },
                );
                inverse
            }
            BlockOp::Break { at } => {
                let inverse = op.inverse(|p| self.held.get(&p).copied());
                self.held.remove(&at);
                inverse
            }
            BlockOp::Chisel { at, shape } => {
                let inverse = op.inverse(|p| self.held.get(&p).copied());
                if let Some(b) = self.held.get_mut(&at) {
                    b.shape = shape;
                }
                inverse
            }
            BlockOp::BreakOff { .. } | BlockOp::Lump { .. } => None,
        }
    }
}

impl BlockWorld {
    /// Applies an op (see each variant).
    ///
    /// # Errors
    /// As the method each variant names; nothing changes then.
    pub fn apply(
        &mut self,
        physics: &mut PhysicsWorld,
        ground: &dyn Ground,
        op: &BlockOp,
    ) -> Result<Changes, BlockError> {
        match *op {
            BlockOp::Place {
                at,
                material,
                shape,
                paint,
            } => self.place(
                physics,
                ground,
                at,
                BlockSpec {
                    material,
                    shape,
                    paint,
                },
            ),
            BlockOp::Break { at } => self.break_block(physics, at),
            BlockOp::Chisel { at, shape } => self.chisel(physics, at, shape),
            BlockOp::BreakOff { piece, block } => self.break_off(physics, piece, block),
            BlockOp::Lump { size, ref blocks } => self.place_lump(physics, size, blocks),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chisel::Edge;
    use crate::material::MaterialTable;

    fn at(x: i32) -> BlockPos {
        BlockPos::new(BlockSize::Full, [x, 0, 0]).unwrap()
    }

    /// The inverses found from the log alone are those found from the block world just
    /// before each op, for a log of places, chisels and breaks (one position placed twice).
    #[test]
    fn inverses_from_the_log_match_those_from_the_blocks() {
        let round = ChiselShape::SHARP.with_round(Edge::new(0, true, true));
        let place = |x, material, paint| BlockOp::Place {
            at: at(x),
            material,
            shape: ChiselShape::SHARP,
            paint,
        };
        let log = [
            place(0, MaterialTable::BRICK, Some([1, 2, 3])),
            place(1, MaterialTable::STONE, None),
            BlockOp::Chisel {
                at: at(0),
                shape: round,
            },
            BlockOp::Break { at: at(0) },
            place(0, MaterialTable::STONE, None),
            BlockOp::Break { at: at(1) },
        ];
        let mut world = BlockWorld::new(MaterialTable::standard(), Default::default()).unwrap();
        let mut physics = PhysicsWorld::new(Default::default()).unwrap();
        // Flat ground: solid below y = 0, where the blocks stand.
        let ground = |p: [f64; 3]| p[1] as f32;
        let mut from_log = LogInverses::default();
        let mut found = Vec::new();
        for op in &log {
            let from_blocks = op.inverse(|p| {
                world.store().get(p).map(|b| BlockSpec {
                    material: b.material,
                    shape: b.shape,
                    paint: b.paint,
                })
            });
            let inverse = from_log.next(op);
            assert_eq!(inverse, from_blocks, "{op:?}");
            found.push(inverse);
            world.apply(&mut physics, &ground, op).unwrap();
        }
        assert_eq!(
            found,
            [
                Some(BlockOp::Break { at: at(0) }),
                Some(BlockOp::Break { at: at(1) }),
                Some(BlockOp::Chisel {
                    at: at(0),
                    shape: ChiselShape::SHARP
                }),
                Some(BlockOp::Place {
                    at: at(0),
                    material: MaterialTable::BRICK,
                    shape: round,
                    paint: Some([1, 2, 3])
                }),
                Some(BlockOp::Break { at: at(0) }),
                Some(place(1, MaterialTable::STONE, None)),
            ]
        );
        // A block the log never placed (a compacted log) has no inverse to break it.
        assert_eq!(
            LogInverses::default().next(&BlockOp::Break { at: at(5) }),
            None
        );
    }
}
