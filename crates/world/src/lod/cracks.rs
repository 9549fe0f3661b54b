//! The crack metric (issue 11): every shown mesh, of every level, welded by position; an edge
//! used by exactly one triangle is an open edge — a crack — unless it lies on the outer
//! boundary of the view, where the shown chunks end.

use std::collections::{BTreeMap, BTreeSet};

use loam_mesh::MeshBuffer;

use super::key::LodKey;
use super::select::neighbour_offsets;

/// Open edges of a set of chunk meshes welded by position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenEdges {
    /// Edges used by exactly one triangle with an end inside the view: cracks.
    pub inside: usize,
    /// Edges used by exactly one triangle with both ends on the outer boundary of the view.
    pub outer: usize,
    /// Triangles welded.
    pub triangles: usize,
    /// Edges used by more than two triangles (non-manifold), anywhere.
    pub nonmanifold: usize,
}

/// Welds `meshes` (each an origin in world metres and a mesh whose positions are relative to
/// it, e.g. [`crate::ChunkMesh::origin`] and [`crate::ChunkMesh::mesh`]) by exact position
/// (`origin + position` in f64, bit for bit; seams are bit-exact by construction) and counts
/// edges used by exactly one triangle. `view` is the set of chunks in view (all levels; level-0
/// worlds pass [`LodKey::level0`] of their loaded chunks, with or without a mesh): an open edge
/// whose two ends both lie outside their union or within two cells (of the level of the chunk
/// holding the end) of its boundary is on the outer edge of the view and counted in
/// [`OpenEdges::outer`], every other one in [`OpenEdges::inside`]. `voxel_size` is the level-0
/// voxel size in metres.
pub fn open_edges<'a>(
    meshes: impl IntoIterator<Item = ([f64; 3], &'a MeshBuffer)>,
    view: &BTreeSet<LodKey>,
    voxel_size: f64,
) -> OpenEdges {
    let mut ids: BTreeMap<[u64; 3], u32> = BTreeMap::new();
    let mut points: Vec<[f64; 3]> = Vec::new();
    let mut edges: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut triangles = 0;
    for (origin, mesh) in meshes {
        let local: Vec<u32> = mesh
            .positions
            .iter()
            .map(|p| {
                let w = [0, 1, 2].map(|a| origin[a] + f64::from(p[a]));
                let bits = w.map(|c| (c + 0.0).to_bits());
                *ids.entry(bits).or_insert_with(|| {
                    points.push(w);
                    points.len() as u32 - 1
                })
            })
            .collect();
        for t in mesh.indices.chunks_exact(3) {
            let v = [0, 1, 2].map(|i| local[t[i] as usize]);
            if v[0] == v[1] || v[1] == v[2] || v[0] == v[2] {
                continue;
            }
            triangles += 1;
            for i in 0..3 {
                let (a, b) = (v[i], v[(i + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
    }
    let top = view.iter().map(|k| k.level).max().unwrap_or(0);
    // The level of the chunk of the view holding `p`, if one does.
    let level_at = |p: [f64; 3]| {
        super::select::level0_key(p, voxel_size)
            .and_then(|k0| (0..=top).find(|&l| view.contains(&k0.ancestor(l))))
    };
    // The dual meshers' open edges at the view's end join vertices of the cells on both sides
    // of it (their vertices are inside cells), not points on the boundary plane as Marching
    // Cubes' do; where the view's boundary turns a corner, such an edge can end in the second
    // layer of cells. So an end is on the outer edge when a step of two cells of the chunk
    // holding it (and a little) leaves the view, or it lies outside the view.
    let on_outer = |p: [f64; 3]| {
        let Some(l) = level_at(p) else {
            return true;
        };
        let eps = (2.0 + 1e-3) * voxel_size * f64::from(1u32 << l);
        neighbour_offsets()
            .any(|d| level_at([0, 1, 2].map(|a| p[a] + eps * f64::from(d[a]))).is_none())
    };
    let mut out = OpenEdges {
        triangles,
        ..OpenEdges::default()
    };
    for (&(a, b), &n) in &edges {
        if n > 2 {
            out.nonmanifold += 1;
        }
        if n != 1 {
            continue;
        }
        if on_outer(points[a as usize]) && on_outer(points[b as usize]) {
            out.outer += 1;
        } else {
            out.inside += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(positions: &[[f32; 3]], indices: &[u32]) -> MeshBuffer {
        let mut m = MeshBuffer::default();
        m.positions = positions.to_vec();
        m.normals = vec![[0.0, 1.0, 0.0]; positions.len()];
        m.materials = vec![0; positions.len()];
        m.indices = indices.to_vec();
        m
    }

    /// A closed tetrahedron split over two meshes (welded by position): no open edge, none
    /// non-manifold. A fin on one of its edges makes that edge non-manifold (three
    /// triangles), and a second fin on it still counts it once.
    #[test]
    fn welded_edges_are_counted_open_and_non_manifold() {
        let p = [
            [10.0, 10.0, 10.0],
            [12.0, 10.0, 10.0],
            [10.0, 12.0, 10.0],
            [10.0, 10.0, 12.0],
        ];
        let a = mesh(&p, &[0, 2, 1, 0, 1, 3]);
        let b = mesh(&p, &[0, 3, 2, 1, 2, 3]);
        let view: BTreeSet<LodKey> = [LodKey::new(0, [0, 0, 0])].into();
        let closed = open_edges([([0.0; 3], &a), ([0.0; 3], &b)], &view, 1.0);
        assert_eq!(
            (closed.inside, closed.nonmanifold, closed.triangles),
            (0, 0, 4)
        );
        let fins = mesh(
            &[
                [10.0, 10.0, 10.0],
                [12.0, 10.0, 10.0],
                [11.0, 8.0, 13.0],
                [11.0, 9.0, 7.0],
            ],
            &[0, 1, 2, 1, 0, 3],
        );
        let one_fin = mesh(&fins.positions, &fins.indices[..3]);
        let e = open_edges(
            [([0.0; 3], &a), ([0.0; 3], &b), ([0.0; 3], &one_fin)],
            &view,
            1.0,
        );
        assert_eq!((e.nonmanifold, e.inside, e.triangles), (1, 2, 5));
        let e = open_edges(
            [([0.0; 3], &a), ([0.0; 3], &b), ([0.0; 3], &fins)],
            &view,
            1.0,
        );
        assert_eq!((e.nonmanifold, e.inside, e.triangles), (1, 4, 6));
    }
}
