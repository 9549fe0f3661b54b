//! What a front end shows: the meshes it was handed, kept by chunk. The editor keeps GPU
//! meshes instead; tests and `loam replay` keep this.

use std::collections::BTreeMap;

use loam_field::ChunkKey;

use crate::batch::{ChunkMesh, Update};
use crate::lod::LodKey;

/// A front end handed a mesh older than one it already shows — a stale mesh; never happens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chunk {key:?} shows version {shown} and was handed the older version {got}")]
pub struct StaleMesh {
    /// The chunk.
    pub key: LodKey,
    /// The version it shows.
    pub shown: u64,
    /// The version it was handed.
    pub got: u64,
}

/// The non-empty meshes a front end shows, by chunk.
#[derive(Debug, Default, Clone)]
pub struct Shown {
    meshes: BTreeMap<LodKey, ChunkMesh>,
    versions: BTreeMap<LodKey, u64>,
}

impl Shown {
    /// Applies updates in order: a group drops the chunks it removes, then replaces its
    /// chunks' meshes (an empty mesh removes one); a removal drops a chunk.
    ///
    /// # Errors
    /// [`StaleMesh`] if a group hands over a version older than the one shown; the updates
    /// before it stay applied.
    pub fn apply(&mut self, updates: impl IntoIterator<Item = Update>) -> Result<(), StaleMesh> {
        for u in updates {
            match u {
                Update::Removed(key) => {
                    self.meshes.remove(&LodKey::level0(key));
                    self.versions.remove(&LodKey::level0(key));
                }
                Update::Group(g) => {
                    for key in &g.removed {
                        self.meshes.remove(key);
                        self.versions.remove(key);
                    }
                    for m in g.meshes {
                        let key = m.lod_key();
                        if let Some(&shown) = self.versions.get(&key)
                            && shown >= m.version
                        {
                            return Err(StaleMesh {
                                key,
                                shown,
                                got: m.version,
                            });
                        }
                        self.versions.insert(key, m.version);
                        if m.mesh.is_empty() {
                            self.meshes.remove(&key);
                        } else {
                            self.meshes.insert(key, m);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The non-empty meshes, ascending by chunk (level, then z, y, x).
    pub fn meshes(&self) -> impl Iterator<Item = &ChunkMesh> {
        self.meshes.values()
    }

    /// The mesh of level-0 chunk `key`, if it shows one.
    pub fn get(&self, key: ChunkKey) -> Option<&ChunkMesh> {
        self.meshes.get(&LodKey::level0(key))
    }

    /// The mesh of chunk `key` of any level, if it shows one.
    pub fn get_lod(&self, key: LodKey) -> Option<&ChunkMesh> {
        self.meshes.get(&key)
    }

    /// Open edges of every shown mesh welded by position ([`crate::lod::open_edges`]), with
    /// `view` the chunks in view ([`crate::World::view`]) and level-0 voxels of `voxel_size`
    /// metres: `inside` counts the cracks.
    pub fn open_edges(
        &self,
        view: &std::collections::BTreeSet<LodKey>,
        voxel_size: f64,
    ) -> crate::lod::OpenEdges {
        crate::lod::open_edges(
            self.meshes().map(|m| (m.origin, &*m.mesh)),
            view,
            voxel_size,
        )
    }

    /// The meshers that built the meshes shown (not counting empty ones), in
    /// [`loam_mesh::Mesher`] order.
    pub fn meshers(&self) -> std::collections::BTreeSet<loam_mesh::Mesher> {
        self.meshes().map(|m| m.mesher).collect()
    }

    /// Chunks with a mesh shown.
    pub fn len(&self) -> usize {
        self.meshes.len()
    }

    /// Whether nothing is shown.
    pub fn is_empty(&self) -> bool {
        self.meshes.is_empty()
    }
}
