//! Meshing a chunk of any level: its grid read from the field at the level's spacing, and
//! the seams to its neighbours of other levels. Marching Cubes (and MC33, which has no level
//! seams of its own) gets Transvoxel transition cells on each face whose neighbour is one level
//! finer (Lengyel 2010, §4.3); Surface Nets and Dual Contouring get the polyhedral cells of
//! `loam_mesh::level_seams` on every face, edge and corner toward a finer neighbour. Both
//! read the field at the fine spacing there.

use std::collections::BTreeSet;

use loam_field::{BRICK_SAMPLES, CHUNK_CELLS, ColumnBounds, Field, SamplePos};
use loam_mesh::transvoxel::{
    Face, FineFace, Transitions, fine_face_dims, fine_face_sample, transvoxel,
};
use loam_mesh::{
    CHUNK_HALO, Grid, LevelNeighbours, MeshBuffer, Mesher, dual_contouring_lod, surface_nets_lod,
};

use super::key::LodKey;
use super::select::covering;

/// The transition faces of chunk `key` in the tiling `shown` (ascending by key, as
/// [`super::select`] makes it): bit `face as u8` is set where the chunk across that face is
/// split into chunks one level finer. With the 2:1 rule these are the only finer neighbours.
pub fn transition_mask(shown: &BTreeSet<LodKey>, key: LodKey) -> u8 {
    if key.level == 0 {
        return 0;
    }
    let top = shown.last().map_or(key.level, |k| k.level.max(key.level));
    let mut mask = 0;
    for face in Face::ALL {
        let mut d = [0; 3];
        d[face.axis()] = if face.is_high() { 1 } else { -1 };
        let n = key.offset(d);
        let finer = covering(shown, n, top).is_none()
            && n.children()
                .is_some_and(|ch| ch.iter().any(|c| shown.contains(c)));
        if finer {
            mask |= face.bit();
        }
    }
    mask
}

/// The levels of chunk `key`'s 26 neighbours in the tiling `shown` (ascending by key, as
/// [`super::select`] makes it): [`LevelNeighbours::finer`] where the neighbour's place is split
/// into chunks one level finer, [`LevelNeighbours::coarser`] where it lies in a coarser chunk.
/// With the 2:1 rule (faces, edges and corners) no neighbour is further apart.
pub fn level_neighbours(shown: &BTreeSet<LodKey>, key: LodKey) -> LevelNeighbours {
    let top = shown.last().map_or(key.level, |k| k.level.max(key.level));
    let mut out = LevelNeighbours::default();
    for d in super::select::neighbour_offsets() {
        let n = key.offset(d);
        match covering(shown, n, top) {
            Some(c) if c.level > key.level => out.coarser |= LevelNeighbours::bit(d),
            Some(_) => {}
            None => {
                if key.level > 0
                    && n.children()
                        .is_some_and(|ch| ch.iter().any(|c| shown.contains(c)))
                {
                    out.finer |= LevelNeighbours::bit(d);
                }
            }
        }
    }
    out
}

/// What of `levels` a chunk meshed with `mesher` depends on: Transvoxel (Marching Cubes, and
/// MC33, drawn by it across levels) only the finer face neighbours; the dual meshers every
/// neighbour of another level. A chunk is rebuilt when this changes.
pub fn seams_of(mesher: Mesher, levels: LevelNeighbours) -> LevelNeighbours {
    match mesher {
        Mesher::SurfaceNets | Mesher::DualContouring => levels,
        Mesher::MarchingCubes | Mesher::Mc33 => LevelNeighbours {
            finer: Face::ALL
                .into_iter()
                .map(|f| {
                    let mut d = [0; 3];
                    d[f.axis()] = if f.is_high() { 1 } else { -1 };
                    LevelNeighbours::bit(d)
                })
                .filter(|&b| levels.finer & b != 0)
                .fold(0, |a, b| a | b),
            coarser: 0,
        },
    }
}

/// The mesher that draws a chunk of a level-of-detail view when `mesher` is asked for:
/// Marching Cubes for MC33 (Transvoxel's seams are Marching Cubes'), the others themselves.
pub fn lod_mesher(mesher: Mesher) -> Mesher {
    match mesher {
        Mesher::Mc33 => Mesher::MarchingCubes,
        m => m,
    }
}

/// The Transvoxel mask (bit `Face as u8`) of the finer face neighbours in `levels`.
fn face_mask(levels: LevelNeighbours) -> u8 {
    let mut mask = 0;
    for face in Face::ALL {
        let mut d = [0; 3];
        d[face.axis()] = if face.is_high() { 1 } else { -1 };
        if levels.finer & LevelNeighbours::bit(d) != 0 {
            mask |= face.bit();
        }
    }
    mask
}

/// Reusable buffers for meshing chunks of any level from a field.
#[derive(Debug, Default)]
pub struct LodBuilder {
    values: Vec<f32>,
    materials: Vec<u8>,
    slabs: [(Vec<f32>, Vec<u8>); 6],
    mesh: MeshBuffer,
}

impl LodBuilder {
    /// The mesh of chunk `key` with transition cells on the faces of `mask` (bit `face as u8`,
    /// see [`transition_mask`]), built from `field` with Transvoxel; valid until the next call.
    ///
    /// The grid is the level-0 field at every `2^level`-th sample over the chunk's corners plus
    /// one coarse sample of halo (`35³`, [`Field::fill_strided`]), so an edit shows at every
    /// level whose lattice holds a sample it changed; a feature thinner than a level's cell
    /// (`2^level` voxels) may fall between its samples and then does not show at that level.
    /// A transition face reads the field at half the spacing (`2^(level−1)`): the fine
    /// neighbour's own samples on the face, so the two meshes share their vertices bit for bit.
    /// Positions are metres from [`LodKey::origin`]. Level 0 with no transition face is
    /// Lengyel's modified Marching Cubes, which every chunk next to a coarser one needs.
    ///
    /// # Panics
    /// If `mask` has a bit at level 0 or above bit 5.
    pub fn build(&mut self, field: &Field, key: LodKey, mask: u8) -> &MeshBuffer {
        assert!(mask < 64 && (mask == 0 || key.level > 0), "bad mask {mask}");
        let vs = field.settings().voxel_size;
        let stride = key.stride();
        let h = CHUNK_HALO as i32;
        let side = (CHUNK_CELLS + 1 + 2 * h) as usize;
        self.values.resize(side.pow(3), 0.0);
        self.materials.resize(side.pow(3), 0);
        let m = key.min_sample();
        let min = SamplePos::new(m.x - h * stride, m.y - h * stride, m.z - h * stride);
        field.fill_strided(
            min,
            stride,
            [side; 3],
            &mut self.values,
            &mut self.materials,
        );
        let cell = key.cell_size(vs) as f32;
        let grid = Grid::chunk(&self.values, &self.materials, CHUNK_HALO, cell);
        for face in Face::ALL.into_iter().filter(|f| mask & f.bit() != 0) {
            let d = fine_face_dims(&grid, face);
            let n = d.iter().map(|&v| v as usize).product::<usize>();
            let (values, materials) = &mut self.slabs[face as usize];
            values.resize(n, 0.0);
            materials.resize(n, 0);
            // Slab index [0, 0, 0] is at this fine lattice offset, and the slab is a box.
            let o = fine_face_sample(&grid, face, [0, 0, 0]);
            let half = stride / 2;
            let at = SamplePos::new(m.x + o[0] * half, m.y + o[1] * half, m.z + o[2] * half);
            let dims = d.map(|v| v as usize);
            field.fill_strided(at, half, dims, values, materials);
        }
        let mut t = Transitions::default();
        for face in Face::ALL.into_iter().filter(|f| mask & f.bit() != 0) {
            let (values, materials) = &self.slabs[face as usize];
            t = t.with(face, FineFace { values, materials });
        }
        transvoxel(&grid, &t, &mut self.mesh);
        &self.mesh
    }

    /// The mesh of chunk `key` drawn with [`lod_mesher`]`(mesher)` beside neighbours of the
    /// levels `levels` ([`level_neighbours`]), and that mesher; valid until the next call.
    /// Marching Cubes: [`LodBuilder::build`] with the finer faces. Surface Nets and Dual
    /// Contouring: their `_lod` meshers over the chunk's grid (as in [`LodBuilder::build`])
    /// with the field at the fine spacing beside every finer neighbour, read as slabs of
    /// samples along the faces toward them (each `7 × 73 × 73` half-spaced samples).
    pub fn build_with(
        &mut self,
        field: &Field,
        key: LodKey,
        mesher: Mesher,
        levels: LevelNeighbours,
    ) -> (&MeshBuffer, Mesher) {
        let mesher = lod_mesher(mesher);
        if mesher == Mesher::MarchingCubes {
            return (self.build(field, key, face_mask(levels)), mesher);
        }
        let stride = key.stride();
        let h = CHUNK_HALO as i32;
        let side = (CHUNK_CELLS + 1 + 2 * h) as usize;
        self.values.resize(side.pow(3), 0.0);
        self.materials.resize(side.pow(3), 0);
        let m = key.min_sample();
        let min = SamplePos::new(m.x - h * stride, m.y - h * stride, m.z - h * stride);
        field.fill_strided(
            min,
            stride,
            [side; 3],
            &mut self.values,
            &mut self.materials,
        );
        // Slabs of fine samples (half-spaced lattice from the grid's sample 0) along each face
        // toward a finer neighbour (by face, edge or corner): the polyhedral cells and the fine
        // cells beside them lie within two grid cells of the face.
        let fine_side = 2 * (side - 1) + 1;
        let mut boxes: Vec<([usize; 3], [usize; 3])> = Vec::new();
        if levels.finer != 0 && stride > 1 {
            for face in Face::ALL {
                let a = face.axis();
                let toward = (0..27).any(|i| {
                    let d = [i % 3 - 1, i / 3 % 3 - 1, i / 9 - 1];
                    d[a] == if face.is_high() { 1 } else { -1 }
                        && levels.finer & LevelNeighbours::bit(d) != 0
                });
                if !toward {
                    continue;
                }
                let mut lo = [0usize; 3];
                let mut dims = [fine_side; 3];
                dims[a] = 2 * (h as usize + 1) + 1;
                if face.is_high() {
                    lo[a] = fine_side - dims[a];
                }
                boxes.push((lo, dims));
            }
        }
        let half = stride / 2;
        for (k, &(lo, dims)) in boxes.iter().enumerate() {
            let (values, materials) = &mut self.slabs[k];
            let n = dims.iter().product::<usize>();
            values.resize(n, 0.0);
            materials.resize(n, 0);
            let at = SamplePos::new(
                min.x + lo[0] as i32 * half,
                min.y + lo[1] as i32 * half,
                min.z + lo[2] as i32 * half,
            );
            field.fill_strided(at, half.max(1), dims, values, materials);
        }
        let slabs = &self.slabs;
        let fine = |p: [i32; 3]| -> (f32, u8) {
            for (k, &(lo, dims)) in boxes.iter().enumerate() {
                let r = [0, 1, 2].map(|a| p[a] as i64 - lo[a] as i64);
                if (0..3).all(|a| r[a] >= 0 && r[a] < dims[a] as i64) {
                    let i = r[0] as usize + dims[0] * (r[1] as usize + dims[1] * r[2] as usize);
                    return (slabs[k].0[i], slabs[k].1[i]);
                }
            }
            // Outside the slabs (not asked for by the seams as built): the field itself.
            let q = SamplePos::new(
                min.x + p[0] * half,
                min.y + p[1] * half,
                min.z + p[2] * half,
            );
            (field.sample(q), field.material(q))
        };
        let cell = key.cell_size(field.settings().voxel_size) as f32;
        let grid = Grid::chunk(&self.values, &self.materials, CHUNK_HALO, cell);
        match mesher {
            Mesher::SurfaceNets => surface_nets_lod(&grid, levels, &fine, &mut self.mesh),
            _ => dual_contouring_lod(&grid, levels, &fine, &mut self.mesh),
        }
        (&self.mesh, mesher)
    }
}

/// Where the column of level-`level` chunks `(x, z)` is certainly air or solid: the generator's
/// bounds over every sample its chunks read (the footprint and two coarse samples around it),
/// widened by the edited bricks there. Cache it per column until an edit reaches the column.
pub fn lod_column_bounds(field: &Field, level: u8, x: i32, z: i32) -> ColumnBounds {
    let vs = field.settings().voxel_size;
    let k = LodKey::new(level, [x, 0, z]);
    let (m, s, size) = (k.min_sample(), i64::from(k.stride()), k.size());
    // The grid's halo is two samples (the dual meshers' shell and seams read it).
    let range = |c: i32| [i64::from(c) - 2 * s, i64::from(c) + size + 2 * s];
    let (xr, zr) = (range(m.x), range(m.z));
    let metres = |r: [i64; 2]| r.map(|v| v as f64 * vs);
    let mut b = field
        .generator()
        .column_bounds(metres(xr), metres(zr), field.settings().band());
    let bs = i64::from(BRICK_SAMPLES);
    for bz in zr[0].div_euclid(bs)..=zr[1].div_euclid(bs) {
        for bx in xr[0].div_euclid(bs)..=xr[1].div_euclid(bs) {
            if let Some((l, h)) = field.edited_layers(bx as i32, bz as i32) {
                let bs = bs as f64;
                b.solid_below = b.solid_below.min(f64::from(l) * bs * vs);
                b.air_above = b.air_above.max((f64::from(h) + 1.0) * bs * vs);
            }
        }
    }
    b
}

/// Whether `bounds` (its column's, [`lod_column_bounds`]) prove every sample chunk `key` reads
/// — its coarse grid with halo and any transition slab — the same sign: all air or all solid,
/// so the chunk has no surface at any transition mask and needs no job.
pub fn uniform_in(field: &Field, key: LodKey, bounds: &ColumnBounds) -> bool {
    let vs = field.settings().voxel_size;
    let (y, s) = (i64::from(key.min_sample().y), i64::from(key.stride()));
    let lo = (y - 2 * s) as f64 * vs;
    let hi = (y + key.size() + 2 * s) as f64 * vs;
    lo > bounds.air_above || hi < bounds.solid_below
}

/// [`uniform_in`] with the column's bounds computed on the spot.
pub fn proven_uniform(field: &Field, key: LodKey) -> bool {
    uniform_in(
        field,
        key,
        &lod_column_bounds(field, key.level, key.x, key.z),
    )
}
