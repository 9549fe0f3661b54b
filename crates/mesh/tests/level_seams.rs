//! Surface Nets and Dual Contouring across levels of detail: chunks of two levels tiling a
//! box, each meshed with its neighbours' levels, weld into one closed surface.

use loam_mesh::{
    CHUNK_CELLS, Grid, LevelNeighbours, MeshBuffer, dual_contouring_lod, mesh_stats,
    surface_nets_lod, weld,
};

const HALO: i64 = 2;

/// A chunk: level and coordinates in chunks of its level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    level: u32,
    c: [i64; 3],
}

impl Key {
    fn stride(self) -> i64 {
        1 << self.level
    }
    fn min(self) -> [i64; 3] {
        self.c.map(|v| v * i64::from(CHUNK_CELLS) * self.stride())
    }
}

/// The leaves of an octree over `2×2×2` chunks of level `top`, split at random (`seed`)
/// and then balanced (chunks touching by a face, an edge or a corner differ by at most one
/// level), each with its neighbours' levels.
fn random_tiling(top: u32, seed: u64) -> Vec<(Key, LevelNeighbours)> {
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut leaves: std::collections::BTreeSet<Key> = (0..8i64)
        .map(|i| Key {
            level: top,
            c: [i & 1, i >> 1 & 1, i >> 2],
        })
        .collect();
    let children = |k: Key| {
        (0..8i64).map(move |j| Key {
            level: k.level - 1,
            c: [0, 1, 2].map(|a| 2 * k.c[a] + (j >> a & 1)),
        })
    };
    for _ in 0..top {
        let split: Vec<Key> = leaves
            .iter()
            .copied()
            .filter(|k| k.level > 0 && next().is_multiple_of(3))
            .collect();
        for k in split {
            leaves.remove(&k);
            leaves.extend(children(k));
        }
    }
    // The leaf covering level-`l` chunk `c`, if one does (at level ≥ l).
    let cover = |leaves: &std::collections::BTreeSet<Key>, l: u32, c: [i64; 3]| {
        (l..=top).find_map(|m| {
            let k = Key {
                level: m,
                c: c.map(|v| v >> (m - l)),
            };
            leaves.contains(&k).then_some(k)
        })
    };
    let inside = |l: u32, c: [i64; 3]| c.iter().all(|&v| v >= 0 && v < 2i64 << (top - l));
    loop {
        let mut split = Vec::new();
        for &k in &leaves {
            for d in dirs() {
                let n = [0, 1, 2].map(|a| k.c[a] + i64::from(d[a]));
                if inside(k.level, n) && k.level >= 2 && cover(&leaves, k.level, n).is_none() {
                    // Split finer than one level below: is any grandchild region split?
                    let fine = (0..8i64).any(|j| {
                        let g = [0, 1, 2].map(|a| 2 * n[a] + (j >> a & 1));
                        cover(&leaves, k.level - 1, g).is_none()
                    });
                    if fine {
                        split.push(k);
                        break;
                    }
                }
            }
        }
        if split.is_empty() {
            break;
        }
        for k in split {
            if leaves.remove(&k) {
                leaves.extend(children(k));
            }
        }
    }
    leaves
        .iter()
        .map(|&k| {
            let mut n = LevelNeighbours::default();
            for d in dirs() {
                let c = [0, 1, 2].map(|a| k.c[a] + i64::from(d[a]));
                if !inside(k.level, c) {
                    continue;
                }
                match cover(&leaves, k.level, c) {
                    Some(x) if x.level > k.level => n.coarser |= LevelNeighbours::bit(d),
                    Some(_) => {}
                    None => n.finer |= LevelNeighbours::bit(d),
                }
            }
            (k, n)
        })
        .collect()
}

/// A tiling of `2×2×2` level-1 chunks, those whose bit in `split` is set split into eight
/// level-0 chunks; each leaf with its neighbours' levels.
fn tiling(split: u8) -> Vec<(Key, LevelNeighbours)> {
    let is_split = |c: [i64; 3]| {
        (0..3).all(|a| (0..2).contains(&c[a])) && split >> (c[0] + 2 * c[1] + 4 * c[2]) & 1 != 0
    };
    let mut out = Vec::new();
    for i in 0..8i64 {
        let c = [i & 1, i >> 1 & 1, i >> 2];
        if is_split(c) {
            for j in 0..8i64 {
                let k = Key {
                    level: 0,
                    c: [0, 1, 2].map(|a| 2 * c[a] + (j >> a & 1)),
                };
                let mut n = LevelNeighbours::default();
                for d in dirs() {
                    let nc = [0, 1, 2].map(|a| k.c[a] + i64::from(d[a]));
                    let parent = nc.map(|v| v.div_euclid(2));
                    let inside = (0..3).all(|a| (0..2).contains(&parent[a]));
                    if inside && !is_split(parent) {
                        n.coarser |= LevelNeighbours::bit(d);
                    }
                }
                out.push((k, n));
            }
        } else {
            let k = Key { level: 1, c };
            let mut n = LevelNeighbours::default();
            for d in dirs() {
                let nc = [0, 1, 2].map(|a| c[a] + i64::from(d[a]));
                if is_split(nc) {
                    n.finer |= LevelNeighbours::bit(d);
                }
            }
            out.push((k, n));
        }
    }
    out
}

fn dirs() -> impl Iterator<Item = [i32; 3]> {
    (0..27)
        .map(|d| [d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1])
        .filter(|d| *d != [0; 3])
}

/// Meshes every chunk of `tiling(split)` with `mesher` over `field` (level-0 sample
/// coordinates, 1 m voxels) and welds them by exact position: the stats of the whole.
fn mesh_all(split: u8, field: &dyn Fn([i64; 3]) -> f32, dc: bool) -> loam_mesh::MeshStats {
    mesh_tiling(&tiling(split), field, dc)
}

/// Meshes every chunk of `tiles` and welds them by exact position: the stats of the whole.
fn mesh_tiling(
    tiles: &[(Key, LevelNeighbours)],
    field: &dyn Fn([i64; 3]) -> f32,
    dc: bool,
) -> loam_mesh::MeshStats {
    let n = CHUNK_CELLS as i64 + 1 + 2 * HALO;
    let mut meshes: Vec<([f64; 3], MeshBuffer)> = Vec::new();
    for &(key, levels) in tiles {
        let s = key.stride();
        let m = key.min();
        let lo = m.map(|v| v - HALO * s);
        let mut values = Vec::with_capacity((n * n * n) as usize);
        for z in 0..n {
            for y in 0..n {
                for x in 0..n {
                    values.push(field([lo[0] + x * s, lo[1] + y * s, lo[2] + z * s]));
                }
            }
        }
        let grid = Grid::chunk(&values, &[], HALO as u32, s as f32);
        // Fine points: half a grid cell each, from the grid's sample 0.
        let fine = |p: [i32; 3]| {
            assert!(s >= 2, "a level-0 chunk has no finer neighbour");
            (
                field([0, 1, 2].map(|a| lo[a] + i64::from(p[a]) * s / 2)),
                0u8,
            )
        };
        let mut mesh = MeshBuffer::default();
        if dc {
            dual_contouring_lod(&grid, levels, &fine, &mut mesh);
        } else {
            surface_nets_lod(&grid, levels, &fine, &mut mesh);
        }
        meshes.push((m.map(|v| v as f64), mesh));
    }
    let parts: Vec<_> = meshes
        .iter()
        .map(|(o, m)| (*o, &m.positions[..], &m.indices[..]))
        .collect();
    let (p, i) = weld(&parts, 0.0);
    mesh_stats(&p, &i)
}

/// A ball of radius 40 m at the middle of the 128 m box, with ripples.
fn ball(p: [i64; 3]) -> f32 {
    let q = p.map(|v| v as f64 - 64.3);
    let r = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
    let ripple = 2.5 * (q[0] * 0.31).sin() * (q[1] * 0.23).cos() + 1.5 * (q[2] * 0.47).sin();
    (r - 40.0 + ripple) as f32
}

#[test]
fn a_ball_across_two_levels_is_closed_for_every_split() {
    for dc in [false, true] {
        for split in [
            0u8,
            1,
            0b1000_0001,
            0b0110_1001,
            0b0111_1111,
            0xff,
            0b0001_0110,
        ] {
            let s = mesh_all(split, &ball, dc);
            assert!(s.triangles > 1000, "{s:?}");
            assert_eq!(
                (s.boundary_edges, s.misoriented_edges),
                (0, 0),
                "dc {dc}, split {split:08b}: {s:?}"
            );
        }
    }
}

/// A slab 12 samples thick across the box (closed at its sides), its faces rough: a third of
/// its samples random, small integers (`ties`: zeros, ties and ambiguous faces everywhere) or
/// fractions.
fn rough_slab(seed: u64, size: i64, ties: bool) -> impl Fn([i64; 3]) -> f32 {
    move |p: [i64; 3]| {
        let dy = (p[1] - size / 2).abs();
        if [p[0], p[2]].iter().any(|&v| v < 24 || v > size - 24) || dy > 12 {
            return 1.0;
        }
        let mut h = seed ^ 0x517c_c1b7_2722_0a95;
        for v in p {
            h = (h ^ v as u64).wrapping_mul(0x100_0000_01b3);
            h ^= h >> 29;
        }
        if !h.is_multiple_of(3) {
            ((dy - 6) as f32 / 2.0).clamp(-2.0, 2.0) + if ties { 0.0 } else { 0.013 }
        } else if ties {
            (h >> 8) as f32 % 5.0 - 2.0
        } else {
            ((h >> 8) % 4001) as f32 / 1000.0 - 2.0 + 0.000_37
        }
    }
}

/// Random octrees of three levels (balanced 2:1), meshed chunk by chunk with their
/// neighbours' levels: a ball and rough slabs (with and without ties) weld closed, with every
/// edge used once each way.
#[test]
fn random_tilings_of_three_levels_weld_closed() {
    // More with LEVEL_SEAM_SEEDS=n (a release build meshes 6 in about 15 s).
    let seeds = std::env::var("LEVEL_SEAM_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 2 } else { 6 });
    for seed in 0..seeds {
        let tiles = random_tiling(2, seed);
        let levels: std::collections::BTreeSet<u32> = tiles.iter().map(|t| t.0.level).collect();
        for dc in [false, true] {
            let ball2 = |p: [i64; 3]| ball(p.map(|v| v / 2));
            for (name, s) in [
                ("ball", mesh_tiling(&tiles, &ball2, dc)),
                (
                    "slab",
                    mesh_tiling(&tiles, &rough_slab(seed, 256, false), dc),
                ),
                (
                    "slab with ties",
                    mesh_tiling(&tiles, &rough_slab(seed, 256, true), dc),
                ),
            ] {
                let what = format!("seed {seed}, levels {levels:?}, dc {dc}, {name}: {s:?}");
                assert!(s.triangles > 1000, "{what}");
                assert_eq!((s.boundary_edges, s.misoriented_edges), (0, 0), "{what}");
            }
        }
    }
}
