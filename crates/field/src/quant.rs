//! The field's quantisation grid: SDF values as 16-bit fixed point over the narrow band
//! (docs/architecture.md, "Narrow band").
//!
//! ```text
//! step   = band / 32767                        (f64)
//! q      = clamp(round(v / step), −32767, 32767), and −1 where v < 0 but q = 0
//! value  = q as f32 × step32                   step32: the largest f32 ≤ step
//! ```
//!
//! Every value that enters the field goes through [`Quant::quantize`], which also clamps to
//! the band (every generator value, every value an op plans; a brick's writes take the index
//! of an on-grid value), so every stored and generated sample is on the grid
//! and a brick can hold it as an `i16` with an exact round trip. The sign is kept: a
//! negative value never becomes 0 (0 is air), a non-negative one never becomes negative.
//! Rounding `step32` down keeps `|value| ≤ band` (as f32) for every `q`.
//!
//! With the default band of 2 voxels the step is 2/32767 ≈ 6.1·10⁻⁵ voxel.

/// The largest quantised magnitude: `±QMAX` is `±band`.
pub const QMAX: i16 = 32767;

/// The quantisation grid of a field whose band is `band` metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quant {
    step: f64,
    inv_step: f64,
    step32: f32,
}

impl Quant {
    /// The grid for a band of `band` metres (finite and positive, as [`crate::FieldSettings`]
    /// validates).
    pub fn new(band: f64) -> Self {
        let step = band / f64::from(QMAX);
        let mut step32 = step as f32;
        if f64::from(step32) > step {
            step32 = step32.next_down();
        }
        Self {
            step,
            inv_step: f64::from(QMAX) / band,
            step32,
        }
    }

    /// The step in metres (the f32 that [`Quant::value`] multiplies by).
    pub fn step(&self) -> f32 {
        self.step32
    }

    /// The grid index of `v` (metres): `round(v / step)` clamped to `±32767`, and `−1` for a
    /// negative `v` that would round to 0. NaN gives 0.
    #[inline]
    pub fn index(&self, v: f64) -> i16 {
        let q = round_half_away(v / self.step).clamp(-i32::from(QMAX), i32::from(QMAX)) as i16;
        if q == 0 && v < 0.0 { -1 } else { q }
    }

    /// The value (metres) of grid index `q`: `q as f32 × step32`. Never −0.
    #[inline]
    pub fn value(&self, q: i16) -> f32 {
        f32::from(q) * self.step32
    }

    /// `v` rounded onto the grid: `value(index(v))`.
    #[inline]
    pub fn quantize(&self, v: f64) -> f32 {
        self.value(self.index(v))
    }

    /// The grid index of a value that is on the grid, or `None` if `v` is not
    /// (`value(index(v)) != v`, compared by bits).
    #[inline]
    pub fn exact_index(&self, v: f32) -> Option<i16> {
        // A value on the grid is within 0.005 of its index times the step (|q| ≤ 32767, f32
        // rounding), so multiplying by the inverse finds the index; the check refuses the rest.
        let q = round_half_away(f64::from(v) * self.inv_step)
            .clamp(-i32::from(QMAX), i32::from(QMAX)) as i16;
        (self.value(q).to_bits() == v.to_bits()).then_some(q)
    }
}

impl Quant {
    /// The grid indices of `values` into `out` (same length), each exact
    /// ([`Quant::exact_index`]); `false` if a value is not on the grid (its index in `out` is
    /// then meaningless). In f32 so that it vectorises: a brick made from cached generator
    /// values converts 32³ of them per brick.
    pub(crate) fn exact_indices(&self, values: &[f32], out: &mut [i16]) -> bool {
        assert_eq!(values.len(), out.len());
        // On the grid, |v · inv − q| ≤ 32767 · 3 · 2⁻²⁴ < 0.01, so adding ±0.5 and truncating
        // finds q; the comparison with q's value refuses everything else.
        let (inv, s) = (self.inv_step as f32, self.step32);
        let mut ok = true;
        for (o, &v) in out.iter_mut().zip(values) {
            let x = v * inv;
            let q = ((x + 0.5f32.copysign(x)) as i32).clamp(-i32::from(QMAX), i32::from(QMAX));
            let q = q as i16;
            ok &= (f32::from(q) * s).to_bits() == v.to_bits();
            *o = q;
        }
        ok
    }
}

/// `x.round()` (halves away from zero) as an integer, for `|x| ≤ 40 000` (beyond, the result is
/// clamped there); NaN gives 0. Exact: `x − trunc(x)` has no rounding error. Written out
/// because `f64::round` is a library call on baseline x86-64 and this runs per sample.
#[inline]
fn round_half_away(x: f64) -> i32 {
    let x = x.clamp(-40_000.0, 40_000.0);
    let i = x as i32;
    let f = x - f64::from(i);
    i + i32::from(f >= 0.5) - i32::from(f <= -0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_round_trips_and_stays_in_the_band() {
        for band in [2.0, 1.0, 0.06, 32.0, 16000.0, 0.001] {
            let g = Quant::new(band);
            let b = band as f32;
            for q in -QMAX..=QMAX {
                let v = g.value(q);
                assert_eq!(g.index(f64::from(v)), q, "band {band} q {q}");
                assert_eq!(g.exact_index(v), Some(q));
                assert!(v.abs() <= b, "band {band} q {q}: {v} beyond the band");
                assert_eq!(v < 0.0, q < 0, "sign of q {q}");
                assert_ne!(v.to_bits(), (-0.0f32).to_bits());
            }
        }
    }

    #[test]
    fn signs_are_kept_and_values_clamped() {
        let g = Quant::new(2.0);
        let s = f64::from(g.step());
        assert_eq!(g.index(-1e-30), -1, "a tiny negative stays solid");
        assert_eq!(g.index(-0.4 * s), -1);
        assert_eq!(g.index(-0.0), 0, "−0 is air");
        assert_eq!(g.index(0.0), 0);
        assert_eq!(g.index(0.4 * s), 0, "a tiny positive is air at 0");
        assert_eq!(g.index(1e9), QMAX);
        assert_eq!(g.index(-1e9), -QMAX);
        assert_eq!(g.index(f64::NAN), 0);
        assert_eq!(g.quantize(-0.0).to_bits(), 0);
        assert_eq!(g.quantize(3.0), g.value(QMAX));
        // Monotone: a larger value never gets a smaller index.
        let mut last = i16::MIN;
        for i in -70_000..70_000 {
            let q = g.index(f64::from(i) * 0.37 * s);
            assert!(q >= last);
            last = q;
        }
        // Within half a step inside the band.
        for v in [0.123456, -1.999, 1.0, -0.5e-3] {
            assert!((f64::from(g.quantize(v)) - v).abs() <= 0.5 * s + 1e-9);
        }
    }

    #[test]
    fn rounding_matches_f64_round() {
        let mut x = 0.123_456_7f64;
        for v in [
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.499_999_999_999_999_9,
            -0.0,
            0.0,
            32767.5,
            -32767.5,
        ] {
            assert_eq!(round_half_away(v), v.round() as i32, "{v}");
        }
        for _ in 0..100_000 {
            x = (x * 7919.0 + 0.313) % 1.0;
            let v = (x - 0.5) * 80_000.0;
            assert_eq!(round_half_away(v), v.round() as i32, "{v}");
            let h = (v * 2.0).round() / 2.0; // a tie
            assert_eq!(round_half_away(h), h.round() as i32, "{h}");
        }
        assert_eq!(round_half_away(f64::NAN), 0);
        assert_eq!(round_half_away(1e300), 40_000);
    }

    #[test]
    fn exact_indices_match_exact_index() {
        for band in [2.0, 0.06, 16000.0] {
            let g = Quant::new(band);
            let values: Vec<f32> = (-QMAX..=QMAX).map(|q| g.value(q)).collect();
            let mut out = vec![0i16; values.len()];
            assert!(g.exact_indices(&values, &mut out));
            assert!(out.iter().zip(-QMAX..=QMAX).all(|(a, b)| *a == b));
            for bad in [f32::NAN, 0.1, -0.0, f32::INFINITY, band as f32 * 2.0] {
                let mut v = values.clone();
                v[1000] = bad;
                let ok = g.exact_indices(&v, &mut out);
                assert_eq!(ok, g.exact_index(bad).is_some(), "band {band}: {bad}");
            }
        }
    }

    #[test]
    fn off_grid_values_have_no_exact_index() {
        let g = Quant::new(2.0);
        assert_eq!(g.exact_index(0.1), None);
        assert_eq!(g.exact_index(f32::NAN), None);
        assert_eq!(g.exact_index(0.0), Some(0));
        assert_eq!(g.exact_index(-0.0), None, "−0 is never stored");
    }
}
