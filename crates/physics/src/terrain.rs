//! Terrain colliders: one static trimesh per chunk, built off the physics thread and
//! swapped in with its batch.

use rapier3d::math::Vector;
use rapier3d::parry::shape::{SharedShape, TriMesh, TriMeshFlags};
use rapier3d::prelude::{Aabb, ColliderBuilder};

use crate::error::{PhysicsError, check_finite};
use crate::world::{PhysicsWorld, terrain_tag, vec3};

/// Flags of every terrain trimesh: equal positions are merged into one vertex (meshers may
/// emit a vertex twice), zero-area and duplicate triangles are dropped, and contacts on
/// edges between two triangles use the neighbours' normals (`FIX_INTERNAL_EDGES`), so a
/// rolling ball or a sliding box does not catch on the seams between triangles.
const TRIMESH_FLAGS: TriMeshFlags = TriMeshFlags::FIX_INTERNAL_EDGES
    .union(TriMeshFlags::MERGE_DUPLICATE_VERTICES)
    .union(TriMeshFlags::DELETE_DEGENERATE_TRIANGLES)
    .union(TriMeshFlags::DELETE_DUPLICATE_TRIANGLES);

/// A chunk's collision shape, ready to be swapped into a [`PhysicsWorld`]: a trimesh with
/// its BVH, placed at `origin`. Building it is the expensive part, so do it on a worker
/// thread (the type is `Send + Sync`) and hand the result to the physics owner.
///
/// Cloning is cheap (the mesh is shared).
#[derive(Clone)]
pub struct TerrainShape {
    shape: SharedShape,
    origin: [f32; 3],
    triangles: usize,
}

impl std::fmt::Debug for TerrainShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerrainShape")
            .field("origin", &self.origin)
            .field("triangles", &self.triangles)
            .finish()
    }
}

impl TerrainShape {
    /// Builds a chunk's collider shape from a mesher's output.
    ///
    /// `positions` are chunk-local metres, `indices` three per triangle (any winding; Loam's
    /// meshers wind counter-clockwise seen from the air), `origin` the chunk's lowest corner
    /// in world metres. World position of a vertex = `origin + position`.
    ///
    /// Triangles with a repeated index or zero area are skipped. Returns `Ok(None)` when no
    /// triangle is left (an all-air or all-solid chunk): pass that to
    /// [`PhysicsWorld::set_chunk`] to clear the chunk.
    ///
    /// Cost: O(n log n) in the triangle count (BVH build): about 2.5 ms for a 3 000-triangle
    /// chunk of hilly terrain (see the crate docs); call it off the physics thread.
    ///
    /// # Errors
    /// [`PhysicsError::IndicesNotTriangles`], [`PhysicsError::IndexOutOfRange`],
    /// [`PhysicsError::NonFinitePosition`], [`PhysicsError::TooManyVertices`], or
    /// [`PhysicsError::NonFinite`] for a non-finite `origin`.
    pub fn build(
        positions: &[[f32; 3]],
        indices: &[u32],
        origin: [f32; 3],
    ) -> Result<Option<TerrainShape>, PhysicsError> {
        check_finite("origin", &origin)?;
        if !indices.len().is_multiple_of(3) {
            return Err(PhysicsError::IndicesNotTriangles { len: indices.len() });
        }
        if u32::try_from(positions.len()).is_err() {
            return Err(PhysicsError::TooManyVertices {
                count: positions.len(),
            });
        }
        if let Some(i) = indices.iter().position(|&i| i as usize >= positions.len()) {
            return Err(PhysicsError::IndexOutOfRange {
                triangle: i / 3,
                index: indices[i],
                vertex_count: positions.len(),
            });
        }
        if let Some(v) = positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return Err(PhysicsError::NonFinitePosition {
                vertex: v,
                position: positions[v],
            });
        }

        let vertices: Vec<Vector> = positions.iter().map(|&p| vec3(p)).collect();
        let triangles: Vec<[u32; 3]> = indices
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]])
            .filter(|&[a, b, c]| {
                let (a, b, c) = (
                    vertices[a as usize],
                    vertices[b as usize],
                    vertices[c as usize],
                );
                (b - a).cross(c - a).length_squared() > 0.0
            })
            .collect();
        if triangles.is_empty() {
            return Ok(None);
        }
        // Cannot fail: the index buffer is not empty and no topology is requested.
        let Ok(mesh) = TriMesh::with_flags(vertices, triangles, TRIMESH_FLAGS) else {
            return Ok(None);
        };
        let triangles = mesh.num_triangles();
        if triangles == 0 {
            return Ok(None);
        }
        Ok(Some(TerrainShape {
            shape: SharedShape::new(mesh),
            origin,
            triangles,
        }))
    }

    /// World position of the mesh's local origin, metres.
    pub fn origin(&self) -> [f32; 3] {
        self.origin
    }

    /// Triangles kept (after dropping degenerate and duplicate ones).
    pub fn triangle_count(&self) -> usize {
        self.triangles
    }
}

impl PhysicsWorld {
    /// Replaces the collider of chunk `key` with `shape`, or removes it when `shape` is
    /// `None`. `key` only names the chunk (integer chunk coordinates); where the mesh lies
    /// comes from the shape's origin. O(log chunks) plus the broad-phase insertion; the
    /// trimesh is not copied.
    ///
    /// Takes effect at once for scene queries and character moves; dynamic bodies touching
    /// the old or new collider are woken. To swap the chunks of one edit together, use
    /// [`Self::set_chunks`] (or call this for each before the next step or move: nothing
    /// simulates in between).
    pub fn set_chunk(&mut self, key: [i32; 3], shape: Option<TerrainShape>) {
        self.remove_chunk(key);
        let Some(shape) = shape else { return };
        let collider = ColliderBuilder::new(shape.shape)
            .translation(vec3(shape.origin))
            .user_data(terrain_tag(key))
            .build();
        let aabb = collider.compute_aabb();
        let handle = self.insert_collider_now(collider, None);
        self.chunks.insert(key, handle);
        self.wake_bodies_in(aabb);
    }

    /// The bounds of chunk `key`'s collider, if it has one.
    fn chunk_aabb(&self, key: [i32; 3]) -> Option<Aabb> {
        let handle = self.chunks.get(&key)?;
        Some(self.rapier.colliders.get(*handle)?.compute_aabb())
    }

    /// [`Self::set_chunk`] for each entry, in order (a key given twice ends with its last
    /// shape). All swaps happen before anything moves again, so the player never stands
    /// over a hole whose new floor is not in yet.
    pub fn set_chunks(
        &mut self,
        batch: impl IntoIterator<Item = ([i32; 3], Option<TerrainShape>)>,
    ) {
        for (key, shape) in batch {
            self.set_chunk(key, shape);
        }
    }

    /// Removes chunk `key`'s collider. Returns whether there was one. Dynamic bodies
    /// touching it wake (at once: a new collider whose bounds miss them, a surface lowered
    /// by a dig, must not leave them asleep in the air) and fall.
    pub fn remove_chunk(&mut self, key: [i32; 3]) -> bool {
        let bounds = self.chunk_aabb(key);
        match self.chunks.remove(&key) {
            Some(handle) => {
                let removed = self.rapier.remove_collider(handle);
                if let Some(aabb) = bounds {
                    self.wake_bodies_in(aabb);
                }
                removed.is_some()
            }
            None => false,
        }
    }

    /// Number of chunks with a collider.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Whether chunk `key` has a collider.
    pub fn has_chunk(&self, key: [i32; 3]) -> bool {
        self.chunks.contains_key(&key)
    }

    /// Keys of the chunks with a collider, ascending.
    pub fn chunk_keys(&self) -> impl Iterator<Item = [i32; 3]> + '_ {
        self.chunks.keys().copied()
    }

    /// The collider handle of a chunk (tests and debugging).
    #[cfg(test)]
    pub(crate) fn chunk_collider(
        &self,
        key: [i32; 3],
    ) -> Option<rapier3d::prelude::ColliderHandle> {
        self.chunks.get(&key).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PhysicsSettings;

    fn quad() -> (Vec<[f32; 3]>, Vec<u32>) {
        (
            vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 0.0, 1.0],
                [0.0, 0.0, 1.0],
            ],
            vec![0, 2, 1, 0, 3, 2],
        )
    }

    #[test]
    fn shape_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<TerrainShape>();
        check::<PhysicsWorld>();
    }

    #[test]
    fn degenerate_and_duplicate_triangles_are_dropped() {
        let (mut p, mut i) = quad();
        p.push([0.0, 0.0, 0.0]); // a duplicate of vertex 0
        i.extend([0, 0, 1]); // repeated index
        i.extend([0, 1, 4]); // zero area (4 == 0's position)
        i.extend([4, 2, 1]); // duplicate of the first after merging
        let s = TerrainShape::build(&p, &i, [0.0; 3]).unwrap().unwrap();
        assert_eq!(s.triangle_count(), 2);
        assert!(
            TerrainShape::build(&p, &[0, 0, 1, 0, 1, 4], [0.0; 3])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn set_chunk_replaces_and_removes() {
        let (p, i) = quad();
        let mut w = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let s = TerrainShape::build(&p, &i, [0.0; 3]).unwrap();
        w.set_chunk([0, 0, 0], s.clone());
        let first = w.chunk_collider([0, 0, 0]).unwrap();
        w.set_chunk([0, 0, 0], s);
        let second = w.chunk_collider([0, 0, 0]).unwrap();
        assert_ne!(first, second);
        assert!(w.rapier.colliders.get(first).is_none());
        assert_eq!(w.rapier.colliders.len(), 1);
        w.set_chunk([0, 0, 0], None);
        assert_eq!(w.chunk_count(), 0);
        assert_eq!(w.rapier.colliders.len(), 0);
        assert!(!w.remove_chunk([0, 0, 0]));
    }
}
