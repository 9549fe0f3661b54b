//! Where a sound is heard: distance attenuation and left/right pan (issue 9, "Space").

/// Distance at which a sound is heard at half its strength, m.
pub const HALF_GAIN_DISTANCE_M: f32 = 8.0;

/// Gain and pan of one sound for one listener.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spatial {
    /// Linear amplitude factor, ≥ 0: `strength / (1 + distance / 8 m)`.
    pub gain: f32,
    /// Left/right position in [-1, 1]: -1 full left, 0 centre, +1 full right.
    pub pan: f32,
}

impl Spatial {
    /// Gain and pan of a source at `source_pos` heard by a listener at `listener_pos` whose
    /// right-hand direction is `listener_right` (world metres; `listener_right` need not be
    /// normalized, e.g. the camera's `right()`).
    ///
    /// `gain = strength / (1 + d / 8 m)` with `d` the distance, so the gain halves at 8 m
    /// and is a third at 16 m. `pan` is the cosine between the direction to the source and
    /// `listener_right`: +1 for a source straight to the right, 0 ahead, behind, above or at
    /// the listener, -1 to the left.
    ///
    /// Bad input never panics: a negative strength counts as 0; a NaN or infinite input gives
    /// silence (`gain` 0, `pan` 0); a zero `listener_right` gives `pan` 0.
    pub fn new(
        listener_pos: [f32; 3],
        listener_right: [f32; 3],
        source_pos: [f32; 3],
        strength: f32,
    ) -> Spatial {
        let all = listener_pos
            .iter()
            .chain(&listener_right)
            .chain(&source_pos)
            .chain([&strength]);
        if !all.into_iter().all(|v| v.is_finite()) {
            return Spatial {
                gain: 0.0,
                pan: 0.0,
            };
        }
        let d = sub(source_pos, listener_pos);
        let dist = norm(d);
        let gain = strength.max(0.0) / (1.0 + dist / HALF_GAIN_DISTANCE_M);
        let right = norm(listener_right);
        let pan = if dist > 1e-6 && right > 1e-12 {
            (dot(d, listener_right) / (dist * right)).clamp(-1.0, 1.0)
        } else {
            0.0
        };
        Spatial { gain, pan }
    }

    /// A sound at the listener: `gain` as given (negative or NaN counts as 0), centred.
    pub fn centered(gain: f32) -> Spatial {
        Spatial {
            gain: if gain > 0.0 { gain } else { 0.0 },
            pan: 0.0,
        }
    }

    /// Left and right channel factors, constant power: `L = gain · cos θ`,
    /// `R = gain · sin θ` with `θ = (pan + 1) · π/4`, so `L² + R² = gain²` and a centred
    /// sound is `gain / √2` (−3 dB) in each channel. `pan` is clamped to [-1, 1].
    pub fn channel_gains(&self) -> [f32; 2] {
        let theta = (self.pan.clamp(-1.0, 1.0) + 1.0) * core::f32::consts::FRAC_PI_4;
        [self.gain * libm::cosf(theta), self.gain * libm::sinf(theta)]
    }
}

/// Spreads mono samples over two channels with [`Spatial::channel_gains`]
/// (constant-power pan). Returns `[left, right]` frames, one per input sample.
pub fn to_stereo(mono: &[f32], spatial: Spatial) -> Vec<[f32; 2]> {
    let [l, r] = spatial.channel_gains();
    mono.iter().map(|&s| [s * l, s * r]).collect()
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: [f32; 3]) -> f32 {
    libm::sqrtf(dot(a, a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centred_is_minus_3_db_per_channel() {
        let [l, r] = Spatial::centered(1.0).channel_gains();
        assert!((l - core::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert!((l - r).abs() < 1e-6);
    }

    #[test]
    fn full_pan_silences_the_other_side() {
        let [l, r] = Spatial {
            gain: 1.0,
            pan: 1.0,
        }
        .channel_gains();
        assert!(l.abs() < 1e-6 && (r - 1.0).abs() < 1e-6);
        let [l, r] = Spatial {
            gain: 1.0,
            pan: -1.0,
        }
        .channel_gains();
        assert!(r.abs() < 1e-6 && (l - 1.0).abs() < 1e-6);
    }

    #[test]
    fn bad_input_is_silent() {
        let s = Spatial::new([0.0; 3], [1.0, 0.0, 0.0], [f32::NAN, 0.0, 0.0], 1.0);
        assert_eq!(
            s,
            Spatial {
                gain: 0.0,
                pan: 0.0
            }
        );
        let s = Spatial::new([0.0; 3], [0.0; 3], [3.0, 0.0, 0.0], -2.0);
        assert_eq!(
            s,
            Spatial {
                gain: 0.0,
                pan: 0.0
            }
        );
    }
}
