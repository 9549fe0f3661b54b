//! Searches random grids of only −1 and 0 (inside a layer of +1 air) for Surface Nets and Dual
//! Contouring meshes that are not closed, manifold and consistently oriented, and prints the
//! failing grids, minimised.
//!
//! `cargo run --release -p loam-mesh --example zero_grids [GRIDS] [SEED] [PERCENT_SOLID]`

use loam_mesh::{Grid, MeshBuffer, MeshStats, Mesher, mesh_stats};

const N: usize = 7;

fn bad(s: &MeshStats) -> bool {
    s.boundary_edges + s.nonmanifold_edges + s.misoriented_edges + s.degenerate_triangles > 0
}

fn check(m: Mesher, v: &[f32], dims: [u32; 3], out: &mut MeshBuffer) -> MeshStats {
    m.mesh(&Grid::volume(v, dims, 1.0), out);
    for n in &out.normals {
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((l - 1.0).abs() < 1e-5, "normal {n:?}");
    }
    mesh_stats(&out.positions, &out.indices)
}

/// Greedy: samples turned to +1 while the mesh stays bad, then cropped.
fn minimise(m: Mesher, mut v: Vec<f32>, out: &mut MeshBuffer) -> (Vec<f32>, [u32; 3]) {
    let d = [N as u32; 3];
    loop {
        let mut changed = false;
        for i in 0..v.len() {
            for to in [1.0, 0.0] {
                if v[i] == to || (to == 0.0 && v[i] == 1.0) {
                    continue;
                }
                let old = v[i];
                v[i] = to;
                if bad(&check(m, &v, d, out)) {
                    changed = true;
                    break;
                }
                v[i] = old;
            }
        }
        if !changed {
            break;
        }
    }
    // Crop to the box of non-+1 samples plus one layer of air.
    let (mut lo, mut hi) = ([N; 3], [0; 3]);
    for z in 0..N {
        for y in 0..N {
            for x in 0..N {
                if v[x + N * (y + N * z)] != 1.0 {
                    for (a, c) in [x, y, z].into_iter().enumerate() {
                        lo[a] = lo[a].min(c);
                        hi[a] = hi[a].max(c);
                    }
                }
            }
        }
    }
    let dims = [0, 1, 2].map(|a| (hi[a] - lo[a] + 3) as u32);
    let mut c = vec![1.0f32; dims.iter().map(|&d| d as usize).product()];
    for z in lo[2]..=hi[2] {
        for y in lo[1]..=hi[1] {
            for x in lo[0]..=hi[0] {
                let (i, j, k) = (x - lo[0] + 1, y - lo[1] + 1, z - lo[2] + 1);
                c[i + dims[0] as usize * (j + dims[1] as usize * k)] = v[x + N * (y + N * z)];
            }
        }
    }
    assert!(bad(&check(m, &c, dims, out)));
    (c, dims)
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("one") {
        // one MESHER FILE X,Y,Z: a grid of comma-separated values.
        let m = Mesher::from_name(&raw[1]).expect("mesher");
        let text = std::fs::read_to_string(&raw[2]).expect("file");
        let v: Vec<f32> = text
            .split(',')
            .map(|t| t.trim().parse().expect("value"))
            .collect();
        let d: Vec<u32> = raw[3]
            .split(',')
            .map(|t| t.parse().expect("size"))
            .collect();
        let mut out = MeshBuffer::default();
        let s = check(m, &v, [d[0], d[1], d[2]], &mut out);
        println!("{s:?}");
        let mut edges = std::collections::BTreeMap::<(u32, u32), Vec<(usize, bool)>>::new();
        for (t, tri) in out.indices.chunks_exact(3).enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                edges
                    .entry((a.min(b), a.max(b)))
                    .or_default()
                    .push((t, a < b));
            }
        }
        for (e, u) in &edges {
            let fw = u.iter().filter(|x| x.1).count();
            if u.len() != 2 || fw != 1 {
                println!(
                    "edge {e:?} {:?}-{:?}: {u:?}",
                    out.positions[e.0 as usize], out.positions[e.1 as usize]
                );
                for &(t, _) in u {
                    let tri = &out.indices[3 * t..3 * t + 3];
                    println!(
                        "   tri {t} {tri:?} {:?}",
                        tri.iter()
                            .map(|&i| out.positions[i as usize])
                            .collect::<Vec<_>>()
                    );
                }
            }
        }
        return;
    }
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let grids = args.first().copied().unwrap_or(10_000);
    let mut z = args.get(1).copied().unwrap_or(0x9e37_79b9_7f4a_7c15) | 1;
    // The share of −1 samples, percent.
    let solid = args.get(2).copied().unwrap_or(50);
    let mut out = MeshBuffer::default();
    let mut fails = [0usize; 4];
    let mut shown = 0;
    for g in 0..grids {
        let mut v = vec![1.0f32; N * N * N];
        for zz in 1..N - 1 {
            for y in 1..N - 1 {
                for x in 1..N - 1 {
                    z ^= z << 13;
                    z ^= z >> 7;
                    z ^= z << 17;
                    v[x + N * (y + N * zz)] = if (z >> 32) % 100 < solid { -1.0 } else { 0.0 };
                }
            }
        }
        for (k, m) in Mesher::ALL.into_iter().enumerate() {
            let s = check(m, &v, [N as u32; 3], &mut out);
            if bad(&s) {
                fails[k] += 1;
                if shown < 6 && matches!(m, Mesher::SurfaceNets | Mesher::DualContouring) {
                    shown += 1;
                    let (c, dims) = minimise(m, v.clone(), &mut out);
                    let s2 = check(m, &c, dims, &mut out);
                    println!("grid {g} {m:?}: {s:?}\n  minimised {dims:?}: {s2:?}\n  {c:?}");
                }
            }
        }
    }
    println!("{grids} grids; failing [mc, mc33, sn, dc]: {fails:?}");
}
