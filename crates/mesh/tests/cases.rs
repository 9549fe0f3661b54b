//! The project's acceptance cases C01–C03, for every mesher (each test says what its case is).

use crate::util::*;
use loam_mesh::{CHUNK_HALO, Grid, Mesher};

/// A chunk grid (halo [`CHUNK_HALO`]) of `f` at world sample coordinates (voxel 1).
fn chunk_grid(f: impl Fn(f64, f64, f64) -> f64) -> Vec<f32> {
    let h = f64::from(CHUNK_HALO);
    sample([33 + 2 * CHUNK_HALO; 3], |x, y, z| f(x - h, y - h, z - h))
}

/// C01: flat ground exactly on a layer of samples gives one sheet of 32 × 32 m² at y = 8.
#[test]
fn case_c01_flat_ground_on_a_sample_layer() {
    let plain = chunk_grid(|_, y, _| y - 8.0);
    let clamped = chunk_grid(|_, y, _| (y - 8.0).clamp(-1.0, 1.0));
    for values in [plain, clamped] {
        let grid = Grid::chunk(&values, &[], CHUNK_HALO, 1.0);
        for m in Mesher::ALL {
            let b = mesh(m, &grid);
            let s = stats(&b);
            assert!((s.area - 1024.0).abs() < 1e-3, "{m:?}: area {}", s.area);
            assert!(
                b.positions.iter().all(|p| p[1] == 8.0),
                "{m:?}: a vertex off y = 8"
            );
            assert_eq!((s.components, s.euler), (1, 1), "{m:?}: one disk");
            assert_eq!(
                s.boundary_edges, 128,
                "{m:?}: only the chunk's outline is open"
            );
            assert_eq!(
                (
                    s.nonmanifold_edges,
                    s.misoriented_edges,
                    s.degenerate_triangles
                ),
                (0, 0, 0),
                "{m:?}"
            );
            assert!(
                b.normals.iter().all(|n| *n == [0.0, 1.0, 0.0]),
                "{m:?}: normals"
            );
        }
    }
}

/// C02: a saturated step field gives a flat sheet with finite unit normals (0, 0, 1).
#[test]
fn case_c02_saturated_step_field() {
    let values = chunk_grid(|_, _, z| if z < 3.0 { -1.0 } else { 1.0 });
    let grid = Grid::chunk(&values, &[], CHUNK_HALO, 1.0);
    for m in Mesher::ALL {
        let b = mesh(m, &grid);
        assert!(!b.is_empty());
        assert!(b.positions.iter().all(|p| p[2] == 2.5), "{m:?}");
        assert!(
            b.normals.iter().all(|n| *n == [0.0, 0.0, 1.0]),
            "{m:?}: {:?}",
            &b.normals[..4]
        );
    }
}

/// The whole kind of C02: a field whose central differences vanish everywhere (layers
/// alternating in z) falls back to triangle normals, never NaN.
#[test]
fn vanishing_gradients_fall_back_to_triangle_normals() {
    let values = chunk_grid(|_, _, z| {
        if (z as i64).rem_euclid(2) == 0 {
            1.0
        } else {
            -1.0
        }
    });
    let grid = Grid::chunk(&values, &[], CHUNK_HALO, 1.0);
    for m in Mesher::ALL {
        let b = mesh(m, &grid);
        assert!(!b.is_empty(), "{m:?}");
        assert_unit_normals(&b, &format!("{m:?}"));
        for n in &b.normals {
            assert!(n[2].abs() == 1.0, "{m:?}: {n:?}");
        }
    }
}

/// The exact SDF of a box with half extent `e`.
fn box_sdf(p: [f64; 3], e: f64) -> f64 {
    let q = p.map(|c| c.abs() - e);
    let outside = q.map(|c| c.max(0.0));
    (outside[0] * outside[0] + outside[1] * outside[1] + outside[2] * outside[2]).sqrt()
        + q[0].max(q[1]).max(q[2]).min(0.0)
}

/// C03: the exact box SDF, half extent 0.5 at voxel 0.1: no NaN anywhere, face vertices
/// carry the face normal, Dual Contouring keeps the 8 corners within 1% of a voxel.
#[test]
fn case_c03_exact_box() {
    let vs = 0.1;
    // Samples i in −8..=8 per axis at positions i as f64 * 0.1.
    let values = sample([17; 3], |x, y, z| {
        box_sdf([x, y, z].map(|i| (i as i64 - 8) as f64 * vs), 0.5)
    });
    assert!(values.iter().all(|v| v.is_finite()));
    let grid = Grid {
        origin: [8; 3],
        ..Grid::volume(&values, [17; 3], vs as f32)
    };
    for m in Mesher::ALL {
        let b = mesh(m, &grid);
        let s = stats(&b);
        assert_eq!((s.boundary_edges, s.degenerate_triangles), (0, 0), "{m:?}");
        assert_unit_normals(&b, &format!("{m:?}"));
        let mut faces = 0;
        for (p, n) in b.positions.iter().zip(&b.normals) {
            for a in 0..3 {
                let (b1, b2) = ((a + 1) % 3, (a + 2) % 3);
                if (p[a].abs() - 0.5).abs() < 1e-6 && p[b1].abs() < 0.35 && p[b2].abs() < 0.35 {
                    faces += 1;
                    let mut want = [0.0f32; 3];
                    want[a] = p[a].signum();
                    assert_eq!(*n, want, "{m:?}: face vertex {p:?}");
                }
            }
        }
        assert!(faces >= 6 * 36, "{m:?}: only {faces} face vertices");
        if m == Mesher::DualContouring {
            for corner in 0..8 {
                let c = [corner & 1, corner >> 1 & 1, corner >> 2 & 1]
                    .map(|b| if b == 1 { 0.5f32 } else { -0.5 });
                let nearest = b
                    .positions
                    .iter()
                    .map(|p| {
                        ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2))
                            .sqrt()
                    })
                    .fold(f32::INFINITY, f32::min);
                assert!(
                    nearest <= 0.01 * vs as f32,
                    "corner {c:?}: nearest vertex {nearest} m away"
                );
            }
        }
    }
}
