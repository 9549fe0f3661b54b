//! Real elevation models (DEMs) as ground: decoding, validation and bilinear interpolation.
//!
//! Decoding reads bytes, never files, so that `loam-field` stays free of I/O (docs/architecture.md,
//! "Layers"); the caller reads the image and its JSON sidecar.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{GeneratorError, check};

/// The JSON sidecar of a DEM (e.g. `data/heightmaps/jacksboro_3arcsec.json`). Fields this type does
/// not name are ignored: the sidecar is a third-party format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeightmapMeta {
    /// Samples per row (west to east).
    pub width: u32,
    /// Rows (row 0 is north).
    pub height: u32,
    /// Cell size in metres on both axes, used where the per-axis sizes are absent.
    #[serde(default)]
    pub cell_size_m: Option<f64>,
    /// Cell size west–east in metres.
    #[serde(default)]
    pub cell_size_x_m: Option<f64>,
    /// Cell size north–south in metres.
    #[serde(default)]
    pub cell_size_y_m: Option<f64>,
    /// Elevation of PNG value 0, in metres.
    pub min_elevation_m: f64,
    /// Elevation of PNG value 65535, in metres.
    pub max_elevation_m: f64,
}

impl HeightmapMeta {
    /// Parses a sidecar.
    ///
    /// # Errors
    /// [`HeightmapError::Sidecar`] for malformed JSON or a missing field.
    pub fn from_json(text: &str) -> Result<Self, HeightmapError> {
        serde_json::from_str(text).map_err(|e| HeightmapError::Sidecar(e.to_string()))
    }

    fn cell_sizes(&self) -> Result<[f64; 2], HeightmapError> {
        let x = self.cell_size_x_m.or(self.cell_size_m);
        let y = self.cell_size_y_m.or(self.cell_size_m);
        let (Some(x), Some(y)) = (x, y) else {
            return Err(HeightmapError::Sidecar(
                "missing field `cell_size_m` (or `cell_size_x_m` and `cell_size_y_m`)".into(),
            ));
        };
        for v in [x, y] {
            if !(v.is_finite() && v > 0.0) {
                return Err(HeightmapError::BadValue {
                    what: "cell size",
                    value: v,
                });
            }
        }
        Ok([x, y])
    }
}

/// A DEM could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HeightmapError {
    /// The sidecar is not valid JSON or lacks a field.
    #[error("heightmap sidecar: {0}")]
    Sidecar(String),
    /// The PNG could not be decoded (truncated, corrupt, not a PNG).
    #[error("heightmap PNG: {0}")]
    Png(String),
    /// The PNG is not 16-bit greyscale.
    #[error("heightmap PNG must be 16-bit greyscale, found {found}")]
    PngFormat {
        /// The colour type and bit depth found.
        found: String,
    },
    /// The image size differs from the sidecar's.
    #[error("heightmap is {found:?} samples but the sidecar says {expected:?}")]
    SizeMismatch {
        /// Width and height the sidecar gives.
        expected: (u32, u32),
        /// Width and height of the data.
        found: (u32, u32),
    },
    /// A raw f32 file has the wrong number of bytes.
    #[error("raw heightmap has {found} bytes, expected {expected} ({width} × {height} × 4)")]
    RawLength {
        /// Bytes expected.
        expected: usize,
        /// Bytes found.
        found: usize,
        /// Width from the sidecar.
        width: u32,
        /// Height from the sidecar.
        height: u32,
    },
    /// A value is NaN, infinite or out of range.
    #[error("heightmap {what} {value} is invalid")]
    BadValue {
        /// What the value is.
        what: &'static str,
        /// The value.
        value: f64,
    },
    /// More samples than [`MAX_HEIGHTMAP_SAMPLES`].
    #[error("heightmap of {width} × {height} samples is larger than the limit of {max}")]
    TooLarge {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// The limit.
        max: u64,
    },
    /// Fewer than 2 × 2 samples.
    #[error("heightmap must be at least 2 × 2 samples, found {width} × {height}")]
    TooSmall {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
}

/// Most samples a heightmap may have (2²⁸, e.g. 16384 × 16384).
pub const MAX_HEIGHTMAP_SAMPLES: u64 = 1 << 28;

/// Checks the sidecar's size before anything is allocated.
fn check_size(meta: &HeightmapMeta) -> Result<usize, HeightmapError> {
    let n = u64::from(meta.width) * u64::from(meta.height);
    if n > MAX_HEIGHTMAP_SAMPLES {
        return Err(HeightmapError::TooLarge {
            width: meta.width,
            height: meta.height,
            max: MAX_HEIGHTMAP_SAMPLES,
        });
    }
    Ok(n as usize)
}

/// A decoded DEM: elevations in metres, row-major, row 0 north, column 0 west.
#[derive(Debug, Clone, PartialEq)]
pub struct Heightmap {
    width: u32,
    height: u32,
    cell: [f64; 2],
    elevations: Vec<f32>,
}

impl Heightmap {
    fn new(
        meta: &HeightmapMeta,
        found: (u32, u32),
        elevations: Vec<f32>,
    ) -> Result<Self, HeightmapError> {
        if found != (meta.width, meta.height) {
            return Err(HeightmapError::SizeMismatch {
                expected: (meta.width, meta.height),
                found,
            });
        }
        if meta.width < 2 || meta.height < 2 {
            return Err(HeightmapError::TooSmall {
                width: meta.width,
                height: meta.height,
            });
        }
        let cell = meta.cell_sizes()?;
        if let Some(v) = elevations.iter().find(|v| !v.is_finite() || v.abs() > 1e6) {
            return Err(HeightmapError::BadValue {
                what: "elevation",
                value: f64::from(*v),
            });
        }
        Ok(Self {
            width: meta.width,
            height: meta.height,
            cell,
            elevations,
        })
    }

    /// Decodes a 16-bit greyscale PNG: `elevation = min + v / 65535 · (max − min)`.
    ///
    /// # Errors
    /// [`HeightmapError`] for a corrupt or truncated PNG, another pixel format, a size that
    /// differs from the sidecar, or an invalid elevation range.
    pub fn from_png(bytes: &[u8], meta: &HeightmapMeta) -> Result<Self, HeightmapError> {
        let (lo, hi) = (meta.min_elevation_m, meta.max_elevation_m);
        for v in [lo, hi] {
            if !v.is_finite() {
                return Err(HeightmapError::BadValue {
                    what: "elevation range",
                    value: v,
                });
            }
        }
        if hi < lo {
            return Err(HeightmapError::BadValue {
                what: "max_elevation_m below min",
                value: hi,
            });
        }
        check_size(meta)?;
        let png_err = |e: png::DecodingError| HeightmapError::Png(e.to_string());
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::IDENTITY);
        let mut reader = decoder.read_info().map_err(png_err)?;
        let info = reader.info();
        let (w, h) = (info.width, info.height);
        if info.color_type != png::ColorType::Grayscale || info.bit_depth != png::BitDepth::Sixteen
        {
            return Err(HeightmapError::PngFormat {
                found: format!("{:?} {:?}", info.color_type, info.bit_depth),
            });
        }
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| HeightmapError::Png("image too large".into()))?;
        let mut buf = vec![0u8; size];
        let frame = reader.next_frame(&mut buf).map_err(png_err)?;
        let data = &buf[..frame.buffer_size()];
        let elevations = data
            .chunks_exact(2)
            .map(|b| {
                let v = f64::from(u16::from_be_bytes([b[0], b[1]]));
                (lo + v / 65535.0 * (hi - lo)) as f32
            })
            .collect();
        Self::new(meta, (w, h), elevations)
    }

    /// Decodes little-endian f32 elevations in metres, row-major.
    ///
    /// # Errors
    /// [`HeightmapError`] for a byte count other than `width · height · 4`, or NaN, infinite or
    /// absurd (|e| > 10⁶ m) elevations.
    pub fn from_f32_le(bytes: &[u8], meta: &HeightmapMeta) -> Result<Self, HeightmapError> {
        let expected = check_size(meta)? * 4;
        if bytes.len() != expected {
            return Err(HeightmapError::RawLength {
                expected,
                found: bytes.len(),
                width: meta.width,
                height: meta.height,
            });
        }
        let elevations = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Self::new(meta, (meta.width, meta.height), elevations)
    }

    /// Samples per row and rows.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Cell size west–east and north–south, metres.
    pub fn cell_size(&self) -> [f64; 2] {
        self.cell
    }

    /// Elevation of column `x` (west to east) and row `y` (north to south), metres.
    ///
    /// # Panics
    /// If out of range.
    pub fn elevation(&self, x: u32, y: u32) -> f32 {
        assert!(x < self.width && y < self.height, "sample out of range");
        self.elevations[(y * self.width + x) as usize]
    }
}

/// How a DEM is laid into the world (serde: fields of a session's heightmap generator).
///
/// The DEM is centred on the world origin, column 0 to the west (−x), row 0 to the north (−z).
/// World height is `base_y + (elevation − lowest elevation) · vertical_scale`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeightmapPlacement {
    /// World metres per real metre across (1/30 turns a 30 m cell into 1 m). Default 1.
    pub horizontal_scale: f64,
    /// World metres per metre of elevation. Default 1.
    pub vertical_scale: f64,
    /// World y of the DEM's lowest point, metres. Default 0.
    pub base_y: f64,
}

impl Default for HeightmapPlacement {
    fn default() -> Self {
        Self {
            horizontal_scale: 1.0,
            vertical_scale: 1.0,
            base_y: 0.0,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct HeightmapGround {
    width: usize,
    rows: usize,
    /// World heights, row-major, metres; shared by the generator's clones (a DEM of millions
    /// of samples is held once however many fields or clients use it).
    h: Arc<[f64]>,
    cell: [f64; 2],
    origin: [f64; 2],
    slope: f64,
}

impl HeightmapGround {
    pub(crate) fn new(map: &Heightmap, p: &HeightmapPlacement) -> Result<Self, GeneratorError> {
        check(
            "horizontal_scale",
            p.horizontal_scale,
            p.horizontal_scale > 0.0 && p.horizontal_scale <= 1e3,
            "in (0, 1000]",
        )?;
        check(
            "vertical_scale",
            p.vertical_scale,
            p.vertical_scale >= 0.0 && p.vertical_scale <= 1e3,
            "in [0, 1000]",
        )?;
        check("base_y", p.base_y, p.base_y.abs() <= 1e6, "|y| <= 1e6 m")?;
        let lowest = map.elevations.iter().fold(f32::INFINITY, |a, &b| a.min(b));
        let h: Vec<f64> = map
            .elevations
            .iter()
            .map(|&e| p.base_y + f64::from(e - lowest) * p.vertical_scale)
            .collect();
        let (width, rows) = (map.width as usize, map.height as usize);
        let cell = map.cell.map(|c| c * p.horizontal_scale);
        let (mut mx, mut mz) = (0.0f64, 0.0f64);
        for r in 0..rows {
            for c in 0..width {
                let v = h[r * width + c];
                if c + 1 < width {
                    mx = mx.max((h[r * width + c + 1] - v).abs());
                }
                if r + 1 < rows {
                    mz = mz.max((h[(r + 1) * width + c] - v).abs());
                }
            }
        }
        for c in cell {
            check(
                "cell size × horizontal_scale",
                c,
                c > 0.0 && c <= 1e7,
                "in (0, 1e7] m",
            )?;
        }
        let (sx, sz) = (mx / cell[0], mz / cell[1]);
        let slope = (sx * sx + sz * sz).sqrt();
        check(
            "DEM slope bound",
            slope,
            slope <= 1e6,
            "<= 1e6 (cells too small for the relief)",
        )?;
        Ok(Self {
            width,
            rows,
            h: h.into(),
            cell,
            origin: [
                -0.5 * cell[0] * (width - 1) as f64,
                -0.5 * cell[1] * (rows - 1) as f64,
            ],
            // Inside a cell, ∂h/∂x is a blend of the two x-edge differences over the cell
            // size, so |∂h/∂x| ≤ sx and |∂h/∂z| ≤ sz.
            slope,
        })
    }

    /// Continuous grid coordinate of world `x` (or `z`), clamped to the DEM.
    fn grid(&self, v: f64, axis: usize) -> f64 {
        let n = if axis == 0 { self.width } else { self.rows };
        ((v - self.origin[axis]) / self.cell[axis]).clamp(0.0, (n - 1) as f64)
    }

    pub(crate) fn height(&self, x: f64, z: f64) -> f64 {
        let (u, v) = (self.grid(x, 0), self.grid(z, 1));
        let i = (u.floor() as usize).min(self.width - 2);
        let k = (v.floor() as usize).min(self.rows - 2);
        let (fu, fv) = (u - i as f64, v - k as f64);
        let at = |c: usize, r: usize| self.h[r * self.width + c];
        let top = at(i, k) + (at(i + 1, k) - at(i, k)) * fu;
        let bottom = at(i, k + 1) + (at(i + 1, k + 1) - at(i, k + 1)) * fu;
        top + (bottom - top) * fv
    }

    pub(crate) fn slope_bound(&self) -> f64 {
        self.slope
    }

    /// Exact bounds of the bilinear interpolant over a rectangle: the extremes of the DEM
    /// samples of the cells it touches.
    pub(crate) fn height_range(&self, x: [f64; 2], z: [f64; 2]) -> (f64, f64) {
        let i0 = self.grid(x[0], 0).floor() as usize;
        let i1 = self.grid(x[1], 0).ceil() as usize;
        let k0 = self.grid(z[0], 1).floor() as usize;
        let k1 = self.grid(z[1], 1).ceil() as usize;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for k in k0..=k1 {
            for &v in &self.h[k * self.width + i0..=k * self.width + i1] {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        (lo, hi)
    }
}
