//! [`LoamSettings`]: what a game (or the editor) sets about how Loam shows its world.

use std::time::Duration;

use bevy::prelude::*;
use loam_mesh::Mesher;

use crate::world::LoamWorld;

/// The default per-frame budget for turning finished chunk meshes into Bevy meshes.
pub const DEFAULT_UPLOAD_BUDGET: Duration = Duration::from_millis(4);

/// How Loam shows its world. [`crate::LoamPlugin`] adds it with `init_resource`, so a value
/// the app inserted before (or inserts later) wins; change it at any time.
///
/// The world's own settings ([`loam_world::WorldSettings`], given when it is made) hold the
/// mesher and view distance it starts with; [`LoamSettings::mesher`] and
/// [`LoamSettings::view_distance`] ask for a change, which the plugin makes at the start of
/// [`crate::LoamSet::Follow`] whenever the value set here changes.
#[derive(Resource, Debug, Clone, Copy, PartialEq)]
pub struct LoamSettings {
    /// Wall-clock time per frame spent turning finished chunk meshes into Bevy meshes
    /// (default 4 ms); at least one group is taken per frame however long it takes, and a
    /// group is never split.
    pub upload_budget: Duration,
    /// Seconds of [`Time`] (the app's virtual time) a change of level of detail cross-fades
    /// ([`crate::Fades`]); 0 swaps levels in one frame. Default 0.4 s: long enough not to
    /// jump, short enough that two sets of meshes are rarely kept.
    pub lod_fade_s: f32,
    /// The mesher to switch the world to (`World::set_mesher`: every chunk is rebuilt);
    /// `None` keeps the world's.
    pub mesher: Option<Mesher>,
    /// The view distance to ask the world for, metres (`World::set_view_distance`: clamped
    /// to `World::view_distance_range`; a world without levels of detail keeps its own, with
    /// a warning); `None` keeps the world's.
    pub view_distance: Option<f64>,
}

impl Default for LoamSettings {
    fn default() -> Self {
        Self {
            upload_budget: DEFAULT_UPLOAD_BUDGET,
            lod_fade_s: 0.4,
            mesher: None,
            view_distance: None,
        }
    }
}

/// Hands the world the mesher and view distance asked for in [`LoamSettings`] when they
/// change (compared with what was last handed over, so a request is made once).
pub(crate) fn apply_settings(
    settings: Res<LoamSettings>,
    mut world: ResMut<LoamWorld>,
    mut handed: Local<(Option<Mesher>, Option<f64>)>,
) {
    if settings.mesher != handed.0 {
        handed.0 = settings.mesher;
        if let Some(m) = settings.mesher
            && m != world.world.settings().mesher
        {
            world.world.set_mesher(m);
        }
    }
    if settings.view_distance != handed.1 {
        handed.1 = settings.view_distance;
        if let Some(d) = settings.view_distance
            && d != world.world.settings().view_distance
            && let Err(e) = world.world.set_view_distance(d)
        {
            warn!("view distance {d} m not set: {e}");
        }
    }
}
