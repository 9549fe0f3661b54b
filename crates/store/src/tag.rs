//! Every blob the store writes carries an 8-byte tag (the first bytes of its BLAKE3), so a
//! damaged blob is found on load instead of decoding into a different world: zstd frames and
//! MessagePack have no checksum of their own, and SQLite checks only its page structure.

/// Bytes of the tag.
const TAG: usize = 8;

fn tag(context: &[u8], payload: &[u8]) -> [u8; TAG] {
    let mut h = blake3::Hasher::new();
    h.update(&(context.len() as u64).to_le_bytes());
    h.update(context);
    h.update(payload);
    let mut t = [0; TAG];
    t.copy_from_slice(&h.finalize().as_bytes()[..TAG]);
    t
}

/// `payload` followed by its tag, which also covers `context` (the row's key columns, so a
/// blob moved to another key is found too).
pub fn seal(context: &[u8], mut payload: Vec<u8>) -> Vec<u8> {
    let t = tag(context, &payload);
    payload.extend_from_slice(&t);
    payload
}

/// The payload of a sealed blob, or `None` if it is too short or its tag does not match it and
/// `context`.
pub fn open<'a>(context: &[u8], blob: &'a [u8]) -> Option<&'a [u8]> {
    let (payload, t) = blob.split_at_checked(blob.len().checked_sub(TAG)?)?;
    (tag(context, payload) == t).then_some(payload)
}

/// The context bytes of a row keyed by integers.
pub fn key(parts: &[i64]) -> Vec<u8> {
    parts.iter().flat_map(|p| p.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_bit_anywhere_is_found() {
        let k = key(&[1, -2, 3]);
        let blob = seal(&k, b"some brick bytes".to_vec());
        assert_eq!(open(&k, &blob), Some(&b"some brick bytes"[..]));
        assert_eq!(open(&key(&[1, -2, 4]), &blob), None, "another key");
        for i in 0..blob.len() {
            for bit in 0..8 {
                let mut bad = blob.clone();
                bad[i] ^= 1 << bit;
                assert_eq!(open(&k, &bad), None, "byte {i} bit {bit}");
            }
        }
        assert_eq!(open(&k, &blob[..7]), None);
        assert_eq!(open(&k, &[]), None);
    }
}
