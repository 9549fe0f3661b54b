//! What a front end shows: the meshes it was handed, kept by chunk. The editor keeps GPU
//! meshes instead; tests and `loam replay` keep this.

use std::collections::BTreeMap;

use loam_field::ChunkKey;

use crate::batch::{ChunkMesh, Update};

/// A front end handed a mesh older than one it already shows — a stale mesh; never happens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chunk {key:?} shows version {shown} and was handed the older version {got}")]
pub struct StaleMesh {
    /// The chunk.
    pub key: ChunkKey,
    /// The version it shows.
    pub shown: u64,
    /// The version it was handed.
    pub got: u64,
}

/// The non-empty meshes a front end shows, by chunk.
#[derive(Debug, Default, Clone)]
pub struct Shown {
    meshes: BTreeMap<ChunkKey, ChunkMesh>,
    versions: BTreeMap<ChunkKey, u64>,
}

impl Shown {
    /// Applies updates in order: a group replaces its chunks' meshes (an empty mesh removes
    /// one), a removal drops a chunk.
    ///
    /// # Errors
    /// [`StaleMesh`] if a group hands over a version older than the one shown; the updates
    /// before it stay applied.
    pub fn apply(&mut self, updates: impl IntoIterator<Item = Update>) -> Result<(), StaleMesh> {
        for u in updates {
            match u {
                Update::Removed(key) => {
                    self.meshes.remove(&key);
                    self.versions.remove(&key);
                }
                Update::Group(g) => {
                    for m in g.meshes {
                        if let Some(&shown) = self.versions.get(&m.key)
                            && shown >= m.version
                        {
                            return Err(StaleMesh {
                                key: m.key,
                                shown,
                                got: m.version,
                            });
                        }
                        self.versions.insert(m.key, m.version);
                        if m.mesh.is_empty() {
                            self.meshes.remove(&m.key);
                        } else {
                            self.meshes.insert(m.key, m);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The non-empty meshes, ascending by chunk.
    pub fn meshes(&self) -> impl Iterator<Item = &ChunkMesh> {
        self.meshes.values()
    }

    /// The mesh of `key`, if it shows one.
    pub fn get(&self, key: ChunkKey) -> Option<&ChunkMesh> {
        self.meshes.get(&key)
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
