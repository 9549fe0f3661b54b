//! Meshing the chunks an edit touched, for `loam replay --mesher`.

use std::collections::BTreeSet;
use std::time::Instant;

use loam_field::{CHUNK_CELLS, ChunkKey, Field, SampleBox};
use loam_mesh::{CHUNK_HALO, Grid, MeshBuffer, Mesher, WeldPart, mesh_stats, weld};
use serde::Serialize;

use crate::export::Part;

/// Chunks whose grid (cells plus [`CHUNK_HALO`]) holds a sample of `b`.
pub fn chunks_reading(b: &SampleBox, out: &mut BTreeSet<(i32, i32, i32)>) {
    let (n, h) = (CHUNK_CELLS, CHUNK_HALO as i32);
    // Chunk c reads samples 32c − h ..= 32c + 32 + h.
    let range = |lo: i32, hi: i32| (lo - n - h).div_euclid(n)..=(hi + h).div_euclid(n);
    for z in range(b.min.z, b.max.z) {
        for y in range(b.min.y, b.max.y) {
            for x in range(b.min.x, b.max.x) {
                let reads = |c: i32, lo: i32, hi: i32| c * n - h <= hi && c * n + n + h >= lo;
                if reads(x, b.min.x, b.max.x)
                    && reads(y, b.min.y, b.max.y)
                    && reads(z, b.min.z, b.max.z)
                {
                    out.insert((z, y, x));
                }
            }
        }
    }
}

/// Statistics of the chunk meshes, printed and written to the summary.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkMeshStats {
    /// `mc`, `mc33`, `sn` or `dc`.
    pub mesher: &'static str,
    /// Chunks meshed (including empty ones).
    pub chunks: usize,
    /// Chunks with triangles.
    pub nonempty_chunks: usize,
    /// Vertices and triangles over all chunks.
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
    /// Milliseconds filling the chunk grids from the field.
    pub fill_ms: f64,
    /// Milliseconds meshing.
    pub mesh_ms: f64,
}

/// Meshed chunks: keys and meshes, in ascending (z, y, x) order.
pub struct ChunkMeshes {
    /// Chunk keys and meshes.
    pub meshes: Vec<(ChunkKey, MeshBuffer)>,
    /// Their statistics.
    pub stats: ChunkMeshStats,
}

/// Meshes every chunk in `keys` with `mesher`.
pub fn mesh_chunks(field: &Field, keys: &BTreeSet<(i32, i32, i32)>, mesher: Mesher) -> ChunkMeshes {
    let n = (CHUNK_CELLS as u32 + 1 + 2 * CHUNK_HALO) as usize;
    let (mut values, mut materials) = (vec![0.0f32; n * n * n], vec![0u8; n * n * n]);
    let vs = field.settings().voxel_size;
    let (mut fill_ms, mut mesh_ms) = (0.0, 0.0);
    let mut meshes = Vec::new();
    for &(z, y, x) in keys {
        let key = ChunkKey::new(x, y, z);
        let t = Instant::now();
        field.fill_chunk(key, CHUNK_HALO, &mut values, &mut materials);
        fill_ms += t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let mut mesh = MeshBuffer::default();
        mesher.mesh(
            &Grid::chunk(&values, &materials, CHUNK_HALO, vs as f32),
            &mut mesh,
        );
        mesh_ms += t.elapsed().as_secs_f64() * 1e3;
        meshes.push((key, mesh));
    }
    let origin = |k: ChunkKey| k.min_sample().to_array().map(|c| f64::from(c) * vs);
    let parts: Vec<WeldPart> = meshes
        .iter()
        .map(|(k, m)| (origin(*k), &m.positions[..], &m.indices[..]))
        .collect();
    let (pos, idx) = weld(&parts, 1e-5 * vs);
    let welded = mesh_stats(&pos, &idx);
    let stats = ChunkMeshStats {
        mesher: mesher.name(),
        chunks: meshes.len(),
        nonempty_chunks: meshes.iter().filter(|(_, m)| !m.is_empty()).count(),
        vertices: meshes.iter().map(|(_, m)| m.positions.len()).sum(),
        triangles: meshes.iter().map(|(_, m)| m.triangle_count()).sum(),
        area_m2: welded.area,
        welded_boundary_edges: welded.boundary_edges,
        welded_nonmanifold_edges: welded.nonmanifold_edges,
        fill_ms,
        mesh_ms,
    };
    ChunkMeshes { meshes, stats }
}

impl ChunkMeshes {
    /// The meshes as export parts, each translated to its chunk's origin.
    pub fn parts(&self, voxel_size: f64) -> Vec<Part<'_>> {
        self.meshes
            .iter()
            .map(|(k, m)| Part {
                name: format!("chunk_{}_{}_{}", k.x, k.y, k.z),
                offset: k.min_sample().to_array().map(|c| f64::from(c) * voxel_size),
                positions: &m.positions,
                normals: &m.normals,
                indices: &m.indices,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loam_field::SamplePos;

    #[test]
    fn chunks_reading_a_sample_include_halo_readers() {
        let mut s = BTreeSet::new();
        // Sample 32 is chunk 1's first sample and within chunk 0's upper halo.
        chunks_reading(&SampleBox::point(SamplePos::new(32, 5, 5)), &mut s);
        assert_eq!(
            s.into_iter().collect::<Vec<_>>(),
            vec![(0, 0, 0), (0, 0, 1)]
        );
        // Sample (31, 31, 31) is read by 8 chunks (halo 2 reaches 33).
        let mut s = BTreeSet::new();
        chunks_reading(&SampleBox::point(SamplePos::new(-1, -1, -1)), &mut s);
        assert_eq!(s.len(), 8);
        let mut s = BTreeSet::new();
        chunks_reading(&SampleBox::point(SamplePos::new(16, 16, 16)), &mut s);
        assert_eq!(s.len(), 1);
    }
}
