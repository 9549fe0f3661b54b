//! A brick as a blob, sealed with a checksum tag over its key and bytes.
//!
//! Format 2 (written and read): the brick's quantised samples, exact.
//!
//! - kind 2, uniform: the one grid index (i16, little-endian) and material (4 bytes);
//! - kind 3: zstd (level 3) of the 32³ grid indices (i16, little-endian, x fastest) then the
//!   32³ material ids.
//!
//! Format 1 (read, and migrated to format 2): the f32 values from before the grid.
//!
//! - kind 0, uniform: one f32 (little-endian) and one material (6 bytes);
//! - kind 1: zstd of the 32³ f32 values (little-endian) then the 32³ materials.
//!
//! Values of format 1 are rounded onto the grid when read ([`Brick::from_parts`]).

use loam_field::{BRICK_SAMPLES, Brick};

/// Samples per brick.
const N: usize = (BRICK_SAMPLES * BRICK_SAMPLES * BRICK_SAMPLES) as usize;

/// Blob kinds (first byte).
const V1_UNIFORM: u8 = 0;
const V1_ZSTD: u8 = 1;
const UNIFORM: u8 = 2;
const ZSTD: u8 = 3;

/// zstd level: fast to write, a good ratio on band-clamped values.
const LEVEL: i32 = 3;

/// Encodes `brick` at `key` (x, y, z) in format 2.
pub fn encode(key: [i32; 3], brick: &Brick) -> Vec<u8> {
    crate::tag::seal(&context(key), encode_raw(brick))
}

fn context(key: [i32; 3]) -> Vec<u8> {
    crate::tag::key(&key.map(i64::from))
}

fn encode_raw(brick: &Brick) -> Vec<u8> {
    if let Some((q, m)) = brick.uniform() {
        let mut out = vec![UNIFORM];
        out.extend_from_slice(&q.to_le_bytes());
        out.push(m);
        return out;
    }
    let s = brick.samples();
    let mut raw = Vec::with_capacity(N * 3);
    for q in s.quantized() {
        raw.extend_from_slice(&q.to_le_bytes());
    }
    raw.extend_from_slice(s.materials());
    let mut out = vec![ZSTD];
    out.extend(zstd::bulk::compress(&raw, LEVEL).expect("compressing to memory"));
    out
}

/// Decodes a format-2 blob for a field whose band is `band` metres; `None` if it is not one
/// [`encode`] writes (a wrong checksum, truncated, wrong kind, an index beyond ±32767).
pub fn decode(key: [i32; 3], blob: &[u8], band: f64) -> Option<Brick> {
    let blob = crate::tag::open(&context(key), blob)?;
    match *blob.first()? {
        UNIFORM if blob.len() == 4 => {
            let q = i16::from_le_bytes([blob[1], blob[2]]);
            Brick::from_quantized(band, &vec![q; N], &vec![blob[3]; N])
        }
        ZSTD => {
            let raw = zstd::bulk::decompress(&blob[1..], N * 3).ok()?;
            if raw.len() != N * 3 {
                return None;
            }
            let q: Vec<i16> = raw[..N * 2]
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]]))
                .collect();
            Brick::from_quantized(band, &q, &raw[N * 2..])
        }
        _ => None,
    }
}

/// Decodes a format-1 blob, its values rounded onto the grid of a band of `band` metres;
/// `None` if it is not one format 1 wrote (a wrong checksum, truncated, wrong kind, a value
/// that is not finite).
pub fn decode_v1(key: [i32; 3], blob: &[u8], band: f64) -> Option<Brick> {
    let blob = crate::tag::open(&context(key), blob)?;
    match *blob.first()? {
        V1_UNIFORM if blob.len() == 6 => {
            let v = f32::from_le_bytes(blob[1..5].try_into().ok()?);
            Brick::from_parts(&vec![v; N], &vec![blob[5]; N], band)
        }
        V1_ZSTD => {
            let raw = zstd::bulk::decompress(&blob[1..], N * 5).ok()?;
            if raw.len() != N * 5 {
                return None;
            }
            let values: Vec<f32> = raw[..N * 4]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Brick::from_parts(&values, &raw[N * 4..], band)
        }
        _ => None,
    }
}

/// Decodes a blob of world format `version` (1 or 2).
pub fn decode_version(version: i64, key: [i32; 3], blob: &[u8], band: f64) -> Option<Brick> {
    if version == 1 {
        decode_v1(key, blob, band)
    } else {
        decode(key, blob, band)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loam_field::{QMAX, Quant};

    #[test]
    fn quantised_bricks_round_trip_exactly() {
        let g = Quant::new(2.0);
        let q: Vec<i16> = (0..N as i32)
            .map(|i| ((i * 7919) % 65535 - 32767) as i16)
            .collect();
        let m: Vec<u8> = (0..N).map(|i| (i % 5) as u8).collect();
        let b = Brick::from_quantized(2.0, &q, &m).unwrap();
        let blob = encode([1, -2, 3], &b);
        let back = decode([1, -2, 3], &blob, 2.0).unwrap();
        assert_eq!(back, b);
        assert_eq!(back.samples().quantized(), &q[..]);
        assert_eq!(back.values()[5], g.value(q[5]));
        assert!(decode([1, -2, 4], &blob, 2.0).is_none(), "another key");
        assert!(decode_v1([1, -2, 3], &blob, 2.0).is_none(), "not format 1");

        let u = Brick::from_quantized(2.0, &vec![-QMAX; N], &vec![7; N]).unwrap();
        let blob = encode([0, 0, 0], &u);
        assert_eq!(blob.len(), 4 + 8, "one index, one material and the tag");
        assert_eq!(decode([0, 0, 0], &blob, 2.0).unwrap(), u);
    }
}
