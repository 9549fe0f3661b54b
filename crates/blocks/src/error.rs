//! The crate's error types: [`BlockError`] for block operations, [`VoxError`] for
//! MagicaVoxel import. A failing call changes nothing.

use crate::block::{BlockId, BlockPos};
use crate::material::MaterialId;
use crate::pieces::PieceId;

/// A block operation was refused; the world is as it was.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockError {
    /// A number is NaN or infinite.
    #[error("{what} must be finite")]
    NonFinite {
        /// Which argument.
        what: &'static str,
    },
    /// A position is outside the block grid's range (±2²⁸ quarter metres).
    #[error("position {point:?} m is outside the block grid")]
    OutOfRange {
        /// The offending point, world metres.
        point: [f64; 3],
    },
    /// The block would overlap another block.
    #[error("{at:?} overlaps the block at {other:?}: break that one first or pick another cell")]
    Overlaps {
        /// Where the block was to go.
        at: BlockPos,
        /// The block in the way.
        other: BlockPos,
    },
    /// The block would overlap a falling piece or rubble.
    #[error("{at:?} overlaps piece {piece:?}")]
    OverlapsPiece {
        /// Where the block was to go.
        at: BlockPos,
        /// The piece in the way.
        piece: PieceId,
    },
    /// The block would reach too far into solid ground.
    #[error(
        "{at:?} would be {depth:.3} m inside the ground at {point:?} (at most {tolerance} m is allowed)"
    )]
    InsideGround {
        /// Where the block was to go.
        at: BlockPos,
        /// The test point deepest in the ground, world metres.
        point: [f64; 3],
        /// How deep it is, metres.
        depth: f64,
        /// The tolerance, metres.
        tolerance: f64,
    },
    /// No block there.
    #[error("no block at {0:?}")]
    NoBlock(BlockPos),
    /// No such piece (never made, or gone).
    #[error("no piece {0:?}")]
    NoPiece(PieceId),
    /// The piece has no such block.
    #[error("piece {piece:?} has no block {block:?}")]
    NoPieceBlock {
        /// The piece.
        piece: PieceId,
        /// The block asked for.
        block: BlockId,
    },
    /// The material table has no such material.
    #[error("no material {0:?} in the table")]
    UnknownMaterial(MaterialId),
    /// A material table entry is unusable.
    #[error("material {index}: {reason}")]
    BadMaterial {
        /// Its index (or the table's length for a bad length).
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A chisel shape is malformed.
    #[error("bad chisel shape: {reason}")]
    BadShape {
        /// What is wrong.
        reason: &'static str,
    },
    /// A setting is out of range.
    #[error("setting {what} = {value} is out of range: it must be {expected}")]
    BadSetting {
        /// Which setting.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The allowed range.
        expected: &'static str,
    },
    /// A ray is malformed (zero direction, negative or too long distance).
    #[error("bad ray: {reason}")]
    BadRay {
        /// What is wrong.
        reason: &'static str,
    },
    /// A saved block world is inconsistent.
    #[error("saved blocks are inconsistent: {reason}")]
    BadSave {
        /// What is wrong.
        reason: String,
    },
    /// A terrain island cannot be removed or made a piece (see the reason).
    #[error("terrain island: {reason}")]
    Island {
        /// What is wrong.
        reason: String,
    },
    /// Encoded data (a saved block world, a logged block op) does not decode.
    #[error("{what} does not decode: {reason}")]
    Decode {
        /// What was decoded.
        what: &'static str,
        /// Why not.
        reason: String,
    },
    /// Replaying logged block ops: an op's physics step is before the step reached.
    #[error("block op at physics step {step} comes after step {reached} was reached")]
    StepBehind {
        /// The op's step.
        step: u64,
        /// The step the replay had reached.
        reached: u64,
    },
    /// The physics world refused a call (a bug or an inconsistent physics world: the
    /// blocks world must always be used with the same physics world); its message and
    /// source are the physics error's.
    #[error(transparent)]
    Physics(#[from] loam_physics::PhysicsError),
}

/// A MagicaVoxel file could not be imported; nothing was placed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VoxError {
    /// The file does not start with the `VOX ` magic bytes.
    #[error("not a MagicaVoxel file: it starts with {found:?}, not \"VOX \"")]
    NotVox {
        /// The first bytes found (up to 4).
        found: Vec<u8>,
    },
    /// The file ends before a chunk does.
    #[error(
        "truncated .vox file: chunk {chunk:?} at byte {offset} needs {needed} bytes, {available} remain"
    )]
    Truncated {
        /// The chunk's id (or `header`).
        chunk: String,
        /// Byte offset of the chunk.
        offset: usize,
        /// Bytes it declares.
        needed: u64,
        /// Bytes left in the file (or in the enclosing chunk).
        available: u64,
    },
    /// A chunk's content is malformed.
    #[error("malformed .vox chunk {chunk:?} at byte {offset}: {reason}")]
    Malformed {
        /// The chunk's id.
        chunk: String,
        /// Byte offset of the chunk.
        offset: usize,
        /// What is wrong.
        reason: String,
    },
    /// The file holds no voxels.
    #[error("the .vox file holds no voxels")]
    Empty,
    /// A voxel lands outside the block grid.
    #[error("a voxel lands outside the block grid: {0}")]
    OutOfRange(BlockError),
    /// The model overlaps blocks already placed, or the ground (placing it).
    #[error("the model cannot be placed: {0}")]
    Place(BlockError),
}
