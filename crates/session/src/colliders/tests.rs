//! Tests of [`super::TerrainColliders`].

use std::sync::Arc;

use loam_field::{CaveSettings, FieldSettings, Generator, NoiseLayer, NoiseTerrainSettings};
use loam_physics::PhysicsSettings;

use super::*;

/// The loaded chunks a change meets are those a pass over every loaded chunk finds, in
/// the same order: small changes (looked up by column), wide ones (the pass), on chunk
/// borders (the halo), and at the ends of the sample range.
#[test]
fn the_chunks_a_change_meets_are_those_a_full_pass_finds() {
    let full_pass = |c: &TerrainColliders, lo: [i32; 3], hi: [i32; 3]| -> Vec<[i32; 3]> {
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
    let mut c = TerrainColliders::default();
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
    let mut c = TerrainColliders::default();
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
    let mut c = TerrainColliders::default();
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
    let mut c = TerrainColliders::default();
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
        let mut c = TerrainColliders::default();
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
    let mut c = TerrainColliders::default();
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
    let mut c = TerrainColliders::default();
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
    let every = |c: &mut TerrainColliders| c.changed([-100, 0, 0], [200, 1, 1], true);
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

/// For a starved worker the ordering thread builds the chunks itself, a few at a time:
/// missing ones first, then ones changed near a piece; ones changed far from every piece
/// wait; and the worker's build, from an older snapshot, is dropped when it comes at last.
#[test]
fn a_starved_workers_chunks_are_built_here_and_its_late_build_is_dropped() {
    let field = flat();
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut c = TerrainColliders::default();
    c.ensure(&field, [16.0, 16.0, 16.0]);
    c.ensure(&field, [48.0, 16.0, 16.0]);
    let (keys, at) = c.next_builds(64);
    assert_eq!(keys, vec![[0, 0, 0], [1, 0, 0]]);
    // The worker holds both and gets no CPU; a piece wants a third chunk meanwhile.
    c.ensure(&field, [80.0, 16.0, 16.0]);
    assert_eq!(c.rescue(&mut physics, &field, 1), 1);
    assert!(physics.has_chunk([0, 0, 0]) && !physics.has_chunk([1, 0, 0]));
    assert!(!c.ready(), "(1, 0, 0) is still missing");
    assert_eq!(c.rescue(&mut physics, &field, 2), 2);
    assert!(c.ready() && !c.stale());
    assert_eq!(physics.chunk_count(), 3);
    // Changed near a piece in (0, 0, 0), far from every piece in (1, 0, 0).
    c.changed([5, 5, 5], [6, 6, 6], true);
    c.changed([45, 5, 5], [46, 6, 6], false);
    assert_eq!(
        c.rescue(&mut physics, &field, 8),
        1,
        "only the one near a piece"
    );
    assert!(!c.stale());
    assert_eq!(c.rescue(&mut physics, &field, 8), 0, "nothing left for it");
    // The worker's build of the first two comes back (empty shapes, which would take the
    // colliders out): from a snapshot older than the rescue's, so dropped.
    c.install(
        &mut physics,
        at,
        keys.iter().map(|&k| (k, None)).collect(),
        false,
    );
    assert_eq!(physics.chunk_count(), 3);
    assert!(c.ready());
}

/// A rescue right after the worker's snapshot, with nothing changed between (the same
/// clock): the worker's build still loses to it.
#[test]
fn a_rescue_wins_over_a_build_of_the_same_moment() {
    let field = flat();
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut c = TerrainColliders::default();
    c.ensure(&field, [16.0, 16.0, 16.0]);
    let (keys, at) = c.next_builds(64);
    assert_eq!(c.rescue(&mut physics, &field, 4), 1);
    c.install(&mut physics, at, vec![(keys[0], None)], false);
    assert!(
        physics.has_chunk([0, 0, 0]),
        "the worker's (empty) build was dropped"
    );
    assert!(c.ready() && !c.stale());
}

/// A change to a missing chunk while its build is under way is not lost: the build (from
/// before the change) goes in, and the chunk stays stale for a rebuild with the change.
#[test]
fn a_change_to_a_missing_chunk_under_build_keeps_it_stale() {
    let field = flat();
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut c = TerrainColliders::default();
    c.ensure(&field, [16.0, 16.0, 16.0]);
    let (keys, at) = c.next_builds(64);
    c.changed([5, 5, 5], [6, 6, 6], true);
    let built = vec![(keys[0], field_collider(&field, keys[0]))];
    c.install(&mut physics, at, built, false);
    assert!(
        c.ready(),
        "the build from before the change serves meanwhile"
    );
    assert!(c.stale(), "and the chunk is built again");
    let (again, at2) = c.next_builds(64);
    assert_eq!(again, vec![[0, 0, 0]]);
    c.install(
        &mut physics,
        at2,
        vec![(again[0], field_collider(&field, again[0]))],
        true,
    );
    assert!(!c.stale());
}

/// The rescue takes changed chunks in turn: one changed again before every call does not
/// keep another waiting.
#[test]
fn the_rescue_takes_changed_chunks_in_turn() {
    let field = flat();
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut c = TerrainColliders::default();
    c.ensure(&field, [16.0, 16.0, 16.0]);
    c.ensure(&field, [48.0, 16.0, 16.0]);
    assert_eq!(c.rescue(&mut physics, &field, 2), 2);
    c.changed([45, 5, 5], [46, 6, 6], true);
    let mut built = Vec::new();
    for _ in 0..2 {
        // (0, 0, 0) is changed again before every call.
        c.changed([5, 5, 5], [6, 6, 6], true);
        let before = c.installed.clone();
        assert_eq!(c.rescue(&mut physics, &field, 1), 1);
        built.extend(
            c.installed
                .iter()
                .filter(|(k, t)| before.get(*k) != Some(*t))
                .map(|(k, _)| *k),
        );
    }
    assert_eq!(built, vec![[0, 0, 0], [1, 0, 0]]);
}
