//! Vertex normals: gradient normals, with the triangle-normal fallback where the gradient
//! vanishes (case C02), so that no normal is ever NaN.

use crate::buffer::MeshBuffer;
use crate::lanes::F32x4;

/// Squared length below which a gradient counts as vanished.
pub(crate) const MIN_LEN2: f32 = 1e-20;

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
    let coincide = boundary_vertices_coincide(out);
    if !std::mem::take(&mut out.scratch.has_degenerate) && !coincide {
        if dropped {
            drop_unused_and_renumber_pinches(out);
        }
        return;
    }
    // Triangles and candidates change: the pinch splitter scans for their corners.
    out.scratch.pinch.recorded = false;
    out.scratch.shell.renumbered = true;
    let n = out.positions.len();
    // Each vertex maps to the first vertex at exactly its position (−0 and +0 alike), found
    // with an open-addressing table of vertex ids keyed by position.
    let key = |i: u32| out.positions[i as usize].map(|c| (c + 0.0).to_bits());
    let slots = (2 * n).next_power_of_two().max(16);
    let mut table = std::mem::take(&mut out.scratch.cleanup.positions);
    table.clear();
    table.resize(slots, u32::MAX);
    let mut remap = std::mem::take(&mut out.scratch.cleanup.remap);
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
    if out.scratch.exact_frame {
        // The merged vertex keeps the least (normal, material) of its group, whatever order
        // the vertices were made in.
        let rank = |n: &[f32; 3], m: u8| (n.map(|c| (c + 0.0).to_bits()), m);
        for (i, &r) in remap.iter().enumerate() {
            let r = r as usize;
            if r != i
                && rank(&out.normals[i], out.materials[i]) < rank(&out.normals[r], out.materials[r])
            {
                out.normals[r] = out.normals[i];
                out.materials[r] = out.materials[i];
            }
        }
    }
    let mut tris = std::mem::take(&mut out.scratch.cleanup.triangles);
    tris.clear();
    let mut ghost = std::mem::take(&mut out.scratch.shell.ghost);
    let tagged = !ghost.is_empty();
    let mut kept = 0;
    for (k, t) in out.indices.chunks_exact(3).enumerate() {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| remap[i as usize]);
        if a != b && b != c && a != c {
            tris.push([a, b, c]);
            if tagged {
                ghost[kept] = ghost[k];
                kept += 1;
            }
        }
    }
    ghost.truncate(kept);
    // Merged vertices and the vertices of split slivers may join sheets: pinch candidates,
    // like the mesher's own.
    let mut pinch = std::mem::take(&mut out.scratch.pinch.candidates);
    for p in pinch.iter_mut() {
        *p = remap[*p as usize];
    }
    // Vertices (after merging) beside a seam between levels: their zero-area triangles stay
    // and they are no pinch candidates.
    let mut pinned = vec![false; if out.scratch.pinned.is_empty() { 0 } else { n }];
    for &v in &out.scratch.pinned {
        pinned[remap[v as usize] as usize] = true;
    }
    out.scratch.pinned.clear();
    let free = |v: u32| pinned.is_empty() || !pinned[v as usize];
    pinch.extend(
        (0..n as u32)
            .filter(|&i| remap[i as usize] != i && free(remap[i as usize]))
            .map(|i| remap[i as usize]),
    );
    let mut slivers = std::mem::take(&mut out.scratch.sliver_work);
    crate::slivers::split_slivers(
        &out.positions,
        &mut tris,
        &mut ghost,
        &mut pinch,
        &mut slivers,
        &pinned,
    );
    if !pinned.is_empty() {
        pinch.retain(|&v| !pinned[v as usize]);
    }
    out.scratch.shell.ghost = ghost;
    out.scratch.sliver_work = slivers;
    out.indices.clear();
    out.indices.extend(tris.iter().flatten());
    drop_unused_vertices(out);
    let new_id = &out.scratch.cleanup.new_id;
    pinch.retain_mut(|p| {
        *p = new_id[*p as usize];
        *p != u32::MAX
    });
    out.scratch.pinch.candidates = pinch;
    out.scratch.cleanup.positions = table;
    out.scratch.cleanup.remap = remap;
    out.scratch.cleanup.triangles = tris;
}

/// Whether two of the dual vertices listed on their cells' boundaries lie at one position
/// (only such vertices can coincide with another cell's). Sorts the list.
fn boundary_vertices_coincide(out: &mut MeshBuffer) -> bool {
    let b = &mut out.scratch.boundary;
    if b.len() < 2 {
        b.clear();
        return false;
    }
    let key = |i: &u32| out.positions[*i as usize].map(|c| (c + 0.0).to_bits());
    b.sort_unstable_by_key(key);
    let found = b.windows(2).any(|w| key(&w[0]) == key(&w[1]));
    b.clear();
    found
}

/// Whether two of the dual vertices listed on their cells' boundaries lie at one position,
/// keeping the list (sorted): whether [`remove_degenerate`] will merge vertices.
pub(crate) fn boundary_vertices_meet(out: &mut MeshBuffer) -> bool {
    let b = &mut out.scratch.boundary;
    let key = |i: &u32| out.positions[*i as usize].map(|c| (c + 0.0).to_bits());
    b.sort_unstable_by_key(key);
    b.windows(2).any(|w| key(&w[0]) == key(&w[1]))
}

/// [`drop_unused_vertices`], keeping the pinch candidates' ids (a removed one is dropped).
fn drop_unused_and_renumber_pinches(out: &mut MeshBuffer) {
    let n = out.positions.len();
    drop_unused_vertices(out);
    if out.positions.len() == n {
        return;
    }
    // Vertex ids changed: the pinch splitter scans for the candidates' corners again.
    out.scratch.pinch.recorded = false;
    let new_id = &out.scratch.cleanup.new_id;
    out.scratch.pinch.candidates.retain_mut(|p| {
        *p = new_id[*p as usize];
        *p != u32::MAX
    });
}

/// Removes the vertices no triangle uses, keeping the others in their order, and renumbers
/// the indices. Leaves each old vertex's new id (`u32::MAX` for a removed one) in the
/// scratch's `new_id`.
pub(crate) fn drop_unused_vertices(out: &mut MeshBuffer) {
    out.scratch.shell.renumbered = true;
    let n = out.positions.len();
    let mut new_id = std::mem::take(&mut out.scratch.cleanup.new_id);
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
    out.scratch.cleanup.new_id = new_id;
}

/// Ends every mesher: drops degenerate triangles ([`remove_degenerate`]), splits pinched
/// vertices ([`crate::pinch::split_pinches`], pairing what it can at the grid's `open`
/// border), then normalises every vertex normal in place.
/// Where the stored gradient is zero or not finite,
/// the normalised sum of the adjacent triangles' normals is used instead, and `(0, 1, 0)` if
/// that vanishes too.
///
/// Where the mesher also meshed the shell of its cell range (the *ghost* triangles flagged in
/// the scratch's `ghost`, see [`crate::cells::shell_range`]), every step above sees them, so
/// that a decision about a triangle or vertex on the range's border (twins that cancel, a
/// pinch split, a sliver split into its neighbour, a fallback normal) is made from the same
/// triangles as in the chunk across the border, and as in one mesh of both; the ghost
/// triangles, and the vertices only they use, are then removed.
pub(crate) fn finish(out: &mut MeshBuffer, open: Option<crate::pinch::OpenBorder>) {
    let ghosted = !out.scratch.shell.ghost.is_empty();
    let touched = out.scratch.has_degenerate
        || out.scratch.dropped_triangle
        || !out.scratch.pinch.candidates.is_empty()
        || !out.scratch.boundary.is_empty();
    remove_degenerate(out);
    crate::pinch::split_pinches(out, open);
    normalise(out);
    if ghosted {
        cut_ghosts(out, touched);
    }
}

/// Needs a ghost shell: whether what the cell range alone made holds, near the range's border
/// (`reach`, see [`near_border`]: where a vertex's triangles reach the shell), anything the
/// clean-up in [`finish`] would act on: a pinch candidate the dual mesher cannot show to
/// stay as it is (`stays`, from its quads and the shell's around it: one fan, nothing to
/// merge or cancel; the Marching Cubes meshers pass `|_, _| false`), a vanished gradient, a
/// zero-area triangle, or what `twin_outside` finds about the dual vertices on their cells'
/// boundaries in the cells whose quads reach the shell (a zero-area triangle of the shell
/// on them, or a vertex of a cell around them at the same position): that must be decided
/// with the triangles beyond the border. Each test is exact and local, so a chunk takes the
/// shell only where the clean-up there has something to decide (16 % of the terrain chunks
/// around the bench chunk for Surface Nets, was 40 %).
pub(crate) fn needs_shell(
    out: &MeshBuffer,
    grid: &crate::Grid,
    reach: [f32; 2],
    twin_outside: impl Fn(&MeshBuffer) -> bool,
    stays: impl Fn(&MeshBuffer, u32) -> bool,
) -> bool {
    let near = near_border(out, grid, reach);
    out.scratch
        .pinch
        .candidates
        .iter()
        .any(|&i| near(i) && !stays(out, i))
        || (out.scratch.vanished
            && out
                .normals
                .iter()
                .enumerate()
                .any(|(i, &n)| !(len2(n) > MIN_LEN2 && len2(n).is_finite()) && near(i as u32)))
        || (out.scratch.has_degenerate
            && out.indices.chunks_exact(3).any(|t| {
                let p = |k: usize| out.positions[t[k] as usize];
                len2(cross(sub(p(1), p(0)), sub(p(2), p(0)))) == 0.0 && t.iter().any(|&i| near(i))
            }))
        || (!out.scratch.boundary_out.is_empty() && twin_outside(out))
}

/// Whether a vertex lies within `reach[0]` cells of the low side of the grid's cell range,
/// or `reach[1]` of its high side, or beyond (on the border plane counts).
pub(crate) fn near_border<'a>(
    out: &'a MeshBuffer,
    grid: &crate::Grid,
    reach: [f32; 2],
) -> impl Fn(u32) -> bool + 'a {
    let lo = grid.position(grid.cells_min.map(|c| c as f32 + reach[0]));
    let hi = grid.position(grid.cells_max.map(|c| c as f32 - reach[1]));
    move |i: u32| {
        let p = out.positions[i as usize];
        (0..3).any(|a| p[a] <= lo[a] || p[a] >= hi[a])
    }
}

/// Removes the ghost triangles and the vertices only they use. Where nothing was cleaned up
/// (`touched` false) and the range's own triangles come first, its vertices are the first
/// ones made (`own_vertices` of them): the buffers are cut short. So they are where the
/// range's triangles use every vertex they made (`dense`) and the clean-up neither
/// renumbered vertices nor remade triangles: it can only have added vertices (the copies of
/// split pinches, after the shell's), of which those the range's triangles use are kept.
fn cut_ghosts(out: &mut MeshBuffer, touched: bool) {
    let ghost = std::mem::take(&mut out.scratch.shell.ghost);
    let own = ghost.iter().take_while(|&&g| !g).count();
    let own_first = ghost[own..].iter().all(|&g| g);
    let shell = &out.scratch.shell;
    if own_first && !touched {
        out.indices.truncate(3 * own);
        let n = shell.own_vertices;
        out.positions.truncate(n);
        out.normals.truncate(n);
        out.materials.truncate(n);
    } else if own_first && shell.dense && !shell.renumbered {
        out.indices.truncate(3 * own);
        let (base, made, n) = (shell.own_vertices, shell.made, out.positions.len());
        let mut w = base;
        if n > made {
            // Copies added by the clean-up: keep those the range's triangles use, in order.
            let mut new_id = std::mem::take(&mut out.scratch.cleanup.new_id);
            new_id.clear();
            new_id.resize(n - made, u32::MAX);
            for &i in &out.indices {
                if i as usize >= made {
                    new_id[i as usize - made] = 0;
                }
            }
            for (k, id) in new_id.iter_mut().enumerate() {
                if *id == 0 {
                    *id = w as u32;
                    out.positions[w] = out.positions[made + k];
                    out.normals[w] = out.normals[made + k];
                    out.materials[w] = out.materials[made + k];
                    w += 1;
                }
            }
            for i in &mut out.indices {
                if *i as usize >= made {
                    *i = new_id[*i as usize - made];
                }
            }
            out.scratch.cleanup.new_id = new_id;
        }
        out.positions.truncate(w);
        out.normals.truncate(w);
        out.materials.truncate(w);
    } else {
        let mut w = 0;
        for (t, _) in ghost.iter().enumerate().filter(|(_, g)| !**g) {
            out.indices.copy_within(3 * t..3 * t + 3, 3 * w);
            w += 1;
        }
        out.indices.truncate(3 * w);
        drop_unused_vertices(out);
    }
    let mut ghost = ghost;
    ghost.clear();
    out.scratch.shell.ghost = ghost;
}

/// Normalises every vertex normal ([`finish`]'s last step).
fn normalise(out: &mut MeshBuffer) {
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
    let face = |t: &[u32]| {
        let p = |i: u32| out.positions[i as usize];
        cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])))
    };
    if out.scratch.exact_frame {
        // Summed in the order of the face normals' values, not of the triangles' ids.
        let mut faces = std::mem::take(&mut out.scratch.fallback);
        faces.clear();
        for t in out.indices.chunks_exact(3) {
            if t.iter().any(|&i| out.normals[i as usize][0].is_nan()) {
                let f = face(t);
                faces.extend(t.iter().map(|&i| (i, f)));
            }
        }
        faces.sort_unstable_by_key(|&(i, f)| (i, f.map(|c| (c + 0.0).to_bits())));
        for &(i, f) in &faces {
            let a = &mut acc[i as usize];
            *a = [a[0] + f[0], a[1] + f[1], a[2] + f[2]];
        }
        out.scratch.fallback = faces;
    } else {
        for t in out.indices.chunks_exact(3) {
            let f = face(t);
            for &i in t {
                let a = &mut acc[i as usize];
                *a = [a[0] + f[0], a[1] + f[1], a[2] + f[2]];
            }
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
