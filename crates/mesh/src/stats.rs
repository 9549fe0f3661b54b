//! Mesh statistics for tests, the `mesh-volume` command and comparisons with peers: area,
//! enclosed volume, boundary / non-manifold / misoriented edges, degenerate triangles,
//! connected components and Euler characteristic.

/// Statistics of a triangle mesh, in the units of its positions.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshStats {
    /// Vertices used by at least one triangle.
    pub vertices: usize,
    /// Triangles.
    pub triangles: usize,
    /// Total area.
    pub area: f64,
    /// Enclosed volume by the divergence theorem, when the mesh is closed (no boundary and no
    /// non-manifold edges; 0 for an empty mesh); positive when triangles wind
    /// counter-clockwise seen from outside.
    pub volume: Option<f64>,
    /// Edges used by exactly one triangle.
    pub boundary_edges: usize,
    /// Edges used by more than two triangles.
    pub nonmanifold_edges: usize,
    /// Edges used by two triangles in the same direction (inconsistent orientation).
    pub misoriented_edges: usize,
    /// Triangles with a repeated vertex or zero area.
    pub degenerate_triangles: usize,
    /// Unique undirected edges.
    pub edges: usize,
    /// Connected components (through shared edges).
    pub components: usize,
    /// Euler characteristic `V − E + F`.
    pub euler: i64,
}

/// A 3D point in f32 or f64.
pub trait Point: Copy {
    /// The point in f64.
    fn to_f64(self) -> [f64; 3];
}

impl Point for [f32; 3] {
    fn to_f64(self) -> [f64; 3] {
        self.map(f64::from)
    }
}

impl Point for [f64; 3] {
    fn to_f64(self) -> [f64; 3] {
        self
    }
}

pub(crate) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Union-find root of `i`, with path halving.
pub(crate) fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Computes [`MeshStats`] of an indexed triangle mesh. Vertices are identified by index:
/// weld first (see [`weld`]) when equal positions may have different indices.
///
/// # Panics
/// If `indices.len()` is not a multiple of 3 or an index is out of range.
pub fn mesh_stats<P: Point>(positions: &[P], indices: &[u32]) -> MeshStats {
    assert_eq!(indices.len() % 3, 0, "indices must come in triples");
    let p = |i: u32| -> [f64; 3] { positions[i as usize].to_f64() };
    let (mut area, mut vol6, mut degenerate) = (0.0, 0.0, 0);
    // Directed edges (a, b) with a < b, plus a flag for the direction.
    let mut edges: Vec<(u32, u32, bool)> = Vec::with_capacity(indices.len());
    let mut used = vec![false; positions.len()];
    for t in indices.chunks_exact(3) {
        let (a, b, c) = (p(t[0]), p(t[1]), p(t[2]));
        let n = cross(sub(b, a), sub(c, a));
        let twice = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] || twice == 0.0 {
            degenerate += 1;
        }
        area += 0.5 * twice;
        vol6 += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
            + a[2] * (b[0] * c[1] - b[1] * c[0]);
        for k in 0..3 {
            let (u, v) = (t[k], t[(k + 1) % 3]);
            used[u as usize] = true;
            edges.push((u.min(v), u.max(v), u < v));
        }
    }
    edges.sort_unstable();
    let (mut boundary, mut nonmanifold, mut misoriented, mut unique) = (0, 0, 0, 0);
    let mut parent: Vec<usize> = (0..positions.len()).collect();
    let mut i = 0;
    while i < edges.len() {
        let mut j = i;
        while j < edges.len() && edges[j].0 == edges[i].0 && edges[j].1 == edges[i].1 {
            j += 1;
        }
        unique += 1;
        match j - i {
            1 => boundary += 1,
            2 => {
                if edges[i].2 == edges[i + 1].2 {
                    misoriented += 1;
                }
            }
            _ => nonmanifold += 1,
        }
        let (ra, rb) = (
            find(&mut parent, edges[i].0 as usize),
            find(&mut parent, edges[i].1 as usize),
        );
        parent[ra] = rb;
        i = j;
    }
    let vertices = used.iter().filter(|&&u| u).count();
    let components = (0..positions.len())
        .filter(|&v| used[v] && find(&mut parent, v) == v)
        .count();
    let triangles = indices.len() / 3;
    MeshStats {
        vertices,
        triangles,
        area,
        // An empty mesh is closed too: it encloses nothing.
        volume: (boundary == 0 && nonmanifold == 0).then_some(vol6 / 6.0),
        boundary_edges: boundary,
        nonmanifold_edges: nonmanifold,
        misoriented_edges: misoriented,
        degenerate_triangles: degenerate,
        edges: unique,
        components,
        euler: vertices as i64 - unique as i64 + triangles as i64,
    }
}

/// The edges (vertex index pairs, lower first) used by more than two triangles, ascending.
pub fn nonmanifold_edges(indices: &[u32]) -> Vec<(u32, u32)> {
    edges_used(indices, |uses| uses > 2)
}

/// The edges (vertex index pairs, lower first) used by exactly one triangle (the open
/// border of the mesh), ascending.
pub fn boundary_edges(indices: &[u32]) -> Vec<(u32, u32)> {
    edges_used(indices, |uses| uses == 1)
}

/// The undirected edges whose number of triangles `keep` accepts, ascending.
fn edges_used(indices: &[u32], keep: impl Fn(usize) -> bool) -> Vec<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> = indices
        .chunks_exact(3)
        .flat_map(|t| (0..3).map(move |k| (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]))))
        .collect();
    edges.sort_unstable();
    edges
        .chunk_by(|a, b| a == b)
        .filter(|g| keep(g.len()))
        .map(|g| g[0])
        .collect()
}

/// One mesh to [`weld`]: its offset (metres), positions and indices.
pub type WeldPart<'a> = ([f64; 3], &'a [[f32; 3]], &'a [u32]);

/// Merges meshes placed at `offsets` (metres) into one indexed mesh, welding vertices that
/// lie within `tolerance` metres of each other on every axis (transitively). Returns
/// positions and indices.
pub fn weld(parts: &[WeldPart], tolerance: f64) -> (Vec<[f64; 3]>, Vec<u32>) {
    let mut all: Vec<[f64; 3]> = Vec::new();
    for (off, pos, _) in parts {
        all.extend(pos.iter().map(|p| {
            [
                off[0] + f64::from(p[0]),
                off[1] + f64::from(p[1]),
                off[2] + f64::from(p[2]),
            ]
        }));
    }
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_unstable_by(|&a, &b| all[a][0].total_cmp(&all[b][0]).then(a.cmp(&b)));
    let mut parent: Vec<usize> = (0..all.len()).collect();
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            if all[j][0] - all[i][0] > tolerance {
                break;
            }
            if (0..3).all(|a| (all[i][a] - all[j][a]).abs() <= tolerance) {
                let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                parent[ri.max(rj)] = ri.min(rj);
            }
        }
    }
    let mut remap = vec![u32::MAX; all.len()];
    let mut positions = Vec::new();
    for i in 0..all.len() {
        let r = find(&mut parent, i);
        if remap[r] == u32::MAX {
            remap[r] = positions.len() as u32;
            positions.push(all[r]);
        }
        remap[i] = remap[r];
    }
    let mut indices = Vec::new();
    let mut base = 0u32;
    for (_, pos, idx) in parts {
        indices.extend(idx.iter().map(|&i| remap[(base + i) as usize]));
        base += pos.len() as u32;
    }
    (positions, indices)
}
