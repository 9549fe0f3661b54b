//! Terrain colliders of a physics world holding blocks: the chunks around blocks and pieces,
//! meshed with Surface Nets from the field ([`field_collider`], a few milliseconds a chunk).
//! The same colliders, from the same samples, wherever the world is simulated (the server,
//! a replay, a load), so pieces fall alike everywhere.
//!
//! Nothing is built where it is asked for. A chunk wanted near a block or piece is
//! *missing*, a loaded chunk a terrain op changed is *dirty*; each mark carries a stamp
//! from a counter that every mark advances. Either the owner builds stale chunks on its
//! own thread ([`TerrainColliders::refresh`], as a load does), or it hands a few at a time
//! ([`TerrainColliders::next_builds`]) with a snapshot of the field to a worker (the
//! server's ground worker), which builds them while ops go on, and installs what comes back
//! ([`TerrainColliders::install`]):
//!
//! ```text
//!  mark (stamp s) ──▶ missing / dirty ──▶ next_builds: keys + stamp t, snapshot at t
//!                     (missing ones alone if any; else dirty ones: a refresh)
//!  built at t ──▶ install: missing since s > t (a lump left after the snapshot) → dropped,
//!                          asked again;  a collider from a snapshot after t in already →
//!                          dropped;  otherwise set, and clean unless marked after t
//! ```
//!
//! A collider built before a change is still put in (it is nearer the field than the one it
//! replaces) and the chunk stays dirty; only a chunk *invalidated* after the snapshot (a lump
//! about to fall from where the terrain was, which must not start inside the old ground)
//! waits for a build that includes it. Pieces step only while no chunk is missing, so a
//! missing chunk is built at once even while a refresh of it waits its turn on the worker;
//! whichever of the two comes back last, the collider in the end is the later snapshot's.

use std::collections::{BTreeMap, BTreeSet};

use loam_blocks::{BlockDelta, BlockWorld, PieceState, field_collider};
use loam_field::Field;
use loam_field::coords::world_to_chunk;
use loam_mesh::{CHUNK_CELLS, CHUNK_HALO};
use loam_physics::{PhysicsWorld, TerrainShape};

/// How near a chunk's border a block or piece brings in the neighbour's collider, metres.
pub const NEAR_M: f64 = 8.0;

/// Which chunks have, need, or wait for a collider; see the module docs.
#[derive(Debug, Default)]
pub struct TerrainColliders {
    loaded: BTreeSet<[i32; 3]>,
    /// Chunks without a collider that pieces need (the stamp of their last mark).
    missing: BTreeMap<[i32; 3], u64>,
    /// Chunks whose collider a terrain op made stale near a piece (the stamp of their last
    /// change).
    dirty: BTreeMap<[i32; 3], u64>,
    /// Chunks a terrain op changed farther than [`NEAR_M`] from every piece (the stamp of
    /// their last such change): stale where no piece can touch the difference, so not
    /// rebuilt until a piece comes near ([`Self::ensure`]) or a change near one.
    quiet: BTreeMap<[i32; 3], u64>,
    /// Chunks a build of missing ones is under way for…
    building: BTreeSet<[i32; 3]>,
    /// …and chunks a refresh is under way for (a chunk may be in both: one that became
    /// missing while its refresh waited is built again at once).
    refreshing: BTreeSet<[i32; 3]>,
    /// The stamp of the snapshot each chunk's collider in the physics world was built from:
    /// an older build that comes in later is dropped.
    installed: BTreeMap<[i32; 3], u64>,
    /// The last stamp given.
    clock: u64,
    /// The changed chunk last handed out: the next is the one after it, so chunks changed
    /// again every tick cannot keep the others waiting.
    last_dirty: Option<[i32; 3]>,
}

impl TerrainColliders {
    fn stamp(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The chunks within [`NEAR_M`] of `point` (metres, at voxel size `voxel_size`): its own
    /// and the neighbours across faces, edges and corners that near. None for a point off
    /// the sample range (not finite, or past `i32` samples): it has no chunk.
    pub fn chunks_near(voxel_size: f64, point: [f64; 3]) -> Vec<[i32; 3]> {
        let chunk_m = f64::from(CHUNK_CELLS) * voxel_size;
        // The one conversion from world to chunk.
        let Ok(k) = world_to_chunk(point, voxel_size) else {
            return Vec::new();
        };
        let c = [k.x, k.y, k.z];
        let span = |i: usize| {
            let local = point[i] - f64::from(c[i]) * chunk_m;
            let lo = if local < NEAR_M { -1 } else { 0 };
            let hi = if local > chunk_m - NEAR_M { 1 } else { 0 };
            lo..=hi
        };
        let mut out = Vec::with_capacity(8);
        for dz in span(2) {
            for dy in span(1) {
                for dx in span(0) {
                    out.push([c[0] + dx, c[1] + dy, c[2] + dz]);
                }
            }
        }
        out
    }

    /// Asks for the colliders of the chunks within [`NEAR_M`] of `point`
    /// ([`Self::chunks_near`]) that are not there yet, and for a rebuild of those changed
    /// while no piece was near.
    pub fn ensure(&mut self, field: &Field, point: [f64; 3]) {
        for k in Self::chunks_near(field.settings().voxel_size, point) {
            self.want(k);
        }
    }

    /// Asks for chunk `key`'s collider if it is not there yet, and for a rebuild if it
    /// changed while no piece was near ([`Self::ensure`] for one chunk).
    pub fn want(&mut self, key: [i32; 3]) {
        if self.loaded.insert(key) {
            let s = self.stamp();
            self.missing.insert(key, s);
        } else if let Some(q) = self.quiet.remove(&key) {
            let d = self.dirty.entry(key).or_insert(q);
            *d = (*d).max(q);
        }
    }

    /// Whether chunk `key` is wanted and has its collider (perhaps a stale one, about to be
    /// rebuilt: it is nearer the field than none).
    pub fn is_built(&self, key: [i32; 3]) -> bool {
        self.loaded.contains(&key) && !self.missing.contains_key(&key)
    }

    /// Whether chunk `key` is wanted and has no collider yet (or one from before a lump
    /// left it).
    pub fn is_missing(&self, key: [i32; 3]) -> bool {
        self.missing.contains_key(&key)
    }

    /// Wanted chunks, with or without their collider.
    pub fn wanted(&self) -> usize {
        self.loaded.len()
    }

    /// Forgets the chunks `keep` refuses, taking their colliders out of `physics` (the
    /// bodies on them wake): for an owner whose bodies move far (a walking character), so
    /// colliders do not pile up behind it. A build of one under way is dropped when it
    /// comes in.
    pub fn release(&mut self, physics: &mut PhysicsWorld, keep: impl Fn([i32; 3]) -> bool) {
        let gone: Vec<[i32; 3]> = self.loaded.iter().copied().filter(|&k| !keep(k)).collect();
        for k in gone {
            self.loaded.remove(&k);
            self.missing.remove(&k);
            self.dirty.remove(&k);
            self.quiet.remove(&k);
            self.installed.remove(&k);
            physics.remove_chunk(k);
        }
    }

    /// Asks for the colliders around every falling piece of `world`.
    pub fn ensure_falling(&mut self, field: &Field, world: &BlockWorld) {
        let falling: Vec<[f64; 3]> = world
            .pieces()
            .filter(|p| matches!(p.state, PieceState::Falling))
            .map(|p| p.pose.position.map(f64::from))
            .collect();
        for p in falling {
            self.ensure(field, p);
        }
    }

    /// Asks for the colliders around every held block and piece a delta names.
    pub fn ensure_delta(&mut self, field: &Field, d: &BlockDelta) {
        for h in &d.held {
            self.ensure(field, h.pos.min_corner());
        }
        for p in &d.pieces {
            self.ensure(field, p.pose.position.map(f64::from));
        }
    }

    /// Whether a chunk waits to be built or rebuilt.
    pub fn stale(&self) -> bool {
        !self.dirty.is_empty() || !self.missing.is_empty()
    }

    /// Whether a wanted chunk without a collider (or with one from before a lump left it)
    /// has no build of missing ones under way (a refresh under way does not count: it may
    /// wait its turn).
    pub fn wants_missing(&self) -> bool {
        self.missing.keys().any(|k| !self.building.contains(k))
    }

    /// Whether a wanted chunk has no collider yet (pieces must not step then).
    pub fn ready(&self) -> bool {
        self.missing.is_empty()
    }

    /// Builds every missing and changed chunk here, from `field` (the bodies touching them
    /// wake). For a replay, where every step must see the field as it is.
    pub fn refresh(&mut self, physics: &mut PhysicsWorld, field: &Field) {
        let now = self.clock;
        let stale: BTreeSet<[i32; 3]> = std::mem::take(&mut self.missing)
            .into_keys()
            .chain(std::mem::take(&mut self.dirty).into_keys())
            .chain(std::mem::take(&mut self.quiet).into_keys())
            .collect();
        self.build_here(physics, field, stale, now);
        self.building.clear();
        self.refreshing.clear();
    }

    /// Builds up to `most` chunks here from `field` (the bodies touching them wake), for a
    /// ground worker starved of CPU (`ground.rs`, `RESCUE_AFTER`): missing ones first, then
    /// those changed near a piece, round robin like [`Self::next_builds`] (chunks changed
    /// every tick cannot keep the others waiting), whether or not a build of them is under
    /// way: the build here takes a stamp of its own, so the worker's, from an older
    /// snapshot, is dropped when it comes. Chunks changed far from every piece wait for the
    /// worker. Returns how many it built.
    pub fn rescue(&mut self, physics: &mut PhysicsWorld, field: &Field, most: usize) -> usize {
        let mut keys: Vec<[i32; 3]> = self.missing.keys().take(most).copied().collect();
        self.dirty_in_turn(&mut keys, most, |_, _| true);
        if keys.is_empty() {
            return 0;
        }
        let now = self.stamp();
        for k in &keys {
            self.missing.remove(k);
            self.dirty.remove(k);
            self.quiet.remove(k);
        }
        let n = keys.len();
        self.build_here(physics, field, keys, now);
        n
    }

    /// Builds `keys`' colliders from `field` on this thread and puts them in, as of stamp
    /// `at`.
    fn build_here(
        &mut self,
        physics: &mut PhysicsWorld,
        field: &Field,
        keys: impl IntoIterator<Item = [i32; 3]>,
        at: u64,
    ) {
        for k in keys {
            physics.set_chunk(k, field_collider(field, k));
            self.installed.insert(k, at);
        }
    }

    /// Up to `most` stale chunks, marked as under way, and the stamp a snapshot of the field
    /// taken now has: the missing ones no build of missing ones is under way for, if there
    /// are any (they hold falling pieces); else changed ones no build is under way for,
    /// round robin in key order (a refresh, which the ground worker paces more slowly).
    /// Empty when there is nothing to build. Install what comes back with
    /// [`Self::install`], saying which kind it was.
    pub fn next_builds(&mut self, most: usize) -> (Vec<[i32; 3]>, u64) {
        let mut keys: Vec<[i32; 3]> = self
            .missing
            .keys()
            .filter(|k| !self.building.contains(*k))
            .take(most)
            .copied()
            .collect();
        if !keys.is_empty() {
            self.building.extend(keys.iter().copied());
            return (keys, self.clock);
        }
        self.dirty_in_turn(&mut keys, most, |c, k| {
            !c.building.contains(k) && !c.refreshing.contains(k)
        });
        self.refreshing.extend(keys.iter().copied());
        (keys, self.clock)
    }

    /// Adds changed chunks (not missing ones) that `take` accepts to `keys` until it holds
    /// `most`: round robin in key order, from the one after the last taken, so chunks
    /// changed again every tick cannot keep the others waiting.
    fn dirty_in_turn(
        &mut self,
        keys: &mut Vec<[i32; 3]>,
        most: usize,
        take: impl Fn(&Self, &[i32; 3]) -> bool,
    ) {
        use std::ops::Bound::{Excluded, Unbounded};
        let after = self.last_dirty.map_or(Unbounded, Excluded);
        let mut taken = None;
        let mut seen = BTreeSet::new();
        for k in self
            .dirty
            .range((after, Unbounded))
            .chain(self.dirty.iter())
            .map(|(k, _)| *k)
            .filter(|k| !self.missing.contains_key(k) && take(self, k))
        {
            if keys.len() >= most || !seen.insert(k) {
                break;
            }
            keys.push(k);
            taken = Some(k);
        }
        if taken.is_some() {
            self.last_dirty = taken;
        }
    }

    /// Puts in the colliders built from a snapshot of stamp `at` ([`Self::next_builds`];
    /// `refresh`: which kind of job it was): a chunk invalidated after it is left missing
    /// (and asked for again), one whose collider is from a later snapshot already keeps it;
    /// any other is set (the bodies touching it wake) and clean unless changed after it.
    pub fn install(
        &mut self,
        physics: &mut PhysicsWorld,
        at: u64,
        built: Vec<([i32; 3], Option<TerrainShape>)>,
        refresh: bool,
    ) {
        for (k, shape) in built {
            if refresh {
                self.refreshing.remove(&k);
            } else {
                self.building.remove(&k);
            }
            if !self.loaded.contains(&k) || self.installed.get(&k).is_some_and(|&t| t > at) {
                continue;
            }
            if let Some(&s) = self.missing.get(&k) {
                if s > at {
                    continue;
                }
                self.missing.remove(&k);
            }
            if self.dirty.get(&k).is_some_and(|&s| s <= at) {
                self.dirty.remove(&k);
            }
            if self.quiet.get(&k).is_some_and(|&s| s <= at) {
                self.quiet.remove(&k);
            }
            self.installed.insert(k, at);
            physics.set_chunk(k, shape);
        }
    }

    /// Forgets the builds under way (their worker is gone): the chunks are handed out again.
    pub fn abandon_builds(&mut self) {
        self.building.clear();
        self.refreshing.clear();
    }

    /// The loaded chunks whose samples (halo included) meet the samples `lo..=hi`, in
    /// ascending order.
    ///
    /// Called for every terrain op, so it looks up the few chunk columns a change can meet
    /// (a range of the ordered set per `(x, y)`) rather than passing over every loaded
    /// chunk: chunks stay loaded while pieces lie near them, and rubble accumulates, so on a
    /// long-running server the pass grew without bound (1.6 % of the server's profile after
    /// ~50 s of the load benchmark, and rising). A change wider than there are loaded
    /// chunks is still answered by the pass.
    fn meeting(&self, lo: [i32; 3], hi: [i32; 3]) -> Vec<[i32; 3]> {
        // In i64: a change at the end of the i32 sample range is a valid edit.
        let cells = i64::from(CHUNK_CELLS as i32);
        let halo = i64::from(CHUNK_HALO as i32);
        let bound = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        let from = lo.map(|v| bound((i64::from(v) - cells - halo - 1).div_euclid(cells) + 1));
        let to = hi.map(|v| bound((i64::from(v) + halo).div_euclid(cells)));
        if (0..3).any(|i| from[i] > to[i]) {
            return Vec::new();
        }
        let columns = (0..2)
            .map(|i| (i64::from(to[i]) - i64::from(from[i]) + 1) as u128)
            .product::<u128>();
        if columns > self.loaded.len() as u128 {
            return self
                .loaded
                .iter()
                .filter(|k| (0..3).all(|i| from[i] <= k[i] && k[i] <= to[i]))
                .copied()
                .collect();
        }
        let mut out = Vec::new();
        for x in from[0]..=to[0] {
            for y in from[1]..=to[1] {
                out.extend(self.loaded.range([x, y, from[2]]..=[x, y, to[2]]).copied());
            }
        }
        out
    }

    /// Marks the loaded chunks that the changed samples `lo..=hi` meet for a rebuild, if
    /// a piece is within [`NEAR_M`] of the change (`near`, [`pieces_near`]); else as
    /// quiet, rebuilt when a piece comes near.
    ///
    /// A missing chunk is marked too: a build of it from a snapshot before the change (under
    /// way now) is put in, and the chunk stays stale (it was skipped, and such a build was
    /// taken as clean: the change was lost to the collider until the next one).
    pub fn changed(&mut self, lo: [i32; 3], hi: [i32; 3], near: bool) {
        for k in self.meeting(lo, hi) {
            let s = self.stamp();
            if near {
                self.quiet.remove(&k);
                self.dirty.insert(k, s);
            } else {
                self.quiet.insert(k, s);
            }
        }
    }

    /// [`Self::changed`] for the samples `changed` of a field of voxel size `voxel_size`,
    /// near if a piece's body in `physics` is within [`NEAR_M`] of them ([`pieces_near`]).
    pub fn changed_near(
        &mut self,
        physics: &PhysicsWorld,
        changed: loam_field::SampleBox,
        voxel_size: f64,
    ) {
        let region = loam_blocks::WorldBox::from_samples(changed, voxel_size);
        let near = pieces_near(physics, region.min, region.max);
        self.changed(changed.min.to_array(), changed.max.to_array(), near);
    }

    /// Marks the loaded chunks that the changed samples `lo..=hi` meet as missing: no
    /// piece steps until they are rebuilt from a field that has the change (a lump is about
    /// to fall from where the terrain was, and must not start inside the old collider).
    pub fn invalidate(&mut self, lo: [i32; 3], hi: [i32; 3]) {
        for k in self.meeting(lo, hi) {
            self.dirty.remove(&k);
            self.quiet.remove(&k);
            let s = self.stamp();
            self.missing.insert(k, s);
        }
    }
}

/// Whether a piece's body (falling or rubble) is within [`NEAR_M`] of the world box
/// `lo..=hi` (metres): a broad-phase query of the physics world.
pub fn pieces_near(physics: &PhysicsWorld, lo: [f64; 3], hi: [f64; 3]) -> bool {
    let centre = [0, 1, 2].map(|i| ((lo[i] + hi[i]) * 0.5) as f32);
    let half = [0, 1, 2].map(|i| ((hi[i] - lo[i]) * 0.5 + NEAR_M) as f32);
    // Only a non-finite box fails; a changed box is finite. Taken as near then.
    !matches!(physics.dynamic_bodies_in_box(centre, half), Ok(b) if b.is_empty())
}

#[cfg(test)]
mod tests;
