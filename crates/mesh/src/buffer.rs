//! The caller-owned, reusable mesh buffer.

/// A triangle mesh, reused between calls: a mesher clears it (keeping its capacity) and fills
/// it. Positions are local f32 metres (see [`crate::Grid`]), normals unit length,
/// triangles counter-clockwise seen from the air side.
#[derive(Default, Clone, Debug)]
pub struct MeshBuffer {
    /// Vertex positions, metres.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals pointing into the air.
    pub normals: Vec<[f32; 3]>,
    /// Material id per vertex (from the nearest inside sample).
    pub materials: Vec<u8>,
    /// Three vertex indices per triangle.
    pub indices: Vec<u32>,
    pub(crate) scratch: Scratch,
}

/// Per-call caches, kept between calls so meshing does not allocate once grown.
///
/// One concept despite its many fields: the working memory of one mesher call, each field a
/// buffer or flag a stage of it (vertex lookup, normals, twin cancellation, pinch
/// splitting, sliver repair) reuses. None outlives the call's meaning; only their capacity
/// is kept; the pinch splitter's part is one inline sub-struct, [`PinchScratch`].
#[derive(Default, Clone, Debug)]
pub(crate) struct Scratch {
    /// Vertex ids by grid edge, cell and sample, kept clear between calls.
    pub(crate) vertex_ids: VertexIds,
    /// Accumulated triangle normals for the gradient fallback.
    pub(crate) face_normals: Vec<[f32; 3]>,
    /// Flat triangles of [`crate::mc33`] awaiting cancellation, each with whether a cell of
    /// the grid's shell made it.
    pub(crate) flat: Vec<([u32; 3], bool)>,
    /// Vertex ids of a dual cell's second to fourth patch: (cell index, patch) → id.
    pub(crate) extra_patches: crate::patch_table::PatchTable,
    /// Vertex ids of Marching Cubes per edge and sample of two layers of samples.
    pub(crate) layers: Vec<u32>,
    /// Sign masks of sample rows for finding surface cells.
    pub(crate) masks: Vec<u64>,
    /// Whether a zero-area triangle was pushed this call.
    pub(crate) has_degenerate: bool,
    /// Whether a triangle with a repeated vertex was left out this call: its vertices may be
    /// unused, which [`crate::normals::remove_degenerate`] then compacts.
    pub(crate) dropped_triangle: bool,
    /// The pinch splitter's candidates, marks and buffers ([`crate::pinch::split_pinches`]).
    pub(crate) pinch: PinchScratch,
    /// The sliver splitter's edge table and queues.
    pub(crate) sliver_work: crate::slivers::SliverWork,
    /// The zero-area clean-up's and the vertex compaction's tables.
    pub(crate) cleanup: CleanupScratch,
    /// What the mesher made in the grid's shell of cells beyond its range.
    pub(crate) shell: ShellScratch,
    /// The vanished-gradient fallback's face normals, `(vertex, normal)`.
    pub(crate) fallback: Vec<(u32, [f32; 3])>,
    /// Dual vertices on their cell's boundary (which may coincide with a neighbour cell's):
    /// [`crate::normals::remove_degenerate`] merges vertices by position where two of them
    /// coincide.
    pub(crate) boundary: Vec<u32>,
    /// Those of them in a cell whose quads reach the grid's shell, with their cells,
    /// patches and whether they lie on a face toward a cell the range makes no vertex for
    /// (the only ones that may coincide with a vertex of the shell).
    pub(crate) boundary_out: Vec<(u32, [u32; 3], u8, bool)>,
    /// Whether a vertex's gradient may have vanished (the dual meshers note it as they make
    /// their vertices; `true` where a mesher does not).
    pub(crate) vanished: bool,
    /// Whether positions are the same bits in every grid that makes them, whatever its
    /// origin (the dual meshers'): then sums over a vertex's triangles (fan and fallback
    /// normals) run in an order of their values rather than of triangle ids, and vertices
    /// merged at one position keep the least normal, so that a vertex on a chunk border gets
    /// the same normal in both chunks.
    pub(crate) exact_frame: bool,
    /// Vertices beside a seam between levels of detail ([`crate::level_seams`]): a
    /// zero-area triangle at one of them is kept, not split into its neighbours, because a
    /// neighbour may be another chunk's triangle.
    pub(crate) pinned: Vec<u32>,
}

/// What the pinch splitter ([`crate::pinch::split_pinches`]) keeps between calls: the
/// candidates a mesher lists, their marks and corners, and its own buffers.
#[derive(Default, Clone, Debug)]
pub(crate) struct PinchScratch {
    /// Vertices where sheets of surface may touch.
    pub(crate) candidates: Vec<u32>,
    /// The dual meshers' candidates with their cells and patches, as made.
    pub(crate) cells: Vec<(u32, [u32; 3], u8)>,
    /// Per vertex, value bit 0 (1): a pinch candidate; bit 1 (2): on a candidate's triangle.
    pub(crate) mark: Vec<u8>,
    /// Whether the candidates' neighbours are split too (MC33's folded sheets need it).
    pub(crate) ring: bool,
    /// `(vertex, triangle)` corners at marked vertices.
    pub(crate) corners: Vec<(u32, u32)>,
    /// Whether the mesher listed the candidates' corners in `corners` (plus corners of
    /// triangles without the vertex) and no triangle has changed since.
    pub(crate) recorded: bool,
    /// The splitter's buffers.
    pub(crate) work: crate::pinch::PinchWork,
}

/// The zero-area clean-up's position table, vertex map and triangles, and the vertex
/// compaction's new ids ([`crate::normals::remove_degenerate`]).
#[derive(Default, Clone, Debug)]
pub(crate) struct CleanupScratch {
    /// Vertex ids by position (an open-addressing table).
    pub(crate) positions: Vec<u32>,
    /// Each vertex's id after merging.
    pub(crate) remap: Vec<u32>,
    /// The triangles kept.
    pub(crate) triangles: Vec<[u32; 3]>,
    /// Each vertex's new id after unused vertices are dropped.
    pub(crate) new_id: Vec<u32>,
}

/// What a mesher made in the grid's shell: one layer of cells beyond its range, meshed so
/// that decisions on the range's border are made as in the neighbouring chunk, then cut.
#[derive(Default, Clone, Debug)]
pub(crate) struct ShellScratch {
    /// Per triangle, whether a cell of the shell made it (a *ghost*, see
    /// [`crate::normals::finish`]); empty when the mesher meshed no shell.
    pub(crate) ghost: Vec<bool>,
    /// Vertices the cell range's own triangles made before the shell's were added.
    pub(crate) own_vertices: usize,
    /// Vertices once the shell's were added (the clean-up appends any others after them).
    pub(crate) made: usize,
    /// Whether the range's own triangles use every vertex they made, as the dual meshers'
    /// quads do (each uses its four vertices, and none is dropped while meshing).
    pub(crate) dense: bool,
    /// Whether the clean-up renumbered vertices or remade triangles since the shell was
    /// meshed (`cut_ghosts` then compacts the vertices from scratch).
    pub(crate) renumbered: bool,
    /// Marching Cubes' vertices on the cell range's border planes, by position, for the
    /// shell's cells to share.
    pub(crate) border_keys: Vec<([u32; 3], u32)>,
}

/// Vertex ids per grid edge or cell and per sample, `u32::MAX` where none, with the entries
/// written this call so that [`VertexIds::reset`] clears only those.
#[derive(Default, Clone, Debug)]
pub(crate) struct VertexIds {
    /// Vertex id per grid edge (3 per sample) or per cell, `u32::MAX` when none (the dual
    /// meshers keep flags and a visited cell's case there too, see `dual.rs`).
    pub(crate) ids: Vec<u32>,
    /// Vertex id per sample for vertices that land exactly on a sample.
    pub(crate) sample_ids: Vec<u32>,
    /// Entries of `ids` / `sample_ids` written this call, reset at the end.
    pub(crate) written: Vec<usize>,
    pub(crate) sample_written: Vec<usize>,
}

impl VertexIds {
    /// Grows the tables to `n` entries (edges or cells) and `samples` samples.
    pub(crate) fn prepare(&mut self, n: usize, samples: usize) {
        if self.ids.len() < n {
            self.ids.resize(n, u32::MAX);
        }
        if self.sample_ids.len() < samples {
            self.sample_ids.resize(samples, u32::MAX);
        }
    }

    /// Resets every entry written this call to `u32::MAX`.
    pub(crate) fn reset(&mut self) {
        for &i in &self.written {
            self.ids[i] = u32::MAX;
        }
        for &i in &self.sample_written {
            self.sample_ids[i] = u32::MAX;
        }
        self.written.clear();
        self.sample_written.clear();
    }
}

impl MeshBuffer {
    /// Empties the mesh, keeping capacity.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.materials.clear();
        self.indices.clear();
        self.scratch.pinch.candidates.clear();
        self.scratch.pinch.cells.clear();
        self.scratch.shell.ghost.clear();
        self.scratch.shell.dense = false;
        self.scratch.boundary.clear();
        self.scratch.boundary_out.clear();
        self.scratch.pinned.clear();
        self.scratch.exact_frame = false;
        self.scratch.vanished = true;
        self.scratch.pinch.ring = false;
        self.scratch.pinch.recorded = false;
    }

    /// A copy of the mesh (positions, normals, materials, indices) sized to fit, without the
    /// per-call caches: what a worker hands on while it keeps this buffer for the next call.
    pub fn detach(&self) -> MeshBuffer {
        MeshBuffer {
            positions: self.positions.clone(),
            normals: self.normals.clone(),
            materials: self.materials.clone(),
            indices: self.indices.clone(),
            scratch: Scratch::default(),
        }
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Whether the mesh has no triangles.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}
