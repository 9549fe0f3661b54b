//! Vertex normals: gradient normals, with the triangle-normal fallback where the gradient
//! vanishes (case C02), so that no normal is ever NaN.

use crate::buffer::MeshBuffer;
use crate::lanes::F32x4;

/// Squared length below which a gradient counts as vanished.
const MIN_LEN2: f32 = 1e-20;

#[inline(always)]
pub(crate) fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Cross product.
#[inline(always)]
pub(crate) fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline(always)]
pub(crate) fn len2(a: [f32; 3]) -> f32 {
    a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
}

/// Pushes triangle `(a, b, c)` unless two of its vertices are the same. A zero-area
/// triangle is kept for now and flags the mesh for [`remove_degenerate`].
#[inline]
pub(crate) fn push_triangle(out: &mut MeshBuffer, a: u32, b: u32, c: u32) {
    if a == b || b == c || a == c {
        // Its vertices may now be unused: let the clean-up compact them.
        out.scratch.dropped_triangle = true;
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

/// Flags the mesh for [`remove_degenerate`] when a triangle from the `from`-th on has zero
/// area: what [`push_triangle`] checks, for meshers that push proper triangles in bulk.
pub(crate) fn flag_zero_area(out: &mut MeshBuffer, from: usize) {
    if out.scratch.has_degenerate {
        return;
    }
    let p = &out.positions;
    out.scratch.has_degenerate = out.indices[3 * from..].chunks_exact(3).any(|t| {
        let a = p[t[0] as usize];
        len2(cross(sub(p[t[1] as usize], a), sub(p[t[2] as usize], a))) == 0.0
    });
}

/// Removes zero-area triangles without opening holes: vertices at exactly the same position
/// (two dual vertices clamped onto one point, or crossings on exact zeros) are merged first,
/// which turns the triangles between them into index-degenerate ones whose edges close up;
/// then degenerate triangles are dropped and unused vertices removed. Runs only when
/// [`push_triangle`] saw a zero-area triangle; where it only left out triangles with a
/// repeated vertex (the mesh has no zero-area triangle), only the unused vertices are removed.
pub(crate) fn remove_degenerate(out: &mut MeshBuffer) {
    let dropped = std::mem::take(&mut out.scratch.dropped_triangle);
    if !std::mem::take(&mut out.scratch.has_degenerate) {
        if dropped {
            drop_unused_and_renumber_pinches(out);
        }
        return;
    }
    // Triangles and candidates change: the pinch splitter scans for their corners.
    out.scratch.pinch_recorded = false;
    let n = out.positions.len();
    // Each vertex maps to the first vertex at exactly its position (−0 and +0 alike), found
    // with an open-addressing table of vertex ids keyed by position.
    let key = |i: u32| out.positions[i as usize].map(|c| (c + 0.0).to_bits());
    let slots = (2 * n).next_power_of_two().max(16);
    let mut table = std::mem::take(&mut out.scratch.degenerate_table);
    table.clear();
    table.resize(slots, u32::MAX);
    let mut remap = std::mem::take(&mut out.scratch.remap);
    remap.clear();
    for i in 0..n as u32 {
        let k = key(i);
        let h =
            (u64::from(k[0]) ^ u64::from(k[1]).rotate_left(21) ^ u64::from(k[2]).rotate_left(42))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut s = (h >> 32) as usize & (slots - 1);
        loop {
            let j = table[s];
            if j == u32::MAX {
                table[s] = i;
                remap.push(i);
                break;
            }
            if key(j) == k {
                remap.push(j);
                break;
            }
            s = (s + 1) & (slots - 1);
        }
    }
    let mut tris = std::mem::take(&mut out.scratch.triangles);
    tris.clear();
    tris.extend(
        out.indices
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]].map(|i| remap[i as usize]))
            .filter(|[a, b, c]| a != b && b != c && a != c),
    );
    // Merged vertices and the vertices of split slivers may join sheets: pinch candidates,
    // like the mesher's own.
    let mut pinch = std::mem::take(&mut out.scratch.pinch);
    for p in pinch.iter_mut() {
        *p = remap[*p as usize];
    }
    pinch.extend(
        (0..n as u32)
            .filter(|&i| remap[i as usize] != i)
            .map(|i| remap[i as usize]),
    );
    let mut slivers = std::mem::take(&mut out.scratch.sliver_work);
    crate::slivers::split_slivers(&out.positions, &mut tris, &mut pinch, &mut slivers);
    out.scratch.sliver_work = slivers;
    out.indices.clear();
    out.indices.extend(tris.iter().flatten());
    drop_unused_vertices(out);
    let new_id = &out.scratch.new_id;
    pinch.retain_mut(|p| {
        *p = new_id[*p as usize];
        *p != u32::MAX
    });
    out.scratch.pinch = pinch;
    out.scratch.degenerate_table = table;
    out.scratch.remap = remap;
    out.scratch.triangles = tris;
}

/// [`drop_unused_vertices`], keeping the pinch candidates' ids (a removed one is dropped).
fn drop_unused_and_renumber_pinches(out: &mut MeshBuffer) {
    let n = out.positions.len();
    drop_unused_vertices(out);
    if out.positions.len() == n {
        return;
    }
    // Vertex ids changed: the pinch splitter scans for the candidates' corners again.
    out.scratch.pinch_recorded = false;
    let new_id = &out.scratch.new_id;
    out.scratch.pinch.retain_mut(|p| {
        *p = new_id[*p as usize];
        *p != u32::MAX
    });
}

/// Removes the vertices no triangle uses, keeping the others in their order, and renumbers
/// the indices. Leaves each old vertex's new id (`u32::MAX` for a removed one) in the
/// scratch's `new_id`.
pub(crate) fn drop_unused_vertices(out: &mut MeshBuffer) {
    let n = out.positions.len();
    let mut new_id = std::mem::take(&mut out.scratch.new_id);
    new_id.clear();
    new_id.resize(n, u32::MAX);
    for &i in &out.indices {
        new_id[i as usize] = 0;
    }
    let mut w = 0;
    for (i, id) in new_id.iter_mut().enumerate() {
        if *id == 0 {
            *id = w as u32;
            out.positions[w] = out.positions[i];
            out.normals[w] = out.normals[i];
            out.materials[w] = out.materials[i];
            w += 1;
        }
    }
    out.positions.truncate(w);
    out.normals.truncate(w);
    out.materials.truncate(w);
    for i in &mut out.indices {
        *i = new_id[*i as usize];
    }
    out.scratch.new_id = new_id;
}

/// Ends every mesher: drops degenerate triangles ([`remove_degenerate`]), splits pinched
/// vertices ([`crate::pinch::split_pinches`], pairing what it can at the grid's `open`
/// border), then normalises every vertex normal in place.
/// Where the stored gradient is zero or not finite,
/// the normalised sum of the adjacent triangles' normals is used instead, and `(0, 1, 0)` if
/// that vanishes too.
pub(crate) fn finish(out: &mut MeshBuffer, open: Option<crate::pinch::OpenBorder>) {
    remove_degenerate(out);
    crate::pinch::split_pinches(out, open);
    let mut need_fallback = false;
    let normalise = |n: &mut [f32; 3], need_fallback: &mut bool| {
        let l2 = len2(*n);
        if l2 > MIN_LEN2 && l2.is_finite() {
            let inv = 1.0 / l2.sqrt();
            *n = [n[0] * inv, n[1] * inv, n[2] * inv];
        } else {
            *n = [f32::NAN; 3];
            *need_fallback = true;
        }
    };
    let mut fours = out.normals.chunks_exact_mut(4);
    for four in &mut fours {
        if !normalise4(four) {
            four.iter_mut()
                .for_each(|n| normalise(n, &mut need_fallback));
        }
    }
    fours
        .into_remainder()
        .iter_mut()
        .for_each(|n| normalise(n, &mut need_fallback));
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

/// Normalises four normals in place as `finish` does one (the same operations, lane by lane:
/// `l2 = (x² + y²) + z²`, `1 / √l2`, each component times that) if all four are long enough
/// and finite; otherwise leaves them for the one-by-one path and returns false.
#[inline(always)]
fn normalise4(four: &mut [[f32; 3]]) -> bool {
    let flat = four.as_flattened_mut();
    let load = |i: usize| F32x4::new([flat[i], flat[i + 1], flat[i + 2], flat[i + 3]]);
    // [x0 y0 z0 x1], [y1 z1 x2 y2], [z2 x3 y3 z3].
    let (a, b, d) = (load(0), load(4), load(8));
    let x = a.shuffle::<0b10_00_11_00>(b.shuffle::<0b01_01_10_10>(d));
    let y = a
        .shuffle::<0b00_00_01_01>(b)
        .shuffle::<0b10_00_10_00>(b.shuffle::<0b10_10_11_11>(d));
    let z = a
        .shuffle::<0b01_01_10_10>(b)
        .shuffle::<0b10_00_10_00>(d.shuffle::<0b11_11_00_00>(d));
    let l2 = x * x + y * y + z * z;
    let ok = F32x4::splat(MIN_LEN2).lt_mask(l2) & l2.lt_mask(F32x4::splat(f32::INFINITY));
    if ok != 0b1111 {
        return false;
    }
    let inv = F32x4::splat(1.0) / l2.sqrt();
    let scaled = [
        a * inv.shuffle::<0b01_00_00_00>(inv),
        b * inv.shuffle::<0b10_10_01_01>(inv),
        d * inv.shuffle::<0b11_11_11_10>(inv),
    ];
    for (k, v) in scaled.into_iter().enumerate() {
        flat[4 * k..4 * k + 4].copy_from_slice(&v.to_array());
    }
    true
}
