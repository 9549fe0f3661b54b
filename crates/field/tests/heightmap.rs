//! DEM import: both encodings, bilinear interpolation, placement and bad files.

use crate::util::*;
use loam_field::{
    CaveSettings, Generator, Heightmap, HeightmapError, HeightmapMeta, HeightmapPlacement,
};

fn raw_bytes() -> Vec<u8> {
    std::fs::read(data_dir().join("jacksboro_3arcsec.f32")).unwrap()
}

#[test]
fn png_and_raw_agree_within_quantisation() {
    let meta = jacksboro_meta();
    let png = jacksboro_png();
    let raw = Heightmap::from_f32_le(&raw_bytes(), &meta).unwrap();
    assert_eq!(png.size(), (403, 344));
    assert_eq!(raw.size(), (403, 344));
    assert_eq!(raw.cell_size(), [74.573, 92.475]);
    let step = (meta.max_elevation_m - meta.min_elevation_m) / 65535.0;
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for y in 0..344 {
        for x in 0..403 {
            let (a, b) = (png.elevation(x, y), raw.elevation(x, y));
            assert!(
                (f64::from(a) - f64::from(b)).abs() <= step * 0.5 + 1e-3,
                "({x}, {y}): {a} vs {b}"
            );
            lo = lo.min(b);
            hi = hi.max(b);
        }
    }
    assert_eq!((lo, hi), (236.0, 1076.0));
}

#[test]
fn bilinear_placement() {
    let meta = jacksboro_meta();
    let map = Heightmap::from_f32_le(&raw_bytes(), &meta).unwrap();
    let p = HeightmapPlacement {
        horizontal_scale: 0.5,
        vertical_scale: 0.25,
        base_y: -10.0,
    };
    let g = Generator::heightmap(
        &map,
        &p,
        &CaveSettings {
            enabled: false,
            ..Default::default()
        },
    )
    .unwrap();
    let cell = [74.573 * 0.5, 92.475 * 0.5];
    let origin = [-0.5 * cell[0] * 402.0, -0.5 * cell[1] * 343.0];
    let world_h = |x: u32, y: u32| -10.0 + f64::from(map.elevation(x, y) - 236.0) * 0.25;
    for (x, y) in [(0, 0), (402, 343), (200, 100), (17, 300)] {
        let wx = origin[0] + cell[0] * f64::from(x);
        let wz = origin[1] + cell[1] * f64::from(y);
        assert!(
            (g.surface_height(wx, wz) - world_h(x, y)).abs() < 1e-9,
            "node ({x}, {y})"
        );
    }
    // The centre of a cell is the mean of its four corners.
    let (x, y) = (120, 80);
    let wx = origin[0] + cell[0] * (f64::from(x) + 0.5);
    let wz = origin[1] + cell[1] * (f64::from(y) + 0.5);
    let mean =
        (world_h(x, y) + world_h(x + 1, y) + world_h(x, y + 1) + world_h(x + 1, y + 1)) / 4.0;
    assert!((g.surface_height(wx, wz) - mean).abs() < 1e-9);
    // Beyond the edge the border sample holds.
    assert!((g.surface_height(origin[0] - 500.0, origin[1] - 500.0) - world_h(0, 0)).abs() < 1e-9);
}

fn meta(w: u32, h: u32) -> HeightmapMeta {
    HeightmapMeta {
        width: w,
        height: h,
        cell_size_m: Some(1.0),
        cell_size_x_m: None,
        cell_size_y_m: None,
        min_elevation_m: 0.0,
        max_elevation_m: 100.0,
    }
}

fn encode_png(w: u32, h: u32, depth: png::BitDepth, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, w, h);
    e.set_color(png::ColorType::Grayscale);
    e.set_depth(depth);
    e.write_header().unwrap().write_image_data(data).unwrap();
    out
}

#[test]
fn small_png_decodes_exactly() {
    // 3 × 2 samples: 0, 65535, 32768 / 1, 2, 3.
    let vals: [u16; 6] = [0, 65535, 32768, 1, 2, 3];
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_be_bytes()).collect();
    let map = Heightmap::from_png(
        &encode_png(3, 2, png::BitDepth::Sixteen, &data),
        &meta(3, 2),
    )
    .unwrap();
    assert_eq!(map.elevation(0, 0), 0.0);
    assert_eq!(map.elevation(1, 0), 100.0);
    assert_eq!(map.elevation(2, 0), (32768.0 / 65535.0 * 100.0) as f32);
}

#[test]
fn bad_files_are_typed_errors() {
    let png16 = std::fs::read(data_dir().join("jacksboro_3arcsec.png")).unwrap();
    let m = jacksboro_meta();
    // Truncated PNG.
    assert!(matches!(
        Heightmap::from_png(&png16[..png16.len() / 2], &m),
        Err(HeightmapError::Png(_))
    ));
    // Not a PNG at all.
    assert!(matches!(
        Heightmap::from_png(b"GIF89a....", &m),
        Err(HeightmapError::Png(_))
    ));
    // Sidecar size differs.
    let wrong = HeightmapMeta {
        width: 400,
        ..m.clone()
    };
    assert!(matches!(
        Heightmap::from_png(&png16, &wrong),
        Err(HeightmapError::SizeMismatch { .. })
    ));
    // 8-bit PNG.
    let png8 = encode_png(2, 2, png::BitDepth::Eight, &[1, 2, 3, 4]);
    assert!(matches!(
        Heightmap::from_png(&png8, &meta(2, 2)),
        Err(HeightmapError::PngFormat { .. })
    ));
    // Raw: wrong length, NaN, infinity.
    let raw = raw_bytes();
    assert!(matches!(
        Heightmap::from_f32_le(&raw[..raw.len() - 4], &m),
        Err(HeightmapError::RawLength { .. })
    ));
    for bad in [f32::NAN, f32::INFINITY] {
        let mut r = raw.clone();
        r[400..404].copy_from_slice(&bad.to_le_bytes());
        assert!(matches!(
            Heightmap::from_f32_le(&r, &m),
            Err(HeightmapError::BadValue { .. })
        ));
    }
    // Too small, bad cell size, inverted range.
    let one = 5.0f32.to_le_bytes();
    assert!(matches!(
        Heightmap::from_f32_le(&one, &meta(1, 1)),
        Err(HeightmapError::TooSmall { .. })
    ));
    let four: Vec<u8> = [1.0f32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    let zero_cell = HeightmapMeta {
        cell_size_m: Some(0.0),
        ..meta(2, 2)
    };
    assert!(matches!(
        Heightmap::from_f32_le(&four, &zero_cell),
        Err(HeightmapError::BadValue { .. })
    ));
    let no_cell = HeightmapMeta {
        cell_size_m: None,
        ..meta(2, 2)
    };
    assert!(matches!(
        Heightmap::from_f32_le(&four, &no_cell),
        Err(HeightmapError::Sidecar(_))
    ));
    let inverted = HeightmapMeta {
        min_elevation_m: 10.0,
        max_elevation_m: 0.0,
        ..meta(2, 2)
    };
    let png = encode_png(2, 2, png::BitDepth::Sixteen, &[0; 8]);
    assert!(matches!(
        Heightmap::from_png(&png, &inverted),
        Err(HeightmapError::BadValue { .. })
    ));
}

#[test]
fn sidecar_missing_fields_are_errors() {
    assert!(matches!(
        HeightmapMeta::from_json(r#"{"width": 3}"#),
        Err(HeightmapError::Sidecar(_))
    ));
    assert!(matches!(
        HeightmapMeta::from_json("not json"),
        Err(HeightmapError::Sidecar(_))
    ));
    let m = HeightmapMeta::from_json(
        r#"{"width": 2, "height": 2, "cell_size_m": 30, "min_elevation_m": 0, "max_elevation_m": 1, "note": "extra fields are fine"}"#,
    )
    .unwrap();
    assert_eq!((m.width, m.cell_size_m), (2, Some(30.0)));
}

#[test]
fn bad_placement_is_an_error() {
    let map = jacksboro_png();
    let caves = CaveSettings::default();
    for p in [
        HeightmapPlacement {
            horizontal_scale: 0.0,
            ..Default::default()
        },
        HeightmapPlacement {
            vertical_scale: f64::NAN,
            ..Default::default()
        },
        HeightmapPlacement {
            base_y: f64::INFINITY,
            ..Default::default()
        },
    ] {
        assert!(Generator::heightmap(&map, &p, &caves).is_err(), "{p:?}");
    }
}

#[test]
fn oversized_and_degenerate_placements_are_refused() {
    let huge = HeightmapMeta {
        width: 2147483648,
        height: 2147483648,
        ..meta(2, 2)
    };
    assert!(matches!(
        Heightmap::from_f32_le(&[], &huge),
        Err(HeightmapError::TooLarge { .. })
    ));
    assert!(matches!(
        Heightmap::from_png(&[], &huge),
        Err(HeightmapError::TooLarge { .. })
    ));
    let four: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let wide = HeightmapMeta {
        cell_size_m: Some(1e308),
        ..meta(2, 2)
    };
    let map = Heightmap::from_f32_le(&four, &wide).unwrap();
    let p = HeightmapPlacement {
        horizontal_scale: 1000.0,
        ..Default::default()
    };
    assert!(
        Generator::heightmap(&map, &p, &CaveSettings::default()).is_err(),
        "infinite cells"
    );
    let tiny = HeightmapMeta {
        cell_size_m: Some(1e-300),
        ..meta(2, 2)
    };
    let map = Heightmap::from_f32_le(&four, &tiny).unwrap();
    let p = HeightmapPlacement {
        horizontal_scale: 1e-10,
        ..Default::default()
    };
    assert!(
        Generator::heightmap(&map, &p, &CaveSettings::default()).is_err(),
        "zero cells"
    );
}
