//! Glue between Lengyel's Transvoxel tables (the `transvoxel-data` crate, which carries the
//! tables published with Lengyel 2010 and on transvoxel.org, MIT) and Loam's numbering.
//!
//! Regular cells: Lengyel numbers corner `i` of a cell `(i & 1, i >> 1 & 1, i >> 2 & 1)`; Loam's
//! cell scan ([`crate::tables::CORNERS`] order) numbers them the classic Marching Cubes way, so a
//! case is renumbered through [`TV_CASE_OF_MC_CASE`]. Bit `i` of a case is set when corner `i`
//! is inside (`value < 0.0`); the regular table's triangles are then counter-clockwise seen
//! from the air.
//!
//! Transition cells: the nine full-resolution samples are numbered row by row,
//!
//! ```text
//!   v
//!   6 7 8        half-resolution face (the coarse cell's face, moved inward by the
//!   3 4 5        transition width): 9 = 0, A = 2, B = 6, C = 8 in position and value
//!   0 1 2  → u
//! ```
//!
//! and the case code takes their inside bits in the order 0, 1, 2, 5, 8, 7, 6, 3, 4
//! ([`TRANSITION_CASE_BIT`]).

pub(crate) use transvoxel_data::regular_cell_data::{
    REGULAR_CELL_CLASS, REGULAR_CELL_DATA, REGULAR_VERTEX_DATA,
};
pub(crate) use transvoxel_data::transition_cell_data::{
    TRANSITION_CELL_CLASS, TRANSITION_CELL_DATA, TRANSITION_VERTEX_DATA,
};

use crate::tables::CORNERS;

/// Lengyel's regular case of each Marching Cubes case (Loam corner order).
pub(crate) static TV_CASE_OF_MC_CASE: [u8; 256] = remap();

const fn remap() -> [u8; 256] {
    let mut out = [0u8; 256];
    let mut case = 0;
    while case < 256 {
        let mut tv = 0u8;
        let mut m = 0;
        while m < 8 {
            if case >> m & 1 == 1 {
                let c = CORNERS[m];
                tv |= 1 << (c[0] + 2 * c[1] + 4 * c[2]);
            }
            m += 1;
        }
        out[case] = tv;
        case += 1;
    }
    out
}

/// The case-code bit of full-resolution sample `k` (0..9) of a transition cell.
pub(crate) const TRANSITION_CASE_BIT: [u16; 9] =
    [0x01, 0x02, 0x04, 0x80, 0x100, 0x08, 0x40, 0x20, 0x10];

/// The half-resolution corner (`[u, v]` in coarse cells) of transition sample 9..=12.
pub(crate) const HALF_RES_CORNER: [[u32; 2]; 4] = [[0, 0], [1, 0], [0, 1], [1, 1]];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remap_is_a_permutation_of_corners() {
        // One corner inside: MC corner m = (x, y, z) becomes Lengyel corner x + 2y + 4z.
        assert_eq!(TV_CASE_OF_MC_CASE[1 << 2], 1 << 3); // (1, 1, 0)
        assert_eq!(TV_CASE_OF_MC_CASE[1 << 3], 1 << 2); // (0, 1, 0)
        assert_eq!(TV_CASE_OF_MC_CASE[1 << 6], 1 << 7); // (1, 1, 1)
        let mut seen = [false; 256];
        for &c in TV_CASE_OF_MC_CASE.iter() {
            assert!(!seen[c as usize]);
            seen[c as usize] = true;
        }
    }

    #[test]
    fn table_shapes() {
        // Every regular vertex lies on a cell edge; every transition vertex on an edge of the
        // full-resolution face (both ends 0..=8) or of the half-resolution face (9..=12).
        for case in 0..256 {
            let d = REGULAR_CELL_DATA[REGULAR_CELL_CLASS[case] as usize];
            for &code in &REGULAR_VERTEX_DATA[case][..d.get_vertex_count() as usize] {
                let (a, b) = (code >> 4 & 0xF, code & 0xF);
                assert_eq!((a ^ b).count_ones(), 1, "case {case}");
            }
        }
        for case in 0..512 {
            let d = TRANSITION_CELL_DATA[(TRANSITION_CELL_CLASS[case] & 0x7F) as usize];
            for &code in &TRANSITION_VERTEX_DATA[case][..d.get_vertex_count() as usize] {
                let (a, b) = (code >> 4 & 0xF, code & 0xF);
                assert!((a <= 8 && b <= 8) || (a >= 9 && b >= 9 && a <= 12 && b <= 12));
            }
        }
    }
}
