//! The field hash against its definition (docs/architecture.md, "Field hash"), computed here the
//! slow way: every brick generated again and compared, whatever the field remembers.

use crate::util::*;
use loam_field::{Brick, BrickKey, Field, FieldHash, Quant, SampleBox, SamplePos};

/// The definition, naively: BLAKE3 over the bricks in `[min, max]` that differ from the
/// generator, in `(z, y, x)` order, each as its key, its values' f32 bits (−0 as +0) and its
/// materials.
fn hash_by_definition(f: &Field, min: BrickKey, max: BrickKey) -> FieldHash {
    let mut h = blake3::Hasher::new();
    let (vs, band) = (f.settings().voxel_size, f.settings().band());
    for (key, brick) in f.bricks() {
        let inside = (min.x..=max.x).contains(&key.x)
            && (min.y..=max.y).contains(&key.y)
            && (min.z..=max.z).contains(&key.z);
        if !inside || **brick == Brick::generate(f.generator(), key, vs, band) {
            continue;
        }
        for c in [key.x, key.y, key.z] {
            h.update(&c.to_le_bytes());
        }
        for v in brick.values() {
            let bits = if v == 0.0 { 0 } else { v.to_bits() };
            h.update(&bits.to_le_bytes());
        }
        h.update(&brick.materials());
    }
    FieldHash(*h.finalize().as_bytes())
}

fn whole(f: &Field) -> FieldHash {
    let (lo, hi) = (i32::MIN, i32::MAX);
    hash_by_definition(f, BrickKey::new(lo, lo, lo), BrickKey::new(hi, hi, hi))
}

/// Writes grid index `q` and material `m` at one sample.
fn write_one(f: &mut Field, p: SamplePos, q: i16, m: u8) {
    f.write_quantized(SampleBox::point(p), &[q], &[m]).unwrap();
}

/// The generator's grid index at sample `p`.
fn generator_index(f: &Field, p: SamplePos) -> i16 {
    let (vs, band) = (f.settings().voxel_size, f.settings().band());
    Quant::new(band).index(f64::from(f.generator().sample(p, vs, band)))
}

/// A brick that differs from the generator at one sample off the lattice the hash compares
/// first (every 4th sample from local 2) is hashed; written back, it is left out again,
/// and the field's remembered answers never hide either change.
#[test]
fn one_sample_off_the_probe_lattice_is_seen_and_so_is_its_undoing() {
    let mut f = field_with(noise_generator(3), 1.0);
    let empty = f.hash();
    assert_eq!(empty, whole(&f));
    // Local (0, 1, 3) of brick (0, 0, 0): on no lattice line (2 + 4i) of any axis.
    let p = SamplePos::new(0, 1, 3);
    let g = generator_index(&f, p);
    let other = if g == 100 { 101 } else { 100 };
    write_one(&mut f, p, other, 0);
    assert_eq!(f.brick_count(), 1);
    let changed = f.hash();
    assert_ne!(changed, empty, "a changed sample between lattice points");
    assert_eq!(changed, whole(&f));
    // Only the material, off the lattice.
    write_one(&mut f, p, g, 7);
    let material = f.hash();
    assert_ne!(material, empty);
    assert_ne!(material, changed);
    assert_eq!(material, whole(&f));
    // Back to the generator's sample: the brick stays, the hash is the unedited field's.
    write_one(&mut f, p, g, 0);
    assert_eq!(f.brick_count(), 1);
    assert_eq!(f.hash(), empty);
    assert_eq!(f.hash(), whole(&f));
}

/// A brick stays hashed while any sample differs, whichever sample the field last found
/// differing is written back first.
#[test]
fn a_brick_differs_until_its_last_changed_sample_is_written_back() {
    let mut f = field_with(noise_generator(6), 1.0);
    let empty = f.hash();
    let (p, q) = (SamplePos::new(5, 9, 13), SamplePos::new(30, 0, 1));
    let (gp, gq) = (generator_index(&f, p), generator_index(&f, q));
    write_one(&mut f, p, gp.wrapping_add(3).clamp(-32767, 32767), 0);
    let one = f.hash();
    assert_ne!(one, empty);
    write_one(&mut f, q, gq, 2);
    let two = f.hash();
    assert_ne!(two, one);
    assert_eq!(two, whole(&f));
    write_one(&mut f, p, gp, 0);
    let only_q = f.hash();
    assert_ne!(only_q, empty, "q still differs");
    assert_eq!(only_q, whole(&f));
    write_one(&mut f, q, gq, 0);
    assert_eq!(f.hash(), empty);
    assert_eq!(f.brick_count(), 1);
}

/// Bricks that come in whole (a world loaded from its file, a snapshot's bricks) are
/// decided when first hashed: one equal to the generator is left out, the others hashed as
/// the field that made them hashes them.
#[test]
fn bricks_inserted_whole_are_decided_when_hashed() {
    let g = std::sync::Arc::new(noise_generator(8));
    let mut made = loam_field::Field::new(Default::default(), g.clone()).unwrap();
    let y = g.surface_height(3.0, 3.0);
    made.apply(&dig([3.0, y, 3.0], 1.2)).unwrap();
    made.apply(&build([40.0, g.surface_height(40.0, 3.0), 3.0], 0.7, 3))
        .unwrap();
    let mut loaded = loam_field::Field::new(Default::default(), g.clone()).unwrap();
    let (vs, band) = (made.settings().voxel_size, made.settings().band());
    let equal = BrickKey::new(-5, 0, 7);
    loaded.insert_bricks(
        made.bricks()
            .map(|(k, b)| (k, (**b).clone()))
            .chain([(equal, Brick::generate(&g, equal, vs, band))]),
    );
    assert_eq!(loaded.brick_count(), made.brick_count() + 1);
    assert_eq!(loaded.hash(), made.hash());
    assert_eq!(loaded.hash(), whole(&loaded));
}

/// Clones share what is remembered about bricks; an edit of one is never answered with the
/// other's bricks.
#[test]
fn clones_hash_their_own_bricks() {
    let mut a = field_with(noise_generator(4), 1.0);
    let y = a.generator().surface_height(10.0, 10.0);
    a.apply(&dig([10.0, y, 10.0], 2.0)).unwrap();
    let ha = a.hash();
    let mut b = a.clone();
    b.apply(&build([10.0, y, 10.0], 2.0, 0)).unwrap();
    let hb = b.hash();
    assert_ne!(ha, hb);
    assert_eq!(a.hash(), ha);
    assert_eq!(ha, whole(&a));
    assert_eq!(hb, whole(&b));
}

/// Region hashes equal the definition for regions around, inside, beside and across edited
/// bricks, empty ones included (a minimum above the maximum on any axis).
#[test]
fn region_hashes_follow_the_definition() {
    let mut f = field_with(noise_generator(5), 1.0);
    let mut rng = TestRng(23);
    for i in 0..40 {
        let (x, z) = (rng.range(-70.0, 70.0), rng.range(-70.0, 70.0));
        let y = f.generator().surface_height(x, z) + rng.range(-2.0, 2.0);
        let r = rng.range(0.5, 3.0);
        let op = if i % 2 == 0 {
            dig([x, y, z], r)
        } else {
            build([x, y, z], r, (i % 3) as u8)
        };
        f.apply(&op).unwrap();
    }
    assert!(f.brick_count() >= 20, "{} bricks", f.brick_count());
    let keys: Vec<BrickKey> = f.bricks().map(|(k, _)| k).collect();
    for _ in 0..60 {
        let a = keys[rng.range(0.0, keys.len() as f64) as usize];
        let b = keys[rng.range(0.0, keys.len() as f64) as usize];
        let mut grow = |v: i32| v + rng.range(-2.0, 2.0).round() as i32;
        let (min, max) = (
            BrickKey::new(grow(a.x), grow(a.y), grow(a.z)),
            BrickKey::new(grow(b.x), grow(b.y), grow(b.z)),
        );
        assert_eq!(
            f.hash_region(min, max),
            hash_by_definition(&f, min, max),
            "{min:?} ..= {max:?}"
        );
    }
    assert_eq!(f.hash(), whole(&f));
}
