//! Chunks against one volume (issue 48): cases C09–C12 and random small-integer volumes meshed
//! whole and as 2 × 2 × 2 chunks, for every mesher. Chunk meshes are placed at their origin
//! (`origin + position` in f64, as the crack metric does) and welded by exact position.

use proptest::prelude::*;

use crate::util::*;
use loam_mesh::{CHUNK_HALO, Grid, MeshBuffer, MeshStats, Mesher, WeldPart, mesh_stats};

/// A field given at integer sample coordinates of the global grid.
type Samples<'a> = &'a dyn Fn([i64; 3]) -> f32;

/// A mesh and its origin in world metres.
type Placed = ([f64; 3], MeshBuffer);

/// Chunk `c` of `k` cells per side (halo `h`, voxel `vs`) in its own array, as the chunk
/// pipeline builds it: local position 0 at sample `k · c`.
fn chunk_of(m: Mesher, f: Samples, c: [i64; 3], k: u32, h: u32, vs: f32) -> Placed {
    let n = k + 1 + 2 * h;
    let mut values = Vec::with_capacity((n * n * n) as usize);
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let g = [x, y, z];
                values.push(f(
                    [0, 1, 2].map(|a| c[a] * i64::from(k) + i64::from(g[a]) - i64::from(h))
                ));
            }
        }
    }
    let grid = Grid {
        values: &values,
        materials: &[],
        dims: [n; 3],
        voxel_size: vs,
        origin: [h; 3],
        cells_min: [h; 3],
        cells_max: [h + k; 3],
        range: None,
    };
    let origin = c.map(|v| (v * i64::from(k)) as f64 * f64::from(vs));
    (origin, mesh(m, &grid))
}

/// A real chunk (32 cells, [`CHUNK_HALO`], voxel 1) of `f`.
fn chunk32(m: Mesher, f: Samples, c: [i64; 3]) -> Placed {
    chunk_of(m, f, c, 32, CHUNK_HALO, 1.0)
}

/// Samples `lo ..= hi` of `f` as one volume (voxel 1), placed at `lo`.
fn volume(m: Mesher, f: Samples, lo: [i64; 3], hi: [i64; 3]) -> Placed {
    let dims = [0, 1, 2].map(|a| (hi[a] - lo[a] + 1) as u32);
    let values = sample(dims, |x, y, z| {
        f64::from(f([x as i64 + lo[0], y as i64 + lo[1], z as i64 + lo[2]]))
    });
    (
        lo.map(|c| c as f64),
        mesh(m, &Grid::volume(&values, dims, 1.0)),
    )
}

/// The meshes welded by exact world position.
fn welded(parts: &[Placed]) -> (Vec<[f64; 3]>, Vec<u32>) {
    let parts: Vec<WeldPart> = parts
        .iter()
        .map(|(o, b)| (*o, &b.positions[..], &b.indices[..]))
        .collect();
    weld_exact(&parts)
}

fn welded_stats(parts: &[Placed]) -> MeshStats {
    let (p, i) = welded(parts);
    mesh_stats(&p, &i)
}

/// The triangles as world positions (f64 bits, −0 as +0), each rotated to start at its
/// least corner (winding kept), sorted.
fn triangles(parts: &[Placed]) -> Vec<[[u64; 3]; 3]> {
    let mut out = Vec::new();
    for (o, m) in parts {
        for t in m.indices.chunks_exact(3) {
            let p = [t[0], t[1], t[2]].map(|i| {
                let q = m.positions[i as usize];
                [0, 1, 2].map(|a| (o[a] + f64::from(q[a]) + 0.0).to_bits())
            });
            let k = (0..3).min_by_key(|&k| p[k]).expect("three corners");
            out.push([p[k], p[(k + 1) % 3], p[(k + 2) % 3]]);
        }
    }
    out.sort_unstable();
    out
}

/// Triangles with the same three positions as another (either winding).
fn duplicates(tris: &[[[u64; 3]; 3]]) -> usize {
    let mut sets: Vec<[[u64; 3]; 3]> = tris
        .iter()
        .map(|t| {
            let mut s = *t;
            s.sort_unstable();
            s
        })
        .collect();
    sets.sort_unstable();
    let n = sets.len();
    sets.dedup();
    n - sets.len()
}

/// The eight chunks 0..=1 per axis.
fn eight() -> impl Iterator<Item = [i64; 3]> {
    (0..8).map(|i| [i & 1, i >> 1 & 1, i >> 2 & 1])
}

/// C09: a 3×3×2 volume with an exact zero between solids, padded with air: no two triangles
/// with the same three positions (Surface Nets and Dual Contouring once made a back-to-back
/// pair through the zero), watertight and manifold, for every mesher.
#[test]
fn case_c09_exact_zero_tie_makes_no_double_sheet() {
    let layers = [
        [1.0, -1.0, -1.0, -1.0, 0.0, -1.0, -1.0, -1.0, 1.0],
        [1.0, -1.0, 1.0, -1.0, -1.0, -1.0, 1.0, -1.0, 1.0],
    ];
    let f = |g: [i64; 3]| -> f32 {
        let [x, y, z] = g.map(|c| c - 1);
        if (0..3).contains(&x) && (0..3).contains(&y) && (0..2).contains(&z) {
            layers[z as usize][(x + 3 * y) as usize]
        } else {
            1.0
        }
    };
    for m in Mesher::ALL {
        let whole = [volume(m, &f, [0; 3], [4, 4, 3])];
        let s = stats(&whole[0].1);
        assert!(s.triangles > 0, "{m:?}");
        assert_eq!(duplicates(&triangles(&whole)), 0, "{m:?}");
        assert_eq!(
            (s.boundary_edges, s.nonmanifold_edges, s.misoriented_edges),
            (0, 0, 0),
            "{m:?}: {s:?}"
        );
        // The same as one chunk-like grid whose range ends in air.
        let chunk = [chunk_of(m, &f, [0; 3], 5, 2, 1.0)];
        assert_eq!(triangles(&chunk), triangles(&whole), "{m:?}");
    }
}

/// C10's samples: +1 except a small solid with a sheet of zeros, across the chunk face y = 32.
fn c10(g: [i64; 3]) -> f32 {
    match g {
        [29, 31, 33] | [30, 31, 33] | [29, 33, 33] | [30, 33, 33] | [29, 31, 34] | [29, 33, 34] => {
            -1.0
        }
        [29, 32, 33] | [30, 32, 33] | [29, 32, 34] => 0.0,
        _ => 1.0,
    }
}

/// C10: a flat pair of triangles that one volume cancels, split across a chunk border: the
/// chunks, welded, give the one volume's 46 triangles, manifold (they gave 48, one
/// coincident pair and 3 edges used 4 times), for Marching Cubes and MC33 (and the dual
/// meshers: the same surface as one volume).
#[test]
fn case_c10_cancelled_pair_across_a_chunk_border() {
    for m in Mesher::ALL {
        let whole = [volume(m, &c10, [24; 3], [40; 3])];
        let chunks: Vec<Placed> = eight().map(|c| chunk32(m, &c10, c)).collect();
        let (w, c) = (stats(&whole[0].1), welded_stats(&chunks));
        let tw = triangles(&whole);
        assert_eq!(triangles(&chunks), tw, "{m:?}");
        assert_eq!(duplicates(&tw), 0, "{m:?}");
        for s in [&w, &c] {
            assert_eq!(
                (s.boundary_edges, s.nonmanifold_edges, s.misoriented_edges),
                (0, 0, 0),
                "{m:?}: {s:?}"
            );
        }
        if matches!(m, Mesher::MarchingCubes | Mesher::Mc33) {
            assert_eq!((w.triangles, c.triangles), (46, 46), "{m:?}");
        }
    }
}

/// C10's realistic form: flat ground at height 32 (a chunk face) and a box built on it:
/// chunks (0,0,0) and (0,1,0) with the rest of the 2 × 2 × 2 block, welded, are the one
/// volume's surface, with no coincident pair and no non-manifold edge (were 34 and 56).
#[test]
fn case_c10_box_built_on_ground_at_a_chunk_face() {
    let f = |g: [i64; 3]| -> f32 {
        let p = g.map(|c| c as f64);
        let ground = p[1] - 32.0;
        let q = [p[0] - 16.0, p[1] - 34.0, p[2] - 16.0];
        let e = [3.0, 2.0, 3.0];
        let d = [0, 1, 2].map(|a| q[a].abs() - e[a]);
        let outside = d.map(|c| c.max(0.0));
        let b = (outside[0] * outside[0] + outside[1] * outside[1] + outside[2] * outside[2])
            .sqrt()
            + d[0].max(d[1]).max(d[2]).min(0.0);
        ground.min(b).clamp(-2.0, 2.0) as f32
    };
    for m in Mesher::ALL {
        let whole = [volume(m, &f, [-2, 28, -2], [66, 40, 66])];
        let chunks: Vec<Placed> = [[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0]]
            .into_iter()
            .chain([[0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 1]])
            .map(|c| chunk32(m, &f, c))
            .collect();
        let tc = triangles(&chunks);
        assert_eq!(duplicates(&tc), 0, "{m:?}");
        // Welded by position, an edge where the box's side meets the ground is used by four
        // triangles for the dual meshers (two sheets touch there; each mesh has a vertex per
        // sheet, which a weld by position joins), as in the volume; never for MC and MC33.
        let (c, w) = (welded_stats(&chunks), welded_stats(&whole));
        assert_eq!(c.nonmanifold_edges, w.nonmanifold_edges, "{m:?}: {c:?}");
        if matches!(m, Mesher::MarchingCubes | Mesher::Mc33) {
            assert_eq!(c.nonmanifold_edges, 0, "{m:?}");
        }
        // Inside the chunks' 64 × 64 columns the chunked surface is the volume's.
        let inside = |t: &[[u64; 3]; 3]| {
            t.iter().all(|p| {
                let q = p.map(f64::from_bits);
                q[0] > 0.0 && q[0] < 64.0 && q[2] > 0.0 && q[2] < 64.0
            })
        };
        let tw: Vec<_> = triangles(&whole).into_iter().filter(inside).collect();
        let tc: Vec<_> = tc.into_iter().filter(inside).collect();
        assert!(tw.len() > 1000, "{m:?}: {}", tw.len());
        assert_eq!(tc, tw, "{m:?}");
    }
}

/// C11: Dual Contouring at a chunk face where one chunk once had a one-sided gradient: one
/// volume is closed with 34 triangles; chunks (0,1,0) and (0,1,1), welded exactly, are the
/// same closed surface (they left 4 open edges, even welded at 0.01 m).
#[test]
fn case_c11_dual_contouring_closed_across_a_chunk_face() {
    let f = |g: [i64; 3]| -> f32 {
        match g {
            [29, 33, 31] => -2.0,
            [29, 33, 32] | [30, 33, 33] => 0.0,
            [30, 33, 32] => -0.5,
            [29, 33, 33] => -1.5,
            _ => 0.5,
        }
    };
    let m = Mesher::DualContouring;
    let whole = [volume(m, &f, [24; 3], [40; 3])];
    let w = stats(&whole[0].1);
    assert_eq!((w.triangles, w.boundary_edges), (34, 0), "{w:?}");
    let chunks = [chunk32(m, &f, [0, 1, 0]), chunk32(m, &f, [0, 1, 1])];
    let c = welded_stats(&chunks);
    assert_eq!(
        (c.triangles, c.boundary_edges, c.nonmanifold_edges),
        (34, 0, 0),
        "{c:?}"
    );
    assert_eq!(triangles(&chunks), triangles(&whole));
}

/// C12: a ball of radius 12 built at (32, 16, 16) on ground far below: chunks (0,0,0) and
/// (1,0,0) meshed with Surface Nets and Dual Contouring make every vertex they share (the
/// dual vertices of the cells between them) as the same f32 triple in world space with the
/// same normal bits, so an exact weld closes the ball (copies once differed by 1.9e-6 m).
#[test]
fn case_c12_dual_border_vertices_are_bitwise_equal_in_world_space() {
    let f = |g: [i64; 3]| -> f32 {
        let p = g.map(|c| c as f64);
        let ball =
            ((p[0] - 32.0).powi(2) + (p[1] - 16.0).powi(2) + (p[2] - 16.0).powi(2)).sqrt() - 12.0;
        ball.min(p[1] + 1000.0) as f32
    };
    for m in [Mesher::SurfaceNets, Mesher::DualContouring] {
        let parts = [chunk32(m, &f, [0, 0, 0]), chunk32(m, &f, [1, 0, 0])];
        // World positions and normals (bits) of vertices in the cells x ∈ [31, 32].
        let shared = |(o, b): &Placed| -> Vec<([u32; 3], [u32; 3])> {
            let mut v: Vec<_> = b
                .positions
                .iter()
                .zip(&b.normals)
                .filter_map(|(p, n)| {
                    let w = [0, 1, 2].map(|a| o[a] + f64::from(p[a]));
                    // The world position as f32 is exact (voxel 1, origins multiples of 32).
                    let w32 = w.map(|c| c as f32);
                    assert_eq!(w32.map(f64::from), w, "{m:?}: not exact in f32");
                    (w[0] >= 31.0 && w[0] <= 32.0)
                        .then(|| (w32.map(f32::to_bits), n.map(f32::to_bits)))
                })
                .collect();
            v.sort_unstable();
            v
        };
        let (a, b) = (shared(&parts[0]), shared(&parts[1]));
        // Each chunk keeps the vertices its own triangles use; where both keep one, the two
        // are the same point with the same normal.
        let mut matched = 0;
        for (p, n) in &b {
            if let Some((_, na)) = a.iter().find(|(q, _)| q == p) {
                assert_eq!(na, n, "{m:?}: normal bits differ at {p:?}");
                matched += 1;
            }
        }
        assert!(matched > 80, "{m:?}: {matched} shared vertices");
        let s = welded_stats(&parts);
        assert_eq!(
            (s.boundary_edges, s.nonmanifold_edges, s.components),
            (0, 0, 1),
            "{m:?}: {s:?}"
        );
    }
}

/// Side of a random volume's interior (samples 1 ..= 7; a layer of air around it).
const SIDE: i64 = 7;

/// The field of a random volume: `value − iso` inside, +1 (air) around it.
fn random_field(values: &[i8], iso: i8) -> impl Fn([i64; 3]) -> f32 + '_ {
    move |g: [i64; 3]| {
        if g.iter().all(|&c| (1..=SIDE).contains(&c)) {
            let [x, y, z] = g.map(|c| c - 1);
            f32::from(values[(x + SIDE * (y + SIDE * z)) as usize] - iso)
        } else {
            1.0
        }
    }
}

/// One array holding samples −16 ..= 11 of `f` per axis (index = sample + 16), and the grid
/// meshing `k` cells from sample `k · c` with local position 0 there. Marching Cubes' positions
/// are `(index + t − origin) · voxel` in f32 (pinned by the mesh hashes), so a chunk and the
/// volume agree bit for bit where they index one array, as every pair of chunks sharing a face
/// does along it; all indices here lie in [14, 28] with origins 16 or 20, so the difference
/// is exact.
struct Shared {
    values: Vec<f32>,
}

const SHARED_O: u32 = 16;
const SHARED_D: u32 = SHARED_O + 12;

impl Shared {
    fn new(f: Samples) -> Self {
        let d = SHARED_D;
        let mut values = Vec::with_capacity((d * d * d) as usize);
        for z in 0..d {
            for y in 0..d {
                for x in 0..d {
                    values.push(f([x, y, z].map(|c| i64::from(c) - i64::from(SHARED_O))));
                }
            }
        }
        Self { values }
    }

    fn mesh(&self, m: Mesher, c: [i64; 3], k: u32) -> Placed {
        let lo = c.map(|v| SHARED_O + v as u32 * k);
        let grid = Grid {
            values: &self.values,
            materials: &[],
            dims: [SHARED_D; 3],
            voxel_size: 1.0,
            origin: lo,
            cells_min: lo,
            cells_max: lo.map(|v| v + k),
            range: None,
        };
        (c.map(|v| (v * i64::from(k)) as f64), mesh(m, &grid))
    }
}

/// The whole volume (8 cells per side) and its 2 × 2 × 2 chunks of 4 cells. Surface Nets and
/// Dual Contouring: each in its own array (halo 2), as the chunk pipeline builds them; the
/// Marching Cubes meshers: cell ranges of one array ([`Shared`]).
fn whole_and_chunks(m: Mesher, f: Samples, shared: &Shared) -> (Placed, Vec<Placed>) {
    match m {
        Mesher::MarchingCubes | Mesher::Mc33 => (
            shared.mesh(m, [0; 3], 8),
            eight().map(|c| shared.mesh(m, c, 4)).collect(),
        ),
        _ => (
            chunk_of(m, f, [0; 3], 8, 2, 1.0),
            eight().map(|c| chunk_of(m, f, c, 4, 2, 1.0)).collect(),
        ),
    }
}

fn random_volume() -> impl Strategy<Value = (Vec<i8>, usize)> {
    (
        prop::collection::vec(-2i8..=2, (SIDE * SIDE * SIDE) as usize),
        0..(SIDE * SIDE * SIDE) as usize,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    /// Random small-integer volumes, the iso a value present in them: meshed whole and as
    /// 2 × 2 × 2 chunks, every mesher's mesh is watertight and manifold without duplicate
    /// triangles, and the chunks, welded by exact world position, are watertight and their
    /// triangles the volume's — for Surface Nets and Dual Contouring the whole volume's
    /// watertight and manifold mesh only here, see
    /// `dual_contouring_chunked_rarely_differs`.
    #[test]
    fn random_volumes_mesh_the_same_whole_and_chunked((values, at) in random_volume()) {
        let iso = values[at];
        let f = random_field(&values, iso);
        let shared = Shared::new(&f);
        for m in Mesher::ALL {
            let (whole, chunks) = whole_and_chunks(m, &f, &shared);
            let w = stats(&whole.1);
            prop_assert_eq!(
                (w.boundary_edges, w.nonmanifold_edges, w.misoriented_edges, w.degenerate_triangles),
                (0, 0, 0, 0), "{:?}: {:?}", m, w
            );
            if matches!(m, Mesher::MarchingCubes | Mesher::Mc33) {
                let tw = triangles(&[whole]);
                prop_assert_eq!(duplicates(&tw), 0, "{:?}", m);
                let c = welded_stats(&chunks);
                prop_assert_eq!((c.boundary_edges, c.misoriented_edges), (0, 0), "{:?}: {:?}", m, c);
                prop_assert!(triangles(&chunks) == tw, "{:?}: chunked differs from whole", m);
            }
        }
    }
}

/// Surface Nets and Dual Contouring, chunked against whole, on 5 000 seeded random volumes
/// as above: the chunks' triangles are the volume's on all but a few, where the clean-up
/// (sliver splitting, most likely) still takes a decision near a chunk border that the chunk
/// across takes otherwise (e.g. a flat pocket of 4 triangles one chunk keeps, which can leave
/// open edges once welded), and where one volume's mesh holds two triangles with the same
/// three positions (C09's kind, left in a few volumes). Measured: see the bounds (before the ghost shell, 4 in 5 of the
/// volumes differed for both). The bounds make a regression fail; the open item is recorded
/// in issue 48.
#[test]
fn dual_meshers_chunked_rarely_differ() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as u32
    };
    let n = (SIDE * SIDE * SIDE) as usize;
    let meshers = [Mesher::SurfaceNets, Mesher::DualContouring];
    let (mut differ, mut open, mut doubled) = ([0; 2], [0; 2], [0; 2]);
    for _ in 0..5000 {
        let values: Vec<i8> = (0..n).map(|_| (next() % 5) as i8 - 2).collect();
        let iso = values[next() as usize % n];
        let f = random_field(&values, iso);
        for (k, m) in meshers.into_iter().enumerate() {
            let whole = [chunk_of(m, &f, [0; 3], 8, 2, 1.0)];
            let chunks: Vec<Placed> = eight().map(|c| chunk_of(m, &f, c, 4, 2, 1.0)).collect();
            let tw = triangles(&whole);
            doubled[k] += usize::from(duplicates(&tw) > 0);
            differ[k] += usize::from(triangles(&chunks) != tw);
            open[k] += usize::from(welded_stats(&chunks).boundary_edges > 0);
        }
    }
    println!("of 5000, {meshers:?}: differ {differ:?}, open {open:?}, doubled {doubled:?}");
    assert!(differ[0] <= 4 && differ[1] <= 12, "differ {differ:?}");
    assert!(
        open[0] <= differ[0] && open[1] <= differ[1],
        "open {open:?}"
    );
}
