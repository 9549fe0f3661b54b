//! Terrain colliders of the server's physics world: the chunks around blocks and pieces,
//! meshed with Surface Nets from the field ([`field_collider`], a few milliseconds a chunk).
//!
//! Nothing is built where it is asked for. A chunk wanted near a block or piece is
//! *missing*, a loaded chunk a terrain op changed is *dirty*; each mark carries a stamp
//! from a counter that every mark advances. The ordering thread hands a few stale chunks at
//! a time ([`Colliders::next_builds`]) with a snapshot of the field to the ground worker
//! (`ground.rs`), which builds them while ops go on, and installs what comes back
//! ([`Colliders::install`]):
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

use loam_blocks::{BlockDelta, field_collider};
use loam_field::Field;
use loam_mesh::{CHUNK_CELLS, CHUNK_HALO};
use loam_physics::{PhysicsWorld, TerrainShape};

/// The chunk holding a world point.
pub(crate) fn chunk_of(p: [f64; 3], voxel_size: f64) -> [i32; 3] {
    let chunk_m = f64::from(CHUNK_CELLS) * voxel_size;
    p.map(|c| (c / chunk_m).floor().clamp(-1e9, 1e9) as i32)
}

/// How near a chunk's border a block or piece brings in the neighbour's collider, metres.
const NEAR_M: f64 = 8.0;

/// Which chunks have, need, or wait for a collider; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Colliders {
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

impl Colliders {
    fn stamp(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Asks for the colliders of the chunks within [`NEAR_M`] of `point` (its own and the
    /// neighbours across faces, edges and corners that near) that are not there yet, and
    /// for a rebuild of those changed while no piece was near.
    pub fn ensure(&mut self, field: &Field, point: [f64; 3]) {
        let vs = field.settings().voxel_size;
        let chunk_m = f64::from(CHUNK_CELLS) * vs;
        let c = chunk_of(point, vs);
        let span = |i: usize| {
            let local = point[i] - f64::from(c[i]) * chunk_m;
            let lo = if local < NEAR_M { -1 } else { 0 };
            let hi = if local > chunk_m - NEAR_M { 1 } else { 0 };
            lo..=hi
        };
        for dz in span(2) {
            for dy in span(1) {
                for dx in span(0) {
                    let k = [c[0] + dx, c[1] + dy, c[2] + dz];
                    if self.loaded.insert(k) {
                        let s = self.stamp();
                        self.missing.insert(k, s);
                    } else if let Some(q) = self.quiet.remove(&k) {
                        let d = self.dirty.entry(k).or_insert(q);
                        *d = (*d).max(q);
                    }
                }
            }
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
        for k in stale {
            physics.set_chunk(k, field_collider(field, k));
            self.installed.insert(k, now);
        }
        self.building.clear();
        self.refreshing.clear();
    }

    /// Up to `most` stale chunks, marked as under way, and the stamp a snapshot of the field
    /// taken now has: the missing ones no build of missing ones is under way for, if there
    /// are any (they hold falling pieces); else changed ones no build is under way for,
    /// round robin in key order (a refresh, which the ground worker paces more slowly).
    /// Empty when there is nothing to build. Install what comes back with
    /// [`Self::install`], saying which kind it was.
    pub fn next_builds(&mut self, most: usize) -> (Vec<[i32; 3]>, u64) {
        use std::ops::Bound::{Excluded, Unbounded};
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
        let after = self.last_dirty.map_or(Unbounded, Excluded);
        let dirty = self
            .dirty
            .range((after, Unbounded))
            .chain(self.dirty.iter())
            .map(|(k, _)| *k)
            .filter(|k| {
                !self.building.contains(k)
                    && !self.refreshing.contains(k)
                    && !self.missing.contains_key(k)
            });
        let mut seen = BTreeSet::new();
        for k in dirty {
            if keys.len() >= most || !seen.insert(k) {
                break;
            }
            keys.push(k);
            self.last_dirty = Some(k);
        }
        self.refreshing.extend(keys.iter().copied());
        (keys, self.clock)
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
    pub fn changed(&mut self, lo: [i32; 3], hi: [i32; 3], near: bool) {
        for k in self.meeting(lo, hi) {
            if self.missing.contains_key(&k) {
                continue;
            }
            let s = self.stamp();
            if near {
                self.quiet.remove(&k);
                self.dirty.insert(k, s);
            } else {
                self.quiet.insert(k, s);
            }
        }
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
pub(crate) fn pieces_near(physics: &PhysicsWorld, lo: [f64; 3], hi: [f64; 3]) -> bool {
    let centre = [0, 1, 2].map(|i| ((lo[i] + hi[i]) * 0.5) as f32);
    let half = [0, 1, 2].map(|i| ((hi[i] - lo[i]) * 0.5 + NEAR_M) as f32);
    // Only a non-finite box fails; a changed box is finite. Taken as near then.
    !matches!(physics.dynamic_bodies_in_box(centre, half), Ok(b) if b.is_empty())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use loam_field::{CaveSettings, FieldSettings, Generator, NoiseLayer, NoiseTerrainSettings};
    use loam_physics::PhysicsSettings;

    use super::*;

    /// The loaded chunks a change meets are those a pass over every loaded chunk finds, in
    /// the same order: small changes (looked up by column), wide ones (the pass), on chunk
    /// borders (the halo), and at the ends of the sample range.
    #[test]
    fn the_chunks_a_change_meets_are_those_a_full_pass_finds() {
        let full_pass = |c: &Colliders, lo: [i32; 3], hi: [i32; 3]| -> Vec<[i32; 3]> {
            let cells = i64::from(CHUNK_CELLS as i32);
            let halo = i64::from(CHUNK_HALO as i32);
            let from = lo.map(|v| (i64::from(v) - cells - halo - 1).div_euclid(cells) + 1);
            let to = hi.map(|v| (i64::from(v) + halo).div_euclid(cells));
            c.loaded
                .iter()
                .filter(|k| (0..3).all(|i| from[i] <= i64::from(k[i]) && i64::from(k[i]) <= to[i]))
                .copied()
                .collect()
        };
        let mut c = Colliders::default();
        let (lo, hi) = (i32::MIN / CHUNK_CELLS as i32, i32::MAX / CHUNK_CELLS as i32);
        for x in -4..=4 {
            for y in -3..=3 {
                for z in -4..=4 {
                    if (x * 7 + y * 3 + z * 5_i32).rem_euclid(3) != 0 {
                        c.loaded.insert([x, y, z]);
                    }
                }
            }
        }
        for k in [
            [lo, lo, lo],
            [hi, hi, hi],
            [lo - 1, 0, hi + 1],
            [hi + 1, lo - 1, 0],
        ] {
            c.loaded.insert(k);
        }
        let n = CHUNK_CELLS as i32;
        let mut boxes = vec![
            ([i32::MIN; 3], [i32::MAX; 3]),
            ([i32::MIN; 3], [i32::MIN; 3]),
            ([i32::MAX; 3], [i32::MAX; 3]),
            ([i32::MAX - 3, i32::MIN, 0], [i32::MAX, i32::MIN + 3, 3]),
            ([-200, -100, -200], [200, 100, 200]),
        ];
        for a in [
            -2 * n - 1,
            -n - 1,
            -n,
            -1,
            0,
            1,
            n - 2,
            n - 1,
            n,
            n + 1,
            3 * n + 2,
        ] {
            for w in [0, 1, 4, n, 2 * n + 3] {
                boxes.push(([a, a - w, -a], [a + w, a, -a + w]));
                boxes.push(([a, 0, a], [a + w, w, a + w]));
            }
        }
        let mut met = 0;
        for (lo, hi) in boxes {
            let got = c.meeting(lo, hi);
            assert_eq!(got, full_pass(&c, lo, hi), "{lo:?}..={hi:?}");
            met += got.len();
        }
        assert!(met > 500, "{met} chunks met in all");
    }

    /// Flat ground, solid below y = 16 m (mid-chunk), 1 m voxels (chunks of 32 m).
    fn flat() -> Field {
        const OFF: NoiseLayer = NoiseLayer {
            amplitude: 0.0,
            wavelength: 1.0,
            octaves: 0,
        };
        let terrain = NoiseTerrainSettings {
            base_height: 16.0,
            hills: OFF,
            ridges: OFF,
            detail: OFF,
            ..Default::default()
        };
        let caves = CaveSettings {
            enabled: false,
            ..Default::default()
        };
        let g = Generator::noise(&terrain, &caves).unwrap();
        Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
    }

    #[test]
    fn a_build_from_before_an_invalidation_is_not_put_in() {
        let field = flat();
        let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let mut c = Colliders::default();
        c.ensure(&field, [4.0, 16.0, 16.0]);
        assert!(!c.ready());
        let (keys, at) = c.next_builds(64);
        assert_eq!(keys, vec![[-1, 0, 0], [0, 0, 0]]);
        assert_eq!(
            c.next_builds(64).0,
            Vec::<[i32; 3]>::new(),
            "under way already"
        );
        let built: Vec<_> = keys
            .iter()
            .map(|&k| (k, field_collider(&field, k)))
            .collect();
        assert!(
            built.iter().all(|(_, s)| s.is_some()),
            "both hold the ground"
        );
        // A lump leaves chunk (0, 0, 0) after the snapshot: its build is dropped.
        c.invalidate([10, 10, 10], [12, 12, 12]);
        c.install(&mut physics, at, built.clone(), false);
        assert!(
            !c.ready(),
            "(0, 0, 0) waits for a build that has the change"
        );
        assert_eq!(physics.chunk_count(), 1, "the other chunk's collider is in");
        let (again, at2) = c.next_builds(64);
        assert_eq!(again, vec![[0, 0, 0]]);
        assert!(at2 > at);
        c.install(&mut physics, at2, built, false);
        assert!(c.ready() && !c.stale());
        assert_eq!(physics.chunk_count(), 2);
    }

    #[test]
    fn a_build_from_before_a_change_is_put_in_and_stays_dirty() {
        let field = flat();
        let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let mut c = Colliders::default();
        c.ensure(&field, [16.0, 16.0, 16.0]);
        let (keys, at) = c.next_builds(64);
        assert_eq!(keys, vec![[0, 0, 0]]);
        let built = vec![([0, 0, 0], field_collider(&field, [0, 0, 0]))];
        c.install(&mut physics, at, built.clone(), false);
        assert!(c.ready() && !c.stale());
        // Changed, handed out, changed again while building.
        c.changed([5, 5, 5], [6, 6, 6], true);
        let (keys, at) = c.next_builds(64);
        assert_eq!(keys, vec![[0, 0, 0]]);
        c.changed([5, 5, 5], [6, 6, 6], true);
        c.install(&mut physics, at, built.clone(), true);
        assert!(c.ready(), "a change does not take the collider away");
        assert!(c.stale(), "and the chunk is built again");
        let (keys, at) = c.next_builds(64);
        c.install(&mut physics, at, vec![(keys[0], built[0].1.clone())], true);
        assert!(!c.stale());
    }

    #[test]
    fn missing_chunks_go_out_alone_before_changed_ones() {
        let field = flat();
        let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let mut c = Colliders::default();
        c.ensure(&field, [16.0, 16.0, 16.0]);
        let (keys, at) = c.next_builds(8);
        c.install(
            &mut physics,
            at,
            keys.iter().map(|&k| (k, None)).collect(),
            false,
        );
        // (0, 0, 0) changed, then a piece comes near (1, 0, 0).
        c.changed([5, 5, 5], [6, 6, 6], true);
        c.ensure(&field, [48.0, 16.0, 16.0]);
        assert!(c.wants_missing());
        let (urgent, _) = c.next_builds(8);
        assert_eq!(
            urgent,
            vec![[1, 0, 0]],
            "the missing one, without the changed one"
        );
        assert!(!c.wants_missing(), "under way");
        let (refresh, _) = c.next_builds(8);
        assert_eq!(
            refresh,
            vec![[0, 0, 0]],
            "then the changed one, in a job of its own"
        );
    }

    #[test]
    fn a_chunk_invalidated_while_its_refresh_waits_is_built_at_once_and_kept() {
        let field = flat();
        let k = [0, 0, 0];
        let collider = |shape: Option<TerrainShape>| vec![(k, shape)];
        let shape = field_collider(&field, k);
        assert!(shape.is_some());
        for refresh_first in [false, true] {
            let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
            let mut c = Colliders::default();
            c.ensure(&field, [16.0, 16.0, 16.0]);
            let (keys, at) = c.next_builds(8);
            c.install(&mut physics, at, collider(shape.clone()), false);
            assert_eq!(keys, vec![k]);
            // Changed: a refresh is handed out (and waits its turn on the worker)…
            c.changed([5, 5, 5], [6, 6, 6], true);
            let (refresh, old) = c.next_builds(8);
            assert_eq!(refresh, vec![k]);
            // …when a lump leaves the chunk: it is wanted again at once, refresh or not.
            c.invalidate([5, 5, 5], [6, 6, 6]);
            assert!(!c.ready() && c.wants_missing());
            let (urgent, new) = c.next_builds(8);
            assert_eq!(urgent, vec![k]);
            assert!(new > old);
            // Whichever comes back first, the build from before the lump never goes in:
            // here an empty chunk marks the build from after it.
            if refresh_first {
                c.install(&mut physics, old, collider(shape.clone()), true);
                assert!(!c.ready(), "dropped: from before the lump");
                c.install(&mut physics, new, collider(None), false);
            } else {
                c.install(&mut physics, new, collider(None), false);
                assert!(c.ready());
                c.install(&mut physics, old, collider(shape.clone()), true);
            }
            assert!(c.ready() && !c.stale(), "refresh first: {refresh_first}");
            assert_eq!(physics.chunk_count(), 0, "refresh first: {refresh_first}");
        }
    }

    #[test]
    fn changes_far_from_every_piece_wait_until_one_comes_near() {
        let field = flat();
        let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let mut c = Colliders::default();
        let k = [0, 0, 0];
        let centre = [16.0, 16.0, 16.0];
        c.ensure(&field, centre);
        let (keys, at) = c.next_builds(8);
        let empty = |keys: &[[i32; 3]]| keys.iter().map(|&k| (k, None)).collect::<Vec<_>>();
        c.install(&mut physics, at, empty(&keys), false);
        let (lo, hi) = ([5, 5, 5], [6, 6, 6]);
        // No piece near the change: stale, but nothing to build…
        c.changed(lo, hi, false);
        assert!(!c.stale());
        assert!(c.next_builds(8).0.is_empty());
        // …until a piece comes near: then a refresh.
        c.ensure(&field, centre);
        assert!(c.stale() && c.ready());
        let (refresh, at) = c.next_builds(8);
        assert_eq!(refresh, vec![k]);
        c.install(&mut physics, at, empty(&refresh), true);
        assert!(!c.stale());
        // A far change before a build is in that build: nothing is left to do.
        c.changed(lo, hi, false);
        c.changed(lo, hi, true);
        let (refresh, at) = c.next_builds(8);
        c.install(&mut physics, at, empty(&refresh), true);
        c.ensure(&field, centre);
        assert!(!c.stale());
        // A far change after a build was handed out is not in it: quiet again.
        c.changed(lo, hi, true);
        let (refresh, at) = c.next_builds(8);
        c.changed(lo, hi, false);
        c.install(&mut physics, at, empty(&refresh), true);
        assert!(!c.stale());
        c.ensure(&field, centre);
        assert_eq!(c.next_builds(8).0, vec![k]);
        // A lump leaving the chunk makes it missing whatever was quiet.
        c.changed(lo, hi, false);
        c.invalidate(lo, hi);
        assert!(!c.ready() && c.wants_missing());
    }

    #[test]
    fn a_piece_is_near_a_change_within_eight_metres() {
        let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        assert!(
            !pieces_near(&physics, [0.0; 3], [1.0; 3]),
            "no piece at all"
        );
        // A 1 m box piece centred at the origin: its side at x = 0.5.
        physics
            .spawn_dynamic_cuboid([0.0; 3], [0.5; 3], 1000.0)
            .unwrap();
        let at_x = |x: f64| pieces_near(&physics, [x, -1.0, -1.0], [x + 1.0, 1.0, 1.0]);
        assert!(at_x(8.0), "7.5 m from its side");
        assert!(!at_x(9.0), "8.5 m from it");
        assert!(at_x(-9.0), "7.5 m from the other side");
    }

    #[test]
    fn changed_chunks_are_handed_out_round_robin() {
        let field = flat();
        let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let mut c = Colliders::default();
        for x in 0..3 {
            c.ensure(&field, [f64::from(x) * 32.0 + 16.0, 16.0, 16.0]);
        }
        let (keys, at) = c.next_builds(64);
        c.install(
            &mut physics,
            at,
            keys.iter().map(|&k| (k, None)).collect(),
            false,
        );
        assert!(!c.stale());
        let every = |c: &mut Colliders| c.changed([-100, 0, 0], [200, 1, 1], true);
        every(&mut c);
        let (first, at) = c.next_builds(2);
        assert_eq!(first, vec![[0, 0, 0], [1, 0, 0]]);
        c.install(
            &mut physics,
            at,
            first.iter().map(|&k| (k, None)).collect(),
            true,
        );
        // All three change again: the one left out goes first this time.
        every(&mut c);
        let (second, _) = c.next_builds(2);
        assert_eq!(second, vec![[2, 0, 0], [0, 0, 0]]);
    }
}
