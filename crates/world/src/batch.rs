//! Batches: the chunks of one edit (or one streaming load, or one rebuild), delivered to the
//! front end together.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::Instant;

use loam_field::ChunkKey;
use loam_mesh::MeshBuffer;

use crate::lod::LodKey;

/// A chunk's mesh as the front end receives it.
#[derive(Debug, Clone)]
pub struct ChunkMesh {
    /// The chunk, in chunks of its level (level 0: the ordinary chunk key).
    pub key: ChunkKey,
    /// Its level of detail: 0 without level of detail; level `k` has cells of `2^k` voxels
    /// and covers `32 · 2^k` samples per axis (see [`LodKey`]).
    pub level: u8,
    /// The chunk version the mesh was built for; versions of one chunk only grow.
    pub version: u64,
    /// World position of the chunk's lowest corner (sample `32 · 2^level · key`), metres; the
    /// mesh's positions are metres relative to it (already scaled: draw them as they are).
    pub origin: [f64; 3],
    /// The mesher that built it: the world's, or with levels of detail Marching Cubes
    /// (Transvoxel's level seams are Marching Cubes'; the other meshers have none yet).
    pub mesher: loam_mesh::Mesher,
    /// The mesh (empty: the chunk has no surface, drop what was shown).
    pub mesh: Arc<MeshBuffer>,
    /// One RGBA colour per vertex of `mesh`, made on the worker that built it by the
    /// world's [`crate::World::set_vertex_colors`]; empty where the world has none.
    pub colors: Arc<[[f32; 4]]>,
}

impl ChunkMesh {
    /// The chunk with its level.
    pub fn lod_key(&self) -> LodKey {
        LodKey::new(self.level, [self.key.x, self.key.y, self.key.z])
    }
}

/// Why a group of meshes was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    /// Chunks changed by edits applied in one frame (several, when a newer edit merged an
    /// older one still being built). Swap all of them in the same frame.
    Edit,
    /// A chunk that came into view; with level of detail, every chunk that came into view,
    /// changed level or changed its transition faces as the viewers moved (with the chunks
    /// it replaces in [`Group::removed`]).
    Stream,
    /// A chunk rebuilt after the mesher changed.
    Rebuild,
}

/// Meshes to show together, in one frame.
#[derive(Debug, Clone)]
pub struct Group {
    /// Batch id, increasing in the order batches were formed.
    pub id: u64,
    /// Why it was built.
    pub kind: BatchKind,
    /// Ops whose changes it shows (0 for streaming and rebuilds).
    pub ops: usize,
    /// Chunks to stop showing in the same frame, before showing `meshes` (level of detail
    /// only: the chunks of another level that the new ones replace; empty otherwise, where
    /// [`Update::Removed`] says it).
    pub removed: Vec<LodKey>,
    /// One mesh per chunk, in ascending chunk order (by level, then z, y, x).
    pub meshes: Vec<ChunkMesh>,
}

/// What the front end is told, in order.
#[derive(Debug, Clone)]
pub enum Update {
    /// Show these meshes, all in the same frame.
    Group(Group),
    /// The chunk left the view: stop showing it.
    Removed(ChunkKey),
}

/// How much one [`World::pull`](crate::World::pull) hands over. A group is never split, and
/// the first group is always handed over even if it alone exceeds the budget, so no group
/// waits forever.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PullBudget {
    /// Most chunk meshes.
    pub max_chunks: usize,
    /// Most time spent, measured from the call; `None` for no limit.
    pub max_time: Option<Duration>,
}

impl PullBudget {
    /// Everything that is ready.
    pub const ALL: Self = Self {
        max_chunks: usize::MAX,
        max_time: None,
    };

    /// At most `n` chunk meshes.
    pub fn chunks(n: usize) -> Self {
        Self {
            max_chunks: n,
            max_time: None,
        }
    }
}

/// A batch being built or waiting to be pulled.
#[derive(Debug)]
pub(crate) struct Batch {
    pub kind: BatchKind,
    /// Chunks whose current version is not built yet.
    pub waiting: BTreeSet<LodKey>,
    /// Built meshes of current versions.
    pub ready: BTreeMap<LodKey, ChunkMesh>,
    /// Shown chunks that leave the view when this batch is shown (level of detail).
    pub removed: BTreeSet<LodKey>,
    /// When each op of the batch was applied.
    pub edits: Vec<Instant>,
    /// When the last chunk was built; `None` while a chunk is waiting.
    pub complete: Option<Instant>,
    /// When it first completed (its ops' latency is measured to there).
    pub completed_once: Option<Instant>,
    /// A built edit batch handed over as it is, its chunks already released to a newer
    /// edit (`World::seal`): no chunk refers to it, and pulling it changes no chunk.
    pub frozen: bool,
}

impl Batch {
    pub fn new(kind: BatchKind) -> Self {
        Self {
            kind,
            waiting: BTreeSet::new(),
            ready: BTreeMap::new(),
            removed: BTreeSet::new(),
            edits: Vec::new(),
            complete: None,
            completed_once: None,
            frozen: false,
        }
    }
}
