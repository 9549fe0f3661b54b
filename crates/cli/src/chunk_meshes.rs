//! Statistics and export parts of chunk meshes, for `loam replay --mesher`.

use loam_field::ChunkKey;
use loam_mesh::{MeshBuffer, Mesher, WeldPart, mesh_stats, weld};
use serde::Serialize;

use crate::export::Part;

/// Statistics of the chunk meshes, printed and written to the summary.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkMeshStats {
    /// `mc`, `mc33`, `sn` or `dc`.
    pub mesher: &'static str,
    /// Chunks (including empty ones).
    pub chunks: usize,
    /// Chunks with triangles.
    pub nonempty_chunks: usize,
    /// Vertices over all chunks.
    pub vertices: usize,
    /// Triangles over all chunks.
    pub triangles: usize,
    /// Total area, m².
    pub area_m2: f64,
    /// Open edges of the chunk meshes welded together (the outline of the meshed region, and
    /// any crack between chunks).
    pub welded_boundary_edges: usize,
    /// Edges used by more than two triangles after welding.
    pub welded_nonmanifold_edges: usize,
}

/// Chunk meshes with their world origins (metres), in ascending chunk order.
pub type Meshes<'a> = [(ChunkKey, [f64; 3], &'a MeshBuffer)];

/// Statistics of `meshes` (`chunks` counts empty chunks too).
pub fn stats(meshes: &Meshes, chunks: usize, mesher: Mesher, voxel_size: f64) -> ChunkMeshStats {
    let parts: Vec<WeldPart> = meshes
        .iter()
        .map(|(_, o, m)| (*o, &m.positions[..], &m.indices[..]))
        .collect();
    let (pos, idx) = weld(&parts, 1e-5 * voxel_size);
    let welded = mesh_stats(&pos, &idx);
    ChunkMeshStats {
        mesher: mesher.name(),
        chunks,
        nonempty_chunks: meshes.iter().filter(|(_, _, m)| !m.is_empty()).count(),
        vertices: meshes.iter().map(|(_, _, m)| m.positions.len()).sum(),
        triangles: meshes.iter().map(|(_, _, m)| m.triangle_count()).sum(),
        area_m2: welded.area,
        welded_boundary_edges: welded.boundary_edges,
        welded_nonmanifold_edges: welded.nonmanifold_edges,
    }
}

/// The meshes as export parts, one node per chunk at its origin.
pub fn parts<'a>(meshes: &Meshes<'a>) -> Vec<Part<'a>> {
    meshes
        .iter()
        .map(|(k, o, m)| Part {
            name: format!("chunk_{}_{}_{}", k.x, k.y, k.z),
            offset: *o,
            positions: &m.positions,
            normals: &m.normals,
            indices: &m.indices,
        })
        .collect()
}
