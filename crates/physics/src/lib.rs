//! # loam-physics
//!
//! Loam's physics: one [Rapier](https://rapier.rs) world that the editor steps (and later a
//! server, and falling blocks, issue 8). No engine types: the Bevy side copies poses out.
//!
//! - **Terrain**: one static trimesh collider per chunk. [`TerrainShape::build`] (trimesh +
//!   BVH, the expensive part) runs on any thread; [`PhysicsWorld::set_chunks`] swaps a
//!   batch in on the physics owner's thread, so a fresh hole's floor is never missing.
//! - **Character**: a capsule moved by Rapier's kinematic character controller with
//!   gravity, jumping, step-up and a slope limit ([`PhysicsWorld::move_character`]).
//! - **Dynamic bodies**: boxes and balls ([`PhysicsWorld::spawn_dynamic_cuboid`]), and
//!   compound bodies of boxes and convex hulls with a density each
//!   ([`PhysicsWorld::spawn_compound`]: loam-blocks' falling pieces and rubble).
//! - **Fixed colliders** named by the caller ([`PhysicsWorld::set_fixed`]: held blocks).
//! - **Impacts**: after each [`PhysicsWorld::step`], every dynamic body's hardest contact
//!   that closed faster than [`PhysicsSettings::impact_speed`] ([`PhysicsWorld::impacts`]).
//!
//! Units are metres, seconds and kilograms; angles in settings are degrees. World axes are
//! Y up, as everywhere in Loam. Positions cross the API as `[f32; 3]`. Bad input (NaN,
//! out-of-range settings, broken meshes) gives a [`PhysicsError`] and changes nothing.
//!
//! Speed (2-core x86_64 shared with a build, test profile with optimised dependencies, Loam
//! noise terrain): [`TerrainShape::build`] 2.6 ms for a 3 000-triangle chunk; swapping 7
//! chunks in 60 µs; [`PhysicsWorld::move_character`] 60–110 µs per 60 Hz frame;
//! [`PhysicsWorld::step`] 0.18 ms per step with 50 boxes on the ground. There are no
//! benches yet.
//!
//! Deterministic on one build: chunks and fixed colliders are kept in `BTreeMap`s, no
//! hash-map order reaches the simulation, and the same calls give bit-equal results on the
//! same build and machine (tested, `tests/determinism.rs`). Rapier's `enhanced-determinism`
//! feature (libm maths, no SIMD: equal results across platforms) is *off*: it turns on
//! glam's `scalar-math`, which breaks bevy_reflect's glam impls when the workspace builds
//! together. So results may differ between platforms, compilers or CPU features.
//!
//! ```
//! use loam_physics::{CharacterSettings, MoveInput, PhysicsSettings, PhysicsWorld, TerrainShape};
//!
//! // A 20 m × 20 m floor at y = 0 in chunk (0, 0, 0), built where the mesher runs.
//! let positions = [[-10.0, 0.0, -10.0], [10.0, 0.0, -10.0], [10.0, 0.0, 10.0], [-10.0, 0.0, 10.0]];
//! let indices = [0, 2, 1, 0, 3, 2];
//! let shape = TerrainShape::build(&positions, &indices, [0.0; 3]).unwrap();
//!
//! let mut world = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
//! world.set_chunk([0, 0, 0], shape);
//! let me = world.spawn_character([0.0, 0.5, 0.0], CharacterSettings::default()).unwrap();
//! let ball = world.spawn_dynamic_ball([2.0, 3.0, 0.0], 0.25, 1000.0).unwrap();
//!
//! let walk = MoveInput { wish: [1.0, 0.0], ..Default::default() };
//! for _ in 0..120 {
//!     world.move_character(me, walk, 1.0 / 60.0).unwrap();
//!     world.step(1.0 / 60.0).unwrap();
//! }
//! let feet = world.character_position(me).unwrap();
//! assert!(feet[1].abs() < 0.05, "standing on the floor: {feet:?}");
//! assert!(world.body_position(ball).unwrap()[1] > 0.2, "the ball rests on the floor");
//! ```
#![deny(missing_docs)]

mod bodies;
mod character;
mod error;
mod fixed;
mod impacts;
mod parts;
mod terrain;
mod world;

pub use bodies::{BodyId, BodyState};
pub use character::{CharacterId, CharacterSettings, CharacterState, MoveInput};
pub use error::PhysicsError;
pub use fixed::FixedId;
pub use impacts::Impact;
pub use parts::{MAX_HULL_POINTS, MAX_PARTS, Part, PartShape, Pose};
pub use terrain::TerrainShape;
pub use world::{HitTarget, PhysicsSettings, PhysicsWorld, RayHit, RayMask};
