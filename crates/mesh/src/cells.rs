//! Finding the surface cells of a grid fast: one pass over rows of cells that reads each
//! sample's sign once and skips runs of all-air or all-solid cells.

use crate::grid::Grid;

/// The Marching Cubes case of a cell from the sign codes of its two x-columns. A column code
/// holds the inside bits of samples `(y, z)`, `(y+1, z)`, `(y, z+1)`, `(y+1, z+1)` in bits
/// 0..3; the left column holds corners 0, 3, 4, 7 and the right one 1, 2, 5, 6
/// ([`crate::tables::CORNERS`] order).
static CASE_OF_COLUMNS: [[u8; 16]; 16] = case_table();

const fn case_table() -> [[u8; 16]; 16] {
    const LEFT: [u8; 4] = [0, 3, 4, 7];
    const RIGHT: [u8; 4] = [1, 2, 5, 6];
    let mut out = [[0u8; 16]; 16];
    let mut l = 0;
    while l < 16 {
        let mut r = 0;
        while r < 16 {
            let mut case = 0u8;
            let mut b = 0;
            while b < 4 {
                if l >> b & 1 == 1 {
                    case |= 1 << LEFT[b];
                }
                if r >> b & 1 == 1 {
                    case |= 1 << RIGHT[b];
                }
                b += 1;
            }
            out[l][r] = case;
            r += 1;
        }
        l += 1;
    }
    out
}

/// Calls `f(cell, index, case)` for every cell of the grid's cell range whose corners are not
/// all on one side (`value < 0.0` is inside), in z, y, x order; `index` is the cell's lowest
/// corner in `grid.values`.
#[inline]
pub(crate) fn for_each_surface_cell(grid: &Grid, mut f: impl FnMut([u32; 3], usize, usize)) {
    let v = grid.values;
    let (sy, sz) = (
        grid.dims[0] as usize,
        grid.dims[0] as usize * grid.dims[1] as usize,
    );
    let (x0, x1) = (grid.cells_min[0], grid.cells_max[0]);
    let cells = (x1 - x0) as usize;
    for z in grid.cells_min[2]..grid.cells_max[2] {
        for y in grid.cells_min[1]..grid.cells_max[1] {
            let r = grid.index(x0, y, z);
            // The four sample rows of this row of cells, each cells + 1 samples long.
            let rows = [
                &v[r..=r + cells],
                &v[r + sy..=r + sy + cells],
                &v[r + sz..=r + sz + cells],
                &v[r + sy + sz..=r + sy + sz + cells],
            ];
            let column = |i: usize| -> usize {
                usize::from(rows[0][i] < 0.0)
                    | usize::from(rows[1][i] < 0.0) << 1
                    | usize::from(rows[2][i] < 0.0) << 2
                    | usize::from(rows[3][i] < 0.0) << 3
            };
            let mut left = column(0);
            for i in 0..cells {
                let right = column(i + 1);
                if left != right || (left != 0 && left != 15) {
                    let case = CASE_OF_COLUMNS[left][right] as usize;
                    f([x0 + i as u32, y, z], r + i, case);
                }
                left = right;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::CORNERS;

    /// The table agrees with reading the eight corners one by one.
    #[test]
    fn case_from_columns_matches_corners() {
        for case in 0..256usize {
            let inside = |c: usize| case >> c & 1;
            let col = |x: u8| -> usize {
                let mut code = 0;
                for (b, (y, z)) in [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().enumerate() {
                    let c = CORNERS.iter().position(|k| *k == [x, y, z]).unwrap();
                    code |= inside(c) << b;
                }
                code
            };
            assert_eq!(CASE_OF_COLUMNS[col(0)][col(1)] as usize, case);
        }
    }
}
