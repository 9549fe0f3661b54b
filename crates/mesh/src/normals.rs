//! Vertex normals: gradient normals, with the triangle-normal fallback where the gradient
//! vanishes (case C02), so that no normal is ever NaN.

use crate::buffer::MeshBuffer;

/// Squared length below which a gradient counts as vanished.
const MIN_LEN2: f32 = 1e-20;

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Cross product.
pub(crate) fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn len2(a: [f32; 3]) -> f32 {
    a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
}

/// Pushes triangle `(a, b, c)` unless two of its vertices are the same. A zero-area
/// triangle is kept for now and flags the mesh for [`remove_degenerate`].
#[inline]
pub(crate) fn push_triangle(out: &mut MeshBuffer, a: u32, b: u32, c: u32) {
    if a == b || b == c || a == c {
        return;
    }
    let p = &out.positions;
    let n = cross(
        sub(p[b as usize], p[a as usize]),
        sub(p[c as usize], p[a as usize]),
    );
    if len2(n) == 0.0 {
        out.scratch.has_degenerate = true;
    }
    out.indices.extend_from_slice(&[a, b, c]);
}

/// Removes zero-area triangles without opening holes: vertices at exactly the same position
/// (two dual vertices clamped onto one point, or crossings on exact zeros) are merged first,
/// which turns the triangles between them into index-degenerate ones whose edges close up;
/// then degenerate triangles are dropped and unused vertices removed. Runs only when
/// [`push_triangle`] saw a zero-area triangle.
pub(crate) fn remove_degenerate(out: &mut MeshBuffer) {
    if !std::mem::take(&mut out.scratch.has_degenerate) {
        return;
    }
    let n = out.positions.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    let key = |i: u32| out.positions[i as usize].map(|c| (c + 0.0).to_bits());
    order.sort_unstable_by_key(|&i| (key(i), i));
    let mut remap: Vec<u32> = (0..n as u32).collect();
    for w in 1..n {
        let (prev, cur) = (order[w - 1], order[w]);
        if key(prev) == key(cur) {
            remap[cur as usize] = remap[prev as usize];
        }
    }
    let mut tris: Vec<[u32; 3]> = out
        .indices
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]].map(|i| remap[i as usize]))
        .filter(|[a, b, c]| a != b && b != c && a != c)
        .collect();
    split_slivers(&out.positions, &mut tris);
    let kept: Vec<u32> = tris.iter().flatten().copied().collect();
    // Compact: keep used vertices in their original order.
    let mut new_id = vec![u32::MAX; n];
    let mut next = 0u32;
    for &i in &kept {
        if new_id[i as usize] == u32::MAX {
            new_id[i as usize] = 0;
        }
    }
    for id in new_id.iter_mut() {
        if *id == 0 {
            *id = next;
            next += 1;
        }
    }
    let mut w = 0;
    for (i, id) in new_id.iter().enumerate() {
        if *id != u32::MAX {
            out.positions[w] = out.positions[i];
            out.normals[w] = out.normals[i];
            out.materials[w] = out.materials[i];
            w += 1;
        }
    }
    out.positions.truncate(w);
    out.normals.truncate(w);
    out.materials.truncate(w);
    out.indices.clear();
    out.indices.extend(kept.iter().map(|&i| new_id[i as usize]));
}

fn area2(p: &[[f32; 3]], t: [u32; 3]) -> f32 {
    let [a, b, c] = t.map(|i| p[i as usize]);
    len2(cross(sub(b, a), sub(c, a)))
}

/// Removes zero-area triangles whose three distinct vertices are collinear without opening
/// a hole: with `b` between `a` and `c`, the neighbour `(a, c, d)` across the long edge is
/// split into `(a, b, d)` and `(b, c, d)` (every such neighbour, where the edge is
/// non-manifold) and the sliver dropped, which keeps every edge's triangle count even.
fn split_slivers(p: &[[f32; 3]], tris: &mut Vec<[u32; 3]>) {
    let mut guard = 4 * tris.len() + 16;
    while let Some(i) = tris.iter().position(|&t| area2(p, t) == 0.0) {
        guard -= 1;
        if guard == 0 {
            tris.retain(|&t| area2(p, t) != 0.0);
            return;
        }
        let t = tris.swap_remove(i);
        // Rotate so that t = (a, b, c) with b the middle vertex (opposite the longest edge).
        let d2 = |u: u32, v: u32| len2(sub(p[u as usize], p[v as usize]));
        let k = (0..3).max_by(|&x, &y| {
            d2(t[(x + 2) % 3], t[x])
                .total_cmp(&d2(t[(y + 2) % 3], t[y]))
                .then(y.cmp(&x))
        });
        // Edge (t[k+2], t[k]) is the longest; its opposite vertex t[k+1] is the middle.
        let k = k.expect("three edges");
        let (a, b, c) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
        // Split every other user of the long edge: (x, y, d) with {x, y} = {a, c} becomes
        // (x, b, d) and (b, y, d). An edge used an even number of times keeps even counts.
        let users: Vec<usize> = (0..tris.len())
            .filter(|&j| {
                let u = tris[j];
                (0..3).any(|e| (u[e], u[(e + 1) % 3]) == (a, c) || (u[e], u[(e + 1) % 3]) == (c, a))
            })
            .collect();
        for j in users {
            let u = tris[j];
            let e = (0..3)
                .find(|&e| [a, c].contains(&u[e]) && [a, c].contains(&u[(e + 1) % 3]))
                .expect("user");
            let (x, y, d) = (u[e], u[(e + 1) % 3], u[(e + 2) % 3]);
            tris[j] = [x, b, d];
            tris.push([b, y, d]);
        }
    }
}

/// Normalises every vertex normal in place. Where the stored gradient is zero or not finite,
/// the normalised sum of the adjacent triangles' normals is used instead, and `(0, 1, 0)` if
/// that vanishes too.
pub(crate) fn finish(out: &mut MeshBuffer) {
    remove_degenerate(out);
    let mut need_fallback = false;
    for n in out.normals.iter_mut() {
        let l2 = len2(*n);
        if l2 > MIN_LEN2 && l2.is_finite() {
            let inv = 1.0 / l2.sqrt();
            *n = [n[0] * inv, n[1] * inv, n[2] * inv];
        } else {
            *n = [f32::NAN; 3];
            need_fallback = true;
        }
    }
    if !need_fallback {
        return;
    }
    let mut acc = std::mem::take(&mut out.scratch.face_normals);
    acc.clear();
    acc.resize(out.positions.len(), [0.0; 3]);
    for t in out.indices.chunks_exact(3) {
        let p = |i: u32| out.positions[i as usize];
        let f = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
        for &i in t {
            let a = &mut acc[i as usize];
            *a = [a[0] + f[0], a[1] + f[1], a[2] + f[2]];
        }
    }
    for (n, a) in out.normals.iter_mut().zip(&acc) {
        if n[0].is_nan() {
            let l2 = len2(*a);
            *n = if l2 > MIN_LEN2 && l2.is_finite() {
                let inv = 1.0 / l2.sqrt();
                [a[0] * inv, a[1] * inv, a[2] * inv]
            } else {
                [0.0, 1.0, 0.0]
            };
        }
    }
    out.scratch.face_normals = acc;
}
