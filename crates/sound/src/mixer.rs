//! An offline timeline: sounds placed at start times, rendered to one stereo buffer.

use crate::error::SoundError;
use crate::kind::SoundKind;
use crate::spatial::Spatial;
use crate::synth::{check_rate, synthesize};

/// Offline mixer: add sounds at start times (seconds on the timeline), then render them
/// summed into stereo frames. Used for `loam render --audio` and for tests; a game plays
/// each sound on its own instead.
///
/// The mixer does not rate-limit: pass starts through a [`RateLimiter`](crate::RateLimiter)
/// first, as a game would.
#[derive(Clone, Debug)]
pub struct Mixer {
    sample_rate_hz: u32,
    voices: Vec<Voice>,
}

#[derive(Clone, Debug)]
struct Voice {
    start_frame: usize,
    mono: Vec<f32>,
    spatial: Spatial,
}

impl Mixer {
    /// An empty timeline at `sample_rate_hz`.
    ///
    /// # Errors
    /// [`SoundError::SampleRate`] outside the accepted range.
    pub fn new(sample_rate_hz: u32) -> Result<Mixer, SoundError> {
        check_rate(sample_rate_hz)?;
        Ok(Mixer {
            sample_rate_hz,
            voices: Vec::new(),
        })
    }

    /// The timeline's sample rate, Hz.
    pub fn sample_rate_hz(&self) -> u32 {
        self.sample_rate_hz
    }

    /// Synthesizes `kind` with `seed` (see [`synthesize`]) and places it at `start_s`
    /// seconds, heard with `spatial`.
    ///
    /// # Errors
    /// [`SoundError::StartTime`] for a NaN, infinite or negative start, or the errors of
    /// [`synthesize`]. The timeline is unchanged on error.
    pub fn add(
        &mut self,
        start_s: f64,
        kind: SoundKind,
        seed: u64,
        spatial: Spatial,
    ) -> Result<(), SoundError> {
        check_start(start_s)?;
        let mono = synthesize(kind, seed, self.sample_rate_hz)?;
        self.push(start_s, mono, spatial);
        Ok(())
    }

    /// Places already synthesized mono samples (at this mixer's rate) at `start_s` seconds.
    ///
    /// # Errors
    /// [`SoundError::StartTime`] for a NaN, infinite or negative start.
    pub fn add_samples(
        &mut self,
        start_s: f64,
        mono: Vec<f32>,
        spatial: Spatial,
    ) -> Result<(), SoundError> {
        check_start(start_s)?;
        self.push(start_s, mono, spatial);
        Ok(())
    }

    fn push(&mut self, start_s: f64, mono: Vec<f32>, spatial: Spatial) {
        let start_frame = (start_s * self.sample_rate_hz as f64).round() as usize;
        self.voices.push(Voice {
            start_frame,
            mono,
            spatial,
        });
    }

    /// Number of sounds on the timeline.
    pub fn len(&self) -> usize {
        self.voices.len()
    }

    /// Whether the timeline holds no sound.
    pub fn is_empty(&self) -> bool {
        self.voices.is_empty()
    }

    /// The frame at which the last sound ends (0 when empty): render this many frames to
    /// hear everything.
    pub fn end_frame(&self) -> usize {
        self.voices
            .iter()
            .map(|v| v.start_frame + v.mono.len())
            .max()
            .unwrap_or(0)
    }

    /// Mixes the timeline into `frames` stereo frames (`[left, right]`, frame `i` is at
    /// `i / rate` seconds), panning each sound with
    /// [`Spatial::channel_gains`](crate::Spatial::channel_gains). Sounds are summed in the
    /// order they were added, without clipping: overlapping loud sounds can exceed ±1
    /// ([`write_wav`](crate::write_wav) clamps). Parts past `frames` are cut off.
    /// Cost: O(frames + total samples).
    pub fn render(&self, frames: usize) -> Vec<[f32; 2]> {
        let mut out = vec![[0.0f32; 2]; frames];
        for v in &self.voices {
            let [l, r] = v.spatial.channel_gains();
            let dst = out.iter_mut().skip(v.start_frame);
            for (frame, &s) in dst.zip(&v.mono) {
                frame[0] += s * l;
                frame[1] += s * r;
            }
        }
        out
    }
}

fn check_start(start_s: f64) -> Result<(), SoundError> {
    if start_s.is_finite() && start_s >= 0.0 {
        Ok(())
    } else {
        Err(SoundError::StartTime { start_s })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sounds_land_at_their_start_frame() {
        let mut m = Mixer::new(10_000).unwrap();
        m.add_samples(
            0.01,
            vec![1.0, 0.5],
            Spatial {
                gain: 1.0,
                pan: 1.0,
            },
        )
        .unwrap();
        let out = m.render(104);
        assert_eq!(m.end_frame(), 102);
        assert!(out[..100].iter().all(|f| *f == [0.0, 0.0]));
        assert!((out[100][1] - 1.0).abs() < 1e-6 && out[100][0].abs() < 1e-6);
        assert!((out[101][1] - 0.5).abs() < 1e-6);
        assert_eq!(out[102], [0.0, 0.0]);
    }

    #[test]
    fn overlapping_sounds_add() {
        let mut m = Mixer::new(8_000).unwrap();
        let c = Spatial::centered(1.0);
        m.add_samples(0.0, vec![0.5; 4], c).unwrap();
        m.add_samples(0.0, vec![0.25; 2], c).unwrap();
        let out = m.render(3);
        let k = core::f32::consts::FRAC_1_SQRT_2;
        assert!((out[0][0] - 0.75 * k).abs() < 1e-6);
        assert!((out[2][0] - 0.5 * k).abs() < 1e-6);
    }

    #[test]
    fn bad_start_changes_nothing() {
        let mut m = Mixer::new(8_000).unwrap();
        let err = m
            .add(-1.0, SoundKind::Crack, 0, Spatial::centered(1.0))
            .unwrap_err();
        assert_eq!(err, SoundError::StartTime { start_s: -1.0 });
        assert!(m.is_empty());
    }
}
