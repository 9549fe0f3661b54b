//! Shared fixtures: hand-built meshes, Loam terrain chunks, and a character driver.

use std::sync::Arc;

use loam_field::{
    CaveSettings, ChunkKey, Field, FieldSettings, Generator, NoiseLayer, NoiseTerrainSettings,
};
use loam_mesh::{CHUNK_CELLS, CHUNK_HALO, Grid, MeshBuffer, surface_nets};
use loam_physics::{
    CharacterId, CharacterSettings, CharacterState, MoveInput, PhysicsSettings, PhysicsWorld,
    RayMask, TerrainShape,
};

pub const DT: f32 = 1.0 / 60.0;

/// A triangle soup under construction, positions in the mesh's local metres.
#[derive(Default, Clone, Debug)]
pub struct Mesh {
    pub positions: Vec<[f32; 3]>,
    pub indices: Vec<u32>,
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl Mesh {
    /// A planar quad `p0 p1 p2 p3` (in order around it), wound so that its normal points
    /// along `outward`.
    pub fn quad(&mut self, p: [[f32; 3]; 4], outward: [f32; 3]) -> &mut Self {
        let n = cross(sub(p[1], p[0]), sub(p[2], p[0]));
        let d = n[0] * outward[0] + n[1] * outward[1] + n[2] * outward[2];
        let base = self.positions.len() as u32;
        self.positions.extend_from_slice(&p);
        let tris: [u32; 6] = if d >= 0.0 {
            [0, 1, 2, 0, 2, 3]
        } else {
            [0, 2, 1, 0, 3, 2]
        };
        self.indices.extend(tris.iter().map(|i| base + i));
        self
    }

    /// A height field over `[x0, x1] × [z0, z1]` in `cell`-metre squares (shared vertices),
    /// facing up; cells for which `keep(x, z)` (cell centre) is false are left out.
    pub fn grid(
        &mut self,
        [x0, x1]: [f32; 2],
        [z0, z1]: [f32; 2],
        cell: f32,
        height: impl Fn(f32, f32) -> f32,
        keep: impl Fn(f32, f32) -> bool,
    ) -> &mut Self {
        let nx = ((x1 - x0) / cell).round() as u32;
        let nz = ((z1 - z0) / cell).round() as u32;
        let base = self.positions.len() as u32;
        for j in 0..=nz {
            for i in 0..=nx {
                let (x, z) = (x0 + i as f32 * cell, z0 + j as f32 * cell);
                self.positions.push([x, height(x, z), z]);
            }
        }
        let v = |i: u32, j: u32| base + i + j * (nx + 1);
        for j in 0..nz {
            for i in 0..nx {
                let (cx, cz) = (x0 + (i as f32 + 0.5) * cell, z0 + (j as f32 + 0.5) * cell);
                if !keep(cx, cz) {
                    continue;
                }
                let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1));
                // Counter-clockwise seen from above (+y).
                self.indices.extend([a, c, b, a, d, c]);
            }
        }
        self
    }

    /// A flat floor at height `y` over the given ranges, 0.5 m cells.
    pub fn floor(&mut self, xs: [f32; 2], zs: [f32; 2], y: f32) -> &mut Self {
        self.grid(xs, zs, 0.5, |_, _| y, |_, _| true)
    }

    /// A closed axis-aligned box, outward normals.
    pub fn cuboid(&mut self, min: [f32; 3], max: [f32; 3]) -> &mut Self {
        let [a, b, c] = min;
        let [d, e, f] = max;
        self.quad(
            [[a, e, c], [d, e, c], [d, e, f], [a, e, f]],
            [0.0, 1.0, 0.0],
        )
        .quad(
            [[a, b, c], [d, b, c], [d, b, f], [a, b, f]],
            [0.0, -1.0, 0.0],
        )
        .quad(
            [[a, b, c], [a, e, c], [a, e, f], [a, b, f]],
            [-1.0, 0.0, 0.0],
        )
        .quad(
            [[d, b, c], [d, e, c], [d, e, f], [d, b, f]],
            [1.0, 0.0, 0.0],
        )
        .quad(
            [[a, b, c], [d, b, c], [d, e, c], [a, e, c]],
            [0.0, 0.0, -1.0],
        )
        .quad(
            [[a, b, f], [d, b, f], [d, e, f], [a, e, f]],
            [0.0, 0.0, 1.0],
        )
    }

    pub fn shape(&self, origin: [f32; 3]) -> TerrainShape {
        TerrainShape::build(&self.positions, &self.indices, origin)
            .expect("valid mesh")
            .expect("non-empty mesh")
    }
}

pub fn world() -> PhysicsWorld {
    PhysicsWorld::new(PhysicsSettings::default()).unwrap()
}

/// A world with one chunk `[0, 0, 0]` holding `mesh` at origin 0.
pub fn world_with(mesh: &Mesh) -> PhysicsWorld {
    let mut w = world();
    w.set_chunk([0, 0, 0], Some(mesh.shape([0.0; 3])));
    w
}

pub fn walk(x: f32, z: f32) -> MoveInput {
    MoveInput {
        wish: [x, z],
        ..Default::default()
    }
}

pub fn idle() -> MoveInput {
    MoveInput::default()
}

/// Moves the character and steps the world, one 60 Hz frame per input; returns every
/// frame's state.
pub fn drive(
    w: &mut PhysicsWorld,
    id: CharacterId,
    frames: usize,
    mut input: impl FnMut(usize) -> MoveInput,
) -> Vec<CharacterState> {
    (0..frames)
        .map(|f| {
            let s = w.move_character(id, input(f), DT).unwrap();
            w.step(DT).unwrap();
            s
        })
        .collect()
}

pub fn spawn(w: &mut PhysicsWorld, feet: [f32; 3]) -> CharacterId {
    w.spawn_character(feet, CharacterSettings::default())
        .unwrap()
}

/// Lets a character spawned just above the ground settle: 0.5 s idle, then checks it
/// stands.
pub fn settle(w: &mut PhysicsWorld, id: CharacterId) -> CharacterState {
    let s = *drive(w, id, 30, |_| idle()).last().unwrap();
    assert!(s.grounded, "not grounded after settling: {s:?}");
    s
}

/// The terrain height under `(x, z)`, from a ray cast straight down from `from_y`.
pub fn ground_y(w: &PhysicsWorld, x: f32, z: f32, from_y: f32) -> Option<(f32, [f32; 3])> {
    w.cast_ray([x, from_y, z], [0.0, -1.0, 0.0], 1000.0, RayMask::TERRAIN)
        .unwrap()
        .map(|h| (h.point[1], h.normal))
}

const OFF: NoiseLayer = NoiseLayer {
    amplitude: 0.0,
    wavelength: 1.0,
    octaves: 0,
};

/// Flat Loam ground at `base` metres (no caves).
pub fn flat_field(base: f64) -> Field {
    let s = NoiseTerrainSettings {
        base_height: base,
        hills: OFF,
        ridges: OFF,
        detail: OFF,
        ..Default::default()
    };
    field(s)
}

/// The default noise terrain of `seed`, without caves.
pub fn noise_field(seed: u32) -> Field {
    field(NoiseTerrainSettings {
        seed,
        ..Default::default()
    })
}

fn field(s: NoiseTerrainSettings) -> Field {
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    let g = Generator::noise(&s, &caves).unwrap();
    Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
}

/// Meshes one chunk of `field` with Surface Nets, as the world pipeline does, and builds
/// its collider shape (`None` for an empty chunk).
pub fn chunk_shape(field: &Field, key: [i32; 3]) -> Option<TerrainShape> {
    let n = (CHUNK_CELLS + 1 + 2 * CHUNK_HALO) as usize;
    let mut values = vec![0.0f32; n * n * n];
    let mut materials = vec![0u8; n * n * n];
    field.fill_chunk(
        ChunkKey::new(key[0], key[1], key[2]),
        CHUNK_HALO,
        &mut values,
        &mut materials,
    );
    let vs = FieldSettings::default().voxel_size as f32;
    let mut mesh = MeshBuffer::default();
    surface_nets(&Grid::chunk(&values, &materials, CHUNK_HALO, vs), &mut mesh);
    let origin = key.map(|c| (c * CHUNK_CELLS as i32) as f32 * vs);
    TerrainShape::build(&mesh.positions, &mesh.indices, origin).unwrap()
}

/// Puts every chunk of `keys` into `w` (empty chunks stay empty); returns how many have a
/// collider.
pub fn load_chunks(w: &mut PhysicsWorld, field: &Field, keys: &[[i32; 3]]) -> usize {
    w.set_chunks(keys.iter().map(|&k| (k, chunk_shape(field, k))));
    w.chunk_count()
}

/// Every key in the box `min ..= max`.
pub fn keys(min: [i32; 3], max: [i32; 3]) -> Vec<[i32; 3]> {
    let mut out = Vec::new();
    for z in min[2]..=max[2] {
        for y in min[1]..=max[1] {
            for x in min[0]..=max[0] {
                out.push([x, y, z]);
            }
        }
    }
    out
}
