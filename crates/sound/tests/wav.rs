//! Mixer and WAV round trips through hound.

use crate::util::*;
use loam_sound::{Mixer, SoundKind, Spatial, wav_bytes, write_wav_file};
use std::io::Cursor;

fn session() -> Mixer {
    let mut m = Mixer::new(RATE).unwrap();
    let ear = [0.0, 1.7, 0.0];
    let right = [1.0, 0.0, 0.0];
    m.add(
        0.0,
        SoundKind::Thud { mass_kg: 1500.0 },
        1,
        Spatial::new(ear, right, [6.0, 0.0, -2.0], 1.0),
    )
    .unwrap();
    m.add(
        0.2,
        SoundKind::Crack,
        2,
        Spatial::new(ear, right, [-3.0, 1.0, -4.0], 0.8),
    )
    .unwrap();
    m.add(
        0.5,
        SoundKind::Knock { chisel: true },
        3,
        Spatial::centered(0.7),
    )
    .unwrap();
    m.add(
        0.7,
        SoundKind::Dig { radius_m: 2.0 },
        4,
        Spatial::new(ear, right, [0.0, 0.0, -1.0], 1.0),
    )
    .unwrap();
    m
}

#[test]
fn mixer_places_sounds_on_the_timeline() {
    let m = session();
    assert_eq!(m.len(), 4);
    // The dig (0.4 s) starting at 0.7 s ends last.
    assert_eq!(
        m.end_frame(),
        (0.7 * RATE as f64) as usize + (0.4 * RATE as f64) as usize
    );
    let out = m.render(m.end_frame());
    let ms = |a: f64, b: f64| {
        rms(&out[(a * RATE as f64) as usize..(b * RATE as f64) as usize]
            .iter()
            .map(|f| f[0] + f[1])
            .collect::<Vec<_>>())
    };
    // Loud just after each start, quieter just before the next.
    assert!(
        ms(0.0, 0.05) > 10.0 * ms(0.6, 0.7),
        "{} vs {}",
        ms(0.0, 0.05),
        ms(0.6, 0.7)
    );
    assert!(ms(0.7, 0.75) > 10.0 * ms(0.6, 0.7));
}

#[test]
fn wav_round_trip_keeps_length_rate_and_samples() {
    let m = session();
    let stereo = m.render(m.end_frame() + 100);
    let bytes = wav_bytes(&stereo, RATE).unwrap();
    let mut r = hound::WavReader::new(Cursor::new(&bytes)).unwrap();
    let spec = r.spec();
    assert_eq!(
        (spec.channels, spec.sample_rate, spec.bits_per_sample),
        (2, RATE, 16)
    );
    assert_eq!(spec.sample_format, hound::SampleFormat::Int);
    assert_eq!(r.duration() as usize, stereo.len());
    let back: Vec<i16> = r.samples::<i16>().map(Result::unwrap).collect();
    assert_eq!(back.len(), 2 * stereo.len());
    let worst = stereo
        .iter()
        .flatten()
        .zip(&back)
        .map(|(a, b)| (a.clamp(-1.0, 1.0) - *b as f32 / 32_767.0).abs())
        .fold(0.0f32, f32::max);
    assert!(worst <= 0.5 / 32_767.0 + 1e-7, "worst error {worst}");
    assert!(
        back.iter().any(|&s| s.unsigned_abs() > 8000),
        "the WAV is nearly silent"
    );
}

#[test]
fn wav_file_matches_wav_bytes() {
    let stereo = session().render(RATE as usize);
    let path = std::env::temp_dir().join(format!("loam-sound-{}-file.wav", std::process::id()));
    write_wav_file(&path, &stereo, 44_100).unwrap();
    let on_disk = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(on_disk, wav_bytes(&stereo, 44_100).unwrap());
    let r = hound::WavReader::new(Cursor::new(on_disk)).unwrap();
    assert_eq!((r.spec().sample_rate, r.duration()), (44_100, RATE));
}
