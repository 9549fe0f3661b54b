//! What the level seams cost the dual meshers: one chunk of a rolling terrain meshed plain
//! and with neighbours of other levels (every face, edge and corner finer: the coarse chunk
//! meshes the whole seam; or every neighbour coarser: the fine chunk leaves its border to
//! them), and with the nine neighbours on one side finer or coarser (a chunk at the edge of
//! a ring of another level), best of `RUNS` (default 40) each, in one run.
//!
//! ```text
//! cargo run --release -p loam-mesh --example level_seams_cost [RUNS] [CASE]
//! ```
//!
//! `CASE`: only the cases whose name contains it (`finer`, `coarser`, `plain`, …).

use std::time::{Duration, Instant};

use loam_mesh::{
    CHUNK_CELLS, Grid, LevelNeighbours, MeshBuffer, dual_contouring_lod, surface_nets_lod,
};

/// A rolling terrain through the chunk, in level-0 samples (1 m).
fn field(p: [f64; 3]) -> f32 {
    let h = 20.0 + 7.0 * (p[0] * 0.071).sin() * (p[2] * 0.053).cos() + 3.0 * (p[0] * 0.23).sin();
    (p[1] - h) as f32
}

fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .expect("runs > 0")
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("RUNS: a number"))
        .unwrap_or(40);
    let only = std::env::args().nth(2);
    let halo = 2u32;
    let n = (CHUNK_CELLS + 1 + 2 * halo) as usize;
    // A level-1 chunk (2 m cells) from (0, 0, 0): its grid and the fine samples beside it.
    let stride = 2.0;
    let lo = -f64::from(halo) * stride;
    let mut values = Vec::with_capacity(n * n * n);
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                values.push(field([x, y, z].map(|c| lo + c as f64 * stride)));
            }
        }
    }
    let grid = Grid::chunk(&values, &[], halo, stride as f32);
    // The fine samples, sampled up front as the world does (its slabs beside the chunk), so
    // that the figures are the mesher's and not the terrain function's.
    let m = 2 * n - 1;
    let mut fine_values = Vec::with_capacity(m * m * m);
    for z in 0..m {
        for y in 0..m {
            for x in 0..m {
                fine_values.push(field([x, y, z].map(|c| lo + c as f64 * stride / 2.0)));
            }
        }
    }
    let fine = |p: [i32; 3]| {
        let [x, y, z] = p.map(|c| usize::try_from(c).expect("a fine point of the grid"));
        (fine_values[x + m * (y + m * z)], 0u8)
    };
    let all = (0..27).filter(|&i| i != 13).fold(0u32, |a, i| a | 1 << i);
    // The nine neighbours on the −x side (a face, its four edges and corners): a chunk at the
    // edge of a ring of finer or coarser chunks.
    let minus_x = (0..27)
        .filter(|&i| i % 3 == 0)
        .fold(0u32, |a, i| a | 1 << i);
    let cases = [
        ("plain", LevelNeighbours::default()),
        (
            "all finer",
            LevelNeighbours {
                finer: all,
                coarser: 0,
            },
        ),
        (
            "all coarser",
            LevelNeighbours {
                finer: 0,
                coarser: all,
            },
        ),
        (
            "-x finer",
            LevelNeighbours {
                finer: minus_x,
                coarser: 0,
            },
        ),
        (
            "-x coarser",
            LevelNeighbours {
                finer: 0,
                coarser: minus_x,
            },
        ),
    ];
    println!("mesher  neighbours    best of {runs}   triangles");
    for (name, mesh) in [
        (
            "sn",
            surface_nets_lod as fn(&Grid, LevelNeighbours, _, &mut MeshBuffer),
        ),
        ("dc", dual_contouring_lod),
    ] {
        for (what, levels) in cases {
            if only.as_deref().is_some_and(|o| !what.contains(o)) {
                continue;
            }
            let mut out = MeshBuffer::default();
            let t = best(runs, || mesh(&grid, levels, &fine, &mut out));
            println!(
                "{name:6}  {what:12}  {:8.1} µs   {}",
                t.as_secs_f64() * 1e6,
                out.triangle_count()
            );
        }
    }
}
