//! Typed errors: one enum for synthesis and mixing, one for WAV output.

/// Why a sound could not be synthesized or added to a [`Mixer`](crate::Mixer).
///
/// Every variant carries the rejected value; nothing is changed when one is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SoundError {
    /// The sample rate is outside [`MIN_SAMPLE_RATE_HZ`](crate::MIN_SAMPLE_RATE_HZ)
    /// ..= [`MAX_SAMPLE_RATE_HZ`](crate::MAX_SAMPLE_RATE_HZ). Use 44 100 or 48 000 Hz.
    #[error("sample rate {hz} Hz is outside {min}..={max} Hz")]
    SampleRate {
        /// The rejected rate, Hz.
        hz: u32,
        /// Lowest accepted rate, Hz.
        min: u32,
        /// Highest accepted rate, Hz.
        max: u32,
    },
    /// A thud's mass is NaN, infinite or negative. Pass the piece's mass in kilograms (0 is
    /// allowed and gives the highest thud).
    #[error("thud mass {mass_kg} kg must be finite and >= 0")]
    Mass {
        /// The rejected mass, kg.
        mass_kg: f32,
    },
    /// A dig's brush radius is NaN, infinite or negative. Pass the brush radius in metres.
    #[error("dig radius {radius_m} m must be finite and >= 0")]
    Radius {
        /// The rejected radius, m.
        radius_m: f32,
    },
    /// A start time on the mixer's timeline is NaN, infinite or negative.
    #[error("start time {start_s} s must be finite and >= 0")]
    StartTime {
        /// The rejected time, s.
        start_s: f64,
    },
}

/// Why a WAV file or buffer could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WavError {
    /// The sample rate is outside the accepted range (see [`SoundError::SampleRate`]).
    #[error("sample rate {hz} Hz is outside {min}..={max} Hz")]
    SampleRate {
        /// The rejected rate, Hz.
        hz: u32,
        /// Lowest accepted rate, Hz.
        min: u32,
        /// Highest accepted rate, Hz.
        max: u32,
    },
    /// The WAV encoder or the underlying writer failed (an I/O error, usually).
    #[error("writing WAV failed")]
    Hound(#[from] hound::Error),
}
