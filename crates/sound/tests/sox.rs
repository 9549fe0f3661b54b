//! The WAV a session writes is not silent, as sox measures it (skipped without sox).

use crate::util::*;
use loam_sound::{Mixer, Spatial, write_wav_file};
use std::path::Path;
use std::process::Command;

/// `sox FILE -n stat` → (RMS amplitude, maximum amplitude), or `None` without sox.
fn sox_stat(path: &Path) -> Option<(f64, f64)> {
    let out = Command::new("sox")
        .arg(path)
        .args(["-n", "stat"])
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "sox failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stderr);
    let field = |name: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name:?} in sox output:\n{text}"));
        line.rsplit(':').next().unwrap().trim().parse().unwrap()
    };
    Some((field("RMS     amplitude"), field("Maximum amplitude")))
}

#[test]
fn sox_hears_the_session() {
    if Command::new("sox").arg("--version").output().is_err() {
        eprintln!("note: sox is not installed; skipping sox_hears_the_session");
        return;
    }
    let dir = std::env::temp_dir();
    let loud = dir.join(format!("loam-sound-{}-sox.wav", std::process::id()));
    let quiet = dir.join(format!("loam-sound-{}-sox-silent.wav", std::process::id()));
    let mut m = Mixer::new(RATE).unwrap();
    for (i, kind) in all_kinds().into_iter().enumerate() {
        m.add(
            i as f64 * 0.3,
            kind,
            i as u64,
            Spatial::new([0.0; 3], [1.0, 0.0, 0.0], [i as f32 - 5.0, 0.0, -4.0], 1.0),
        )
        .unwrap();
    }
    let frames = m.end_frame();
    write_wav_file(&loud, &m.render(frames), RATE).unwrap();
    write_wav_file(&quiet, &Mixer::new(RATE).unwrap().render(frames), RATE).unwrap();
    let (rms_loud, max_loud) = sox_stat(&loud).unwrap();
    let (rms_quiet, _) = sox_stat(&quiet).unwrap();
    std::fs::remove_file(&loud).unwrap();
    std::fs::remove_file(&quiet).unwrap();
    println!("sox stat: RMS {rms_loud}, max {max_loud}; silent control RMS {rms_quiet}");
    assert!(
        rms_loud > 0.01 && max_loud > 0.2,
        "sox: RMS {rms_loud}, max {max_loud}"
    );
    assert!(
        rms_quiet < 1e-4,
        "the silent control measured RMS {rms_quiet}"
    );
}
