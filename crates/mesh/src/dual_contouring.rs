//! Dual Contouring (Ju, Losasso, Schaefer & Warren 2002): each surface cell's vertex minimises
//! the quadratic error function (QEF) of the tangent planes at its edge crossings.

use crate::buffer::MeshBuffer;
use crate::crossings::{Crossings, trilinear};
use crate::dual::{dual_mesh, dual_mesh_with};
use crate::grid::Grid;
use crate::level_seams::{FineSampler, LevelNeighbours, Seams};

/// Eigenvalues below this fraction of the largest are treated as zero in the QEF solve
/// (the truncated pseudo-inverse of Lindstrom 2000), so flat and edge cells keep their
/// vertex at the mass point along the free directions.
const EIGEN_CUTOFF: f64 = 0.05;

/// A cell-local vertex coordinate below this (cell units) is rounding of 0 (the f32 noise of
/// the crossings' mean is ~1e-8).
const SNAP: f64 = 1e-6;

/// Meshes the grid with Dual Contouring into `out` (cleared first).
///
/// Same cells, quads and halo as [`crate::surface_nets`]; the vertex solves the QEF
/// `Σ (nᵢ · (x − pᵢ))²` over the crossings `pᵢ` and the unit normals `nᵢ` of the cell's
/// trilinear interpolant there, relative
/// to the crossings' mean with a truncated eigen-decomposition, then is clamped into its cell.
/// Sharp edges and corners of dug boxes stay sharp (case C03).
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract.
pub fn dual_contouring(grid: &Grid, out: &mut MeshBuffer) {
    dual_mesh(grid, out, qef_vertex);
}

/// [`dual_contouring`] for a chunk of a level-of-detail tiling, as
/// [`crate::surface_nets_lod`] is for Surface Nets.
///
/// # Panics
/// As [`crate::surface_nets_lod`].
pub fn dual_contouring_lod(
    grid: &Grid,
    levels: LevelNeighbours,
    fine: FineSampler,
    out: &mut MeshBuffer,
) {
    if levels.is_plain() {
        return dual_contouring(grid, out);
    }
    let seams = Seams::new(levels, fine, grid);
    dual_mesh_with(grid, out, qef_vertex, Some(&seams), qef_points);
}

pub(crate) fn qef_vertex(corners: &[f32; 8], edges: u16) -> ([f32; 3], [f32; 3]) {
    let c = &Crossings::new(corners, edges);
    qef_points(&c.corners, &c.points[..c.len])
}

/// The QEF vertex of the crossings `points` (cell-local) of a cell with `corners` (row order)
/// and the normal there: [`dual_contouring`]'s vertex, also for a polyhedral cell's patch.
pub(crate) fn qef_points(corners: &[f32; 8], points: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mass = {
        let mut s = [0.0f32; 3];
        for p in points {
            s = [s[0] + p[0], s[1] + p[1], s[2] + p[2]];
        }
        let inv = 1.0 / points.len() as f32;
        [s[0] * inv, s[1] * inv, s[2] * inv]
    }
    .map(f64::from);
    let mut ata = [[0.0f64; 3]; 3];
    let mut atb = [0.0f64; 3];
    for &point in points {
        let g = trilinear(corners, point).1.map(f64::from);
        let l = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        if !(l > 0.0 && l.is_finite()) {
            continue;
        }
        let n = g.map(|v| v / l);
        let p = point.map(f64::from);
        // Plane through p relative to the mass point: n · y = n · (p − mass).
        let d = n[0] * (p[0] - mass[0]) + n[1] * (p[1] - mass[1]) + n[2] * (p[2] - mass[2]);
        for i in 0..3 {
            for j in 0..3 {
                ata[i][j] += n[i] * n[j];
            }
            atb[i] += n[i] * d;
        }
    }
    let (vals, vecs) = jacobi_eigen(ata);
    let max = vals.iter().fold(0.0f64, |a, &b| a.max(b));
    let mut y = [0.0f64; 3];
    if max > 0.0 {
        for k in 0..3 {
            if vals[k] > EIGEN_CUTOFF * max {
                let v = [vecs[0][k], vecs[1][k], vecs[2][k]];
                let s = (v[0] * atb[0] + v[1] * atb[1] + v[2] * atb[2]) / vals[k];
                for i in 0..3 {
                    y[i] += s * v[i];
                }
            }
        }
    }
    // Rounding leaves a vertex that solves to a cell face a hair off it (1e-16 to 1.5e-8);
    // near 1 the f32 conversion removes that, near 0 it would keep it, and the vertex would
    // sit beside its neighbour cell's vertex on the same sample instead of on it (a
    // collinear sliver that could not be split: a hole, at a volume's low border). So a
    // hair from 0 is 0.
    let p = [0, 1, 2].map(|i| {
        let v = (mass[i] + y[i]).clamp(0.0, 1.0);
        (if v < SNAP { 0.0 } else { v }) as f32
    });
    (p, trilinear(corners, p).1)
}

/// Eigenvalues and eigenvectors (columns) of a symmetric 3×3 matrix by cyclic Jacobi
/// rotations; a fixed number of sweeps keeps it deterministic.
fn jacobi_eigen(mut a: [[f64; 3]; 3]) -> ([f64; 3], [[f64; 3]; 3]) {
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    // Converged when the off-diagonal mass is negligible relative to the matrix: the QEF
    // truncates eigenvalues below 5% of the largest, so 1e-6 relative is plenty.
    let scale = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
    let tiny = 1e-12 * scale;
    for _ in 0..16 {
        let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        if off <= tiny {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] * a[p][q] <= tiny {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            for row in a.iter_mut() {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (rp, rq) = (a[p], a[q]);
            for k in 0..3 {
                a[p][k] = c * rp[k] - s * rq[k];
                a[q][k] = s * rp[k] + c * rq[k];
            }
            for row in v.iter_mut() {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    ([a[0][0], a[1][1], a[2][2]], v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_diagonalises() {
        let m = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]];
        let (vals, vecs) = jacobi_eigen(m);
        for k in 0..3 {
            let v = [vecs[0][k], vecs[1][k], vecs[2][k]];
            for i in 0..3 {
                let mv = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
                assert!((mv - vals[k] * v[i]).abs() < 1e-5);
            }
        }
        assert!((vals.iter().sum::<f64>() - 8.0).abs() < 1e-9);
    }
}
