//! [`LoamWorld`]: the world resource the plugin drives, and the ops applied to it.

use loam_world::Instant;

use bevy::prelude::*;
use loam_field::{EditError, EditOp, EditOutcome, RayHit, SampleBox};
use loam_world::World;

/// The world the plugin drives: insert one (made with [`LoamWorld::new`], or opened from a
/// world file with [`crate::WorldFile::open_or_create`]) and [`crate::LoamPlugin`] streams and
/// meshes it around the [`crate::LoamViewer`]s.
#[derive(Resource)]
pub struct LoamWorld {
    /// The chunk pipeline (field, workers, batches, history). Read it freely (raycasts,
    /// settings, metrics); apply ops through [`LoamWorld::apply`], so that blocks, dust,
    /// sound and the latency readout follow them.
    pub world: World,
    /// When the newest not-yet-shown edit was applied ([`LoamWorld::mark_edit`]).
    pub(crate) edit_marked: Option<Instant>,
    /// Ops applied through [`LoamWorld::apply`] in this frame (blocks look at the ground
    /// again there; dust and sound follow digs).
    applied: Vec<Applied>,
    /// The bricks a field taken in this frame changed ([`LoamWorld::take_field`]), as
    /// sample boxes.
    replaced: Vec<SampleBox>,
}

/// An op applied through [`LoamWorld::apply`], with what it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The op.
    pub op: EditOp,
    /// The smallest box of samples it changed (`None`: nothing changed).
    pub changed: Option<SampleBox>,
    /// It removed a loose lump of terrain (not searched for lumps again).
    pub island: bool,
}

impl LoamWorld {
    /// Wraps `world`, whose workers then colour the chunk meshes they build with the
    /// terrain's look (slope, depth, material and noise, as `to_bevy_mesh` would), off the
    /// frame.
    pub fn new(mut world: World) -> Self {
        world.set_vertex_colors(Some(std::sync::Arc::new(crate::look::vertex_colors)));
        Self {
            world,
            edit_marked: None,
            applied: Vec::new(),
            replaced: Vec::new(),
        }
    }

    /// Applies `op` in `stroke` (`None`: a stroke of its own), marks the edit for the latency
    /// readout and records it for [`LoamWorld::applied`].
    ///
    /// # Errors
    /// As [`World::apply`]; nothing changes then.
    pub fn apply(&mut self, stroke: Option<u64>, op: &EditOp) -> Result<EditOutcome, EditError> {
        let out = match stroke {
            Some(s) => self.world.apply_in_stroke(s, op)?,
            None => self.world.apply(op)?,
        };
        self.mark_edit();
        self.applied.push(Applied {
            op: op.clone(),
            changed: out.changed,
            island: false,
        });
        Ok(out)
    }

    /// [`LoamWorld::apply`] for an op that removes a loose lump of terrain, in `stroke`.
    ///
    /// # Errors
    /// As [`World::apply`]; nothing changes then.
    pub fn apply_island(&mut self, stroke: u64, op: &EditOp) -> Result<EditOutcome, EditError> {
        let out = self.apply(Some(stroke), op)?;
        if let Some(a) = self.applied.last_mut() {
            a.island = true;
        }
        Ok(out)
    }

    /// Takes the bricks of `field` in place of the world's (a network client's whole field,
    /// after a reconnect, say), comparing every brick ([`World::replace_bricks`]); where
    /// the changed bricks are known, [`LoamWorld::take_patch`] costs only those. Marks the
    /// edit for the latency readout when a brick differed, and records the changed bricks'
    /// samples for [`LoamWorld::replaced`] (the terrain colliders follow them). Returns the
    /// bricks that differed, in key order.
    ///
    /// # Errors
    /// As [`World::replace_bricks`]; nothing changes then.
    pub fn take_field(
        &mut self,
        field: &loam_field::Field,
    ) -> Result<Vec<loam_field::BrickKey>, loam_world::WorldError> {
        let changed = self.world.replace_bricks(field)?;
        self.took(&changed);
        Ok(changed)
    }

    /// Takes the bricks of `patch` in place of the world's (the bricks a network client's
    /// ops changed, [`loam_field::Field::patch`]), as [`LoamWorld::take_field`] does.
    ///
    /// # Errors
    /// As [`World::take_patch`]; nothing changes then.
    pub fn take_patch(
        &mut self,
        patch: &loam_field::BrickPatch,
    ) -> Result<Vec<loam_field::BrickKey>, loam_world::WorldError> {
        let changed = self.world.take_patch(patch)?;
        self.took(&changed);
        Ok(changed)
    }

    /// Marks the edit and records the samples of bricks taken from elsewhere.
    fn took(&mut self, changed: &[loam_field::BrickKey]) {
        if !changed.is_empty() {
            self.mark_edit();
        }
        let b = loam_field::BRICK_SAMPLES;
        self.replaced.extend(changed.iter().map(|k| {
            let min = loam_field::SamplePos::new(k.x * b, k.y * b, k.z * b);
            SampleBox {
                min,
                max: loam_field::SamplePos::new(min.x + b - 1, min.y + b - 1, min.z + b - 1),
            }
        }));
    }

    /// The samples of the bricks fields taken in this frame changed
    /// ([`LoamWorld::take_field`], [`LoamWorld::take_patch`]), brick by brick (the plugin forgets them in `Last`).
    pub fn replaced(&self) -> &[SampleBox] {
        &self.replaced
    }

    /// The ops applied through [`LoamWorld::apply`] in this frame, oldest first (the plugin
    /// forgets them in `Last`).
    pub fn applied(&self) -> &[Applied] {
        &self.applied
    }

    /// Records that an edit was just applied, so the frame that shows its batch reports the
    /// edit-to-visible latency in [`crate::ChunkStats::last_edit_to_visible_ms`].
    pub fn mark_edit(&mut self) {
        self.edit_marked.get_or_insert_with(Instant::now);
    }

    /// The field raycast from `origin` along `direction` (need not be unit length), up to
    /// `reach` metres: where a tool aimed that way acts. `None` when nothing solid is in
    /// reach (or the ray is degenerate: a zero direction, a non-finite value).
    pub fn raycast(&self, origin: Vec3, direction: Vec3, reach: f64) -> Option<RayHit> {
        let origin = origin.to_array().map(f64::from);
        let direction = direction.to_array().map(f64::from);
        self.world.raycast(origin, direction, reach).ok().flatten()
    }

    /// Forgets this frame's [`LoamWorld::applied`] (the plugin, in `Last`).
    pub(crate) fn clear_applied(&mut self) {
        self.applied.clear();
        self.replaced.clear();
    }
}
