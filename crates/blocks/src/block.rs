//! Blocks on the grid: sizes, positions, faces and the block record.
//!
//! ```text
//!   a 1 m cell  ┌───────┬───┬─┬─┐   blocks of 1 m, 0.5 m and 0.25 m, each aligned to its
//!               │       │   ├─┼─┤   own size: a block of size s at cell c spans
//!               │  1 m  ├───┼─┴─┤   [c·s, c·s + s) on each axis. Every block lies inside
//!               │       │   │   │   exactly one 1 m cell.
//!               └───────┴───┴───┘
//! ```
//!
//! Inside the crate, positions are integer quarter metres ([`QBox`]), so overlap and face
//! contact are exact.

use serde::{Deserialize, Serialize};

use crate::chisel::ChiselShape;
use crate::error::BlockError;
use crate::material::MaterialId;

/// Largest |coordinate| of a block corner, in quarter metres (2²⁸ · 0.25 m ≈ 67 000 km):
/// keeps every sum of coordinates in range.
pub const MAX_QUARTERS: i32 = 1 << 28;

/// The three block sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSize {
    /// 1 m.
    Full,
    /// 0.5 m.
    Half,
    /// 0.25 m.
    Quarter,
}

impl BlockSize {
    /// Every size, largest first.
    pub const ALL: [BlockSize; 3] = [BlockSize::Full, BlockSize::Half, BlockSize::Quarter];

    /// Edge length, metres.
    pub fn edge(self) -> f64 {
        f64::from(self.quarters()) * 0.25
    }

    /// Edge length in quarter metres (4, 2 or 1).
    pub fn quarters(self) -> i32 {
        match self {
            BlockSize::Full => 4,
            BlockSize::Half => 2,
            BlockSize::Quarter => 1,
        }
    }

    /// Volume, m³.
    pub fn volume(self) -> f64 {
        let e = self.edge();
        e * e * e
    }
}

/// Where a block is: its size and its cell on that size's grid (its lowest corner is
/// `cell · edge` metres). Also the block's name in ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockPos {
    /// The block's size.
    pub size: BlockSize,
    /// Its cell on the grid of its size.
    pub cell: [i32; 3],
}

impl BlockPos {
    /// A position, checked to lie within ±[`MAX_QUARTERS`] quarter metres.
    ///
    /// # Errors
    /// [`BlockError::OutOfRange`].
    pub fn new(size: BlockSize, cell: [i32; 3]) -> Result<Self, BlockError> {
        let p = Self { size, cell };
        p.check()?;
        Ok(p)
    }

    /// The block of `size` whose cell holds `point` (world metres; a point on a cell
    /// border belongs to the cell above it).
    ///
    /// # Errors
    /// [`BlockError::NonFinite`] or [`BlockError::OutOfRange`].
    pub fn containing(size: BlockSize, point: [f64; 3]) -> Result<Self, BlockError> {
        if !point.iter().all(|c| c.is_finite()) {
            return Err(BlockError::NonFinite { what: "point" });
        }
        let e = size.edge();
        let limit = f64::from(MAX_QUARTERS / size.quarters());
        let mut cell = [0; 3];
        for i in 0..3 {
            let c = (point[i] / e).floor();
            if c.abs() >= limit {
                return Err(BlockError::OutOfRange { point });
            }
            cell[i] = c as i32;
        }
        Self::new(size, cell)
    }

    pub(crate) fn check(&self) -> Result<(), BlockError> {
        let q = self.size.quarters();
        let limit = MAX_QUARTERS / q;
        if self.cell.iter().all(|c| c.abs() < limit) {
            Ok(())
        } else {
            Err(BlockError::OutOfRange {
                point: self.min_corner(),
            })
        }
    }

    /// Lowest corner, world metres.
    pub fn min_corner(&self) -> [f64; 3] {
        let e = self.size.edge();
        self.cell.map(|c| f64::from(c) * e)
    }

    /// Highest corner, world metres.
    pub fn max_corner(&self) -> [f64; 3] {
        let e = self.size.edge();
        self.cell.map(|c| f64::from(c) * e + e)
    }

    /// Centre, world metres.
    pub fn centre(&self) -> [f64; 3] {
        let e = self.size.edge();
        self.cell.map(|c| (f64::from(c) + 0.5) * e)
    }

    /// The box it fills, in quarter metres.
    pub(crate) fn qbox(&self) -> QBox {
        let q = self.size.quarters();
        let min = self.cell.map(|c| c * q);
        QBox {
            min,
            max: min.map(|m| m + q),
        }
    }

    /// The 1 m cell it lies in.
    pub(crate) fn coarse(&self) -> [i32; 3] {
        self.qbox().min.map(|m| m.div_euclid(4))
    }

    /// The neighbouring position of the same size across `face`.
    ///
    /// # Errors
    /// [`BlockError::OutOfRange`] at the edge of the range.
    pub fn step(&self, face: Face) -> Result<BlockPos, BlockError> {
        let n = face.normal();
        BlockPos::new(
            self.size,
            [0, 1, 2].map(|i| self.cell[i].saturating_add(n[i])),
        )
    }
}

/// A block's identity, kept when it leaves the grid as part of a piece. Given out in
/// placement order by the store (deterministic), never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BlockId(pub u64);

/// A block: what it is made of, its chisel shape and its state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// Its identity.
    pub id: BlockId,
    /// Its material.
    pub material: MaterialId,
    /// Its chisel shape.
    #[serde(default)]
    pub shape: ChiselShape,
    /// A painted colour (sRGB) drawn instead of the material's, if any.
    #[serde(default)]
    pub paint: Option<[u8; 3]>,
    /// Impact energy taken so far, joules (see `crate::damage`).
    #[serde(default)]
    pub damage: f32,
    /// The terrain is solid just under its bottom face (kept by the store).
    #[serde(default)]
    pub on_ground: bool,
    /// Resting rubble lies just under its bottom face (kept by [`crate::BlockWorld`]).
    #[serde(default)]
    pub on_rubble: bool,
}

/// What to place: material, shape and paint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSpec {
    /// The material.
    pub material: MaterialId,
    /// The chisel shape (sharp by default).
    #[serde(default)]
    pub shape: ChiselShape,
    /// A painted colour (sRGB), if any.
    #[serde(default)]
    pub paint: Option<[u8; 3]>,
}

impl BlockSpec {
    /// A sharp, unpainted block of `material`.
    pub fn of(material: MaterialId) -> Self {
        Self {
            material,
            ..Default::default()
        }
    }
}

/// A face of a block (or a direction along an axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Face {
    /// −x.
    NegX,
    /// +x.
    PosX,
    /// −y (the bottom).
    NegY,
    /// +y (the top).
    PosY,
    /// −z.
    NegZ,
    /// +z.
    PosZ,
}

impl Face {
    /// All six, in axis order.
    pub const ALL: [Face; 6] = [
        Face::NegX,
        Face::PosX,
        Face::NegY,
        Face::PosY,
        Face::NegZ,
        Face::PosZ,
    ];

    /// The axis it faces along: 0 = x, 1 = y, 2 = z.
    pub fn axis(self) -> usize {
        self as usize / 2
    }

    /// Whether it faces the positive direction.
    pub fn positive(self) -> bool {
        self as usize % 2 == 1
    }

    /// The outward unit normal.
    pub fn normal(self) -> [i32; 3] {
        let mut n = [0; 3];
        n[self.axis()] = if self.positive() { 1 } else { -1 };
        n
    }

    /// The opposite face.
    pub fn opposite(self) -> Face {
        Face::ALL[(self as usize) ^ 1]
    }

    /// The face along `axis` (0–2) on the `positive` side.
    pub fn from_axis(axis: usize, positive: bool) -> Face {
        Face::ALL[(axis % 3) * 2 + usize::from(positive)]
    }
}

/// A box in integer quarter metres, `min` inclusive, `max` exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QBox {
    pub min: [i32; 3],
    pub max: [i32; 3],
}

impl QBox {
    /// Whether the two boxes share volume.
    pub fn overlaps(&self, o: &QBox) -> bool {
        (0..3).all(|i| self.min[i] < o.max[i] && o.min[i] < self.max[i])
    }

    /// Whether the two boxes touch through a face with positive area (not only along an
    /// edge or at a corner) without sharing volume.
    pub fn face_contact(&self, o: &QBox) -> bool {
        let mut touching = 0;
        for i in 0..3 {
            if self.max[i] == o.min[i] || o.max[i] == self.min[i] {
                touching += 1;
            } else if !(self.min[i] < o.max[i] && o.min[i] < self.max[i]) {
                return false;
            }
        }
        touching == 1
    }
}

/// An axis-aligned box in world metres (a region that changed).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorldBox {
    /// Lowest corner, metres.
    pub min: [f64; 3],
    /// Highest corner, metres.
    pub max: [f64; 3],
}

impl WorldBox {
    /// The region of a field edit's changed samples (`EditOutcome::changed`), grown by one
    /// voxel: values between samples are interpolated, so a changed sample changes the
    /// ground up to a voxel around it.
    pub fn from_samples(changed: loam_field::SampleBox, voxel_size: f64) -> Self {
        let lo = changed.min.to_array();
        let hi = changed.max.to_array();
        Self {
            min: lo.map(|s| (f64::from(s) - 1.0) * voxel_size),
            max: hi.map(|s| (f64::from(s) + 1.0) * voxel_size),
        }
    }

    /// Whether `p` lies in the box (borders included).
    pub fn contains(&self, p: [f64; 3]) -> bool {
        (0..3).all(|i| self.min[i] <= p[i] && p[i] <= self.max[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_boxes() {
        let p = BlockPos::new(BlockSize::Half, [-1, 2, 3]).unwrap();
        assert_eq!(p.min_corner(), [-0.5, 1.0, 1.5]);
        assert_eq!(p.max_corner(), [0.0, 1.5, 2.0]);
        assert_eq!(p.coarse(), [-1, 1, 1]);
        assert_eq!(
            BlockPos::containing(BlockSize::Quarter, [-0.01, 0.25, 0.3]).unwrap(),
            BlockPos::new(BlockSize::Quarter, [-1, 1, 1]).unwrap()
        );
        assert!(BlockPos::new(BlockSize::Full, [1 << 27, 0, 0]).is_err());
        assert!(BlockPos::containing(BlockSize::Full, [f64::NAN, 0.0, 0.0]).is_err());
        assert!(BlockPos::containing(BlockSize::Full, [1e12, 0.0, 0.0]).is_err());
    }

    #[test]
    fn contacts_need_a_face() {
        let a = BlockPos::new(BlockSize::Full, [0, 0, 0]).unwrap().qbox();
        let right = BlockPos::new(BlockSize::Quarter, [4, 3, 3]).unwrap().qbox();
        let edge = BlockPos::new(BlockSize::Full, [1, 1, 0]).unwrap().qbox();
        let inside = BlockPos::new(BlockSize::Half, [1, 1, 1]).unwrap().qbox();
        assert!(a.face_contact(&right));
        assert!(!a.face_contact(&edge));
        assert!(!a.overlaps(&edge));
        assert!(a.overlaps(&inside));
        assert!(!a.face_contact(&inside));
    }

    #[test]
    fn faces() {
        for f in Face::ALL {
            assert_eq!(f.opposite().opposite(), f);
            assert_eq!(Face::from_axis(f.axis(), f.positive()), f);
        }
        assert_eq!(Face::PosY.normal(), [0, 1, 0]);
    }
}
