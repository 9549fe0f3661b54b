//! Blocks in the app: a [`loam_blocks::BlockWorld`] in the same Rapier world as walk mode's
//! terrain colliders ([`Physics`]), stepped every frame; terrain edits make it look at the
//! ground again; impacts and breaks become [`Effect`]s; [`draw`] shows held blocks, falling
//! pieces and rubble.
//!
//! ```text
//!   Update, LoamSet::Physics (after LoamSet::Upload):
//!     walk::refresh_colliders  (terrain colliders near the character AND BlockFocus)
//!     step_blocks              (ground re-check for this frame's ops, physics step,
//!                               impacts/damage/rest → Effect::Land, broken → draw)
//!     focus_blocks             (chunks that need terrain colliders: around blocks, pieces)
//!     draw::sync               (entities follow the store and the pieces' poses)
//! ```

pub mod draw;
pub mod persist;

use std::collections::BTreeSet;

use bevy::color::ColorToPacked;
use bevy::prelude::*;
use loam_blocks::{
    BlockError, BlockId, BlockOp, BlockPos, BlockSettings, BlockSpec, BlockWorld, Changes,
    FieldGround, IslandSettings, MaterialTable, PieceId, PieceState, WorldBox, find_islands,
};
use loam_field::{ChunkKey, EditOp, SampleBox};
use loam_store::BlockLogEntry;
use loam_world::World;

use crate::effects::{Effect, linear};
use crate::walk::{self, Physics};
use crate::{LoamSet, LoamWorld};
use loam_session::TerrainColliders;

/// The blocks of the world.
#[derive(Resource)]
pub struct LoamBlocks {
    /// Held blocks, pieces and rubble.
    pub world: BlockWorld,
    /// No physics steps while set (terrain edits are still followed): a headless render
    /// holds the blocks until the terrain colliders around them are built.
    pub paused: bool,
    /// A replica of an authority's blocks (an editor joined to a server): deltas applied
    /// from outside ([`BlockWorld::apply_delta`]) decide everything, and each frame only
    /// plays the falls back ([`BlockWorld::follow`]); no support checks, no loose lumps.
    pub replica: bool,
    /// Seconds simulated so far.
    pub sim_time: f64,
    /// Block ops applied so far, in order (what a world file or a server would log).
    pub ops: u64,
    /// The log's physics step of [`Physics`]'s step 0 (a restored world goes on from the
    /// step its snapshot and ops were taken at).
    pub step_base: u64,
    /// Whether applied block ops are kept in [`LoamBlocks::journal`] (an app with a world
    /// file sets it; without one they would pile up).
    pub journaling: bool,
    /// Block ops applied but not yet written to the world file, with their sequence numbers
    /// (shared with terrain ops) and steps; [`persist::flush`] writes and drains them.
    pub journal: Vec<BlockLogEntry>,
    /// Blocks broken since the last draw (their colour is known to the drawing).
    pub(crate) broken: Vec<(BlockPos, BlockId)>,
    /// Effects of ops applied since the last frame, sent as messages by the plugin.
    pending: Vec<Effect>,
    /// This frame's applied terrain ops already searched for loose lumps.
    islands_seen: usize,
    /// A replica's falling pieces: the fastest each has played back so far, m/s (its
    /// landing's speed when the authority's record brings it to rest).
    fall_speed: std::collections::BTreeMap<PieceId, f32>,
}

impl LoamBlocks {
    /// No blocks, the standard materials and settings.
    ///
    /// # Panics
    /// Never: the standard table and default settings are valid.
    pub fn new() -> Self {
        Self::with(
            BlockWorld::new(MaterialTable::standard(), BlockSettings::default())
                .expect("standard materials and default settings are valid"),
        )
    }

    /// Wraps an existing block world.
    pub fn with(world: BlockWorld) -> Self {
        Self {
            world,
            paused: false,
            replica: false,
            sim_time: 0.0,
            ops: 0,
            step_base: 0,
            journaling: false,
            journal: Vec::new(),
            broken: Vec::new(),
            pending: Vec::new(),
            islands_seen: 0,
            fall_speed: Default::default(),
        }
    }

    /// Applies an authority's records ([`BlockWorld::apply_delta`]) to a replica, with
    /// their effects in this frame's update: a knock for each block newly held, and for each
    /// piece that comes to rest from a fall a landing (at the fastest speed its playback
    /// reached) with its dust and thud. The landing is heard when the record comes, which
    /// may be a moment after the playback touched the ground.
    ///
    /// # Errors
    /// As [`BlockWorld::apply_delta`]; nothing changes then.
    pub fn apply_delta(
        &mut self,
        physics: &mut Physics,
        delta: &loam_blocks::BlockDelta,
    ) -> Result<(), BlockError> {
        let placed: Vec<BlockPos> = delta
            .held
            .iter()
            .filter(|h| self.world.store().get(h.pos).is_none())
            .map(|h| h.pos)
            .collect();
        let landed: Vec<Effect> = delta
            .pieces
            .iter()
            .filter(|p| matches!(p.state, PieceState::Rubble { .. }))
            .filter_map(|p| {
                let before = self.world.piece(p.id)?;
                if !matches!(before.state, PieceState::Falling) {
                    return None;
                }
                let v = before.velocity;
                let now = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                let speed = self.fall_speed.get(&p.id).copied().unwrap_or(0.0).max(now);
                let colour = p
                    .blocks
                    .first()
                    .map_or([0.5; 3], |b| block_colour(&self.world, &b.block));
                Some(Effect::Land {
                    at: Vec3::from_array(p.pose.position),
                    speed,
                    mass_kg: self
                        .world
                        .piece_body(p.id)
                        .and_then(|b| physics.world.body_mass(b))
                        .unwrap_or(0.0),
                    colour,
                })
            })
            .collect();
        self.world.apply_delta(&mut physics.world, delta)?;
        let world = &self.world;
        self.fall_speed.retain(|id, _| {
            world
                .piece(*id)
                .is_some_and(|p| p.state == PieceState::Falling)
        });
        self.pending
            .extend(placed.into_iter().map(|pos| Effect::Place {
                at: vec3(pos.centre()),
            }));
        self.pending.extend(landed);
        Ok(())
    }

    /// Applies a block op on the ground of `world`'s field, physics in `physics`, and
    /// numbers it in `world`'s op sequence (it is journaled for the world file). Its effects
    /// (a knock for a placed or chiselled block, dust and a crack for a broken one) are sent
    /// in this frame's update.
    ///
    /// # Errors
    /// As [`BlockWorld::apply`]; nothing changes then (not even the sequence).
    pub fn apply(
        &mut self,
        physics: &mut Physics,
        world: &mut World,
        op: &BlockOp,
    ) -> Result<Changes, BlockError> {
        let field = world.field();
        // A block broken off a piece is no longer drawn afterwards: take its colour now.
        let off = match *op {
            BlockOp::BreakOff { piece, block } => self.world.piece(piece).and_then(|p| {
                let (_, b) = p.block(block)?;
                let local = p.local_min(b.pos);
                let e = b.pos.size.edge();
                let c = p.to_world(local.map(|v| v + e / 2.0));
                Some(Effect::Break {
                    at: vec3(c),
                    edge: e as f32,
                    colour: block_colour(&self.world, &b.block),
                })
            }),
            _ => None,
        };
        let changes = self
            .world
            .apply(&mut physics.world, &FieldGround(field), op)?;
        self.ops += 1;
        let seq = world.reserve_seq();
        if self.journaling {
            self.journal.push(BlockLogEntry {
                seq,
                step: self.step(physics),
                op: op.encode(),
            });
        }
        for (pos, _) in &changes.placed {
            self.pending.push(Effect::Place {
                at: vec3(pos.centre()),
            });
        }
        for pos in &changes.chiselled {
            self.pending.push(Effect::Chisel {
                at: vec3(pos.centre()),
            });
        }
        match off {
            Some(e) => self.pending.push(e),
            None => self.broken.extend(changes.broken.iter().copied()),
        }
        Ok(changes)
    }
}

impl LoamBlocks {
    /// The current physics step in the log's numbering.
    pub fn step(&self, physics: &Physics) -> u64 {
        self.step_base + physics.world.step_count()
    }
}

impl Default for LoamBlocks {
    fn default() -> Self {
        Self::new()
    }
}

/// Chunks whose terrain colliders the blocks need: near held blocks (so that a piece never
/// starts above a chunk without its collider) and near pieces.
#[derive(Resource, Debug, Default, Clone)]
pub struct BlockFocus {
    /// The chunks (within [`loam_session::NEAR_M`] of a block or piece).
    pub chunks: BTreeSet<ChunkKey>,
    revision: Option<u64>,
    held: BTreeSet<ChunkKey>,
}

/// Blocks in the app (in [`crate::LoamPlugins`]): add it after [`crate::LoamPlugin`]; it adds
/// the [`LoamBlocks`] and [`Physics`] resources if the app has none.
#[derive(Debug, Clone, Default)]
pub struct BlocksPlugin;

impl Plugin for BlocksPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<LoamBlocks>()
            .init_resource::<BlockFocus>()
            .init_resource::<Physics>()
            .init_resource::<draw::BlockDrawing>()
            .add_message::<Effect>()
            // After the tools, before `World::update`: an island's removal joins the batch of
            // the dig that cut it loose.
            .add_systems(
                Update,
                drop_islands
                    .in_set(LoamSet::Loosen)
                    .run_if(resource_exists::<LoamWorld>),
            )
            .add_systems(
                Update,
                (
                    walk::refresh_colliders,
                    step_blocks,
                    focus_blocks,
                    draw::sync,
                )
                    .chain()
                    .in_set(LoamSet::Physics)
                    .run_if(resource_exists::<LoamWorld>),
            );
    }
}

/// A dig that cut a lump of terrain loose: the lump leaves the field (box digs covering
/// exactly its samples, in one stroke, in this frame's batch) and falls as a piece of blocks
/// painted in its colour.
fn drop_islands(
    mut world: ResMut<LoamWorld>,
    mut blocks: ResMut<LoamBlocks>,
    mut physics: ResMut<Physics>,
) {
    let fresh = world.applied().len();
    if fresh == blocks.islands_seen || blocks.replica {
        return;
    }
    let changed: Vec<SampleBox> = world.applied()[blocks.islands_seen.min(fresh)..]
        .iter()
        .filter(|a| !a.island)
        .filter_map(|a| a.changed)
        .collect();
    let settings = IslandSettings::default();
    for region in changed {
        let found = match find_islands(world.world.field(), region, &settings) {
            Ok(f) => f,
            Err(e) => {
                warn!("island search failed: {e}");
                continue;
            }
        };
        for island in found.islands {
            let fs = *world.world.field().settings();
            let (ops, lump) = match (island.removal_ops(&fs), island.lump(lump_spec)) {
                (Ok(ops), Ok(lump)) => (ops, lump),
                (Err(e), _) | (_, Err(e)) => {
                    warn!("a loose lump stays in place: {e}");
                    continue;
                }
            };
            let stroke = world.world.next_stroke();
            for op in &ops {
                if let Err(e) = world.apply_island(stroke, op) {
                    warn!("a loose lump could not be removed: {e}");
                }
            }
            if let Err(e) = blocks.apply(&mut physics, &mut world.world, &lump) {
                warn!("a loose lump could not fall: {e}");
            }
        }
    }
    blocks.islands_seen = world.applied().len();
}

/// The blocks of a loose lump: stone painted soil brown, or the painted terrain colour.
fn lump_spec(m: loam_field::MaterialId) -> BlockSpec {
    let c = crate::look::painted(m).unwrap_or(crate::look::SOIL);
    let srgb = Color::linear_rgb(c[0], c[1], c[2])
        .to_srgba()
        .to_u8_array_no_alpha();
    BlockSpec {
        material: MaterialTable::STONE,
        shape: Default::default(),
        paint: Some(srgb),
    }
}

/// World position of a grid point.
pub(crate) fn vec3(p: [f64; 3]) -> Vec3 {
    Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32)
}

/// The frame's ground re-checks, the physics step and what it reports.
fn step_blocks(
    time: Res<Time>,
    world: Res<LoamWorld>,
    mut blocks: ResMut<LoamBlocks>,
    mut physics: ResMut<Physics>,
    mut effects: MessageWriter<Effect>,
) {
    blocks.islands_seen = 0;
    for e in std::mem::take(&mut blocks.pending) {
        effects.write(e);
    }
    let field = world.world.field();
    let vs = field.settings().voxel_size;
    for applied in world.applied() {
        let Some(changed) = applied.changed else {
            continue;
        };
        let region = WorldBox::from_samples(changed, vs);
        if blocks.replica {
            physics.terrain_changed(changed, vs);
        } else {
            let Physics {
                world: rapier,
                colliders,
                ..
            } = &mut *physics;
            match loam_session::terrain_changed(
                &mut blocks.world,
                rapier,
                colliders,
                field,
                changed,
            ) {
                Ok(c) => blocks.broken.extend(c.broken.iter().copied()),
                Err(e) => warn!("blocks could not follow a terrain edit: {e}"),
            }
        }
        if !matches!(applied.op, EditOp::Undo { .. } | EditOp::Redo { .. }) {
            effects.write(dig_effect(field, region));
        }
    }
    // A field taken in from elsewhere (a server's): its changed bricks' colliders.
    for &changed in world.replaced() {
        physics.terrain_changed(changed, vs);
    }
    if blocks.paused {
        return;
    }
    // Falling pieces wait (the whole world, so steps stay in order, as on the server) while
    // a chunk near a body has no collider yet: after a load, or a lump about to fall.
    let falling = blocks
        .world
        .pieces()
        .any(|p| matches!(p.state, PieceState::Falling));
    if falling && !physics.colliders.ready() {
        return;
    }
    // Virtual time: a headless render advances it by a fixed step per frame.
    let dt = time.delta_secs().min(0.1);
    if blocks.replica {
        // The authority decides impacts, damage and rest; its deltas come in `remote::sync`.
        if let Err(e) = blocks.world.follow(&mut physics.world, dt) {
            warn!("block playback failed: {e}");
        }
        let fastest: Vec<(PieceId, f32)> = blocks
            .world
            .pieces()
            .filter(|p| p.state == PieceState::Falling)
            .map(|p| {
                let v = p.velocity;
                (p.id, (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
            })
            .collect();
        for (id, speed) in fastest {
            let s = blocks.fall_speed.entry(id).or_insert(0.0);
            *s = s.max(speed);
        }
        blocks.sim_time += f64::from(dt);
        return;
    }
    // The physics steps only while a piece is awake (or a walking character may push
    // one), as on the server: block ops are logged with the step they were taken at, and a
    // load replays the steps between them (`loam_session::load`), so idle steps would only
    // make loads slower.
    if physics.character.is_none() && !loam_session::pieces_awake(&blocks.world, &physics.world) {
        return;
    }
    let report = match blocks.world.step(&mut physics.world, dt) {
        Ok(r) => r,
        Err(e) => {
            warn!("block physics step failed: {e}");
            return;
        }
    };
    // Pieces sunk into the ground (terrain built over part of one) are taken out (nothing
    // breaks: what they held up falls).
    let ground = FieldGround(world.world.field());
    if let Err(e) = blocks.world.bury_sunken(&mut physics.world, &ground) {
        warn!("block physics step failed: {e}");
    }
    blocks.sim_time += f64::from(dt);
    for imp in &report.impacts {
        let Some(piece) = blocks.world.piece(imp.piece) else {
            continue;
        };
        let colour = piece
            .block(imp.block)
            .map_or([0.5; 3], |(_, b)| block_colour(&blocks.world, &b.block));
        let mass_kg = blocks
            .world
            .piece_body(imp.piece)
            .and_then(|b| physics.world.body_mass(b))
            .unwrap_or(0.0);
        effects.write(Effect::Land {
            at: Vec3::from_array(imp.point),
            speed: imp.speed,
            mass_kg,
            colour,
        });
    }
    blocks.broken.extend(report.changes.broken.iter().copied());
}

/// The dust and sound of a terrain edit over `region`: soil near the generated surface, rock
/// deeper than [`crate::look::ROCK_DEPTH_M`].
fn dig_effect(field: &loam_field::Field, region: WorldBox) -> Effect {
    let c = [0, 1, 2].map(|i| (region.min[i] + region.max[i]) / 2.0);
    let half = [0, 1, 2]
        .map(|i| (region.max[i] - region.min[i]) / 2.0)
        .into_iter()
        .fold(0.0f64, f64::max);
    let depth = field.generator().surface_height(c[0], c[2]) - c[1];
    let colour = if depth > f64::from(crate::look::ROCK_DEPTH_M) {
        crate::look::ROCK
    } else {
        crate::look::SOIL
    };
    Effect::Dig {
        at: vec3(c),
        radius: half as f32,
        colour,
    }
}

/// A block's colour (linear RGB): its paint, else its material's.
pub fn block_colour(world: &BlockWorld, b: &loam_blocks::Block) -> [f32; 3] {
    let srgb = b
        .paint
        .or_else(|| world.materials().get(b.material).map(|m| m.colour))
        .unwrap_or([128, 128, 128]);
    linear(srgb)
}

/// Keeps [`BlockFocus`] on the chunks near held blocks (recomputed when the store changes)
/// and near pieces (every frame): those within [`loam_session::NEAR_M`] of one.
fn focus_blocks(world: Res<LoamWorld>, blocks: Res<LoamBlocks>, mut focus: ResMut<BlockFocus>) {
    let vs = world.world.field().settings().voxel_size;
    let near = |p: [f64; 3]| {
        TerrainColliders::chunks_near(vs, p)
            .into_iter()
            .map(|k| ChunkKey::new(k[0], k[1], k[2]))
    };
    let rev = blocks.world.store().revision();
    if focus.revision != Some(rev) {
        focus.held = blocks
            .world
            .store()
            .iter()
            .flat_map(|(pos, _)| near(pos.centre()))
            .collect();
        focus.revision = Some(rev);
    }
    let mut chunks = focus.held.clone();
    chunks.extend(
        blocks
            .world
            .pieces()
            .flat_map(|p| near(p.pose.position.map(f64::from))),
    );
    focus.chunks = chunks;
}
