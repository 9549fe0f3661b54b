//! A client state for unit tests: default field settings, a noise generator without caves,
//! the region of bricks (0, −2..=2, 0) held, at op 5.

use std::sync::Arc;

use loam_field::{CaveSettings, FieldSettings, Generator, NoiseTerrainSettings};

use super::State;
use crate::protocol::{BrickBox, PROTOCOL_VERSION, Welcome, WorldMeta};

pub(super) fn generator() -> Arc<Generator> {
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    Arc::new(Generator::noise(&NoiseTerrainSettings::default(), &caves).unwrap())
}

/// The welcome [`state`] was made from: client 7 at op 5, nothing resumed.
pub(super) fn welcome() -> Welcome {
    Welcome {
        protocol: PROTOCOL_VERSION,
        client_id: 7,
        resume_key: [1, 2],
        world: WorldMeta {
            generator_json: String::new(),
            field: FieldSettings::default(),
            generator_fingerprint: [0; 32],
        },
        seq: 5,
        resumed: false,
        last_op_id: None,
    }
}

pub(super) fn state(g: &Arc<Generator>) -> State {
    let mut s = State::new(&welcome(), Arc::clone(g)).unwrap();
    s.region = Some(BrickBox {
        min: [0, -2, 0],
        max: [0, 2, 0],
    });
    s.last_seq = 5;
    s
}
