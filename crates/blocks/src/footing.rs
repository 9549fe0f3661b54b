//! Footing: how a block placed on the terrain would sit, and the terrain op that levels a pad
//! for it where the grid gives it no resting level.
//!
//! Blocks lie on a grid (1 m, 0.5 m or 0.25 m cells) while the terrain is smooth, so on a
//! slope most grid levels leave a block either floating (it falls: no ground within
//! [`BlockSettings::ground_probe`] under its bottom face) or buried deeper than
//! [`BlockSettings::max_ground_depth`] (placing is refused). On a 10° slope the window in
//! which a 1 m block both touches and is not buried is about 0.13 m of every metre, so a block
//! aimed at a hillside usually has no good level in its column. [`seat`] finds one where it
//! exists; otherwise [`levelling_op`] gives the flatten op that cuts and fills a level pad
//! under the block first, as a builder levels a site.

use loam_field::{EditOp, Falloff};

use crate::block::BlockPos;
use crate::ground::{BlockSettings, Ground, check_not_buried, touches_ground};

/// How a block at a position would sit on the terrain (blocks and pieces not considered).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Footing {
    /// The ground is solid just under its bottom face and it is not buried: it would be held
    /// by the ground.
    OnGround,
    /// No ground under its bottom face: alone, it would fall.
    Clear,
    /// A test point lies `depth` metres inside the ground, deeper than the tolerance: placing
    /// it is refused.
    Buried {
        /// Metres.
        depth: f64,
    },
}

/// How a block at `pos` would sit on `ground` under the rules of `settings` (the same tests
/// as placing and support use).
pub fn footing(ground: &dyn Ground, pos: BlockPos, settings: &BlockSettings) -> Footing {
    if let Err(crate::BlockError::InsideGround { depth, .. }) =
        check_not_buried(ground, pos, settings.max_ground_depth)
    {
        return Footing::Buried { depth };
    }
    if touches_ground(ground, pos, settings.ground_probe) {
        Footing::OnGround
    } else {
        Footing::Clear
    }
}

/// How many grid levels below and above `pos` [`seat`] looks.
pub const SEAT_LEVELS: i32 = 2;

/// The grid level of `pos`'s column at which a block rests on the ground
/// ([`Footing::OnGround`]), nearest to `pos` first (`pos` itself, one below, one above, two
/// below, two above); `None` if no level within [`SEAT_LEVELS`] does.
pub fn seat(ground: &dyn Ground, pos: BlockPos, settings: &BlockSettings) -> Option<BlockPos> {
    let mut order = std::iter::once(0).chain((1..=SEAT_LEVELS).flat_map(|d| [-d, d]));
    order.find_map(|dy| {
        let c = pos.cell;
        let p = BlockPos::new(pos.size, [c[0], c[1] + dy, c[2]]).ok()?;
        (footing(ground, p, settings) == Footing::OnGround).then_some(p)
    })
}

/// The level of `column`'s grid whose bottom face lies nearest to `ground_y` (metres): the
/// block to put on a pad levelled at that height.
pub fn level_near(column: BlockPos, ground_y: f64) -> Option<BlockPos> {
    let e = column.size.edge();
    let y = (ground_y / e).round();
    if !y.is_finite() || y.abs() > f64::from(i32::MAX) {
        return None;
    }
    let c = column.cell;
    BlockPos::new(column.size, [c[0], y as i32, c[2]]).ok()
}

/// The terrain op that levels a pad under the block at `pos`: a [`EditOp::Flatten`] with a
/// flat-topped ([`Falloff::Constant`]) ball around the centre of its bottom face, of radius
/// the half diagonal of the face plus 1.5 voxels, pulling the ground onto the plane of the
/// bottom face. Samples under the face then read the plane's distance exactly, so the block
/// rests on it ([`Footing::OnGround`]) whatever the slope was (within the ball: terrain more
/// than the radius above or below the plane is left as it was). `voxel_size` in metres.
pub fn levelling_op(pos: BlockPos, voxel_size: f64) -> EditOp {
    let (lo, c) = (pos.min_corner(), pos.centre());
    let bottom = [c[0], lo[1], c[2]];
    let radius = pos.size.edge() * std::f64::consts::FRAC_1_SQRT_2 + 1.5 * voxel_size;
    EditOp::Flatten {
        center: bottom,
        radius,
        strength: 1.0,
        falloff: Falloff::Constant,
        plane_point: bottom,
        plane_normal: [0.0, 1.0, 0.0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BlockSize;

    /// A plane sloping up along +x: height `0.3 + slope · x`.
    fn slope(slope: f64) -> impl Fn([f64; 3]) -> f32 {
        move |p: [f64; 3]| {
            let h = 0.3 + slope * p[0];
            // Signed distance to the plane y = h (negative below it).
            ((p[1] - h) / (1.0 + slope * slope).sqrt()) as f32
        }
    }

    fn at(cell: [i32; 3]) -> BlockPos {
        BlockPos::new(BlockSize::Full, cell).unwrap()
    }

    #[test]
    fn flat_ground_just_below_a_bottom_face_holds_it() {
        let s = BlockSettings::default();
        // Ground at y = 0.98: a block from y = 1 has it 2 cm under its face.
        let g = |p: [f64; 3]| (p[1] - 0.98) as f32;
        assert_eq!(footing(&g, at([0, 1, 0]), &s), Footing::OnGround);
        // From y = 2 it floats 1.02 m above the ground.
        assert_eq!(footing(&g, at([0, 2, 0]), &s), Footing::Clear);
        // From y = 0 its bottom corners are 0.98 m deep.
        match footing(&g, at([0, 0, 0]), &s) {
            Footing::Buried { depth } => assert!((depth - 0.98).abs() < 1e-6, "{depth}"),
            f => panic!("{f:?}"),
        }
    }

    #[test]
    fn seat_finds_the_resting_level_nearest_the_aim() {
        let s = BlockSettings::default();
        let g = |p: [f64; 3]| (p[1] - 2.98) as f32;
        assert_eq!(seat(&g, at([4, 1, 4]), &s), Some(at([4, 3, 4])));
        assert_eq!(seat(&g, at([4, 4, 4]), &s), Some(at([4, 3, 4])));
        // Three levels away: not looked for.
        assert_eq!(seat(&g, at([4, 6, 4]), &s), None);
    }

    #[test]
    fn a_hillside_has_no_resting_level_until_a_pad_is_levelled() {
        let s = BlockSettings::default();
        let g = slope(0.5);
        // Under the block from x = 2..3 the ground runs from 1.3 m to 1.8 m: from y = 1 its
        // corner at x = 3 is 0.72 m deep, from y = 2 no probe reaches the ground.
        for y in -1..=5 {
            assert_ne!(footing(&g, at([2, y, 0]), &s), Footing::OnGround, "y = {y}");
        }
        assert_eq!(seat(&g, at([2, 1, 0]), &s), None);
        let pos = level_near(at([2, 7, 0]), 0.3 + 0.5 * 2.5).unwrap();
        assert_eq!(pos, at([2, 2, 0]));
        let EditOp::Flatten {
            center,
            radius,
            strength,
            falloff,
            plane_point,
            plane_normal,
        } = levelling_op(pos, 1.0)
        else {
            panic!("not a flatten");
        };
        assert_eq!(center, [2.5, 2.0, 0.5]);
        assert_eq!(plane_point, center);
        assert_eq!(plane_normal, [0.0, 1.0, 0.0]);
        assert_eq!(strength, 1.0);
        assert_eq!(falloff, Falloff::Constant);
        assert!((radius - (0.5f64.sqrt() + 1.5)).abs() < 1e-12);
    }

    #[test]
    fn level_near_rounds_to_the_nearest_bottom_face() {
        let q = BlockPos::new(BlockSize::Quarter, [0, 40, 0]).unwrap();
        assert_eq!(level_near(q, 1.1).unwrap().cell, [0, 4, 0]);
        assert_eq!(level_near(q, 1.13).unwrap().cell, [0, 5, 0]);
        assert!(level_near(q, f64::NAN).is_none());
    }
}
