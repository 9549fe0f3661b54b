//! Sound: every [`Effect`] becomes a synthesized sound ([`loam_sound`]: thud, crack, knock,
//! dig; no sound files), heard from the camera: `strength / (1 + distance / 8 m)` and panned
//! by where it lies relative to the camera's right; at most 6 start in any 0.1 s.
//!
//! Playback goes through rodio (Bevy's own audio backend). The device is opened on the first
//! sound, not at start-up; with no sound card (as on CI) the app stays silent and logs one
//! line. Headless renders record instead ([`SoundRecording`]) and write a WAV.

use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, block_on, poll_once};
use loam_sound::{Mixer, RateLimiter, SoundError, SoundKind, Spatial, synthesize, to_stereo};

use crate::effects::{Effect, dig_strength, land_strength};

/// Sample rate of played and recorded sound, Hz.
pub const SAMPLE_RATE_HZ: u32 = 48_000;

/// The kind of sound an effect makes and its strength in `[0, 1]`.
pub fn sound_of(effect: &Effect) -> (SoundKind, f32) {
    match *effect {
        Effect::Land { speed, mass_kg, .. } => (
            SoundKind::Thud {
                mass_kg: if mass_kg.is_finite() {
                    mass_kg.max(0.0)
                } else {
                    0.0
                },
            },
            land_strength(speed, mass_kg).max(0.15),
        ),
        Effect::Break { .. } => (SoundKind::Crack, 0.8),
        Effect::Place { .. } => (SoundKind::Knock { chisel: false }, 0.6),
        Effect::Chisel { .. } => (SoundKind::Knock { chisel: true }, 0.5),
        Effect::Dig { radius, .. } => (
            SoundKind::Dig {
                radius_m: if radius.is_finite() {
                    radius.max(0.0)
                } else {
                    0.0
                },
            },
            0.3 + 0.7 * dig_strength(radius),
        ),
    }
}

/// Where an effect happened.
fn position(effect: &Effect) -> Vec3 {
    match *effect {
        Effect::Land { at, .. }
        | Effect::Break { at, .. }
        | Effect::Place { at }
        | Effect::Chisel { at }
        | Effect::Dig { at, .. } => at,
    }
}

/// The sound state: the start cap and the seed of the next sound.
#[derive(Resource, Debug)]
pub struct Sounds {
    limiter: RateLimiter,
    next_seed: u64,
    /// Sounds started.
    pub started: u64,
    /// Sounds dropped by the start cap.
    pub capped: u64,
}

impl Default for Sounds {
    fn default() -> Self {
        Self {
            limiter: RateLimiter::new(loam_sound::MAX_STARTS, loam_sound::WINDOW_S),
            next_seed: 1,
            started: 0,
            capped: 0,
        }
    }
}

/// Sounds recorded on a timeline (seconds of the app's clock) instead of played: headless
/// renders write it as a WAV ([`SoundRecording::to_wav`]).
#[derive(Resource)]
pub struct SoundRecording {
    /// The timeline.
    pub mixer: Mixer,
    /// Seconds of the app's clock left out of the timeline before now ([`Self::skip`]):
    /// a sound at clock time `t` is placed at `t − skipped_s`.
    pub skipped_s: f64,
}

impl SoundRecording {
    /// An empty timeline at 48 kHz (`audio::SAMPLE_RATE_HZ`).
    ///
    /// # Panics
    /// Never: the rate is valid.
    pub fn new() -> Self {
        Self {
            mixer: Mixer::new(SAMPLE_RATE_HZ).expect("a valid sample rate"),
            skipped_s: 0.0,
        }
    }

    /// Leaves `seconds` more of the app's clock out of the timeline (e.g. frames spent
    /// waiting for meshes, in which nothing could be heard).
    pub fn skip(&mut self, seconds: f64) {
        if seconds.is_finite() && seconds > 0.0 {
            self.skipped_s += seconds;
        }
    }

    /// Writes `seconds` of the timeline (at least to its last sound's end) as a 16-bit
    /// stereo WAV.
    ///
    /// # Errors
    /// The WAV writer's (an unwritable path).
    pub fn to_wav(&self, path: &std::path::Path, seconds: f64) -> Result<(), loam_sound::WavError> {
        let frames = ((seconds * f64::from(SAMPLE_RATE_HZ)) as usize).max(self.mixer.end_frame());
        loam_sound::write_wav_file(path, &self.mixer.render(frames), SAMPLE_RATE_HZ)
    }
}

impl Default for SoundRecording {
    fn default() -> Self {
        Self::new()
    }
}

/// The output device, opened on the first sound.
#[derive(Default)]
pub enum AudioOut {
    /// Not tried yet.
    #[default]
    Unopened,
    /// Playing.
    Open(rodio::MixerDeviceSink),
    /// No device: silent (logged once).
    Failed,
}

impl AudioOut {
    /// Plays stereo frames, opening the device first if needed.
    pub fn play(&mut self, frames: &[[f32; 2]]) {
        if let AudioOut::Unopened = self {
            *self = match rodio::DeviceSinkBuilder::open_default_sink() {
                Ok(mut sink) => {
                    sink.log_on_drop(false);
                    AudioOut::Open(sink)
                }
                Err(e) => {
                    warn!("no audio device ({e}); sounds are off");
                    AudioOut::Failed
                }
            };
        }
        if let AudioOut::Open(sink) = self {
            let data: Vec<f32> = frames.iter().flatten().copied().collect();
            let (Some(ch), Some(rate)) = (
                std::num::NonZero::new(2u16),
                std::num::NonZero::new(SAMPLE_RATE_HZ),
            ) else {
                return;
            };
            sink.mixer()
                .add(rodio::buffer::SamplesBuffer::new(ch, rate, data));
        }
    }
}

/// Sound from [`Effect`]s: played live, or recorded when a [`SoundRecording`] exists.
#[derive(Debug, Clone, Default)]
pub struct SoundPlugin;

impl Plugin for SoundPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<Effect>()
            .init_resource::<Sounds>()
            .init_resource::<Synthesizing>()
            .insert_non_send(AudioOut::default())
            .add_systems(PostUpdate, play);
    }
}

/// Live sounds being synthesized on the async compute pool (a dig's sound took a few
/// milliseconds of the main thread in the frame after the dig); each is played by [`play`] in
/// the first frame after it is ready.
#[derive(Resource, Default)]
pub(crate) struct Synthesizing(Vec<Task<Result<Vec<[f32; 2]>, SoundError>>>);

/// Starts the sounds of this frame's effects (synthesized off the main thread, or recorded
/// on the [`SoundRecording`]'s timeline), and plays those whose synthesis has finished.
#[allow(clippy::too_many_arguments)]
pub fn play(
    time: Res<Time>,
    mut effects: MessageReader<Effect>,
    mut sounds: ResMut<Sounds>,
    recording: Option<ResMut<SoundRecording>>,
    mut out: NonSendMut<AudioOut>,
    mut synthesizing: ResMut<Synthesizing>,
    camera: Query<&GlobalTransform, With<Camera3d>>,
) {
    synthesizing.0.retain_mut(|task| {
        if !task.is_finished() {
            return true;
        }
        match block_on(poll_once(task)) {
            Some(Ok(frames)) => out.play(&frames),
            Some(Err(e)) => warn!("sound not synthesized: {e}"),
            None => return true,
        }
        false
    });
    let now = time.elapsed_secs_f64();
    let (ear, right) = camera.iter().next().map_or((Vec3::ZERO, Vec3::X), |t| {
        (t.translation(), Vec3::from(t.right()))
    });
    let mut recording = recording;
    for effect in effects.read() {
        if !sounds.limiter.try_start(now) {
            sounds.capped += 1;
            continue;
        }
        let (kind, strength) = sound_of(effect);
        let spatial = Spatial::new(
            ear.to_array(),
            right.to_array(),
            position(effect).to_array(),
            strength,
        );
        let seed = sounds.next_seed;
        sounds.next_seed += 1;
        sounds.started += 1;
        if let Some(rec) = recording.as_mut() {
            let at = (now - rec.skipped_s).max(0.0);
            if let Err(e) = rec.mixer.add(at, kind, seed, spatial) {
                warn!("sound not recorded: {e}");
            }
            continue;
        }
        let make = move || synthesize(kind, seed, SAMPLE_RATE_HZ).map(|m| to_stereo(&m, spatial));
        match AsyncComputeTaskPool::try_get() {
            Some(pool) => synthesizing.0.push(pool.spawn(async move { make() })),
            // An app without Bevy's task pools: synthesized here.
            None => match make() {
                Ok(frames) => out.play(&frames),
                Err(e) => warn!("sound not synthesized: {e}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_map_to_their_sounds() {
        let land = Effect::Land {
            at: Vec3::ZERO,
            speed: 10.0,
            mass_kg: 1000.0,
            colour: [0.5; 3],
        };
        assert_eq!(sound_of(&land), (SoundKind::Thud { mass_kg: 1000.0 }, 1.0));
        assert_eq!(
            sound_of(&Effect::Chisel { at: Vec3::ZERO }).0,
            SoundKind::Knock { chisel: true }
        );
        let dig = Effect::Dig {
            at: Vec3::ZERO,
            radius: 3.0,
            colour: [0.5; 3],
        };
        assert_eq!(sound_of(&dig), (SoundKind::Dig { radius_m: 3.0 }, 0.65));
        // A NaN mass never reaches the synthesizer.
        let bad = Effect::Land {
            at: Vec3::ZERO,
            speed: 3.0,
            mass_kg: f32::NAN,
            colour: [0.5; 3],
        };
        assert_eq!(sound_of(&bad).0, SoundKind::Thud { mass_kg: 0.0 });
    }
}
