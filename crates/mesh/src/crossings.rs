//! A dual cell's patch: its corner values in memory order, the crossings of its edges, their
//! mean, and the cell's trilinear interpolant (shared by Surface Nets and Dual Contouring).

use crate::lanes::{Aligned, F32x4};
use crate::tables::{CORNERS, EDGES};

/// The surface crossings of one cell, in cell-local grid units (`[0, 1]³`).
pub(crate) struct Crossings {
    /// Crossing points.
    pub points: [[f32; 3]; 12],
    /// Number of crossings.
    pub len: usize,
    /// The cell's corner values in row order (see [`ROW_OF_CORNER`]).
    pub corners: [f32; 8],
}

impl Crossings {
    /// The crossings on the edges in the bit set `edges` (bit `e`: edge `e` of [`EDGES`]) of
    /// a cell with corner values `corners` (row order), in edge order.
    pub(crate) fn new(corners: &[f32; 8], mut edges: u16) -> Self {
        let mut cr = Crossings {
            points: [[0.0; 3]; 12],
            len: 0,
            corners: *corners,
        };
        while edges != 0 {
            let e = edges.trailing_zeros() as usize;
            edges &= edges - 1;
            let p = crossing(corners, e).to_array();
            cr.points[cr.len] = [p[0], p[1], p[2]];
            cr.len += 1;
        }
        cr
    }
}

/// The crossing on cell edge `e` (which must be crossed): its lower corner plus
/// `t = v_lo / (v_lo − v_hi)` along the edge's axis, in lanes 0..3 (lane 3 is 1).
#[inline(always)]
fn crossing(corners: &[f32; 8], e: usize) -> F32x4 {
    let [lo, hi] = EDGE_ENDS[e & 15];
    let (va, vb) = (corners[lo as usize & 7], corners[hi as usize & 7]);
    let t = va / (va - vb);
    let [ca, d] = EDGE_LINES.0[e & 15];
    F32x4::new(ca) + F32x4::splat(t) * F32x4::new(d)
}

/// The mean of the crossings on the edges in the bit set `edges` (bit `e`: edge `e` of
/// [`EDGES`]) in lanes 0..3 (lane 3 is not meaningful).
///
/// Branch free: the `t = v_lo / (v_lo − v_hi)` of all twelve edges are computed four at a
/// time, one division per axis (the four edges along an axis, lane `k` the edge whose lower
/// corner has offsets `k & 1`, `k >> 1` on the other two axes in x, y, z order). The patch's
/// lanes are kept by a mask and summed per axis; the crossings' other two coordinates (0 or
/// 1, their lower corner's) come summed from [`AXIS_OFFSETS`]. The sum is
/// that of [`Crossings::new`]'s points up to rounding (its order differs), identical in every
/// chunk that meshes the cell.
#[inline(always)]
pub(crate) fn patch_mean(corners: &[f32; 8], edges: u16) -> F32x4 {
    // The grouped bits, and the number of edges from bit 16 (the two halves' bits are
    // disjoint, so adding them is or-ing them).
    let g = (BY_AXIS.0[edges as usize & 63] + BY_AXIS.1[edges as usize >> 6 & 63]) as usize;
    let c = F32x4::new([corners[0], corners[1], corners[2], corners[3]]);
    let d = F32x4::new([corners[4], corners[5], corners[6], corners[7]]);
    // Row order: corner `x + 2y + 4z`; `c` is the layer z = 0, `d` z = 1.
    let (x_lo, x_hi) = (c.shuffle::<0b10_00_10_00>(d), c.shuffle::<0b11_01_11_01>(d));
    let (y_lo, y_hi) = (c.shuffle::<0b01_00_01_00>(d), c.shuffle::<0b11_10_11_10>(d));
    let tx = (x_lo / (x_lo - x_hi)).keep(g & 15);
    let ty = (y_lo / (y_lo - y_hi)).keep(g >> 4 & 15);
    let tz = (c / (c - d)).keep(g >> 8 & 15);
    // [Σ tx, Σ ty, Σ tz, 0], each as (t0 + t2) + (t1 + t3).
    let zero = F32x4::splat(0.0);
    let xy = tx.interleave_lo(ty) + tx.interleave_hi(ty);
    let z = tz.interleave_lo(zero) + tz.interleave_hi(zero);
    let t = xy.shuffle::<0b01_00_01_00>(z) + xy.shuffle::<0b11_10_11_10>(z);
    let o = &AXIS_OFFSETS.0;
    let offsets = F32x4::new(o[0][g & 15]) + F32x4::new(o[1][g >> 4 & 15]);
    let s = t + (offsets + F32x4::new(o[2][g >> 8 & 15]));
    // `1 / n` as computed, bit for bit, but off the chain of the sums.
    s * F32x4::splat(RECIPROCAL[g >> 16 & 15])
}

/// `1 / n` for the number of crossings `n` (index 0 unused).
static RECIPROCAL: [f32; 16] = {
    let mut out = [0.0f32; 16];
    let mut n = 1;
    while n < 16 {
        out[n] = 1.0 / n as f32;
        n += 1;
    }
    out
};

/// An edge's bit in [`patch_mean`]'s grouping (`4 · axis + k`), from its bit in [`EDGES`]
/// order, and the number of edges from bit 16: `BY_AXIS.0[edges & 63] + BY_AXIS.1[edges >>
/// 6]`.
static BY_AXIS: ([u32; 64], [u32; 64]) = {
    let mut bit = [0u32; 12];
    let mut e = 0;
    while e < 12 {
        let [lo, hi] = EDGE_ENDS[e];
        let (l, h) = (row_corner(lo), row_corner(hi));
        let axis = if l[0] != h[0] {
            0
        } else if l[1] != h[1] {
            1
        } else {
            2
        };
        let [first, second] = other_axes(axis);
        let k = l[first] + 2 * l[second];
        bit[e] = 1 << (4 * axis + k as usize);
        e += 1;
    }
    let (mut lo, mut hi) = ([0u32; 64], [0u32; 64]);
    let mut m = 0;
    while m < 64 {
        let mut i = 0;
        while i < 6 {
            if m >> i & 1 == 1 {
                lo[m] += bit[i] + (1 << 16);
                hi[m] += bit[6 + i] + (1 << 16);
            }
            i += 1;
        }
        m += 1;
    }
    (lo, hi)
};

/// The two axes other than `axis`, in x, y, z order: lane `k` of [`patch_mean`]'s group
/// for `axis` is the edge whose lower corner is `k & 1` on the first and `k >> 1` on the
/// second.
const fn other_axes(axis: usize) -> [usize; 2] {
    match axis {
        0 => [1, 2],
        1 => [0, 2],
        _ => [0, 1],
    }
}

/// `AXIS_OFFSETS[axis][lanes]`: for the edges along `axis` in the lane set `lanes` (see
/// [`patch_mean`]), the sum of their crossings' coordinates on the other two axes (their lower
/// corners') in lanes 0..3, 0 on `axis`, and their number in lane 3.
static AXIS_OFFSETS: Aligned<[[[f32; 4]; 16]; 3]> = Aligned({
    let mut out = [[[0.0f32; 4]; 16]; 3];
    let mut axis = 0;
    while axis < 3 {
        let [first, second] = other_axes(axis);
        let mut lanes = 0;
        while lanes < 16 {
            let mut k = 0;
            while k < 4 {
                if lanes >> k & 1 == 1 {
                    out[axis][lanes][first] += (k & 1) as f32;
                    out[axis][lanes][second] += (k >> 1) as f32;
                    out[axis][lanes][3] += 1.0;
                }
                k += 1;
            }
            lanes += 1;
        }
        axis += 1;
    }
    out
});

/// A corner's index in row order, `x + 2y + 4z`, from its index in [`CORNERS`] order: the
/// order of the samples in memory (two from each of the cell's four x-rows), so that a cell's
/// corners are read as four pairs of neighbouring samples.
pub(crate) const ROW_OF_CORNER: [u8; 8] = {
    let mut out = [0u8; 8];
    let mut c = 0;
    while c < 8 {
        let [x, y, z] = CORNERS[c];
        out[c] = x + 2 * y + 4 * z;
        c += 1;
    }
    out
};

/// Per cell edge (padded to 16): its lower corner (lower offset in the grid, 0 on the edge's
/// axis) and its upper corner, as row-order indices ([`ROW_OF_CORNER`]).
static EDGE_ENDS: [[u8; 2]; 16] = {
    let mut out = [[0u8, 1]; 16];
    let mut e = 0;
    while e < 12 {
        let [c0, c1] = EDGES[e];
        let (a, b) = (CORNERS[c0 as usize], CORNERS[c1 as usize]);
        // Corners differ on one axis; the lower one has 0 there (and the lower offset).
        let (r0, r1) = (ROW_OF_CORNER[c0 as usize], ROW_OF_CORNER[c1 as usize]);
        out[e] = if a[0] + a[1] + a[2] < b[0] + b[1] + b[2] {
            [r0, r1]
        } else {
            [r1, r0]
        };
        e += 1;
    }
    out
};

/// Per cell edge (padded to 16): the position of its lower corner and the unit vector along
/// it, in four lanes (the fourth 1 and 0: a crossing's lane 3 is `1 + t · 0 = 1`, `t` being
/// finite). A crossing is `lower + t · unit`, which is `ca + t · (cb − ca)` bit for bit.
static EDGE_LINES: Aligned<[[[f32; 4]; 2]; 16]> = Aligned({
    let mut out = [[[0.0f32; 4]; 2]; 16];
    let mut e = 0;
    while e < 12 {
        let [lo, hi] = EDGE_ENDS[e];
        let (l, h) = (row_corner(lo), row_corner(hi));
        let mut i = 0;
        while i < 3 {
            out[e][0][i] = l[i] as f32;
            out[e][1][i] = (h[i] - l[i]) as f32;
            i += 1;
        }
        out[e][0][3] = 1.0;
        e += 1;
    }
    out
});

/// The cell-local position of the corner with row-order index `r` ([`ROW_OF_CORNER`]).
const fn row_corner(r: u8) -> [u8; 3] {
    [r & 1, (r >> 1) & 1, r >> 2]
}

/// Value and gradient of the trilinear interpolant of a cell's corners (in row order,
/// [`ROW_OF_CORNER`]) at `p` in `[0, 1]³`, gradient in value units per voxel.
#[inline]
pub(crate) fn trilinear(v: &[f32; 8], p: [f32; 3]) -> (f32, [f32; 3]) {
    let (f, g) = trilinear_lanes(v, F32x4::new([p[0], p[1], p[2], 0.0]));
    let g = g.to_array();
    (f, [g[0], g[1], g[2]])
}

/// [`trilinear`] with the point in lanes 0..3 and the gradient in lanes 0..3 (lane 3 not
/// meaningful). Each value is the same chain of operations as in the scalar form
/// (`lerp(a, b, t) = a + t · (b − a)`):
///
/// ```text
/// bottom = lerp(lerp(c00, c10, x), lerp(c01, c11, x), y)   top: the same with d (z = 1)
/// dx_b = lerp(c10 − c00, c11 − c01, y)    dy_b = lerp(c01 − c00, c11 − c10, x)
/// f = lerp(bottom, top, z)    g = [lerp(dx_b, dx_t, z), lerp(dy_b, dy_t, z), top − bottom]
/// ```
///
/// done four lanes at a time: the x step on `[c·0, c·1, d·0, d·1]`, the y step (x for `dy`)
/// on `[·, dx, dy, ·]` per layer, then the z step on both layers.
#[inline(always)]
pub(crate) fn trilinear_lanes(v: &[f32; 8], p: F32x4) -> (f32, F32x4) {
    // Row order: (0,0,0) (1,0,0) (0,1,0) (1,1,0), then the same at z = 1.
    let c = F32x4::new([v[0], v[1], v[2], v[3]]);
    let d = F32x4::new([v[4], v[5], v[6], v[7]]);
    // Along x: [c00, c01, d00, d01] to [c10, c11, d10, d11].
    let x_lo = c.shuffle::<0b10_00_10_00>(d);
    let x_hi = c.shuffle::<0b11_01_11_01>(d);
    let dx = x_hi - x_lo;
    let lx = x_lo + p.shuffle::<0>(p) * dx;
    // Along y: [c00, c10, d00, d10] to [c01, c11, d01, d11].
    let dy = c.shuffle::<0b11_10_11_10>(d) - c.shuffle::<0b01_00_01_00>(d);
    // [lx0, dx0, lx1, dx1] and [lx2, dx2, lx3, dx3]: bottom and top layer.
    let (b, t) = (lx.interleave_lo(dx), lx.interleave_hi(dx));
    // Per layer: [lerp(lx0, lx1, y), lerp(dx0, dx1, y), lerp(dy0, dy1, x), ·].
    let ty = p.shuffle::<0b00_00_01_01>(p);
    let b_lo = b.shuffle::<0b00_00_01_00>(dy);
    let b_hi = b.shuffle::<0b01_01_11_10>(dy);
    let t_lo = t.shuffle::<0b10_10_01_00>(dy);
    let t_hi = t.shuffle::<0b11_11_11_10>(dy);
    let bottom = b_lo + ty * (b_hi - b_lo);
    let top = t_lo + ty * (t_hi - t_lo);
    // Along z: lane 0 the value (and `top − bottom` the z gradient), lanes 1, 2 x and y.
    let dz = top - bottom;
    let r = bottom + p.shuffle::<0b10_10_10_10>(p) * dz;
    let g = r.shuffle::<0b00_00_10_01>(dz);
    (r.to_array()[0], g)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scalar interpolant the lane form replaced.
    fn trilinear_scalar(v: &[f32; 8], [x, y, z]: [f32; 3]) -> (f32, [f32; 3]) {
        let lerp = |a: f32, b: f32, t: f32| a + t * (b - a);
        let (c00, c10, c01, c11) = (v[0], v[1], v[2], v[3]);
        let (d00, d10, d01, d11) = (v[4], v[5], v[6], v[7]);
        let bottom = lerp(lerp(c00, c10, x), lerp(c01, c11, x), y);
        let top = lerp(lerp(d00, d10, x), lerp(d01, d11, x), y);
        let dx_b = lerp(c10 - c00, c11 - c01, y);
        let dx_t = lerp(d10 - d00, d11 - d01, y);
        let dy_b = lerp(c01 - c00, c11 - c10, x);
        let dy_t = lerp(d01 - d00, d11 - d10, x);
        (
            lerp(bottom, top, z),
            [lerp(dx_b, dx_t, z), lerp(dy_b, dy_t, z), top - bottom],
        )
    }

    /// Pseudo-random values in `[-1, 1)` (a fixed LCG: the test is reproducible).
    fn value(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((*seed >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }

    /// The lane form of the interpolant gives the scalar form's bits, and the crossings' mean
    /// is the mean of [`Crossings::new`]'s points.
    #[test]
    fn lane_forms_match_scalar() {
        let mut seed = 7;
        for _ in 0..20_000 {
            let v: [f32; 8] = std::array::from_fn(|_| value(&mut seed));
            let p = [0, 1, 2].map(|_| value(&mut seed).abs());
            let (f, g) = trilinear(&v, p);
            let (fs, gs) = trilinear_scalar(&v, p);
            assert_eq!(f.to_bits(), fs.to_bits());
            assert_eq!(g.map(f32::to_bits), gs.map(f32::to_bits));
            // Every crossed edge, as one patch.
            let mut edges = 0u16;
            for (e, [lo, hi]) in EDGE_ENDS[..12].iter().enumerate() {
                if (v[*lo as usize] < 0.0) != (v[*hi as usize] < 0.0) {
                    edges |= 1 << e;
                }
            }
            if edges == 0 {
                continue;
            }
            // Against the mean of the points in f64: the same up to the rounding of a
            // different order of sums.
            let c = Crossings::new(&v, edges);
            let mut s = [0.0f64; 3];
            for q in &c.points[..c.len] {
                for i in 0..3 {
                    s[i] += f64::from(q[i]);
                }
            }
            let m = patch_mean(&v, edges).to_array();
            for i in 0..3 {
                let want = s[i] / c.len as f64;
                assert!(
                    (f64::from(m[i]) - want).abs() <= 4.0 * f64::from(f32::EPSILON),
                    "edges {edges:#x}: lane {i} {} against {want}",
                    m[i]
                );
            }
            // A single edge's mean is its crossing exactly.
            let e = edges.trailing_zeros();
            let one = patch_mean(&v, 1 << e).to_array();
            let p = Crossings::new(&v, 1 << e).points[0];
            assert_eq!(
                [one[0], one[1], one[2]].map(f32::to_bits),
                p.map(f32::to_bits)
            );
        }
    }
}
