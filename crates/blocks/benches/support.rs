//! Support recomputation after removing one block from a 10 000-block structure (goal
//! ≤ 1 ms), the whole `break_block` edit with its physics bookkeeping, and a frame (physics
//! step and block update) with 200 falling pieces.
//!
//! - `wall`: a 100 × 100 wall of 1 m stone blocks standing on flat ground; the block at the
//!   centre (x 50, y 50) is removed. Nothing falls: the searches from its four neighbours
//!   go down to the ground round the hole.
//! - `house`: a hollow box of 1 m blocks, 70 × 70 outside, walls 20 high under a roof slab
//!   at y = 20 (10 420 blocks); a block of the slab's middle is removed. The searches go out
//!   across the slab to a wall and down it.
//! - `slab_on_one_pillar` (the worst case): a 100 × 100 slab held by one pillar; the
//!   pillar's top is removed and the whole slab (10 000 blocks) is found unsupported: the
//!   search must visit every block of the piece.
//!
//! - `islands`: the terrain island search after a dig ([`loam_blocks::find_islands`], default
//!   settings: the changed box grown by 12 samples). `typical_dig`: a 3 m ball dug into
//!   Loam's default noise terrain (1 m voxels, caves on), nothing cut loose; the search
//!   reads the grown box from the generator and flood-fills its solid samples.
//!   `typical_dig_read_only`: the `Field::fill` of that region alone.
//!   `merged_digs`: 60 small balls dug at random within 12 m of one spot, searched as one
//!   box (a server under load merges the digs queued near each other); `_cached`: the same
//!   through a warm [`loam_field::GeneratorBrickCache`], as a server's ground worker reads.
//! - `collider`: the terrain collider ([`loam_blocks::field_collider`]: fill, Surface Nets,
//!   parry's trimesh) of the chunk the merged digs are in (`dug_chunk`) and of one beside
//!   them that no dig reached (`unedited_chunk`), without and with (`_cached`) a warm
//!   generator cache.
//!   `pillar_cut_loose`: flat ground with a 3 × 3 pillar in a ring trench, its base dug
//!   away: one island of 36 samples found, plus its removal ops and lump op.
//!
//! Run: `cargo bench -p loam-blocks --bench support` (one group: append its name, e.g.
//! `-- islands`).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use loam_blocks::{
    BlockPos, BlockSettings, BlockSize, BlockSpec, BlockStore, BlockWorld, IslandSettings,
    MaterialTable, field_collider, field_collider_cached, find_islands, find_islands_cached,
};
use loam_field::{
    BrickKey, CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, GeneratorBrickCache,
    NoiseLayer, NoiseTerrainSettings, SampleBox,
};
use loam_physics::{PhysicsSettings, PhysicsWorld};

fn flat(p: [f64; 3]) -> f32 {
    p[1] as f32
}

fn full(x: i32, y: i32, z: i32) -> BlockPos {
    BlockPos::new(BlockSize::Full, [x, y, z]).unwrap()
}

fn store(cells: &[BlockPos]) -> BlockStore {
    let mut s = BlockStore::new();
    let (m, set) = (MaterialTable::standard(), BlockSettings::default());
    for &p in cells {
        s.place(p, &BlockSpec::of(MaterialTable::STONE), &m, &flat, &set)
            .unwrap();
    }
    s
}

fn wall() -> Vec<BlockPos> {
    (0..100)
        .flat_map(|y| (0..100).map(move |x| full(x, y, 0)))
        .collect()
}

fn house() -> Vec<BlockPos> {
    let mut cells = Vec::new();
    for y in 0..20 {
        for x in 0..70 {
            for z in 0..70 {
                if x == 0 || z == 0 || x == 69 || z == 69 {
                    cells.push(full(x, y, z));
                }
            }
        }
    }
    for x in 0..70 {
        for z in 0..70 {
            cells.push(full(x, 20, z));
        }
    }
    cells
}

fn slab_on_one_pillar() -> Vec<BlockPos> {
    let mut cells: Vec<BlockPos> = (0..3).map(|y| full(50, y, 50)).collect();
    for x in 0..100 {
        for z in 0..100 {
            cells.push(full(x, 3, z));
        }
    }
    cells
}

/// Times `unsupported` from the neighbours of `victim`, removed from `cells`' store.
fn bench_support(
    c: &mut Criterion,
    name: &str,
    cells: &[BlockPos],
    victim: BlockPos,
    falls: usize,
) {
    let mut s = store(cells);
    let seeds = s.face_neighbours(victim);
    s.remove(victim);
    let pieces = s.unsupported(seeds.clone());
    assert_eq!(pieces.iter().map(Vec::len).sum::<usize>(), falls, "{name}");
    println!(
        "{name}: {} blocks, {} seeds, {falls} fall",
        s.len(),
        seeds.len()
    );
    c.bench_function(&format!("support/{name}"), |b| {
        b.iter(|| black_box(s.unsupported(black_box(seeds.clone()))))
    });
}

fn support(c: &mut Criterion) {
    bench_support(c, "wall", &wall(), full(50, 50, 0), 0);
    bench_support(c, "house", &house(), full(35, 20, 35), 0);
    bench_support(
        c,
        "slab_on_one_pillar",
        &slab_on_one_pillar(),
        full(50, 2, 50),
        10_000,
    );
}

/// The whole edit in a block world with physics: break the wall's centre block (fixed
/// collider removed, support checked), then put it back (placement checks, fixed collider).
fn edit(c: &mut Criterion) {
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut w = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
    for p in wall() {
        w.place(&mut physics, &flat, p, BlockSpec::of(MaterialTable::STONE))
            .unwrap();
    }
    let victim = full(50, 50, 0);
    c.bench_function("edit/wall_break_and_place", |b| {
        b.iter(|| {
            let c1 = w.break_block(&mut physics, victim).unwrap();
            let c2 = w
                .place(
                    &mut physics,
                    &flat,
                    victim,
                    BlockSpec::of(MaterialTable::STONE),
                )
                .unwrap();
            black_box((c1, c2))
        })
    });
}

/// 100 bars of two blocks cut loose from their pillars (1 m above the floor) and 100 single
/// blocks dropped from 6 m onto them: 200 pieces falling, hitting, tumbling and coming to
/// rest, in a 10 × 10 grid 3 m apart over a flat floor.
fn falling_scene() -> (BlockWorld, PhysicsWorld) {
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let floor = [
        [-10.0, 0.0, -10.0],
        [40.0, 0.0, -10.0],
        [40.0, 0.0, 40.0],
        [-10.0, 0.0, 40.0],
    ];
    let shape = loam_physics::TerrainShape::build(&floor, &[0, 2, 1, 0, 3, 2], [0.0; 3])
        .unwrap()
        .unwrap();
    physics.set_chunk([0, 0, 0], Some(shape));
    let mut w = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
    let stone = BlockSpec::of(MaterialTable::STONE);
    let mut pieces = 0;
    for i in 0..10 {
        for j in 0..10 {
            let (x, z) = (i * 3, j * 3);
            for p in [full(x, 0, z), full(x, 1, z), full(x + 1, 1, z)] {
                w.place(&mut physics, &flat, p, stone).unwrap();
            }
            pieces += w
                .break_block(&mut physics, full(x, 0, z))
                .unwrap()
                .new_pieces
                .len();
            pieces += w
                .place(&mut physics, &flat, full(x + (i + j) % 2, 6, z), stone)
                .unwrap()
                .new_pieces
                .len();
        }
    }
    assert_eq!(pieces, 200);
    (w, physics)
}

/// Mean time of one 60 Hz frame (`BlockWorld::step`) over the first 3 s of the scene:
/// the fall, the impacts and the settling.
fn step(c: &mut Criterion) {
    const FRAMES: u64 = 180;
    let mut g = c.benchmark_group("step");
    g.sample_size(10);
    g.bench_function("200_falling_pieces", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            let mut scene = falling_scene();
            for i in 0..iters {
                if i > 0 && i % FRAMES == 0 {
                    scene = falling_scene();
                }
                let (w, physics) = (&mut scene.0, &mut scene.1);
                let t = std::time::Instant::now();
                black_box(w.step(physics, 1.0 / 60.0).unwrap());
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();
}

fn field_of(terrain: &NoiseTerrainSettings, caves: &CaveSettings) -> Field {
    let g = Generator::noise(terrain, caves).unwrap();
    Field::new(FieldSettings::default(), std::sync::Arc::new(g)).unwrap()
}

fn box_dig(lo: [i32; 3], hi: [i32; 3]) -> EditOp {
    EditOp::Cuboid {
        mode: CsgMode::Subtract,
        center: [0, 1, 2].map(|a| f64::from(lo[a] + hi[a]) * 0.5),
        half_extents: [0, 1, 2].map(|a| f64::from(hi[a] - lo[a]) * 0.5 + 0.5),
        rotation: [0.0, 0.0, 0.0, 1.0],
        material: 0,
        blend: 0.0,
    }
}

/// Flat ground at y = 0, a 3 × 3 pillar at the origin in a ring trench 6 deep, its base dug
/// away; returns the field and the last dig's changed box.
fn pillar_cut_loose() -> (Field, SampleBox) {
    let off = NoiseLayer {
        amplitude: 0.0,
        wavelength: 1.0,
        octaves: 0,
    };
    let terrain = NoiseTerrainSettings {
        base_height: 0.0,
        hills: off,
        ridges: off,
        detail: off,
        ..Default::default()
    };
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    let mut field = field_of(&terrain, &caves);
    for (lo, hi) in [
        ([-4, -6, 2], [4, -1, 4]),
        ([-4, -6, -4], [4, -1, -2]),
        ([2, -6, -1], [4, -1, 1]),
        ([-4, -6, -1], [-2, -1, 1]),
    ] {
        field.apply(&box_dig(lo, hi)).unwrap();
    }
    let c = field
        .apply(&box_dig([-1, -6, -1], [1, -5, 1]))
        .unwrap()
        .changed
        .unwrap();
    (field, c)
}

/// The island search after a dig (see the module docs).
fn islands(c: &mut Criterion) {
    let settings = IslandSettings::default();
    let mut field = field_of(&NoiseTerrainSettings::default(), &CaveSettings::default());
    let h = field.generator().surface_height(0.0, 0.0);
    let changed = field
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.0, h, 0.0],
            radius: 3.0,
            material: 0,
            blend: 0.0,
        })
        .unwrap()
        .changed
        .unwrap();
    let found = find_islands(&field, changed, &settings).unwrap();
    assert!(found.islands.is_empty());
    let r = found.region.unwrap();
    println!(
        "islands/typical_dig: changed {} samples, searched {}",
        changed.volume(),
        r.volume()
    );
    c.bench_function("islands/typical_dig", |b| {
        b.iter(|| black_box(find_islands(&field, black_box(changed), &settings).unwrap()))
    });
    // Its share that only reads the region (the generator's values, brick samples).
    let dims = [r.max.x - r.min.x, r.max.y - r.min.y, r.max.z - r.min.z].map(|d| d as usize + 1);
    let n = dims[0] * dims[1] * dims[2];
    let (mut values, mut materials) = (vec![0.0f32; n], vec![0u8; n]);
    c.bench_function("islands/typical_dig_read_only", |b| {
        b.iter(|| field.fill(black_box(r.min), dims, &mut values, &mut materials))
    });

    // A server under load searches many digs at once: 60 balls of 0.6–1.4 m dug at random
    // within 12 m of one spot (as `bench_local`'s clients dig), searched as one box.
    let mut field = field_of(&NoiseTerrainSettings::default(), &CaveSettings::default());
    let mut merged: Option<SampleBox> = None;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..60 {
        let (x, z) = (next() * 24.0 - 12.0, next() * 24.0 - 12.0);
        let y = field.generator().surface_height(x, z) + next() * 2.0 - 1.5;
        let op = EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [x, y, z],
            radius: 0.6 + next() * 0.8,
            material: 0,
            blend: 0.0,
        };
        if let Some(c) = field.apply(&op).unwrap().changed {
            merged = Some(merged.map_or(c, |m| m.union(c)));
        }
    }
    let merged = merged.unwrap();
    let found = find_islands(&field, merged, &settings).unwrap();
    println!(
        "islands/merged_digs: changed box {} samples, searched {}, {} islands",
        merged.volume(),
        found.region.unwrap().volume(),
        found.islands.len()
    );
    c.bench_function("islands/merged_digs", |b| {
        b.iter(|| black_box(find_islands(&field, black_box(merged), &settings).unwrap()))
    });
    // The same through a warm generator cache (a server's ground worker searches the same
    // places again and again).
    let mut cache = GeneratorBrickCache::new(64);
    find_islands_cached(&field, merged, &settings, &mut cache).unwrap();
    c.bench_function("islands/merged_digs_cached", |b| {
        b.iter(|| {
            let found = find_islands_cached(&field, black_box(merged), &settings, &mut cache);
            black_box(found.unwrap())
        })
    });
    // The terrain collider of the chunk those digs are in (Surface Nets and parry's
    // trimesh), as the ground worker rebuilds it after each batch of digs, and of a chunk
    // beside them that no dig reached (a piece fell near it: the generator's values are most
    // of its fill); each without and with a warm generator cache.
    let y = (field.generator().surface_height(0.0, 0.0) / 32.0).floor() as i32;
    let around = [-1, 0].into_iter().flat_map(|x| {
        [-1, 0]
            .into_iter()
            .flat_map(move |z| [[x, y - 1, z], [x, y, z]])
    });
    let beside = [[2, y - 1, 2], [2, y, 2], [2, y + 1, 2]]
        .into_iter()
        .filter(|k| field.brick(BrickKey::new(k[0], k[1], k[2])).is_none());
    bench_collider(c, "dug_chunk", &field, around, &mut cache);
    bench_collider(c, "unedited_chunk", &field, beside, &mut cache);

    let (field, changed) = pillar_cut_loose();
    let found = find_islands(&field, changed, &settings).unwrap();
    assert_eq!(found.islands.len(), 1);
    assert_eq!(found.islands[0].samples.len(), 36);
    println!(
        "islands/pillar_cut_loose: searched {} samples",
        found.region.unwrap().volume()
    );
    let spec = |_| BlockSpec::of(MaterialTable::STONE);
    c.bench_function("islands/pillar_cut_loose", |b| {
        b.iter(|| {
            let found = find_islands(&field, black_box(changed), &settings).unwrap();
            let island = &found.islands[0];
            let ops = island.removal_ops(field.settings()).unwrap();
            black_box((ops, island.lump(spec).unwrap()))
        })
    });
}

/// Benches `collider/{name}` and `collider/{name}_cached` on the one of `keys` whose chunk
/// has the most surface.
fn bench_collider(
    c: &mut Criterion,
    name: &str,
    field: &Field,
    keys: impl Iterator<Item = [i32; 3]>,
    cache: &mut GeneratorBrickCache,
) {
    let (key, shape) = keys
        .filter_map(|k| field_collider(field, k).map(|s| (k, s)))
        .max_by_key(|(_, s)| s.triangle_count())
        .expect("the surface crosses the chunks");
    println!(
        "collider/{name}: chunk {key:?}, {} triangles",
        shape.triangle_count()
    );
    c.bench_function(&format!("collider/{name}"), |b| {
        b.iter(|| black_box(field_collider(field, black_box(key))))
    });
    field_collider_cached(field, key, cache);
    c.bench_function(&format!("collider/{name}_cached"), |b| {
        b.iter(|| black_box(field_collider_cached(field, black_box(key), cache)))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = support, edit, step, islands
}
criterion_main!(benches);
