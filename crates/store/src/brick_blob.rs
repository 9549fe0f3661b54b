//! A brick as a blob: one value and material when every sample is the same, else the raw
//! samples compressed with zstd. Lossless: the f32 bit patterns and material ids come back
//! exactly.

use loam_field::{BRICK_SAMPLES, Brick};

/// Samples per brick.
const N: usize = (BRICK_SAMPLES * BRICK_SAMPLES * BRICK_SAMPLES) as usize;

/// Blob kinds (first byte).
const UNIFORM: u8 = 0;
const ZSTD: u8 = 1;

/// zstd level: fast to write, a good ratio on the band-clamped values.
const LEVEL: i32 = 3;

/// Encodes `brick` at `key` (x, y, z), sealed with a checksum tag over the key and the bytes.
pub fn encode(key: [i32; 3], brick: &Brick) -> Vec<u8> {
    crate::tag::seal(&context(key), encode_raw(brick))
}

fn context(key: [i32; 3]) -> Vec<u8> {
    crate::tag::key(&key.map(i64::from))
}

fn encode_raw(brick: &Brick) -> Vec<u8> {
    let (v, m) = (brick.values(), brick.materials());
    if v.iter().all(|x| x.to_bits() == v[0].to_bits()) && m.iter().all(|x| *x == m[0]) {
        let mut out = vec![UNIFORM];
        out.extend_from_slice(&v[0].to_le_bytes());
        out.push(m[0]);
        return out;
    }
    let mut raw = Vec::with_capacity(N * 5);
    for x in v {
        raw.extend_from_slice(&x.to_le_bytes());
    }
    raw.extend_from_slice(&m);
    let mut out = vec![ZSTD];
    out.extend(zstd::bulk::compress(&raw, LEVEL).expect("compressing to memory"));
    out
}

/// Decodes a blob; `None` if it is not one [`encode`] writes (a wrong checksum, truncated,
/// wrong kind, a value that is not finite).
pub fn decode(key: [i32; 3], blob: &[u8], band: f64) -> Option<Brick> {
    decode_raw(crate::tag::open(&context(key), blob)?, band)
}

fn decode_raw(blob: &[u8], band: f64) -> Option<Brick> {
    match *blob.first()? {
        UNIFORM if blob.len() == 6 => {
            let v = f32::from_le_bytes(blob[1..5].try_into().ok()?);
            Brick::from_parts(&vec![v; N], &vec![blob[5]; N], band)
        }
        ZSTD => {
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
