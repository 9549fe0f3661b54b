//! Hashes of the meshes every mesher makes on a fixed suite of grids, to check that a change to
//! `loam-mesh` (a speed-up) leaves its output bit for bit identical: same vertex order,
//! positions, normals, materials and indices. Other crates pin hashes of meshes, so the meshers'
//! output is part of their contract.
//!
//! `cargo run --release -p loam-bench --example mesh_hashes` prints the hashes;
//! `cargo test --release -p loam-bench --test mesh_hashes` compares them with
//! `bench/mesh_hashes.txt`, recorded from the meshers before the speed work of issue 3. The
//! Surface Nets lines were recorded again on 2026-12-02, when its crossings' mean started
//! summing per axis (the same mean up to rounding; every triangle count unchanged).
//! The Surface Nets and Dual Contouring lines were recorded again for issue 48: their vertices
//! are rounded to 2⁻¹⁷ of a cell so that chunks sharing them agree bit for bit in world space,
//! and vertices on a cell's boundary are merged by position (a few triangles fewer on the
//! random grids, where such vertices coincide). Marching Cubes' and MC33's are unchanged.
//! Marching Cubes' `wide` and `random` lines and MC33's `random` line were recorded again on
//! 2026-12-07 (issue 48, item 5): Marching Cubes visits a grid wider than 63 cells layer by
//! layer (another vertex order there), and a vertex on a sample worth exactly 0 takes the
//! material of its deepest inside neighbour instead of that of the edge that reached it first
//! (positions, normals and triangle counts unchanged: the test in `marching_cubes.rs`
//! compares the triangles of both passes bit for bit).

use std::path::{Path, PathBuf};

use loam_field::ChunkKey;
use loam_mesh::{Grid, MeshBuffer, Mesher};

use crate::{surface_chunk, terrain_field};

/// FNV-1a, 64 bits: a fixed, dependency-free hash (std's hasher may change between releases).
#[derive(Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Adds a u64 (little-endian).
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// The hash.
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// Adds a mesh to `h`: counts, then every position and normal as f32 bit patterns, the
/// materials and the indices, in buffer order.
pub fn hash_mesh(h: &mut Fnv, m: &MeshBuffer) {
    h.u64(m.positions.len() as u64);
    h.u64(m.normals.len() as u64);
    h.u64(m.materials.len() as u64);
    h.u64(m.indices.len() as u64);
    for p in m.positions.iter().chain(&m.normals) {
        for c in p {
            h.bytes(&c.to_bits().to_le_bytes());
        }
    }
    h.bytes(&m.materials);
    for i in &m.indices {
        h.bytes(&i.to_le_bytes());
    }
}

/// One grid of the suite, owning its samples.
pub struct SuiteGrid {
    /// Family name (the hashes are reported per family).
    pub family: &'static str,
    /// Samples.
    pub values: Vec<f32>,
    /// Materials (may be empty).
    pub materials: Vec<u8>,
    /// Samples per axis.
    pub dims: [u32; 3],
    /// Voxel size.
    pub voxel_size: f32,
    /// Grid origin.
    pub origin: [u32; 3],
    /// Cell range.
    pub cells: ([u32; 3], [u32; 3]),
    /// Whether the grid's min/max is passed in.
    pub with_range: bool,
}

impl SuiteGrid {
    /// The grid view.
    pub fn grid(&self) -> Grid<'_> {
        let range = self.with_range.then(|| {
            self.values
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                })
        });
        let g = Grid {
            values: &self.values,
            materials: &self.materials,
            dims: self.dims,
            voxel_size: self.voxel_size,
            origin: self.origin,
            cells_min: self.cells.0,
            cells_max: self.cells.1,
            range,
        };
        g.check();
        g
    }

    fn volume(family: &'static str, values: Vec<f32>, dims: [u32; 3], voxel_size: f32) -> Self {
        SuiteGrid {
            family,
            values,
            materials: Vec::new(),
            dims,
            voxel_size,
            origin: [0; 3],
            cells: ([0; 3], dims.map(|d| d - 1)),
            with_range: false,
        }
    }
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The repository's `data/volumes` folder.
pub fn volumes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/volumes")
}

/// Reads a scan as `loam mesh-volume` does: the field `iso − value` as f32, x fastest.
/// Returns the field and its dims.
/// A volume named by its JSON sidecar (as in `data/volumes`: `file`, `dims_xyz`, `dtype` one
/// of `uint8`, `uint16le`, `int16le`, `float32le`, `spacing_xyz`, `iso_values` whose first
/// number is the iso level) as a field `iso − sample` (inside positive samples above the iso
/// level, as `loam mesh-volume` reads it), its dims and its spacing. Panics on a bad sidecar:
/// a benchmark's input.
pub fn read_sidecar(sidecar: &std::path::Path) -> (Vec<f32>, [u32; 3], [f64; 3]) {
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sidecar).expect("the sidecar")).expect("JSON");
    let dims: [u32; 3] = serde_json::from_value(meta["dims_xyz"].clone()).expect("dims_xyz");
    let spacing: [f64; 3] = serde_json::from_value(meta["spacing_xyz"].clone()).unwrap_or([1.0; 3]);
    let iso = meta["iso_values"]
        .as_object()
        .and_then(|m| m.values().find_map(|v| v.as_f64()))
        .expect("a numeric iso value");
    let file = sidecar
        .parent()
        .expect("a folder")
        .join(meta["file"].as_str().expect("file"));
    let bytes = std::fs::read(&file).expect("the volume's samples");
    let at = |v: f64| (iso - v) as f32;
    let field: Vec<f32> = match meta["dtype"].as_str().expect("dtype") {
        "uint8" | "u8" => bytes.iter().map(|&b| at(f64::from(b))).collect(),
        "uint16le" | "uint16" | "u16le" => bytes
            .chunks_exact(2)
            .map(|b| at(f64::from(u16::from_le_bytes([b[0], b[1]]))))
            .collect(),
        "int16le" | "int16" | "i16le" => bytes
            .chunks_exact(2)
            .map(|b| at(f64::from(i16::from_le_bytes([b[0], b[1]]))))
            .collect(),
        "float32le" | "float32" | "f32le" => bytes
            .chunks_exact(4)
            .map(|b| at(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))))
            .collect(),
        other => panic!("{sidecar:?}: unknown dtype {other}"),
    };
    assert_eq!(
        field.len(),
        dims.iter().map(|&d| d as usize).product::<usize>(),
        "{sidecar:?}: the file's size is not dims × the sample size"
    );
    (field, dims, spacing)
}

pub fn read_scan(name: &str) -> (Vec<f32>, [u32; 3]) {
    let dir = volumes_dir();
    match name {
        "head" => {
            let bytes = std::fs::read(dir.join("head_mr_48x62x42_uint8.raw")).expect("head scan");
            let iso = 49.5f64;
            let v = bytes.iter().map(|&b| (iso - f64::from(b)) as f32).collect();
            (v, [48, 62, 42])
        }
        "hydrogen" => {
            let bytes = std::fs::read(dir.join("hydrogen_orbital_64x64x64_float32le.raw"))
                .expect("hydrogen scan");
            let iso = 0.05f64;
            let v = bytes
                .chunks_exact(4)
                .map(|b| (iso - f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))) as f32)
                .collect();
            (v, [64, 64, 64])
        }
        _ => panic!("unknown scan {name}"),
    }
}

/// The suite: terrain chunks (with materials, halo 1 and 2), the two scans, spheres and planes
/// with exact zeros, and random grids of small integers with many zeros and random materials,
/// sub-ranges and origins.
pub fn suite() -> Vec<SuiteGrid> {
    let mut out = Vec::new();
    // Terrain chunks around the benchmark's surface chunk.
    let field = terrain_field();
    let c0 = surface_chunk(field.generator());
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                let key = ChunkKey::new(c0.x + dx, c0.y + dy, c0.z + dz);
                // Halo 1 and 2 (the chunk halo was 1 when these were recorded).
                let halo = if (dx + dy + dz) % 2 == 0 { 1 } else { 2 };
                let n = (33 + 2 * halo) as usize;
                let (mut v, mut m) = (vec![0.0; n * n * n], vec![0; n * n * n]);
                field.fill_chunk(key, halo, &mut v, &mut m);
                let g = Grid::chunk(&v, &m, halo, 1.0);
                let (dims, origin, cells) = (g.dims, g.origin, (g.cells_min, g.cells_max));
                out.push(SuiteGrid {
                    family: "terrain",
                    values: v,
                    materials: m,
                    dims,
                    voxel_size: 1.0,
                    origin,
                    cells,
                    with_range: dx == 0,
                });
            }
        }
    }
    // The scans, as `loam mesh-volume` meshes them (before scaling by the spacing).
    for name in ["head", "hydrogen"] {
        let (v, dims) = read_scan(name);
        out.push(SuiteGrid::volume("scans", v, dims, 1.0));
    }
    // Spheres, some with samples exactly on the surface.
    for (n, c, r, vs) in [
        (24u32, 11.5f32, 10.0f32, 1.0f32),
        (20, 10.0, 6.0, 1.0),
        (20, 9.0, 5.0, 0.5),
        (17, 8.25, 7.1, 0.25),
        (12, 5.0, 3.0, 1.0),
    ] {
        let mut v = Vec::new();
        for z in 0..n {
            for y in 0..n {
                for x in 0..n {
                    let d = [x, y, z].map(|k| k as f32 - c);
                    v.push((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() - r);
                }
            }
        }
        out.push(SuiteGrid::volume("spheres", v, [n; 3], vs));
    }
    // Planes through rows of samples (exact zeros), a slope, and a box dug into the ground.
    let planes: [fn(f32, f32, f32) -> f32; 4] = [
        |_, y, _| y - 4.0,
        |x, y, _| x + y - 7.0,
        |x, y, z| 0.5 * x + y - 0.25 * z - 5.0,
        |x, y, z| {
            let ground = y - 6.0;
            let d = [
                (x - 5.0).abs() - 2.0,
                (y - 6.0).abs() - 2.0,
                (z - 4.5).abs() - 1.5,
            ];
            let outside = d.map(|c| c.max(0.0));
            let b = (outside[0] * outside[0] + outside[1] * outside[1] + outside[2] * outside[2])
                .sqrt()
                + d[0].max(d[1]).max(d[2]).min(0.0);
            ground.max(-b)
        },
    ];
    for f in planes {
        let dims = [11u32, 12, 10];
        let mut v = Vec::new();
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    v.push(f(x as f32, y as f32, z as f32));
                }
            }
        }
        out.push(SuiteGrid::volume("planes", v, dims, 1.0));
    }
    // Grids wider than one 63-cell segment of the surface-cell search: a terrain chunk with
    // a halo of 20 and a long box of noisy waves.
    {
        let key = ChunkKey::new(c0.x, c0.y, c0.z);
        let halo = 20;
        let n = (33 + 2 * halo) as usize;
        let (mut v, mut m) = (vec![0.0; n * n * n], vec![0; n * n * n]);
        field.fill_chunk(key, halo, &mut v, &mut m);
        out.push(SuiteGrid {
            family: "wide",
            values: v,
            materials: m,
            dims: [n as u32; 3],
            voxel_size: 1.0,
            origin: [3; 3],
            cells: ([2, 5, 7], [n as u32 - 1, n as u32 - 4, n as u32 - 2]),
            with_range: false,
        });
        let dims = [150u32, 19, 23];
        let mut v = Vec::new();
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    let (x, y, z) = (x as f32, y as f32, z as f32);
                    v.push(
                        (x * 0.37).sin() * 3.0 + (z * 0.51).cos() * 2.5 + (x * z * 0.05).sin() - y
                            + 9.0,
                    );
                }
            }
        }
        out.push(SuiteGrid::volume("wide", v, dims, 0.5));
    }
    // Random grids of small integers with many zeros.
    let mut rng = Rng(0x5eed);
    for i in 0..400 {
        let dims = [0; 3].map(|_| 2 + rng.below(9) as u32);
        let len = dims.iter().product::<u32>() as usize;
        let span = [3u64, 5, 7][i % 3];
        let values: Vec<f32> = (0..len)
            .map(|_| rng.below(span) as f32 - (span / 2) as f32)
            .collect();
        let materials: Vec<u8> = if i % 2 == 0 {
            (0..len).map(|_| rng.below(4) as u8).collect()
        } else {
            Vec::new()
        };
        let mut g = SuiteGrid::volume("random", values, dims, [1.0, 0.5, 0.75][i % 3]);
        g.materials = materials;
        if i % 4 == 3 {
            // A sub-range of cells and an origin inside the grid.
            let lo = dims.map(|d| rng.below(u64::from(d - 1)) as u32);
            let hi =
                [0, 1, 2].map(|a| lo[a] + rng.below(u64::from(dims[a] - 1 - lo[a]) + 1) as u32);
            g.cells = (lo, hi);
            g.origin = lo;
        }
        g.with_range = i % 5 == 0;
        out.push(g);
    }
    out
}

/// One hash per (family, mesher), in suite order, with the family's total triangle count.
pub fn suite_hashes() -> Vec<(String, usize, u64)> {
    let grids = suite();
    let mut families: Vec<&'static str> = Vec::new();
    for g in &grids {
        if !families.contains(&g.family) {
            families.push(g.family);
        }
    }
    let mut out = Vec::new();
    let mut buf = MeshBuffer::default();
    for fam in families {
        for m in Mesher::ALL {
            let mut h = Fnv::default();
            let mut tris = 0;
            for g in grids.iter().filter(|g| g.family == fam) {
                m.mesh(&g.grid(), &mut buf);
                hash_mesh(&mut h, &buf);
                tris += buf.triangle_count();
                // A fresh buffer gives the same mesh as a reused one.
                let mut fresh = MeshBuffer::default();
                m.mesh(&g.grid(), &mut fresh);
                let (mut a, mut b) = (Fnv::default(), Fnv::default());
                hash_mesh(&mut a, &buf);
                hash_mesh(&mut b, &fresh);
                assert_eq!(
                    a.finish(),
                    b.finish(),
                    "{fam} {}: reused buffer differs",
                    m.name()
                );
            }
            out.push((format!("{fam} {}", m.name()), tris, h.finish()));
        }
    }
    out
}
