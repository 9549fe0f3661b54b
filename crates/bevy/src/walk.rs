//! Walk mode: a capsule character on the terrain, in [`loam_physics`]'s Rapier world. Terrain
//! colliders are trimeshes of the chunks around the character, built off the main thread and
//! swapped in batch by batch (the chunks of one edit together), so the character never falls
//! through a fresh hole's floor; until the chunks around it have colliders it waits.

use std::collections::{BTreeMap, VecDeque};

use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, futures::check_ready};
use loam_field::{CHUNK_CELLS, ChunkKey};
use loam_physics::{
    CharacterId, CharacterSettings, MoveInput, PhysicsSettings, PhysicsWorld, TerrainShape,
};
use loam_world::ChunkMesh;
use loam_world::World;

use crate::blocks::BlockFocus;
use crate::{ChunkRemoved, GroupShown, LoamWorld};

/// Chunks within this many chunks of the character (on each axis) get colliders.
pub const COLLIDER_RADIUS_CHUNKS: i32 = 2;
/// Eye height above the feet, metres.
pub const EYE_HEIGHT_M: f32 = 1.6;

type Built = Vec<(ChunkKey, u64, Option<TerrainShape>)>;

/// The physics world and what walk mode keeps about the terrain.
#[derive(Resource)]
pub struct Physics {
    /// The Rapier world.
    pub world: PhysicsWorld,
    /// The walking character, while in walk mode.
    pub character: Option<CharacterId>,
    /// The character's settings.
    pub settings: CharacterSettings,
    /// Shown chunk meshes, by chunk (shared with the renderer's copies).
    meshes: BTreeMap<ChunkKey, ChunkMesh>,
    /// Mesh version each collider (or empty chunk) was built from.
    built: BTreeMap<ChunkKey, u64>,
    /// Versions being built.
    in_flight: BTreeMap<ChunkKey, u64>,
    /// Builds in flight, swapped in the order they started.
    tasks: VecDeque<Task<Built>>,
}

impl Physics {
    /// An empty physics world with default settings.
    ///
    /// # Panics
    /// Never: the default settings are valid.
    pub fn new() -> Self {
        Self {
            world: PhysicsWorld::new(PhysicsSettings::default()).expect("default settings"),
            character: None,
            settings: CharacterSettings::default(),
            meshes: BTreeMap::new(),
            built: BTreeMap::new(),
            in_flight: BTreeMap::new(),
            tasks: VecDeque::new(),
        }
    }

    /// Whether every chunk within one chunk of `key` that has a mesh has its collider.
    pub fn ready_around(&self, key: ChunkKey) -> bool {
        near(key, 1).all(|k| {
            self.meshes
                .get(&k)
                .is_none_or(|m| self.built.get(&k) == Some(&m.version))
        })
    }

    /// Whether a body in chunk `key` can move: if `world` has the chunk loaded, it has handed
    /// over its current state (its mesh, or that it is all air or all solid;
    /// [`World::is_current`]), and [`Physics::ready_around`] holds. A piece in a loaded chunk
    /// not yet meshed would fall through ground whose collider does not exist yet. Chunks the
    /// world does not load (out of view) hold nothing back: their ground is never built.
    pub fn can_move_in(&self, key: ChunkKey, world: &World) -> bool {
        (world.version(key).is_none() || world.is_current(key)) && self.ready_around(key)
    }

    /// Collider builds in flight (chunks).
    pub fn building(&self) -> usize {
        self.in_flight.len()
    }

    /// Terrain colliders in the physics world.
    pub fn colliders(&self) -> usize {
        self.world.chunk_count()
    }

    /// Starts one build of the chunks in `keys` whose shown mesh has no collider yet.
    fn build(&mut self, keys: impl IntoIterator<Item = ChunkKey>) {
        let jobs: Vec<ChunkMesh> = keys
            .into_iter()
            .filter_map(|k| self.meshes.get(&k))
            .filter(|m| {
                self.built.get(&m.key) != Some(&m.version)
                    && self.in_flight.get(&m.key) != Some(&m.version)
            })
            .cloned()
            .collect();
        if jobs.is_empty() {
            return;
        }
        for m in &jobs {
            self.in_flight.insert(m.key, m.version);
        }
        self.tasks
            .push_back(AsyncComputeTaskPool::get().spawn(async move {
                jobs.into_iter()
                    .map(|m| {
                        let o = m.origin.map(|v| v as f32);
                        // A chunk mesh always has in-range indices and finite positions.
                        let shape = TerrainShape::build(&m.mesh.positions, &m.mesh.indices, o)
                            .ok()
                            .flatten();
                        (m.key, m.version, shape)
                    })
                    .collect()
            }));
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

/// The chunk holding world position `p`.
pub fn chunk_of(p: Vec3, voxel_size: f64) -> ChunkKey {
    let size = f64::from(CHUNK_CELLS) * voxel_size;
    let k = |v: f32| (f64::from(v) / size).floor() as i32;
    ChunkKey::new(k(p.x), k(p.y), k(p.z))
}

fn arr(k: ChunkKey) -> [i32; 3] {
    [k.x, k.y, k.z]
}

/// Keeps the shown meshes, rebuilds the colliders of an edit's chunks near the character as
/// one batch, drops colliders of chunks that left the view.
pub fn track_meshes(
    mut physics: ResMut<Physics>,
    mut shown: MessageReader<GroupShown>,
    mut removed: MessageReader<ChunkRemoved>,
    focus: Option<Res<WalkFocus>>,
    blocks: Option<Res<BlockFocus>>,
) {
    let focus = focus.map(|f| f.0);
    let wanted = |k: ChunkKey| {
        focus.is_some_and(|f| is_near(k, f))
            || blocks
                .as_ref()
                .is_some_and(|b| b.chunks.iter().any(|c| within(k, *c, 1)))
    };
    for group in shown.read() {
        for m in &group.meshes {
            physics.meshes.insert(m.key, m.clone());
        }
        // Chunks already under colliders are rebuilt together, so the group swaps as one.
        let keys: Vec<ChunkKey> = group
            .meshes
            .iter()
            .map(|m| m.key)
            .filter(|k| physics.built.contains_key(k) || wanted(*k))
            .collect();
        physics.build(keys);
    }
    for ChunkRemoved(key) in removed.read() {
        physics.meshes.remove(key);
        physics.built.remove(key);
        physics.world.remove_chunk(arr(*key));
    }
}

fn is_near(k: ChunkKey, f: ChunkKey) -> bool {
    within(k, f, COLLIDER_RADIUS_CHUNKS)
}

/// Whether `k` is at most `r` chunks from `f` on every axis (colliders are dropped one chunk
/// further out than they are built, so walking along a chunk border does not rebuild them).
fn within(k: ChunkKey, f: ChunkKey, r: i32) -> bool {
    (k.x - f.x).abs() <= r && (k.y - f.y).abs() <= r && (k.z - f.z).abs() <= r
}

/// The chunk colliders are kept around (the character's chunk), while walking.
#[derive(Resource, Debug, Clone, Copy)]
pub struct WalkFocus(pub ChunkKey);

/// Builds colliders for chunks that came near the walk focus or the blocks' chunks
/// ([`BlockFocus`]), drops far ones, and swaps in finished builds in order, waking the
/// bodies on the swapped chunks.
pub fn refresh_colliders(
    mut physics: ResMut<Physics>,
    focus: Option<Res<WalkFocus>>,
    blocks: Option<Res<BlockFocus>>,
    world: Option<Res<LoamWorld>>,
) {
    let walk = focus.map(|f| f.0);
    let around: &[ChunkKey] = &blocks
        .map(|b| b.chunks.iter().copied().collect::<Vec<_>>())
        .unwrap_or_default();
    if let Some(f) = walk {
        physics.build(near(f, COLLIDER_RADIUS_CHUNKS));
    }
    for &c in around {
        physics.build(near(c, 1));
    }
    // Colliders are dropped one chunk further out than they are built.
    let far: Vec<ChunkKey> = physics
        .built
        .keys()
        .copied()
        .filter(|k| {
            !walk.is_some_and(|f| within(*k, f, COLLIDER_RADIUS_CHUNKS + 1))
                && !around.iter().any(|c| within(*k, *c, 2))
        })
        .collect();
    for k in far {
        physics.built.remove(&k);
        physics.world.remove_chunk(arr(k));
    }
    while let Some(task) = physics.tasks.front_mut() {
        let Some(done) = check_ready(task) else {
            break;
        };
        physics.tasks.pop_front();
        let mut batch = Vec::with_capacity(done.len());
        for (key, version, shape) in done {
            if physics.in_flight.get(&key) == Some(&version) {
                physics.in_flight.remove(&key);
            }
            // A mesh that left the view meanwhile, or a newer collider: skip.
            if physics.meshes.get(&key).is_none_or(|m| m.version < version)
                || physics.built.get(&key).is_some_and(|v| *v > version)
            {
                continue;
            }
            physics.built.insert(key, version);
            batch.push((arr(key), shape));
        }
        let keys: Vec<[i32; 3]> = batch.iter().map(|(k, _)| *k).collect();
        physics.world.set_chunks(batch);
        // Bodies asleep on a chunk's old surface would hang in the air over a new hole:
        // wake everything in (and just around) the swapped chunks.
        if let Some(size) = world
            .as_ref()
            .map(|w| (f64::from(CHUNK_CELLS) * w.world.field().settings().voxel_size) as f32)
        {
            for k in keys {
                let c = k.map(|v| (v as f32 + 0.5) * size);
                let woken = physics
                    .world
                    .dynamic_bodies_in_box(c, [size * 0.5 + 1.0; 3])
                    .unwrap_or_default();
                for b in woken {
                    physics.world.wake_body(b);
                }
            }
        }
    }
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
