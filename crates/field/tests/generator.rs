//! The base terrain: determinism, distance bound, slope and column bounds.

use crate::util::*;
use loam_field::{COLUMN_HALO, Generator, SamplePos};

#[test]
fn noise_is_deterministic_and_seeded() {
    let (a, b, c) = (noise_generator(7), noise_generator(7), noise_generator(8));
    let mut differ = 0;
    for i in 0..200 {
        let (x, z) = (f64::from(i) * 13.7 - 900.0, f64::from(i) * -7.3 + 40.0);
        assert_eq!(
            a.surface_height(x, z).to_bits(),
            b.surface_height(x, z).to_bits()
        );
        if a.surface_height(x, z) != c.surface_height(x, z) {
            differ += 1;
        }
    }
    assert!(
        differ > 190,
        "seeds 7 and 8 agree on {} of 200 columns",
        200 - differ
    );
}

#[test]
fn noise_terrain_has_relief_and_caves() {
    let g = noise_generator(3);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..64 {
        for k in 0..64 {
            let h = g.surface_height(f64::from(i) * 16.0, f64::from(k) * 16.0);
            lo = lo.min(h);
            hi = hi.max(h);
        }
    }
    assert!(hi - lo > 30.0, "relief over 1 km is only {} m", hi - lo);
    // Caves: air samples well below the ground surface.
    let mut cave_air = 0;
    for s in samples([0, -40, 0], [63, 30, 63]) {
        let p = [f64::from(s.x), f64::from(s.y), f64::from(s.z)];
        if p[1] < g.surface_height(p[0], p[2]) - 4.0 && g.sample(s, 1.0, 2.0) >= 0.0 {
            cave_air += 1;
        }
    }
    assert!(cave_air > 100, "only {cave_air} cave samples");
}

/// |f(a) − f(b)| ≤ |a − b| on random segments near the surface, up to f32 rounding.
fn assert_lipschitz(g: &Generator, extent: f64, seed: u64) {
    let band = 4.0;
    let mut rng = TestRng(seed);
    let mut worst: f64 = 0.0;
    for i in 0..20_000 {
        let (x, z) = (rng.range(-extent, extent), rng.range(-extent, extent));
        let a = [x, g.surface_height(x, z) + rng.range(-6.0, 6.0), z];
        let len = if i % 2 == 0 {
            rng.range(0.0, 0.5)
        } else {
            rng.range(0.0, 8.0)
        };
        let d = [
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        ];
        let n = dist(d, [0.0; 3]).max(1e-9);
        let b = [
            a[0] + d[0] / n * len,
            a[1] + d[1] / n * len,
            a[2] + d[2] / n * len,
        ];
        let df = (f64::from(g.value(a, band)) - f64::from(g.value(b, band))).abs();
        let ab = dist(a, b);
        worst = worst.max(df / ab.max(1e-12));
        assert!(
            df <= ab + 2e-6,
            "|f(a) - f(b)| = {df} > |a - b| = {ab} at {a:?} -> {b:?}"
        );
    }
    assert!(worst > 0.1, "the field barely varies (worst ratio {worst})");
}

#[test]
fn noise_field_is_a_distance_bound() {
    assert_lipschitz(&noise_generator(11), 2000.0, 1);
}

#[test]
fn heightmap_field_is_a_distance_bound() {
    assert_lipschitz(&jacksboro_generator(), 1500.0, 2);
}

/// The slope bound holds: finite differences of h never exceed it.
fn assert_slope_bound(g: &Generator, extent: f64) {
    let mut rng = TestRng(5);
    let bound = g.slope_bound();
    let mut max: f64 = 0.0;
    for _ in 0..50_000 {
        let (x, z) = (rng.range(-extent, extent), rng.range(-extent, extent));
        let e = 1e-3;
        let gx = (g.surface_height(x + e, z) - g.surface_height(x - e, z)) / (2.0 * e);
        let gz = (g.surface_height(x, z + e) - g.surface_height(x, z - e)) / (2.0 * e);
        max = max.max((gx * gx + gz * gz).sqrt());
    }
    assert!(max <= bound, "measured slope {max} above the bound {bound}");
    assert!(
        max > 0.2 * bound,
        "bound {bound} is very loose (measured {max})"
    );
}

#[test]
fn slope_bounds_hold() {
    assert_slope_bound(&noise_generator(4), 3000.0);
    assert_slope_bound(&jacksboro_generator(), 1400.0);
}

/// Every sample above `air_above` is +band, every one below `solid_below` −band, and the
/// bounds are within a few tens of metres of the real ground.
fn assert_column_bounds(g: &Generator, columns: &[(i32, i32)]) {
    let field = field_with(g.clone(), 1.0);
    let band = field.settings().band() as f32;
    for &(cx, cz) in columns {
        let b = field.column_bounds(cx, cz);
        let (x0, x1) = (cx * 32 - COLUMN_HALO, cx * 32 + 32 + COLUMN_HALO);
        let (z0, z1) = (cz * 32 - COLUMN_HALO, cz * 32 + 32 + COLUMN_HALO);
        let mut top: f64 = f64::NEG_INFINITY;
        for x in x0..=x1 {
            for z in z0..=z1 {
                top = top.max(g.surface_height(f64::from(x), f64::from(z)));
                let y_hi = b.air_above.floor() as i32 + 1;
                for y in y_hi..y_hi + 8 {
                    assert_eq!(
                        field.sample(SamplePos::new(x, y, z)),
                        band,
                        "air above at {x} {y} {z}"
                    );
                }
                let y_lo = b.solid_below.ceil() as i32 - 1;
                for y in y_lo - 8..=y_lo {
                    assert_eq!(
                        field.sample(SamplePos::new(x, y, z)),
                        -band,
                        "solid below at {x} {y} {z}"
                    );
                }
            }
        }
        assert!(
            b.air_above - top < 40.0,
            "air_above {} vs ground top {top}",
            b.air_above
        );
    }
}

#[test]
fn column_bounds_are_conservative() {
    let cols = [(0, 0), (-1, -1), (5, -3), (-20, 17), (40, 40)];
    assert_column_bounds(&noise_generator(9), &cols);
    assert_column_bounds(&jacksboro_generator(), &cols);
    assert_column_bounds(&flat_generator(10.0), &cols);
}

#[test]
fn generator_fill_equals_sample() {
    let g = noise_generator(2);
    let (min, dims) = (SamplePos::new(-17, -3, 40), [21usize, 30, 9]);
    let mut out = vec![0.0; dims[0] * dims[1] * dims[2]];
    g.fill(min, dims, 0.5, 1.0, &mut out);
    for (i, s) in samples([min.x, min.y, min.z], [min.x + 20, min.y + 29, min.z + 8]).enumerate() {
        assert_eq!(out[i].to_bits(), g.sample(s, 0.5, 1.0).to_bits(), "{s:?}");
    }
}

#[test]
fn bad_generator_settings_are_errors() {
    use loam_field::{CaveSettings, NoiseTerrainSettings};
    let bad = NoiseTerrainSettings {
        base_height: f64::NAN,
        ..Default::default()
    };
    assert!(Generator::noise(&bad, &CaveSettings::default()).is_err());
    let mut bad = NoiseTerrainSettings::default();
    bad.hills.wavelength = 0.0;
    assert!(Generator::noise(&bad, &CaveSettings::default()).is_err());
    let bad_caves = CaveSettings {
        width: 1.5,
        ..Default::default()
    };
    assert!(Generator::noise(&NoiseTerrainSettings::default(), &bad_caves).is_err());
}

#[test]
fn tiny_wavelengths_are_refused() {
    use loam_field::{CaveSettings, NoiseTerrainSettings};
    let mut bad = NoiseTerrainSettings::default();
    bad.hills.wavelength = 1e-20;
    assert!(Generator::noise(&bad, &CaveSettings::default()).is_err());
    let caves = CaveSettings {
        wavelength: 1e-300,
        ..Default::default()
    };
    assert!(Generator::noise(&NoiseTerrainSettings::default(), &caves).is_err());
}
