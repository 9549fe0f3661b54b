//! The rules of the block simulation that every place simulating a world shares (the
//! server, a load's replay, the editor): what a terrain op does to the blocks and colliders,
//! when the physics steps, and one step of a replay.
//!
//! The physics steps only while a piece is awake ([`pieces_awake`]), and each block op is
//! logged with the step it was taken at, so a replay steps exactly as often between the
//! same ops and ends where the live world did.

use loam_blocks::{BlockError, BlockWorld, Changes, FieldGround, PieceState, WorldBox};
use loam_field::{Field, SampleBox};
use loam_physics::PhysicsWorld;

use crate::colliders::TerrainColliders;

/// Whether the physics world must step: a piece is falling, or a piece's body (rubble
/// settling) is not asleep yet. While none is, a step changes nothing, and the world's step
/// count stays put, so logs do not fill replays with idle steps.
pub fn pieces_awake(world: &BlockWorld, physics: &PhysicsWorld) -> bool {
    world.pieces().any(|p| {
        matches!(p.state, PieceState::Falling)
            || world
                .piece_body(p.id)
                .and_then(|b| physics.body_sleeping(b))
                == Some(false)
    })
}

/// The blocks after a terrain op changed the samples `changed`: what it undermined falls
/// ([`BlockWorld::terrain_changed`], whose changes it returns), and the colliders it meets
/// are marked stale (rebuilt soon if a piece, the fallen ones included, lies within
/// [`crate::NEAR_M`], else when one comes near).
///
/// # Errors
/// As [`BlockWorld::terrain_changed`] (only a non-finite region, which samples never make).
pub fn terrain_changed(
    world: &mut BlockWorld,
    physics: &mut PhysicsWorld,
    colliders: &mut TerrainColliders,
    field: &Field,
    changed: SampleBox,
) -> Result<Changes, BlockError> {
    let region = WorldBox::from_samples(changed, field.settings().voxel_size);
    let changes = world.terrain_changed(physics, &FieldGround(field), region);
    // After the blocks followed: what the change undermined is a piece near it now, and
    // must fall onto the new ground, not rest on the old collider.
    colliders.changed_near(physics, changed, field.settings().voxel_size);
    changes
}

/// One physics step of a replay, at the physics world's fixed timestep: every collider the
/// falling pieces need is built first from `field` as it is (a replay must see the field of
/// its moment), then the step, then pieces sunk into the ground are taken out.
///
/// # Errors
/// As [`BlockWorld::step`] and [`BlockWorld::bury_sunken`].
pub fn step_replay(
    world: &mut BlockWorld,
    physics: &mut PhysicsWorld,
    colliders: &mut TerrainColliders,
    field: &Field,
) -> Result<(), BlockError> {
    colliders.ensure_falling(field, world);
    colliders.refresh(physics, field);
    let dt = physics.settings().timestep;
    world.step(physics, dt)?;
    world.bury_sunken(physics, &FieldGround(field)).map(|_| ())
}
