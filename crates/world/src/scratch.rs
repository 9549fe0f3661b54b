//! Building chunk meshes straight from a field, without the pool or caches: the reference
//! the pipeline's meshes must equal bit for bit (docs/architecture.md, invariant 1).

use loam_field::{CHUNK_CELLS, ChunkKey, Field};
use loam_mesh::{CHUNK_HALO, Grid, MeshBuffer, Mesher};

use crate::lod::{LodBuilder, LodKey, level_neighbours, proven_uniform, seams_of};
use crate::shown::Shown;
use crate::world::World;

/// Reusable buffers for building chunk meshes from a field.
#[derive(Debug, Default)]
pub struct ChunkBuilder {
    values: Vec<f32>,
    materials: Vec<u8>,
    mesh: MeshBuffer,
}

impl ChunkBuilder {
    /// The mesh of chunk `key` built from `field` with `mesher` (its 37³ grid filled, then
    /// meshed), valid until the next call.
    pub fn build(&mut self, field: &Field, key: ChunkKey, mesher: Mesher) -> &MeshBuffer {
        let n = (CHUNK_CELLS as usize + 1 + 2 * CHUNK_HALO as usize).pow(3);
        self.values.resize(n, 0.0);
        self.materials.resize(n, 0);
        field.fill_chunk(key, CHUNK_HALO, &mut self.values, &mut self.materials);
        let vs = field.settings().voxel_size as f32;
        let grid = Grid::chunk(&self.values, &self.materials, CHUNK_HALO, vs);
        mesher.mesh(&grid, &mut self.mesh);
        &self.mesh
    }
}

/// Whether two meshes are equal bit for bit (positions, normals, materials, indices).
pub fn same_mesh(a: &MeshBuffer, b: &MeshBuffer) -> bool {
    let bits = |v: &[[f32; 3]]| {
        v.iter()
            .flat_map(|p| p.map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    a.indices == b.indices
        && a.materials == b.materials
        && bits(&a.positions) == bits(&b.positions)
        && bits(&a.normals) == bits(&b.normals)
}

/// Incremental equals from scratch: every chunk `world` has loaded shows, in `shown`, exactly
/// the mesh built from `fresh` with the world's mesher (nothing where that mesh is empty), and
/// nothing is shown that is not loaded. Returns the number of chunks with a mesh, or the
/// first chunk that differs.
///
/// # Errors
/// The key of the first chunk whose shown mesh is not the from-scratch one.
pub fn verify_shown(world: &World, shown: &Shown, fresh: &Field) -> Result<usize, ChunkKey> {
    let mesher = world.settings().mesher;
    let mut builder = ChunkBuilder::default();
    let mut meshed = 0;
    for key in world.loaded() {
        let want = builder.build(fresh, key, mesher);
        match shown.get(key) {
            Some(m) if same_mesh(&m.mesh, want) => meshed += 1,
            None if want.is_empty() => {}
            _ => return Err(key),
        }
    }
    match shown.meshes().find(|m| world.version(m.key).is_none()) {
        Some(m) => Err(m.key),
        None => Ok(meshed),
    }
}

/// [`verify_shown`] with level of detail: every chunk `world` has in view, of every level,
/// shows exactly the mesh [`LodBuilder::build_with`] builds from `fresh` with the world's
/// mesher and the neighbour levels the current view gives it (so no stale seam survives a
/// level change), and nothing is shown outside the view. Returns the number of chunks with a
/// mesh.
///
/// # Errors
/// The key of the first chunk whose shown mesh is not the from-scratch one.
pub fn verify_shown_lod(world: &World, shown: &Shown, fresh: &Field) -> Result<usize, LodKey> {
    let view = world.view();
    let mut builder = LodBuilder::default();
    let mut meshed = 0;
    for &key in &view {
        let mesher = world.settings().mesher;
        let levels = seams_of(mesher, level_neighbours(&view, key));
        if world.level_neighbours(key) != Some(levels) {
            return Err(key);
        }
        let empty = MeshBuffer::default();
        let want = if proven_uniform(fresh, key) {
            &empty
        } else {
            builder.build_with(fresh, key, mesher, levels).0
        };
        match shown.get_lod(key) {
            Some(m) if same_mesh(&m.mesh, want) => meshed += 1,
            None if want.is_empty() => {}
            _ => return Err(key),
        }
    }
    match shown.meshes().find(|m| !view.contains(&m.lod_key())) {
        Some(m) => Err(m.lod_key()),
        None => Ok(meshed),
    }
}
