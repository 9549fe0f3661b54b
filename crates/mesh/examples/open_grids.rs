//! Searches random grids of small integers that reach the grid border (open meshes) for
//! non-manifold, misoriented or degenerate output, or a boundary edge more than one cell from
//! the border, and prints failing grids, minimised (samples only turned toward air).
//!
//! `cargo run --release -p loam-mesh --example open_grids [GRIDS] [SEED] [N] [K]`: `GRIDS`
//! random `N`³ grids of the integers −K..=K.
//!
//! With `WELD=1` the mesh is first welded by exact position, as the crack metric of a world
//! welds its chunks (`loam replay --metrics-json`'s `nonmanifold_edges`): a split pinch, whose
//! copies keep their original's position, then counts as non-manifold, and vertices that
//! share a position are printed (the per-edge lines are of the unwelded mesh). Measured with
//! `WELD=1 open_grids 20000 7 6 2` (seed 7): MC 19 701, MC33 14 520, SN 4 945, DC 4 983 of
//! the 20 000 grids fail so (none without the weld).

use loam_mesh::{
    Grid, MeshBuffer, MeshStats, Mesher, boundary_edges, mesh_stats, nonmanifold_edges,
};

fn bad(s: &MeshStats) -> bool {
    s.nonmanifold_edges + s.misoriented_edges + s.degenerate_triangles > 0
}

/// The stats, with `degenerate_triangles` also counting each boundary edge with an end more
/// than one cell from the grid border (the surface must be closed there; set `SHOW` to print
/// them).
fn check(m: Mesher, v: &[f32], n: u32, out: &mut MeshBuffer) -> MeshStats {
    m.mesh(&Grid::volume(v, [n; 3], 1.0), out);
    let mut s = if std::env::var("WELD").is_ok_and(|w| w == "1") {
        let (wp, wi) = loam_mesh::weld(&[([0.0; 3], &out.positions[..], &out.indices[..])], 0.0);
        mesh_stats(&wp, &wi)
    } else {
        mesh_stats(&out.positions, &out.indices)
    };
    let hi = (n - 1) as f32;
    let near = |p: [f32; 3]| p.iter().any(|&c| c <= 1.0 || c >= hi - 1.0);
    for (a, b) in boundary_edges(&out.indices) {
        if !(near(out.positions[a as usize]) && near(out.positions[b as usize])) {
            s.degenerate_triangles += 1;
            if std::env::var_os("SHOW").is_some() {
                println!(
                    "  open edge inside: {:?}-{:?}",
                    out.positions[a as usize], out.positions[b as usize]
                );
            }
        }
    }
    s
}

fn minimise(m: Mesher, mut v: Vec<f32>, n: u32, out: &mut MeshBuffer) -> Vec<f32> {
    loop {
        let mut changed = false;
        for i in 0..v.len() {
            // Only toward air (−1 → 0 → 1), so this ends.
            for to in [1.0, 0.0] {
                if to <= v[i] {
                    continue;
                }
                let old = v[i];
                v[i] = to;
                if bad(&check(m, &v, n, out)) {
                    changed = true;
                    break;
                }
                v[i] = old;
            }
        }
        if !changed {
            return v;
        }
    }
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let grids = args.first().copied().unwrap_or(1000);
    let mut z = args.get(1).copied().unwrap_or(0x9e37_79b9_7f4a_7c15) | 1;
    let n = args.get(2).copied().unwrap_or(5) as u32;
    let k = args.get(3).copied().unwrap_or(1);
    let mut out = MeshBuffer::default();
    let mut fails = [0usize; 4];
    let mut shown = [0usize; 4];
    for g in 0..grids {
        let v: Vec<f32> = (0..n * n * n)
            .map(|_| {
                z ^= z << 13;
                z ^= z >> 7;
                z ^= z << 17;
                ((z >> 32) % (2 * k + 1)) as f32 - k as f32
            })
            .collect();
        for (k, m) in Mesher::ALL.into_iter().enumerate() {
            let s = check(m, &v, n, &mut out);
            if bad(&s) {
                fails[k] += 1;
                if shown[k] < 2 {
                    shown[k] += 1;
                    let c = minimise(m, v.clone(), n, &mut out);
                    let s2 = check(m, &c, n, &mut out);
                    println!("grid {g} {m:?}: {s:?}\n  minimised: {s2:?}\n  {c:?}");
                    let mut seen: std::collections::BTreeMap<[u32; 3], Vec<usize>> =
                        Default::default();
                    for (i, p) in out.positions.iter().enumerate() {
                        seen.entry(p.map(f32::to_bits)).or_default().push(i);
                    }
                    for (_, v) in seen.iter().filter(|(_, v)| v.len() > 1) {
                        println!("  same position: {:?} {:?}", v, out.positions[v[0]]);
                    }
                    for (a, b) in nonmanifold_edges(&out.indices) {
                        let tris: Vec<_> = out
                            .indices
                            .chunks_exact(3)
                            .filter(|t| t.contains(&a) && t.contains(&b))
                            .map(|t| {
                                t.iter()
                                    .map(|&i| out.positions[i as usize])
                                    .collect::<Vec<_>>()
                            })
                            .collect();
                        println!(
                            "  edge {:?}-{:?}: {tris:?}",
                            out.positions[a as usize], out.positions[b as usize]
                        );
                    }
                }
            }
        }
    }
    println!("{grids} grids of {n}³ in −{k}..={k}; failing [mc, mc33, sn, dc]: {fails:?}");
}
