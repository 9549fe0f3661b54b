//! Bricks on the wire: a brick's quantised samples, exactly as the field holds them.
//!
//! ```text
//! data = 0x00, q (i16 LE), material (u8)                  every sample the same
//!      | 0x01, zstd( q[32³] (i16 LE) ++ material[32³] )   otherwise (x fastest)
//! ```

use loam_field::{BRICK_SAMPLES, Brick, BrickKey};
use serde::{Deserialize, Serialize};

const VOLUME: usize = (BRICK_SAMPLES * BRICK_SAMPLES * BRICK_SAMPLES) as usize;
const RAW_BYTES: usize = VOLUME * 3;
const UNIFORM: u8 = 0;
const ZSTD: u8 = 1;
/// zstd level: fast; bricks of a smooth field compress well anyway.
const LEVEL: i32 = 1;

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
        Some((q, m)) => {
            let q = q.to_le_bytes();
            vec![UNIFORM, q[0], q[1], m]
        }
        None => {
            let s = brick.samples();
            let mut raw = Vec::with_capacity(RAW_BYTES);
            for q in s.quantized() {
                raw.extend_from_slice(&q.to_le_bytes());
            }
            raw.extend_from_slice(s.materials());
            let z = zstd::bulk::compress(&raw, LEVEL).expect("compressing to memory");
            let mut data = Vec::with_capacity(z.len() + 1);
            data.push(ZSTD);
            data.extend_from_slice(&z);
            data
        }
    };
    WireBrick {
        key: [key.x, key.y, key.z],
        data,
    }
}

/// Decodes a brick for a field whose band is `band` metres. Never allocates more than one
/// brick's samples.
///
/// # Errors
/// [`BrickDecodeError::Malformed`] for an unknown tag, a wrong length, bad zstd data or an
/// index beyond the grid.
pub fn decode_brick(w: &WireBrick, band: f64) -> Result<(BrickKey, Brick), BrickDecodeError> {
    let bad = |why: String| BrickDecodeError::Malformed { key: w.key, why };
    let (q, m): (Vec<i16>, Vec<u8>) = match w.data.split_first() {
        Some((&UNIFORM, rest)) => {
            let &[a, b, m] = rest else {
                return Err(bad(format!("uniform brick of {} bytes", rest.len())));
            };
            (vec![i16::from_le_bytes([a, b]); VOLUME], vec![m; VOLUME])
        }
        Some((&ZSTD, rest)) => {
            let raw = zstd::bulk::decompress(rest, RAW_BYTES).map_err(|e| bad(e.to_string()))?;
            if raw.len() != RAW_BYTES {
                return Err(bad(format!("{} bytes of samples", raw.len())));
            }
            let (qb, mb) = raw.split_at(VOLUME * 2);
            let q = qb
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            (q, mb.to_vec())
        }
        Some((tag, _)) => return Err(bad(format!("unknown encoding {tag}"))),
        None => return Err(bad("empty".into())),
    };
    let brick =
        Brick::from_quantized(band, &q, &m).ok_or_else(|| bad("index off the grid".into()))?;
    Ok((BrickKey::new(w.key[0], w.key[1], w.key[2]), brick))
}
