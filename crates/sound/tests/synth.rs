//! The recipes, measured: envelopes, spectra, fundamentals, seeds.

use crate::util::*;
use loam_sound::{SoundKind, thud_fundamental_hz};

#[test]
fn every_sound_decays() {
    for kind in all_kinds() {
        for seed in [0, 1, 0xdead_beef] {
            let x = render(kind, seed);
            let (head, tail) = head_tail_rms(&x);
            assert!(
                tail < 0.1 * head,
                "{kind:?} seed {seed}: head RMS {head:.4}, tail RMS {tail:.4}"
            );
        }
    }
}

#[test]
fn every_sound_starts_at_full_level_and_stays_in_range() {
    for kind in all_kinds() {
        let x = render(kind, 5);
        let (i_peak, peak) =
            x.iter().enumerate().fold(
                (0, 0.0f32),
                |b, (i, v)| if v.abs() > b.1 { (i, v.abs()) } else { b },
            );
        assert!(
            x.iter().all(|v| v.is_finite() && v.abs() <= 1.0),
            "{kind:?} out of range"
        );
        assert!(
            (peak - kind.peak_level()).abs() < 1e-6,
            "{kind:?}: peak {peak}"
        );
        assert!(
            i_peak < x.len() / 10,
            "{kind:?}: loudest sample at {i_peak} of {}",
            x.len()
        );
    }
}

#[test]
fn durations_match_the_recipes() {
    let secs = |kind| render(kind, 0).len() as f64 / RATE as f64;
    assert!((secs(SoundKind::Thud { mass_kg: 500.0 }) - 0.6).abs() < 1e-3);
    assert!((secs(SoundKind::Crack) - 0.25).abs() < 1e-3);
    assert!((secs(SoundKind::Knock { chisel: false }) - 0.08).abs() < 1e-3);
    assert!((secs(SoundKind::Knock { chisel: true }) - 0.08).abs() < 1e-3);
}

#[test]
fn centroid_thud_below_knock_below_crack() {
    for seed in 0..4 {
        let thud = centroid_hz(&render(SoundKind::Thud { mass_kg: 40.0 }, seed));
        let place = centroid_hz(&render(SoundKind::Knock { chisel: false }, seed));
        let chisel = centroid_hz(&render(SoundKind::Knock { chisel: true }, seed));
        let crack = centroid_hz(&render(SoundKind::Crack, seed));
        assert!(
            thud < place && place < chisel && chisel < crack,
            "seed {seed}: thud {thud:.0} Hz, place knock {place:.0} Hz, chisel knock {chisel:.0} Hz, crack {crack:.0} Hz"
        );
        // Roughly where the recipes put them.
        assert!((100.0..400.0).contains(&thud), "thud centroid {thud:.0} Hz");
        assert!(
            (2000.0..10_000.0).contains(&crack),
            "crack centroid {crack:.0} Hz"
        );
    }
}

#[test]
fn chisel_knock_is_higher_than_place_knock() {
    let place = peak_hz(&render(SoundKind::Knock { chisel: false }, 3), 0.08);
    let chisel = peak_hz(&render(SoundKind::Knock { chisel: true }, 3), 0.08);
    assert!(
        (450.0..650.0).contains(&place),
        "place knock peak {place:.0} Hz (band 550 Hz)"
    );
    assert!(
        (1400.0..1800.0).contains(&chisel),
        "chisel knock peak {chisel:.0} Hz (band 1.6 kHz)"
    );
}

#[test]
fn heavier_thud_has_lower_fundamental_by_the_cube_root_law() {
    let f = |kg: f32| peak_hz(&render(SoundKind::Thud { mass_kg: kg }, 11), 0.1);
    // Inside the clamp: 8× the mass, half the pitch.
    let (f500, f4000) = (f(500.0), f(4000.0));
    assert!(
        (f500 / f4000 / 2.0 - 1.0).abs() < 0.05,
        "500 kg {f500:.1} Hz / 4 t {f4000:.1} Hz"
    );
    // 50 kg is clamped to 140 Hz, 2 t is 110 / ∛2 = 87.3 Hz.
    let (f50, f2000) = (f(50.0), f(2000.0));
    let want = 140.0 / (110.0 / 2f64.cbrt());
    assert!(
        (f50 / f2000 / want - 1.0).abs() < 0.05,
        "50 kg {f50:.1} Hz / 2 t {f2000:.1} Hz, want ratio {want:.3}"
    );
    // The clamp: lighter and heavier pieces stop at 140 and 40 Hz.
    assert!((f(10.0) - f50).abs() < 1.0);
    assert!((f(100_000.0) - f(1_000_000.0)).abs() < 1.0);
    // The measured peak of the first 100 ms lies a little under f₀ (the tone is falling).
    for kg in [10.0f32, 500.0, 2000.0, 4000.0, 100_000.0] {
        let (got, f0) = (f(kg), thud_fundamental_hz(kg).unwrap() as f64);
        assert!(
            (0.8 * f0..=1.0 * f0).contains(&got),
            "{kg} kg: peak {got:.1} Hz, f0 {f0:.1} Hz"
        );
    }
}

#[test]
fn fundamental_law() {
    let f = |kg| thud_fundamental_hz(kg).unwrap();
    assert_eq!(f(1000.0), 110.0);
    assert!((f(8000.0) - 55.0).abs() < 1e-4);
    assert_eq!(f(0.0), 140.0);
    assert_eq!(f(10.0), 140.0);
    assert_eq!(f(1.0e6), 40.0);
}

#[test]
fn bigger_dig_is_louder_lower_and_longer() {
    let small = render(SoundKind::Dig { radius_m: 0.5 }, 2);
    let big = render(SoundKind::Dig { radius_m: 3.0 }, 2);
    let first = |x: &[f32]| rms(&x[..RATE as usize / 10]);
    assert!(
        first(&big) > 1.5 * first(&small),
        "first 100 ms RMS: big {:.3}, small {:.3}",
        first(&big),
        first(&small)
    );
    assert!(
        centroid_hz(&big) < 0.8 * centroid_hz(&small),
        "centroid: big {:.0} Hz, small {:.0} Hz",
        centroid_hz(&big),
        centroid_hz(&small)
    );
    assert!(big.len() > small.len());
}

#[test]
fn seeds_choose_the_noise_deterministically() {
    for kind in all_kinds() {
        let a = render(kind, 42);
        let b = render(kind, 42);
        let c = render(kind, 43);
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{kind:?}: same seed differs"
        );
        let differing = a.iter().zip(&c).filter(|(x, y)| x != y).count();
        assert!(
            differing > a.len() / 2,
            "{kind:?}: seeds 42 and 43 share {} of {} samples",
            a.len() - differing,
            a.len()
        );
    }
}

#[test]
fn same_seed_different_kinds_are_unrelated() {
    let a = render(SoundKind::Knock { chisel: false }, 9);
    let b = render(SoundKind::Crack, 9);
    let n = a.len().min(b.len());
    let corr: f64 = a[..n]
        .iter()
        .zip(&b[..n])
        .map(|(x, y)| *x as f64 * *y as f64)
        .sum::<f64>()
        / (rms(&a[..n]) * rms(&b[..n]) * n as f64);
    assert!(corr.abs() < 0.2, "correlation {corr:.3}");
}
