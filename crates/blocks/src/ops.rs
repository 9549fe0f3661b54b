//! Block ops: the serialisable records of block edits, for the op log beside terrain ops.
//!
//! JSON and MessagePack share one shape, `{"kind": "<kind>", ...fields}`, unknown fields
//! refused (as loam-field's `EditOp`). A collapse follows from the ops *and* the physics
//! steps between them, so a log must also say at which physics step each op was applied
//! (the store's job); replaying the same ops at the same steps gives the same pieces.

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
