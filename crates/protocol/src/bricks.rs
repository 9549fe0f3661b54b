//! Bricks on the wire: a brick's quantised samples, exactly as the field holds them; and a
//! box of samples within one brick (a patch: the samples an op changed).
//!
//! ```text
//! data = 0x00, q (i16 LE), material (u8)              every sample the same
//!      | 0x01, zstd( q[n] (i16 LE) ++ material[n] )   otherwise (x fastest; n = 32³ for a
//!                                                     brick, the box's volume for a box)
//! ```

use loam_field::{BRICK_SAMPLES, Brick, BrickKey, MaterialId, QMAX, SampleBox, SamplePos};
use serde::{Deserialize, Serialize};

const VOLUME: usize = (BRICK_SAMPLES * BRICK_SAMPLES * BRICK_SAMPLES) as usize;
const UNIFORM: u8 = 0;
const ZSTD: u8 = 1;

/// One brick as sent: its key and its encoded samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireBrick {
    /// Brick coordinate.
    pub key: [i32; 3],
    /// Encoded samples (see the module docs).
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

/// A box of samples within one brick as sent (in a patch): the brick, the box's lowest and
/// highest sample in the brick's own indices (`0..32` per axis, inclusive), and the box's
/// encoded samples (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireSamples {
    /// Brick coordinate.
    pub key: [i32; 3],
    /// Lowest sample of the box, brick-local.
    pub min: [u8; 3],
    /// Highest sample of the box, brick-local, inclusive.
    pub max: [u8; 3],
    /// Encoded samples of the box.
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

/// A brick on the wire did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BrickDecodeError {
    /// Unknown encoding tag, wrong length, or zstd failed.
    #[error("brick ({}, {}, {}) is malformed: {why}", key[0], key[1], key[2])]
    Malformed {
        /// The brick.
        key: [i32; 3],
        /// What was wrong.
        why: String,
    },
}

/// Encodes `brick` (its quantised samples and materials, bit for bit).
pub fn encode_brick(key: BrickKey, brick: &Brick) -> WireBrick {
    let data = match brick.uniform() {
        Some((q, m)) => uniform(q, m),
        None => {
            let s = brick.samples();
            compress(s.quantized().iter().copied(), s.materials())
        }
    };
    WireBrick {
        key: [key.x, key.y, key.z],
        data,
    }
}

fn uniform(q: i16, m: MaterialId) -> Vec<u8> {
    let q = q.to_le_bytes();
    vec![UNIFORM, q[0], q[1], m]
}

fn compress(q: impl ExactSizeIterator<Item = i16>, m: &[MaterialId]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(q.len() * 2 + m.len());
    for q in q {
        raw.extend_from_slice(&q.to_le_bytes());
    }
    raw.extend_from_slice(m);
    let z = zstd_frame::compress(&raw);
    let mut data = Vec::with_capacity(z.len() + 1);
    data.push(ZSTD);
    data.extend_from_slice(&z);
    data
}

/// Encodes the samples of `brick` (at `key`) within the brick-local box `min..=max`.
///
/// # Panics
/// If `min > max` on an axis or `max` is beyond the brick (32 samples per axis).
pub fn encode_samples(key: BrickKey, brick: &Brick, min: [u8; 3], max: [u8; 3]) -> WireSamples {
    assert!((0..3).all(|a| min[a] <= max[a] && i32::from(max[a]) < BRICK_SAMPLES));
    let data = match brick.uniform() {
        Some((q, m)) => uniform(q, m),
        None => {
            let s = brick.samples();
            let (q, ms) = (s.quantized(), s.materials());
            let mut idx = Vec::new();
            for z in min[2]..=max[2] {
                for y in min[1]..=max[1] {
                    for x in min[0]..=max[0] {
                        idx.push(loam_field::brick_index([x, y, z].map(i32::from)));
                    }
                }
            }
            let m: Vec<MaterialId> = idx.iter().map(|&i| ms[i]).collect();
            let first = (q[idx[0]], m[0]);
            if idx.iter().zip(&m).all(|(&i, &mi)| (q[i], mi) == first) {
                uniform(first.0, first.1)
            } else {
                compress(idx.iter().map(|&i| q[i]), &m)
            }
        }
    };
    WireSamples {
        key: [key.x, key.y, key.z],
        min,
        max,
        data,
    }
}

/// Decodes a box of samples: the box in field samples, its grid indices and its materials
/// (x fastest), ready for [`loam_field::Field::write_quantized`]. Never allocates more than
/// one brick's samples.
///
/// # Errors
/// [`BrickDecodeError::Malformed`] for a box not within one brick, an unknown tag, a wrong
/// length, bad zstd data or an index beyond the grid.
pub fn decode_samples(
    w: &WireSamples,
) -> Result<(SampleBox, Vec<i16>, Vec<MaterialId>), BrickDecodeError> {
    let bad = |why: String| BrickDecodeError::Malformed { key: w.key, why };
    if !(0..3).all(|a| w.min[a] <= w.max[a] && i32::from(w.max[a]) < BRICK_SAMPLES) {
        return Err(bad(format!(
            "box {:?}..={:?} is not within a brick",
            w.min, w.max
        )));
    }
    let n: usize = (0..3)
        .map(|a| usize::from(w.max[a] - w.min[a]) + 1)
        .product();
    let (q, m) = decode_data(&w.data, n).map_err(bad)?;
    // A key whose samples leave the i32 range would wrap onto another brick's.
    let origin = w.key.map(|k| {
        k.checked_mul(BRICK_SAMPLES)
            .filter(|o| o.checked_add(BRICK_SAMPLES - 1).is_some())
    });
    let [Some(x), Some(y), Some(z)] = origin else {
        return Err(bad(format!(
            "brick {:?} is outside the sample range",
            w.key
        )));
    };
    let at = |l: [u8; 3]| {
        SamplePos::new(
            x + i32::from(l[0]),
            y + i32::from(l[1]),
            z + i32::from(l[2]),
        )
    };
    let region = SampleBox {
        min: at(w.min),
        max: at(w.max),
    };
    Ok((region, q, m))
}

/// The `n` grid indices and materials of `data`.
fn decode_data(data: &[u8], n: usize) -> Result<(Vec<i16>, Vec<MaterialId>), String> {
    let (q, m): (Vec<i16>, Vec<u8>) = match data.split_first() {
        Some((&UNIFORM, rest)) => {
            let &[a, b, m] = rest else {
                return Err(format!("uniform samples of {} bytes", rest.len()));
            };
            (vec![i16::from_le_bytes([a, b]); n], vec![m; n])
        }
        Some((&ZSTD, rest)) => {
            let raw = zstd_frame::decompress(rest, n * 3)?;
            if raw.len() != n * 3 {
                return Err(format!("{} bytes of samples", raw.len()));
            }
            let (qb, mb) = raw.split_at(n * 2);
            let q = qb
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            (q, mb.to_vec())
        }
        Some((tag, _)) => return Err(format!("unknown encoding {tag}")),
        None => return Err("empty".into()),
    };
    if q.iter().any(|&x| x < -QMAX) {
        return Err("index off the grid".into());
    }
    Ok((q, m))
}

/// Decodes a brick for a field whose band is `band` metres. Never allocates more than one
/// brick's samples.
///
/// # Errors
/// [`BrickDecodeError::Malformed`] for an unknown tag, a wrong length, bad zstd data or an
/// index beyond the grid.
pub fn decode_brick(w: &WireBrick, band: f64) -> Result<(BrickKey, Brick), BrickDecodeError> {
    let bad = |why: String| BrickDecodeError::Malformed { key: w.key, why };
    let (q, m) = decode_data(&w.data, VOLUME).map_err(bad)?;
    let brick =
        Brick::from_quantized(band, &q, &m).ok_or_else(|| bad("index off the grid".into()))?;
    Ok((BrickKey::new(w.key[0], w.key[1], w.key[2]), brick))
}

/// zstd frames: the C library natively, the pure-Rust `ruzstd` on wasm32 (both read any
/// valid frame; the level is fast, as bricks of a smooth field compress well anyway).
mod zstd_frame {
    /// Compresses `raw` into one zstd frame.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn compress(raw: &[u8]) -> Vec<u8> {
        zstd::bulk::compress(raw, 1).expect("compressing to memory")
    }

    /// Compresses `raw` into one zstd frame.
    #[cfg(target_arch = "wasm32")]
    pub fn compress(raw: &[u8]) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(raw, ruzstd::encoding::CompressionLevel::Fastest)
    }

    /// Decompresses one zstd frame of at most `max` bytes (a larger one is refused without
    /// being written out).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn decompress(frame: &[u8], max: usize) -> Result<Vec<u8>, String> {
        zstd::bulk::decompress(frame, max).map_err(|e| e.to_string())
    }

    /// Decompresses one zstd frame of at most `max` bytes (a larger one is refused without
    /// being written out).
    #[cfg(any(target_arch = "wasm32", test))]
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn decompress_pure(frame: &[u8], max: usize) -> Result<Vec<u8>, String> {
        use std::io::Read;
        let mut frame = frame;
        let decoder =
            ruzstd::decoding::StreamingDecoder::new(&mut frame).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        decoder
            .take(max as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| e.to_string())?;
        if out.len() > max {
            return Err(format!("more than {max} bytes"));
        }
        Ok(out)
    }

    #[cfg(target_arch = "wasm32")]
    pub use decompress_pure as decompress;
}

#[cfg(test)]
mod tests {
    use super::zstd_frame;

    /// A browser's decoder (ruzstd) reads the frames the native encoder writes, bit for bit,
    /// and refuses one larger than asked for.
    #[test]
    fn the_pure_rust_decoder_reads_the_native_frames() {
        let n = 32 * 32 * 32;
        let raw: Vec<u8> = (0..n * 3)
            .map(|i| ((i * 7919) % 251) as u8 ^ ((i / 97) as u8))
            .collect();
        let frame = zstd_frame::compress(&raw);
        assert!(frame.len() < raw.len());
        assert_eq!(zstd_frame::decompress_pure(&frame, n * 3).unwrap(), raw);
        assert_eq!(zstd_frame::decompress(&frame, n * 3).unwrap(), raw);
        assert!(zstd_frame::decompress_pure(&frame, n * 3 - 1).is_err());
        assert!(zstd_frame::decompress_pure(&frame[..frame.len() / 2], n * 3).is_err());
    }
}
