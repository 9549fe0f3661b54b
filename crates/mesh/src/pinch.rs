//! Pinches: vertices where two sheets of surface touch, split so that every edge has exactly
//! two triangles.
//!
//! Two kinds of vertex can be shared by sheets that only touch there:
//! - a sample worth exactly 0 (air, docs/architecture.md) on which crossings of several solids
//!   land: the Marching Cubes meshers give every crossing on it one vertex, so two solids
//!   meeting along a line of such samples share its edges, each edge then has four triangles;
//! - a dual vertex whose cell patch holds both crossing segments of an ambiguous face, next to
//!   a cell doing the same across that face: the four quads around the face's edges all use
//!   the edge between the two vertices (a tube pinched to one edge, Nielson 2004 §5).
//!
//! The meshers list such vertices as they make them ([`Scratch::pinch`]), and
//! [`split_pinches`] then looks at those vertices only (for MC33, their neighbours too).
//! Around a vertex `v`, its triangles are grouped into fans, and every fan but the first gets
//! a copy of `v` (same position and material), as CGAL's `duplicate_non_manifold_vertices`
//! does; each fan's vertex takes the area-weighted normal of its own triangles. The surface
//! stays closed and consistently oriented:
//! - an edge `(v, x)` with one triangle each way joins them;
//! - an edge used `k > 1` times each way pairs them around the edge by angle, each triangle
//!   with the next one across a wedge of solid, so that solids that touch come apart
//!   (Guéziec et al. 2001, "Cutting and stitching: converting sets of polygons to manifold
//!   surfaces");
//! - where the surface folds, or in the pinched tube, a fan can still pass one edge twice;
//!   two of its pairs there then swap partners, which cuts the fan in two, until no fan passes
//!   an edge twice. So every edge on a split vertex used equally often each way ends with
//!   exactly two triangles;
//! - at the grid's open border ([`OpenBorder`]: where the samples end, so the triangles of
//!   the cells beyond are missing), an edge can be used more often one way than the other.
//!   Its triangles are paired by angle from the outward direction on, without pairing across
//!   the outside, and the ones left over are half pairs; swaps as above (a half pair's
//!   partner too) cut the fans until each edge has at most two triangles, one each way, the
//!   left-over ones on copies of `v` (a boundary edge, as at any open border). Elsewhere (a
//!   sliver the sliver splitter gave up on, which no search has met) such an edge keeps its
//!   triangles on one vertex.
//!
//! Searched with `cargo run --release -p loam-mesh --example open_grids GRIDS SEED N K`
//! (random `N`³ grids of −K..=K reaching the border): before the open border was handled,
//! 339 / 317 / 59 / 87 of 2 000 grids of 5³ in −1..=1 had a non-manifold edge (MC, MC33,
//! SN, DC); since, none of 80 000 grids (BENCHMARKS.md).
//!
//! Twin triangles (the same three vertices, both windings: a fin of no thickness, where two
//! solids meet face to face on zeros or dual vertices merged) are dropped first.
//!
//! [`Scratch::pinch`]: crate::buffer::Scratch

use crate::buffer::MeshBuffer;
use crate::grid::Grid;
use crate::stats::{cross, dot, find, sub};

/// Where the sample grid ends on the sides the mesher meshed up to, in the mesh's local space
/// (metres). No cell lies beyond, so an edge there can have fewer triangles than the surface
/// would give it: on the border plane (Marching Cubes: the cells beyond are missing) or in a
/// border cell (dual meshers: the quads of grid edges on the border are missing).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenBorder {
    /// Per axis, the position of the first sample where cells start there, else −∞.
    lo: [f64; 3],
    /// Per axis, the position of the last sample where cells end there, else +∞.
    hi: [f64; 3],
    /// A cell's edge, metres.
    cell: f64,
}

impl OpenBorder {
    /// The open border of `grid` (`None` when its cells end short of its samples on every
    /// side, as a chunk's do: the halo holds the cells beyond).
    pub(crate) fn of(grid: &Grid) -> Option<Self> {
        let first = grid.position([0.0; 3]);
        let last = grid.position(grid.dims.map(|d| (d - 1) as f32));
        let mut b = Self {
            lo: [f64::NEG_INFINITY; 3],
            hi: [f64::INFINITY; 3],
            cell: f64::from(grid.voxel_size),
        };
        let mut any = false;
        for a in 0..3 {
            if grid.cells_min[a] == 0 {
                b.lo[a] = f64::from(first[a]);
                any = true;
            }
            if grid.cells_max[a] + 1 == grid.dims[a] {
                b.hi[a] = f64::from(last[a]);
                any = true;
            }
        }
        any.then_some(b)
    }

    /// The outward direction at the edge `(p, q)`: per axis, −1 or +1 where both ends lie
    /// within one cell of that side's border, else 0 (zero when the edge is not at the
    /// border).
    fn outward(&self, p: [f64; 3], q: [f64; 3]) -> [f64; 3] {
        let mut d = [0.0; 3];
        for a in 0..3 {
            if p[a] <= self.lo[a] + self.cell && q[a] <= self.lo[a] + self.cell {
                d[a] -= 1.0;
            }
            if p[a] >= self.hi[a] - self.cell && q[a] >= self.hi[a] - self.cell {
                d[a] += 1.0;
            }
        }
        d
    }
}

/// Splits the candidate vertices listed in the buffer's scratch (and their neighbours where the
/// mesher asked for them) where sheets touch (module docs). Copies keep their original's
/// position and material; each fan of a split vertex gets the normalised area-weighted normal
/// of its own triangles (the field's gradient between two touching solids points into one of
/// them). Triangles keep their order and winding, except twins, which are dropped, and the
/// vertices only they used.
///
/// At the `open` border of the grid, an edge used more often one way than the other pairs
/// what it can around the edge without passing outside the grid; the rest stay single.
pub(crate) fn split_pinches(out: &mut MeshBuffer, open: Option<OpenBorder>) {
    let mut cand = std::mem::take(&mut out.scratch.pinch.candidates);
    let recorded = std::mem::take(&mut out.scratch.pinch.recorded);
    let ring = std::mem::take(&mut out.scratch.pinch.ring);
    if cand.is_empty() {
        out.scratch.pinch.candidates = cand;
        return;
    }
    let mut mark = std::mem::take(&mut out.scratch.pinch.mark);
    let mut corners = std::mem::take(&mut out.scratch.pinch.corners);
    let mut work = std::mem::take(&mut out.scratch.pinch.work);
    let listed = recorded && !ring;
    if listed {
        // The mesher listed each candidate with the triangles it may be a corner of.
        let indices = &out.indices;
        corners.retain(|&(v, t)| indices[3 * t as usize..3 * t as usize + 3].contains(&v));
        corners.sort_unstable();
    } else {
        mark_candidates(out, &cand, ring, &mut mark);
        marked_corners(&out.indices, &mark, &mut corners);
    }
    let twins = cancel_twins(
        &mut out.indices,
        &mut out.scratch.shell.ghost,
        &corners,
        &mut work,
    );
    if twins {
        if listed {
            mark_candidates(out, &cand, false, &mut mark);
        }
        marked_corners(&out.indices, &mark, &mut corners);
    }
    let mut i = 0;
    while i < corners.len() {
        let v = corners[i].0;
        let j = i + corners[i..].iter().take_while(|c| c.0 == v).count();
        work.tris.clear();
        work.tris.extend(corners[i..j].iter().map(|c| c.1));
        split_vertex(out, v, open, &mut work);
        i = j;
    }
    if twins {
        // The tips of cancelled twins.
        crate::normals::drop_unused_vertices(out);
    }
    cand.clear();
    out.scratch.pinch.candidates = cand;
    out.scratch.pinch.mark = mark;
    out.scratch.pinch.corners = corners;
    out.scratch.pinch.work = work;
}

/// For the dual mesher: lists a pinch candidate `v` with both triangles of the quad about to
/// be pushed ([`split_pinches`] drops the one without it). The mesher flags the candidate's
/// cell so that every quad on it comes through here.
#[cold]
#[inline(never)]
pub(crate) fn list_corners(out: &mut MeshBuffer, v: u32) {
    let t = (out.indices.len() / 3) as u32;
    out.scratch.pinch.corners.extend([(v, t), (v, t + 1)]);
}

/// Marks 1 for a candidate, or-ed with 2 for a vertex of a triangle on one where the mesher
/// asks for that `ring` (an edge between two non-candidates can be shared too when its
/// triangles fold over a candidate, as MC33's can).
fn mark_candidates(out: &MeshBuffer, cand: &[u32], ring: bool, mark: &mut Vec<u8>) {
    mark.clear();
    mark.resize(out.positions.len(), 0);
    for &c in cand {
        mark[c as usize] = 1;
    }
    if ring {
        for tri in out.indices.chunks_exact(3) {
            if tri.iter().any(|&v| mark[v as usize] & 1 != 0) {
                for &v in tri {
                    mark[v as usize] |= 2;
                }
            }
        }
    }
}

/// `(vertex, triangle)` for every corner of a triangle at a marked vertex, ascending.
fn marked_corners(indices: &[u32], mark: &[u8], corners: &mut Vec<(u32, u32)>) {
    corners.clear();
    for (t, tri) in indices.chunks_exact(3).enumerate() {
        for &v in tri {
            if mark[v as usize] != 0 {
                corners.push((v, t as u32));
            }
        }
    }
    corners.sort_unstable();
}

/// Buffers reused from vertex to vertex and from call to call (kept in the mesh buffer's
/// scratch), so that splitting allocates nothing once they have grown.
#[derive(Debug, Default, Clone)]
pub(crate) struct PinchWork {
    tris: Vec<u32>,
    wings: Vec<Wing>,
    joined: Vec<usize>,
    /// Pairs `(x, x → v triangle, v → x triangle)` at shared edges ([`NONE`] for the missing
    /// partner of a half pair at the open border).
    pairs: Vec<(u32, usize, usize)>,
    tried: Vec<(usize, usize)>,
    fans: Vec<usize>,
    trial: Vec<usize>,
    new_id: Vec<u32>,
    normal: Vec<[f64; 3]>,
    /// Each fan's face normals as bits, summed in sorted order for exact-frame meshes.
    faces: Vec<(usize, [u64; 3])>,
    around: Around,
    /// `cancel_twins`' triangles, keys and dropped triangles.
    twin_tris: Vec<u32>,
    keys: Vec<([u32; 3], bool, u32)>,
    drop: Vec<u32>,
}

/// Drops pairs of twin triangles on a marked vertex (the same three vertices, opposite windings:
/// a fin of no thickness, where solids meet face to face on zeros or dual vertices merged):
/// each of their edges loses one use
/// each way, so the surface stays closed, and the edges they shared with the rest are no
/// longer used four times.
fn cancel_twins(
    indices: &mut Vec<u32>,
    ghost: &mut Vec<bool>,
    corners: &[(u32, u32)],
    work: &mut PinchWork,
) -> bool {
    let PinchWork {
        twin_tris: tris,
        keys,
        drop,
        ..
    } = work;
    tris.clear();
    tris.extend(corners.iter().map(|c| c.1));
    tris.sort_unstable();
    tris.dedup();
    // Each triangle rotated to start at its lowest vertex, the other two ascending, and its
    // winding (whether they were ascending); a twin has the same key, the other winding.
    keys.clear();
    keys.extend(tris.iter().map(|&t| {
        let tri = &indices[3 * t as usize..3 * t as usize + 3];
        let k = (0..3).min_by_key(|&k| tri[k]).expect("three corners");
        let (a, b, c) = (tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]);
        ([a, b.min(c), b.max(c)], b < c, t)
    }));
    keys.sort_unstable();
    drop.clear();
    for same in keys.chunk_by(|x, y| x.0 == y.0) {
        // Sorted: one winding, then the other; each pairs with one of the other, so all of
        // the rarer winding go and as many of the other. Twins have the same three vertices,
        // so which of the other winding stay matters only where some are ghosts (of the
        // grid's shell): ghosts pair among themselves first, then the range's own triangles
        // among themselves, then across, ghosts first. The chunk across the border, whose own
        // and ghost triangles are these swapped, then keeps what this one drops.
        let cw = same.iter().take_while(|k| !k.1).count();
        let is_ghost = |k: &([u32; 3], bool, u32)| !ghost.is_empty() && ghost[k.2 as usize];
        let count = |side: &[([u32; 3], bool, u32)], g: bool| {
            side.iter().filter(|k| is_ghost(k) == g).count()
        };
        let (neg, pos) = same.split_at(cw);
        let (major, minor) = if neg.len() >= pos.len() {
            (neg, pos)
        } else {
            (pos, neg)
        };
        drop.extend(minor.iter().map(|k| k.2));
        // How many of the major winding pair: with ghosts, with own ones, then across.
        let [mg, mo, ng, no] = [
            count(major, true),
            count(major, false),
            count(minor, true),
            count(minor, false),
        ];
        let (rg, ro) = (mg - mg.min(ng), mo - mo.min(no));
        let across = (ng - mg.min(ng)) + (no - mo.min(no));
        let drop_g = mg.min(ng) + across.min(rg);
        let drop_o = mo.min(no) + (across - across.min(rg)).min(ro);
        let (mut dg, mut d_o) = (0, 0);
        for k in major {
            let (d, n) = if is_ghost(k) {
                (&mut dg, drop_g)
            } else {
                (&mut d_o, drop_o)
            };
            if *d < n {
                *d += 1;
                drop.push(k.2);
            }
        }
    }
    if drop.is_empty() {
        return false;
    }
    drop.sort_unstable();
    let mut d = 0;
    let mut w = 0;
    for t in 0..indices.len() / 3 {
        if d < drop.len() && drop[d] as usize == t {
            d += 1;
        } else {
            indices.copy_within(3 * t..3 * t + 3, 3 * w);
            if !ghost.is_empty() {
                ghost[w] = ghost[t];
            }
            w += 1;
        }
    }
    indices.truncate(3 * w);
    if !ghost.is_empty() {
        ghost.truncate(w);
    }
    true
}

/// [`pair_around`]'s buffers: the triangles by angle, their matches, a stack.
#[derive(Debug, Default, Clone)]
struct Around {
    order: Vec<(f64, bool, usize)>,
    matched: Vec<bool>,
    stack: Vec<usize>,
}

/// One triangle around a vertex `v`, on its edge `(v, x)`.
#[derive(Debug, Clone, Copy)]
struct Wing {
    /// The edge's other end.
    x: u32,
    /// Local index of the triangle among `v`'s.
    local: usize,
    /// Whether the triangle runs `v → x` (else `x → v`).
    out: bool,
    /// The triangle's third vertex.
    third: u32,
}

/// Splits `v` (on triangles `work.tris`, ascending) into one vertex per fan (module docs).
fn split_vertex(out: &mut MeshBuffer, v: u32, open: Option<OpenBorder>, work: &mut PinchWork) {
    let PinchWork {
        tris,
        wings,
        joined,
        pairs,
        tried,
        fans,
        trial,
        new_id,
        normal,
        faces,
        around,
        ..
    } = work;
    let m = tris.len();
    if m < 2 {
        return;
    }
    wings.clear();
    for (local, &t) in tris.iter().enumerate() {
        let tri = &out.indices[3 * t as usize..3 * t as usize + 3];
        let k = tri
            .iter()
            .position(|&i| i == v)
            .expect("the vertex is a corner");
        let (a, b) = (tri[(k + 1) % 3], tri[(k + 2) % 3]);
        wings.push(Wing {
            x: a,
            local,
            out: true,
            third: b,
        });
        wings.push(Wing {
            x: b,
            local,
            out: false,
            third: a,
        });
    }
    wings.sort_by_key(|w| (w.x, w.local, w.out));
    // Fans joined by edges with one triangle each way; pairs (x → v, v → x) at shared edges.
    joined.clear();
    joined.extend(0..m);
    pairs.clear();
    let mut i = 0;
    while i < wings.len() {
        let x = wings[i].x;
        let j = i + wings[i..].iter().take_while(|w| w.x == x).count();
        let group = &wings[i..j];
        let outs = group.iter().filter(|w| w.out).count();
        if outs == 1 && group.len() == 2 {
            union(joined, group[0].local, group[1].local);
        } else if outs > 1 && 2 * outs == group.len() {
            pair_around(&out.positions, v, group, None, around, |a, b| {
                pairs.push((x, a, b))
            });
        } else if let Some(cut) = open
            .map(|o| {
                let p = |i: u32| out.positions[i as usize].map(f64::from);
                o.outward(p(v), p(x))
            })
            .filter(|d| *d != [0.0; 3])
        {
            // At the grid's open border, the triangles beyond it missing: pair what can be
            // paired inside the grid; the rest stay single, as half pairs whose partner a
            // swap below may change.
            pair_around(&out.positions, v, group, Some(cut), around, |a, b| {
                pairs.push((x, a, b))
            });
            for (&(_, runs_out, local), &matched) in around.order.iter().zip(&around.matched) {
                if !matched {
                    pairs.push(if runs_out {
                        (x, NONE, local)
                    } else {
                        (x, local, NONE)
                    });
                }
            }
        } else {
            // Not one way as often as the other (an open edge, at the grid border, or by a
            // sliver given up on): no pairing to follow, so its triangles stay on one vertex
            // rather than opening it further.
            for w in &group[1..] {
                union(joined, group[0].local, w.local);
            }
        }
        i = j;
    }
    if pairs.is_empty() && (0..m).all(|i| find(joined, i) == 0) {
        // One fan: a manifold vertex, the common case on the candidates' ring.
        return;
    }
    // A fan that passes one edge twice: swap the partners of two of its pairs there, which
    // cuts it in two where the fan is a cycle of triangles. Where it is not (an edge left
    // unbalanced joined more than two of its triangles), a swap may not cut it: it is undone
    // and that pair of pairs not tried again until a swap is kept. Each kept swap adds a fan,
    // so this ends.
    // The fans `joined` and `pairs` make, into `fans`; how many.
    let fans_of = |pairs: &[(u32, usize, usize)], fans: &mut Vec<usize>| {
        fans.clear();
        fans.extend_from_slice(joined);
        for &(_, a, b) in pairs {
            if a != NONE && b != NONE {
                union(fans, a, b);
            }
        }
        (0..m).filter(|&i| find(fans, i) == i).count()
    };
    tried.clear();
    // Both buffers take `m` (they swap below): grown once, not again on the next call.
    fans.clear();
    fans.reserve(m);
    trial.clear();
    trial.reserve(m);
    let mut count = fans_of(pairs, fans);
    'cut: loop {
        for p in 0..pairs.len() {
            for q in p + 1..pairs.len() {
                let (x, y) = (pairs[p].0, pairs[q].0);
                let (a, c) = (either(pairs[p]), either(pairs[q]));
                if x != y || find(fans, a) != find(fans, c) || tried.contains(&(p, q)) {
                    continue;
                }
                let (bp, bq) = (pairs[p].2, pairs[q].2);
                pairs[p].2 = bq;
                pairs[q].2 = bp;
                let n = fans_of(pairs, trial);
                if n > count {
                    std::mem::swap(fans, trial);
                    count = n;
                    // Partners changed, so pairs of pairs that failed may cut now.
                    tried.clear();
                    continue 'cut;
                }
                pairs[q].2 = bq;
                pairs[p].2 = bp;
                tried.push((p, q));
            }
        }
        break;
    }
    if count == 1 {
        return;
    }
    // The fan of the first triangle keeps `v`; each other fan gets a copy. Each fan's vertex
    // gets the area-weighted normal of the fan's triangles.
    let exact_frame = out.scratch.exact_frame;
    faces.clear();
    new_id.clear();
    new_id.resize(m, u32::MAX);
    normal.clear();
    normal.resize(m, [0.0; 3]);
    let first = find(fans, 0);
    new_id[first] = v;
    for (local, &t) in tris.iter().enumerate() {
        let r = find(fans, local);
        if new_id[r] == u32::MAX {
            let id = out.positions.len() as u32;
            out.positions.push(out.positions[v as usize]);
            out.normals.push(out.normals[v as usize]);
            out.materials.push(out.materials[v as usize]);
            new_id[r] = id;
        }
        let t = t as usize;
        let p = |k: usize| out.positions[out.indices[3 * t + k] as usize].map(f64::from);
        let f = cross(sub(p(1), p(0)), sub(p(2), p(0)));
        if exact_frame {
            faces.push((r, f.map(f64::to_bits)));
        } else {
            normal[r] = [
                normal[r][0] + f[0],
                normal[r][1] + f[1],
                normal[r][2] + f[2],
            ];
        }
        if r != first {
            for c in &mut out.indices[3 * t..3 * t + 3] {
                if *c == v {
                    *c = new_id[r];
                }
            }
        }
    }
    if exact_frame {
        // Summed in the order of the face normals' values (module docs of `Scratch`).
        faces.sort_unstable();
        for &(r, f) in faces.iter() {
            let f = f.map(f64::from_bits);
            normal[r] = [
                normal[r][0] + f[0],
                normal[r][1] + f[1],
                normal[r][2] + f[2],
            ];
        }
    }
    for (r, &id) in new_id.iter().enumerate() {
        let l = dot(normal[r], normal[r]).sqrt();
        if id != u32::MAX && l > 0.0 {
            out.normals[id as usize] = normal[r].map(|c| (c / l) as f32);
        }
    }
}

/// A monotone stand-in for the angle of `(x, y)` in `[0, 4)` (the "diamond angle": a quarter
/// turn per unit), from one division. Unlike `atan2`, whose last bit may differ between libm
/// builds (native and wasm), IEEE 754 gives it the same bits on every platform, so the pairing
/// of a pinched edge does too. The zero vector is at 0.
fn pseudo_angle(y: f64, x: f64) -> f64 {
    if x == 0.0 && y == 0.0 {
        0.0
    } else if y >= 0.0 {
        if x >= 0.0 {
            y / (x + y)
        } else {
            1.0 - x / (y - x)
        }
    } else if x < 0.0 {
        2.0 - y / (-x - y)
    } else {
        3.0 + x / (x - y)
    }
}

/// Pairs the triangles of one edge `(v, x)` used `k > 1` times each way, as (running
/// `x → v`, running `v → x`) local indices. Sorted by the angle of their third vertex around
/// the axis `v → x`, a triangle running `x → v` has the solid on its side of increasing angle,
/// one running `v → x` on its side of decreasing angle (its normal, `(x − v) × (third − v)`,
/// points to increasing angle). Each is paired with the next of the other direction across
/// the solid, matched like brackets around the circle so that pairs never cross; `pair` gets
/// each pair.
///
/// With `cut` (an outward direction at the grid's open border, where the edge may be used
/// more often one way than the other), angles start from `cut` and the matching does not
/// wrap around past it: no pair spans the space outside the grid, and what cannot be paired
/// stays unpaired.
fn pair_around(
    positions: &[[f32; 3]],
    v: u32,
    group: &[Wing],
    cut: Option<[f64; 3]>,
    work: &mut Around,
    mut pair: impl FnMut(usize, usize),
) {
    let Around {
        order,
        matched,
        stack,
    } = work;
    let p = |i: u32| positions[i as usize].map(f64::from);
    let o = p(v);
    let axis = sub(p(group[0].x), o);
    let aa = dot(axis, axis);
    let perp = |w: &Wing| {
        let d = sub(p(w.third), o);
        let s = dot(d, axis) / aa;
        sub(d, [axis[0] * s, axis[1] * s, axis[2] * s])
    };
    let perp_dir = |d: [f64; 3]| {
        let s = dot(d, axis) / aa;
        sub(d, [axis[0] * s, axis[1] * s, axis[2] * s])
    };
    let u = cut
        .map(perp_dir)
        .filter(|d| dot(*d, *d) > 0.0)
        .or_else(|| group.iter().map(perp).find(|d| dot(*d, *d) > 0.0))
        .unwrap_or([0.0; 3]);
    let wrap = if cut.is_some() { 1 } else { 2 };
    let w = cross(axis, u);
    order.clear();
    order.extend(group.iter().map(|g| {
        let d = perp(g);
        (pseudo_angle(dot(d, w), dot(d, u)), g.out, g.local)
    }));
    // Ties: a triangle running x → v (an opener) first, so that a zero-width wedge of solid
    // pairs its two sides.
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let n = order.len();
    matched.clear();
    matched.resize(n, false);
    stack.clear();
    for step in 0..wrap * n {
        let i = step % n;
        if matched[i] {
            continue;
        }
        if !order[i].1 {
            if step < n {
                stack.push(i);
            }
        } else if let Some(j) = stack.pop() {
            matched[i] = true;
            matched[j] = true;
            pair(order[j].2, order[i].2);
        }
    }
}

/// No triangle: the missing partner of a half pair (an edge at the open border).
const NONE: usize = usize::MAX;

/// A triangle of pair `p` (its first, or its second where a half pair has no first).
fn either(p: (u32, usize, usize)) -> usize {
    if p.1 == NONE { p.2 } else { p.1 }
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}
