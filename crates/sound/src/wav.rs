//! 16-bit PCM WAV output through hound.

use std::io::{Cursor, Seek, Write};
use std::path::Path;

use crate::error::WavError;
use crate::kind::{MAX_SAMPLE_RATE_HZ, MIN_SAMPLE_RATE_HZ};

/// Writes stereo frames as a 16-bit PCM WAV (2 channels, `sample_rate_hz`) to `writer`.
/// Samples are clamped to [-1, 1] and scaled by 32 767, rounding to nearest.
///
/// # Errors
/// [`WavError::SampleRate`] outside the accepted range (nothing is written);
/// [`WavError::Hound`] if the writer fails.
pub fn write_wav<W: Write + Seek>(
    writer: W,
    stereo: &[[f32; 2]],
    sample_rate_hz: u32,
) -> Result<(), WavError> {
    if !(MIN_SAMPLE_RATE_HZ..=MAX_SAMPLE_RATE_HZ).contains(&sample_rate_hz) {
        return Err(WavError::SampleRate {
            hz: sample_rate_hz,
            min: MIN_SAMPLE_RATE_HZ,
            max: MAX_SAMPLE_RATE_HZ,
        });
    }
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: sample_rate_hz,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::new(writer, spec)?;
    for s in stereo.iter().flatten() {
        w.write_sample(to_i16(*s))?;
    }
    w.finalize()?;
    Ok(())
}

/// [`write_wav`] into a file at `path` (created or truncated, written through a buffer).
///
/// # Errors
/// As [`write_wav`]; a file that cannot be created is a [`WavError::Hound`] I/O error.
pub fn write_wav_file(
    path: impl AsRef<Path>,
    stereo: &[[f32; 2]],
    sample_rate_hz: u32,
) -> Result<(), WavError> {
    let mut bytes = Cursor::new(Vec::new());
    write_wav(&mut bytes, stereo, sample_rate_hz)?;
    std::fs::write(path, bytes.into_inner()).map_err(hound::Error::IoError)?;
    Ok(())
}

/// The bytes of the WAV [`write_wav`] writes, for playing from memory (e.g. a game engine's
/// audio source). 44 bytes of header plus 4 bytes per frame.
///
/// # Errors
/// [`WavError::SampleRate`] outside the accepted range.
pub fn wav_bytes(stereo: &[[f32; 2]], sample_rate_hz: u32) -> Result<Vec<u8>, WavError> {
    let mut bytes = Cursor::new(Vec::new());
    write_wav(&mut bytes, stereo, sample_rate_hz)?;
    Ok(bytes.into_inner())
}

fn to_i16(s: f32) -> i16 {
    // NaN clamps to NaN; `as` turns it into 0.
    (s.clamp(-1.0, 1.0) * 32_767.0).round() as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_clamps_and_rounds() {
        assert_eq!(to_i16(2.0), 32_767);
        assert_eq!(to_i16(-2.0), -32_767);
        assert_eq!(to_i16(f32::NAN), 0);
        assert_eq!(to_i16(0.5), 16_384);
    }

    #[test]
    fn header_size() {
        let b = wav_bytes(&[[0.0, 0.0]; 10], 48_000).unwrap();
        assert_eq!(b.len(), 44 + 40);
        assert_eq!(&b[..4], b"RIFF");
    }
}
