//! Cross-fading between levels of detail: when the viewers' movement changes the level of
//! some chunks, the meshes that replace them fade in over [`LoamSettings::lod_fade_s`]
//! while the meshes they replace fade out, through complementary screen-door windows
//! ([`crate::material::fade_windows`]), so a level change does not pop.
//!
//! Each of the two sets is crack-free on its own (a level change is one batch, with its
//! neighbours' transition faces), and at every pixel exactly one of them is drawn, so the
//! terrain stays closed during the fade. Only streaming groups of a world with levels of
//! detail fade; an edit's chunks are swapped at once, so sculpting stays immediate.
//! This is screen-door (dithered) cross-fading, as Bevy's visibility ranges do between
//! hierarchical levels; geomorphing vertices toward the coarser level is the alternative.

use std::collections::BTreeMap;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::chunks::{ChunkEntity, LodDebugView, TerrainMaterial, chunk_material};
use crate::material::{TerrainMaterialAsset, fade_windows};
use crate::settings::LoamSettings;

/// A chunk entity taking part in a cross-fade: the one fading in keeps its [`ChunkEntity`];
/// the one fading out has lost it (it is no longer a chunk on screen) and is despawned, with
/// its mesh, when the fade ends.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fading {
    /// The fade (one per group).
    pub cohort: u64,
    /// Fading out (replaced) rather than in.
    pub out: bool,
}

/// One running cross-fade.
#[derive(Debug)]
struct Cohort {
    /// When it started, seconds of [`Time::elapsed_secs_f64`].
    started: f64,
    /// Its materials by (fading out, level): the chunk's material with the fade's window.
    materials: BTreeMap<(bool, u8), Handle<TerrainMaterialAsset>>,
}

/// The running cross-fades.
#[derive(Resource, Debug, Default)]
pub struct Fades {
    next: u64,
    cohorts: BTreeMap<u64, Cohort>,
}

impl Fades {
    /// Cross-fades still running.
    pub fn running(&self) -> usize {
        self.cohorts.len()
    }
}

/// What [`crate::chunks::upload_meshes`] needs to start fades (a system parameter).
#[derive(SystemParam)]
pub struct FadeStart<'w> {
    time: Res<'w, Time>,
    settings: Option<Res<'w, LoamSettings>>,
    fades: ResMut<'w, Fades>,
    materials: ResMut<'w, Assets<TerrainMaterialAsset>>,
}

impl FadeStart<'_> {
    /// Starts a cross-fade for a group, if it should fade: a streaming group without ops in a
    /// world with levels of detail, and fading not turned off. Returns its cohort.
    pub(crate) fn begin(&mut self, lod: bool, group: &loam_world::Group) -> Option<u64> {
        let seconds = self
            .settings
            .as_deref()
            .copied()
            .unwrap_or_default()
            .lod_fade_s;
        if !lod
            || seconds.is_nan()
            || seconds <= 0.0
            || group.kind != loam_world::BatchKind::Stream
            || group.ops > 0
        {
            return None;
        }
        let id = self.fades.next;
        self.fades.next += 1;
        self.fades.cohorts.insert(
            id,
            Cohort {
                started: self.time.elapsed_secs_f64(),
                materials: BTreeMap::new(),
            },
        );
        Some(id)
    }

    /// The material of cohort `cohort` for a chunk of `level` fading in or out (made on first
    /// use from the chunk's own material, at progress 0).
    pub(crate) fn material(
        &mut self,
        cohort: u64,
        out: bool,
        level: u8,
        base: &TerrainMaterial,
        debug: &LodDebugView,
    ) -> Handle<TerrainMaterialAsset> {
        let c = self
            .fades
            .cohorts
            .get_mut(&cohort)
            .expect("a cohort is used in the frame it begins");
        if let Some(h) = c.materials.get(&(out, level)) {
            return h.clone();
        }
        let mut m = self
            .materials
            .get(&chunk_material(level, base, debug))
            .cloned()
            .unwrap_or_else(crate::material::terrain_material);
        let (fin, fout) = fade_windows(0.0);
        m.extension = if out { fout } else { fin };
        let h = self.materials.add(m);
        c.materials.insert((out, level), h.clone());
        h
    }

    /// Takes `entity` (a chunk of `level` being replaced) off the screen's chunks and fades
    /// it out in `cohort`.
    pub(crate) fn retire(
        &mut self,
        commands: &mut Commands,
        entity: Entity,
        level: u8,
        cohort: u64,
        base: &TerrainMaterial,
        debug: &LodDebugView,
    ) {
        let m = self.material(cohort, true, level, base, debug);
        commands
            .entity(entity)
            .remove::<ChunkEntity>()
            .insert((Fading { cohort, out: true }, MeshMaterial3d(m)));
    }
}

/// Advances every cross-fade; at its end despawns the meshes faded out and gives the meshes
/// faded in their chunk's own material back.
#[allow(clippy::too_many_arguments)]
pub fn advance_fades(
    mut commands: Commands,
    time: Res<Time>,
    settings: Option<Res<LoamSettings>>,
    mut fades: ResMut<Fades>,
    mut materials: ResMut<Assets<TerrainMaterialAsset>>,
    mut meshes: ResMut<Assets<Mesh>>,
    base: Res<TerrainMaterial>,
    debug: Res<LodDebugView>,
    fading: Query<(Entity, &Fading, Option<&ChunkEntity>, &Mesh3d)>,
) {
    if fades.cohorts.is_empty() {
        return;
    }
    let seconds = settings.as_deref().copied().unwrap_or_default().lod_fade_s;
    let now = time.elapsed_secs_f64();
    let mut ended = Vec::new();
    for (&id, c) in &fades.cohorts {
        let t = if seconds > 0.0 {
            ((now - c.started) / f64::from(seconds)) as f32
        } else {
            1.0
        };
        if t >= 1.0 {
            ended.push(id);
            continue;
        }
        let (fin, fout) = fade_windows(t);
        for (&(out, _), h) in &c.materials {
            if let Some(mut m) = materials.get_mut(h) {
                m.extension = if out { fout } else { fin };
            }
        }
    }
    if ended.is_empty() {
        return;
    }
    for (e, f, chunk, mesh) in &fading {
        if ended.binary_search(&f.cohort).is_err() {
            continue;
        }
        if f.out {
            meshes.remove(&mesh.0);
            commands.entity(e).despawn();
        } else {
            let level = chunk.map_or(0, |c| c.level);
            commands
                .entity(e)
                .remove::<Fading>()
                .insert(MeshMaterial3d(chunk_material(level, &base, &debug)));
        }
    }
    for id in ended {
        if let Some(c) = fades.cohorts.remove(&id) {
            for h in c.materials.values() {
                materials.remove(h);
            }
        }
    }
}
