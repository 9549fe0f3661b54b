//! Transvoxel (issue 11): a coarse chunk (32³ cells of 2 m) with every combination of
//! transition faces, and its fine neighbours (32³ cells of 1 m, four per face) meshed with
//! regular cells, weld with no open edge except on the outer box; a closed sphere across the
//! boundary is watertight; the meshes match the `transvoxel` crate's on the same blocks.

use std::collections::BTreeMap;
use std::f64::consts::PI;

use crate::util::*;
use loam_mesh::transvoxel::{
    Face, FineFace, Transitions, fine_face_dims, fine_face_sample, transvoxel,
};
use loam_mesh::{Grid, MeshBuffer, WeldPart, marching_cubes, mesh_stats, weld};

/// Coarse voxel size (m); the fine neighbours have half of it.
const VS: f32 = 2.0;

/// A field on the fine lattice (1 m): `f(x, y, z)` at integer metres.
type Field<'a> = &'a dyn Fn(i64, i64, i64) -> f32;

/// Hills (a plane with sines) with a floating ball across the top face and a cave across the
/// bottom face: crosses all six faces of the coarse chunk `[0, 64]³`.
fn terrain(x: i64, y: i64, z: i64) -> f32 {
    let (x, y, z) = (x as f64, y as f64, z as f64);
    let hills = y - 30.0 - 5.0 * (0.13 * x + 0.4).sin() * (0.11 * z).cos();
    let ball = sphere([40.3, 61.7, 22.2], 9.0)(x, y, z);
    let cave = sphere([22.4, 2.3, 41.1], 11.0)(x, y, z);
    hills.min(ball).max(-cave) as f32
}

/// A coarse chunk grid (halo 1) of `f`, local origin at world 0.
fn coarse_values(f: Field) -> Vec<f32> {
    let n = 35u32;
    let mut v = Vec::with_capacity((n * n * n) as usize);
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let c = [x, y, z].map(|i| 2 * (i as i64 - 1));
                v.push(f(c[0], c[1], c[2]));
            }
        }
    }
    v
}

/// The fine samples of `face` of the coarse chunk.
fn slab(grid: &Grid, face: Face, f: Field) -> Vec<f32> {
    let d = fine_face_dims(grid, face);
    let mut v = Vec::new();
    for c in 0..d[2] {
        for b in 0..d[1] {
            for a in 0..d[0] {
                let p = fine_face_sample(grid, face, [a, b, c]);
                v.push(f(p[0] as i64, p[1] as i64, p[2] as i64));
            }
        }
    }
    v
}

/// The four fine chunks (origins in metres) across `face` of the coarse chunk `[0, 64]³`.
fn fine_chunks(face: Face) -> Vec<[i64; 3]> {
    let n = face.axis();
    let [u, v] = face.lateral();
    (0..4)
        .map(|k| {
            let mut o = [0i64; 3];
            o[n] = if face.is_high() { 64 } else { -32 };
            o[u] = 32 * (k & 1);
            o[v] = 32 * (k >> 1);
            o
        })
        .collect()
}

/// A fine chunk at world origin `o` (metres), meshed with regular cells.
fn fine_mesh(o: [i64; 3], f: Field) -> MeshBuffer {
    let v = sample([35; 3], |x, y, z| {
        f64::from(f(
            o[0] + x as i64 - 1,
            o[1] + y as i64 - 1,
            o[2] + z as i64 - 1,
        ))
    });
    let mut out = MeshBuffer::default();
    transvoxel(
        &Grid::chunk(&v, &[], 1, 1.0),
        &Transitions::default(),
        &mut out,
    );
    out
}

/// The coarse chunk meshed with transition faces `mask`.
fn coarse_mesh(f: Field, mask: u8, width: f32) -> MeshBuffer {
    let values = coarse_values(f);
    let grid = Grid::chunk(&values, &[], 1, VS);
    let slabs: Vec<Vec<f32>> = Face::ALL.iter().map(|&fc| slab(&grid, fc, f)).collect();
    let mut t = Transitions {
        width,
        ..Transitions::default()
    };
    for fc in Face::ALL {
        if mask & fc.bit() != 0 {
            t = t.with(
                fc,
                FineFace {
                    values: &slabs[fc as usize],
                    materials: &[],
                },
            );
        }
    }
    let mut out = MeshBuffer::default();
    transvoxel(&grid, &t, &mut out);
    out
}

/// The coarse chunk with `mask` and its fine neighbours, welded with tolerance 0 (bitwise equal
/// positions only). Returns positions, indices and the boxes (min, max in metres).
struct Scene {
    positions: Vec<[f64; 3]>,
    indices: Vec<u32>,
    boxes: Vec<([f64; 3], [f64; 3])>,
}

fn scene(
    coarse: &MeshBuffer,
    fine: &BTreeMap<[i64; 3], MeshBuffer>,
    mask: u8,
    loam_weld: bool,
) -> Scene {
    let mut parts: Vec<WeldPart> = vec![([0.0; 3], &coarse.positions, &coarse.indices)];
    let mut boxes = vec![([0.0; 3], [64.0; 3])];
    for fc in Face::ALL {
        if mask & fc.bit() != 0 {
            for o in fine_chunks(fc) {
                let m = &fine[&o];
                let of = o.map(|c| c as f64);
                parts.push((of, &m.positions, &m.indices));
                boxes.push((of, of.map(|c| c + 32.0)));
            }
        }
    }
    let (positions, indices) = if loam_weld {
        weld(&parts, 0.0)
    } else {
        weld_exact(&parts)
    };
    Scene {
        positions,
        indices,
        boxes,
    }
}

/// Edges used by one triangle that are not on the outer boundary of the union of the boxes.
fn inner_open_edges(s: &Scene) -> Vec<([f64; 3], [f64; 3])> {
    let inside = |p: [f64; 3]| {
        s.boxes
            .iter()
            .any(|(lo, hi)| (0..3).all(|a| p[a] >= lo[a] && p[a] <= hi[a]))
    };
    // On the outer boundary: a small step in some direction leaves every box.
    let outer = |p: [f64; 3]| {
        (0..27).any(|k| {
            let d = [k % 3, k / 3 % 3, k / 9].map(|c| (c as f64 - 1.0) * 1e-3);
            !inside([p[0] + d[0], p[1] + d[1], p[2] + d[2]])
        })
    };
    loam_mesh::boundary_edges(&s.indices)
        .into_iter()
        .map(|(a, b)| (s.positions[a as usize], s.positions[b as usize]))
        .filter(|&(a, b)| {
            let m = [0, 1, 2].map(|k| 0.5 * (a[k] + b[k]));
            !(outer(a) && outer(b) && outer(m))
        })
        .collect()
}

fn all_fine(f: Field) -> BTreeMap<[i64; 3], MeshBuffer> {
    Face::ALL
        .iter()
        .flat_map(|&fc| fine_chunks(fc))
        .map(|o| {
            let m = fine_mesh(o, f);
            assert_unit_normals(&m, "fine chunk");
            (o, m)
        })
        .collect()
}

/// Every combination of transition faces welds to the fine neighbours with no open edge
/// inside the box, no non-manifold or misoriented edge and no degenerate triangle.
fn check_all_masks(f: Field, width: f32, what: &str) {
    let fine = all_fine(f);
    let regular = coarse_mesh(f, 0, width);
    for mask in 0..64u8 {
        let coarse = coarse_mesh(f, mask, width);
        assert_unit_normals(&coarse, what);
        let s = scene(&coarse, &fine, mask, false);
        let st = mesh_stats(&s.positions, &s.indices);
        let open = inner_open_edges(&s);
        assert!(
            open.is_empty(),
            "{what}, mask {mask:06b}: {} open edges inside, first {:?}",
            open.len(),
            &open[..open.len().min(4)]
        );
        assert_eq!(
            (
                st.nonmanifold_edges,
                st.misoriented_edges,
                st.degenerate_triangles
            ),
            (0, 0, 0),
            "{what}, mask {mask:06b}: {st:?}"
        );
        let sc = mesh_stats(&coarse.positions, &coarse.indices);
        assert_eq!(sc.degenerate_triangles, 0, "{what}, mask {mask:06b}");
        if mask != 0 {
            assert!(coarse.triangle_count() > regular.triangle_count(), "{what}");
        }
    }
}

#[test]
fn terrain_welds_for_every_transition_mask() {
    check_all_masks(&terrain, 0.5, "terrain");
}

#[test]
fn terrain_welds_with_a_narrow_transition() {
    check_all_masks(&terrain, 0.15, "terrain w=0.15");
}

/// Random samples on the fine lattice, some exactly 0: every ambiguous face, on the coarse
/// grid and on the fine faces, must be cut the same way by both sides.
#[test]
fn random_field_welds_for_every_transition_mask() {
    fn random(x: i64, y: i64, z: i64) -> f32 {
        // Random within 2 m of the coarse chunk's faces, air elsewhere (keeps meshes small).
        let near = |c: i64| c.abs() <= 2 || (c - 64).abs() <= 2;
        let within = |c: i64| (-2..=66).contains(&c);
        if !((near(x) || near(y) || near(z)) && within(x) && within(y) && within(z)) {
            return 1.0;
        }
        let mut h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (z as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        match h % 16 {
            0 => 0.0,
            k => (k as f32 - 8.0) / 8.0 + (h >> 40) as f32 * 1e-9,
        }
    }
    check_all_masks(&random, 0.5, "random");
}

/// On the shared face, the coarse chunk's transition vertices are the fine chunk's border
/// vertices, positions and normals bit for bit.
#[test]
fn transition_vertices_equal_fine_border_vertices_bitwise() {
    let f: Field = &terrain;
    let fine = all_fine(f);
    let coarse = coarse_mesh(f, 0b11_1111, 0.5);
    let key = |p: [f64; 3]| p.map(f64::to_bits);
    let mut fine_vertices = BTreeMap::new();
    for (o, m) in &fine {
        for (p, n) in m.positions.iter().zip(&m.normals) {
            let w = [0, 1, 2].map(|a| o[a] as f64 + f64::from(p[a]));
            fine_vertices.insert(key(w), *n);
        }
    }
    let mut matched = 0;
    for (p, n) in coarse.positions.iter().zip(&coarse.normals) {
        let on_face = p.iter().any(|&c| c == 0.0 || c == 64.0);
        if !on_face {
            continue;
        }
        let w = p.map(f64::from);
        if let Some(fnorm) = fine_vertices.get(&key(w)) {
            assert_eq!(
                n.map(f32::to_bits),
                fnorm.map(f32::to_bits),
                "normal at {p:?}"
            );
            matched += 1;
        }
    }
    // Every face is crossed; hundreds of vertices lie on them.
    assert!(matched > 300, "{matched} shared vertices");
}

/// A sphere centred on each face of the coarse chunk, half in the fine neighbours: watertight,
/// with the analytic area and volume.
#[test]
fn sphere_across_a_level_boundary_is_watertight() {
    let r = 20.0;
    for face in Face::ALL {
        let mut c = [32.0f64; 3];
        c[face.axis()] = if face.is_high() { 64.0 } else { 0.0 };
        // Off the lattice so no sample is exactly on the surface.
        let c = [c[0] + 0.31, c[1] - 0.27, c[2] + 0.13];
        let f = move |x: i64, y: i64, z: i64| sphere(c, r)(x as f64, y as f64, z as f64) as f32;
        let fine: BTreeMap<[i64; 3], MeshBuffer> = fine_chunks(face)
            .into_iter()
            .map(|o| (o, fine_mesh(o, &f)))
            .collect();
        let coarse = coarse_mesh(&f, face.bit(), 0.5);
        let s = scene(&coarse, &fine, face.bit(), true);
        let st = mesh_stats(&s.positions, &s.indices);
        assert_eq!(
            (
                st.boundary_edges,
                st.nonmanifold_edges,
                st.misoriented_edges
            ),
            (0, 0, 0),
            "{face:?}: {st:?}"
        );
        assert_eq!((st.components, st.euler), (1, 2), "{face:?}");
        let v = st.volume.expect("closed");
        let (va, aa) = (4.0 / 3.0 * PI * r * r * r, 4.0 * PI * r * r);
        assert!((v / va - 1.0).abs() < 0.03, "{face:?}: volume {v} vs {va}");
        assert!(
            (st.area / aa - 1.0).abs() < 0.03,
            "{face:?}: area {} vs {aa}",
            st.area
        );
    }
}

/// Transition faces that the surface does not reach change nothing, and the regular mesh is
/// Marching Cubes up to the tables' triangulation and the cut rounding.
#[test]
fn no_transition_faces_is_a_regular_mesh() {
    // A ball inside the chunk, clear of its border cells.
    let f = |x: i64, y: i64, z: i64| {
        sphere([30.3, 33.1, 31.7], 20.0)(x as f64, y as f64, z as f64) as f32
    };
    let regular = coarse_mesh(&f, 0, 0.5);
    let all_faces = coarse_mesh(&f, 0b11_1111, 0.5);
    assert_eq!(regular.positions, all_faces.positions);
    assert_eq!(regular.indices, all_faces.indices);
    assert_eq!(regular.normals, all_faces.normals);
    let values = coarse_values(&f);
    let mut mc = MeshBuffer::default();
    marching_cubes(&Grid::chunk(&values, &[], 1, VS), &mut mc);
    assert_eq!(regular.positions.len(), mc.positions.len());
    let (sr, sm) = (stats(&regular), stats(&mc));
    assert_eq!((sr.boundary_edges, sr.components, sr.euler), (0, 1, 2));
    assert!(
        (sr.area / sm.area - 1.0).abs() < 1e-3,
        "{} vs {}",
        sr.area,
        sm.area
    );
    // Same vertices, each within the cut rounding (1/65536 of a 2 m edge).
    let sorted = |b: &MeshBuffer| {
        let mut p = b.positions.clone();
        p.sort_by(|a, b| a.partial_cmp(b).unwrap());
        p
    };
    for (a, b) in sorted(&regular).iter().zip(&sorted(&mc)) {
        for k in 0..3 {
            assert!(
                (a[k] - b[k]).abs() <= 2.0 / 65536.0 + 1e-5,
                "{a:?} vs {b:?}"
            );
        }
    }
}

/// Coarse samples on a transition face that contradict the fine ones in sign are replaced by
/// the fine ones: the mesh is the one of the consistent grid.
#[test]
fn coarse_samples_that_contradict_the_fine_ones_give_way() {
    let f: Field = &terrain;
    let values = coarse_values(f);
    let grid = Grid::chunk(&values, &[], 1, VS);
    let s = slab(&grid, Face::NegX, f);
    let t = Transitions::default().with(
        Face::NegX,
        FineFace {
            values: &s,
            materials: &[],
        },
    );
    let mut good = MeshBuffer::default();
    transvoxel(&grid, &t, &mut good);
    // Flip every coarse sample on the face plane x = 0 (grid index 1).
    let mut bad_values = values.clone();
    for z in 1..34 {
        for y in 1..34 {
            let i = grid.index(1, y, z);
            bad_values[i] = -bad_values[i];
        }
    }
    let mut bad = MeshBuffer::default();
    transvoxel(&Grid::chunk(&bad_values, &[], 1, VS), &t, &mut bad);
    assert_eq!(bad.positions, good.positions);
    assert_eq!(bad.indices, good.indices);
    assert_eq!(bad.normals, good.normals);
}

/// The `transvoxel` crate (2.0, Gnurfos/transvoxel_rs) on the same block: 32³ cells of 2 m at
/// the origin, the same transition faces, its fixed transition width of 0.15 cell. Its density
/// is positive inside, so it reads `−field`; it samples at exact integer metres, like us.
fn reference_mesh(f: Field, mask: u8) -> (Vec<[f32; 3]>, Vec<u32>) {
    use ::transvoxel::prelude::*;
    let density = |x: f32, y: f32, z: f32| {
        let c = [x, y, z].map(|c| {
            assert_eq!(c, c.round(), "samples on the 1 m lattice");
            c as i64
        });
        -f(c[0], c[1], c[2])
    };
    let sides = [
        TransitionSide::LowX,
        TransitionSide::HighX,
        TransitionSide::LowY,
        TransitionSide::HighY,
        TransitionSide::LowZ,
        TransitionSide::HighZ,
    ];
    let mut t = TransitionSide::none();
    for (i, &s) in sides.iter().enumerate() {
        if mask >> i & 1 == 1 {
            t |= s;
        }
    }
    let block = Block::new([0.0f32; 3], 64.0, 32);
    let mesh = extract_from_field(
        &density,
        FieldCaching::CacheNothing,
        block,
        t,
        0.0,
        GenericMeshBuilder::new(),
    )
    .build();
    let p = mesh
        .positions
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let i = mesh.triangle_indices.iter().map(|&i| i as u32).collect();
    (p, i)
}

/// Same triangles as the `transvoxel` crate for every transition mask, less the zero-area
/// ones it emits (three vertices on one line, where a transition face meets a face that is
/// not one and the transition cell's side collapses): we drop those and split the neighbour
/// across their long edge where there is one, so our count lies between the crate's count
/// without them and with them. Areas agree within 0.01 % (the cut rounding and the crate's
/// interpolation direction differ slightly).
///
/// Uses the crate's `FieldCaching::CacheNothing`: with `CacheCentralBlockOnly` (2.0.0) it reads
/// the fine neighbours at the central block's coordinates, and its transition meshes come out
/// wrong (area ×4.6 on the terrain with −X, open and non-manifold edges).
#[test]
fn matches_the_transvoxel_crate() {
    let ball = |x: i64, y: i64, z: i64| {
        sphere([0.3, 31.7, 40.2], 27.0)(x as f64, y as f64, z as f64) as f32
    };
    for (f, what) in [(&terrain as Field, "terrain"), (&ball as Field, "ball")] {
        let (mut exact, mut worst) = (0, 0.0f64);
        for mask in 0..64u8 {
            let ours = coarse_mesh(f, mask, 0.15);
            let (rp, ri) = reference_mesh(f, mask);
            let sr = mesh_stats(&rp, &ri);
            let (n, nr) = (ours.triangle_count(), sr.triangles);
            assert!(
                nr - sr.degenerate_triangles <= n && n <= nr,
                "{what}, mask {mask:06b}: {n} triangles, the crate {nr} with {} zero-area",
                sr.degenerate_triangles
            );
            // Every zero-area triangle of the crate's has two vertices on an edge of the block
            // (collinear on it, or a vertex there made twice).
            for t in ri.chunks_exact(3) {
                let [a, b, c] = [0, 1, 2].map(|k| rp[t[k] as usize].map(f64::from));
                let (u, v) = (
                    [0, 1, 2].map(|k| b[k] - a[k]),
                    [0, 1, 2].map(|k| c[k] - a[k]),
                );
                let cr = [
                    u[1] * v[2] - u[2] * v[1],
                    u[2] * v[0] - u[0] * v[2],
                    u[0] * v[1] - u[1] * v[0],
                ];
                if cr == [0.0; 3] {
                    let on_edge =
                        |p: [f64; 3]| p.iter().filter(|&&c| c == 0.0 || c == 64.0).count() >= 2;
                    assert!(
                        [a, b, c].iter().filter(|&&p| on_edge(p)).count() >= 2,
                        "{what}: {a:?} {b:?} {c:?}"
                    );
                }
            }
            exact += usize::from(n == nr);
            let rel = stats(&ours).area / sr.area - 1.0;
            worst = worst.max(rel.abs());
            assert!(
                rel.abs() < 1e-4,
                "{what}, mask {mask:06b}: area off by {rel}"
            );
        }
        eprintln!(
            "{what}: triangle counts equal for {exact} of 64 masks; worst area difference {:.2e}",
            worst
        );
    }
}

/// A coarse chunk with its lowest corner at `o` (metres) meshed with transition faces `mask`.
fn coarse_mesh_at(f: Field, o: [i64; 3], mask: u8) -> MeshBuffer {
    let g = move |x: i64, y: i64, z: i64| f(x + o[0], y + o[1], z + o[2]);
    coarse_mesh(&g, mask, 0.5)
}

/// The 2:1 configuration around a chunk edge where a transition face meets a face that is
/// not one: fine chunks (1 m) fill `[−64, 0] × [0, 64]`; coarse chunks (2 m) C = `[0, 64] ×
/// [0, 64]` (−X transition), D = `[−64, 0] × [−64, 0]` (+Y transition) and E = `[0, 64] ×
/// [−64, 0]` (none), all `z ∈ [0, 64]`. The four meet on the line x = y = 0, where C's and D's
/// grid points stay put; a closed surface around that line must come out watertight.
#[test]
fn chunks_around_a_transition_edge_weld() {
    let ball = |x: i64, y: i64, z: i64| {
        sphere([0.3, -0.4, 32.2], 21.0)(x as f64, y as f64, z as f64) as f32
    };
    let hills = |x: i64, y: i64, z: i64| terrain(x, y + 30, z);
    for (f, what, closed) in [
        (&ball as Field, "ball", true),
        (&hills as Field, "hills", false),
    ] {
        let mut meshes: Vec<([f64; 3], MeshBuffer)> = Vec::new();
        let mut boxes = Vec::new();
        for (o, mask) in [
            ([0, 0, 0], Face::NegX.bit()),
            ([-64, -64, 0], Face::PosY.bit()),
            ([0, -64, 0], 0),
        ] {
            meshes.push((o.map(|c| c as f64), coarse_mesh_at(f, o, mask)));
            boxes.push((o.map(|c| c as f64), o.map(|c| c as f64 + 64.0)));
        }
        for k in 0..8 {
            let o = [-64 + 32 * (k & 1), 32 * (k >> 1 & 1), 32 * (k >> 2)];
            meshes.push((o.map(|c| c as f64), fine_mesh(o, f)));
            boxes.push((o.map(|c| c as f64), o.map(|c| c as f64 + 32.0)));
        }
        let parts: Vec<WeldPart> = meshes
            .iter()
            .map(|(o, m)| (*o, &m.positions[..], &m.indices[..]))
            .collect();
        let (positions, indices) = weld_exact(&parts);
        let s = Scene {
            positions,
            indices,
            boxes,
        };
        let st = mesh_stats(&s.positions, &s.indices);
        let open = inner_open_edges(&s);
        assert!(
            open.is_empty(),
            "{what}: {} open edges inside, first {:?}",
            open.len(),
            &open[..open.len().min(4)]
        );
        assert_eq!(
            (
                st.nonmanifold_edges,
                st.misoriented_edges,
                st.degenerate_triangles
            ),
            (0, 0, 0),
            "{what}: {st:?}"
        );
        if closed {
            assert_eq!(
                (st.boundary_edges, st.components, st.euler),
                (0, 1, 2),
                "{what}"
            );
        }
    }
}

/// Materials: transition-face vertices take the material of the fine slab's inside sample,
/// the others the coarse grid's.
#[test]
fn transition_vertices_carry_the_fine_materials() {
    let f: Field = &terrain;
    let values = coarse_values(f);
    let coarse_materials = vec![1u8; values.len()];
    let grid = Grid::chunk(&values, &coarse_materials, 1, VS);
    let s = slab(&grid, Face::NegX, f);
    let m = vec![2u8; s.len()];
    let t = Transitions::default().with(
        Face::NegX,
        FineFace {
            values: &s,
            materials: &m,
        },
    );
    let mut out = MeshBuffer::default();
    transvoxel(&grid, &t, &mut out);
    let mut seen = [0usize; 3];
    for (p, &mat) in out.positions.iter().zip(&out.materials) {
        // On the face's rim, where it meets faces that are not transition faces, coarse
        // vertices stay on the plane too: skip it.
        let rim = p[0] == 0.0 && [p[1], p[2]].iter().any(|&c| c == 0.0 || c == 64.0);
        if !rim {
            assert_eq!(mat, if p[0] == 0.0 { 2 } else { 1 }, "at {p:?}");
            seen[mat as usize] += 1;
        }
    }
    assert!(seen[1] > 100 && seen[2] > 20, "{seen:?}");
}

/// The width must be in (0, 1).
#[test]
#[should_panic(expected = "transition width")]
fn a_width_of_a_whole_cell_panics() {
    let values = coarse_values(&terrain);
    let grid = Grid::chunk(&values, &[], 1, VS);
    let t = Transitions {
        width: 1.0,
        ..Transitions::default()
    };
    transvoxel(&grid, &t, &mut MeshBuffer::default());
}
