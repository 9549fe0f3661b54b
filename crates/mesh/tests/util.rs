//! Shared fixtures: analytic fields sampled on grids.

#![allow(dead_code)]

use loam_mesh::{Grid, MeshBuffer, MeshStats, Mesher, WeldPart, mesh_stats};

/// Samples `f` at grid index `(x, y, z)` for `dims`, x fastest.
pub fn sample(dims: [u32; 3], f: impl Fn(f64, f64, f64) -> f64) -> Vec<f32> {
    let mut v = Vec::with_capacity(dims.iter().map(|&d| d as usize).product());
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                v.push(f(f64::from(x), f64::from(y), f64::from(z)) as f32);
            }
        }
    }
    v
}

pub fn mesh(m: Mesher, grid: &Grid) -> MeshBuffer {
    let mut out = MeshBuffer::default();
    m.mesh(grid, &mut out);
    out
}

pub fn stats(b: &MeshBuffer) -> MeshStats {
    mesh_stats(&b.positions, &b.indices)
}

pub fn assert_unit_normals(b: &MeshBuffer, what: &str) {
    assert_eq!(b.normals.len(), b.positions.len());
    for (i, n) in b.normals.iter().enumerate() {
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((l - 1.0).abs() < 1e-5, "{what}: normal {i} = {n:?}");
    }
}

/// A sphere SDF of radius `r` around `c` (grid units).
pub fn sphere(c: [f64; 3], r: f64) -> impl Fn(f64, f64, f64) -> f64 {
    move |x, y, z| ((x - c[0]).powi(2) + (y - c[1]).powi(2) + (z - c[2]).powi(2)).sqrt() - r
}

/// Sets the outer layer of an `n³` grid to air (+1), so a surface never reaches the border.
pub fn with_air_border(mut v: Vec<f32>, n: u32) -> Vec<f32> {
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                if [x, y, z].iter().any(|&c| c == 0 || c == n - 1) {
                    v[(x + n * (y + n * z)) as usize] = 1.0;
                }
            }
        }
    }
    v
}

/// Boundary edges of `b` (meshed from a volume grid of `dims` samples, voxel 1) with an end
/// more than one cell from every side of the grid: where the surface must be closed.
pub fn boundary_edges_inside(b: &MeshBuffer, dims: [u32; 3]) -> usize {
    let near = |i: u32| {
        let p = b.positions[i as usize];
        (0..3).any(|a| p[a] <= 1.0 || p[a] >= (dims[a] - 2) as f32)
    };
    loam_mesh::boundary_edges(&b.indices)
        .into_iter()
        .filter(|&(p, q)| !(near(p) && near(q)))
        .count()
}

/// Sample values from text, x fastest: `+` is 1 (air), `0` is 0 (air), `-` is −1 (solid).
///
/// # Panics
/// On any other character.
pub fn grid_from_text(text: &str) -> Vec<f32> {
    text.chars()
        .map(|c| match c {
            '+' => 1.0,
            '0' => 0.0,
            '-' => -1.0,
            _ => panic!("{c:?} is not a sample (+, 0, -)"),
        })
        .collect()
}

/// [`loam_mesh::weld`] with tolerance 0, by bit pattern (`weld` scans runs of equal x, which
/// is quadratic for the thousands of vertices on one lattice plane).
pub fn weld_exact(parts: &[WeldPart]) -> (Vec<[f64; 3]>, Vec<u32>) {
    let mut all: Vec<[f64; 3]> = Vec::new();
    for (off, pos, _) in parts {
        all.extend(
            pos.iter()
                .map(|p| [0, 1, 2].map(|a| off[a] + f64::from(p[a]) + 0.0)),
        );
    }
    let key = |p: &[f64; 3]| p.map(f64::to_bits);
    let mut order: Vec<u32> = (0..all.len() as u32).collect();
    order.sort_unstable_by_key(|&i| (key(&all[i as usize]), i));
    let (mut positions, mut remap) = (Vec::new(), vec![0u32; all.len()]);
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || key(&all[order[k - 1] as usize]) != key(&all[i as usize]) {
            positions.push(all[i as usize]);
        }
        remap[i as usize] = positions.len() as u32 - 1;
    }
    let mut indices = Vec::new();
    let mut base = 0u32;
    for (_, pos, idx) in parts {
        indices.extend(idx.iter().map(|&i| remap[(base + i) as usize]));
        base += pos.len() as u32;
    }
    (positions, indices)
}
