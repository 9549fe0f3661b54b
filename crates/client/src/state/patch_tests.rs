//! A server's patch is checked whole before any of it is written: a box outside the region
//! the client holds is refused, and the field is left as it was.

use std::sync::Arc;

use loam_field::{BrickKey, CsgMode, EditOp, Field, FieldSettings, SampleBox};

use super::test_state::{generator, state};
use crate::error::ClientError;
use crate::protocol::{ServerMessage, encode_samples};

/// Samples of brick `key` of `f` within its local box `lo..=hi`.
fn part(f: &Field, key: BrickKey, lo: [u8; 3], hi: [u8; 3]) -> crate::protocol::WireSamples {
    let (_, brick) = f.bricks().find(|(k, _)| *k == key).expect("brick edited");
    encode_samples(key, brick, lo, hi)
}

#[test]
fn a_patch_reaching_outside_the_region_changes_nothing() {
    let g = generator();
    // The server's field: a dig in the client's brick (0, y, 0) and one in brick (1, y, 0),
    // outside the client's region.
    let mut server = Field::new(FieldSettings::default(), Arc::clone(&g)).unwrap();
    let dig = |x: f64, z: f64| EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, g.surface_height(x, z), z],
        radius: 3.0,
        material: 0,
        blend: 0.0,
    };
    let inside = server.apply(&dig(16.0, 16.0)).unwrap().changed.unwrap();
    server.apply(&dig(48.0, 16.0)).unwrap();
    let key_of = |b: SampleBox| b.min.brick().0;
    let (k_in, k_out) = (key_of(inside), BrickKey::new(1, key_of(inside).y, 0));
    let whole = ([0; 3], [31; 3]);

    let mut client = state(&g);
    let before = client.confirmed.hash();
    let bad = ServerMessage::Patch {
        seq: 5,
        samples: vec![
            part(&server, k_in, whole.0, whole.1),
            part(&server, k_out, whole.0, whole.1),
        ],
    };
    let err = client.handle(bad).unwrap_err();
    assert!(
        matches!(&err, ClientError::Protocol(m) if m.contains("outside the region")),
        "{err}"
    );
    assert_eq!(client.confirmed.hash(), before, "nothing written");
    assert!(client.events.is_empty());

    // The part inside alone is taken: the client's brick is the server's.
    let good = ServerMessage::Patch {
        seq: 5,
        samples: vec![part(&server, k_in, whole.0, whole.1)],
    };
    client.handle(good).unwrap();
    assert_eq!(
        client.confirmed.hash_region(k_in, k_in),
        server.hash_region(k_in, k_in)
    );
    assert_ne!(client.confirmed.hash(), before);
}
