//! The kinds of sound and their recipe parameters (issue 9, "Sound").

use crate::error::SoundError;

/// Lowest sample rate [`synthesize`](crate::synthesize) and the mixer accept, Hz.
pub const MIN_SAMPLE_RATE_HZ: u32 = 8_000;
/// Highest sample rate [`synthesize`](crate::synthesize) and the mixer accept, Hz.
pub const MAX_SAMPLE_RATE_HZ: u32 = 384_000;

/// Thud fundamental of a one-tonne piece, Hz; heavier pieces go down with the cube root of
/// their mass.
pub const THUD_REF_HZ: f32 = 110.0;
/// Lowest thud fundamental, Hz (pieces above about 21 t).
pub const THUD_MIN_HZ: f32 = 40.0;
/// Highest thud fundamental, Hz (pieces below about 485 kg).
pub const THUD_MAX_HZ: f32 = 140.0;

/// A sound to synthesize. Each kind's recipe is documented on its variant; the numbers come
/// from issue 9 and are named in standard DSP terms (white noise, 2-pole state-variable
/// filters, exponential decay).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SoundKind {
    /// A piece landing: 2×2-pole low-passed noise (cutoff 3 × f₀) under a sine tone that
    /// starts at f₀ = [`thud_fundamental_hz`]`(mass_kg)` and falls one octave over 0.3 s,
    /// then holds. 0.6 s, decay time constant 0.13 s (tone) and 0.08 s (noise).
    Thud {
        /// Mass of the landing piece, kg (finite, ≥ 0).
        mass_kg: f32,
    },
    /// A block breaking: noise high-passed at 1.8 kHz (4 poles, with a 2-pole low-pass at
    /// 9 kHz to soften the hiss) plus half as much noise band-passed around 600 Hz
    /// (Q 1.5). 0.25 s, time constant 0.04 s (high band) and 0.06 s (middle).
    Crack,
    /// A short band-passed noise burst (two 2-pole band-passes in series), 80 ms, time
    /// constant 16 ms: centred on 550 Hz (Q 2.5) when placing a block, 1.6 kHz (Q 4) and
    /// 13 ms for the chisel.
    Knock {
        /// `true` for the chisel, `false` for placing a block.
        chisel: bool,
    },
    /// Digging terrain: a soil scrape of noise band-passed around
    /// f_c = 1.4 kHz / √(r / 1 m) (clamped to 350 Hz–2.8 kHz, Q 1.2), grains of gravel
    /// (seeded random clicks ringing at 2 f_c, 60 + 40 r per second) and a rumble
    /// low-passed at f_c / 3 that grows with r. Length 0.2 s + 0.1 s per metre of radius
    /// (r clamped to 8 m), peak level 0.35 + 0.55 · r / (r + 1.5 m): bigger brushes are
    /// louder, lower and longer.
    Dig {
        /// Brush radius, m (finite, ≥ 0).
        radius_m: f32,
    },
}

/// Thud fundamental for a piece of `mass_kg` kilograms: 110 Hz / ∛(mass in tonnes),
/// clamped to 40–140 Hz (issue 9). A mass of 0 gives 140 Hz.
///
/// # Errors
/// [`SoundError::Mass`] if `mass_kg` is NaN, infinite or negative.
pub fn thud_fundamental_hz(mass_kg: f32) -> Result<f32, SoundError> {
    if !mass_kg.is_finite() || mass_kg < 0.0 {
        return Err(SoundError::Mass { mass_kg });
    }
    let tonnes_cbrt = libm::cbrtf(mass_kg / 1000.0);
    if tonnes_cbrt <= 0.0 {
        return Ok(THUD_MAX_HZ);
    }
    Ok((THUD_REF_HZ / tonnes_cbrt).clamp(THUD_MIN_HZ, THUD_MAX_HZ))
}

/// Dig radius used by the recipe, m: the input clamped to 0–8 m.
pub(crate) fn dig_radius(radius_m: f32) -> f32 {
    radius_m.clamp(0.0, 8.0)
}

impl SoundKind {
    /// Checks the kind's parameters.
    ///
    /// # Errors
    /// [`SoundError::Mass`] or [`SoundError::Radius`] for a NaN, infinite or negative value.
    pub fn validate(&self) -> Result<(), SoundError> {
        match *self {
            SoundKind::Thud { mass_kg } => thud_fundamental_hz(mass_kg).map(|_| ()),
            SoundKind::Dig { radius_m } if !radius_m.is_finite() || radius_m < 0.0 => {
                Err(SoundError::Radius { radius_m })
            }
            _ => Ok(()),
        }
    }

    /// Length of the synthesized sound, seconds. The number of samples at rate `r` Hz is
    /// `round(duration_s · r)`. Parameters are not validated (a bad one gives NaN or a
    /// clamped value).
    pub fn duration_s(&self) -> f32 {
        match *self {
            SoundKind::Thud { .. } => 0.6,
            SoundKind::Crack => 0.25,
            SoundKind::Knock { .. } => 0.08,
            SoundKind::Dig { radius_m } => 0.2 + 0.1 * dig_radius(radius_m),
        }
    }

    /// Peak level of the synthesized sound, in (0, 1]: every sound is scaled so its largest
    /// sample has this magnitude.
    pub fn peak_level(&self) -> f32 {
        match *self {
            SoundKind::Thud { .. } | SoundKind::Crack => 0.9,
            SoundKind::Knock { chisel: false } => 0.7,
            SoundKind::Knock { chisel: true } => 0.8,
            SoundKind::Dig { radius_m } => {
                let r = dig_radius(radius_m);
                0.35 + 0.55 * r / (r + 1.5)
            }
        }
    }

    /// A number that differs per kind, mixed into the seed so that the same seed gives
    /// unrelated noise for different kinds.
    pub(crate) fn salt(&self) -> u64 {
        match self {
            SoundKind::Thud { .. } => 0x7468_7564,
            SoundKind::Crack => 0x6372_6163,
            SoundKind::Knock { .. } => 0x6b6e_6f63,
            SoundKind::Dig { .. } => 0x6469_6767,
        }
    }
}
