//! Making the bricks an op creates: copied from the generator cache, or generated on scoped
//! threads.

use std::sync::Arc;

use loam_field::{Brick, BrickKey, Generator};

use crate::cache::GeneratorCache;

/// The bricks an op creates: copied from the generator cache where it holds them, the rest
/// generated on scoped threads.
pub(crate) fn make_bricks(
    cache: &GeneratorCache,
    generator: &Generator,
    keys: &[BrickKey],
    vs: f64,
    band: f64,
    threads: usize,
) -> Vec<Brick> {
    let mut made: Vec<Option<Brick>> = keys
        .iter()
        .map(|&k| {
            let b = Brick::from_generator_values(&cache.get(k)?, band)?;
            debug_assert!(b == Brick::generate(generator, k, vs, band));
            Some(b)
        })
        .collect();
    let missing: Vec<BrickKey> = keys
        .iter()
        .zip(&made)
        .filter(|(_, m)| m.is_none())
        .map(|(k, _)| *k)
        .collect();
    let mut fresh = generate_bricks(generator, &missing, vs, band, threads).into_iter();
    for m in made.iter_mut().filter(|m| m.is_none()) {
        *m = fresh.next();
    }
    made.into_iter()
        .map(|m| m.expect("every brick made"))
        .collect()
}

/// Generates the bricks an op creates, spread over up to `threads` scoped threads (the
/// workers' share of the machine; they are idle or about to rebuild this op's chunks).
fn generate_bricks(
    generator: &Generator,
    keys: &[BrickKey],
    voxel_size: f64,
    band: f64,
    threads: usize,
) -> Vec<Brick> {
    let one = |k: &BrickKey| Brick::generate(generator, *k, voxel_size, band);
    if keys.len() < 2 || threads < 2 {
        return keys.iter().map(one).collect();
    }
    let per = keys.len().div_ceil(threads.min(keys.len()));
    std::thread::scope(|s| {
        let handles: Vec<_> = keys
            .chunks(per)
            .map(|part| s.spawn(move || part.iter().map(one).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("brick generation does not panic"))
            .collect()
    })
}

/// Most bricks the world's field keeps decoded between two updates (96 KiB each: 24 MiB); an
/// update packs all but the field's default working set.
pub(crate) const HOT_BRICKS_BETWEEN_UPDATES: usize = 256;

/// Packs hot bricks on up to `threads` scoped threads (the workers' share of the machine),
/// in order.
pub(crate) fn pack_bricks(bricks: &[Arc<Brick>], threads: usize) -> Vec<Brick> {
    if bricks.len() < 2 || threads < 2 {
        return bricks.iter().map(|b| b.packed()).collect();
    }
    let per = bricks.len().div_ceil(threads.min(bricks.len()));
    std::thread::scope(|s| {
        let handles: Vec<_> = bricks
            .chunks(per)
            .map(|part| s.spawn(move || part.iter().map(|b| b.packed()).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("packing does not panic"))
            .collect()
    })
}
