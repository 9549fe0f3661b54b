//! Snapshots of a part of the field, for a worker that reads a few regions beside the
//! thread that writes.
//!
//! A clone of the field ([`Field::clone`]) shares every brick, so while it lives each op's
//! first write to a brick copies that brick (96 KiB decoded), and the first write of all
//! copies the map of bricks: a server whose ground worker held a whole-field snapshot for
//! each lump search and collider build copied most of its hot bricks a dozen times a
//! second, on its ordering thread. [`Field::snapshot_of`] shares only the bricks the reader
//! may read.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::coords::SampleBox;
use crate::field::{Field, for_bricks_in, next_revision, widen_column};

impl Field {
    /// A snapshot holding only the bricks that overlap one of `boxes` (inclusive sample
    /// boxes): every read inside a box ([`Field::fill`], [`Field::sample`], …) gives what
    /// the same read of this field gives now, bit for bit. Outside the boxes it reads the
    /// generator wherever it left a brick out, so **read it only inside the boxes**.
    ///
    /// What looks at the bricks themselves sees only those it holds ([`Field::bricks`],
    /// [`Field::brick_count`], [`Field::edited_layers`], [`Field::column_bounds`], the
    /// field hash). A box with `min > max` on an axis holds no sample and adds no brick.
    ///
    /// Writes to this field after it was taken copy only the bricks it holds, and the map of
    /// bricks is not shared at all. The snapshot has a revision of its own: no
    /// [`crate::PlannedEdit`] made on either one is valid on the other. Its own writes (none
    /// are expected) keep every brick it holds decoded.
    pub fn snapshot_of(&self, boxes: &[SampleBox]) -> Field {
        let mut bricks = BTreeMap::new();
        let mut columns = BTreeMap::new();
        for &b in boxes {
            if (0..3).any(|a| b.min.to_array()[a] > b.max.to_array()[a]) {
                continue;
            }
            for_bricks_in(b, |key, _| {
                if let Some(brick) = self.bricks.get(&key) {
                    bricks.insert(key, brick.clone());
                    widen_column(&mut columns, key);
                }
            });
        }
        Field {
            settings: self.settings,
            generator: self.generator.clone(),
            bricks: Arc::new(bricks),
            columns: Arc::new(columns),
            hot: Vec::new(),
            hot_capacity: self.hot_capacity,
            revision: next_revision(),
            differs: self.differs.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coords::SamplePos;
    use crate::{CsgMode, EditOp, FieldSettings, Generator, NoiseTerrainSettings};

    fn field() -> Field {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default()).unwrap();
        Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
    }

    fn ball(mode: CsgMode, center: [f64; 3]) -> EditOp {
        EditOp::Sphere {
            mode,
            center,
            radius: 3.0,
            material: 2,
            blend: 0.0,
        }
    }

    fn read(f: &Field, b: SampleBox) -> (Vec<u32>, Vec<u8>) {
        let dims = [0, 1, 2].map(|a| (b.max.to_array()[a] - b.min.to_array()[a] + 1) as usize);
        let n = dims.iter().product();
        let (mut v, mut m) = (vec![0.0; n], vec![0; n]);
        f.fill(b.min, dims, &mut v, &mut m);
        (v.iter().map(|x| x.to_bits()).collect(), m)
    }

    /// `b` grown by `n` samples on every side.
    fn grown(b: SampleBox, n: i32) -> SampleBox {
        SampleBox {
            min: SamplePos::new(b.min.x - n, b.min.y - n, b.min.z - n),
            max: SamplePos::new(b.max.x + n, b.max.y + n, b.max.z + n),
        }
    }

    #[test]
    fn a_part_reads_like_the_field_inside_its_boxes_and_shares_only_its_bricks() {
        let mut f = field();
        // Digs across brick borders near the origin, and one 200 m away.
        let far = 200.0;
        let mut changed = Vec::new();
        for c in [[0.5, 0.5], [31.5, -0.5], [far, far]] {
            let y = f.generator().surface_height(c[0], c[1]);
            let out = f.apply(&ball(CsgMode::Subtract, [c[0], y, c[1]])).unwrap();
            changed.push(out.changed.unwrap());
        }
        let mut near = changed[0];
        near.include(changed[1].min);
        near.include(changed[1].max);
        let near = grown(near, 2);
        let at_far = grown(changed[2], 2);
        let total = f.brick_count();
        let part = f.snapshot_of(&[near]);
        assert!(
            part.brick_count() > 0 && part.brick_count() < total,
            "{total}"
        );
        assert_eq!(read(&part, near), read(&f, near));
        // It holds exactly the bricks that overlap the box; the rest are the field's alone.
        for (k, b) in f.bricks() {
            let lo = k.min_sample().to_array();
            let overlaps = (0..3)
                .all(|a| lo[a] <= near.max.to_array()[a] && lo[a] + 31 >= near.min.to_array()[a]);
            assert_eq!(part.brick(k).is_some(), overlaps, "{k:?}");
            assert_eq!(Arc::strong_count(b), if overlaps { 2 } else { 1 }, "{k:?}");
        }
        // Writes after it was taken leave it as it was.
        let before = read(&part, near);
        for c in [[0.5, 0.5], [far, far]] {
            let y = f.generator().surface_height(c[0], c[1]);
            f.apply(&ball(CsgMode::Union, [c[0], y, c[1]])).unwrap();
        }
        assert_eq!(read(&part, near), before);
        assert_ne!(read(&f, near), before);
        // Two boxes: the bricks of both, which here are all of them.
        let both = f.snapshot_of(&[near, at_far]);
        assert_eq!(read(&both, near), read(&f, near));
        assert_eq!(read(&both, at_far), read(&f, at_far));
        assert_eq!(both.brick_count(), f.brick_count());
        assert_ne!(both.revision, f.revision);
        // An empty box (min above max on x) adds nothing, and does not panic.
        let empty = SampleBox {
            min: SamplePos::new(10, near.min.y, near.min.z),
            max: SamplePos::new(-10, near.max.y, near.max.z),
        };
        assert_eq!(f.snapshot_of(&[empty]).brick_count(), 0);
        assert_eq!(
            f.snapshot_of(&[empty, near]).brick_count(),
            part.brick_count()
        );
    }
}
