//! A sphere of radius 10 voxels: area, volume, closedness, orientation, normals.

use std::f64::consts::PI;

use crate::util::*;
use loam_mesh::{Grid, Mesher};

#[test]
fn sphere_radius_10_every_mesher() {
    let dims = [26; 3];
    // Off-centre so the surface does not sit symmetrically on the lattice.
    let values = sample(dims, sphere([12.3, 12.6, 12.45], 10.0));
    for vs in [1.0f32, 0.25] {
        let grid = Grid::volume(&values, dims, vs);
        for m in Mesher::ALL {
            let b = mesh(m, &grid);
            let s = stats(&b);
            let r = 10.0 * f64::from(vs);
            let (area, vol) = (4.0 * PI * r * r, 4.0 / 3.0 * PI * r * r * r);
            let what = format!("{m:?} at voxel {vs}");
            assert_eq!(s.boundary_edges, 0, "{what}: {s:?}");
            assert_eq!(s.nonmanifold_edges, 0, "{what}: {s:?}");
            assert_eq!(s.misoriented_edges, 0, "{what}: {s:?}");
            assert_eq!(s.degenerate_triangles, 0, "{what}");
            assert_eq!((s.components, s.euler), (1, 2), "{what}: a sphere");
            assert!(
                (s.area / area - 1.0).abs() < 0.01,
                "{what}: area {} vs {area}",
                s.area
            );
            let v = s.volume.expect("closed");
            assert!((v / vol - 1.0).abs() < 0.01, "{what}: volume {v} vs {vol}");
            assert_unit_normals(&b, &what);
            // Normals point away from the centre (into the air).
            for (p, n) in b.positions.iter().zip(&b.normals) {
                let d = [p[0] / vs - 12.3, p[1] / vs - 12.6, p[2] / vs - 12.45];
                assert!(
                    d[0] * n[0] + d[1] * n[1] + d[2] * n[2] > 0.0,
                    "{what}: inward normal at {p:?}"
                );
            }
        }
    }
}

#[test]
fn empty_and_full_grids_give_empty_meshes() {
    let dims = [6; 3];
    for v in [1.0f32, 0.0, -1.0] {
        let values = vec![v; 216];
        for m in Mesher::ALL {
            let b = mesh(m, &Grid::volume(&values, dims, 1.0));
            assert!(b.is_empty() && b.positions.is_empty(), "{m:?} on all {v}");
            // Closed (no boundary edge), enclosing nothing.
            assert_eq!(stats(&b).volume, Some(0.0), "{m:?} on all {v}");
        }
        let mut g = Grid::volume(&values, dims, 1.0);
        g.range = Some((v, v));
        assert!(g.is_uniform());
    }
}

#[test]
fn buffer_is_reused_without_growing() {
    let dims = [26; 3];
    let values = sample(dims, sphere([12.3, 12.6, 12.45], 10.0));
    let grid = Grid::volume(&values, dims, 1.0);
    for m in Mesher::ALL {
        let mut b = loam_mesh::MeshBuffer::default();
        m.mesh(&grid, &mut b);
        let caps = (b.positions.capacity(), b.indices.capacity());
        let first = b.clone();
        m.mesh(&grid, &mut b);
        assert_eq!(
            (b.positions.capacity(), b.indices.capacity()),
            caps,
            "{m:?} reallocated"
        );
        assert_eq!(b.positions, first.positions, "{m:?} not repeatable");
        assert_eq!(b.indices, first.indices);
    }
}
