//! # loam-blocks
//!
//! Blocks built on Loam's terrain, and taken apart again: placed on a grid, shaped with a
//! chisel, held up by what is under them, falling as rigid pieces when their support goes,
//! breaking what they hit, and lying as rubble. Engine-agnostic: the bodies live in
//! [`loam_physics`]'s one Rapier world, so a server can run the same collapse.
//!
//! - [`BlockStore`]: held blocks of 1 m, 0.5 m and 0.25 m on a grid ([`BlockPos`]), each
//!   with a [`Material`] and a [`ChiselShape`]; placement checks against other blocks and
//!   the ground ([`Ground`], e.g. [`FieldGround`]); a revision counting real changes; the
//!   block raycast ([`BlockStore::raycast`]); support ([`BlockStore::unsupported`]).
//! - [`BlockWorld`]: the store plus pieces and rubble, in step with a
//!   [`loam_physics::PhysicsWorld`]: edits ([`BlockWorld::place`], …, [`BlockOp`]), the
//!   terrain changing under blocks ([`BlockWorld::terrain_changed`]), and after each
//!   physics step impacts, damage, rest and chain reactions ([`BlockWorld::update`]).
//! - [`find_islands`]: lumps of terrain a dig cut loose from the ground ([`Island`]), taken
//!   out of the field ([`Island::removal_ops`]) and dropped as pieces ([`Island::lump`],
//!   [`BlockOp::Lump`]).
//! - [`import_vox`]: MagicaVoxel models as blocks.
//! - Replicas: an authority tracks what changes ([`BlockWorld::set_tracking`]) and hands
//!   out records ([`BlockWorld::take_delta`], a [`BlockDelta`]); a replica applies them
//!   ([`BlockWorld::apply_delta`]) and plays falls back ([`BlockWorld::follow`]) without
//!   deciding anything itself: a network client mirrors a server bit for bit.
//! - [`BlocksFile`]: the world as serde data, restored exactly ([`BlockWorld::load`]);
//!   [`BlocksFile::encode`] and [`BlockOp::encode`] give the bytes loam-store keeps (the
//!   blocks snapshot at a bake, block ops in the op log with their physics step), and
//!   [`BlockReplay`] replays logged ops at their steps.
//!
//! Units: metres, seconds, kilograms, joules; world axes Y up. Positions on the grid are
//! exact (integer quarter metres inside); physics poses are `f32`.
//!
//! Determinism: every container is a `BTreeMap` or a sorted `Vec`, ids are handed out in
//! order, and decisions use integer arithmetic or `libm`: the same world and the same
//! calls give the same pieces in the same order. Rubble poses come from Rapier, which
//! loam-physics builds *without* its `enhanced-determinism` feature (that feature turns on
//! glam's `scalar-math`, which breaks bevy_reflect in a workspace build): the same calls
//! on the same build and machine give the same poses bit for bit (tested: a collapse run
//! twice in one process, `tests/determinism.rs`), but nothing promises equal poses across
//! platforms, compilers or CPU features (SIMD, fused multiply-add).
//!
//! ```
//! use loam_blocks::{BlockPos, BlockSettings, BlockSize, BlockSpec, BlockWorld, MaterialTable};
//! use loam_physics::{PhysicsSettings, PhysicsWorld};
//!
//! let ground = |p: [f64; 3]| p[1] as f32; // flat ground below y = 0
//! let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
//! let mut blocks = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
//! let stone = BlockSpec::of(MaterialTable::STONE);
//! // A pillar of two blocks and a beam of three on top, reaching out to the side.
//! for cell in [[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 2, 0], [2, 2, 0]] {
//!     let at = BlockPos::new(BlockSize::Full, cell).unwrap();
//!     assert!(blocks.place(&mut physics, &ground, at, stone).unwrap().new_pieces.is_empty());
//! }
//! // Knock out the pillar's foot: the rest falls as one piece.
//! let foot = BlockPos::new(BlockSize::Full, [0, 0, 0]).unwrap();
//! let changes = blocks.break_block(&mut physics, foot).unwrap();
//! assert_eq!(changes.new_pieces.len(), 1);
//! assert_eq!(blocks.piece(changes.new_pieces[0]).unwrap().blocks.len(), 4);
//! assert!(blocks.store().is_empty());
//! ```
#![deny(missing_docs)]

mod block;
mod chisel;
mod codec;
mod collapse;
pub mod damage;
mod error;
mod footing;
mod ground;
mod islands;
mod material;
mod ops;
mod pieces;
mod raycast;
mod replica;
mod save;
mod store;
mod support;
mod update;
mod vox;
mod world;

pub use block::{Block, BlockId, BlockPos, BlockSize, BlockSpec, Face, MAX_QUARTERS, WorldBox};
pub use chisel::{ChiselFace, ChiselShape, Edge, ROUND_RADIUS, Slope};
pub use codec::{BLOCK_OP_VERSION, BlockReplay};
pub use error::{BlockError, VoxError};
pub use footing::{Footing, SEAT_LEVELS, footing, level_near, levelling_op, seat};
pub use ground::{
    BlockSettings, FieldGround, Ground, NoGround, field_collider, field_collider_box,
    field_collider_cached,
};
pub use islands::{
    Island, IslandSearch, IslandSettings, MAX_LUMP_BLOCKS, find_islands, find_islands_cached,
    island_search_box,
};
pub use material::{Material, MaterialId, MaterialTable};
pub use ops::{BlockOp, LogInverses, LumpBlock};
pub use pieces::{Piece, PieceBlock, PieceId, PieceState, SavedPose};
pub use raycast::{BlockHit, MAX_RAY_DISTANCE};
pub use replica::BlockDelta;
pub use save::{BLOCKS_FILE_VERSION, BlocksFile, HeldBlock};
pub use store::BlockStore;
pub use update::{ImpactTarget, PieceImpact, StepReport};
pub use vox::{VoxModel, VoxSettings, import_vox};
pub use world::{BlockTarget, BlockWorld, Changes, WorldBlockHit};
