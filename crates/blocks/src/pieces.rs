//! Pieces: groups of blocks that left the grid together and move as one rigid body,
//! falling and then resting as rubble.
//!
//! A piece keeps its blocks' grid positions from when it detached; its frame is the
//! lowest corner of its first block then (`origin`), so a block's place in the frame is
//! `pos.min_corner() + offset − origin`, exact in f32. `offset` is zero for blocks that
//! left the grid and half a block down for a terrain lump (its blocks are centred on field
//! samples). The body's pose moves that frame.

use std::collections::BTreeSet;

use loam_physics::{Part, PartShape, Pose};
use serde::{Deserialize, Serialize};

use crate::block::{Block, BlockId, BlockPos};
use crate::error::BlockError;
use crate::ground::Ground;
use crate::material::MaterialTable;
use crate::raycast::ray_box;

/// A piece's identity, given out in order (deterministic), never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PieceId(pub u64);

/// Whether a piece is moving or resting.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PieceState {
    /// Moving (falling, tumbling, pushed).
    Falling,
    /// Came to rest at `rest` (its body fell asleep) and has not moved away since: rubble.
    /// Blocks placed on it are held by it.
    Rubble {
        /// The pose it came to rest at.
        rest: SavedPose,
    },
}

/// A pose as saved: the frame's position (world metres) and rotation (unit quaternion
/// `[x, y, z, w]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedPose {
    /// Position, world metres.
    pub position: [f32; 3],
    /// Rotation `[x, y, z, w]`.
    pub rotation: [f32; 4],
}

impl From<Pose> for SavedPose {
    fn from(p: Pose) -> Self {
        Self {
            position: p.position,
            rotation: p.rotation,
        }
    }
}

impl From<SavedPose> for Pose {
    fn from(p: SavedPose) -> Self {
        Self {
            position: p.position,
            rotation: p.rotation,
        }
    }
}

/// A block of a piece: where it was on the grid, and the block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieceBlock {
    /// Its grid position when the piece detached (its place in the piece's frame).
    pub pos: BlockPos,
    /// The block.
    pub block: Block,
}

/// A falling piece or rubble.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Piece {
    /// Its id.
    pub id: PieceId,
    /// World position of the frame's origin when it detached, metres.
    pub origin: [f64; 3],
    /// Where its blocks' grid lay against the world's when it detached: block `pos` was at
    /// `pos.min_corner() + offset`, metres. Zero (the default) for blocks that left the
    /// grid; `−edge / 2` on each axis for a terrain lump.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: [f64; 3],
    /// Its blocks, ascending by position.
    pub blocks: Vec<PieceBlock>,
    /// The frame's pose now (as of the last update).
    pub pose: SavedPose,
    /// Linear velocity of the body's centre of mass, m/s (as of the last update).
    #[serde(default)]
    pub velocity: [f32; 3],
    /// Angular velocity, rad/s about each world axis (as of the last update).
    #[serde(default)]
    pub spin: [f32; 3],
    /// Moving or resting.
    pub state: PieceState,
}

impl Piece {
    /// Whether its frame (origin, offset), pose, motion and resting pose are all finite: a
    /// piece from a file or an authority's delta is checked before it is taken in.
    pub(crate) fn is_finite(&self) -> bool {
        let rest = match self.state {
            PieceState::Rubble { rest } => Some(rest),
            PieceState::Falling => None,
        };
        self.origin
            .iter()
            .chain(&self.offset)
            .all(|c| c.is_finite())
            && self
                .pose
                .position
                .iter()
                .chain(&self.pose.rotation)
                .all(|c| c.is_finite())
            && self
                .velocity
                .iter()
                .chain(&self.spin)
                .all(|c| c.is_finite())
            && rest.is_none_or(|r| r.position.iter().chain(&r.rotation).all(|c| c.is_finite()))
    }

    /// A block's place in the frame: its lowest corner, metres.
    pub fn local_min(&self, pos: BlockPos) -> [f64; 3] {
        let m = pos.min_corner();
        [0, 1, 2].map(|i| m[i] + self.offset[i] - self.origin[i])
    }

    /// The block `id` of this piece, with its index.
    pub fn block(&self, id: BlockId) -> Option<(usize, &PieceBlock)> {
        self.blocks
            .iter()
            .enumerate()
            .find(|(_, b)| b.block.id == id)
    }

    /// The world position of a point given in the frame (metres), at the current pose.
    pub fn to_world(&self, local: [f64; 3]) -> [f64; 3] {
        let r = self.pose.rotation.map(f64::from);
        let v = rotate(r, local);
        [0, 1, 2].map(|i| v[i] + f64::from(self.pose.position[i]))
    }

    /// The world box around its blocks at the current pose, metres (lowest and highest
    /// corner).
    pub fn world_bounds(&self) -> ([f64; 3], [f64; 3]) {
        let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
        for b in &self.blocks {
            let m = self.local_min(b.pos);
            let e = b.pos.size.edge();
            for corner in 0..8 {
                let c = [0, 1, 2].map(|i| m[i] + if corner >> i & 1 == 1 { e } else { 0.0 });
                let w = self.to_world(c);
                for i in 0..3 {
                    lo[i] = lo[i].min(w[i]);
                    hi[i] = hi[i].max(w[i]);
                }
            }
        }
        (lo, hi)
    }

    /// Whether every one of its blocks has its centre at least `edges` of its edge inside
    /// the ground (value < −edges · edge) at the current pose.
    pub(crate) fn inside(&self, ground: &dyn Ground, edges: f64) -> bool {
        self.blocks.iter().all(|b| {
            let e = b.pos.size.edge();
            let c = self.local_min(b.pos).map(|m| m + e / 2.0);
            f64::from(ground.value(self.to_world(c))) < -edges * e
        })
    }

    /// Whether the pose is farther than `distance` metres or `degrees` from `rest`
    /// (libm's `cos`, so every machine decides alike).
    pub(crate) fn moved_from(&self, rest: SavedPose, distance: f64, degrees: f64) -> bool {
        let d2: f64 = (0..3)
            .map(|i| {
                let d = f64::from(self.pose.position[i]) - f64::from(rest.position[i]);
                d * d
            })
            .sum();
        // The turn between two unit quaternions is 2·acos(|q₁ · q₂|).
        let dot: f64 = (0..4)
            .map(|i| f64::from(self.pose.rotation[i]) * f64::from(rest.rotation[i]))
            .sum();
        let cos_half = libm::cos(degrees.to_radians() / 2.0);
        d2 > distance * distance || dot.abs() < cos_half
    }

    /// The physics parts of its blocks (part `i` is block `i`): boxes, or the convex hulls
    /// of chiselled shapes, with the material's density.
    pub(crate) fn parts(&self, materials: &MaterialTable) -> Result<Vec<Part>, BlockError> {
        self.blocks
            .iter()
            .map(|b| block_part(b.pos, &b.block, self.local_min(b.pos), materials))
            .collect()
    }

    /// The ray's nearest entry into one of its blocks (boxes, at the current pose): the
    /// block's index and the distance.
    pub(crate) fn raycast(
        &self,
        origin: [f64; 3],
        dir: [f64; 3],
        max: f64,
    ) -> Option<(usize, f64)> {
        let inv = conjugate(self.pose.rotation.map(f64::from));
        let rel = [0, 1, 2].map(|i| origin[i] - f64::from(self.pose.position[i]));
        let (o, d) = (rotate(inv, rel), rotate(inv, dir));
        let mut best: Option<(usize, f64)> = None;
        for (i, b) in self.blocks.iter().enumerate() {
            let lo = self.local_min(b.pos);
            let e = b.pos.size.edge();
            let hi = lo.map(|c| c + e);
            if let Some((t, _)) = ray_box(o, d, lo, hi, max)
                && best.is_none_or(|(_, bt)| t < bt)
            {
                best = Some((i, t));
            }
        }
        best
    }

    /// Its blocks grouped by face contact, each group ascending, groups by their first.
    pub(crate) fn components(blocks: &[PieceBlock]) -> Vec<Vec<usize>> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for start in 0..blocks.len() {
            if !seen.insert(start) {
                continue;
            }
            let mut group = vec![start];
            let mut stack = vec![start];
            while let Some(i) = stack.pop() {
                let qi = blocks[i].pos.qbox();
                for (j, b) in blocks.iter().enumerate() {
                    if !seen.contains(&j) && qi.face_contact(&b.pos.qbox()) {
                        seen.insert(j);
                        group.push(j);
                        stack.push(j);
                    }
                }
            }
            group.sort();
            out.push(group);
        }
        out
    }
}

fn is_zero(v: &[f64; 3]) -> bool {
    *v == [0.0; 3]
}

/// The physics part of one block whose lowest corner is at `local_min` in a frame.
pub(crate) fn block_part(
    pos: BlockPos,
    block: &Block,
    local_min: [f64; 3],
    materials: &MaterialTable,
) -> Result<Part, BlockError> {
    let density = materials.require(block.material)?.density;
    let e = pos.size.edge();
    let half = e / 2.0;
    let offset = local_min.map(|c| (c + half) as f32);
    let shape = if block.shape.is_sharp() {
        PartShape::Cuboid {
            half_extents: [half as f32; 3],
        }
    } else {
        PartShape::ConvexHull {
            points: block
                .shape
                .hull(e)
                .into_iter()
                .map(|p| p.map(|c| (c - half) as f32))
                .collect(),
        }
    };
    Ok(Part {
        offset,
        shape,
        density,
    })
}

/// `q · v · q⁻¹` for a unit quaternion `[x, y, z, w]`.
pub(crate) fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let u = [q[0], q[1], q[2]];
    let w = q[3];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let t = cross(u, v).map(|c| 2.0 * c);
    let ut = cross(u, t);
    [0, 1, 2].map(|i| v[i] + w * t[i] + ut[i])
}

fn conjugate(q: [f64; 4]) -> [f64; 4] {
    [-q[0], -q[1], -q[2], q[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_helpers() {
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let quarter_turn_y = [0.0, s, 0.0, s];
        let v = rotate(quarter_turn_y, [1.0, 0.0, 0.0]);
        assert!((v[0]).abs() < 1e-12 && (v[2] + 1.0).abs() < 1e-12, "{v:?}");
        let back = rotate(conjugate(quarter_turn_y), v);
        assert!((back[0] - 1.0).abs() < 1e-12);
    }
}
