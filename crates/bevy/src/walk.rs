//! Walk mode and the app's physics world: a capsule character on the terrain, in
//! [`loam_physics`]'s Rapier world, beside the blocks' pieces.
//!
//! The terrain colliders are the session layer's [`TerrainColliders`]: the chunks near the
//! character, near held blocks and near pieces, each meshed from the field with Surface
//! Nets ([`loam_blocks::field_collider`]) — the colliders a server and a load build, from
//! the same samples, so a piece falls in the editor as it falls in the world file's replay.
//! Builds run on worker tasks from a snapshot of the bricks they read and go in as one
//! batch per job (the chunks an edit changed, together); a character or a falling piece
//! waits (no gravity, no step) while a chunk around it has no collider yet.
//!
//! ```text
//!   character, BlockFocus ──want──▶ TerrainColliders ◀──changed── terrain ops (step_blocks)
//!   refresh_colliders: next_builds ─▶ task (field snapshot) ─▶ install (bodies there wake: set_chunk)
//!                      release: chunks far from the character and the blocks
//! ```

use std::collections::VecDeque;

use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, futures::check_ready};
use loam_blocks::{field_collider_box, field_collider_cached};
use loam_field::coords::world_to_chunk;
use loam_field::{ChunkKey, Field, GeneratorBrickCache};
use loam_physics::{
    CharacterId, CharacterSettings, MoveInput, PhysicsSettings, PhysicsWorld, TerrainShape,
};
use loam_session::TerrainColliders;

use crate::LoamWorld;
use crate::blocks::BlockFocus;

/// Chunks within this many chunks of the character (on each axis) keep their colliders
/// while walking; those it comes within [`loam_session::NEAR_M`] of are built.
pub const COLLIDER_RADIUS_CHUNKS: i32 = 2;
/// Eye height above the feet, metres.
pub const EYE_HEIGHT_M: f32 = 1.6;
/// Chunks per collider job: the chunks of one edit go in together.
const BUILDS_PER_JOB: usize = 8;

type Built = Vec<([i32; 3], Option<TerrainShape>)>;

/// A collider build on a worker task: its chunks, built from the field as of stamp `at`.
struct ColliderJob {
    task: Task<Built>,
    at: u64,
    /// A rebuild of changed chunks (not of missing ones).
    refresh: bool,
    chunks: usize,
}

/// The physics world of the app: the walking character, the blocks' pieces and the terrain
/// colliders they stand on.
#[derive(Resource)]
pub struct Physics {
    /// The Rapier world.
    pub world: PhysicsWorld,
    /// The walking character, while in walk mode.
    pub character: Option<CharacterId>,
    /// The character's settings.
    pub settings: CharacterSettings,
    /// Which chunks have, need, or wait for a terrain collider.
    pub colliders: TerrainColliders,
    /// Builds in flight, oldest first.
    jobs: VecDeque<ColliderJob>,
}

impl Physics {
    /// An empty physics world with default settings.
    ///
    /// # Panics
    /// Never: the default settings are valid.
    pub fn new() -> Self {
        Self::with(PhysicsWorld::new(PhysicsSettings::default()).expect("default settings"))
    }

    /// Wraps a physics world (a loaded session's, say), tracking no terrain collider yet:
    /// the plugin asks for the chunks the character and the blocks need. A loaded session
    /// hands its tracking over too (set [`Physics::colliders`] to the loader's).
    pub fn with(world: PhysicsWorld) -> Self {
        Self {
            world,
            character: None,
            settings: CharacterSettings::default(),
            colliders: TerrainColliders::default(),
            jobs: VecDeque::new(),
        }
    }

    /// Whether chunk `key` has its collider and no chunk around it (within one) waits for
    /// one: a body there can move.
    pub fn ready_around(&self, key: ChunkKey) -> bool {
        self.colliders.is_built(arr(key))
            && near(key, 1).all(|k| !self.colliders.is_missing(arr(k)))
    }

    /// Collider builds in flight (chunks).
    pub fn building(&self) -> usize {
        self.jobs.iter().map(|j| j.chunks).sum()
    }

    /// Terrain colliders in the physics world.
    pub fn colliders(&self) -> usize {
        self.world.chunk_count()
    }

    /// Marks the colliders that the changed samples `changed` meet for a rebuild: at once
    /// if a piece or the character is within [`loam_session::NEAR_M`], else when one
    /// comes near. For a change the blocks do not follow (a replica's); the blocks' own
    /// terrain changes go through [`loam_session::terrain_changed`].
    pub fn terrain_changed(&mut self, changed: loam_field::SampleBox, voxel_size: f64) {
        self.colliders
            .changed_near(&self.world, changed, voxel_size);
    }

    /// Puts in finished builds (in the order they started), then starts the next: missing
    /// chunks at once (bodies wait for them), changed ones one job at a time.
    fn build(&mut self, field: &Field) {
        while let Some(job) = self.jobs.front_mut() {
            let Some(built) = check_ready(&mut job.task) else {
                break;
            };
            let (at, refresh) = (job.at, job.refresh);
            self.jobs.pop_front();
            // Bodies asleep on a chunk's old surface wake as it is swapped
            // (`PhysicsWorld::set_chunk`).
            self.colliders.install(&mut self.world, at, built, refresh);
        }
        let urgent = self.colliders.wants_missing();
        let refreshing = self.jobs.iter().any(|j| j.refresh);
        if !urgent && (refreshing || !self.colliders.stale()) {
            return;
        }
        let (keys, at) = self.colliders.next_builds(BUILDS_PER_JOB);
        if keys.is_empty() {
            return;
        }
        // Only the bricks the builds read: the snapshot shares them, no copy.
        let reads: Vec<_> = keys.iter().filter_map(|&k| field_collider_box(k)).collect();
        let snapshot = field.snapshot_of(&reads);
        let chunks = keys.len();
        let task = AsyncComputeTaskPool::get().spawn(async move {
            let mut cache = GeneratorBrickCache::new(0);
            keys.into_iter()
                .map(|k| (k, field_collider_cached(&snapshot, k, &mut cache)))
                .collect()
        });
        self.jobs.push_back(ColliderJob {
            task,
            at,
            refresh: !urgent,
            chunks,
        });
    }
}

impl Default for Physics {
    fn default() -> Self {
        Self::new()
    }
}

fn near(c: ChunkKey, r: i32) -> impl Iterator<Item = ChunkKey> {
    (-r..=r).flat_map(move |dz| {
        (-r..=r)
            .flat_map(move |dy| (-r..=r).map(move |dx| ChunkKey::new(c.x + dx, c.y + dy, c.z + dz)))
    })
}

/// The chunk holding world position `p` (the field's one world-to-chunk rounding,
/// [`world_to_chunk`]); a position off the sample range gives the farthest chunk toward it.
pub fn chunk_of(p: Vec3, voxel_size: f64) -> ChunkKey {
    let p = p.to_array().map(f64::from);
    world_to_chunk(p, voxel_size).unwrap_or_else(|_| {
        let end = f64::from(i32::MAX) * voxel_size;
        world_to_chunk(
            p.map(|v| if v.is_nan() { 0.0 } else { v.clamp(-end, end) }),
            voxel_size,
        )
        .unwrap_or(ChunkKey::new(0, 0, 0))
    })
}

fn arr(k: ChunkKey) -> [i32; 3] {
    [k.x, k.y, k.z]
}

/// Whether `k` is at most `r` chunks from `f` on every axis.
fn within(k: [i32; 3], f: ChunkKey, r: i32) -> bool {
    (k[0] - f.x).abs() <= r && (k[1] - f.y).abs() <= r && (k[2] - f.z).abs() <= r
}

/// Where the character is, while walking: its colliders are built around it.
#[derive(Resource, Debug, Clone, Copy)]
pub struct WalkFocus(pub Vec3);

/// Asks for the colliders near the character ([`WalkFocus`]) and the blocks
/// ([`BlockFocus`]), forgets those far from both, puts in finished builds and starts the
/// next.
pub fn refresh_colliders(
    mut physics: ResMut<Physics>,
    focus: Option<Res<WalkFocus>>,
    blocks: Option<Res<BlockFocus>>,
    world: Option<Res<LoamWorld>>,
) {
    let Some(world) = world else {
        return;
    };
    let field = world.world.field();
    let vs = field.settings().voxel_size;
    let walk = focus.map(|f| f.0);
    let around: Vec<ChunkKey> = blocks
        .map(|b| b.chunks.iter().copied().collect())
        .unwrap_or_default();
    if let Some(p) = walk {
        physics.colliders.ensure(field, p.to_array().map(f64::from));
    }
    for &c in &around {
        physics.colliders.want(arr(c));
    }
    // Kept a chunk further out than they are asked for, so walking along a chunk border
    // does not rebuild them.
    let walk_chunk = walk.map(|p| chunk_of(p, vs));
    let Physics {
        world: rapier,
        colliders,
        ..
    } = &mut *physics;
    colliders.release(rapier, |k| {
        walk_chunk.is_some_and(|f| within(k, f, COLLIDER_RADIUS_CHUNKS + 1))
            || around.iter().any(|c| within(k, *c, 1))
    });
    physics.build(field);
}

/// One walk step: the character moves by `wish` (world x, z), jumps if asked, and the camera
/// follows at eye height. Returns the camera position. Spawns the character at the camera's
/// feet if there is none. Waits (no gravity) until the chunks around it have colliders.
pub fn walk_step(
    physics: &mut Physics,
    world: &LoamWorld,
    camera: Vec3,
    input: MoveInput,
    dt: f32,
) -> Vec3 {
    let vs = world.world.field().settings().voxel_size;
    let feet = camera - Vec3::Y * EYE_HEIGHT_M;
    let id = match physics.character {
        Some(id) => id,
        None => match physics
            .world
            .spawn_character(feet.to_array(), physics.settings)
        {
            Ok(id) => {
                physics.character = Some(id);
                id
            }
            Err(_) => return camera,
        },
    };
    let now = physics
        .world
        .character_position(id)
        .map_or(feet, Vec3::from_array);
    if !physics.ready_around(chunk_of(now, vs)) {
        return now + Vec3::Y * EYE_HEIGHT_M;
    }
    match physics.world.move_character(id, input, dt) {
        Ok(s) => Vec3::from_array(s.position) + Vec3::Y * EYE_HEIGHT_M,
        Err(_) => now + Vec3::Y * EYE_HEIGHT_M,
    }
}

/// Leaves walk mode: the character is removed (flying keeps the camera where it is).
pub fn stop_walking(physics: &mut Physics) {
    if let Some(id) = physics.character.take() {
        physics.world.remove_character(id);
    }
}
