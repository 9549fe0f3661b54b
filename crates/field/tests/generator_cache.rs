//! `Field::fill_cached`: the same samples as `Field::fill`, bit for bit, with the generator's
//! bricks kept for the next fill.

use std::sync::Arc;

use crate::util::*;
use loam_field::{Field, GeneratorBrickCache, SamplePos};

/// Fills the box both ways; asserts they agree bit for bit.
fn both(field: &Field, min: SamplePos, dims: [usize; 3], cache: &mut GeneratorBrickCache) {
    let n = dims.iter().product();
    let (mut a, mut am) = (vec![0.0f32; n], vec![0u8; n]);
    let (mut b, mut bm) = (vec![1.0f32; n], vec![9u8; n]);
    field.fill(min, dims, &mut a, &mut am);
    field.fill_cached(min, dims, &mut b, &mut bm, cache);
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x.to_bits() != y.to_bits());
    assert_eq!(first, None, "values differ at {first:?}");
    assert_eq!(am, bm);
}

#[test]
fn fills_through_the_cache_equal_plain_fills_and_keep_unedited_bricks() {
    let mut field = field_with(noise_generator(11), 1.0);
    let h = field.generator().surface_height(40.0, 40.0);
    let by = (h / 32.0).floor() as i32;
    field.apply(&dig([40.0, h, 40.0], 5.0)).unwrap();
    assert!(field.brick_count() > 0);
    let mut cache = GeneratorBrickCache::new(64);

    // A chunk of brick (1, by, 1) with a halo of 2: its own brick is edited (the dig), so
    // nothing is generated whole for it; the bricks above and below it are met over all
    // 32 × 32 of their columns (kept), the side neighbours over 2 × 33 or fewer (in place).
    let chunk =
        |x: i32, y: i32, z: i32| (SamplePos::new(32 * x - 2, 32 * y - 2, 32 * z - 2), [37; 3]);
    let (min, dims) = chunk(1, by, 1);
    both(&field, min, dims, &mut cache);
    let edited_here = field.brick(loam_field::BrickKey::new(1, by, 1)).is_some();
    assert!(edited_here, "the dig made a brick at (1, {by}, 1)");
    let kept = cache.len();
    assert_eq!(cache.hits_and_misses(), (0, kept as u64));
    for y in [by - 1, by + 1] {
        let k = loam_field::BrickKey::new(1, y, 1);
        assert!(field.brick(k).is_none(), "({k:?}) unedited");
    }
    assert_eq!(kept, 2, "above and below");
    // The same fill again: all from the cache.
    both(&field, min, dims, &mut cache);
    assert_eq!(cache.hits_and_misses(), (2, 2));

    // Boxes of every shape near the surface, edited or not, across brick borders.
    for (i, (m, d)) in [
        (SamplePos::new(-20, by * 32 - 20, -20), [90, 80, 85]),
        (SamplePos::new(31, by * 32 + 10, 31), [2, 40, 2]),
        (SamplePos::new(0, by * 32, 0), [32, 32, 32]),
        (SamplePos::new(-7, by * 32 - 3, 60), [70, 9, 1]),
    ]
    .into_iter()
    .enumerate()
    {
        both(&field, m, d, &mut cache);
        both(&field, m, d, &mut cache);
        assert!(cache.len() <= 64, "box {i}");
    }

    // An edit after bricks were kept: the edited brick is read from the field, not the cache.
    let hit = cache.hits_and_misses().0;
    field.apply(&dig([8.0, h, 8.0], 4.0)).unwrap();
    let (min, dims) = chunk(0, by, 0);
    both(&field, min, dims, &mut cache);
    assert!(cache.hits_and_misses().0 > hit);
}

#[test]
fn a_full_cache_evicts_the_least_recently_used_and_another_generator_empties_it() {
    let field = field_with(noise_generator(3), 1.0);
    let mut cache = GeneratorBrickCache::new(2);
    let brick = |x: i32| (SamplePos::new(32 * x, 0, 0), [32; 3]);
    for x in [0, 1, 0, 2] {
        let (m, d) = brick(x);
        both(&field, m, d, &mut cache);
    }
    // 0 generated, 1 generated, 0 found, 2 generated evicting 1 (used before 0's second).
    assert_eq!(cache.hits_and_misses(), (1, 3));
    assert_eq!(cache.len(), 2);
    let (m, d) = brick(0);
    both(&field, m, d, &mut cache);
    assert_eq!(cache.hits_and_misses(), (2, 3), "0 stayed");
    let (m, d) = brick(1);
    both(&field, m, d, &mut cache);
    assert_eq!(cache.hits_and_misses(), (2, 4), "1 was evicted");

    // A field of another generator (or voxel size) never reads the first one's values.
    let other = field_with(noise_generator(4), 1.0);
    let (m, d) = brick(1);
    both(&other, m, d, &mut cache);
    assert_eq!(cache.len(), 1, "emptied, then 1 kept for the new generator");
    let finer = Field::new(
        loam_field::FieldSettings {
            voxel_size: 0.5,
            ..Default::default()
        },
        Arc::new(noise_generator(4)),
    )
    .unwrap();
    both(&finer, m, d, &mut cache);

    // Capacity 0: a plain fill, nothing kept.
    let mut none = GeneratorBrickCache::new(0);
    both(&field, m, d, &mut none);
    assert_eq!((none.len(), none.hits_and_misses()), (0, (0, 0)));
}
