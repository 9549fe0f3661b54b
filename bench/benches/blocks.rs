//! Block catch-ups (loam-net): the held blocks of one client's region in a world of 80 000
//! blocks spread over 400 m × 400 m, found through the block store's 1 m cell index
//! (`loam_protocol::blocks_in`) against a pass over every block with the same brick test (what
//! it did before, kept here as the baseline).
//!
//! Run: `cargo bench -p loam-bench --bench blocks`. Results: BENCHMARKS.md.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use loam_blocks::{
    BlockPos, BlockSettings, BlockSize, BlockSpec, BlockWorld, HeldBlock, MaterialTable,
};
use loam_physics::{PhysicsSettings, PhysicsWorld};
use loam_protocol::BrickBox;
use loam_protocol::{blocks_in, brick_of_block};

/// 80 000 stone blocks on flat ground, one in every other metre cell of a 400 m × 400 m
/// square (x, z in −200..200), in rows along z.
fn world() -> BlockWorld {
    let ground = |p: [f64; 3]| p[1] as f32;
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut w = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
    let stone = BlockSpec::of(MaterialTable::STONE);
    for x in (-200..200).step_by(2) {
        for z in -200..200 {
            let at = BlockPos::new(BlockSize::Full, [x, 0, z]).unwrap();
            w.place(&mut physics, &ground, at, stone).unwrap();
        }
    }
    w
}

fn bench(c: &mut Criterion) {
    let w = world();
    let vs = 1.0;
    // A viewer's region at 1 m voxels: 3 × 3 × 3 bricks of 32 m, from −32 to 64 m on
    // each axis.
    let region = BrickBox {
        min: [-1, -1, -1],
        max: [1, 1, 1],
    };
    let found = blocks_in(&w, region, vs).held.len();
    let all: usize = w
        .store()
        .iter()
        .filter(|(p, _)| region.contains(brick_of_block(*p, vs)))
        .count();
    assert_eq!(found, all);
    println!(
        "{} blocks in the world, {found} in the region",
        w.store().len()
    );
    let mut g = c.benchmark_group("block catch-up of one region");
    g.bench_function("cell index (blocks_in)", |b| {
        b.iter(|| black_box(blocks_in(&w, region, vs)));
    });
    g.bench_function("pass over every block (before)", |b| {
        b.iter(|| {
            black_box(
                w.store()
                    .iter()
                    .filter(|(p, _)| region.contains(brick_of_block(*p, vs)))
                    .map(|(pos, block)| HeldBlock {
                        pos,
                        block: block.clone(),
                        rests_on: w.rests_on(pos).collect(),
                    })
                    .collect::<Vec<_>>(),
            )
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
