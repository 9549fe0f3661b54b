//! Terrain islands (issue 8): a dig that cuts a lump of terrain loose turns it into a
//! falling piece, removed from the field in the same batch.

use loam_blocks::{
    BlockOp, BlockSpec, FieldGround, Island, IslandSettings, MaterialTable, PieceState,
    find_islands, find_islands_cached, island_search_box,
};
use loam_field::{CsgMode, EditOp, Field, GeneratorBrickCache, SampleBox, SamplePos};
use loam_physics::{PhysicsSettings, PhysicsWorld};

use crate::util::*;

/// A hard box dig covering the samples `lo ..= hi` (1 m voxels) and half a voxel round them.
fn dig(lo: [i32; 3], hi: [i32; 3]) -> EditOp {
    EditOp::Cuboid {
        mode: CsgMode::Subtract,
        center: [0, 1, 2].map(|a| f64::from(lo[a] + hi[a]) * 0.5),
        half_extents: [0, 1, 2].map(|a| f64::from(hi[a] - lo[a]) * 0.5 + 0.5),
        rotation: [0.0, 0.0, 0.0, 1.0],
        material: 0,
        blend: 0.0,
    }
}

/// Digs a square ring trench (samples |x|, |z| ≤ 4, depth 1 to 6) round a 3 × 3 pillar
/// centred on (`cx`, `cz`); returns the last dig's changed box.
fn trench(field: &mut Field, cx: i32, cz: i32) -> SampleBox {
    let mut changed: Option<SampleBox> = None;
    for (lo, hi) in [
        ([-4, -6, 2], [4, -1, 4]),
        ([-4, -6, -4], [4, -1, -2]),
        ([2, -6, -1], [4, -1, 1]),
        ([-4, -6, -1], [-2, -1, 1]),
    ] {
        let lo = [lo[0] + cx, lo[1], lo[2] + cz];
        let hi = [hi[0] + cx, hi[1], hi[2] + cz];
        let c = field.apply(&dig(lo, hi)).unwrap().changed.unwrap();
        changed = Some(changed.map_or(c, |b| b.union(c)));
    }
    changed.unwrap()
}

/// Digs the pillar's base away (samples y −6 and −5 under it); returns the changed box.
fn cut_base(field: &mut Field, x0: i32, x1: i32, cz: i32) -> SampleBox {
    field
        .apply(&dig([x0 - 1, -6, cz - 1], [x1 + 1, -5, cz + 1]))
        .unwrap()
        .changed
        .unwrap()
}

fn pillar_samples(cx: i32, cz: i32) -> Vec<SamplePos> {
    let mut v = Vec::new();
    for z in cz - 1..=cz + 1 {
        for y in -4..=-1 {
            for x in cx - 1..=cx + 1 {
                v.push(SamplePos::new(x, y, z));
            }
        }
    }
    v.sort_by_key(|p| [p.z, p.y, p.x]);
    v
}

fn terrain_spec(m: u8) -> BlockSpec {
    BlockSpec {
        material: MaterialTable::STONE,
        paint: Some([110, 90 + m, 60]),
        ..Default::default()
    }
}

#[test]
fn a_pillar_cut_loose_falls_as_one_piece_and_leaves_the_field() {
    let mut field = flat_field(0.0);
    let settings = IslandSettings::default();
    // The trench alone leaves the pillar standing on its base: no island.
    let c = trench(&mut field, 0, 0);
    let none = find_islands(&field, c, &settings).unwrap();
    assert!(none.region.is_some() && none.islands.is_empty(), "{none:?}");

    // A block stands on the pillar's top.
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    load_chunks(&mut physics, &field);
    let mut w = block_world();
    let top = full(0, 0, 0);
    assert!(
        w.place(&mut physics, &FieldGround(&field), top, stone())
            .unwrap()
            .new_pieces
            .is_empty()
    );
    assert!(w.store().get(top).unwrap().on_ground);

    // Digging the base away cuts it loose: exactly one island, the 3 × 3 × 4 pillar.
    let changed = cut_base(&mut field, 0, 0, 0);
    let found = find_islands(&field, changed, &settings).unwrap();
    assert_eq!(found.islands.len(), 1, "{:?}", found.region);
    let island = &found.islands[0];
    assert_eq!(island.samples, pillar_samples(0, 0));
    assert_eq!(island.volume(), 36.0);
    assert_eq!(island.materials, vec![0; 36]);

    // Out of the field in one batch of box digs: its samples are air, the ground stays.
    let before = field.clone();
    let ops = island.removal_ops(field.settings()).unwrap();
    assert!(!ops.is_empty() && ops.len() <= 4, "{ops:?}");
    let mut removed: Option<SampleBox> = None;
    for op in &ops {
        if let Some(c) = field.apply(op).unwrap().changed {
            removed = Some(removed.map_or(c, |b| b.union(c)));
        }
    }
    let removed = removed.unwrap();
    for s in &island.samples {
        assert!(field.sample(*s) >= 0.5, "{s:?} = {}", field.sample(*s));
    }
    let mut still_solid = 0;
    for z in -14..=14 {
        for y in -14..=2 {
            for x in -14..=14 {
                let p = SamplePos::new(x, y, z);
                if !island.contains(p) && before.sample(p) < 0.0 {
                    assert!(field.sample(p) < 0.0, "{p:?} lost");
                    still_solid += 1;
                }
            }
        }
    }
    assert!(still_solid > 5000);
    assert!(
        find_islands(&field, removed, &settings)
            .unwrap()
            .islands
            .is_empty()
    );

    // It falls as a piece: the colliders swapped, the lump placed, the blocks told.
    load_chunks(&mut physics, &field);
    let op = island.lump(terrain_spec).unwrap();
    let BlockOp::Lump { blocks, .. } = &op else {
        panic!("{op:?}")
    };
    assert_eq!(blocks.len(), 36);
    assert_eq!(blocks[0].paint, Some([110, 90, 60]));
    let made = w.apply(&mut physics, &FieldGround(&field), &op).unwrap();
    assert_eq!(made.new_pieces.len(), 1);
    let lump = made.new_pieces[0];
    let piece = w.piece(lump).unwrap();
    // Its blocks are the samples' cells: the lowest corner is at (−1.5, −4.5, −1.5).
    assert_eq!(lowest_corner(&w, lump), -4.5);
    assert_eq!(
        piece.to_world(piece.local_min(piece.blocks[0].pos)),
        [-1.5, -4.5, -1.5]
    );
    let region = loam_blocks::WorldBox::from_samples(removed, 1.0);
    let lost = w
        .terrain_changed(&mut physics, &FieldGround(&field), region)
        .unwrap();
    assert_eq!(lost.new_pieces.len(), 1, "the block on top falls too");
    assert_eq!(piece_cells(&w, lost.new_pieces[0]), vec![top]);

    settle(&mut w, &mut physics, 900);
    // It dropped into the 2 m hole under it and rests on its floor (samples y −7 solid:
    // the surface half a voxel above them).
    let y = lowest_corner(&w, lump);
    assert!((y - -6.5).abs() < 0.1, "{y}");
    assert!(matches!(
        w.piece(lump).unwrap().state,
        PieceState::Rubble { .. }
    ));
}

#[test]
fn a_dig_that_leaves_everything_connected_finds_no_island() {
    let mut field = flat_field(0.0);
    let settings = IslandSettings::default();
    for op in [
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [3.0, 0.0, 2.0],
            radius: 3.0,
            material: 0,
            blend: 0.0,
        },
        // A tunnel under the surface: the roof still holds on either side.
        dig([-6, -5, -1], [6, -3, 1]),
        dig([10, -6, 10], [12, -1, 12]),
    ] {
        let c = field.apply(&op).unwrap().changed.unwrap();
        let found = find_islands(&field, c, &settings).unwrap();
        assert!(found.islands.is_empty(), "{op:?}: {:?}", found.islands);
    }
    // A change too large to search within the cap finds nothing, and says so.
    let tiny = IslandSettings {
        margin: 4,
        max_samples: 1000,
    };
    let c = trench(&mut field, 30, 0);
    let c2 = cut_base(&mut field, 30, 30, 0);
    let skipped = find_islands(&field, c.union(c2), &tiny).unwrap();
    assert_eq!(skipped.region, None);
    assert!(skipped.islands.is_empty());
    // With room it is found.
    assert_eq!(
        find_islands(&field, c2, &settings).unwrap().islands.len(),
        1
    );
}

/// A hard box fill of the samples `lo ..= hi` (1 m voxels), material 0.
fn fill(lo: [i32; 3], hi: [i32; 3]) -> EditOp {
    match dig(lo, hi) {
        EditOp::Cuboid {
            center,
            half_extents,
            rotation,
            ..
        } => EditOp::Cuboid {
            mode: CsgMode::Union,
            center,
            half_extents,
            rotation,
            material: 0,
            blend: 0.0,
        },
        _ => unreachable!(),
    }
}

/// An island found on a snapshot (as a server searches beside the ordering of ops) and
/// checked again after later edits: what is loose in the field as it is then, no more.
#[test]
fn an_island_found_on_a_snapshot_is_checked_on_the_field_as_it_is_now() {
    let settings = IslandSettings::default();
    let mut field = flat_field(0.0);
    trench(&mut field, 0, 0);
    let changed = cut_base(&mut field, 0, 0, 0);
    let found = find_islands(&field.clone(), changed, &settings).unwrap();
    assert_eq!(found.islands.len(), 1);
    let island = &found.islands[0];
    let after = |op: EditOp| {
        let mut f = field.clone();
        f.apply(&op).unwrap();
        let now = island.recheck(&f, &settings).unwrap();
        (f, now)
    };

    // Nothing changed near it: the same island.
    assert_eq!(island.recheck(&field, &settings).unwrap(), found.islands);
    let (_, now) = after(dig([8, -3, 8], [10, -1, 10]));
    assert_eq!(now, found.islands);

    // A dig took its top layer: the rest falls, as a search after that dig finds it.
    let (f, now) = after(dig([-1, -1, -1], [1, -1, 1]));
    let rest: Vec<SamplePos> = pillar_samples(0, 0)
        .into_iter()
        .filter(|p| p.y != -1)
        .collect();
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].samples, rest);
    assert_eq!(find_islands(&f, changed, &settings).unwrap().islands, now);

    // A dig through its middle split it: both parts fall (the upper one is beyond a sample
    // of the first dig, so its search would not see it; the split's own search would).
    let (_, now) = after(dig([-1, -3, -1], [1, -3, 1]));
    let sizes: Vec<usize> = now.iter().map(|i| i.samples.len()).collect();
    assert_eq!(sizes, vec![9, 18], "y = −4 below, y = −2 ..= −1 above");

    // A build on its top, clear of the ground, made it larger: the whole falls.
    let (f, now) = after(fill([-1, 0, -1], [1, 1, 1]));
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].samples.len(), 36 + 18);
    assert!(now[0].contains(SamplePos::new(0, 1, 0)));
    assert!(now[0].samples.iter().all(|p| f.sample(*p) < 0.0));

    // A build joined it to the ground beyond the trench again: nothing falls.
    let (f, now) = after(fill([2, -2, 0], [4, -1, 0]));
    assert!(now.is_empty(), "{now:?}");
    assert!(
        find_islands(&f, changed, &settings)
            .unwrap()
            .islands
            .is_empty()
    );

    // Dug away whole: nothing.
    let (_, now) = after(dig([-1, -4, -1], [1, -1, 1]));
    assert!(now.is_empty());
}

fn two_pillars() -> (Field, SampleBox) {
    let mut field = flat_field(0.0);
    trench(&mut field, -5, 0);
    trench(&mut field, 5, 3);
    // One dig under both bases, 5 m apart along x, 3 apart along z.
    let c = field
        .apply(&dig([-6, -6, -1], [6, -5, 4]))
        .unwrap()
        .changed
        .unwrap();
    (field, c)
}

#[test]
fn islands_are_deterministic_and_ordered() {
    let run = || {
        let (field, c) = two_pillars();
        let found = find_islands(&field, c, &IslandSettings::default()).unwrap();
        let ops: Vec<(Vec<EditOp>, BlockOp)> = found
            .islands
            .iter()
            .map(|i| {
                (
                    i.removal_ops(field.settings()).unwrap(),
                    i.lump(terrain_spec).unwrap(),
                )
            })
            .collect();
        (found, ops)
    };
    let (a, ops_a) = run();
    let (b, ops_b) = run();
    assert_eq!(a, b);
    assert_eq!(ops_a, ops_b);
    // Ordered by their first sample in (z, y, x) order: the pillar at z = 0 first.
    let islands: &[Island] = &a.islands;
    assert_eq!(islands.len(), 2);
    assert_eq!(islands[0].samples, pillar_samples(-5, 0));
    assert_eq!(islands[1].samples, pillar_samples(5, 3));
    // On a copy of the field the search gives the same again.
    let (field, c) = two_pillars();
    let snapshot = field.clone();
    assert_eq!(
        find_islands(&snapshot, c, &IslandSettings::default()).unwrap(),
        a
    );
    // On a snapshot of only the bricks the search reads (a server's ground worker), with
    // an edit far away that it leaves out: the same again.
    let (mut field, c) = two_pillars();
    field.apply(&dig([300, -6, 300], [302, -5, 302])).unwrap();
    let settings = IslandSettings::default();
    let part = field.snapshot_of(&[island_search_box(c, &settings).unwrap()]);
    assert!(part.brick_count() < field.brick_count());
    assert_eq!(find_islands(&part, c, &settings).unwrap(), a);
    // And through a cache of the generator's bricks, cold and then warm.
    let mut cache = GeneratorBrickCache::new(16);
    for _ in 0..2 {
        let found = find_islands_cached(&field, c, &IslandSettings::default(), &mut cache);
        assert_eq!(found.unwrap(), a);
    }
    let (hits, misses) = cache.hits_and_misses();
    assert!(misses > 0 && hits >= misses, "{hits} hits, {misses} misses");
}

#[test]
fn bad_lumps_are_refused_and_change_nothing() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    let cell = |c: [i32; 3]| loam_blocks::LumpBlock {
        cell: c,
        material: MaterialTable::STONE,
        paint: None,
    };
    let size = loam_blocks::BlockSize::Full;
    for blocks in [
        vec![],
        vec![cell([1, 5, 0]), cell([0, 5, 0])],
        vec![cell([0, 5, 0]), cell([0, 5, 0])],
        vec![loam_blocks::LumpBlock {
            material: loam_blocks::MaterialId(99),
            ..cell([0, 5, 0])
        }],
        vec![cell([1 << 29, 0, 0])],
    ] {
        let op = BlockOp::Lump { size, blocks };
        assert!(w.apply(&mut physics, &flat, &op).is_err(), "{op:?}");
    }
    assert_eq!(physics.body_count(), 0);
    assert_eq!(w.pieces().count(), 0);
    assert_eq!(w.save(), block_world().save());
}

/// The plain definition, for checking the search: every 26-connected solid component of the
/// region that stays off its border and has a sample within one of the change.
fn reference(field: &Field, changed: SampleBox, region: SampleBox) -> Vec<Vec<SamplePos>> {
    let (m, x) = (region.min.to_array(), region.max.to_array());
    let d = [0, 1, 2].map(|a| (x[a] - m[a] + 1) as usize);
    let n = d[0] * d[1] * d[2];
    let (mut v, mut mat) = (vec![0.0f32; n], vec![0u8; n]);
    field.fill(region.min, d, &mut v, &mut mat);
    let at = |i: usize| [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])];
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for s in 0..n {
        if seen[s] || v[s] >= 0.0 {
            continue;
        }
        seen[s] = true;
        let (mut comp, mut todo) = (vec![s], vec![s]);
        while let Some(i) = todo.pop() {
            let p = at(i).map(|c| c as i64);
            for k in 0..27i64 {
                let q = [p[0] + k % 3 - 1, p[1] + k / 3 % 3 - 1, p[2] + k / 9 - 1];
                if (0..3).any(|a| q[a] < 0 || q[a] >= d[a] as i64) {
                    continue;
                }
                let j = q[0] as usize + d[0] * (q[1] as usize + d[1] * q[2] as usize);
                if !seen[j] && v[j] < 0.0 {
                    seen[j] = true;
                    comp.push(j);
                    todo.push(j);
                }
            }
        }
        let world = |i: usize| {
            let p = at(i);
            SamplePos::new(m[0] + p[0] as i32, m[1] + p[1] as i32, m[2] + p[2] as i32)
        };
        let on_border = comp
            .iter()
            .any(|&i| (0..3).any(|a| at(i)[a] == 0 || at(i)[a] + 1 == d[a]));
        let grown = SampleBox {
            min: SamplePos::new(changed.min.x - 1, changed.min.y - 1, changed.min.z - 1),
            max: SamplePos::new(changed.max.x + 1, changed.max.y + 1, changed.max.z + 1),
        };
        if !on_border && comp.iter().any(|&i| grown.contains(world(i))) {
            let mut c: Vec<SamplePos> = comp.into_iter().map(world).collect();
            c.sort_by_key(|p| [p.z, p.y, p.x]);
            out.push(c);
        }
    }
    out.sort_by_key(|c| [c[0].z, c[0].y, c[0].x]);
    out
}

/// Random digs into flat ground: a cavity under a two-sample roof, then random cuts through
/// the roof (lines across it, and small boxes), each followed by the search with a small
/// margin: the search finds exactly the reference's islands.
#[test]
fn the_search_finds_what_a_plain_flood_fill_finds() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: i32| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as i32
    };
    let settings = IslandSettings {
        margin: 3,
        ..Default::default()
    };
    let (mut digs, mut found) = (0, 0);
    for _ in 0..16 {
        let mut field = flat_field(0.0);
        let mut ops = vec![dig([-6, -6, -6], [6, -3, 6])];
        for _ in 0..8 {
            let at = next(11) - 5;
            ops.push(match next(3) {
                0 => dig([-7, -2, at], [7, -1, at]),
                1 => dig([at, -2, -7], [at, -1, 7]),
                _ => {
                    let lo = [next(12) - 6, -next(3) - 1, next(12) - 6];
                    dig(lo, [lo[0] + next(3), lo[1], lo[2] + next(3)])
                }
            });
        }
        for op in ops {
            let Some(c) = field.apply(&op).unwrap().changed else {
                continue;
            };
            let search = find_islands(&field, c, &settings).unwrap();
            let got: Vec<Vec<SamplePos>> =
                search.islands.iter().map(|i| i.samples.clone()).collect();
            assert_eq!(got, reference(&field, c, search.region.unwrap()));
            digs += 1;
            found += got.len();
        }
    }
    println!("{digs} digs, {found} islands");
    assert!(found >= 5, "the random digs cut {found} islands loose");
}
