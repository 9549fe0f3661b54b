//! Chunk meshes on screen: [`World::pull`](loam_world::World::pull) groups turned into Bevy
//! meshes within a per-frame time budget, all meshes of one group swapped in the same frame.

use std::collections::BTreeMap;
use std::time::Duration;

use loam_world::Instant;

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use loam_field::{CHUNK_CELLS, ChunkKey};
use loam_world::lod::LodKey;
use loam_world::{BatchKind, ChunkMesh, PullBudget, Update as WorldUpdate, Viewer};

use crate::LoamWorld;
use crate::look::vertex_colors;
use crate::settings::{DEFAULT_UPLOAD_BUDGET, LoamSettings};

/// A chunk's entity: the mesh shown for it and the chunk version it was built for.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkEntity {
    /// The chunk (in chunks of its level).
    pub key: ChunkKey,
    /// Its level of detail (0 without level of detail).
    pub level: u8,
    /// The version of the mesh on screen.
    pub version: u64,
}

/// Marks the entities whose positions are the world's viewers (chunks stream around them);
/// usually the camera.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct LoamViewer;

/// The material every chunk mesh is drawn with.
#[derive(Resource, Debug, Clone)]
pub struct TerrainMaterial(pub Handle<crate::material::TerrainMaterialAsset>);

/// What the last frames delivered, for the HUD and for tests.
#[derive(Resource, Debug, Clone, Default)]
pub struct ChunkStats {
    /// Chunk entities on screen.
    pub shown: usize,
    /// Groups swapped in since start.
    pub groups: u64,
    /// Groups showing at least one op swapped in since start.
    pub edit_groups: u64,
    /// Meshes uploaded in the last frame.
    pub uploaded_last_frame: usize,
    /// Time spent uploading in the last frame.
    pub upload_time_last_frame: Duration,
    /// Milliseconds from the last edit (as marked with [`LoamWorld::mark_edit`]) to the frame
    /// its group was swapped in.
    pub last_edit_to_visible_ms: Option<f64>,
}

/// A group swapped in this frame, announced to other systems (the physics layer swaps the
/// group's colliders from it).
#[derive(Message, Debug, Clone)]
pub struct GroupShown {
    /// Why it was built.
    pub kind: BatchKind,
    /// Its level-0 meshes (an empty mesh: the chunk has no surface now); coarser levels are
    /// only drawn, never collided with.
    pub meshes: Vec<ChunkMesh>,
}

/// A level-0 chunk that left the view (or was replaced by a coarser one) this frame.
#[derive(Message, Debug, Clone, Copy)]
pub struct ChunkRemoved(pub ChunkKey);

/// Entities of the chunks on screen, by chunk and level.
#[derive(Resource, Debug, Default)]
pub struct ChunkEntities(pub BTreeMap<LodKey, Entity>);

/// Whether chunks are tinted by their level of detail (a debug view), and the materials that
/// do it: level `k` uses `tints[k % 6]`.
#[derive(Resource, Debug, Clone, Default)]
pub struct LodDebugView {
    /// Tint chunks by level.
    pub on: bool,
    /// One material per tint, made on first use.
    pub tints: Vec<Handle<crate::material::TerrainMaterialAsset>>,
}

/// The tint of level `level` in the debug view (linear RGB, multiplied with the terrain's
/// colours): white, red, blue, magenta, cyan, yellow, then again. No green: it would vanish
/// in the grass.
pub fn level_tint(level: u8) -> [f32; 3] {
    const TINTS: [[f32; 3]; 6] = [
        [1.0, 1.0, 1.0],
        [1.0, 0.25, 0.25],
        [0.3, 0.4, 1.0],
        [1.0, 0.25, 1.0],
        [0.25, 1.0, 1.0],
        [1.0, 1.0, 0.15],
    ];
    TINTS[usize::from(level) % TINTS.len()]
}

/// The material a chunk of `level` is drawn with now.
pub(crate) fn chunk_material(
    level: u8,
    base: &TerrainMaterial,
    debug: &LodDebugView,
) -> Handle<crate::material::TerrainMaterialAsset> {
    if debug.on && !debug.tints.is_empty() {
        debug.tints[usize::from(level) % debug.tints.len()].clone()
    } else {
        base.0.clone()
    }
}

/// Keeps every chunk's material in step with [`LodDebugView::on`] (makes the tinted
/// materials on first use).
pub fn apply_lod_debug_view(
    mut debug: ResMut<LodDebugView>,
    base: Res<TerrainMaterial>,
    mut materials: ResMut<Assets<crate::material::TerrainMaterialAsset>>,
    mut chunks: Query<
        (
            &ChunkEntity,
            &mut MeshMaterial3d<crate::material::TerrainMaterialAsset>,
        ),
        Without<crate::fade::Fading>,
    >,
) {
    if !debug.is_changed() {
        return;
    }
    if debug.on && debug.tints.is_empty() {
        debug.tints = (0..6)
            .map(|k| {
                let [r, g, b] = level_tint(k);
                let mut m = crate::material::terrain_material();
                m.base.base_color = Color::linear_rgb(r, g, b);
                materials.add(m)
            })
            .collect();
    }
    for (chunk, mut m) in &mut chunks {
        let want = chunk_material(chunk.level, &base, &debug);
        if m.0 != want {
            m.0 = want;
        }
    }
}

/// Despawns the entity of chunk `key` (if it has one) with its mesh asset, and tells the
/// physics layer when a level-0 chunk goes.
fn despawn_chunk(
    commands: &mut Commands,
    key: LodKey,
    entities: &mut ChunkEntities,
    meshes: &mut Assets<Mesh>,
    handles: &Query<&Mesh3d>,
    removed: &mut MessageWriter<ChunkRemoved>,
) {
    if let Some(e) = entities.0.remove(&key) {
        if let Ok(h) = handles.get(e) {
            meshes.remove(&h.0);
        }
        commands.entity(e).despawn();
    }
    if key.level == 0 {
        removed.write(ChunkRemoved(key.chunk()));
    }
}

/// Converts a chunk mesh to a Bevy mesh: positions, normals, vertex colours from
/// [`crate::look`] (the ones the worker made, [`ChunkMesh::colors`], where it did; else made
/// here), u32 indices.
pub fn to_bevy_mesh(chunk: &ChunkMesh, generator: &loam_field::Generator, voxel_size: f64) -> Mesh {
    let m = &chunk.mesh;
    let colors = if chunk.colors.len() == m.positions.len() {
        chunk.colors.to_vec()
    } else {
        let size = f64::from(CHUNK_CELLS) * voxel_size * f64::from(1u32 << chunk.level.min(31));
        vertex_colors(m, generator, chunk.origin, size)
    };
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::RENDER_WORLD,
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, m.positions.clone())
    .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, m.normals.clone())
    .with_inserted_attribute(Mesh::ATTRIBUTE_COLOR, colors)
    .with_inserted_indices(Indices::U32(m.indices.clone()))
}

/// Follows the viewers: one [`loam_world::World::update`] per frame.
pub fn follow_viewers(
    mut world: ResMut<LoamWorld>,
    viewers: Query<&GlobalTransform, With<LoamViewer>>,
) {
    let vs: Vec<Viewer> = viewers
        .iter()
        .map(|t| {
            let p = t.translation();
            Viewer::at([f64::from(p.x), f64::from(p.y), f64::from(p.z)])
        })
        .collect();
    world.world.update(&vs);
}

/// Swaps in what the workers finished, group by group, until the frame's upload budget is
/// spent (a group is never split: the first one is always taken whole).
#[allow(clippy::too_many_arguments)]
pub fn upload_meshes(
    mut commands: Commands,
    mut world: ResMut<LoamWorld>,
    mut meshes: ResMut<Assets<Mesh>>,
    material: Res<TerrainMaterial>,
    mut entities: ResMut<ChunkEntities>,
    mut stats: ResMut<ChunkStats>,
    mut shown: MessageWriter<GroupShown>,
    mut removed: MessageWriter<ChunkRemoved>,
    handles: Query<&Mesh3d>,
    debug: Option<Res<LodDebugView>>,
    settings: Option<Res<LoamSettings>>,
    mut fade: crate::fade::FadeStart,
    mut check: Option<ResMut<SeamCheck>>,
) {
    let debug = debug.map(|d| d.clone()).unwrap_or_default();
    let lod = world.world.settings().lod_levels > 0;
    let start = Instant::now();
    let budget = settings.map_or(DEFAULT_UPLOAD_BUDGET, |s| s.upload_budget);
    let generator = world.world.field().generator().clone();
    let voxel_size = world.world.field().settings().voxel_size;
    let mut uploaded = 0;
    while start.elapsed() < budget || uploaded == 0 {
        let updates = world.world.pull(PullBudget::chunks(1));
        if updates.is_empty() {
            break;
        }
        for update in updates {
            if let Some(c) = check.as_mut()
                && c.shown.apply([update.clone()]).is_err()
            {
                warn!("seam check: a stale mesh was handed over");
            }
            match update {
                WorldUpdate::Removed(key) => {
                    let key = LodKey::level0(key);
                    despawn_chunk(
                        &mut commands,
                        key,
                        &mut entities,
                        &mut meshes,
                        &handles,
                        &mut removed,
                    );
                }
                WorldUpdate::Group(group) => {
                    // A level change fades (streaming with levels of detail); edits swap.
                    let cohort = fade.begin(lod, &group);
                    // Chunks of another level that this group's meshes replace go in the
                    // same frame (level of detail), or start fading out.
                    for &key in &group.removed {
                        match (cohort, entities.0.get(&key).copied()) {
                            (Some(c), Some(e)) => {
                                entities.0.remove(&key);
                                fade.retire(&mut commands, e, key.level, c, &material, &debug);
                                if key.level == 0 {
                                    removed.write(ChunkRemoved(key.chunk()));
                                }
                            }
                            _ => despawn_chunk(
                                &mut commands,
                                key,
                                &mut entities,
                                &mut meshes,
                                &handles,
                                &mut removed,
                            ),
                        }
                    }
                    for chunk in &group.meshes {
                        uploaded += 1;
                        let lod_key = chunk.lod_key();
                        let mut old = entities.0.get(&lod_key).copied();
                        if let (Some(c), Some(e)) = (cohort, old) {
                            // The old mesh fades out on an entity of its own.
                            entities.0.remove(&lod_key);
                            fade.retire(&mut commands, e, chunk.level, c, &material, &debug);
                            old = None;
                        }
                        if let Some(e) = old
                            && let Ok(h) = handles.get(e)
                        {
                            meshes.remove(&h.0);
                        }
                        if chunk.mesh.indices.is_empty() {
                            if let Some(e) = old {
                                commands.entity(e).despawn();
                                entities.0.remove(&lod_key);
                            }
                            continue;
                        }
                        let handle = meshes.add(to_bevy_mesh(chunk, &generator, voxel_size));
                        let o = chunk.origin;
                        let tag = ChunkEntity {
                            key: chunk.key,
                            level: chunk.level,
                            version: chunk.version,
                        };
                        match old {
                            Some(e) => {
                                commands.entity(e).insert((Mesh3d(handle), tag));
                            }
                            None => {
                                let transform =
                                    Transform::from_xyz(o[0] as f32, o[1] as f32, o[2] as f32);
                                let shade = match cohort {
                                    Some(c) => {
                                        fade.material(c, false, chunk.level, &material, &debug)
                                    }
                                    None => chunk_material(chunk.level, &material, &debug),
                                };
                                let mut e = commands.spawn((
                                    Mesh3d(handle),
                                    MeshMaterial3d(shade),
                                    transform,
                                    tag,
                                ));
                                if let Some(c) = cohort {
                                    e.insert(crate::fade::Fading {
                                        cohort: c,
                                        out: false,
                                    });
                                }
                                let e = e.id();
                                entities.0.insert(lod_key, e);
                            }
                        }
                    }
                    stats.groups += 1;
                    // An edit's chunks may come in a streaming batch they merged with: any
                    // group that shows ops counts.
                    if group.ops > 0 {
                        stats.edit_groups += 1;
                        if let Some(t) = world.edit_marked.take() {
                            stats.last_edit_to_visible_ms = Some(t.elapsed().as_secs_f64() * 1e3);
                        }
                    }
                    let mut level0 = group.meshes;
                    level0.retain(|m| m.level == 0);
                    shown.write(GroupShown {
                        kind: group.kind,
                        meshes: level0,
                    });
                }
            }
        }
    }
    stats.shown = entities.0.len();
    stats.uploaded_last_frame = uploaded;
    stats.upload_time_last_frame = start.elapsed();
}

/// A copy of every shown mesh, kept while this resource exists (`loam edit --check-seams`),
/// and the mesher whose complete view [`check_seams`] last reported.
#[derive(Resource, Default)]
pub struct SeamCheck {
    /// The meshes shown, as the world handed them over.
    pub shown: loam_world::Shown,
    /// The mesher of the last report.
    pub reported: Option<loam_mesh::Mesher>,
}

/// With a [`SeamCheck`]: when every chunk of the view is built and shown and the world's
/// mesher is not the one last reported, prints a line with the open edges inside the view and
/// the non-manifold edges of all shown meshes welded by position (as `loam replay`'s metrics),
/// and the meshers that drew them: `seams: mesher sn, 671 chunks of levels 0..=3, drawn by
/// [sn]: open edges inside the view 0, non-manifold 4230`.
pub fn check_seams(world: Res<LoamWorld>, mut check: ResMut<SeamCheck>) {
    let w = &world.world;
    let mesher = w.settings().mesher;
    if check.reported == Some(mesher) || w.waiting() > 0 || w.pending_batches() > 0 {
        return;
    }
    // A switch shows once every chunk was rebuilt with the new mesher (MC33 draws as Marching
    // Cubes across levels).
    let drawn = check.shown.meshers();
    let lod = w.settings().lod_levels > 0;
    let want = if lod {
        loam_world::lod::lod_mesher(mesher)
    } else {
        mesher
    };
    if drawn.iter().any(|&m| m != want) {
        return;
    }
    let view = w.view();
    let edges = check
        .shown
        .open_edges(&view, w.field().settings().voxel_size);
    let levels: Vec<u8> = view.iter().map(|k| k.level).collect();
    let (lo, hi) = (
        levels.iter().min().copied().unwrap_or(0),
        levels.iter().max().copied().unwrap_or(0),
    );
    let names: Vec<&str> = drawn.iter().map(|m| m.name()).collect();
    println!(
        "seams: mesher {}, {} chunks of levels {lo}..={hi}, drawn by [{}]: open edges inside \
         the view {}, non-manifold {}",
        mesher.name(),
        check.shown.len(),
        names.join(", "),
        edges.inside,
        edges.nonmanifold
    );
    check.reported = Some(mesher);
}
