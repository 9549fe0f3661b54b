//! Levels of detail for the dual meshers (Surface Nets, Dual Contouring): a chunk whose
//! neighbours are one level finer or coarser meets them with no crack.
//!
//! # The cell complex
//!
//! Around a chunk of level `l` (cells of `H` metres) the world is tiled by cells of `H`
//! (chunks of the same level), `H / 2` (*fine* chunks, one level finer) and `2H` (*coarser*
//! chunks); the 2:1 rule keeps neighbours, by face, edge and corner, within one level. The
//! meshers see this tiling as a cell complex (as an octree's leaves are one, Ju et al. 2002,
//! §3.3): a cell of `H` that touches a fine cell along a face or an edge is a *polyhedral*
//! cell, whose boundary carries the fine samples there: a face against a fine chunk is four
//! fine squares (nine samples), and an edge with a fine cell around it is two fine edges (its
//! midpoint a sample). Every face of the complex then lies between exactly two cells and is
//! cut the same way from both: squares by the cube's rule (the Marching Cubes table the
//! dual meshers read their patches from separates the inside corners of an ambiguous face),
//! polygons with midpoints by the same rule (each run of inside samples along the polygon is
//! cut off by its own segment). A polyhedral cell's patches are the cycles of these
//! segments, one dual vertex each (the mean of the patch's crossings, then as the mesher
//! places it, with the cell's eight corners as its interpolant), and every crossed edge of the
//! complex gets the polygon of the vertices of the cells around it (four, or three where a
//! polyhedral cell holds two of the edge's quarters). Each side of a polygon lies on a face
//! whose segment joins the edge to the next crossed edge, whose polygon has the same side: the
//! union is closed across the levels (the dual of a cell complex, as in Schaefer, Ju & Warren,
//! "Manifold Dual Contouring", 2007, without their vertex clustering).
//!
//! # Who meshes what
//!
//! A crossed edge of the complex around which some cell is polyhedral (a *seam edge*) is
//! meshed by the chunk of its first cell that is not fine, in the order `(0, 0)`, `(−1, 0)`,
//! `(0, −1)`, `(−1, −1)` of its quarters on the two other axes: the coarser side. So the fine
//! chunk leaves out every edge with a cell of a coarser chunk around it, and the coarse chunk
//! makes the fine cells' vertices there itself, from the fine samples, exactly as the fine
//! chunk makes them (the same function of the same eight samples, the same position lattice):
//! the two chunks' meshes share those vertices bit for bit in world space.

use std::cell::Cell;
use std::collections::BTreeMap;

use crate::tables::{CORNERS, EDGES};

/// Which of a chunk's 26 neighbours (chunks of its size at a chunk offset `d` in
/// `{−1, 0, 1}³ ∖ {0}`) are covered by chunks one level finer, and which lie in a chunk one
/// level coarser. Bit [`LevelNeighbours::bit`]`(d)`; both zero: a chunk among chunks of its
/// level, meshed as without levels of detail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LevelNeighbours {
    /// Neighbours split into chunks one level finer.
    pub finer: u32,
    /// Neighbours that are part of a chunk one level coarser.
    pub coarser: u32,
}

impl LevelNeighbours {
    /// The bit of the neighbour at chunk offset `d` (each in `{−1, 0, 1}`):
    /// `1 << ((dx + 1) + 3 (dy + 1) + 9 (dz + 1))`.
    pub fn bit(d: [i32; 3]) -> u32 {
        1 << ((d[0] + 1) + 3 * (d[1] + 1) + 9 * (d[2] + 1))
    }

    /// Whether every neighbour is of the chunk's level.
    pub fn is_plain(&self) -> bool {
        self.finer == 0 && self.coarser == 0
    }
}

/// The field at the finer level's spacing: value (metres) and material at a fine lattice
/// point, in units of half a grid cell from grid sample 0 (grid sample `(i, j, k)` is fine
/// point `(2i, 2j, 2k)`). Asked only within two grid cells of the grid's cell range, on the
/// side of a finer neighbour.
pub type FineSampler<'a> = &'a dyn Fn([i32; 3]) -> (f32, u8);

/// What a cell of the grid (named by its lowest sample, grid coordinates) is in the complex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// A cube of the grid's level: the range's or a same-level neighbour's.
    Plain,
    /// A cube of the grid's level with fine samples on its boundary.
    Polyhedral,
    /// In a finer neighbour: its fine cells take its place.
    Fine,
    /// In a coarser neighbour.
    Coarser,
}

/// The levels around a grid's cell range and the fine samples beside it.
pub(crate) struct Seams<'s> {
    levels: LevelNeighbours,
    fine: FineSampler<'s>,
    min: [i64; 3],
    max: [i64; 3],
    /// [`Seams::class`] by the cell's neighbourhood code ([`Seams::code`]), filled on first
    /// use (`u8::MAX`: not yet).
    classes: Vec<Cell<u8>>,
}

/// The classes in the order of their memo codes.
const CLASSES: [Class; 4] = [Class::Plain, Class::Polyhedral, Class::Fine, Class::Coarser];

/// A crossed edge of the complex: its ends in fine units (`lo` below `hi` on `axis`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FineEdge {
    pub lo: [i64; 3],
    pub axis: usize,
    /// 1 (a fine edge) or 2 (an edge of the grid's level).
    pub len: i64,
}

/// A polyhedral cell's crossed edges and their patches.
#[derive(Debug, Default)]
pub(crate) struct Polyhedron {
    /// The crossed edges of its boundary and the patch each belongs to.
    pub edges: Vec<(FineEdge, u8)>,
    /// Per patch: its crossings, cell-local (`[0, 1]³`).
    pub patches: Vec<Vec<[f32; 3]>>,
}

impl<'s> Seams<'s> {
    pub(crate) fn new(
        levels: LevelNeighbours,
        fine: FineSampler<'s>,
        grid: &crate::grid::Grid,
    ) -> Self {
        assert!(
            (0..3).all(|a| grid.cells_min[a] >= 2 && grid.cells_max[a] + 2 < grid.dims[a]),
            "a grid with neighbours of other levels needs a halo of 2 cells"
        );
        Self {
            levels,
            fine,
            min: grid.cells_min.map(i64::from),
            max: grid.cells_max.map(i64::from),
            classes: vec![Cell::new(u8::MAX); 27 * 27 * 27],
        }
    }

    /// What decides cell `c`'s class: per axis, the regions of the coordinates `c − 1`, `c`
    /// and `c + 1` (a class depends on the regions of the cell and of its 26 neighbours
    /// only), as one number below 27³.
    fn code(&self, c: [i64; 3]) -> usize {
        self.axis_code(0, c[0]) + 27 * (self.axis_code(1, c[1]) + 27 * self.axis_code(2, c[2]))
    }

    /// Axis `a`'s part of [`Seams::code`] for coordinate `v`.
    fn axis_code(&self, a: usize, v: i64) -> usize {
        let r = |v: i64| {
            if v < self.min[a] {
                0
            } else if v >= self.max[a] {
                2
            } else {
                1
            }
        };
        r(v - 1) + 3 * r(v) + 9 * r(v + 1)
    }

    /// The neighbour region of cell `c`: per axis −1, 0 (the range) or 1.
    fn region(&self, c: [i64; 3]) -> [i32; 3] {
        [0, 1, 2].map(|a| {
            if c[a] < self.min[a] {
                -1
            } else if c[a] >= self.max[a] {
                1
            } else {
                0
            }
        })
    }

    /// Whether cell `c` lies in a finer (`Fine`), coarser (`Coarser`) or same-level chunk.
    fn level_class(&self, c: [i64; 3]) -> Class {
        let r = self.region(c);
        if r == [0; 3] {
            return Class::Plain;
        }
        let bit = LevelNeighbours::bit(r);
        if self.levels.finer & bit != 0 {
            Class::Fine
        } else if self.levels.coarser & bit != 0 {
            Class::Coarser
        } else {
            Class::Plain
        }
    }

    /// The class of cell `c`.
    pub(crate) fn class(&self, c: [i64; 3]) -> Class {
        self.class_by_code(c, self.code(c))
    }

    /// [`Seams::class`] of cell `c` whose [`Seams::code`] is `code`.
    fn class_by_code(&self, c: [i64; 3], code: usize) -> Class {
        let memo = &self.classes[code];
        if let Some(&class) = CLASSES.get(usize::from(memo.get())) {
            return class;
        }
        let class = self.class_of(c);
        memo.set(CLASSES.iter().position(|&k| k == class).expect("a class") as u8);
        class
    }

    /// [`Seams::class`], worked out from the levels around `c`.
    fn class_of(&self, c: [i64; 3]) -> Class {
        let own = self.level_class(c);
        if own != Class::Plain || self.levels.finer == 0 {
            return own;
        }
        // Polyhedral where a fine cell shares an edge or a face with it (not a corner only).
        for d in 0..27 {
            let d = [d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1];
            let n = d.iter().filter(|&&v| v != 0).count();
            if (n == 1 || n == 2)
                && self.level_class([c[0] + d[0], c[1] + d[1], c[2] + d[2]]) == Class::Fine
            {
                return Class::Polyhedral;
            }
        }
        Class::Plain
    }

    /// The fine sample at fine point `p`, from the grid where `p` is a grid sample.
    pub(crate) fn sample(&self, p: [i64; 3], coarse: &impl Fn([i64; 3]) -> f32) -> f32 {
        if p.iter().all(|&v| v % 2 == 0) {
            coarse(p.map(|v| v / 2))
        } else {
            (self.fine)(p.map(|v| v as i32)).0
        }
    }

    /// The fine sample's material at fine point `p`.
    pub(crate) fn material(&self, p: [i64; 3]) -> u8 {
        (self.fine)(p.map(|v| v as i32)).1
    }

    /// The cell holding the point `q` in quarter cells (units of a fine cell / 2), as its
    /// class and its cell: a grid cell, or for a fine one its fine cell (fine units).
    pub(crate) fn cell_at(&self, q: [i64; 3]) -> (Class, [i64; 3]) {
        let c = q.map(|v| v.div_euclid(4));
        match self.class(c) {
            Class::Fine => (Class::Fine, q.map(|v| v.div_euclid(2))),
            k => (k, c),
        }
    }

    /// The four cells around edge `e` in the order its polygon takes them
    /// (counter-clockwise seen from the edge's `+axis` end): quarters `(−1, −1)`, `(0, −1)`,
    /// `(0, 0)`, `(−1, 0)` on the next two axes.
    pub(crate) fn around(&self, e: FineEdge) -> [(Class, [i64; 3]); 4] {
        let (b, c) = ((e.axis + 1) % 3, (e.axis + 2) % 3);
        // The edge's midpoint in quarter cells, moved into each quarter.
        let mut mid = e.lo.map(|v| 2 * v);
        mid[e.axis] += e.len;
        [(-1, -1), (1, -1), (1, 1), (-1, 1)].map(|(db, dc)| {
            let mut q = mid;
            q[b] += db;
            q[c] += dc;
            self.cell_at(q)
        })
    }

    /// Whether this grid meshes seam edge `e` (around it, `cells` from [`Seams::around`]): it
    /// has no coarser cell around it, and its first cell that is not fine, in the order
    /// `(0, 0)`, `(−1, 0)`, `(0, −1)`, `(−1, −1)`, is in the cell range.
    pub(crate) fn owns(&self, cells: &[(Class, [i64; 3]); 4]) -> bool {
        if cells.iter().any(|c| c.0 == Class::Coarser) {
            return false;
        }
        [2, 3, 1, 0]
            .into_iter()
            .map(|k| cells[k])
            .find(|c| c.0 != Class::Fine)
            .is_some_and(|c| self.region(c.1) == [0; 3])
    }

    /// The boundary of polyhedral cell `c` as the cycles of its faces, in fine units, each
    /// handed to `face`: each face of the cube a cycle of its corners with the midpoints of its
    /// split edges, or, where a fine cell lies across it, four fine squares.
    fn for_each_face(&self, c: [i64; 3], mut face: impl FnMut(&[[i64; 3]])) {
        let base = c.map(|v| 2 * v);
        let at = |k: usize| [0, 1, 2].map(|a| base[a] + 2 * i64::from(CORNERS[k][a]));
        // Split: an edge with a fine cell around it.
        let split = |p: [i64; 3], q: [i64; 3]| {
            let axis = (0..3).find(|&a| p[a] != q[a]).expect("an edge");
            let lo = if p[axis] < q[axis] { p } else { q };
            // The four cells around it, by their lowest corners (grid units).
            let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
            let at = lo.map(|v| v.div_euclid(2));
            [(0, 0), (-1, 0), (0, -1), (-1, -1)]
                .into_iter()
                .any(|(db, dc)| {
                    let mut cell = at;
                    cell[b] += db;
                    cell[c] += dc;
                    self.level_class(cell) == Class::Fine
                })
        };
        let mid = |p: [i64; 3], q: [i64; 3]| [0, 1, 2].map(|a| (p[a] + q[a]) / 2);
        // The cube's faces as corner cycles, and the neighbour across each.
        const FACES: [([usize; 4], [i64; 3]); 6] = [
            ([0, 3, 7, 4], [-1, 0, 0]),
            ([1, 2, 6, 5], [1, 0, 0]),
            ([0, 1, 5, 4], [0, -1, 0]),
            ([3, 2, 6, 7], [0, 1, 0]),
            ([0, 1, 2, 3], [0, 0, -1]),
            ([4, 5, 6, 7], [0, 0, 1]),
        ];
        for (ring, d) in FACES {
            let pts = ring.map(at);
            let across = [c[0] + d[0], c[1] + d[1], c[2] + d[2]];
            if self.level_class(across) == Class::Fine {
                let centre = mid(pts[0], pts[2]);
                for k in 0..4 {
                    let (p, next, prev) = (pts[k], pts[(k + 1) % 4], pts[(k + 3) % 4]);
                    face(&[p, mid(p, next), centre, mid(p, prev)]);
                }
            } else {
                let (mut cycle, mut n) = ([[0; 3]; 8], 0);
                for k in 0..4 {
                    let (p, next) = (pts[k], pts[(k + 1) % 4]);
                    cycle[n] = p;
                    n += 1;
                    if split(p, next) {
                        cycle[n] = mid(p, next);
                        n += 1;
                    }
                }
                face(&cycle[..n]);
            }
        }
    }

    /// The crossed boundary edges of polyhedral cell `c` and its patches, from the values at
    /// fine points (`value`).
    pub(crate) fn polyhedron(&self, c: [i64; 3], value: &impl Fn([i64; 3]) -> f32) -> Polyhedron {
        let edge_of = |p: [i64; 3], q: [i64; 3]| {
            let axis = (0..3).find(|&a| p[a] != q[a]).expect("an edge");
            let lo = if p[axis] < q[axis] { p } else { q };
            FineEdge {
                lo,
                axis,
                len: (p[axis] - q[axis]).abs(),
            }
        };
        // Crossed edges (each lies on two faces), numbered in the order first met.
        let mut edges: Vec<FineEdge> = Vec::new();
        let mut segments: Vec<(usize, usize)> = Vec::new();
        self.for_each_face(c, |cycle| {
            let n = cycle.len();
            let mut inside = [false; 8];
            for (i, &p) in inside.iter_mut().zip(cycle) {
                *i = value(p) < 0.0;
            }
            // Crossings in cycle order, with whether the cycle enters the inside there.
            let (mut crossings, mut m) = ([(0usize, false); 8], 0);
            for k in 0..n {
                if inside[k] != inside[(k + 1) % n] {
                    let e = edge_of(cycle[k], cycle[(k + 1) % n]);
                    let id = match edges.iter().position(|&x| x == e) {
                        Some(i) => i,
                        None => {
                            edges.push(e);
                            edges.len() - 1
                        }
                    };
                    crossings[m] = (id, inside[(k + 1) % n]);
                    m += 1;
                }
            }
            // Each run of inside samples cut off by one segment: an entry with the next exit.
            for k in 0..m {
                if crossings[k].1 {
                    segments.push((crossings[k].0, crossings[(k + 1) % m].0));
                }
            }
        });
        if edges.is_empty() {
            return Polyhedron::default();
        }
        // Patches: the cycles of segments (union-find, numbered by their first edge).
        let mut parent: Vec<usize> = (0..edges.len()).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for &(a, b) in &segments {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra != rb {
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
        let mut label: Vec<u8> = vec![u8::MAX; edges.len()];
        let mut patches: Vec<Vec<[f32; 3]>> = Vec::new();
        let base = c.map(|v| 2 * v);
        let mut out = Polyhedron::default();
        for (i, &e) in edges.iter().enumerate() {
            let r = root(&mut parent, i);
            if label[r] == u8::MAX {
                label[r] = patches.len() as u8;
                patches.push(Vec::new());
            }
            let mut hi = e.lo;
            hi[e.axis] += e.len;
            let (v0, v1) = (value(e.lo), value(hi));
            let t = v0 / (v0 - v1);
            // Cell-local: fine units from the cell's lowest corner, halved.
            let mut p = [0, 1, 2].map(|a| (e.lo[a] - base[a]) as f32 * 0.5);
            p[e.axis] += t * e.len as f32 * 0.5;
            patches[label[r] as usize].push(p);
            out.edges.push((e, label[r]));
        }
        out.patches = patches;
        out
    }
}

/// The local edge index ([`EDGES`]) of the cube edge from corner offsets `a` to `b`.
pub(crate) fn cube_edge(a: [i64; 3], b: [i64; 3]) -> u8 {
    let corner = |o: [i64; 3]| {
        CORNERS
            .iter()
            .position(|c| (0..3).all(|i| i64::from(c[i]) == o[i]))
            .expect("a corner")
    };
    let (ka, kb) = (corner(a), corner(b));
    EDGES
        .iter()
        .position(|e| {
            (usize::from(e[0]) == ka && usize::from(e[1]) == kb)
                || (usize::from(e[0]) == kb && usize::from(e[1]) == ka)
        })
        .expect("a cube edge") as u8
}

/// Vertex ids made for the seam, by cell and patch.
#[derive(Default)]
pub(crate) struct SeamVertices {
    pub fine: BTreeMap<([i64; 3], u8), u32>,
    pub polyhedral: BTreeMap<[i64; 3], (Polyhedron, Vec<u32>)>,
}

impl Seams<'_> {
    /// Whether a neighbour is finer.
    pub(crate) fn has_finer(&self) -> bool {
        self.levels.finer != 0
    }

    /// Per grid sample index, whether the cell with that lowest corner is special
    /// ([`Seams::special`]), and whether it is or lies beside a special cell (its 26
    /// neighbours): its vertices may be shared with a polygon of the seam, whose neighbours
    /// may be another chunk's triangles (they are pinned). Only cells within two cells of the
    /// range's border can be either.
    pub(crate) fn special_and_pinned(&self, grid: &crate::grid::Grid) -> (Vec<bool>, Vec<bool>) {
        let d = grid.dims.map(i64::from);
        let codes: [Vec<usize>; 3] =
            [0, 1, 2].map(|a| (0..d[a]).map(|v| self.axis_code(a, v)).collect());
        let mut special = vec![false; grid.len()];
        self.for_each_shell_cell(grid, 1, |c, i| {
            let [x, y, z] = c.map(|v| v as usize);
            let code = codes[0][x] + 27 * (codes[1][y] + 27 * codes[2][z]);
            special[i] = self.class_by_code(c, code) != Class::Plain;
        });
        // Pinned: special cells dilated by one cell on each axis in turn (the 26 neighbours).
        let stride = [
            1,
            grid.dims[0] as usize,
            (grid.dims[0] * grid.dims[1]) as usize,
        ];
        let mut pinned = special.clone();
        let mut from = Vec::new();
        for (a, &s) in stride.iter().enumerate() {
            from.clone_from(&pinned);
            self.for_each_shell_cell(grid, 2, |c, i| {
                pinned[i] |= (c[a] > 0 && from[i - s]) || (c[a] < d[a] - 2 && from[i + s]);
            });
        }
        (special, pinned)
    }

    /// Calls `f(cell, sample index)` for each cell of the grid (lowest samples below the last
    /// on every axis) within `m` cells of the range's border or outside the range: cells
    /// `c` with `c ≤ min + m` or `c ≥ max − 1 − m` on some axis.
    fn for_each_shell_cell(
        &self,
        grid: &crate::grid::Grid,
        m: i64,
        mut f: impl FnMut([i64; 3], usize),
    ) {
        let d = grid.dims.map(i64::from);
        let near = |a: usize, v: i64| v <= self.min[a] + m || v >= self.max[a] - 1 - m;
        for z in 0..d[2] - 1 {
            for y in 0..d[1] - 1 {
                let row = grid.index(0, y as u32, z as u32);
                if near(1, y) || near(2, z) {
                    for x in 0..d[0] - 1 {
                        f([x, y, z], row + x as usize);
                    }
                } else {
                    let low = (self.min[0] + m).min(d[0] - 2);
                    let high = (self.max[0] - 1 - m).max(low + 1);
                    for x in (0..=low).chain(high..d[0] - 1) {
                        f([x, y, z], row + x as usize);
                    }
                }
            }
        }
    }
}
