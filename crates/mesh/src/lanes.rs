//! Four `f32` lanes for the dual meshers' per-vertex arithmetic: an SSE register on x86_64
//! (SSE is part of its baseline), a plain array elsewhere.
//!
//! Every operation is the IEEE 754 operation lane by lane (no fused multiply-add, no
//! reassociation), so a result is bit for bit the scalar code's on every target; the SSE form
//! only saves the shuffles the compiler otherwise builds around three-lane arithmetic.

use std::ops::{Add, Div, Mul, Sub};

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m128, _mm_add_ps, _mm_and_ps, _mm_castpd_ps, _mm_castsi128_ps, _mm_cmpeq_ps, _mm_cmplt_ps,
    _mm_div_ps, _mm_load_sd, _mm_load_ss, _mm_loadu_ps, _mm_max_ps, _mm_min_ps, _mm_movelh_ps,
    _mm_movemask_ps, _mm_mul_ps, _mm_set_epi32, _mm_set1_ps, _mm_setzero_ps, _mm_shuffle_ps,
    _mm_sqrt_ps, _mm_storeu_ps, _mm_sub_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
};

/// Four `f32` lanes.
#[derive(Clone, Copy)]
pub(crate) struct F32x4(
    #[cfg(target_arch = "x86_64")] __m128,
    #[cfg(not(target_arch = "x86_64"))] [f32; 4],
);

// SAFETY (every `unsafe` block below): the blocks call SSE intrinsics, and SSE is part of
// the x86_64 baseline, so they are always available; the loads and stores go through
// references to `[f32; 4]`, which are valid for four `f32`s.
#[cfg(target_arch = "x86_64")]
impl F32x4 {
    /// The lanes of `a`.
    #[inline(always)]
    pub(crate) fn new(a: [f32; 4]) -> Self {
        // SAFETY: see the `impl` (a valid `[f32; 4]`).
        Self(unsafe { _mm_loadu_ps(a.as_ptr()) })
    }

    /// `[p[0], p[1], p[2], 0]`, read as `p` is written by a `[f32; 3]` store (an 8-byte
    /// and a 4-byte piece), so that a read soon after the write takes both pieces from the
    /// store buffer instead of waiting for them to reach the cache.
    #[inline(always)]
    pub(crate) fn from_xyz(p: &[f32; 3]) -> Self {
        let at = p.as_ptr();
        // SAFETY: see the `impl`; both loads lie within `p` (bytes 0..8 and 8..12), and
        // `_mm_load_sd`/`_mm_load_ss` need no alignment.
        Self(unsafe {
            _mm_movelh_ps(
                _mm_castpd_ps(_mm_load_sd(at.cast::<f64>())),
                _mm_load_ss(at.add(2)),
            )
        })
    }

    /// `x` in every lane.
    #[inline(always)]
    pub(crate) fn splat(x: f32) -> Self {
        // SAFETY: see the `impl`.
        Self(unsafe { _mm_set1_ps(x) })
    }

    /// The lanes as an array.
    #[inline(always)]
    pub(crate) fn to_array(self) -> [f32; 4] {
        let mut a = [0.0f32; 4];
        // SAFETY: see the `impl` (a valid `[f32; 4]`).
        unsafe { _mm_storeu_ps(a.as_mut_ptr(), self.0) };
        a
    }

    /// `[self[I & 3], self[I >> 2 & 3], other[I >> 4 & 3], other[I >> 6 & 3]]`
    /// (`shufps`).
    #[inline(always)]
    pub(crate) fn shuffle<const I: i32>(self, other: Self) -> Self {
        // SAFETY: see the `impl`.
        Self(unsafe { _mm_shuffle_ps::<I>(self.0, other.0) })
    }

    /// `[self[0], other[0], self[1], other[1]]`.
    #[inline(always)]
    pub(crate) fn interleave_lo(self, other: Self) -> Self {
        // SAFETY: see the `impl`.
        Self(unsafe { _mm_unpacklo_ps(self.0, other.0) })
    }

    /// `[self[2], other[2], self[3], other[3]]`.
    #[inline(always)]
    pub(crate) fn interleave_hi(self, other: Self) -> Self {
        // SAFETY: see the `impl`.
        Self(unsafe { _mm_unpackhi_ps(self.0, other.0) })
    }

    /// Each lane clamped into `[0, 1]` as `f32::clamp(0.0, 1.0)` does (NaN stays NaN, −0
    /// stays −0): `max(0, x)` keeps `x` unless `0 > x`, `min(1, x)` unless `1 < x`.
    #[inline(always)]
    pub(crate) fn clamp01(self) -> Self {
        // SAFETY: see the `impl`.
        Self(unsafe { _mm_min_ps(_mm_set1_ps(1.0), _mm_max_ps(_mm_setzero_ps(), self.0)) })
    }

    /// `[self[1], self[2], self[0], self[3]]`.
    #[inline(always)]
    pub(crate) fn rotate3(self) -> Self {
        self.shuffle::<0b11_00_10_01>(self)
    }

    /// Bit `i` set where lane `i` is below 0 (`x < 0.0`: not for −0 or NaN).
    #[inline(always)]
    pub(crate) fn sign_mask(self) -> u32 {
        self.lt_mask(Self::splat(0.0))
    }

    /// Bit `i` set where `self[i] < other[i]` (false where either is NaN).
    #[inline(always)]
    pub(crate) fn lt_mask(self, other: Self) -> u32 {
        // SAFETY: see the `impl`.
        unsafe { _mm_movemask_ps(_mm_cmplt_ps(self.0, other.0)) as u32 }
    }

    /// The square root of each lane (correctly rounded, as `f32::sqrt`).
    #[inline(always)]
    pub(crate) fn sqrt(self) -> Self {
        // SAFETY: see the `impl`.
        Self(unsafe { _mm_sqrt_ps(self.0) })
    }

    /// Lane `i` kept where bit `i` of `bits` is set, `+0.0` elsewhere (NaN and infinities
    /// included: the lane's bits are cleared).
    #[inline(always)]
    pub(crate) fn keep(self, bits: usize) -> Self {
        let m = &KEEP_MASKS.0[bits & 15];
        // SAFETY: see the `impl` (integer lanes set from values, no pointer).
        Self(unsafe {
            _mm_and_ps(
                self.0,
                _mm_castsi128_ps(_mm_set_epi32(m[3], m[2], m[1], m[0])),
            )
        })
    }

    /// Whether lanes 0..3 all equal 0 (either sign).
    #[inline(always)]
    pub(crate) fn xyz_zero(self) -> bool {
        // SAFETY: see the `impl`.
        let m = unsafe { _mm_movemask_ps(_mm_cmpeq_ps(self.0, _mm_setzero_ps())) };
        m & 7 == 7
    }
}

/// `KEEP_MASKS[bits]`: all ones in lane `i` where bit `i` of `bits` is set.
#[cfg(target_arch = "x86_64")]
static KEEP_MASKS: Aligned<[[i32; 4]; 16]> = Aligned({
    let mut out = [[0i32; 4]; 16];
    let mut b = 0;
    while b < 16 {
        let mut i = 0;
        while i < 4 {
            out[b][i] = if b >> i & 1 == 1 { -1 } else { 0 };
            i += 1;
        }
        b += 1;
    }
    out
});

/// A table aligned for whole-register loads.
#[repr(align(16))]
pub(crate) struct Aligned<T>(pub(crate) T);

#[cfg(target_arch = "x86_64")]
impl Add for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: see the `impl` above.
        Self(unsafe { _mm_add_ps(self.0, o.0) })
    }
}

#[cfg(target_arch = "x86_64")]
impl Sub for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        // SAFETY: see the `impl` above.
        Self(unsafe { _mm_sub_ps(self.0, o.0) })
    }
}

#[cfg(target_arch = "x86_64")]
impl Mul for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        // SAFETY: see the `impl` above.
        Self(unsafe { _mm_mul_ps(self.0, o.0) })
    }
}

#[cfg(target_arch = "x86_64")]
impl Div for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        // SAFETY: see the `impl` above.
        Self(unsafe { _mm_div_ps(self.0, o.0) })
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl F32x4 {
    /// The lanes of `a`.
    #[inline(always)]
    pub(crate) fn new(a: [f32; 4]) -> Self {
        Self(a)
    }

    /// `[p[0], p[1], p[2], 0]`.
    #[inline(always)]
    pub(crate) fn from_xyz(p: &[f32; 3]) -> Self {
        Self([p[0], p[1], p[2], 0.0])
    }

    /// `x` in every lane.
    #[inline(always)]
    pub(crate) fn splat(x: f32) -> Self {
        Self([x; 4])
    }

    /// The lanes as an array.
    #[inline(always)]
    pub(crate) fn to_array(self) -> [f32; 4] {
        self.0
    }

    /// `[self[I & 3], self[I >> 2 & 3], other[I >> 4 & 3], other[I >> 6 & 3]]`.
    #[inline(always)]
    pub(crate) fn shuffle<const I: i32>(self, other: Self) -> Self {
        let (a, b) = (self.0, other.0);
        Self([
            a[(I & 3) as usize],
            a[(I >> 2 & 3) as usize],
            b[(I >> 4 & 3) as usize],
            b[(I >> 6 & 3) as usize],
        ])
    }

    /// `[self[0], other[0], self[1], other[1]]`.
    #[inline(always)]
    pub(crate) fn interleave_lo(self, other: Self) -> Self {
        let (a, b) = (self.0, other.0);
        Self([a[0], b[0], a[1], b[1]])
    }

    /// `[self[2], other[2], self[3], other[3]]`.
    #[inline(always)]
    pub(crate) fn interleave_hi(self, other: Self) -> Self {
        let (a, b) = (self.0, other.0);
        Self([a[2], b[2], a[3], b[3]])
    }

    /// Each lane clamped into `[0, 1]` as `f32::clamp(0.0, 1.0)` does.
    #[inline(always)]
    pub(crate) fn clamp01(self) -> Self {
        Self(self.0.map(|x| x.clamp(0.0, 1.0)))
    }

    /// `[self[1], self[2], self[0], self[3]]`.
    #[inline(always)]
    pub(crate) fn rotate3(self) -> Self {
        let a = self.0;
        Self([a[1], a[2], a[0], a[3]])
    }

    /// Bit `i` set where lane `i` is below 0 (`x < 0.0`: not for −0 or NaN).
    #[inline(always)]
    pub(crate) fn sign_mask(self) -> u32 {
        self.lt_mask(Self::splat(0.0))
    }

    /// Bit `i` set where `self[i] < other[i]` (false where either is NaN).
    #[inline(always)]
    pub(crate) fn lt_mask(self, other: Self) -> u32 {
        (0..4).fold(0, |m, i| m | u32::from(self.0[i] < other.0[i]) << i)
    }

    /// The square root of each lane.
    #[inline(always)]
    pub(crate) fn sqrt(self) -> Self {
        Self(self.0.map(f32::sqrt))
    }

    /// Lane `i` kept where bit `i` of `bits` is set, `+0.0` elsewhere.
    #[inline(always)]
    pub(crate) fn keep(self, bits: usize) -> Self {
        let a = self.0;
        Self(std::array::from_fn(|i| {
            if bits >> i & 1 == 1 { a[i] } else { 0.0 }
        }))
    }

    /// Whether lanes 0..3 all equal 0 (either sign).
    #[inline(always)]
    pub(crate) fn xyz_zero(self) -> bool {
        self.0[..3] == [0.0; 3]
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Add for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Self([a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]])
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Sub for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Self([a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]])
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Mul for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Self([a[0] * b[0], a[1] * b[1], a[2] * b[2], a[3] * b[3]])
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Div for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Self([a[0] / b[0], a[1] / b[1], a[2] / b[2], a[3] / b[3]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane operations match the scalar ones bit for bit, the shuffles pick the lanes
    /// they document, and the clamp is `f32::clamp`, on awkward values.
    #[test]
    fn lanes_match_scalar() {
        let xs = [0.1f32, -0.0, 1.5, -3.25, 1e-30, f32::NAN, 0.999_999_9, 7.0];
        for w in xs.windows(4) {
            let a = [w[0], w[1], w[2], w[3]];
            let b = [w[3], w[0], w[2], w[1]];
            let (va, vb) = (F32x4::new(a), F32x4::new(b));
            let bits = |v: [f32; 4]| v.map(f32::to_bits);
            for (k, (&x, &y)) in a.iter().zip(&b).enumerate() {
                assert_eq!((va + vb).to_array()[k].to_bits(), (x + y).to_bits());
                assert_eq!((va - vb).to_array()[k].to_bits(), (x - y).to_bits());
                assert_eq!((va * vb).to_array()[k].to_bits(), (x * y).to_bits());
                assert_eq!((va / vb).to_array()[k].to_bits(), (x / y).to_bits());
                assert_eq!(va.sqrt().to_array()[k].to_bits(), x.sqrt().to_bits());
                assert_eq!(
                    va.clamp01().to_array()[k].to_bits(),
                    x.clamp(0.0, 1.0).to_bits()
                );
            }
            assert_eq!(
                bits(va.shuffle::<0b01_10_11_00>(vb).to_array()),
                bits([a[0], a[3], b[2], b[1]])
            );
            assert_eq!(
                bits(va.interleave_lo(vb).to_array()),
                bits([a[0], b[0], a[1], b[1]])
            );
            assert_eq!(
                bits(va.interleave_hi(vb).to_array()),
                bits([a[2], b[2], a[3], b[3]])
            );
            assert_eq!(bits(F32x4::splat(w[1]).to_array()), bits([w[1]; 4]));
            assert_eq!(
                bits(F32x4::from_xyz(&[a[0], a[1], a[2]]).to_array()),
                bits([a[0], a[1], a[2], 0.0])
            );
            assert_eq!(
                bits(va.rotate3().to_array()),
                bits([a[1], a[2], a[0], a[3]])
            );
            assert_eq!(va.xyz_zero(), a[..3] == [0.0; 3]);
            let below = (0..4).fold(0, |m, i| m | u32::from(a[i] < 0.0) << i);
            assert_eq!(va.sign_mask(), below);
            let lt = (0..4).fold(0, |m, i| m | u32::from(a[i] < b[i]) << i);
            assert_eq!(va.lt_mask(vb), lt);
            for keep in 0..16usize {
                let want: [f32; 4] =
                    std::array::from_fn(|i| if keep >> i & 1 == 1 { a[i] } else { 0.0 });
                assert_eq!(bits(va.keep(keep).to_array()), bits(want));
            }
        }
        for z in [
            [0.0f32, -0.0, 0.0, 5.0],
            [0.0, 0.0, 1e-45, 0.0],
            [f32::NAN, 0.0, 0.0, 0.0],
        ] {
            assert_eq!(F32x4::new(z).xyz_zero(), z[..3] == [0.0; 3]);
        }
    }
}
