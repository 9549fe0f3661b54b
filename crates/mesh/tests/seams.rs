//! Seams: neighbouring chunks cut from one field agree bit for bit on their shared border,
//! and a closed surface across 2 × 2 × 2 chunks is watertight once welded.

use std::f64::consts::PI;

use crate::util::*;
use loam_mesh::{CHUNK_HALO, Grid, MeshBuffer, Mesher, WeldPart, mesh_stats, weld};

const CENTRE: [f64; 3] = [32.3, 31.7, 32.1];

fn field(x: f64, y: f64, z: f64) -> f64 {
    sphere(CENTRE, 20.0)(x, y, z) + 0.6 * (0.31 * x).sin() * (0.27 * z).cos()
}

fn chunk_mesh(m: Mesher, c: [i64; 3]) -> MeshBuffer {
    let h = i64::from(CHUNK_HALO);
    let values = sample([33 + 2 * CHUNK_HALO; 3], |x, y, z| {
        field(
            (x as i64 + 32 * c[0] - h) as f64,
            (y as i64 + 32 * c[1] - h) as f64,
            (z as i64 + 32 * c[2] - h) as f64,
        )
    });
    mesh(m, &Grid::chunk(&values, &[], CHUNK_HALO, 1.0))
}

fn chunks() -> Vec<[i64; 3]> {
    (0..8).map(|i| [i & 1, i >> 1 & 1, i >> 2 & 1]).collect()
}

#[test]
fn closed_surface_across_eight_chunks_is_watertight() {
    for m in Mesher::ALL {
        let meshes: Vec<([i64; 3], MeshBuffer)> = chunks()
            .into_iter()
            .map(|c| (c, chunk_mesh(m, c)))
            .collect();
        let parts: Vec<WeldPart> = meshes
            .iter()
            .map(|(c, b)| (c.map(|v| 32.0 * v as f64), &b.positions[..], &b.indices[..]))
            .collect();
        let (pos, idx) = weld(&parts, 1e-4);
        let s = mesh_stats(&pos, &idx);
        assert_eq!(
            (s.boundary_edges, s.nonmanifold_edges, s.misoriented_edges),
            (0, 0, 0),
            "{m:?}: {s:?}"
        );
        assert_eq!((s.components, s.euler), (1, 2), "{m:?}");
        let v = s.volume.unwrap();
        assert!(
            (v / (4.0 / 3.0 * PI * 8000.0) - 1.0).abs() < 0.03,
            "{m:?}: volume {v}"
        );
        // Each chunk meshes only what it owns: no triangle twice after welding.
        let mut tris: Vec<[u32; 3]> = idx
            .chunks_exact(3)
            .map(|t| {
                let mut t = [t[0], t[1], t[2]];
                t.sort_unstable();
                t
            })
            .collect();
        let n = tris.len();
        tris.sort_unstable();
        tris.dedup();
        assert_eq!(tris.len(), n, "{m:?}: a triangle emitted by two chunks");
    }
}

/// Marching Cubes: vertices on a shared chunk face are the same bits in both chunks.
#[test]
fn marching_cubes_border_vertices_are_bitwise_equal() {
    for axis in 0..3 {
        let mut hi = [0i64; 3];
        hi[axis] = 1;
        let (a, b) = (
            chunk_mesh(Mesher::MarchingCubes, [0; 3]),
            chunk_mesh(Mesher::MarchingCubes, hi),
        );
        let on = |m: &MeshBuffer, at: f32| -> Vec<([u32; 3], [u32; 3])> {
            let mut v: Vec<_> = m
                .positions
                .iter()
                .zip(&m.normals)
                .filter(|(p, _)| p[axis] == at)
                .map(|(p, n)| {
                    let mut p = *p;
                    p[axis] = 0.0;
                    (p.map(f32::to_bits), n.map(f32::to_bits))
                })
                .collect();
            v.sort_unstable();
            v
        };
        let (fa, fb) = (on(&a, 32.0), on(&b, 0.0));
        assert!(fa.len() > 20, "axis {axis}: {} border vertices", fa.len());
        assert_eq!(fa, fb, "axis {axis}");
    }
}

/// Surface Nets and Dual Contouring: the vertices of the shared layer of cells (cell 31 of
/// the lower chunk, cell −1 of the upper one) have the same normal bits and the same
/// in-plane coordinates.
#[test]
fn dual_border_vertices_agree() {
    for m in [Mesher::SurfaceNets, Mesher::DualContouring] {
        for axis in 0..3 {
            let mut hi = [0i64; 3];
            hi[axis] = 1;
            let (a, b) = (chunk_mesh(m, [0; 3]), chunk_mesh(m, hi));
            let layer = |mesh: &MeshBuffer, lo: f32| -> Vec<([u32; 3], [u32; 3], f32)> {
                let mut v: Vec<_> = mesh
                    .positions
                    .iter()
                    .zip(&mesh.normals)
                    .filter(|(p, _)| p[axis] >= lo && p[axis] <= lo + 1.0)
                    .map(|(p, n)| {
                        let mut q = *p;
                        q[axis] = 0.0;
                        (q.map(f32::to_bits), n.map(f32::to_bits), p[axis] - lo)
                    })
                    .collect();
                v.sort_unstable_by_key(|x| (x.0, x.1));
                v
            };
            let (la, lb) = (layer(&a, 31.0), layer(&b, -1.0));
            // Each chunk makes only the vertices its own quads use; where both made one for
            // the same cell, they agree.
            let mut matched = 0;
            for x in &la {
                if let Some(y) = lb.iter().find(|y| y.0 == x.0 && (x.2 - y.2).abs() < 1e-5) {
                    assert_eq!(x.1, y.1, "{m:?} axis {axis}: normal bits differ");
                    matched += 1;
                }
            }
            assert!(
                matched > 20,
                "{m:?} axis {axis}: only {matched} shared vertices"
            );
        }
    }
}
