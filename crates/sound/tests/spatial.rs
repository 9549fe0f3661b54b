//! Distance law and pan.

use crate::util::*;
use loam_sound::{SoundKind, Spatial, to_stereo};

const EAR: [f32; 3] = [10.0, 2.0, -5.0];
const RIGHT: [f32; 3] = [0.0, 0.0, -3.0]; // not unit length on purpose

#[test]
fn gain_halves_at_8_m_and_is_a_third_at_16_m() {
    for strength in [1.0f32, 0.6] {
        let at = |d: f32| Spatial::new(EAR, RIGHT, [EAR[0] + d, EAR[1], EAR[2]], strength).gain;
        assert!((at(0.0) - strength).abs() < 1e-6);
        assert!((at(8.0) - strength / 2.0).abs() < 1e-6, "8 m: {}", at(8.0));
        assert!(
            (at(16.0) - strength / 3.0).abs() < 1e-6,
            "16 m: {}",
            at(16.0)
        );
    }
}

#[test]
fn halved_gain_halves_the_rendered_amplitude() {
    let x = render(SoundKind::Crack, 1);
    let near = to_stereo(&x, Spatial::new(EAR, RIGHT, EAR, 1.0));
    let far = to_stereo(
        &x,
        Spatial::new(EAR, RIGHT, [EAR[0], EAR[1] + 8.0, EAR[2]], 1.0),
    );
    let left = |s: &[[f32; 2]]| rms(&s.iter().map(|f| f[0]).collect::<Vec<_>>());
    assert!((left(&far) / left(&near) - 0.5).abs() < 1e-4);
}

#[test]
fn pan_follows_the_right_vector() {
    let pan = |p: [f32; 3]| Spatial::new(EAR, RIGHT, p, 1.0).pan;
    let ahead = [EAR[0] - 5.0, EAR[1], EAR[2]]; // right is -z, so ahead (in this test) is -x
    assert!((pan([EAR[0], EAR[1], EAR[2] - 4.0]) - 1.0).abs() < 1e-6);
    assert!((pan([EAR[0], EAR[1], EAR[2] + 4.0]) + 1.0).abs() < 1e-6);
    assert!(pan(ahead).abs() < 1e-6);
    assert!(pan([EAR[0], EAR[1] + 9.0, EAR[2]]).abs() < 1e-6);
    assert!(
        (pan([EAR[0] - 3.0, EAR[1], EAR[2] - 3.0]) - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-5
    );
    assert_eq!(pan(EAR), 0.0);
}

#[test]
fn a_source_on_the_right_is_louder_in_the_right_channel() {
    let x = render(SoundKind::Thud { mass_kg: 800.0 }, 4);
    let energy = |s: &[[f32; 2]], c: usize| s.iter().map(|f| (f[c] as f64).powi(2)).sum::<f64>();
    let right_src = to_stereo(
        &x,
        Spatial::new(EAR, RIGHT, [EAR[0] - 2.0, EAR[1], EAR[2] - 6.0], 1.0),
    );
    assert!(
        energy(&right_src, 1) > 4.0 * energy(&right_src, 0),
        "L {:.3} R {:.3}",
        energy(&right_src, 0),
        energy(&right_src, 1)
    );
    let left_src = to_stereo(
        &x,
        Spatial::new(EAR, RIGHT, [EAR[0] - 2.0, EAR[1], EAR[2] + 6.0], 1.0),
    );
    assert!(energy(&left_src, 0) > 4.0 * energy(&left_src, 1));
    // Constant power: the total is the same wherever the source is, at equal distance.
    let total = |s: &[[f32; 2]]| energy(s, 0) + energy(s, 1);
    assert!((total(&right_src) / total(&left_src) - 1.0).abs() < 1e-4);
}
