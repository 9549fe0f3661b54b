//! Bad input gives typed errors and changes nothing.

use loam_sound::{
    Mixer, SoundError, SoundKind, Spatial, WavError, synthesize, wav_bytes, write_wav_file,
};

#[test]
fn bad_sample_rates() {
    for hz in [0, 7_999, 384_001, u32::MAX] {
        assert_eq!(
            synthesize(SoundKind::Crack, 0, hz),
            Err(SoundError::SampleRate {
                hz,
                min: 8_000,
                max: 384_000
            })
        );
        assert!(matches!(Mixer::new(hz), Err(SoundError::SampleRate { .. })));
        assert!(
            matches!(wav_bytes(&[[0.0; 2]], hz), Err(WavError::SampleRate { hz: h, .. }) if h == hz)
        );
    }
    assert!(synthesize(SoundKind::Crack, 0, 8_000).is_ok());
    assert!(synthesize(SoundKind::Knock { chisel: true }, 0, 384_000).is_ok());
}

#[test]
fn bad_mass_and_radius() {
    for m in [f32::NAN, f32::INFINITY, -1.0] {
        match synthesize(SoundKind::Thud { mass_kg: m }, 0, 48_000) {
            Err(SoundError::Mass { mass_kg }) => assert!(mass_kg.to_bits() == m.to_bits()),
            other => panic!("mass {m}: {other:?}"),
        }
        match synthesize(SoundKind::Dig { radius_m: m }, 0, 48_000) {
            Err(SoundError::Radius { radius_m }) => assert!(radius_m.to_bits() == m.to_bits()),
            other => panic!("radius {m}: {other:?}"),
        }
    }
    assert!(synthesize(SoundKind::Thud { mass_kg: 0.0 }, 0, 48_000).is_ok());
    assert!(synthesize(SoundKind::Dig { radius_m: 0.0 }, 0, 48_000).is_ok());
}

#[test]
fn mixer_rejects_bad_sounds_and_times_unchanged() {
    let mut m = Mixer::new(48_000).unwrap();
    let c = Spatial::centered(1.0);
    assert!(matches!(
        m.add(0.0, SoundKind::Thud { mass_kg: -5.0 }, 0, c),
        Err(SoundError::Mass { .. })
    ));
    assert!(matches!(
        m.add(f64::NAN, SoundKind::Crack, 0, c),
        Err(SoundError::StartTime { .. })
    ));
    assert!(matches!(
        m.add_samples(f64::INFINITY, vec![1.0], c),
        Err(SoundError::StartTime { .. })
    ));
    assert!(m.is_empty());
    assert_eq!(m.render(10), vec![[0.0; 2]; 10]);
}

#[test]
fn unwritable_path_is_an_io_error() {
    let path = std::env::temp_dir()
        .join("loam-sound-no-such-dir")
        .join("x")
        .join("out.wav");
    let err = write_wav_file(&path, &[[0.0; 2]; 4], 48_000).unwrap_err();
    assert!(
        matches!(err, WavError::Hound(hound::Error::IoError(_))),
        "{err:?}"
    );
}

#[test]
fn errors_explain_themselves() {
    let e = synthesize(SoundKind::Dig { radius_m: -2.0 }, 0, 48_000).unwrap_err();
    assert_eq!(e.to_string(), "dig radius -2 m must be finite and >= 0");
    let e = synthesize(SoundKind::Crack, 0, 100).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sample rate 100 Hz is outside 8000..=384000 Hz"
    );
}
