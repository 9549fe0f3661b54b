//! Random grids of small integers with many exact zeros.

use proptest::prelude::*;

use crate::util::*;
use loam_mesh::{Grid, Mesher};

const N: u32 = 7;

fn grid_values() -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(-2i8..=2, (N * N * N) as usize).prop_map(|v| {
        let mut out: Vec<f32> = v.into_iter().map(f32::from).collect();
        // The outer layer is air, so the surface never reaches the grid border.
        for z in 0..N {
            for y in 0..N {
                for x in 0..N {
                    if [x, y, z].iter().any(|&c| c == 0 || c == N - 1) {
                        out[(x + N * (y + N * z)) as usize] = 1.0;
                    }
                }
            }
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_small_integer_grids_are_watertight(values in grid_values()) {
        let grid = Grid::volume(&values, [N; 3], 1.0);
        for m in Mesher::ALL {
            let mb = mesh(m, &grid);
            let s = stats(&mb);
            prop_assert_eq!(s.boundary_edges, 0, "{:?}: {:?}", m, s);
            prop_assert_eq!(s.degenerate_triangles, 0, "{:?}", m);
            assert_unit_normals(&mb, &format!("{m:?}"));
        }
    }

    /// Without exact zeros (ambiguous faces and cells still abound), Marching Cubes is closed,
    /// manifold and consistently oriented.
    #[test]
    fn random_grids_without_zeros_mesh_manifold(values in grid_values()) {
        let values: Vec<f32> = values.into_iter().map(|v| if v == 0.0 { 1.0 } else { v }).collect();
        let grid = Grid::volume(&values, [N; 3], 1.0);
        let mb = mesh(Mesher::MarchingCubes, &grid);
        let s = stats(&mb);
        prop_assert_eq!((s.boundary_edges, s.nonmanifold_edges, s.misoriented_edges), (0, 0, 0), "{:?}", s);
    }
}
