//! Measurements shared by the tests: RMS, spectral centroid, spectral peak.

use loam_sound::{SoundKind, synthesize};
use rustfft::{FftPlanner, num_complex::Complex};

/// Sample rate used by the tests, Hz.
pub const RATE: u32 = 48_000;

/// `synthesize(kind, seed, RATE)`, unwrapped.
pub fn render(kind: SoundKind, seed: u64) -> Vec<f32> {
    synthesize(kind, seed, RATE).unwrap()
}

/// Root mean square.
pub fn rms(x: &[f32]) -> f64 {
    (x.iter().map(|&v| v as f64 * v as f64).sum::<f64>() / x.len() as f64).sqrt()
}

/// RMS of the first and of the last 10% of `x`.
pub fn head_tail_rms(x: &[f32]) -> (f64, f64) {
    let k = x.len() / 10;
    (rms(&x[..k]), rms(&x[x.len() - k..]))
}

/// Magnitude spectrum of `x` zero-padded to `n` (a power of two ≥ len), bins 0..=n/2, with
/// the bin spacing in Hz. `hann` applies a Hann window first.
pub fn spectrum(x: &[f32], n: usize, hann: bool) -> (Vec<f64>, f64) {
    assert!(n >= x.len());
    let len = x.len() as f64;
    let mut buf: Vec<Complex<f64>> = (0..n)
        .map(|i| {
            let v = x.get(i).copied().unwrap_or(0.0) as f64;
            let w = if hann && i < x.len() {
                0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / len).cos()
            } else {
                1.0
            };
            Complex::new(v * w, 0.0)
        })
        .collect();
    FftPlanner::new().plan_fft_forward(n).process(&mut buf);
    (
        buf[..=n / 2].iter().map(|c| c.norm()).collect(),
        RATE as f64 / n as f64,
    )
}

/// Spectral centroid, Hz: magnitude-weighted mean frequency over the whole sound (DC bin
/// excluded).
pub fn centroid_hz(x: &[f32]) -> f64 {
    let (mag, df) = spectrum(x, x.len().next_power_of_two(), false);
    let (num, den) = mag
        .iter()
        .enumerate()
        .skip(1)
        .fold((0.0, 0.0), |(n, d), (i, m)| (n + i as f64 * df * m, d + m));
    num / den
}

/// Frequency of the largest spectral peak of the first `window_s` seconds, Hz, with a Hann
/// window and zero padding to 2¹⁶ points (0.73 Hz bins at 48 kHz).
pub fn peak_hz(x: &[f32], window_s: f64) -> f64 {
    let k = (window_s * RATE as f64) as usize;
    let (mag, df) = spectrum(&x[..k.min(x.len())], 1 << 16, true);
    let (i, _) =
        mag.iter().enumerate().skip(1).fold(
            (0, 0.0),
            |best, (i, &m)| if m > best.1 { (i, m) } else { best },
        );
    i as f64 * df
}

/// Every kind, with representative parameters.
pub fn all_kinds() -> Vec<SoundKind> {
    vec![
        SoundKind::Thud { mass_kg: 40.0 },
        SoundKind::Thud { mass_kg: 2000.0 },
        SoundKind::Thud { mass_kg: 100_000.0 },
        SoundKind::Crack,
        SoundKind::Knock { chisel: false },
        SoundKind::Knock { chisel: true },
        SoundKind::Dig { radius_m: 0.0 },
        SoundKind::Dig { radius_m: 0.5 },
        SoundKind::Dig { radius_m: 3.0 },
        SoundKind::Dig { radius_m: 20.0 },
    ]
}
